"""GraphEval in the store: per-answer detection of stored runs, and the benchmark rows.

:func:`detect_store` reads a run's answers, contexts and stored answer KGs (source ``answer``,
written by the run's extractor), checks them, and writes one ``grapheval_results`` row per
answer. It resumes: answers that already have a row for this checker and extractor are skipped.
Answers whose KG is missing or failed are not written (extract them first); they are counted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import GraphEvalError
from ..progress import StageProgress
from ..store.store import Store
from .checkers.base import Checker
from .correct import Correction
from .detect import Detection, GraphEval

__all__ = [
    "DetectReport",
    "detect_store",
    "get_bench_rows",
    "load_results",
    "put_bench_row",
    "put_corrections",
    "put_detections",
]


@dataclass
class DetectReport:
    """What :func:`detect_store` did."""

    run_id: int
    checker: str
    extractor: str
    written: int = 0
    already_done: int = 0
    missing_kg: int = 0
    inconsistent: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """One line for the command line."""
        return (
            f"run {self.run_id} ({self.extractor}), checker {self.checker}: {self.written} "
            f"answers checked ({self.inconsistent} inconsistent), {self.already_done} already "
            f"done, {self.missing_kg} without a usable answer KG (extract them first)"
        )


def put_detections(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    extractor: str,
    checker: Checker,
    rows: Sequence[tuple[int, Detection]],
) -> int:
    """Write ``(item_id, detection)`` rows into ``grapheval_results`` (replacing old ones)."""
    for item_id, d in rows:
        con.execute(
            "INSERT OR REPLACE INTO grapheval_results (run_id, item_id, checker, extractor, "
            "inconsistent, raw_probability, n_triples, n_flagged, detail, corrected_answer, "
            "correction, signature) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
            [
                run_id,
                item_id,
                checker.name,
                extractor,
                d.inconsistent,
                d.raw_probability,
                len(d.triples),
                len(d.flagged),
                json.dumps(d.to_dict()),
                checker.signature,
            ],
        )
    return len(rows)


def load_results(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    checker: str | None = None,
    *,
    inconsistent_only: bool = False,
) -> list[dict[str, Any]]:
    """Stored detections of a run as dicts (``detection`` parsed), optionally of one checker."""
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
    out = []
    for row in cur.fetchall():
        rec = dict(zip(names, row, strict=True))
        rec["detection"] = Detection.from_dict(json.loads(rec.pop("detail")))
        rec["correction"] = json.loads(rec["correction"]) if rec["correction"] else None
        out.append(rec)
    return out


def put_corrections(
    con: duckdb.DuckDBPyConnection,
    run_id: int,
    checker: str,
    extractor: str,
    rows: Sequence[tuple[int, Correction]],
) -> int:
    """Store corrected answers and their correction JSON on existing detection rows."""
    for item_id, c in rows:
        con.execute(
            "UPDATE grapheval_results SET corrected_answer = ?, correction = ? WHERE run_id = ? "
            "AND item_id = ? AND checker = ? AND extractor = ?",
            [c.corrected, json.dumps(c.to_dict()), run_id, item_id, checker, extractor],
        )
    return len(rows)


def _run_extractor(con: duckdb.DuckDBPyConnection, run_id: int) -> str:
    row = con.execute("SELECT extractor FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
        raise GraphEvalError(f"no run {run_id} in the store; it has runs {runs}")
    return str(row[0])


def detect_store(
    store: Store,
    run_id: int,
    checker: Checker,
    *,
    raw: bool = True,
    batch_items: int = 64,
    progress: StageProgress | None = None,
) -> DetectReport:
    """Check every answer of a run against its context and store one row per answer.

    Parameters
    ----------
    store
        The database (read-write).
    run_id
        The run; its answer KGs must be extracted (``s3kg extract``).
    checker
        The triple checker; its ``name`` is the row's checker column.
    raw
        Also run raw mode (whole answer vs context) into ``raw_probability``.
    batch_items
        Answers per check and write transaction.
    progress
        ``progress("answers", done, total)``.

    Raises
    ------
    GraphEvalError
        If the run does not exist.
    """
    if batch_items < 1:
        raise GraphEvalError(f"batch_items must be >= 1; got {batch_items}")
    started = time.perf_counter()
    with store.connect() as con:
        extractor = _run_extractor(con, run_id)
        done = {
            int(r[0])
            for r in con.execute(
                "SELECT item_id FROM grapheval_results WHERE run_id = ? AND checker = ? "
                "AND extractor = ?",
                [run_id, checker.name, extractor],
            ).fetchall()
        }
        rows = con.execute(
            "SELECT a.item_id, a.answer, i.context FROM answers a JOIN items i USING (item_id) "
            "WHERE a.run_id = ? ORDER BY a.item_id",
            [run_id],
        ).fetchall()
        kgs = store.load_kgs(con, [run_id])
    report = DetectReport(run_id, checker.name, extractor)
    todo = []
    for item_id, answer, context in rows:
        if int(item_id) in done:
            report.already_done += 1
            continue
        kg = kgs.get((run_id, int(item_id), "answer"))
        if kg is None or kg.status.startswith("failed"):
            report.missing_kg += 1
            continue
        todo.append((int(item_id), answer or "", context or "", kg.triples))
    ge = GraphEval(checker, extractor=_NoExtractor(), batch_answers=batch_items)
    for lo in range(0, len(todo), batch_items):
        batch = todo[lo : lo + batch_items]
        detections = ge.detect_kgs(
            [list(t[3]) for t in batch],
            [t[2] for t in batch],
            answers=[t[1] for t in batch] if raw else None,
        )
        with store.transaction() as con:
            put_detections(
                con,
                run_id,
                extractor,
                checker,
                [(t[0], d) for t, d in zip(batch, detections, strict=True)],
            )
        report.written += len(batch)
        report.inconsistent += sum(1 for d in detections if d.inconsistent)
        if progress is not None:
            progress("answers", lo + len(batch), len(todo))
    report.seconds = time.perf_counter() - started
    return report


class _NoExtractor:
    """Stands in where KGs come from the store (never asked to extract)."""

    name = "stored"

    def extract(self, items: Sequence[Any]) -> list[dict[str, Any]]:
        raise GraphEvalError("stored KGs only: this GraphEval does not extract")


def put_bench_row(con: duckdb.DuckDBPyConnection, result: dict[str, Any]) -> None:
    """Write one benchmark result (:func:`~s3kg_core.grapheval.bench.run_bench`) to the table."""
    con.execute(
        "INSERT OR REPLACE INTO grapheval_bench (run_at, dataset, n, checker, extractor, "
        "raw_balanced_accuracy, kg_balanced_accuracy, flagged_triples, detail) "
        "VALUES (current_timestamp, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            result["dataset"],
            result["n"],
            result["checker"],
            result["extractor"],
            (result.get("raw") or {}).get("balanced_accuracy"),
            result["kg"]["balanced_accuracy"],
            result["kg"]["flagged_triples"],
            json.dumps({k: v for k, v in result.items() if k != "answers"}),
        ],
    )


def get_bench_rows(
    con: duckdb.DuckDBPyConnection, dataset: str | None = None
) -> list[dict[str, Any]]:
    """Stored benchmark rows as dicts, optionally of one dataset."""
    where, params = ("WHERE dataset = ?", [dataset]) if dataset else ("", [])
    cur = con.execute(
        "SELECT run_at, dataset, n, checker, extractor, raw_balanced_accuracy, "
        f"kg_balanced_accuracy, flagged_triples, detail FROM grapheval_bench {where} "
        "ORDER BY dataset, checker, extractor",
        params,
    )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
