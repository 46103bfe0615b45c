"""dashboard/live_explorer.py: the Sample explorer's scores at every stop of the slider (issue 60).

The oracle is the library's own blend (:func:`s3kg_core.scoring.cus.blend`-like arithmetic
written out here: ``alpha * s_wl + (1 - alpha) * s_sbert`` and the harmonic mean), computed
independently of the block.
"""

from __future__ import annotations

import doctest

import pytest

from dashboard import live_explorer
from dashboard.live_alpha import GRID
from s3kg_core.errors import ConfigError


def scores_at(alpha: float, gold: tuple[float, float], ctx: tuple[float, float]) -> dict:
    g = alpha * gold[0] + (1 - alpha) * gold[1]
    c = alpha * ctx[0] + (1 - alpha) * ctx[1]
    cus = 0.0 if g + c == 0 else 2 * g * c / (g + c)
    return {
        "gold_sim": g, "ctx_sim": c, "cus": cus, "gold_s_wl": gold[0], "gold_s_sbert": gold[1],
        "ctx_s_wl": ctx[0], "ctx_s_sbert": ctx[1],
    }  # fmt: skip


def rows(gold, ctx, status=("ok", "ok")) -> list[dict]:
    return [
        {**scores_at(a, gold, ctx), "gold_status": status[0], "ctx_status": status[1]} for a in GRID
    ]


def test_the_doctests_pass():
    assert doctest.testmod(live_explorer).failed == 0


def test_every_stop_holds_the_blend_at_that_stop_and_its_change_from_the_stored():
    stored = rows((0.2, 0.8), (0.4, 0.6))
    live = [scores_at(a, (0.5, 0.8), (0.4, 0.7)) for a in GRID]  # another tau: higher S_WL
    block = live_explorer.figures(stored, live, tau=0.7, stored_tau=0.65)
    items = {i["label"]: i for i in block["items"]}
    for k, alpha in enumerate(GRID):
        expected = scores_at(alpha, (0.5, 0.8), (0.4, 0.7))
        assert items["CUS"]["cell"]["v"][k] == expected["cus"]
        assert items["GoldSim"]["cell"]["v"][k] == expected["gold_sim"]
        change = round(expected["gold_sim"] - stored[k]["gold_sim"], 3)
        assert items["GoldSim"]["delta"]["t"][k] == f"{change:+.3f} vs {stored[k]['gold_sim']:.3f}"
        assert items["GoldSim"]["tone"][k] == ("off" if change == 0 else "up")
        assert f"alpha {alpha:g}" in items["CUS"]["help"][k]
    assert items["GoldSim"]["tone"][0] == "off"  # alpha 0: S_SBERT alone, which did not move
    assert items["S_WL gold / ctx"]["cell"] == {"t": "0.50 / 0.40"}
    assert items["S_WL gold / ctx"]["delta"] == {"t": "vs 0.20 / 0.40"}
    assert items["S_WL gold / ctx"]["small"] is True


def test_at_the_stored_tau_every_second_line_reads_as_stored():
    stored = rows((0.2, 0.8), (0.4, 0.6))
    block = live_explorer.figures(stored, stored, tau=0.65, stored_tau=0.65)
    assert {i["delta"]["t"] for i in block["items"]} == {"as stored"}


def test_an_unscorable_answer_names_its_reason_in_orange():
    stored = rows((0.0, 0.0), (0.4, 0.6), status=("empty_kg_answer", "empty_kg_answer"))
    block = live_explorer.figures(stored, stored, tau=0.65, stored_tau=0.65)
    first = block["items"][0]
    assert first["tone"] == "warn" and first["delta"]["t"] != "as stored"
    assert "gold" in first["help"][0] and "Status" in first["help"][0]


def test_a_row_per_stop_is_needed():
    stored = rows((0.2, 0.8), (0.4, 0.6))
    with pytest.raises(ConfigError, match="one row per alpha stop"):
        live_explorer.figures(stored[:3], stored, tau=0.65, stored_tau=0.65)
