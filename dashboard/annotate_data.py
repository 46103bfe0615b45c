"""The Annotate page's reads: tasks, queues, units, decisions in effect, agreement, the export.

Each is a Streamlit-cached call of :mod:`s3kg_core.annotation` on a short read-only connection under
the dashboard's process lock (:func:`dashboard.data.database.reader`), keyed by the database's stamp
(:func:`dashboard.data.database.db_stamp`), so a decision saved by this page or by anyone else shows
on the next run. Writes go through :func:`dashboard.data.writes.record_decision` and
:func:`dashboard.data.writes.undo_decision`. No SQL here: every statement is a function of
:mod:`s3kg_core.store`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data.database import read_store, reader
from s3kg_core.annotation import tasks as annotation_tasks
from s3kg_core.annotation.exchange import export_bytes
from s3kg_core.annotation.log import current_verdicts
from s3kg_core.annotation.log import disagreements as find_disagreements
from s3kg_core.annotation.quality import (
    AnnotationReport,
    Estimate,
    annotation_report,
    category_precision,
)
from s3kg_core.annotation.tasks import QueueItem, QueueProgress, Unit
from s3kg_core.store import annotation_queries

__all__ = [
    "decisions",
    "disagreements",
    "export",
    "item_units",
    "precision",
    "queue",
    "queue_progress",
    "report",
    "tasks",
]


@st.cache_data(show_spinner=False, max_entries=8)
def tasks(path: Path, stamp: int) -> list[dict[str, Any]]:
    """Every annotation task (``task_id, name, created_at, annotators, overlap``), oldest first."""
    with reader(path) as con:
        found = annotation_queries.tasks(con)
    return [{k: t[k] for k in ("task_id", "name", "created_at", "annotators", "overlap")}
            for t in found]  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=256)
def item_units(path: Path, task_id: int, run_id: int, item_id: int) -> list[Unit]:
    """The units of one answer in a task, fixed when the task was made (never recomputed)."""
    with reader(path) as con:
        return annotation_tasks.item_units(con, task_id, run_id, item_id)


@st.cache_data(show_spinner=False, max_entries=16)
def queue(path: Path, stamp: int, task_id: int, annotator: str) -> list[QueueItem]:
    """An annotator's queue in a task, with how far they are with each answer."""
    with reader(path) as con:
        return annotation_tasks.queue(con, task_id, annotator)


@st.cache_data(show_spinner=False, max_entries=16)
def queue_progress(
    path: Path, stamp: int, task_id: int, annotator: str, after: tuple[int, int] | None = None
) -> QueueProgress:
    """Progress through an annotator's queue and the next undone answer (after ``after``)."""
    with reader(path) as con:
        return annotation_tasks.queue_progress(con, task_id, annotator, after=after)


@st.cache_data(show_spinner=False, max_entries=16)
def decisions(path: Path, stamp: int, annotator: str, run_id: int, item_id: int) -> pd.DataFrame:
    """One person's decisions in effect on one answer (as an annotator), in the order made."""
    with reader(path) as con:
        frame = current_verdicts(con, run_id=run_id, annotator=annotator, role="annotator")
    return frame[frame["item_id"] == item_id].reset_index(drop=True)


@st.cache_data(show_spinner=False, max_entries=8)
def disagreements(path: Path, stamp: int, task_id: int | None) -> pd.DataFrame:
    """The pairs whose annotators' labels differ, each with its adjudicated label if any."""
    with reader(path) as con:
        return find_disagreements(con, task_id=task_id)


@st.cache_data(show_spinner=False, max_entries=8)
def report(path: Path, stamp: int, task_id: int | None, bootstrap: int = 1000) -> AnnotationReport:
    """Kappa and alpha with intervals, overall and per TAU category, and TAU's P/R/F1."""
    with read_store(path) as store:
        return annotation_report(store, task_id=task_id, bootstrap=bootstrap)


@st.cache_data(show_spinner=False, max_entries=8)
def precision(path: Path, stamp: int, task_id: int | None) -> dict[str, Estimate]:
    """Each TAU category's precision against the final labels so far, with Wilson's interval."""
    with read_store(path) as store:
        return category_precision(store, task_id=task_id)


@st.cache_data(show_spinner=False, max_entries=4)
def export(path: Path, stamp: int, fmt: str) -> bytes:
    """The whole verdict log as a ``fmt`` file (csv, parquet or jsonl) for the download button."""
    with read_store(path) as store:
        return export_bytes(store, fmt)
