"""Tests of s3kg_core.store.connection: every DuckDB connection is offline (issue 44, item 9);
readers and writers attach the file to one instance per process and hold it only while they use it.

DuckDB installs and loads known extensions by itself; a SQLite file given as ``--db`` made it
try to download ``sqlite_scanner``. No connection the project opens may do that.
"""

from __future__ import annotations

import multiprocessing
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from store_helpers import fill_disk

from s3kg_core.cli import cli
from s3kg_core.errors import CorruptDatabaseError, DatabaseError
from s3kg_core.store.connection import (
    OFFLINE_CONFIG,
    attached_read_only,
    open_duckdb,
    opened_for_writing,
)
from s3kg_core.store.schema import SCHEMA_VERSION
from s3kg_core.store.store import Store

PACKAGE = Path(__file__).resolve().parent.parent / "s3kg_core"


def _settings(con) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
    row = con.execute(
        "SELECT current_setting('autoinstall_known_extensions'), "
        "current_setting('autoload_known_extensions')"
    ).fetchone()
    return bool(row[0]), bool(row[1])


def test_a_connection_neither_installs_nor_loads_extensions(tmp_path: Path) -> None:
    assert _settings(open_duckdb()) == (False, False)
    with Store(tmp_path / "s.duckdb").connect() as con:
        assert _settings(con) == (False, False)
    mem = open_duckdb(config={"memory_limit": "256MB"})  # a caller's settings come on top
    assert _settings(mem) == (False, False)
    assert mem.execute("SELECT current_setting('memory_limit')").fetchone()[0].startswith("244")
    assert not any(OFFLINE_CONFIG.values())


def _sqlite_file(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    return path


def test_a_sqlite_file_is_not_a_database_and_nothing_is_downloaded(tmp_path: Path) -> None:
    """Regression: DuckDB tried http://extensions.duckdb.org for sqlite_scanner."""
    path = _sqlite_file(tmp_path / "runs.db")
    store = Store(path, read_only=True)
    with pytest.raises(CorruptDatabaseError, match="is not a DuckDB database file") as info:
        store.connect().__enter__()
    assert "download" not in str(info.value.__cause__).lower()
    result = CliRunner().invoke(cli, ["cus", "--db", str(path)])
    assert result.exit_code != 0
    assert "is not a DuckDB database file" in result.output and "Traceback" not in result.output


def test_no_module_opens_duckdb_but_through_open_duckdb() -> None:
    """One home: a plain ``duckdb.connect(`` elsewhere would autoload extensions again."""
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "connection.py" and re.search(r"duckdb\.connect\(", p.read_text("utf-8"))
    ]
    assert offenders == []


# -- readers attached to one instance per process ------------------------------------------------

_TRY_WRITE = """
import sys, duckdb
try:
    con = duckdb.connect(sys.argv[1])
except duckdb.IOException as exc:
    sys.exit(3 if "lock" in str(exc) else 4)
con.execute("CREATE OR REPLACE TABLE written AS SELECT 1 AS x")
con.close()
"""


