"""s3kg_core.evaluation.grapheval: Table 2 raw vs KG, and checkers compared, on small CSVs."""

from __future__ import annotations

import json

import pytest
from test_grapheval_detect import ListExtractor, YearChecker

from s3kg_core.errors import GraphEvalError
from s3kg_core.evaluation.grapheval import (
    compare_checkers,
    failure_examples,
    run_bench,
    stratified_limit,
    summary_scores,
    table2_entry,
    tune_aggregator,
)
from s3kg_core.evaluation.summ_sets import DATASETS, read_summ_csv
from s3kg_core.grapheval.aggregate import DEFAULT_AGGREGATOR, MaxAggregator, MeanAggregator
from s3kg_core.grapheval.checkers.base import Checker, Verdict
from s3kg_core.grapheval.detect import Detection
from s3kg_core.kg import Triple


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
    assert "aggregator" not in result  # GraphEval's rule: the result reads as before
    strict = run_bench(_set(tmp_path, ROWS), YearChecker(), split="all", raw=False,
                       aggregator=MeanAggregator(0.95))  # fmt: skip
    assert strict["aggregator"] == "agg:mean>0.95"
    assert strict["kg"]["predicted_inconsistent"] == 0 and strict["kg"]["balanced_accuracy"] == 0.5


def test_one_class_is_a_clear_error(tmp_path):
    with pytest.raises(GraphEvalError, match="one class only"):
        run_bench(_set(tmp_path, ROWS[:2]), YearChecker(), split="all")


def test_stratified_limit_is_seeded_and_keeps_both_classes():
    labels = [1] * 80 + [0] * 20
    a, b = stratified_limit(labels, 10, seed=3), stratified_limit(labels, 10, seed=3)
    assert a == b and len(a) == 10 and sum(labels[i] for i in a) == 8
    assert stratified_limit(labels, None) == list(range(100))
    assert {labels[i] for i in stratified_limit([1] * 99 + [0], 5)} == {0, 1}


# -- comparing checkers ---------------------------------------------------------------------------


class Blind(Checker):
    """Judges every claim supported (0.2), or 0.6 when it names 'Mars'."""

    name = "blind"

    def _check(self, jobs, raw):
        return [[Verdict(0.6 if "Mars" in c.text else 0.2) for c in claims] for claims, _ in jobs]


def _summeval(root, n_articles=20):
    """A SummEval-like file: per article one consistent and one inconsistent summary."""
    rows = []
    for a in range(n_articles):
        year = 1800 + a
        ctx = f"The tower {a} opened in {year}."
        rows.append(f'{2 * a},art{a},"{ctx}","Tower {a}|opened in|{year}",1')
        rows.append(f'{2 * a + 1},art{a},"{ctx}","Tower {a}|opened in|{year + 50}",0')
    path = root / DATASETS["summeval"]
    path.parent.mkdir(parents=True)
    path.write_text(",id,grounding,generated_text,label\n" + "\n".join(rows) + "\n")
    return root


def test_summary_scores_and_a_threshold_tuned_on_dev():
    t = (Triple("a", "r", "b"), Triple("c", "r", "d"))
    ds = [
        Detection(t, (0.9, 0.3), (0,), True, raw_probability=0.7),
        Detection(t, (0.4, None), (), False),
        Detection((), (), (), False, status="no_triples"),
        Detection(t, (None, None), (), None, status="unjudged"),
    ]
    assert summary_scores(ds) == [0.9, 0.4, 0.0, 0.0]
    assert summary_scores(ds, "kg", MeanAggregator()) == [0.6, 0.4, 0.0, 0.0]
    assert summary_scores(ds, "raw") == [0.7, 0.0, 0.0, 0.0]
    with pytest.raises(GraphEvalError, match="mode must be one of"):
        summary_scores(ds, "text")
    # label 1 = consistent: flagging above 0.4 would call the second summary consistent too
    tuned = tune_aggregator(DEFAULT_AGGREGATOR, ds[:3], [0, 0, 1])
    assert tuned == MaxAggregator(0.0) and tuned.inconsistent([0.4])
    assert tune_aggregator(MeanAggregator(), ds[:2], [0, 1]).threshold == 0.4


