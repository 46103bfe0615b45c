"""Tests of s3kg_core.factuality.results: storing and loading evaluations in DuckDB."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from s3kg_core.errors import FactualityError
from s3kg_core.factuality.results import (
    FactualityEval,
    json_safe,
    load_evaluations,
    save_evaluation,
)
from s3kg_core.store.store import Store


def test_save_replace_and_load(tmp_path: Path) -> None:
    db = tmp_path / "f.duckdb"
    first = FactualityEval(
        "run",
        "smollm2",
        7,
        80,
        {"judge_accuracy": 0.8, "x": math.nan},
        {"llm_relation": [{"key": "Control", "correctness": 0.5}]},
    )
    save_evaluation(db, first)
    save_evaluation(Store(db), FactualityEval("run", "smollm2", 9, 81, {"judge_accuracy": 0.9}, {}))
    save_evaluation(db, FactualityEval("other", "m", 1, 2, {}, {}))
    loaded = {e.name: e for e in load_evaluations(db)}
    assert set(loaded) == {"run", "other"}
    assert loaded["run"].layer == 9 and loaded["run"].n_test == 81
    assert loaded["run"].run_at is not None
    assert json.loads(json.dumps(loaded["run"].to_dict(), default=str))["name"] == "run"
    with pytest.raises(FactualityError):
        save_evaluation(db, FactualityEval("", "m", 1, 2, {}, {}))


def test_nan_stored_as_null(tmp_path: Path) -> None:
    db = tmp_path / "f.duckdb"
    save_evaluation(db, FactualityEval("n", "m", 0, 1, {"a": math.nan, "b": [math.inf]}, {}))
    assert load_evaluations(db)[0].summary == {"a": None, "b": [None]}
    assert json_safe((1.0, math.nan)) == [1.0, None]
