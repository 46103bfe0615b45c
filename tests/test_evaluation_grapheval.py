"""s3kg_core.evaluation.grapheval: Table 2 raw vs KG, and checkers compared, on small CSVs."""

from __future__ import annotations

import json

import pytest
from test_grapheval_detect import YearChecker

from s3kg_core.errors import GraphEvalError
from s3kg_core.evaluation.grapheval import run_bench, stratified_limit
from s3kg_core.evaluation.summ_sets import read_summ_csv


def _set(tmp_path, rows):
    lines = [",grounding,generated_text,label"] + [
        f'{i},"{ctx}","{ans}",{label}' for i, (ctx, ans, label) in enumerate(rows)
    ]
    path = tmp_path / "toy.csv"
    path.write_text("\n".join(lines) + "\n")
    return read_summ_csv(path, "toy")


ROWS = [
    ("The tower opened in 1889.", "The tower opened in 1889.", 1),
    ("The bridge opened in 1932.", "The bridge opened in 1932.", 1),
    ("The museum opened in 1793.", "The museum opened in 1893.", 0),
    ("The station opened in 1900.", "The station opened in 1910.", 0),
]


def test_run_bench_reports_raw_and_kg(tmp_path):
    result = run_bench(
        _set(tmp_path, ROWS), YearChecker(), split="all", detail_path=tmp_path / "d.jsonl"
    )
    assert {"dataset", "n", "checker", "extractor", "raw", "kg"} <= set(result)
    assert result["n"] == 4 and result["checker"] == "year"
    assert result["kg"] == pytest.approx(
        {
            "balanced_accuracy": 1.0,
            "flagged_triples": 2,
            "triples": 4,
            "predicted_inconsistent": 2,
            "no_triples": 0,
            "unjudged": 0,
        }
    )
    assert result["raw"]["balanced_accuracy"] == 1.0
    lines = (tmp_path / "d.jsonl").read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[2])["inconsistent"] is True


def test_one_class_is_a_clear_error(tmp_path):
    with pytest.raises(GraphEvalError, match="one class only"):
        run_bench(_set(tmp_path, ROWS[:2]), YearChecker(), split="all")


def test_stratified_limit_is_seeded_and_keeps_both_classes():
    labels = [1] * 80 + [0] * 20
    a, b = stratified_limit(labels, 10, seed=3), stratified_limit(labels, 10, seed=3)
    assert a == b and len(a) == 10 and sum(labels[i] for i in a) == 8
    assert stratified_limit(labels, None) == list(range(100))
    assert {labels[i] for i in stratified_limit([1] * 99 + [0], 5)} == {0, 1}
