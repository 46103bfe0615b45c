"""Tests of s3kg_core.config: the defaults and the environment variables that override them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from s3kg_core.config import (
    DEFAULT_DB,
    PROCESS_ENV,
    cache_dir,
    default_data_dir,
    default_db,
    set_process_env,
)


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


def test_set_process_env_sets_what_is_unset_and_keeps_a_users_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in PROCESS_ENV:
        monkeypatch.delenv(name, raising=False)
    set_process_env()
    assert {name: os.environ[name] for name in PROCESS_ENV} == PROCESS_ENV
    monkeypatch.setenv("POT_BACKEND_DISABLE_PYTORCH", "mine")
    set_process_env()
    assert os.environ["POT_BACKEND_DISABLE_PYTORCH"] == "mine"


_FIRST_TRANSPORT = """
import sys
import numpy as np
if sys.argv[1] == "cli":
    from s3kg_core.cli import main
    try:
        main(["--version"])
    except SystemExit:
        pass
from s3kg_core.scoring.wwl import transport
transport(np.eye(2), np.eye(2))
print("torch" in sys.modules)
"""


@pytest.mark.parametrize(("start", "torch"), [("cli", "False"), ("library", "True")])
def test_a_cli_process_transports_without_torch_a_library_user_keeps_pot_as_it_is(
    start: str, torch: str
) -> None:
    """POT imports torch (1.4 CPU-s) to offer a backend s3kg never gives it; the CLI's process
    turns it off (so does app.py, tests/test_dashboard_pages.py), a program importing the
    library keeps POT's torch backend."""
    env = {k: v for k, v in os.environ.items() if k not in PROCESS_ENV}
    out = subprocess.run(
        [sys.executable, "-c", _FIRST_TRANSPORT, start],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == torch
