"""Tests of s3kg_core.report.build: what a report gathers, checked against the library's own
functions on the scored check database (store_helpers.build_check_store) and a TAU pass."""

from __future__ import annotations

import shutil

import pytest

from s3kg_core.analysis.check import CheckSettings, check_runs
from s3kg_core.analysis.compare import compare_runs
from s3kg_core.analysis.cus_table import cus_report
from s3kg_core.errors import ComparisonError, ConfigError, RunSelectionError
from s3kg_core.report.build import TAU_CATEGORIES, build_report
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.store import Store

FAST = CheckSettings(resamples=999)


@pytest.fixture(scope="module")
def tau_db(check_store, tmp_path_factory, minilm):
    """A copy of the check database with TAU run on the lowest half of every run."""
    path = tmp_path_factory.mktemp("report") / "tau.duckdb"
    shutil.copy(check_store.path, path)
    store = Store(path)
    tau_store(store, fraction=0.5, encoder=minilm)
    return Store(path, read_only=True)


@pytest.fixture(scope="module")
def against(tau_db, minilm):
    """The report of run ``worse`` against ``baseline``, its four worst regressions."""
    return build_report(tau_db, "worse", "baseline", worst=4, settings=FAST, encoder=minilm)


def test_the_headline_means_are_the_cus_tables(against, tau_db):
    table = cus_report(tau_db).table.set_index("model")
    for metric in ("gold_sim", "ctx_sim", "cus"):
        assert against.scores[metric].mean == pytest.approx(table.at["worse", metric])
        assert against.baseline_scores[metric].mean == pytest.approx(table.at["baseline", metric])
        s = against.scores[metric]
        assert s.low <= s.mean <= s.high and s.n == 16


def test_the_comparison_and_the_verdicts_are_s3kg_checks(against, tau_db):
    check = check_runs(tau_db, "worse", "baseline", settings=FAST)
    assert against.check is not None
    assert [(g.name, g.passed) for g in against.check.gates] == [
        (g.name, g.passed) for g in check.gates
    ]
    assert not against.check.passed
    assert against.run.name == "worse" and against.baseline is not None
    assert against.baseline.name == "baseline"


def test_the_cases_are_the_biggest_regressions_explained_as_stored(against, tau_db):
    deltas = compare_runs(tau_db, "worse", "baseline", resamples=999).deltas
    assert [c.item_id for c in against.cases] == deltas["item_id"].head(4).tolist()
    for case in against.cases:
        assert case.baseline is not None
        row = deltas[deltas["item_id"] == case.item_id].iloc[0]
        assert case.change == pytest.approx(row["d_cus"])
        for side, suffix in ((case.new, "b"), (case.baseline, "a")):
            # the scorer's explanation, from the stored vectors, gives the stored score
            alpha = side.gold.alpha
            assert side.gold.blend(alpha) == pytest.approx(row[f"gold_sim_{suffix}"], abs=1e-6)
            assert side.context.blend(alpha) == pytest.approx(row[f"ctx_sim_{suffix}"], abs=1e-6)
        assert case.question.startswith("What does question")


def test_tau_categories_are_summed_from_the_stored_results(against, tau_db):
    from s3kg_core.store import export_queries

    with tau_db.connect() as con:
        rows = export_queries.tau_rows(con, against.signature)
    run = against.run.run_id
    mine = [r for r in rows if int(r[0]) == run]
    assert against.tau.cases == len(mine) == 8
    import json

    missing = sum(json.loads(r[3])["counts"]["missing"] for r in mine)
    assert against.tau.counts["missing"] == missing > 0
    assert list(against.tau.counts) == list(TAU_CATEGORIES)
    assert against.baseline_tau is not None and against.baseline_tau.cases == 8


def test_without_a_baseline_the_lowest_cus_are_shown(tau_db, minilm):
    report = build_report(tau_db, "broken", worst=3, settings=FAST, encoder=minilm)
    assert report.check is None and report.baseline is None
    cus = sorted(report.distributions["new"])
    assert [c.new.scores["cus"] for c in report.cases] == pytest.approx(cus[:3])
    assert report.cases[0].new.gold.status == "empty_kg_1"  # question 0001: an empty answer KG
    assert report.settings["model"] == "org/broken"


@pytest.mark.parametrize(
    ("run", "baseline", "error", "message"),
    [
        ("nope", None, RunSelectionError, "no run 'nope'"),
        ("worse", "elsewhere", ComparisonError, "other datasets"),
        ("worse", "worse", ComparisonError, "name one run"),
    ],
)
def test_bad_runs_are_named_errors(tau_db, run, baseline, error, message):
    with pytest.raises(error, match=message):
        build_report(tau_db, run, baseline, settings=FAST)


def test_worst_must_not_be_negative(tau_db):
    with pytest.raises(ConfigError, match="worst must be 0 or more"):
        build_report(tau_db, "worse", worst=-1)
