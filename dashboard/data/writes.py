"""The dashboard's writes: the demo build, annotation decisions, a run's name.

Each write is one short transaction under the process lock
(:func:`~dashboard.data.database.writer`); a write that changes what pages read clears the
cached reads.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from dashboard.data.database import View, by_stamp, clear_caches, locked, read_store, writer
from s3kg_core.annotation.log import Decision, Entry, Undone, save_decision, undo_last
from s3kg_core.demo import build_demo, pending_steps
from s3kg_core.demo import finish_demo as finish_build
from s3kg_core.store.run_queries import rename_run as store_rename

__all__ = [
    "demo_pending",
    "ensure_database",
    "finish_demo",
    "record_decision",
    "rename_run",
    "undo_decision",
]


def ensure_database(
    path: Path, on_step: Callable[[str], None] | None = None, *, defer_grapheval: bool = False
) -> bool:
    """Build the demo database at ``path`` if there is none; return whether this build made it.

    A build never replaces a file: when another process installed one while this one was
    building, that file stays (with what was saved into it) and this build is discarded
    (``False``). ``on_step(line)`` hears each build step as it starts. ``defer_grapheval``
    leaves the GraphEval step pending, for :func:`finish_demo` (the first page shows sooner).
    """
    if path.exists():
        return False
    with locked():
        if not path.exists():
            return build_demo(path, on_step=on_step, grapheval=not defer_grapheval).installed
    return False


@by_stamp()
@st.cache_data(show_spinner=False, max_entries=8)
def demo_pending(view: View) -> tuple[str, ...]:
    """The demo build's steps still to do in ``view``'s file (none for other databases).

    Cached per stamp: a page that asks on every visit opens the file once per change, not once
    per visit.
    """
    with read_store(view.path) as store:
        return pending_steps(store)


def finish_demo(path: Path, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Run the demo's pending GraphEval step on the file at ``path``; return answers checked."""
    with writer(path) as store:
        reports = finish_build(store, progress=progress)
    clear_caches()
    return sum(r.written for r in reports)


def record_decision(path: Path, decision: Decision) -> Entry | None:
    """Save one decision at once (its own short transaction, under the process lock).

    Returns the log row written, or ``None`` when it changes nothing (see
    :func:`s3kg_core.annotation.log.save_decision`).
    """
    with writer(path) as store:
        return save_decision(store, decision, source="page")


def undo_decision(path: Path, annotator: str, role: str = "annotator") -> Undone | None:
    """Undo a person's last decision (a new ``undo`` row); ``None`` when none is left."""
    with writer(path) as store:
        return undo_last(store, annotator, role=role, source="page")


def rename_run(path: Path, run_id: int, name: str) -> str:
    """Store a run's new display name (one short transaction) and forget the cached reads.

    Returns the name as stored; raises :class:`~s3kg_core.errors.ConfigError` for a name
    :func:`s3kg_core.store.run_queries.rename_run` refuses.
    """
    with writer(path) as store, store.transaction() as con:
        stored = store_rename(con, run_id, name)
    clear_caches()
    return stored
