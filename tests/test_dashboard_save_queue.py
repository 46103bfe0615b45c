"""Tests of dashboard/save_queue.py: decisions saved in order, each once, failures reported."""

from __future__ import annotations

import threading

from dashboard.save_queue import SaveQueue, pending_line
from s3kg_core.annotation.log import Decision
from s3kg_core.errors import DatabaseLockedError


def _decision(verdict: str, item: int = 10, tail: str = "c") -> Decision:
    return Decision("ann", 2, item, ("a", "b", tail), None, verdict)


def test_decisions_queued_behind_a_slow_save_are_saved_in_order_each_once():
    gate, saved = threading.Event(), []

    def save(decision: Decision) -> None:
        gate.wait(10)
        saved.append((decision.answer, decision.gold, decision.verdict))

    queue = SaveQueue(save)
    for n, verdict in enumerate(("reject", "confirm", "skip"), 1):
        queue.put(n, _decision(verdict, tail=str(n)))
    assert [p.seq for p in queue.pending()] == [1, 2, 3] and saved == []
    line = pending_line(queue, 2, 10)
    assert (
        line == "Saving reject for pair 1 … then confirm for pair 2, skip for pair 3, in this order"
    )
    gate.set()
    assert queue.wait(10) and not queue.pending() and pending_line(queue, 2, 10) is None
    assert saved == [
        (None, ("a", "b", "1"), "reject"),
        (None, ("a", "b", "2"), "confirm"),
        (None, ("a", "b", "3"), "skip"),
    ]
    assert queue.take_failures() == []


def test_a_failed_save_drops_the_decisions_after_it_and_is_reported_once():
    gate, saved = threading.Event(), []

    def save(decision: Decision) -> None:
        gate.wait(10)  # the first save waits while the others queue behind it
        if decision.verdict == "reject":
            raise DatabaseLockedError("database x is locked\nby another process.")
        saved.append(decision.verdict)

    queue = SaveQueue(save)
    queue.put(1, _decision("confirm"))
    queue.put(2, _decision("reject"))
    queue.put(3, _decision("skip", item=11))
    gate.set()
    assert queue.wait(10)
    (failure,) = queue.take_failures()
    assert failure.failed.describe(2, 10) == "reject for pair 2"
    assert failure.error == "database x is locked by another process."  # one line
    assert [p.describe(2, 10) for p in failure.dropped] == ["skip for pair 3 of run 2, item 11"]
    assert saved == ["confirm"] and queue.take_failures() == []
    queue.put(4, _decision("skip"))  # the queue goes on after a failure
    assert queue.wait(10) and saved == ["confirm", "skip"]


def test_a_save_that_waits_says_the_database_is_busy(monkeypatch):
    import dashboard.save_queue as sq

    gate = threading.Event()
    queue = SaveQueue(lambda d: gate.wait(10))
    queue.put(1, _decision("reject"))
    monkeypatch.setattr(sq, "BUSY_AFTER_S", 0.0)
    try:
        line = pending_line(queue, 2, 10)
        assert line is not None
        assert line.startswith("Saving reject for pair 1 … (database busy: waiting ")
    finally:
        gate.set()
    assert queue.wait(10)
