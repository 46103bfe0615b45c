"""The one home of the progress-callback types.

Long-running functions take an optional ``progress`` callback and call it as they go; the CLI
hands them a progress bar, the dashboard a ``st.progress`` widget, tests a list's ``append``.
There are two shapes:

- :data:`Progress`, ``progress(done, total)``: one loop, ``done`` of ``total`` units finished;
- :data:`StageProgress`, ``progress(stage, done, total)``: a function of several stages (encode,
  score, extract ...) says which stage the counts belong to.

Both are plain :class:`~collections.abc.Callable` aliases, so any function, lambda or bound method
of the right arity fits; callers always pass the arguments by position.

Examples
--------
>>> seen: list[tuple[str, int, int]] = []
>>> def report(stage: str, done: int, total: int) -> None:
...     seen.append((stage, done, total))
>>> progress: StageProgress = report
>>> progress("encode", 3, 10)
>>> counts: Progress = lambda done, total: report("score", done, total)
>>> counts(10, 10)
>>> seen
[('encode', 3, 10), ('score', 10, 10)]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias

__all__ = ["Progress", "StageProgress"]

Progress: TypeAlias = Callable[[int, int], None]
"""``progress(done, total)``: ``done`` of ``total`` units are finished."""

StageProgress: TypeAlias = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: in ``stage``, ``done`` of ``total`` units are finished."""
