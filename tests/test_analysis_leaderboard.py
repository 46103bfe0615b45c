"""Tests of s3kg_core/analysis/leaderboard.py: per-dataset ranks, intervals, ties, rank changes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import rank_runs

from s3kg_core.analysis.leaderboard import (
    LEADERBOARD_COLUMNS,
    NORMAL_FROM,
    SUMMARY_COLUMNS,
    rank_change_text,
    rank_summaries,
    swaps,
)
from s3kg_core.errors import ConfigError
from s3kg_core.stats import normal_interval


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


def test_overlapping_intervals_are_tied_with_the_leader_and_apart_ones_are_not():
    near = [v - 0.005 for v in HIGH]  # 0.005 below the leader: not a win
    frame = components({1: ("a", HIGH, HIGH), 2: ("a", near, near), 3: ("a", LOW, LOW)})
    board = rank_runs(frame, 0.5, resamples=499).set_index("run_id")
    assert board.loc[1, "rank"] == 1 and not board.loc[1, "tied"]
    assert board.loc[2, "tied"] and not board.loc[3, "tied"]
    assert (board["low"] <= board["cus"]).all() and (board["cus"] <= board["high"]).all()


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
