"""The dashboard's background work: one registry of threads, one start, one stop.

A page starts work that outlives its run (TAU explained ahead, a comparison warmed at every
alpha, the lemmatiser loaded) with :func:`start`: one thread per key, started once, started
again only when it was stopped before its work was complete. Starting a job with
``supersede=True`` stops the other jobs of its group at their next check (an alpha step stops
the last step's prefetch). :func:`stop` tells the running jobs (of a group) to stop at their next
check and waits for them (asked again, they start anew). At exit, :func:`stop_all` does so for
every job and starts none after: a thread killed inside a DuckDB query aborts the interpreter
("terminate called after throwing an instance of ...").
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

__all__ = ["Job", "Work", "jobs", "start", "stop", "stop_all"]

Work = Callable[[Callable[[], bool]], bool]
"""A job's work: called with ``stopped`` (check it between blocks; return when it is true);
returns whether it did all it had to (``False``: stopped early)."""

KEEP_FINISHED = 32
"""Finished jobs kept (their keys are complete: asked again, they start nothing)."""


@dataclass(frozen=True)
class Job:
    """One background thread and its two flags."""

    key: Hashable
    group: str
    thread: threading.Thread
    cancelled: threading.Event = field(default_factory=threading.Event)
    complete: threading.Event = field(default_factory=threading.Event)

    def stopped(self) -> bool:
        """Whether the job should stop: the process is exiting, or a newer job superseded it."""
        return _EXITING.is_set() or self.cancelled.is_set()

    @property
    def live(self) -> bool:
        """Complete, or running and not told to stop: asked again, it is the same job."""
        return self.complete.is_set() or (self.thread.is_alive() and not self.cancelled.is_set())


_EXITING = threading.Event()
_LOCK = threading.Lock()
_JOBS: dict[Hashable, Job] = {}


def start(key: Hashable, work: Work, *, group: str, supersede: bool = False) -> threading.Thread:
    """Run ``work`` in a daemon thread named ``group``, once per ``key``; return the thread.

    A job of ``key`` that is complete, or running and not stopped, is returned as it is; one
    that was stopped before it was complete is started again. ``supersede``: the other jobs
    of ``group`` stop at their next check.

    Examples
    --------
    >>> done = start(("doc", 1), lambda stopped: True, group="doc")
    >>> done.join(); start(("doc", 1), lambda stopped: True, group="doc") is done
    True
    """
    with _LOCK:
        known = _JOBS.get(key)
        if known is not None and known.live:
            return known.thread
        if supersede:
            for other in _JOBS.values():
                if other.group == group:
                    other.cancelled.set()
        holder: list[Job] = []

        def run() -> None:
            job = holder[0]
            if work(job.stopped):
                job.complete.set()

        job = Job(key, group, threading.Thread(target=run, name=group, daemon=True))
        holder.append(job)
        _JOBS.pop(key, None)
        _JOBS[key] = job  # the newest last
        finished = [k for k, j in _JOBS.items() if not j.thread.is_alive() and k != key]
        for old in finished[: max(0, len(finished) - KEEP_FINISHED)]:
            del _JOBS[old]
        job.thread.start()
    return job.thread


def jobs(group: str | None = None) -> list[Job]:
    """The jobs the registry holds (of ``group``), oldest first."""
    with _LOCK:
        return [j for j in _JOBS.values() if group is None or j.group == group]


def stop(group: str | None = None, timeout: float = 60.0) -> int:
    """Tell the running jobs (of ``group``) to stop at their next check, and wait for each.

    At most ``timeout`` seconds a thread. A stopped job that was not complete starts anew when
    it is asked again. Returns how many jobs were running.

    Examples
    --------
    >>> import threading
    >>> go = threading.Event()
    >>> thread = start("wait", lambda stopped: go.wait(30) and not stopped(), group="wait")
    >>> stop("wait", timeout=0.1)  # it checks only once the event is set
    1
    >>> go.set(); thread.join(); [j.complete.is_set() for j in jobs("wait")]
    [False]
    """
    running = [j for j in jobs(group) if j.thread.is_alive()]
    for job in running:
        job.cancelled.set()
    for job in running:
        job.thread.join(timeout=timeout)
    return len(running)


@atexit.register
def stop_all(timeout: float = 60.0) -> None:
    """Tell every job to stop and start none after; wait for each (``timeout`` s a thread)."""
    _EXITING.set()
    stop(timeout=timeout)
