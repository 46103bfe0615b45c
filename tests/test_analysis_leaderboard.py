"""Tests of s3kg_core/analysis/leaderboard.py: per-dataset ranks, intervals, verdicts against
#1, rank changes; and the one interval of a run on every surface that shows it (issue 58)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import rank_runs

from s3kg_core.analysis.compare import (
    Verdict,
    paired_difference,
    paired_verdict,
    unpaired_verdict,
)
from s3kg_core.analysis.leaderboard import (
    LEADERBOARD_COLUMNS,
    SUMMARY_COLUMNS,
    database_pairs,
    rank_change_text,
    rank_summaries,
    swaps,
)
from s3kg_core.errors import ConfigError
from s3kg_core.stages.scored import reblend
from s3kg_core.stats import NORMAL_FROM, normal_interval


def components(runs: dict[int, tuple[str, list[float], list[float]]]) -> pd.DataFrame:
    """Stored components per answer: run -> (dataset, S_WL values, S_SBERT values); gold and
    context alike, so every answer's GoldSim = CtxSim = CUS = its blend."""
    rows = []
    for run, (dataset, wl, sbert) in runs.items():
        for item, (w, s) in enumerate(zip(wl, sbert, strict=True)):
            rows.append(
                {"run_id": run, "dataset": dataset, "model": "same name", "temperature": 0.0,
                 "extractor": "x", "item_id": item, "mode": "paper", "alpha": 0.5,
                 "gold_s_wl": w, "gold_s_sbert": s, "gold_status": "ok",
                 "ctx_s_wl": w, "ctx_s_sbert": s, "ctx_status": "ok"}
            )  # fmt: skip
    return pd.DataFrame(rows)


RNG = np.random.default_rng(7)
HIGH = RNG.uniform(0.7, 0.9, 40).tolist()
LOW = RNG.uniform(0.1, 0.3, 40).tolist()


def test_runs_of_two_datasets_are_never_ranked_against_each_other():
    # Dataset "b"'s only run is weak, yet it leads its own dataset: rank 1 there.
    frame = components(
        {1: ("a", HIGH, HIGH), 2: ("a", LOW, LOW), 3: ("b", LOW, LOW), 4: ("a", HIGH, LOW)}
    )
    board = rank_runs(frame, 0.5, resamples=499)
    assert list(board.columns) == list(LEADERBOARD_COLUMNS)
    assert board[["dataset", "rank", "run_id"]].values.tolist() == [
        ["a", 1, 1], ["a", 2, 4], ["a", 3, 2], ["b", 1, 3],
    ]  # fmt: skip
    # two runs with one display name are two rows (never merged by name)
    assert board["model"].tolist() == ["same name"] * 4


def test_a_run_on_the_leaders_questions_is_judged_by_the_paired_test_issue_58():
    """Regression (issue 58, item 1): the Overview marked a run "tied with #1" because the two
    runs' intervals overlapped, while the Run comparison and ``s3kg check`` (the paired
    bootstrap over the same questions) said it was clearly lower."""
    near = [v - 0.005 for v in HIGH]  # 0.005 below the leader on every question
    noisy = (np.asarray(HIGH) + RNG.normal(-0.003, 0.05, 40)).tolist()
    frame = components(
        {1: ("a", HIGH, HIGH), 2: ("a", near, near), 3: ("a", LOW, LOW), 4: ("a", noisy, noisy)}
    )
    board = rank_runs(frame, 0.5, resamples=499).set_index("run_id")
    assert board.loc[1, "rank"] == 1 and board.loc[1, "verdict"] is None
    # the intervals overlap (the old rule: tied), the paired test says clearly lower
    assert board.loc[2, "low"] <= board.loc[1, "high"]
    assert board.loc[2, "verdict"].side == "lower" and board.loc[2, "verdict"].paired
    assert board.loc[2, "verdict"].text() == (
        "clearly lower (paired bootstrap over 40 shared questions)"
    )
    assert board.loc[3, "verdict"].words() == "clearly lower"
    # a run that moves both ways around the leader: no clear difference, by the same test
    assert board.loc[4, "verdict"].text() == (
        "no clear difference (paired bootstrap over 40 shared questions)"
    )
    # each verdict is the paired comparison's of the two runs (compare_runs' function)
    cus = reblend(frame, 0.5).set_index("item_id")
    values = {run: cus.loc[cus["run_id"] == run, "cus"] for run in (1, 2, 3, 4)}
    for run in (2, 3, 4):
        want = paired_verdict(paired_difference(values[run], values[1], resamples=499))
        assert board.loc[run, "verdict"] == want
    assert (board["low"] <= board["cus"]).all() and (board["cus"] <= board["high"]).all()


def test_a_run_on_other_questions_is_judged_by_its_interval_and_says_so():
    """Only where the two runs answered different question sets is the overlap of their
    intervals the verdict, and the test is named so."""
    near = [v - 0.005 for v in HIGH]
    frame = components({1: ("a", HIGH, HIGH), 2: ("a", near[:39], near[:39])})  # one fewer
    board = rank_runs(frame, 0.5, resamples=499).set_index("run_id")
    verdict = board.loc[2, "verdict"]
    assert verdict == Verdict(None, False) and not verdict.paired
    assert verdict.text() == "no clear difference (intervals of different question sets)"
    assert verdict == unpaired_verdict(
        tuple(board.loc[2, ["low", "high"]]), tuple(board.loc[1, ["low", "high"]])
    )
    # the same count of other questions is not the same questions either
    shifted = components({1: ("a", HIGH, HIGH)})
    other = components({2: ("a", near, near)}).assign(item_id=lambda f: f["item_id"] + 1)
    board = rank_runs(pd.concat([shifted, other]), 0.5, resamples=499).set_index("run_id")
    assert not board.loc[2, "verdict"].paired
    far = components({1: ("a", HIGH, HIGH), 2: ("a", LOW[:30], LOW[:30])})
    board = rank_runs(far, 0.5, resamples=499).set_index("run_id")
    assert board.loc[2, "verdict"] == Verdict("lower", False)