def test_table2_entry_at_one_half_and_at_the_dev_threshold():
    t = (Triple("a", "r", "b"),)
    ds = [Detection(t, (p,), (), p > 0.5, raw_probability=r) for p, r in
          [(0.9, 0.8), (0.45, 0.3), (0.2, 0.6), (0.1, 0.1)]]  # fmt: skip
    labels = [0, 0, 1, 1]
    entry = table2_entry(labels, ds, {"raw": 0.7, "kg": 0.4}, bootstrap=50, seed=1)
    assert (entry["n"], entry["kg"], entry["raw"]) == (4, 0.75, 0.5)
    assert (entry["kg_at_dev_threshold"], entry["raw_at_dev_threshold"]) == (1.0, 0.75)
    assert entry["kg_auroc"] == entry["kg_mean_auroc"] == 1.0 and entry["raw_auroc"] == 0.75
    low, high = entry["kg_ci"]
    assert low <= entry["kg"] <= high and entry["kg_auroc_ci"] == [1.0, 1.0]
    assert "kg_dev_threshold" not in table2_entry(labels, ds, bootstrap=5)


def test_checkers_compared_on_dev_and_test_and_reused(tmp_path):
    data = _summeval(tmp_path / "data")
    calls = []

    class Counting(YearChecker):
        def _check(self, jobs, raw):
            calls.append(len(jobs))
            return super()._check(jobs, raw)

    checkers = {"year": Counting(), "blind": Blind()}
    args = dict(out_dir=tmp_path / "out", data_dir=data, dev_limit=None, bootstrap=20)
    lines: list[str] = []
    result = compare_checkers(["summeval"], checkers, ListExtractor(), log=lines.append, **args)
    year, blind = result["sets"]["summeval"]["year"], result["sets"]["summeval"]["blind"]
    assert year["kg"] == year["raw"] == 1.0 and blind["kg"] == blind["raw"] == 0.5
    assert year["kg_auroc"] == 1.0 and blind["kg_auroc"] == 0.5
    assert result["thresholds"]["year"] == {"raw": 0.1, "kg": 0.1}  # chosen on dev
    assert result["mean"]["year"]["kg_at_dev_threshold"] == 1.0
    assert len(lines) == 4 and lines[0].startswith("year summeval dev n=")
    n_test = year["n"]
    assert n_test + len(result["runs"][("year", "summeval", "dev")][1]) == 40
    assert (tmp_path / "out" / "tc.year.summeval.test.jsonl").is_file()
    before = len(calls)
    again = compare_checkers(["summeval"], checkers, ListExtractor(), reuse=True, **args)
    assert len(calls) == before  # nothing judged again
    assert again["sets"] == result["sets"]


def test_failure_examples_name_the_misses_and_the_errors():
    rows = [
        {"uid": "0", "label": 0, "inconsistent": False, "answer": "Bob won in Oslo.",
         "triples": [["Bob", "won", "prize"]], "probabilities": [0.1], "flagged": []},
        {"uid": "1", "label": 1, "inconsistent": True, "answer": "Ann sings.",
         "triples": [["Ann", "sings", "songs"]], "probabilities": [0.8], "flagged": [0]},
        {"uid": "2", "label": 0, "inconsistent": False, "answer": "Eve met Zed.",
         "triples": [["Eve", "met", "Zed"]], "probabilities": [0.3], "flagged": []},
    ]  # fmt: skip
    contexts = {"0": "Bob won a prize.", "1": "Ann sings songs.", "2": "Eve met Max."}
    misses, errors = failure_examples(rows, contexts, k=4)
    assert len(misses) == 1 and "article lacks ['Oslo']" in misses[0]
    assert errors == [
        "- false alarm: 'Ann sings songs' p=0.80 (summary consistent: 'Ann sings.')",
        "- missed: 'Eve met Zed' p=0.30, article lacks ['Zed']",
    ]
