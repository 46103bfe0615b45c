"""dashboard/live_board.py: the Overview's blocks at every stop of the slider are the leaderboard
the server would rank at that stop (issue 60).

A real file of 2,000 scored answers in five runs of two datasets (tests/leaderboard_helpers.py);
the oracle ranks every component in pandas (``rank_runs``) at each stop, independently of the
grid's one SQL scan.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from leaderboard_helpers import build_scored_store, rank_runs

from dashboard import leaderboard, live_board
from dashboard.live_alpha import GRID
from s3kg_core.analysis.leaderboard import rank_change_text
from s3kg_core.errors import ConfigError
from s3kg_core.store import queries
from s3kg_core.store.leaderboard_queries import run_means_grid

COLUMNS = {
    k: {"label": k}
    for k in ("rank", "change", "run", "mean", "interval", "verdict", "n", "gold_sim", "ctx_sim",
              "scoring", "run_page")
}  # fmt: skip


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    store, signature = build_scored_store(tmp_path_factory.mktemp("live") / "l.duckdb")
    with store.connect() as con:
        frame = queries.scored_components(con, signature)
        grid = run_means_grid(con, signature, GRID)
    boards = {alpha: rank_runs(frame, alpha, resamples=199) for alpha in (0.2, 0.5)}
    return frame, grid, boards


def runs_frame(board: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": board["run_id"],
            "model_id": board["model"],
            "label": [
                f"{m} · T={t:g}" for m, t in zip(board["model"], board["temperature"], strict=True)
            ],
        }
    )


@pytest.mark.parametrize("server_alpha", [0.2, 0.5])
def test_every_stop_is_the_leaderboard_ranked_at_that_stop(scored, server_alpha):
    frame, grid, boards = scored
    frames = live_board.stops(boards[server_alpha], grid, server_alpha, "cus")
    assert len(frames) == len(GRID)
    for stop, got in zip(GRID, frames, strict=True):
        want = rank_runs(frame, stop, metric="cus", resamples=199).set_index("run_id")
        got = got.set_index("run_id").loc[want.index]
        assert got["rank"].tolist() == want["rank"].tolist(), stop
        assert got["reference_rank"].tolist() == want["reference_rank"].tolist()
        for column in ("gold_sim", "ctx_sim", "cus"):
            np.testing.assert_allclose(got[column], want[column], rtol=0, atol=1e-12)
    # at the server's stop the frame is the server's board, bit for bit
    at = GRID.index(server_alpha)
    pd.testing.assert_frame_equal(frames[at], boards[server_alpha].reset_index(drop=True))


def test_the_stops_move_the_ranks_in_this_store(scored):
    """The store must make the check above able to fail: some run changes places."""
    _, grid, boards = scored
    frames = live_board.stops(boards[0.5], grid, 0.5, "cus")
    assert len({tuple(f.sort_values("run_id")["rank"]) for f in frames}) > 1


def test_the_table_holds_each_stop_and_the_server_values_at_its_own(scored):
    frame, grid, _ = scored
    board = rank_runs(frame, 0.2, metric="gold_sim", resamples=199)
    frames = live_board.stops(board, grid, 0.2, "gold_sim")
    shown = leaderboard.table(board, runs_frame(board), {}, "gold_sim", 0.2)
    d1 = shown[shown["dataset"] == "d1"]
    block = live_board.table_block(d1, frames, "gold_sim", partial=False, columns=COLUMNS)
    assert [c["key"] for c in block["columns"]] == [k for k in COLUMNS if k != "scoring"]
    by_run = {r["id"]: r for r in block["rows"]}
    assert set(by_run) == set(d1["run_id"])
    at = GRID.index(0.2)
    for row in d1.itertuples():
        cells = by_run[row.run_id]["cells"]
        assert cells["mean"]["v"][at] == row.mean  # the server's number, exactly
        assert cells["rank"]["v"][at] == row.rank == by_run[row.run_id]["order"][at]
        assert cells["change"]["t"][at] == row.change
        assert cells["interval"] == {"r": [row.low, row.high], "d": 3, "server": True}
        assert cells["verdict"] == {"t": row.verdict, "title": row.test, "server": True}
        assert "gold_sim" not in cells  # the ranked score is the mean column
        assert cells["run_page"]["href"][GRID.index(0.9)] == f"/Run?run={row.run_id}&alpha=0.9"
    for k, f in enumerate(frames):  # each stop's order and change are that stop's ranks
        f = f.set_index("run_id")
        for run, r in by_run.items():
            assert r["order"][k] == f.at[run, "rank"]
            assert r["cells"]["change"]["t"][k] == rank_change_text(
                int(f.at[run, "reference_rank"] - f.at[run, "rank"])
            )
    assert block["label"] == "Leaderboard of d1 by mean GoldSim"


def test_a_partial_table_has_the_scoring_column(scored):
    _, grid, boards = scored
    board = boards[0.5]
    frames = live_board.stops(board, grid, 0.5, "cus")
    shown = leaderboard.table(board, runs_frame(board), {int(board["run_id"].iloc[0]): (1, 2)},
                              "cus", 0.5)  # fmt: skip
    block = live_board.table_block(shown, frames, "cus", partial=True, columns=COLUMNS)
    assert "scoring" in [c["key"] for c in block["columns"]]
    texts = {r["cells"]["scoring"]["t"] for r in block["rows"]}
    assert "partial: 1 of 2 scored" in texts


def test_the_note_is_the_swap_note_of_each_stop_and_none_at_0_5(scored):
    _, grid, boards = scored
    frames = live_board.stops(boards[0.5], grid, 0.5, "cus")
    block = live_board.note_block(frames, None)
    assert block["kind"] == "note" and "{alpha}" in block["pending"]
    assert block["texts"][GRID.index(0.5)] is None
    for stop, f, text in zip(GRID, frames, block["texts"], strict=True):
        assert text == leaderboard.swap_note(f, stop, markdown=False)
    only = live_board.note_block(frames, ["d2"])["texts"]
    assert all(t is None or "in d1" not in t for t in only)


def test_the_mean_cus_is_weighted_by_answers_at_each_stop(scored):
    frame, grid, boards = scored
    frames = live_board.stops(boards[0.5], grid, 0.5, "cus")
    block = live_board.metrics_block(boards[0.5], frames, 2)
    labels = [i["label"] for i in block["items"]]
    assert labels == ["Runs scored", "Answers scored", "Mean CUS", "Datasets"]
    means = block["items"][2]["cell"]["v"]
    for stop, got in zip(GRID, means, strict=True):
        want = rank_runs(frame, stop, resamples=199)
        assert got == pytest.approx(float((want["cus"] * want["n"]).sum() / want["n"].sum()),
                                    rel=0, abs=1e-12)  # fmt: skip
    assert block["items"][1]["cell"] == {"t": "2,000"}


def test_a_server_alpha_off_the_slider_is_refused(scored):
    _, grid, boards = scored
    with pytest.raises(ConfigError, match="not a stop"):
        live_board.stops(boards[0.5], grid, 0.55, "cus")


def test_the_module_doctests_pass():
    import doctest

    import dashboard.live_board as module

    assert doctest.testmod(module).failed == 0
