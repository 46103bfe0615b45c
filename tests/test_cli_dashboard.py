"""``s3kg dashboard``: its options, its errors; the wheel test starts it for real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from s3kg_core.cli import cli


def test_help_names_db_port_and_demo() -> None:
    result = CliRunner().invoke(cli, ["dashboard", "--help"])
    assert result.exit_code == 0
    for option in ("--db", "--port", "--demo", "127.0.0.1"):
        assert option in result.output


def test_db_and_demo_together_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["dashboard", "--demo", "--db", str(tmp_path / "x.duckdb")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["Error: give --db or --demo, not both"]


def test_a_bad_port_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["dashboard", "--port", "70000"])
    assert result.exit_code == 2 and "70000" in result.output


def test_it_becomes_streamlit_with_the_database_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process is replaced by Streamlit (here the replacement is recorded, not made)."""
    calls: list[tuple[str, list[str], dict[str, str]]] = []
    monkeypatch.setattr(os, "execve", lambda path, argv, env: calls.append((path, argv, env)))
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    result = CliRunner().invoke(cli, ["dashboard", "--demo", "--port", "8777"])
    assert result.exit_code == 0, result.output
    ((path, argv, env),) = calls
    assert path == argv[0]
    assert argv[1:4] == ["-m", "streamlit", "run"] and "--server.port=8777" in argv
    assert env["S3KG_DB"] == str(tmp_path / "cache" / "demo.duckdb")
    assert (tmp_path / "cache").is_dir()  # the demo's folder exists for the build
    assert "http://127.0.0.1:8777" in result.output


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (
            ["--db", "{ro}/sub/x.duckdb"],
            {},
            "Error: cannot make the database folder {ro}/sub: Read-only file system; name a "
            "database in a folder you can write (--db or $S3KG_DB)",
        ),
        (
            ["--db", "{ro}/x.duckdb"],
            {},
            "Error: cannot build the database {ro}/x.duckdb on the first start: its folder {ro} "
            "is not writable; name a database in a folder you can write (--db or $S3KG_DB)",
        ),
        (
            ["--demo"],
            {"S3KG_CACHE_DIR": "{ro}/cache"},
            "Error: cannot make the database folder {ro}/cache: Read-only file system; name a "
            "database in a folder you can write ($S3KG_CACHE_DIR)",
        ),
    ],
    ids=["missing-folder", "read-only-folder", "demo-cache"],
)
def test_a_first_start_on_a_read_only_disk_is_one_line(
    read_only_disk, monkeypatch, args, env, expected
) -> None:
    """Regression (issue 44, item 5): ``OSError: [Errno 30]`` with a traceback."""
    calls: list[object] = []
    monkeypatch.setattr(os, "execve", lambda *a: calls.append(a))
    for name, value in env.items():
        monkeypatch.setenv(name, value.format(ro=read_only_disk))
    argv = [a.format(ro=read_only_disk) for a in args]
    result = CliRunner().invoke(cli, ["dashboard", *argv, "--port", "8777"])
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [expected.format(ro=read_only_disk)]
    assert not calls  # Streamlit never started
