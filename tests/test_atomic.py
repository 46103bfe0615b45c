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
from s3kg_core.atomic import not_replaceable, replacing
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
