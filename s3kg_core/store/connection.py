"""The one way the project opens DuckDB: offline, extensions never installed or loaded.

DuckDB installs and loads a known extension by itself when a file or a function needs one (a
SQLite file given as a database asks for ``sqlite_scanner``), which means a download from the
internet. Every connection the project opens goes through :func:`open_duckdb` (or
:func:`attached_read_only`), which turns both off, so nothing reaches the network and such a file
fails at once with DuckDB's own message.

Reading a file without a new database instance: a DuckDB instance costs about 15 ms to create
(it registers every built-in function) and a few more for its first catalog query, whatever the
file, so a reader that opens the file for each short read (the dashboard, to leave it free for
writers in between) spent most of its time there. :func:`attached_read_only` attaches the file
read-only to one in-memory instance per process and detaches it when the last reader is done
(about 3 ms for both): the file is locked exactly while it is read, as with its own instance.

A process never reads a file through the attachment while it writes it through an instance of
its own (:func:`opened_for_writing`), or the other way round: DuckDB would refuse the second
after opening the file, and closing that file handle would drop the process's lock on it (POSIX
record locks), leaving the file open to other processes' writes. Both functions refuse such an
open before touching the file.
"""

from __future__ import annotations

import itertools
import os
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import duckdb

from ..errors import DatabaseError

__all__ = ["OFFLINE_CONFIG", "attached_read_only", "open_duckdb", "opened_for_writing"]

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


class _ProcessState:
    """What this process has open, and the lock over all of it.

    The in-memory instance readers attach files to (made on first use), the files attached
    (real path -> ``[alias, readers]``) and the files open for writing (real path -> connections).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.host: duckdb.DuckDBPyConnection | None = None
        self.attached: dict[str, list[Any]] = {}
        self.writing: dict[str, int] = {}

    def instance(self) -> duckdb.DuckDBPyConnection:
        """The in-memory instance, made on first use; call under :attr:`lock`."""
        if self.host is None:
            # spilling (a large sort) goes to the temporary folder, not the working directory
            spill = os.path.join(tempfile.gettempdir(), "s3kg-duckdb-spill")
            self.host = open_duckdb(config={"temp_directory": spill})
        return self.host


_state = _ProcessState()
_inherited: list[_ProcessState] = []  # a forked parent's state: never used nor closed
_aliases = itertools.count(1)


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


def _in_use_error(database: str, other: str) -> DatabaseError:
    return DatabaseError(
        f"database {database} is open for {other} in this process; open it again when that "
        "connection is closed"
    )


@contextmanager
def opened_for_writing(database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to the file ``database`` (:func:`open_duckdb`), closed after use.

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
    real, state = os.path.realpath(database), _state
    with state.lock:
        if real in state.attached:
            raise _in_use_error(database, "reading")
        state.writing[real] = state.writing.get(real, 0) + 1
    try:
        con = open_duckdb(database)
        try:
            yield con
        finally:
            con.close()  # a checkpoint may write here too
    finally:
        with state.lock:
            state.writing[real] -= 1
            if not state.writing[real]:
                del state.writing[real]


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
    >>> con = open_duckdb(path)
    >>> _ = con.execute("CREATE TABLE t AS SELECT 42 AS x")
    >>> con.close()
    >>> with attached_read_only(path) as con:
    ...     con.execute("SELECT x FROM t").fetchall()
    [(42,)]
    """
    real, state = os.path.realpath(database), _state
    with state.lock:
        if real in state.writing:
            raise _in_use_error(database, "writing")
        host = state.instance()
        entry = state.attached.get(real)
        if entry is None:
            alias = f"s3kg_file_{next(_aliases)}"
            quoted = database.replace("'", "''")  # as given: DuckDB's messages name it so
            host.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
            entry = state.attached[real] = [alias, 0]
        entry[1] += 1
    try:
        with state.lock:
            con = host.cursor()
        try:
            con.execute(f"USE {entry[0]}")
            yield con
        finally:
            con.close()
    finally:
        with state.lock:
            entry[1] -= 1  # one reader fewer; the last one detaches the file
            if entry[1] == 0 and state.attached.get(real) is entry:
                del state.attached[real]
                host.execute(f"DETACH {entry[0]}")
