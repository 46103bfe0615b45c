"""Tests of s3kg_core.config: the defaults and the environment variables that override them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from s3kg_core.config import DEFAULT_DB, cache_dir, default_data_dir, default_db


def test_defaults_without_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    for var in ("S3KG_DB", "S3KG_DATA_DIR", "S3KG_CACHE_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_db() == DEFAULT_DB == Path("data") / "s3kg.duckdb"
    # relative to where the command runs, not to the source tree (a non-editable install)
    assert default_data_dir() == tmp_path.parent / "shared" / "data"
    assert cache_dir() == Path.home() / ".cache" / "s3kg"


def test_environment_overrides_each_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("S3KG_DB", str(tmp_path / "x.duckdb"))
    monkeypatch.setenv("S3KG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    assert default_db() == tmp_path / "x.duckdb"
    assert default_data_dir() == tmp_path / "data"
    assert cache_dir() == tmp_path / "cache"


def test_cli_honours_s3kg_db(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from click.testing import CliRunner

    from s3kg_core.cli import cli

    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("S3KG_DB", str(db))
    result = CliRunner().invoke(cli, ["cus"])
    # the command looked at $S3KG_DB (which does not exist yet) rather than data/s3kg.duckdb
    assert result.exit_code != 0
    assert str(db) in result.output


def test_importing_the_package_loads_no_torch():
    code = "import sys, s3kg_core; from s3kg_core import *; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
