"""The SQL of the export's groups, and of the imported files' unmapped columns.

Answer and run metadata, KGs as JSON triples, TAU rows, and the columns of an imported file
that no mapping names (written at import).

Like :mod:`~s3kg_core.store.queries`, every function takes an open connection and leaves
transactions to the caller.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "x.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
...     replace_extra_columns(con, [(0, ids["q1"])], [(0, ids["q1"], "topic", 3, "pain")])
...     extra_columns(con).to_dict("records")
[{'run_id': 0, 'item_id': 1, 'name': 'topic', 'pos': 3, 'value': 'pain'}]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

__all__ = [
    "ITEM_LEVEL",
    "answer_metadata",
    "extra_columns",
    "kg_triples_json",
    "replace_extra_columns",
    "run_metadata",
    "tau_rows",
]

ITEM_LEVEL = 0
"""The ``run_id`` of extra columns that belong to an item (its file held no answers)."""


def replace_extra_columns(
    con: duckdb.DuckDBPyConnection,
    keys: Sequence[tuple[int, int]],
    rows: Sequence[tuple[int, int, str, int, str | None]],
) -> None:
    """Replace the extra columns of these ``(run_id, item_id)`` keys by ``rows``.

    Each row is ``(run_id, item_id, name, pos, value)``; a key's columns that ``rows`` no
    longer name are removed (a re-imported file that lost a column loses it here too).
    """
    if keys:
        con.register("_extra_keys", pd.DataFrame(list(keys), columns=["run_id", "item_id"]))
        try:
            con.execute(
                "DELETE FROM extra_columns WHERE (run_id, item_id) IN "
                "(SELECT (run_id, item_id) FROM _extra_keys)"
            )
        finally:
            con.unregister("_extra_keys")
    if rows:
        frame = pd.DataFrame(
            list(rows), columns=["run_id", "item_id", "name", "pos", "value"]
        ).astype(object)
        con.register("_extra_rows", frame)
        try:
            con.execute(
                "INSERT OR REPLACE INTO extra_columns (run_id, item_id, name, pos, value) "
                "SELECT run_id, item_id, name, pos, value FROM _extra_rows"
            )
        finally:
            con.unregister("_extra_rows")


def extra_columns(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every stored extra column value: ``run_id, item_id, name, pos, value``.

    ``run_id`` is :data:`ITEM_LEVEL` for a value that belongs to the item.
    """
    return con.execute(
        "SELECT run_id, item_id, name, pos, value FROM extra_columns "
        "ORDER BY run_id, item_id, pos, name"
    ).df()


def answer_metadata(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """What collect stored of every answer.

    Columns ``run_id, item_id, seed, latency_s, prompt_tokens, completion_tokens, model_id,
    finish_reason, truncated`` (``None`` where not stored: imported answers have none).
    """
    return con.execute(
        "SELECT run_id, item_id, seed, latency_s, prompt_tokens, completion_tokens, model_id, "
        "finish_reason, truncated FROM answers"
    ).df()


def run_metadata(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run's display name, model as given, source and settings (JSON text).

    Columns ``run_id, run_name, run_model, run_source, run_settings``.
    """
    return con.execute(
        "SELECT run_id, coalesce(name, model) AS run_name, model AS run_model, "
        "source AS run_source, CAST(settings AS VARCHAR) AS run_settings FROM runs"
    ).df()


def kg_triples_json(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every stored KG as a JSON list of ``[head, relation, tail]`` lists, in stored order.

    Columns ``run_id, item_id, source, triples``; an empty or unparseable KG is ``[]`` (its
    status says which), a KG that is not stored has no row.
    """
    return con.execute(
        "SELECT k.run_id, k.item_id, k.source, coalesce(CAST(to_json(list([t.head, "
        "t.relation, t.tail] ORDER BY t.pos) FILTER (WHERE t.pos IS NOT NULL)) AS VARCHAR), "
        "'[]') AS triples FROM kgs k LEFT JOIN triples t ON t.run_id = k.run_id "
        "AND t.item_id = k.item_id AND t.source = k.source "
        "GROUP BY k.run_id, k.item_id, k.source"
    ).df()


def tau_rows(con: duckdb.DuckDBPyConnection, signature: str) -> list[tuple[Any, ...]]:
    """The TAU results of ``signature``: ``(run_id, item_id, target, result_json)``."""
    return con.execute(
        "SELECT run_id, item_id, target, CAST(result AS VARCHAR) FROM tau_results "
        "WHERE signature = ? ORDER BY run_id, item_id, target",
        [signature],
    ).fetchall()
