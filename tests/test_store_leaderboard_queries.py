"""The leaderboard's SQL (s3kg_core.store.leaderboard_queries): DuckDB finds what pandas finds.

A real file of two datasets and five runs with seeded components (one run in ``kgx`` mode,
one with a single answer, answers at exactly 0 and 1); the reference is the pandas path the
Overview took before: every component read, blended and summed in NumPy.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import rank_runs
from leaderboard_helpers import run_summaries as pandas_summaries
from oracle_helpers import score_histograms as pandas_histograms

from s3kg_core.analysis.leaderboard import SUMMARY_COLUMNS, rank_summaries
from s3kg_core.errors import ConfigError
from s3kg_core.stages.scored import reblend
from s3kg_core.store import queries
from s3kg_core.store.leaderboard_queries import (
    PAIRED_COLUMNS,
    paired_summaries,
    run_means_grid,
    run_summaries,
    run_values,
    score_histograms,
)
from s3kg_core.store.records import ItemRecord
from s3kg_core.store.store import Store

RUNS = {  # model -> (dataset, answers, mode)
    "alpha-model": ("d1", 30, "hybrid"),
    "beta-model": ("d1", 30, "kgx"),
    "gamma-model": ("d1", 1, "hybrid"),
    "delta-model": ("d2", 25, "paper"),
    "eps-model": ("d2", 25, "hybrid"),
}


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Store:
    rng = np.random.default_rng(4)
    db = Store(tmp_path_factory.mktemp("lb") / "l.duckdb")
    with db.transaction() as con:
        datasets = {name: db.ensure_dataset(con, name) for name in ("d1", "d2")}
        items = {
            name: db.upsert_items(
                con, ds, [ItemRecord(f"q{i}", f"Q{i}?", "C.", "G.") for i in range(30)]
            )
            for name, ds in datasets.items()
        }
        rows = []
        for model, (dataset, n, mode) in RUNS.items():
            run = db.ensure_run(con, datasets[dataset], model, 0.0, "none")
            for i in range(n):
                gw, gs, cw, cs = rng.uniform(0, 1, 4)
                if i == 0:
                    gw = gs = cw = cs = 1.0  # CUS exactly 1: the last bin
                if i == 1:
                    gw = gs = 0.0  # GoldSim, and so CUS, exactly 0
                rows.append((run, items[dataset][f"q{i}"], mode, gw, gs, cw, cs))
        con.executemany(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
            "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "VALUES (?, ?, 'sig', ?, 0.5, ?, ?, 'ok', ?, ?, 'ok')",
            rows,
        )
    return db


def components(store: Store) -> pd.DataFrame:
    with store.connect() as con:
        return queries.scored_components(con, "sig")


@pytest.mark.parametrize("alpha", [None, 0.0, 0.3, 0.5, 1.0])
def test_run_summaries_are_the_pandas_summaries(store, alpha):
    with store.connect() as con:
        got = run_summaries(con, "sig", alpha)
    want = pandas_summaries(components(store), alpha)
    assert list(got.columns) == list(SUMMARY_COLUMNS)
    assert got["run_id"].tolist() == want["run_id"].tolist() and len(got) == 5
    assert got["model"].tolist() == want["model"].tolist()
    assert got["n"].tolist() == want["n"].tolist()
    for column in SUMMARY_COLUMNS[6:]:
        np.testing.assert_allclose(got[column], want[column], rtol=0, atol=1e-12)
    # a run of one answer has a mean and no spread
    one = got[got["model"] == "gamma-model"].iloc[0]
    assert one["n"] == 1 and np.isnan(one["cus_std"]) and not np.isnan(one["cus"])


def test_the_means_grid_is_run_summaries_at_each_alpha(store):
    """Issue 60: the live leaderboard's grid, one scan, equals run_summaries alpha by alpha."""
    alphas = [round(0.1 * k, 1) for k in range(11)]
    with store.connect() as con:
        grid = run_means_grid(con, "sig", alphas)
        assert list(grid.columns) == ["run_id", "alpha", "n", "gold_sim", "ctx_sim", "cus"]
        assert len(grid) == 5 * len(alphas)
        for alpha in alphas:
            want = run_summaries(con, "sig", alpha)
            got = grid[grid["alpha"] == alpha].reset_index(drop=True)
            assert got["run_id"].tolist() == want["run_id"].tolist()
            assert got["n"].tolist() == want["n"].tolist()
            for column in ("gold_sim", "ctx_sim", "cus"):
                np.testing.assert_allclose(got[column], want[column], rtol=0, atol=1e-12)
        # kgx weights the WL side by alpha: its run moves the other way (the blend is per mode)
        kgx = grid[grid["run_id"] == 2]
        assert kgx["gold_sim"].iloc[0] != kgx["gold_sim"].iloc[-1]


@pytest.mark.parametrize("alphas", [[], [1.5], [-0.1, 0.5]])
def test_the_means_grid_refuses_no_alpha_or_one_outside_0_1(store, alphas):
    with store.connect() as con, pytest.raises(ConfigError):
        run_means_grid(con, "sig", alphas)