def other_process_can_write(path: Path) -> bool:
    """Whether another process may open ``path`` for writing now (it writes a table if so)."""
    done = subprocess.run(
        [sys.executable, "-c", _TRY_WRITE, str(path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode in (0, 3), done.stderr
    return done.returncode == 0


def _table(path: Path, rows: int = 3) -> Path:
    con = open_duckdb(str(path))
    con.execute(f"CREATE TABLE t AS SELECT range AS x FROM range({rows})")
    con.close()
    return path


def test_a_reader_holds_the_file_only_while_it_reads(tmp_path: Path) -> None:
    path = _table(tmp_path / "r.duckdb")
    with attached_read_only(str(path)) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (3,)
        assert not other_process_can_write(path)  # locked while it reads
    assert other_process_can_write(path)  # and free after, for a writer of another process
    with attached_read_only(str(path)) as con:  # attached again, with the other's write
        assert con.execute("SELECT x FROM written").fetchall() == [(1,)]


def test_readers_in_two_threads_share_the_file_until_the_last_one_ends(tmp_path: Path) -> None:
    path = _table(tmp_path / "r.duckdb")
    entered, leave, seen = threading.Event(), threading.Event(), []

    def read() -> None:
        with attached_read_only(str(path)) as con:
            seen.append(con.execute("SELECT sum(x) FROM t").fetchone())
            entered.set()
            leave.wait(30)

    other = threading.Thread(target=read)
    other.start()
    assert entered.wait(30)
    with attached_read_only(str(path)) as con:
        leave.set()
        other.join(30)
        assert seen == [(3,)]
        # the other thread's reader is gone, this one still reads and holds the file
        assert con.execute("SELECT sum(x) FROM t").fetchone() == (3,)
        assert not other_process_can_write(path)
    assert other_process_can_write(path)


def test_a_file_read_here_is_not_opened_for_writing_here_and_keeps_its_lock(
    tmp_path: Path,
) -> None:
    """Regression: DuckDB refuses the second open after opening the file, and closing that
    handle dropped this process's lock (POSIX record locks): another process could then write
    the file while it was read. Both directions are refused before the file is touched."""
    path = _table(tmp_path / "r.duckdb")
    with attached_read_only(str(path)):
        with pytest.raises(DatabaseError, match="is open for reading in this process"):
            opened_for_writing(str(path)).__enter__()
        assert not other_process_can_write(path)
    with opened_for_writing(str(path)):
        with pytest.raises(DatabaseError, match="is open for writing in this process"):
            attached_read_only(str(path)).__enter__()
        assert not other_process_can_write(path)
    assert other_process_can_write(path)


def test_a_reader_sees_what_another_process_left_in_the_write_ahead_log(tmp_path: Path) -> None:
    path = _table(tmp_path / "r.duckdb")
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import os, sys, duckdb\n"
            "con = duckdb.connect(sys.argv[1])\n"
            "con.execute('INSERT INTO t VALUES (41)')\n"
            "os._exit(0)  # no close, no checkpoint: the row is in the WAL only\n",
            str(path),
        ],
        timeout=120,
    )
    assert killed.returncode == 0 and Path(f"{path}.wal").is_file()
    with attached_read_only(str(path)) as con:
        assert con.execute("SELECT max(x) FROM t").fetchone() == (41,)
    assert Path(f"{path}.wal").is_file()  # a reader replays the log, it never writes it


def test_a_store_reads_its_own_schema_while_another_file_is_attached(tmp_path: Path) -> None:
    """Regression: the schema check counted a ``meta`` table of any attached file."""
    store = Store(tmp_path / "s.duckdb")
    with store.connect():
        pass
    plain = _table(tmp_path / "plain.duckdb")
    with Store(store.path, read_only=True).connect():
        with pytest.raises(DatabaseError, match="has schema version 0"):
            Store(plain, read_only=True).connect().__enter__()
        assert Store(store.path, read_only=True).schema_version() == SCHEMA_VERSION


def _read_in_child(path: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    with attached_read_only(path) as con:
        out.put(con.execute("SELECT count(*) FROM t").fetchone())


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform"
)
def test_a_forked_child_reads_through_an_instance_of_its_own(tmp_path: Path) -> None:
    """The parent's instance, copied by the fork, is never used nor closed in the child (closing
    it there waits forever for threads the child does not have)."""
    path = _table(tmp_path / "r.duckdb")
    fork = multiprocessing.get_context("fork")
    for hold in (False, True):
        with attached_read_only(str(path)) as con:
            con.execute("SELECT 1").fetchall()
        held = attached_read_only(str(path))
        if hold:
            held.__enter__()
        try:
            out = fork.Queue()
            child = fork.Process(target=_read_in_child, args=(str(path), out))
            child.start()
            assert out.get(timeout=60) == (3,)
            child.join(60)
            assert child.exitcode == 0
        finally:
            if hold:
                held.__exit__(None, None, None)


def test_a_writer_holds_the_file_only_while_it_writes_and_checkpoints_when_it_ends(
    tmp_path: Path,
) -> None:
    path = tmp_path / "w.duckdb"
    with opened_for_writing(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS x FROM range(5)")
        assert Path(f"{path}.wal").is_file()  # committed to the log ...
        assert not other_process_can_write(path)  # ... and the file is this process's
    assert not Path(f"{path}.wal").exists()  # the checkpoint when the last writer ends
    assert other_process_can_write(path)
    with attached_read_only(str(path)) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (5,)
        assert con.execute("SELECT x FROM written").fetchall() == [(1,)]


def test_writers_open_no_database_instance_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why writers attach: a DuckDB instance costs about 15 ms to create, an attach about 1."""
    path = tmp_path / "w.duckdb"
    with opened_for_writing(str(path)) as con:  # the process's instance exists from here on
        con.execute("CREATE TABLE t (x INTEGER)")
    made = []
    real = duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: made.append(a) or real(*a, **k))
    for i in range(3):
        with opened_for_writing(str(path)) as con:
            con.execute("INSERT INTO t VALUES (?)", [i])
    with Store(tmp_path / "s.duckdb").transaction() as con:
        Store.ensure_dataset(con, "toy")
    assert made == []
    with attached_read_only(str(path)) as con:
        assert con.execute("SELECT list(x ORDER BY x) FROM t").fetchone() == ([0, 1, 2],)


def test_writers_in_two_threads_share_the_file_until_the_last_one_ends(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with opened_for_writing(str(path)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    entered, leave = threading.Event(), threading.Event()

    def write() -> None:
        with opened_for_writing(str(path)) as con:
            con.execute("INSERT INTO t VALUES (1)")
            entered.set()
            leave.wait(30)

    other = threading.Thread(target=write)
    other.start()
    assert entered.wait(30)
    with opened_for_writing(str(path)) as con:
        con.execute("INSERT INTO t VALUES (2)")
        leave.set()
        other.join(30)
        assert con.execute("SELECT sum(x) FROM t").fetchone() == (3,)
        assert not other_process_can_write(path)
    assert other_process_can_write(path)


def test_a_checkpoint_that_fails_when_the_writer_ends_loses_and_raises_nothing(
    small_disk: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Regression: detaching reports a failed checkpoint, which closing an instance ignored;
    raised, it told a user a committed write had failed. The write is in the log: kept."""
    path = small_disk / "w.duckdb"
    with opened_for_writing(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT range AS x FROM range(1000)")
        fill_disk(small_disk)  # committed to the log; no room left for the checkpoint
    assert "the checkpoint of" in caplog.text and "write-ahead log" in caplog.text
    assert Path(f"{path}.wal").is_file()
    (small_disk / "filler").unlink()
    with attached_read_only(str(path)) as con:
        assert con.execute("SELECT count(*) FROM t").fetchone() == (1000,)
    with opened_for_writing(str(path)) as con:  # with room again, the next writer checkpoints
        con.execute("INSERT INTO t VALUES (1000)")
    assert not Path(f"{path}.wal").exists()
    assert other_process_can_write(path)
