"""Files written whole or not at all: a temporary file beside the target, renamed over it.

A killed process, a full disk or an exception while writing leaves the previous file as it
was (and no temporary file behind), never a half-written one. The file keeps the mode of the one
it replaces, and a new file gets the mode ``open()`` would give it (0666 less the umask), not the
0600 of a temporary file.

:func:`check_replaceable` is the one check of every output the project writes, called by
:func:`replacing` and, before any work, by the CLI's ``check_output``: a path that is not a
regular file (a device, a FIFO) or that is a database (a DuckDB file by its header whatever its
name, a DuckDB write-ahead log, a file this process has open as a database or another process
holds a lock on) is never replaced.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import OutputError, OutputIsDatabaseError

__all__ = ["DUCKDB_MAGIC", "check_replaceable", "not_replaceable", "replacing", "write_failure"]

DUCKDB_MAGIC = b"DUCK"
"""The bytes at offset 8 of every DuckDB database file (after its header's checksum)."""

_MAGIC_AT = 8


def _special_file(path: str | Path) -> str | None:
    """Why ``path`` is not a file that may be renamed over (a device, a FIFO...), else ``None``."""
    try:
        mode = os.stat(path).st_mode  # follows symlinks: /dev/stdout is its target's kind
    except OSError:
        return None  # nothing there (or a dangling symlink): a new file is made
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None  # a folder is refused by the callers with their own words
    kind = (
        "a character device"
        if stat.S_ISCHR(mode)
        else "a block device"
        if stat.S_ISBLK(mode)
        else "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a special file"
    )
    return f"{path} is {kind}, not a regular file"


def _open_here(path: Path) -> bool:
    """Whether this process has the DuckDB file ``path`` attached (:mod:`.store.connection`).

    Asked before the file is opened to read its header: closing any handle of a file drops the
    process's POSIX locks on it, DuckDB's included. A process that never imported the module
    has nothing attached (and the check does not import DuckDB for it).
    """
    connection = sys.modules.get("s3kg_core.store.connection")
    return connection is not None and bool(connection.is_attached(path))


def _is_duckdb(path: Path) -> bool:
    """Whether the regular file ``path`` starts as a DuckDB database does."""
    try:
        with open(path, "rb") as fh:
            return fh.read(_MAGIC_AT + len(DUCKDB_MAGIC))[_MAGIC_AT:] == DUCKDB_MAGIC
    except OSError:
        return False


def _locked_by_another(path: Path) -> bool:
    """Whether another process holds a POSIX lock on ``path`` (as DuckDB and SQLite do)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no such locks to see
        return False
    try:
        fd = os.open(path, os.O_RDWR)
        kind = fcntl.LOCK_EX  # conflicts with a reader's lock as well as a writer's
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return False
        kind = fcntl.LOCK_SH  # a file we cannot write: a writer's lock is still seen
    try:
        fcntl.lockf(fd, kind | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # releases the probe's own lock
    return False


def _database(path: Path) -> str | None:
    """Why ``path`` is a database (or the ``.wal`` of one) that an output must not replace."""
    if path.name.casefold().endswith(".wal"):  # there or not: DuckDB would replay a new one
        main = path.with_name(path.name[:-4])
        if _open_here(main) or (main.is_file() and _is_duckdb(main)):
            return f"{path} is the write-ahead log of the DuckDB database {main}"
    if not path.is_file():
        return None
    if _open_here(path):
        return f"{path} is a DuckDB database this process has open"
    if _is_duckdb(path):
        return f"{path} is a DuckDB database"
    if _locked_by_another(path):
        return f"{path} is in use: another process holds a lock on it (a database open there)"
    return None


def not_replaceable(path: str | Path) -> str | None:
    """Why ``path`` must not be replaced by a new file, or ``None`` when it may be.

    An existing path that is not a regular file (a device such as ``/dev/null``, a FIFO, a
    socket, or a symlink to one of those, such as ``/dev/stdout``) is never renamed over: the
    rename would turn ``/dev/null`` into a file, or hang the reader of a FIFO. Nor is a
    database: a DuckDB file (by its header, whatever its name), the ``.wal`` of one, a DuckDB
    file this process has open, or a file another process holds a lock on.

    Examples
    --------
    >>> not_replaceable("/dev/null")
    '/dev/null is a character device, not a regular file'
    >>> not_replaceable("/no/such/file") is None
    True
    >>> import tempfile
    >>> victim = Path(tempfile.mkdtemp()) / "victim.csv"
    >>> _ = victim.write_bytes(bytes(8) + DUCKDB_MAGIC + bytes(4))  # a DuckDB file's header
    >>> not_replaceable(victim)  # doctest: +ELLIPSIS
    '.../victim.csv is a DuckDB database'
    """
    return _special_file(path) or _database(Path(path))


def check_replaceable(path: str | Path) -> Path:
    """Refuse to replace what :func:`not_replaceable` names; return ``path`` as a ``Path``.

    The one check of every output file: :func:`replacing` makes it, and the CLI makes it
    before any work (``check_output``).

    Raises
    ------
    OutputIsDatabaseError
        ``path`` is a database (exit status 2 in the CLI): ``cannot write x.duckdb: x.duckdb is
        a DuckDB database; writing it would destroy the database: name another file``.
    OutputError
        ``path`` is not a regular file: ``...; name a regular file``.

    Examples
    --------
    >>> check_replaceable("/dev/null")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.OutputError: cannot write /dev/null: /dev/null is a character device, ...
    """
    target = Path(path)
    if problem := _special_file(target):
        raise OutputError(f"cannot write {target}: {problem}; name a regular file")
    if problem := _database(target):
        raise OutputIsDatabaseError(
            f"cannot write {target}: {problem}; writing it would destroy the database: name "
            "another file"
        )
    return target


def _umask() -> int:
    """The process's umask, read without changing it where the system says it (Linux)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore at once
    os.umask(mask)
    return mask


def _mode_for(target: Path) -> int:
    """The permission bits ``target`` has now, or a new file's (0666 less the umask)."""
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on a clean exit it replaces ``path`` at once.

    The folder is created when missing. If the block raises, the temporary file is removed
    and ``path`` keeps what it held before. The new file takes the permission bits of the file
    it replaces, or, when there was none, those of a file made by ``open()`` (0666 less the
    umask).

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
    >>> target.chmod(0o640)
    >>> with replacing(target) as tmp:
    ...     _ = tmp.write_text("again")
    >>> oct(target.stat().st_mode & 0o777)
    '0o640'
    """
    target = check_replaceable(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, _mode_for(target))  # after the writer, which may have made the file anew
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


_CAUSES = (
    ("No space left on device", "the disk is full (No space left on device)"),
    ("Disk quota exceeded", "the disk quota is exceeded"),
    ("Read-only file system", "its file system is read-only"),
)


def write_failure(out: str | Path, exc: BaseException) -> OutputError:
    """The one-line error of an output the system refused to write (``OSError`` or DuckDB's).

    DuckDB writes Parquet itself and raises its own ``IOException`` on a full disk; this gives
    it the words of an ``OSError``: the file, the cause, that a file there is unchanged and
    what to do.

    Examples
    --------
    >>> str(write_failure("r.parquet", RuntimeError(
    ...     'IO Error: Could not write file "r.parquet": No space left on device')))
    'cannot write r.parquet: the disk is full (No space left on device); a file that was there is unchanged: free space on its disk (or write to another), then rerun'
    >>> str(write_failure("r.csv", OSError(13, "Permission denied")))
    'cannot write r.csv: Permission denied; a file that was there is unchanged'
    """  # noqa: E501
    text = str(exc)
    for needle, cause in _CAUSES:
        if needle in text:
            advice = (
                "free space on its disk (or write to another), then rerun"
                if "disk" in cause
                else "write to a folder on a writable disk"
            )
            return OutputError(
                f"cannot write {out}: {cause}; a file that was there is unchanged: {advice}"
            )
    if isinstance(exc, OSError) and exc.strerror:
        first = exc.strerror
    else:
        first = text.splitlines()[0] if text else type(exc).__name__
    return OutputError(f"cannot write {out}: {first}; a file that was there is unchanged")
