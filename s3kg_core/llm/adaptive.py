"""How many requests may be in flight: found by probing, like TCP's congestion window.

A local CPU server (``transformers serve``, llama.cpp's server with one slot) generates for one
request at a time and queues the rest; a hosted API serves many at once. The client cannot know
which, so :class:`AdaptiveLimit` finds out:

- **Slow start.** The limit starts at 1 and doubles each time a full window of requests (as
  many as the limit) came back *without queueing* while that many were in flight, up to the
  user's ``--concurrency``; after the first sign of congestion it grows by one per window.
- **Queueing is congestion.** A request that waited at the server (its first token came more
  than half a typical generation later than the quickest first token seen) lowers the limit by
  one; the next probe upwards waits for 8 clean replies, then 16, 32... (a single-worker server
  costs one queued request per probe, not one per window).
- **Timeouts and overload halve it** (multiplicative decrease): a timeout, 429 or 503.
- **A timed-out request is a ghost.** A server that does not cancel work when the client hangs
  up keeps generating for it, so its slot stays taken (:meth:`AdaptiveLimit.timed_out`) until
  the server is known to be past it: a request sent after it has come back (a server that
  serves in order has finished the ghost), or ``ghost_seconds`` have passed. Its retry waits for
  that (:meth:`AdaptiveLimit.wait_ghost`), so a retry never queues behind its own abandoned
  twin.

Examples
--------
>>> limit = AdaptiveLimit(4)
>>> ticket = limit.acquire()
>>> limit.success(ticket, first_token_s=0.2, total_s=1.0)
>>> limit.limit  # one clean reply at the full limit: one more slot
2
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["AdaptiveLimit", "Ghost", "Ticket"]

_QUEUE_FACTOR = 1.5
"""A first token later than this times the quickest one seen (plus half a generation) queued."""
_QUEUE_SLACK_S = 0.05
"""Seconds of scheduling noise a first token may be late by without counting as queued."""
_FIRST_PROBE_WAIT = 8
_MAX_PROBE_WAIT = 256


@dataclass
class Ticket:
    """One request in flight: when it was sent, and the most in flight while it was."""

    seq: int
    sent: float
    peak: int


@dataclass
class Ghost:
    """The slot of a timed-out request the server may still be working on."""

    seq: int
    expires: float
    cleared: threading.Event = field(default_factory=threading.Event)


class AdaptiveLimit:
    """The number of requests that may be in flight, adapted to what the server can serve.

    Parameters
    ----------
    maximum
        The most in flight ever (``--concurrency``).
    initial
        Where the limit starts (1: slow start).
    ghost_seconds
        The longest a timed-out request keeps its slot when nothing shows the server is past it.
    clock
        Monotonic seconds (tests pass a fake one).

    Notes
    -----
    Thread-safe: worker threads call :meth:`acquire` before a request and exactly one of
    :meth:`success`, :meth:`overload`, :meth:`release` or :meth:`timed_out` after it.
    """

    def __init__(
        self,
        maximum: int,
        *,
        initial: int = 1,
        ghost_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.maximum = max(1, int(maximum))
        self.limit = max(1, min(int(initial), self.maximum))
        self.ghost_seconds = ghost_seconds
        self.peak = 0  # most requests ever in flight at once (ghosts included)
        self._clock = clock
        self._cond = threading.Condition()
        self._active: dict[int, Ticket] = {}
        self._ghosts: list[Ghost] = []
        self._seq = 0
        self._clean = 0  # clean replies at the current limit
        self._probe_wait = 0  # clean replies still needed before probing upwards
        self._next_wait = _FIRST_PROBE_WAIT
        self._slow_start = True
        self._best_first: float | None = None
        self._generation: deque[float] = deque(maxlen=16)

    # -- slots ---------------------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        """Requests in flight now, ghosts included."""
        with self._cond:
            return len(self._active) + len(self._ghosts)

    def _expire_ghosts(self) -> None:
        now = self._clock()
        for ghost in [g for g in self._ghosts if g.expires <= now]:
            self._clear(ghost)

    def _clear(self, ghost: Ghost) -> None:
        if ghost in self._ghosts:
            self._ghosts.remove(ghost)
            ghost.cleared.set()
            self._cond.notify_all()

    def wait_ghost(self, ghost: Ghost, stop: threading.Event | None = None) -> None:
        """Block until the server is known to be past ``ghost``'s request (or ``stop`` is set)."""
        with self._cond:
            while not ghost.cleared.is_set():
                self._expire_ghosts()
                if ghost.cleared.is_set() or (stop is not None and stop.is_set()):
                    return
                self._cond.wait(0.05)

    def acquire(self, stop: threading.Event | None = None) -> Ticket | None:
        """Wait for a free slot and take it; ``None`` if ``stop`` was set meanwhile."""
        with self._cond:
            while True:
                self._expire_ghosts()
                if stop is not None and stop.is_set():
                    return None
                if len(self._active) + len(self._ghosts) < self.limit:
                    break
                self._cond.wait(0.05)
            self._seq += 1
            ticket = Ticket(self._seq, self._clock(), 0)
            self._active[ticket.seq] = ticket
            busy = len(self._active) + len(self._ghosts)
            self.peak = max(self.peak, busy)
            for other in self._active.values():
                other.peak = max(other.peak, busy)
            return ticket

    def _done(self, ticket: Ticket, *, answered: bool) -> None:
        self._active.pop(ticket.seq, None)
        if answered:  # the server got to this request, so to every ghost sent before it
            for ghost in [g for g in self._ghosts if g.seq < ticket.seq]:
                self._clear(ghost)
        self._cond.notify_all()

    # -- outcomes -----------------------------------------------------------------------------

    def success(self, ticket: Ticket, *, first_token_s: float, total_s: float) -> None:
        """A reply came back: first token after ``first_token_s``, complete after ``total_s``."""
        with self._cond:
            self._done(ticket, answered=True)
            queued = self._queued(first_token_s, total_s, ticket.peak)
            if queued:
                self._congested(self.limit - 1)
                return
            if ticket.peak < self.limit:
                return  # no evidence about the current limit
            if self._probe_wait > 0:
                self._probe_wait -= 1
                return
            self._clean += 1
            if self._clean >= self.limit and self.limit < self.maximum:
                grown = self.limit * 2 if self._slow_start else self.limit + 1
                self.limit = min(grown, self.maximum)
                self._clean = 0

    def _queued(self, first: float, total: float, peak: int) -> bool:
        generation = max(0.0, total - first)
        typical = statistics.median(self._generation) if self._generation else 0.0
        best = self._best_first
        self._generation.append(generation)
        if best is None or first < best:
            self._best_first = first
        if best is None or peak < 2:
            return False
        return first > _QUEUE_FACTOR * best + 0.5 * typical + _QUEUE_SLACK_S

    def _congested(self, new_limit: int) -> None:
        self.limit = max(1, min(new_limit, self.maximum))
        self._slow_start = False
        self._clean = 0
        self._probe_wait = self._next_wait
        self._next_wait = min(self._next_wait * 2, _MAX_PROBE_WAIT)

    def overload(self, ticket: Ticket) -> None:
        """The server said it is overloaded (429, 503): halve the limit."""
        with self._cond:
            self._done(ticket, answered=True)
            self._congested(self.limit // 2)

    def release(self, ticket: Ticket, *, answered: bool = True) -> None:
        """Any other outcome (an error reply, a refused connection): free the slot."""
        with self._cond:
            self._done(ticket, answered=answered)

    def timed_out(self, ticket: Ticket, *, ghost_seconds: float | None = None) -> Ghost:
        """The request timed out: halve the limit; its slot stays taken as a :class:`Ghost`."""
        with self._cond:
            self._active.pop(ticket.seq, None)
            seconds = self.ghost_seconds if ghost_seconds is None else ghost_seconds
            ghost = Ghost(ticket.seq, self._clock() + seconds)
            self._ghosts.append(ghost)
            self._congested(self.limit // 2)
            self._cond.notify_all()
            return ghost
