"""The one way the project opens DuckDB: offline, extensions never installed or loaded.

DuckDB installs and loads a known extension by itself when a file or a function needs one (a
SQLite file given as a database asks for ``sqlite_scanner``), which means a download from the
internet. Every connection the project opens goes through :func:`open_duckdb` (files are
attached to an instance it made), which turns both off, so nothing reaches the network and such
a file fails at once with DuckDB's own message.

Opening a file without a new database instance: a DuckDB instance costs about 15 ms to create
(it registers every built-in function) and a few more for its first catalog query, whatever the
file, so a process that opens the file for each short read or write (the dashboard and the
pipeline, to leave it free for other processes in between) spent most of its time there.
:func:`attached_read_only` and :func:`opened_for_writing` attach the file to one in-memory
instance per process and detach it when the last user is done (about 3 ms for both): the file is
locked exactly while it is used, as with an instance of its own, and a writer's detach writes the
checkpoint its instance's close wrote.

A process never reads a file through a read-only attachment while it writes it, or the other way
round: DuckDB would refuse the second attach after opening the file, and closing that file
handle would drop the process's lock on it (POSIX record locks), leaving the file open to other
processes' writes. Both functions refuse such an open before touching the file.
"""

from __future__ import annotations

import itertools
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import duckdb

from ..errors import DatabaseError

__all__ = [
    "OFFLINE_CONFIG",
    "attached_read_only",
    "is_attached",
    "open_duckdb",
    "opened_for_writing",
]

OFFLINE_CONFIG: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
"""DuckDB settings of every connection: no extension is installed or loaded behind our back."""


def open_duckdb(
    database: str = ":memory:",
    *,
    read_only: bool = False,
    config: Mapping[str, Any] | None = None,
) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with :data:`OFFLINE_CONFIG` (and ``config`` on top of it).

    Examples
    --------
    >>> con = open_duckdb()
    >>> con.execute("SELECT current_setting('autoload_known_extensions')").fetchone()
    (False,)
    >>> con.close()
    """
    return duckdb.connect(
        database, read_only=read_only, config={**OFFLINE_CONFIG, **(config or {})}
    )


@dataclass
class _Attachment:
    """A file attached to the process's instance: its alias, mode and open connections."""

    alias: str
    read_only: bool
    users: int = 0


class _ProcessState:
    """What this process has open, and the lock over all of it.

    The in-memory instance files are attached to (made on first use) and the files attached
    (real path -> :class:`_Attachment`).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.host: duckdb.DuckDBPyConnection | None = None
        self.attached: dict[str, _Attachment] = {}

    def instance(self) -> duckdb.DuckDBPyConnection:
        """The in-memory instance, made on first use; call under :attr:`lock`."""
        if self.host is None:
            # spilling (a large sort, an import) goes to the temporary folder, not the working
            # directory; a folder of this process's own (DuckDB removes it when it ends)
            spill = os.path.join(tempfile.gettempdir(), f"s3kg-duckdb-spill-{os.getpid()}")
            self.host = open_duckdb(config={"temp_directory": spill})
        return self.host


_state = _ProcessState()
_inherited: list[_ProcessState] = []  # a forked parent's state: never used nor closed
_aliases = itertools.count(1)
_log = logging.getLogger(__name__)


def _forget_the_parent() -> None:
    """In a forked child, nothing the parent had open is the child's: a state of its own.

    The parent's instance is kept, unused: closing the fork's copy would wait forever for its
    threads, which the child does not have; and its lock may have been held at the fork.
    """
    global _state
    _inherited.append(_state)
    _state = _ProcessState()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_forget_the_parent)


def is_attached(path: str | os.PathLike[str]) -> bool:
    """Whether this process has the DuckDB file ``path`` attached (open), for reading or writing.

    An output check asks it before opening the file to read its header: closing any handle of
    a file drops this process's POSIX locks on it, DuckDB's included.

    Examples
    --------
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "a.duckdb")
    >>> with opened_for_writing(path):
    ...     is_attached(path)
    True
    >>> is_attached(path)
    False
    """
    real, state = os.path.realpath(path), _state
    with state.lock:
        return real in state.attached


def _in_use_error(database: str, other: str) -> DatabaseError:
    return DatabaseError(
        f"database {database} is open for {other} in this process; open it again when that "
        "connection is closed"
    )


@contextmanager
def opened_for_writing(database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to the DuckDB file ``database``, without a new database instance.

    The file is attached to this process's one in-memory instance (:func:`attached_read_only`
    says how); writers of one file in several threads share the attachment, each with its own
    connection, as connections to one file shared its instance before. When the last one ends
    the file is detached, which writes a checkpoint as closing its own instance did, and its
    lock is released. A detach whose checkpoint fails (a full disk) still detaches the file
    (DuckDB's message says so): what was committed is in the write-ahead log, which the next
    open replays, so the failure is logged, not raised (closing an instance ignored it).

    Raises
    ------
    DatabaseError
        If this process reads the file through :func:`attached_read_only` meanwhile.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.duckdb")
    >>> with opened_for_writing(path) as con:
    ...     con.execute("CREATE TABLE t AS SELECT 1 AS x").fetchall()
    [(1,)]
    """
    with _attached(database, read_only=False) as con:
        yield con


