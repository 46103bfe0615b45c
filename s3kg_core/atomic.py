"""Files written whole or not at all: a temporary file beside the target, renamed over it.

A killed process, a full disk or an exception while writing leaves the previous file as it
was (and no temporary file behind), never a half-written one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["replacing"]


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit it replaces ``path`` at once.

    The folder is created when missing. If the block raises, the temporary file is removed
    and ``path`` keeps what it held before.

    Examples
    --------
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> with replacing(target) as tmp:
    ...     _ = tmp.write_text("whole")
    >>> target.read_text()
    'whole'
    >>> try:
    ...     with replacing(target) as tmp:
    ...         _ = tmp.write_text("half")
    ...         raise RuntimeError("killed")
    ... except RuntimeError:
    ...     pass
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('whole', ['out.txt'])
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
