"""Tests of s3kg_core.analysis.compare: naming runs, two runs compared (bootstrap: test_stats),
the one verdict of two runs (its five surfaces on the demo: test_dashboard_pages)."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import pytest
from store_helpers import CHECK_ITEMS

import s3kg_core.analysis.compare as compare_module
from s3kg_core.analysis.compare import (
    DELTA_COLUMNS,
    SCORES,
    UNSCORABLE_COLUMNS,
    Verdict,
    compare_runs,
    find_run,
    paired_difference,
    paired_verdict,
    question_deltas,
    unpaired_verdict,
)
from s3kg_core.errors import ComparisonError, ConfigError, RunSelectionError
from s3kg_core.stages.scored import scored_frame
from s3kg_core.stats import NORMAL_FROM, PairedDifference, normal_interval, paired_bootstrap
from s3kg_core.store.store import Store


def test_the_module_doctests_pass():
    result = doctest.testmod(compare_module)
    assert result.attempted >= 6 and result.failed == 0


# -- naming runs ---------------------------------------------------------------------------------


def test_a_run_is_found_by_id_or_by_display_name(check_store):
    assert find_run(check_store, "worse").run_id == 3
    assert find_run(check_store, 3).name == "worse"
    assert find_run(check_store, " 3 ").name == "worse"
    info = find_run(check_store, "baseline")
    assert (info.dataset, info.temperature, info.extractor) == ("trial", 0.0, "test")


def test_an_ambiguous_name_lists_its_runs_with_their_ids(check_store):
    with pytest.raises(RunSelectionError) as info:
        find_run(check_store, "twin")
    text = str(info.value)
    assert text.startswith("run name 'twin' fits 2 runs; name one by its id: 5 = twin (run 5")
    assert "6 = twin (run 6: dataset trial, temperature 1, extractor test)" in text


def test_an_unknown_run_lists_the_runs(check_store):
    with pytest.raises(RunSelectionError, match=r"no run 'nope' \(by id or name\); the runs: 1 ="):
        find_run(check_store, "nope")
    with pytest.raises(RunSelectionError, match="no run '99'"):
        find_run(check_store, 99)


def test_an_id_wins_over_a_name_made_of_its_digits(tmp_path):
    # regression (issue 44, item 7): a run renamed `1` made run id 1 unaddressable
    # (`--run 1` "fits 2 runs"); the id wins, the renamed run keeps its own id
    store = Store(tmp_path / "d.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        store.ensure_run(con, ds, "m", 0.0, "x")
        store.ensure_run(con, ds, "n", 0.0, "x", name="1")
    assert (find_run(store, "1").run_id, find_run(store, "1").name) == (1, "m")
    assert find_run(store, "2").name == "1"
    assert find_run(store, " 1 ").run_id == 1


def test_an_empty_database_says_so(tmp_path):
    with pytest.raises(RunSelectionError, match="the database has no runs"):
        find_run(Store(tmp_path / "e.duckdb"), "x")


# -- two runs compared ---------------------------------------------------------------------------


def test_question_deltas_are_new_minus_baseline_worst_first(check_store):
    frame = scored_frame(check_store, compare_module.resolve_signature(check_store))
    questions = pd.DataFrame(
        {"item_id": range(1, CHECK_ITEMS + 1), "ext_id": [f"{i:04d}" for i in range(16)]}
    ).assign(question="q")
    deltas = question_deltas(frame, 1, 3, questions)
    assert list(deltas.columns) == list(DELTA_COLUMNS)
    assert len(deltas) == CHECK_ITEMS
    assert (deltas["d_cus"] == deltas["cus_b"] - deltas["cus_a"]).all()
    assert deltas["d_cus"].is_monotonic_increasing


def test_compare_runs_on_a_regression(check_store):
    c = compare_runs(check_store, "worse", "baseline", resamples=999)
    assert (c.new.name, c.baseline.name, c.shared) == ("worse", "baseline", CHECK_ITEMS)
    assert set(c.differences) == set(SCORES)
    cus = c.differences["cus"]
    assert cus.n == CHECK_ITEMS and cus.high < -0.5  # a drop, surely
    assert cus.baseline_mean == pytest.approx(c.deltas["cus_a"].mean())
    assert cus.new_mean == pytest.approx(c.deltas["cus_b"].mean())
    assert c.unscorable.empty and list(c.unscorable.columns) == list(UNSCORABLE_COLUMNS)


def test_compare_runs_names_the_answers_that_became_unscorable(check_store):
    c = compare_runs(check_store, "broken", "baseline", resamples=999)
    assert c.unscorable[["ext_id", "baseline", "new"]].to_dict("records") == [
        {"ext_id": "0001", "baseline": None, "new": "answer_kg_empty"},
        {"ext_id": "0002", "baseline": None, "new": "answer_kg_empty"},
        {"ext_id": "0003", "baseline": None, "new": "kg_extraction_failed"},
    ]
    assert c.shared == CHECK_ITEMS - 1  # the failed extraction has no score
    dropped = compare_runs(check_store, "broken", "baseline", empty="drop", resamples=999)
    assert dropped.shared == CHECK_ITEMS - 3
    assert len(dropped.unscorable) == 3  # still counted


@pytest.mark.parametrize(
    ("new", "baseline", "error", "message"),
    [
        ("elsewhere", "baseline", ComparisonError, "other datasets"),
        ("baseline", "1", ComparisonError, "name one run"),
        ("twin", "baseline", RunSelectionError, "fits 2 runs"),
        ("worse", "gone", RunSelectionError, "no run 'gone'"),
    ],
)
def test_runs_that_cannot_be_compared(check_store, new, baseline, error, message):
    with pytest.raises(error, match=message):
        compare_runs(check_store, new, baseline, resamples=999)


def test_a_signature_the_runs_are_not_scored_under_is_refused(check_store):
    with pytest.raises(ConfigError, match="unknown signature 'mode:x'"):
        compare_runs(check_store, "worse", "baseline", signature="mode:x")


def test_a_run_without_scores_is_refused(check_store, tmp_path):
    import shutil

    path = tmp_path / "c.duckdb"
    shutil.copy(check_store.path, path)
    store = Store(path)
    with store.transaction() as con:
        con.execute("DELETE FROM scores WHERE run_id = 3")
    with pytest.raises(ComparisonError, match=r"run worse \(run 3.*has no score under signature"):
        compare_runs(store, "worse", "baseline")
    with store.transaction() as con:
        con.execute("DELETE FROM scores WHERE run_id = 4 AND item_id > 1")
        con.execute("DELETE FROM scores WHERE run_id = 1 AND item_id = 1")
    with pytest.raises(ComparisonError, match="no question is scored in both runs"):
        compare_runs(store, "broken", "baseline")


# -- the verdict (issue 58) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("low", "high", "side", "words"),
    [
        (-0.15, -0.03, "lower", "clearly lower"),
        (0.01, 0.2, "higher", "clearly higher"),
        (-0.02, 0.03, None, "no clear difference"),
        (-0.1, 0.0, None, "no clear difference"),  # an end at 0 holds 0
        (float("nan"), float("nan"), None, "no clear difference"),  # one question: no interval
    ],
)
def test_a_paired_verdict_reads_the_interval_against_zero(low, high, side, words):
    diff = PairedDifference("cus", 12, 0.5, 0.45, -0.05, low, high, 0.95, "BCa")
    verdict = paired_verdict(diff)
    assert verdict == Verdict(side, True, 12, "BCa")
    assert verdict.text() == f"{words} (paired bootstrap over 12 shared questions)"


def test_an_unpaired_verdict_reads_the_overlap_and_says_so():
    assert unpaired_verdict((0.3, 0.4), (0.41, 0.5)) == Verdict("lower", False)
    assert unpaired_verdict((0.51, 0.6), (0.41, 0.5)).words() == "clearly higher"
    assert unpaired_verdict((0.3, 0.41), (0.41, 0.5)).side is None  # touching: overlap
    assert unpaired_verdict((float("nan"), float("nan")), (0.41, 0.5)).side is None
    assert Verdict(None, False).text() == (
        "no clear difference (intervals of different question sets)"
    )
    assert Verdict("lower", True, 1, "none").test() == "paired bootstrap over 1 shared question"


def test_the_paired_difference_pairs_by_item_in_item_order():
    """The resamples are drawn by position: the same questions in another order must give the
    same interval, and only shared items are paired."""
    new = pd.Series([0.2, 0.9, 0.4, 0.6, 0.1], index=[5, 1, 4, 2, 3])
    old = pd.Series([0.5, 0.5, 0.3, 0.8, 0.4, 0.7], index=[1, 2, 3, 4, 5, 6])
    d = paired_difference(new, old, resamples=499)
    want = paired_bootstrap(
        new.sort_index().to_numpy(), old.loc[[1, 2, 3, 4, 5]].to_numpy(), resamples=499
    )
    assert d == want and d.n == 5
    assert paired_difference(new.sample(frac=1, random_state=1), old, resamples=499) == d
    # from NORMAL_FROM shared questions: the normal approximation
    rng = np.random.default_rng(0)
    big_new, big_old = (pd.Series(rng.uniform(0, 1, NORMAL_FROM)) for _ in range(2))
    big = paired_difference(big_new, big_old)
    change = big_new - big_old
    assert big.method == "normal"
    assert (big.low, big.high) == pytest.approx(
        normal_interval(change.mean(), change.std(ddof=1), NORMAL_FROM), abs=1e-12
    )
    with pytest.raises(ConfigError, match="nothing to compare"):
        paired_difference(new, pd.Series([0.5], index=[99]))


def test_compare_runs_tests_in_item_order_and_gives_the_verdict(check_store):
    """The comparison's interval is paired_difference's on the item-ordered values (the
    Overview pairs in that order too), whatever order the table of changes is shown in."""
    c = compare_runs(check_store, "worse", "baseline", resamples=499)
    by_item = c.deltas.set_index("item_id")
    assert not by_item.index.is_monotonic_increasing  # shown biggest regression first
    want = paired_difference(by_item["cus_b"], by_item["cus_a"], resamples=499)
    assert c.differences["cus"] == want and c.normal_from == NORMAL_FROM
    assert c.verdict() == paired_verdict(want)
    assert c.verdict().text() == (
        f"clearly lower (paired bootstrap over {CHECK_ITEMS} shared questions)"
    )
    assert compare_runs(check_store, "baseline", "worse", resamples=499).verdict().side == "higher"
