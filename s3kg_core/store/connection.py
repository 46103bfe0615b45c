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


_HOST_LOCK = threading.Lock()
_host: tuple[int, duckdb.DuckDBPyConnection] | None = None  # (process id, instance)
_attached: dict[str, list[Any]] = {}  # real path -> [alias, readers]
_writing: dict[str, int] = {}  # real path -> writers' connections open in this process
_aliases = itertools.count(1)
_inherited: list[duckdb.DuckDBPyConnection] = []  # a forked parent's instance, never closed


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
    real = os.path.realpath(database)
    with _HOST_LOCK:
        if real in _attached and (_host is None or _host[0] == os.getpid()):
            raise _in_use_error(database, "reading")
        _writing[real] = _writing.get(real, 0) + 1
    try:
        con = open_duckdb(database)
        try:
            yield con
        finally:
            con.close()  # a checkpoint may write here too
    finally:
        with _HOST_LOCK:
            _writing[real] -= 1
            if not _writing[real]:
                del _writing[real]


def _host_connection() -> duckdb.DuckDBPyConnection:
    """The in-memory instance of this process (a new one after a fork); under ``_HOST_LOCK``."""
    global _host
    if _host is None or _host[0] != os.getpid():
        if _host is not None:
            # a fork's copy of the parent's instance: closing it would wait forever for its
            # threads, which the child does not have; it is kept, unused
            _inherited.append(_host[1])
        _attached.clear()  # nor are the parent's attachments the child's
        # spilling (a large sort) goes to the temporary folder, not to the working directory
        spill = os.path.join(tempfile.gettempdir(), "s3kg-duckdb-spill")
        _host = (os.getpid(), open_duckdb(config={"temp_directory": spill}))
    return _host[1]


@contextmanager
def attached_read_only(database: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the DuckDB file ``database``, without a new database instance.

    The file is attached (``READ_ONLY``) to this process's one in-memory instance and the
    connection's default catalog is set to it (``USE``), so unqualified table names are the
    file's. Readers of one file in several threads share the attachment, each with its own
    connection (a cursor); the file is detached, and its lock released, when the last one ends.
    DuckDB's errors (a file another process locks, one that is not a DuckDB database) are raised
    as they are, from the attach.

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
    real = os.path.realpath(database)
    with _HOST_LOCK:
        if real in _writing:
            raise _in_use_error(database, "writing")
        host = _host_connection()
        entry = _attached.get(real)
        if entry is None:
            alias = f"s3kg_file_{next(_aliases)}"
            quoted = database.replace("'", "''")  # as given: DuckDB's messages name it so
            host.execute(f"ATTACH '{quoted}' AS {alias} (READ_ONLY)")
            entry = _attached[real] = [alias, 0]
        entry[1] += 1
    try:
        with _HOST_LOCK:
            con = host.cursor()
        try:
            con.execute(f"USE {entry[0]}")
            yield con
        finally:
            con.close()
    finally:
        with _HOST_LOCK:
            _release(host, real, entry)


def _release(host: duckdb.DuckDBPyConnection, real: str, entry: list[Any]) -> None:
    """One reader of the file fewer; the last one detaches it. Call under ``_HOST_LOCK``."""
    entry[1] -= 1
    if entry[1] == 0 and _attached.get(real) is entry:
        del _attached[real]
        host.execute(f"DETACH {entry[0]}")