def test_a_large_pair_is_paired_in_the_database_with_the_normal_interval():
    """From NORMAL_FROM shared questions the paired test is the normal approximation of the
    differences, summed where the scores are (no value read): the same as paired_difference's."""
    rng = np.random.default_rng(5)
    wl = rng.beta(2, 3, NORMAL_FROM)
    worse = np.clip(wl - rng.normal(0.004, 0.05, NORMAL_FROM), 0, 1)
    frame = components(
        {1: ("d", wl.tolist(), wl.tolist()), 2: ("d", worse.tolist(), worse.tolist())}
    )
    summary = frame.groupby("run_id").size()
    assert summary.tolist() == [NORMAL_FROM] * 2
    board = rank_runs(frame, 0.5).set_index("run_id")
    cus = reblend(frame, 0.5).set_index("item_id")
    want = paired_verdict(
        paired_difference(cus.loc[cus["run_id"] == 2, "cus"], cus.loc[cus["run_id"] == 1, "cus"])
    )
    assert want.method == "normal" and board.loc[2, "verdict"] == want
    assert want.test() == "paired bootstrap (normal approximation) over 1,000 shared questions"
    pairs = pd.DataFrame({"run_id": [1, 2, 3], "dataset": "d", "n": [NORMAL_FROM] * 2 + [5],
                          "cus": [0.6, 0.5, 0.4]})  # fmt: skip
    assert database_pairs(pairs, "cus") == {2: 1} and database_pairs(pairs, "cus", None) == {}


def test_a_missing_paired_summary_is_a_clear_error():
    frame = components({1: ("d", [0.5] * NORMAL_FROM, [0.5] * NORMAL_FROM),
                        2: ("d", [0.4] * NORMAL_FROM, [0.4] * NORMAL_FROM)})  # fmt: skip
    from leaderboard_helpers import run_summaries

    summary = run_summaries(frame, 0.5)
    with pytest.raises(ConfigError, match="paired summary against run 1 is needed"):
        rank_summaries(summary, summary, {})
    with pytest.raises(ConfigError, match="its values are needed"):
        rank_summaries(summary.assign(n=[30, 30]), summary.assign(n=[30, 30]), {})


def test_moving_alpha_reports_the_rank_change_and_the_swap():
    # Run 1 wins on WL, run 2 on embeddings: alpha (the embedding weight) decides; at 0.5
    # run 1 is ahead by 0.025.
    frame = components({1: ("a", HIGH, LOW), 2: ("a", LOW, [v - 0.05 for v in HIGH])})
    at_half = rank_runs(frame, 0.5, resamples=199)
    assert at_half["rank_change"].tolist() == [0, 0] and swaps(at_half) == []
    at_09 = rank_runs(frame, 0.9, resamples=199)
    assert at_09[["run_id", "rank", "reference_rank", "rank_change"]].values.tolist() == [
        [2, 1, 2, 1], [1, 2, 1, -1],
    ]  # fmt: skip
    assert swaps(at_09) == [("a", 2, 1)]
    assert [rank_change_text(c) for c in at_09["rank_change"]] == ["▲1", "▼1"]


def test_an_unknown_metric_is_a_clear_error():
    summary = pd.DataFrame(columns=list(SUMMARY_COLUMNS))
    with pytest.raises(ConfigError, match="rank by one of"):
        rank_summaries(summary, summary, {}, metric="s3kg")


def test_a_large_run_gets_the_normal_interval_which_matches_the_bootstrap_to_3_decimals():
    """Issue 33: a BCa bootstrap per run cost 5 s per alpha at 100,000 answers; from
    NORMAL_FROM answers the interval is the normal approximation, close to the bootstrap's."""
    rng = np.random.default_rng(11)
    wl = rng.beta(2, 3, NORMAL_FROM).tolist()
    sbert = rng.beta(5, 2, NORMAL_FROM).tolist()
    frame = components({1: ("d", wl, sbert), 2: ("d", wl[:50], sbert[:50])})
    fast = rank_runs(frame, 0.7).set_index("run_id")
    slow = rank_runs(frame, 0.7, normal_from=None).set_index("run_id")
    cus = reblend_cus(wl, sbert, 0.7)
    expected = normal_interval(cus.mean(), cus.std(ddof=1), NORMAL_FROM)
    assert fast.loc[1, ["low", "high"]].tolist() == pytest.approx(expected, abs=1e-12)
    assert fast.loc[1, ["low", "high"]].tolist() == pytest.approx(
        slow.loc[1, ["low", "high"]].tolist(), abs=1e-3
    )
    # a small run keeps the bootstrap's interval
    assert fast.loc[2, ["low", "high"]].tolist() == slow.loc[2, ["low", "high"]].tolist()


def reblend_cus(wl: list[float], sbert: list[float], alpha: float) -> np.ndarray:
    """GoldSim = CtxSim = CUS of :func:`components`' answers at ``alpha`` (paper mode)."""
    return (1 - alpha) * np.asarray(wl) + alpha * np.asarray(sbert)
