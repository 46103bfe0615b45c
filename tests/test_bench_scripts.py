"""Every bench script imports and answers ``--help`` without touching data or models.

A library change that breaks a benchmark's imports or its command line fails here, in CI,
instead of on the next person who runs it. Each script runs in this process (``main`` with
``--help``), with ``$S3KG_DATA_DIR`` an empty folder: help needs no data.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    ".".join(path.relative_to(REPO).with_suffix("").parts)
    for folder in ("speed", "experiments")
    for path in (REPO / "bench" / folder).glob("*.py")
    if path.name != "__init__.py"
)
# bench-only code that scripts import, not a script itself
MODULES = {"bench.speed.reference_snea"}


class _Parsed(Exception):
    """Raised in place of running a script once its arguments are parsed."""

    def __init__(self, namespace: argparse.Namespace) -> None:
        super().__init__("parsed")
        self.namespace = namespace


def _run_main(module: Any, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """``module.main`` with ``argv`` (passed, or as ``sys.argv`` for a ``main()`` without one)."""
    monkeypatch.setattr(sys, "argv", [module.__name__, *argv])
    if inspect.signature(module.main).parameters:
        module.main(argv)
    else:
        module.main()


def test_the_scripts_are_found():
    assert len(SCRIPTS) >= 30 and "bench.speed.bench_scoring" in SCRIPTS
    assert "bench.experiments.bench_extraction" in SCRIPTS


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_script_imports_and_answers_help(name, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("S3KG_DATA_DIR", str(tmp_path / "no-data"))
    module = importlib.import_module(name)
    if name in MODULES:
        assert not hasattr(module, "main")
        return
    with pytest.raises(SystemExit) as stop:
        _run_main(module, ["--help"], monkeypatch)
    assert stop.value.code in (0, None)
    out = capsys.readouterr().out
    assert out.startswith("usage:") and "--help" in out
    assert not (tmp_path / "no-data").exists()


def _defaults(module: Any, monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace | None:
    """The namespace a script parses from no arguments (``None``: it needs some)."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        raise _Parsed(original(self, *args, **kwargs))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    try:
        _run_main(module, [], monkeypatch)
    except _Parsed as parsed:
        return parsed.namespace
    except SystemExit:
        return None
    raise AssertionError(f"{module.__name__} ran without parsing its arguments")


@pytest.mark.parametrize("name", sorted(set(SCRIPTS) - MODULES))
def test_the_data_folder_is_the_librarys(name, tmp_path, monkeypatch):
    # bench_scale.py and bench_limits.py defaulted to ../shared/data beside the checkout and
    # ignored $S3KG_DATA_DIR; every --data-dir now defaults to the library's folder.
    data = tmp_path / "data"
    monkeypatch.setenv("S3KG_DATA_DIR", str(data))
    namespace = _defaults(importlib.import_module(name), monkeypatch)
    if namespace is None or not hasattr(namespace, "data_dir"):
        return
    assert namespace.data_dir in (None, data)  # None: the library's loader takes its default


def test_a_script_runs_as_a_module_from_the_repository_root(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "bench.experiments.summarise_pairs", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage:") and "--evidence" in result.stdout


def test_no_script_edits_sys_path():
    offenders = [
        str(path.relative_to(REPO))
        for path in (REPO / "bench").rglob("*.py")
        if "sys.path" in path.read_text(encoding="utf-8").replace("``sys.path``", "")
    ]
    assert not offenders