@contextmanager
def attached_read_only(database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the DuckDB file ``database``, without a new database instance.

    The file is attached (``READ_ONLY``) to this process's one in-memory instance and the
    connection's default catalog is set to it (``USE``), so unqualified table names are the
    file's. Readers of one file in several threads share the attachment, each with its own
    connection (a cursor); the file is detached, and its lock released, when the last one ends.
    DuckDB's errors (a file another process locks, one that is not a DuckDB database) are raised
    as they are, from the attach. A forked child attaches to an instance of its own.

    Raises
    ------
    DatabaseError
        If this process has the file open for writing (:func:`opened_for_writing`).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "r.duckdb")
    >>> with opened_for_writing(path) as con:
    ...     _ = con.execute("CREATE TABLE t AS SELECT 42 AS x")
    >>> with attached_read_only(path) as con:
    ...     con.execute("SELECT x FROM t").fetchall()
    [(42,)]
    """
    with _attached(database, read_only=True) as con:
        yield con


@contextmanager
def _attached(database: str, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor on the file attached to this process's instance (``read_only`` or not)."""
    real, state = os.path.realpath(database), _state
    with state.lock:
        entry = state.attached.get(real)
        if entry is not None and entry.read_only != read_only:
            raise _in_use_error(database, "reading" if entry.read_only else "writing")
        host = state.instance()
        if entry is None:
            alias = f"s3kg_file_{next(_aliases)}"
            quoted = database.replace("'", "''")  # as given: DuckDB's messages name it so
            host.execute(f"ATTACH '{quoted}' AS {alias}{' (READ_ONLY)' if read_only else ''}")
            entry = state.attached[real] = _Attachment(alias, read_only)
        entry.users += 1
    try:
        with state.lock:
            con = host.cursor()
        try:
            con.execute(f"USE {entry.alias}")
            yield con
        finally:
            con.close()
    finally:
        with state.lock:
            entry.users -= 1  # one user fewer; the last one detaches the file
            if entry.users == 0 and state.attached.get(real) is entry:
                del state.attached[real]
                _detach(host, entry.alias, database)


def _detach(host: duckdb.DuckDBPyConnection, alias: str, database: str) -> None:
    """Detach ``alias``, which writes a writer's checkpoint; a failed checkpoint is logged.

    Closing an instance ignored a failed checkpoint, and so does this: what was committed is in
    the write-ahead log, which the next open replays, so the write was not lost. DuckDB detaches
    the file even then; if it did not, it is asked once more.
    """
    try:
        host.execute(f"DETACH {alias}")
    except duckdb.Error as exc:
        _log.warning(
            "the checkpoint of %s failed when it was closed (%s); what was committed is in its "
            "write-ahead log and is read back at the next open",
            database,
            str(exc).replace("\n", " "),
        )
        with suppress(duckdb.Error):
            host.execute(f"DETACH DATABASE IF EXISTS {alias}")
