"""The SQL of the factuality judge's evaluations (table ``factuality_evals``, schema v4).

Every function takes an open DuckDB connection; the caller owns the transaction. Summaries and
breakdowns arrive as JSON text: :mod:`s3kg_core.factuality.results` makes them
:class:`~s3kg_core.factuality.results.FactualityEval` objects.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "f.duckdb"))
>>> with db.transaction() as con:
...     replace_factuality_eval(con, "run1", "smollm2", 12, 80, '{"n_test": 80}', "{}")
...     [r[:4] for r in factuality_eval_rows(con)]
[('run1', 'smollm2', 12, 80)]
"""

from __future__ import annotations

from typing import Any

import duckdb

__all__ = ["factuality_eval_rows", "replace_factuality_eval"]


def replace_factuality_eval(
    con: duckdb.DuckDBPyConnection,
    name: str,
    model: str,
    layer: int,
    n_test: int,
    summary: str,
    breakdown: str,
) -> None:
    """Store the evaluation ``name`` (``summary``, ``breakdown``: JSON), replacing one so named."""
    con.execute("DELETE FROM factuality_evals WHERE name = ?", [name])
    con.execute(
        "INSERT INTO factuality_evals (name, model, layer, n_test, summary, breakdown) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [name, model, layer, n_test, summary, breakdown],
    )


def factuality_eval_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Every evaluation, newest first.

    Each row is ``(name, model, layer, n_test, summary, breakdown, run_at)``.
    """
    return con.execute(
        "SELECT name, model, layer, n_test, summary, breakdown, run_at "
        "FROM factuality_evals ORDER BY run_at DESC, name"
    ).fetchall()
