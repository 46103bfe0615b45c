"""A FIFO filled by a writer thread until its reader stops: the tests of input caps use it."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["flooded_fifo"]


@contextmanager
def flooded_fifo(path: Path, block: bytes, times: int = 40) -> Iterator[list[int]]:
    """Make ``path`` a FIFO and write ``block`` into it ``times`` times from a thread.

    Yields the list of blocks written (one entry a block) while the reader reads; on exit the
    writer is stopped (its FIFO opened and closed if the reader never opened it) and joined.
    """
    os.mkfifo(path)
    wrote: list[int] = []

    def writer() -> None:
        try:
            with path.open("wb") as out:
                for _ in range(times):
                    out.write(block)
                    wrote.append(1)
        except BrokenPipeError:  # the reader stopped: what the tests want
            pass

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        yield wrote
    finally:
        if thread.is_alive():  # never opened by the reader: open and close it, so it stops
            os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
        thread.join()
