"""Tests of s3kg_core.atomic: a file is replaced whole or left as it was."""

from __future__ import annotations

import doctest
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import s3kg_core.atomic as atomic_module
from s3kg_core.atomic import check_replaceable, not_replaceable, replacing
from s3kg_core.errors import OutputError


def test_the_module_doctests_pass() -> None:
    result = doctest.testmod(atomic_module)
    assert result.failed == 0 and result.attempted > 0


def test_a_new_file_and_its_folder_are_made(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.bin"
    with replacing(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".out.bin.")
        tmp.write_bytes(b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    assert [p.name for p in target.parent.iterdir()] == ["out.bin"]


def test_an_error_leaves_no_file_where_there_was_none(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with pytest.raises(KeyboardInterrupt), replacing(target) as tmp:
        tmp.write_text("half")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_killed_writer_leaves_the_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("previous")
    script = (
        "import os, signal, sys\n"
        "from s3kg_core.atomic import replacing\n"
        f"with replacing({str(target)!r}) as tmp:\n"
        "    tmp.write_text('half')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    done = subprocess.run([sys.executable, "-c", script], env=env, check=False)
    assert done.returncode == -signal.SIGKILL
    assert target.read_text() == "previous"  # the kill left a temporary, never half a target


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_respects_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    """Regression (issue 28, item 10): every output was created 0600 whatever the umask."""
    before = os.umask(umask)
    try:
        with replacing(tmp_path / "out.csv") as tmp:
            tmp.write_text("x")
        assert atomic_module._umask() == umask
    finally:
        os.umask(before)
    assert (tmp_path / "out.csv").stat().st_mode & 0o7777 == mode


def test_a_replaced_file_keeps_its_mode(tmp_path: Path) -> None:
    """Regression (issue 28, item 10): an existing 0644 file became 0600 when written again."""
    target = tmp_path / "out.csv"
    for mode in (0o644, 0o640, 0o755):
        target.write_text("old")
        target.chmod(mode)
        with replacing(target) as tmp:
            tmp.unlink()  # a writer that makes its file anew (as DuckDB's COPY may)
            tmp.write_text("new")
        assert target.read_text() == "new"
        assert target.stat().st_mode & 0o7777 == mode


# -- what is not a regular file is never renamed over (issue 44, item 3) ---------------------------


def test_a_fifo_is_refused_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OutputError, match=r"is a FIFO \(named pipe\), not a regular file"):
        replacing(fifo).__enter__()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]  # no temporary file left


def test_a_symlink_to_a_device_is_refused_and_stays_a_symlink(tmp_path):
    """Regression: ``--out /dev/stdout`` replaced the symlink with a file (and printed nothing)."""
    link = tmp_path / "stdout"
    link.symlink_to("/dev/null")
    with pytest.raises(OutputError, match="is a character device"):
        replacing(link).__enter__()
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_regular_files_folders_to_be_and_nothing_at_all_may_be_replaced(tmp_path):
    (tmp_path / "f.txt").write_text("x")
    assert not_replaceable(tmp_path / "f.txt") is None
    assert not_replaceable(tmp_path / "new.txt") is None
    assert not_replaceable("/dev/null") == "/dev/null is a character device, not a regular file"


# -- a database is never replaced, whatever its name (issue 59, item 1) ---------------------------


def _duckdb_file(path: Path) -> bytes:
    """A DuckDB database with a table of two rows at ``path``; its bytes."""
    import duckdb

    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE answers AS SELECT * FROM range(2) t(x)")
    con.close()
    return path.read_bytes()


@pytest.mark.parametrize("name", ["victim.duckdb", "victim.csv", "victim"])
def test_a_duckdb_database_is_refused_by_its_header_whatever_its_name(tmp_path, name):
    """Regression: ``pairs score ... -o victim.duckdb`` replaced a database with a CSV."""
    from s3kg_core.errors import OutputIsDatabaseError

    target = tmp_path / name
    before = _duckdb_file(target)
    with pytest.raises(OutputIsDatabaseError, match=f"{name} is a DuckDB database; writing it"):
        replacing(target).__enter__()
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary file left


def test_the_wal_of_a_database_is_refused_whether_it_exists_or_not(tmp_path):
    from s3kg_core.errors import OutputIsDatabaseError

    _duckdb_file(tmp_path / "runs.duckdb")
    for name in ("runs.duckdb.wal", "runs.duckdb.WAL"):
        with pytest.raises(OutputIsDatabaseError, match="write-ahead log of the DuckDB database"):
            check_replaceable(tmp_path / name)
    (tmp_path / "notes.wal").write_text("x")  # a .wal beside no database is a file like others
    assert check_replaceable(tmp_path / "notes.wal") == tmp_path / "notes.wal"


def test_a_file_another_process_locks_is_refused_and_keeps_its_bytes(tmp_path):
    from s3kg_core.errors import OutputIsDatabaseError

    target = tmp_path / "in_use.db"
    target.write_bytes(b"SQLite format 3\x00")
    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import fcntl, os, sys\n"
            f"fd = os.open({str(target)!r}, os.O_RDONLY)\n"
            "fcntl.lockf(fd, fcntl.LOCK_SH)\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n"
        )],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        with pytest.raises(OutputIsDatabaseError, match="another process holds a lock on it"):
            check_replaceable(target)
    finally:
        holder.communicate("", timeout=30)  # its stdin closes: it ends, and its lock with it
    assert target.read_bytes() == b"SQLite format 3\x00"
    assert check_replaceable(target) == target  # no lock now: an ordinary file


def test_a_database_this_process_has_open_is_refused_without_dropping_its_lock(tmp_path):
    """Reading the header of a file this process has open would close a handle of it, which
    drops the process's POSIX locks (DuckDB's): the check asks the connection module first."""
    from s3kg_core.errors import OutputIsDatabaseError
    from s3kg_core.store.connection import opened_for_writing

    path = tmp_path / "open.duckdb"
    with opened_for_writing(str(path)) as con:
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        with pytest.raises(OutputIsDatabaseError, match="a DuckDB database this process has open"):
            check_replaceable(path)
        other = subprocess.run(
            [sys.executable, "-c", f"import duckdb; duckdb.connect({str(path)!r})"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert other.returncode != 0 and "lock" in other.stderr.lower()  # still locked
