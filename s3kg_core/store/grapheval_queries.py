"""The SQL of GraphEval: per-answer detections and corrections, and the benchmark rows.

Tables ``grapheval_results`` and ``grapheval_bench`` (schema v4). Every function takes an open
DuckDB connection and runs one statement with parameters; the caller owns the transaction.
Detections and corrections arrive here as JSON text: turning them into
:class:`~s3kg_core.grapheval.detect.Detection` objects is :mod:`s3kg_core.grapheval.results`'s job.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "g.duckdb"))
>>> with db.transaction() as con:
...     put_grapheval_result(con, run_id=1, item_id=2, checker="support", extractor="offline",
...                          inconsistent=True, raw_probability=None, n_triples=3, n_flagged=1,
...                          detail="{}", signature="checker:support")
...     checked_item_ids(con, 1, "support", "offline")
{2}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from .queries import delete_items

__all__ = [
    "answers_with_context",
    "checked_item_ids",
    "delete_item_detections",
    "grapheval_bench_rows",
    "grapheval_overview",
    "grapheval_result_rows",
    "put_grapheval_bench",
    "put_grapheval_result",
    "set_grapheval_correction",
]


# -- per-answer results ----------------------------------------------------------------------


def put_grapheval_result(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: int,
    item_id: int,
    checker: str,
    extractor: str,
    inconsistent: bool | None,
    raw_probability: float | None,
    n_triples: int,
    n_flagged: int,
    detail: str,
    signature: str,
) -> None:
    """Insert or replace one answer's detection (``detail``: the detection's JSON).

    A replaced row loses its correction (``corrected_answer`` and ``correction`` are reset).
    """
    con.execute(
        "INSERT OR REPLACE INTO grapheval_results (run_id, item_id, checker, extractor, "
        "inconsistent, raw_probability, n_triples, n_flagged, detail, corrected_answer, "
        "correction, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
        [
            run_id,
            item_id,
            checker,
            extractor,
            inconsistent,
            raw_probability,
            n_triples,
            n_flagged,
            detail,
            signature,
        ],
    )


def grapheval_result_rows(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    checker: str | None = None,
    *,
    inconsistent_only: bool = False,
) -> list[dict[str, Any]]:
    """Stored detections of a run with the answer and context, by item and checker.

    Keys ``item_id, checker, extractor, inconsistent, raw_probability, n_triples, n_flagged,
    detail, corrected_answer, correction, signature, answer, context`` (``detail`` and
    ``correction`` as JSON text). ``checker`` keeps one checker's rows; ``inconsistent_only``
    the flagged answers.
    """
    where = "WHERE r.run_id = ?"
    params: list[Any] = [run_id]
    if checker is not None:
        where += " AND r.checker = ?"
        params.append(checker)
    if inconsistent_only:
        where += " AND r.inconsistent"
    cur = con.execute(
        "SELECT r.item_id, r.checker, r.extractor, r.inconsistent, r.raw_probability, "
        "r.n_triples, r.n_flagged, r.detail, r.corrected_answer, r.correction, r.signature, "
        "a.answer, i.context FROM grapheval_results r "
        "JOIN answers a ON a.run_id = r.run_id AND a.item_id = r.item_id "
        f"JOIN items i ON i.item_id = r.item_id {where} ORDER BY r.item_id, r.checker",
        params,
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def set_grapheval_correction(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    item_id: int,
    checker: str,
    extractor: str,
    corrected_answer: str,
    correction: str,
) -> None:
    """Store a corrected answer and its correction JSON on an existing detection row."""
    con.execute(
        "UPDATE grapheval_results SET corrected_answer = ?, correction = ? WHERE run_id = ? "
        "AND item_id = ? AND checker = ? AND extractor = ?",
        [corrected_answer, correction, run_id, item_id, checker, extractor],
    )


def checked_item_ids(
    con: duckdb.DuckDBPyConnection, run_id: int, checker: str, extractor: str
) -> set[int]:
    """The items of a run with a verdict by ``checker`` on ``extractor`` KGs.

    A detection without a verdict (``inconsistent`` NULL: the checker judged none of its
    triples) does not count: a rerun checks it again.
    """
    return {
        int(r[0])
        for r in con.execute(
            "SELECT item_id FROM grapheval_results WHERE run_id = ? AND checker = ? "
            "AND extractor = ? AND inconsistent IS NOT NULL",
            [run_id, checker, extractor],
        ).fetchall()
    }


def delete_item_detections(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[int, int]]) -> None:
    """Remove every checker's detections and corrections of these ``(run_id, item_id)``.

    Their answer or answer KG changed: the verdicts were about another text.
    """
    delete_items(con, ("grapheval_results",), keys)


def answers_with_context(con: duckdb.DuckDBPyConnection, run_id: int) -> list[tuple[Any, ...]]:
    """``(item_id, answer, context)`` of every answer of a run, by item."""
    return con.execute(
        "SELECT a.item_id, a.answer, i.context FROM answers a JOIN items i USING (item_id) "
        "WHERE a.run_id = ? ORDER BY a.item_id",
        [run_id],
    ).fetchall()


def grapheval_overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per run x checker x extractor with stored results, counted.

    Columns ``run_id, checker, extractor, answers, inconsistent, unjudged, triples,
    flagged_triples, with_raw, corrected, signature`` (distinct signatures joined by ``" ; "``).
    """
    return con.execute(
        "SELECT run_id, checker, extractor, count(*) AS answers, "
        "count(*) FILTER (WHERE inconsistent) AS inconsistent, "
        "count(*) FILTER (WHERE inconsistent IS NULL) AS unjudged, "
        "coalesce(sum(n_triples), 0) AS triples, "
        "coalesce(sum(n_flagged), 0) AS flagged_triples, "
        "count(raw_probability) AS with_raw, count(corrected_answer) AS corrected, "
        "string_agg(DISTINCT signature, ' ; ' ORDER BY signature) AS signature "
        "FROM grapheval_results GROUP BY run_id, checker, extractor "
        "ORDER BY run_id, checker, extractor"
    ).df()


