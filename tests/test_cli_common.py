"""Tests of s3kg_core.cli._common: the output checks and atomic writes every command shares."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from s3kg_core.cli import _common
from s3kg_core.cli._common import check_writable, write_csv_atomic, write_json_atomic
from s3kg_core.errors import OutputError, S3KGError

# -- check_writable ------------------------------------------------------------------------------


def test_check_writable_accepts_new_and_existing_files_and_creates_nothing(tmp_path):
    (tmp_path / "old.csv").write_text("x", encoding="utf-8")
    for path in (tmp_path / "new.csv", tmp_path / "old.csv", tmp_path / "a" / "b" / "c.csv"):
        assert check_writable(path) == path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]  # no probe, no folder a
    assert (tmp_path / "old.csv").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("below", ["out.csv", "deeper/out.csv"])
def test_check_writable_refuses_a_path_below_a_file(tmp_path, below):
    # Regression (issue 17, D10): `-o some.csv/out.csv` ended in a FileExistsError traceback,
    # after all the work was done.
    (tmp_path / "some.csv").write_text("x", encoding="utf-8")
    path = tmp_path / "some.csv" / below
    with pytest.raises(OutputError) as info:
        check_writable(path)
    assert (
        str(info.value) == f"cannot write {path}: {tmp_path / 'some.csv'} is a file, not a folder"
    )
    assert isinstance(info.value, S3KGError) and isinstance(info.value, OSError)


def test_check_writable_refuses_a_folder(tmp_path):
    with pytest.raises(OutputError, match="is a folder; name a file in it"):
        check_writable(tmp_path)


def test_check_writable_reports_a_folder_it_cannot_write_in(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_common.tempfile, "mkstemp", refuse)
    with pytest.raises(OutputError, match=r"cannot write .*out\.csv: Permission denied"):
        check_writable(tmp_path / "out.csv")


# -- write_atomic: a failed write keeps the output -------------------------------------------------


def _disk_full(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_a_failed_write_saves_the_output_elsewhere_and_says_where(tmp_path, monkeypatch):
    # Regression (issue 17, D10): an error writing the output lost the finished work.
    rescue = tmp_path / "tmp"
    rescue.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(rescue))
    out = tmp_path / "out" / "scores.csv"
    real_replace = os.replace
    monkeypatch.setattr(
        _common.os, "replace", lambda a, b: _disk_full() if Path(b) == out else real_replace(a, b)
    )
    with pytest.raises(OutputError) as info:
        write_csv_atomic(out, ["id", "s3kg"], iter([["1", "0.5"], ["2", "1.0"]]))
    (saved,) = rescue.iterdir()
    assert str(info.value) == (
        f"cannot write {out}: No space left on device; the output is saved in {saved}"
    )
    assert saved.name.startswith("s3kg-scores-") and saved.suffix == ".csv"
    assert saved.read_bytes() == b"id,s3kg\r\n1,0.5\r\n2,1.0\r\n"  # as csv writes it
    assert not out.exists() and list(out.parent.iterdir()) == []  # no temporary left behind


def test_a_write_that_cannot_be_saved_anywhere_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
    monkeypatch.setattr(_common.os, "replace", _disk_full)
    with pytest.raises(OutputError, match="No space left on device; it could not be saved"):
        write_json_atomic(tmp_path / "t.json", {"a": 1})


def test_write_json_atomic_writes_indented_json(tmp_path):
    out = tmp_path / "new" / "t.json"
    write_json_atomic(out, [{"a": 1}])
    assert json.loads(out.read_text(encoding="utf-8")) == [{"a": 1}]
    assert out.read_text(encoding="utf-8").endswith("}\n]\n")


def test_mode_help_states_the_text_weight_in_use():
    """Issue 19: the --mode help quotes text mode's weight; it must follow the constant."""
    from click.testing import CliRunner

    from s3kg_core.cli import cli
    from s3kg_core.scoring.s3kg import TEXT_WEIGHT

    out = CliRunner().invoke(cli, ["score", "--help"], terminal_width=1000).output
    assert f"(weight {TEXT_WEIGHT:g})" in " ".join(out.split())
