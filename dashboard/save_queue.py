"""One session's Annotate decisions, saved in the order they were made by one worker thread.

A key press on Annotate puts a decision, bound to the pair shown when the key was pressed, in
the session's :class:`SaveQueue` and returns at once; the worker saves the decisions one after
the other. So a save that waits for the database (another process holds its write lock) keeps
the page answering: the next key press judges the next pair, its decision waits its turn, and
the page shows what is being saved (:func:`pending_line`). When a save fails, it and every
decision queued after it are dropped (none is saved out of order) and reported
(:meth:`SaveQueue.take_failures`), so the page can say which presses to repeat.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from s3kg_core.annotation.log import Decision

__all__ = ["Failure", "Pending", "SaveQueue", "pending_line"]

BUSY_AFTER_S = 1.0
"""Seconds a save may take before the page says the database is busy."""


@dataclass(frozen=True)
class Pending:
    """A decision waiting to be saved: its place in the order, the pair number shown, when."""

    seq: int
    pair: int
    decision: Decision
    queued_at: float

    def describe(self, run_id: int | None = None, item_id: int | None = None) -> str:
        """``"reject for pair 2"``, with the run and item when they are not the ones given.

        Examples
        --------
        >>> p = Pending(1, 2, Decision("ann", 1, 4, ("a", "b", "c"), None, "reject"), 0.0)
        >>> p.describe(1, 4)
        'reject for pair 2'
        >>> p.describe(1, 5)
        'reject for pair 2 of run 1, item 4'
        """
        d = self.decision
        where = "" if (d.run_id, d.item_id) == (run_id, item_id) else (
            f" of run {d.run_id}, item {d.item_id}"
        )  # fmt: skip
        return f"{d.verdict} for pair {self.pair}{where}"


@dataclass(frozen=True)
class Failure:
    """A save that failed (``error``), and the decisions queued after it, dropped unsaved."""

    failed: Pending
    error: str
    dropped: tuple[Pending, ...]


class SaveQueue:
    """Saves decisions in the order given, one at a time, in a worker thread.

    Parameters
    ----------
    save
        Saves one decision (waits for the database as long as it must, raises when it gives up).
    target
        What the decisions are saved into (the database file), for the owner to tell queues
        apart.

    Examples
    --------
    >>> saved = []
    >>> q = SaveQueue(saved.append)
    >>> d = Decision("ann", 1, 4, ("a", "b", "c"), None, "skip")
    >>> q.put(3, d).seq, q.wait(5), saved == [d]
    (1, True, True)
    """

    def __init__(self, save: Callable[[Decision], object], target: object = None) -> None:
        self._save = save
        self.target = target
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._waiting: deque[Pending] = deque()
        self._current: Pending | None = None
        self._started = 0.0
        self._failures: list[Failure] = []
        self._seq = itertools.count(1)
        self._worker: threading.Thread | None = None

    def put(self, pair: int, decision: Decision) -> Pending:
        """Queue ``decision`` (pair number ``pair`` on the page) after those queued before."""
        with self._lock:
            pending = Pending(next(self._seq), pair, decision, time.monotonic())
            self._waiting.append(pending)
            if self._worker is None:
                self._worker = threading.Thread(
                    target=self._run, name="annotate-saves", daemon=True
                )
                self._worker.start()
        return pending

    def pending(self) -> list[Pending]:
        """The decision being saved, then those waiting, in order (empty when all are saved)."""
        with self._lock:
            head = [] if self._current is None else [self._current]
            return head + list(self._waiting)

    def saving_for(self) -> float:
        """Seconds the decision being saved has waited so far (0 when none is)."""
        with self._lock:
            return 0.0 if self._current is None else time.monotonic() - self._started

    def take_failures(self) -> list[Failure]:
        """The failures since the last call (each reported once)."""
        with self._lock:
            failures, self._failures = self._failures, []
        return failures

    def wait(self, timeout: float) -> bool:
        """Wait until every queued decision is saved or dropped; whether that happened in time."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._current is not None or self._waiting:
                left = deadline - time.monotonic()
                if left <= 0 or not self._idle.wait(left):
                    return not (self._current is not None or self._waiting)
        return True

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._waiting:
                    self._current, self._worker = None, None
                    self._idle.notify_all()
                    return
                self._current, self._started = self._waiting.popleft(), time.monotonic()
                current = self._current
            try:
                self._save(current.decision)
            except Exception as exc:  # any failure is reported, never lost
                with self._lock:
                    dropped, self._waiting = tuple(self._waiting), deque()
                    self._failures.append(Failure(current, " ".join(str(exc).split()), dropped))
            with self._lock:
                self._current = None


def pending_line(queue: SaveQueue, run_id: int, item_id: int) -> str | None:
    """What the page says while decisions are being saved (``None`` when none is).

    Plain text (the caller escapes it for its sink).

    Examples
    --------
    >>> import threading
    >>> gate = threading.Event()
    >>> q = SaveQueue(lambda d: gate.wait(5))
    >>> for pair, verdict in ((1, "reject"), (2, "confirm")):
    ...     _ = q.put(pair, Decision("ann", 2, 10, ("a", "b", "c"), None, verdict))
    >>> print(pending_line(q, 2, 10))
    Saving reject for pair 1 … then confirm for pair 2, in this order
    >>> gate.set(); q.wait(5), pending_line(q, 2, 10)
    (True, None)
    """
    pending = queue.pending()
    if not pending:
        return None
    waited = queue.saving_for()
    line = f"Saving {pending[0].describe(run_id, item_id)} …"
    if waited >= BUSY_AFTER_S:
        line += f" (database busy: waiting {waited:.0f} s)"
    if len(pending) > 1:
        later = ", ".join(p.describe(run_id, item_id) for p in pending[1:])
        line += f" then {later}, in this order"
    return line