@pytest.mark.parametrize("metric", ["gold_sim", "ctx_sim", "cus"])
def test_the_leaderboard_from_sql_is_the_leaderboard_from_every_component(store, metric):
    """What the Overview shows (summaries in DuckDB, values of small runs) is rank_runs'."""
    frame = components(store)
    with store.connect() as con:
        summary = run_summaries(con, "sig", 0.8)
        reference = run_summaries(con, "sig", 0.5)
        values = run_values(con, "sig", 0.8, metric, summary["run_id"].tolist())
    got = rank_summaries(summary, reference, values, metric=metric, resamples=499)
    want = rank_runs(frame, 0.8, metric=metric, resamples=499)
    exact = ["dataset", "rank", "run_id", "model", "n", "reference_rank", "rank_change", "verdict"]
    assert got[exact].values.tolist() == want[exact].values.tolist()
    for column in ("gold_sim", "ctx_sim", "cus", "low", "high"):
        np.testing.assert_allclose(got[column], want[column], rtol=0, atol=1e-12)


def test_run_values_are_each_runs_blended_values_in_item_order(store):
    frame = reblend(components(store), 0.3).sort_values(["run_id", "item_id"])
    with store.connect() as con:
        got = run_values(con, "sig", 0.3, "ctx_sim", [1, 4])
        assert run_values(con, "sig", 0.3, "cus", []) == {}
    assert sorted(got) == [1, 4]
    for run in (1, 4):
        want = frame.loc[frame["run_id"] == run]
        assert got[run].tolist() == want["ctx_sim"].tolist()
        assert got[run].index.tolist() == want["item_id"].tolist()  # the pairing key


@pytest.mark.parametrize(("alpha", "drop_empty"), [(0.3, False), (None, True)])
def test_paired_summaries_are_the_pandas_differences_on_shared_questions(store, alpha, drop_empty):
    """Each pair's shared questions, mean and spread of run minus baseline: what the normal
    interval of their paired test needs, summed in DuckDB (issue 58)."""
    frame = reblend(components(store), alpha)
    if drop_empty:
        frame = frame[(frame["gold_status"] == "ok") & (frame["ctx_status"] == "ok")]
    by_run = {r: g.set_index("item_id")["cus"] for r, g in frame.groupby("run_id")}
    pairs = {2: 1, 3: 1, 5: 4}  # run 3 shares one question with run 1
    with store.connect() as con:
        got = paired_summaries(con, "sig", alpha, "cus", pairs, drop_empty=drop_empty)
        assert paired_summaries(con, "sig", alpha, "cus", {}).empty
        assert paired_summaries(con, "sig", alpha, "cus", {4: 1}).empty  # nothing shared
    assert list(got.columns) == list(PAIRED_COLUMNS)
    assert got[["run_id", "baseline_id"]].values.tolist() == [[2, 1], [3, 1], [5, 4]]
    for row in got.itertuples():
        change = (by_run[row.run_id] - by_run[row.baseline_id]).dropna()
        assert row.shared == len(change)
        assert row.difference == pytest.approx(change.mean(), abs=1e-12)
        if len(change) > 1:
            assert row.difference_std == pytest.approx(change.std(ddof=1), abs=1e-12)
        else:
            assert np.isnan(row.difference_std)


@pytest.mark.parametrize(("metric", "dataset"), [("cus", None), ("gold_sim", "d2")])
def test_score_histograms_count_what_the_pandas_histogram_counts(store, metric, dataset):
    frame = reblend(components(store), 0.6)
    if dataset is not None:
        frame = frame[frame["dataset"] == dataset]
    want = pandas_histograms(frame, metric, bins=20)
    with store.connect() as con:
        got = score_histograms(con, "sig", 0.6, metric, dataset=dataset)
    key = ["run_id", "bin"]
    got, want = got.sort_values(key).reset_index(drop=True), want.sort_values(key)
    want = want.reset_index(drop=True)
    assert list(got.columns) == list(want.columns)
    assert got[["run_id", "dataset", "model"]].values.tolist() == (
        want[["run_id", "dataset", "model"]].values.tolist()
    )
    np.testing.assert_allclose(got["bin"], want["bin"], rtol=0, atol=1e-15)
    assert got["answers"].tolist() == want["answers"].tolist()
    np.testing.assert_allclose(got["share"], want["share"], rtol=0, atol=1e-12)
    # every run's answers are counted once; CUS 1 and 0 land in the last and first bins
    per_run = got.groupby("run_id")["answers"].sum()
    assert per_run.to_dict() == frame.groupby("run_id").size().astype(float).to_dict()
    if metric == "cus":
        several = got[got["run_id"].map(per_run) > 1]  # the run of one answer has CUS 1 only
        assert got.loc[got["bin"] == 0.95, "answers"].min() >= 1
        assert several.loc[several["bin"] == 0.0, "answers"].min() >= 1


def test_the_queries_refuse_an_unknown_score_bad_bins_and_alpha(store):
    with store.connect() as con:
        with pytest.raises(ConfigError, match="a score is one of"):
            run_values(con, "sig", 0.5, "s3kg", [1])
        with pytest.raises(ConfigError, match="a score is one of"):
            paired_summaries(con, "sig", 0.5, "cus; DROP TABLE scores", {2: 1})
        with pytest.raises(ConfigError):
            paired_summaries(con, "sig", -0.5, "cus", {2: 1})
        with pytest.raises(ConfigError, match="a score is one of"):
            score_histograms(con, "sig", 0.5, "cus; DROP TABLE scores")
        with pytest.raises(ConfigError, match="bins"):
            score_histograms(con, "sig", 0.5, "cus", bins=0)
        with pytest.raises(ConfigError):
            run_summaries(con, "sig", 1.5)
        assert run_summaries(con, "no such signature", 0.5).empty