# -- benchmark rows --------------------------------------------------------------------------


def put_grapheval_bench(
    con: duckdb.DuckDBPyConnection,
    *,
    dataset: str,
    n: int,
    checker: str,
    extractor: str,
    raw_balanced_accuracy: float | None,
    kg_balanced_accuracy: float | None,
    flagged_triples: int | None,
    detail: str,
) -> None:
    """Insert or replace the benchmark row of ``(dataset, checker, extractor)``, stamped now."""
    con.execute(
        "INSERT OR REPLACE INTO grapheval_bench (run_at, dataset, n, checker, extractor, "
        "raw_balanced_accuracy, kg_balanced_accuracy, flagged_triples, detail) "
        "VALUES (current_timestamp, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            dataset,
            n,
            checker,
            extractor,
            raw_balanced_accuracy,
            kg_balanced_accuracy,
            flagged_triples,
            detail,
        ],
    )


def grapheval_bench_rows(
    con: duckdb.DuckDBPyConnection, dataset: str | None = None
) -> list[dict[str, Any]]:
    """Stored benchmark rows as dicts (``detail`` as JSON text), optionally of one dataset.

    Keys ``run_at, dataset, n, checker, extractor, raw_balanced_accuracy,
    kg_balanced_accuracy, flagged_triples, detail``; an empty ``dataset`` means every dataset.
    """
    where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
    cur = con.execute(
        "SELECT run_at, dataset, n, checker, extractor, raw_balanced_accuracy, "
        f"kg_balanced_accuracy, flagged_triples, detail FROM grapheval_bench {where} "
        "ORDER BY dataset, checker, extractor",
        params,
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
