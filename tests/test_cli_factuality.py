"""Tests of s3kg_core.cli.factuality: the factuality commands end to end, errors, help."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from factuality_helpers import toy_kg_csv

from s3kg_core.cli import cli
from s3kg_core.factuality.results import load_evaluations

REQUIRED = {
    "n_test",
    "judge_accuracy",
    "majority_accuracy",
    "logreg_accuracy",
    "correctness",
    "truthfulness",
    "informativeness",
    "layer",
}


def _run(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_pipeline_end_to_end(tiny_model: Path, tmp_path: Path) -> None:
    kg = toy_kg_csv(tmp_path)
    statements = tmp_path / "s.parquet"
    out = _run(
        [
            "factuality",
            "build",
            "--kg",
            str(kg),
            "--negatives-per-positive",
            "2",
            "--seed",
            "1",
            "--out",
            str(statements),
        ]
    )
    assert "12 positives" in out
    n = int(re.search(r"(\d+) statements: 12 positives", out).group(1))  # type: ignore[union-attr]
    labelled = tmp_path / "l.parquet"
    out = _run(
        ["factuality", "label", str(statements), "--local", str(tiny_model), "--out", str(labelled)]
    )
    assert f"labelled {n} statements" in out
    hidden = tmp_path / "h.parquet"
    _run(["factuality", "hidden", str(labelled), "--model", str(tiny_model), "--out", str(hidden)])
    judge = tmp_path / "judge"
    out = _run(
        [
            "factuality",
            "train",
            str(labelled),
            str(hidden),
            "--layer-sweep",
            "--max-epochs",
            "5",
            "--model-name",
            "tiny",
            "--out",
            str(judge),
        ]
    )
    assert "layer   2" in out
    report = tmp_path / "eval.json"
    db = tmp_path / "f.duckdb"
    out = _run(
        [
            "factuality",
            "evaluate",
            str(labelled),
            str(hidden),
            str(judge),
            "--json",
            str(report),
            "--db",
            str(db),
        ]
    )
    data = json.loads(report.read_text())
    assert set(data) >= REQUIRED
    assert data["n_test"] > 0 and 0 <= data["judge_accuracy"] <= 1
    assert len(data["layer_sweep"]) == 3
    assert [e.name for e in load_evaluations(db)] == ["eval"]
    assert load_evaluations(db)[0].model == "tiny"
    # a fixed layer trains too
    _run(
        [
            "factuality",
            "train",
            str(labelled),
            str(hidden),
            "--layer",
            "1",
            "--max-epochs",
            "2",
            "--out",
            str(tmp_path / "judge1"),
        ]
    )


def test_friendly_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("subject,verb,object\na,b,c\n")
    result = CliRunner().invoke(
        cli, ["factuality", "build", "--kg", str(bad), "--out", str(tmp_path / "o.parquet")]
    )
    assert result.exit_code == 1
    assert "Error:" in result.output and "subject, verb, object" in result.output
    assert "Traceback" not in result.output
    statements = tmp_path / "s.parquet"
    pd.DataFrame({"statement_id": ["a"], "statement": ["x"]}).to_parquet(statements)
    result = CliRunner().invoke(
        cli,
        [
            "factuality",
            "hidden",
            str(statements),
            "--model",
            str(tmp_path),
            "--out",
            str(tmp_path / "h"),
        ],
    )
    assert result.exit_code == 1 and "config.json" in result.output


def test_train_needs_one_layer_choice(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("")
    result = CliRunner().invoke(
        cli, ["factuality", "train", str(f), str(f), "--out", str(tmp_path / "j")]
    )
    assert result.exit_code == 2 and "exactly one" in result.output


@pytest.mark.parametrize("command", ["build", "label", "hidden", "train", "evaluate"])
def test_help(command: str) -> None:
    out = _run(["factuality", command, "--help"])
    assert "Usage:" in out
