"""GraphEval in the store: per-answer detection of stored runs, and the benchmark rows.

:func:`detect_store` reads a run's answers, contexts and stored answer KGs (source ``answer``,
written by the run's extractor), checks them, and writes one ``grapheval_results`` row per
answer. It resumes: answers that already have a verdict from this checker on this extractor's
KGs are skipped; those the checker judged no triple of (``unjudged``) are checked again.
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
from ..failures import StageFailures
from ..progress import StageProgress
from ..store import grapheval_queries, queries
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
    unjudged: int = 0
    seconds: float = 0.0

    def summary(self) -> str:
        """One line for the command line."""
        return (
            f"run {self.run_id} ({self.extractor}), checker {self.checker}: {self.written} "
            f"answers checked ({self.inconsistent} inconsistent), {self.already_done} already "
            f"done, {self.missing_kg} without a usable answer KG (extract them first)"
            + (f"; {self.unjudged} unjudged (checked again on a rerun)" if self.unjudged else "")
        )

    def stage_failures(self) -> StageFailures:
        """The answers of which the checker judged no triple (stored, checked again on a rerun)."""
        return StageFailures(
            "grapheval detect",
            self.unjudged,
            self.written,
            "answers",
            "each triple's reason in the detail column of the grapheval_results table, or the "
            "Hallucinations page",
            outcome="unjudged",
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
        grapheval_queries.put_grapheval_result(
            con,
            run_id=run_id,
            item_id=item_id,
            checker=checker.name,
            extractor=extractor,
            inconsistent=d.inconsistent,
            raw_probability=d.raw_probability,
            n_triples=len(d.triples),
            n_flagged=len(d.flagged),
            detail=json.dumps(d.to_dict()),
            signature=checker.signature,
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
    out = []
    for rec in grapheval_queries.grapheval_result_rows(
        con, run_id, checker, inconsistent_only=inconsistent_only
    ):
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
        grapheval_queries.set_grapheval_correction(
            con, run_id, item_id, checker, extractor, c.corrected, json.dumps(c.to_dict())
        )
    return len(rows)


def _run_extractor(con: duckdb.DuckDBPyConnection, run_id: int) -> str:
    extractor = queries.run_extractor(con, run_id)
    if extractor is None:
        runs = queries.run_ids(con)
        raise GraphEvalError(f"no run {run_id} in the store; it has runs {runs}")
    return extractor


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
        done = grapheval_queries.checked_item_ids(con, run_id, checker.name, extractor)
        rows = grapheval_queries.answers_with_context(con, run_id)
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
        report.unjudged += sum(1 for d in detections if d.status == "unjudged")
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
    """Write a benchmark result (:func:`s3kg_core.evaluation.grapheval.run_bench`) to the table."""
    grapheval_queries.put_grapheval_bench(
        con,
        dataset=result["dataset"],
        n=result["n"],
        checker=result["checker"],
        extractor=result["extractor"],
        raw_balanced_accuracy=(result.get("raw") or {}).get("balanced_accuracy"),
        kg_balanced_accuracy=result["kg"]["balanced_accuracy"],
        flagged_triples=result["kg"]["flagged_triples"],
        detail=json.dumps({k: v for k, v in result.items() if k != "answers"}),
    )


def get_bench_rows(
    con: duckdb.DuckDBPyConnection, dataset: str | None = None
) -> list[dict[str, Any]]:
    """Stored benchmark rows as dicts, optionally of one dataset."""
    return grapheval_queries.grapheval_bench_rows(con, dataset)
