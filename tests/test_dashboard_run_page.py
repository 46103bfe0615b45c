"""Tests of dashboard/run_page.py."""

from __future__ import annotations

import doctest

import dashboard.run_page as module


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_every_signature_the_run_page_prints_ends_with_its_alpha():
    """Issue 58 (item 3): the Run page's tables printed stored signatures without alpha
    (``...|version:4``), while its numbers are blended at the sidebar's alpha; a signature
    stored with an alpha gets the one shown, not a second."""
    import pandas as pd

    stored = "mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:4"
    info = {"name": "m", "model": "m", "dataset": "d", "settings": {}}
    for alpha in (0.0, 0.5, 1.0):
        row = module.identity(info, stored, alpha).set_index("field")["value"]
        assert row["score signature"] == f"{stored}|alpha:{alpha:g}"
        scored = pd.DataFrame({"signature": [stored, f"{stored}|alpha:0.8"], "scored": [3, 1]})
        assert (
            module.scored_table(scored, alpha)["signature"].tolist()
            == [f"{stored}|alpha:{alpha:g}"] * 2
        )
        assert scored["signature"].tolist()[0] == stored  # the stored frame is left as it was
    assert module.identity(info, None, 0.5).iloc[-1]["value"] == "not scored"


def test_the_figures_hold_each_stops_mean_and_rank_and_the_servers_interval_at_its_own():
    """Issue 60: the Run page's Mean CUS and rank follow the slider in the browser; at every
    stop they are that stop's leaderboard, the interval and the verdict only at the server's."""
    import pandas as pd

    from dashboard.live_alpha import GRID

    def board(cus_1: float) -> pd.DataFrame:
        ranked = pd.DataFrame({"run_id": [1, 2, 3], "dataset": ["d", "d", "e"],
                               "cus": [cus_1, 0.5, 0.9], "reference_rank": [2, 1, 1],
                               "low": [0.1, 0.4, 0.8], "high": [0.9, 0.6, 1.0]})  # fmt: skip
        return ranked.assign(rank=ranked.groupby("dataset")["cus"].rank(ascending=False))

    frames = [board(0.3 + 0.4 * a) for a in GRID]  # run 1 passes run 2 above alpha 0.5
    block = module.figures(1, frames, 5, answers=("30", "30 scored"), usage=("T", "1", "h"),
                           verdict="clearly lower (paired bootstrap)")  # fmt: skip
    mean, rank = block["items"][1], block["items"][2]
    assert mean["cell"]["v"] == [0.3 + 0.4 * a for a in GRID] and mean["cell"]["d"] == 3
    assert rank["cell"]["t"][0] == "2 of 2" and rank["cell"]["t"][10] == "1 of 2"
    assert rank["help"][10].endswith("since alpha 0.5: ▲1.") and "#1" not in rank["help"][10]
    assert "against #1: clearly lower (paired bootstrap)" in rank["help"][5]
    assert mean["help"][5] == "At alpha 0.5; 95% bootstrap interval 0.100 to 0.900."
    assert "follows when you release" in mean["help"][0]
    assert block["items"][0] == {"label": "Answers", "cell": {"t": "30"}, "help": "30 scored"}
