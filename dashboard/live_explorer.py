"""The Sample explorer's scores at every stop of the alpha slider, for a live block.

Issue 60: the explorer's GoldSim, CtxSim and CUS follow the sidebar's alpha in the browser
(:mod:`dashboard.live_alpha`). S_WL and S_SBERT do not depend on alpha, so the block holds the
two blends and their harmonic mean at each stop (:meth:`dashboard.explorer.CaseScores.scores`,
the same formula as the stored scores' re-blend), each over the stored value at that stop.
The question picker's CUS and order are the server's: they follow when the slider is released
(:data:`PENDING` says so while it moves).

Examples
--------
>>> from dashboard.live_alpha import GRID
>>> live = [{"gold_sim": 0.5, "ctx_sim": 0.25, "cus": 1 / 3, "gold_s_wl": 0.5,
...          "gold_s_sbert": 0.5, "ctx_s_wl": 0.2, "ctx_s_sbert": 0.3}] * len(GRID)
>>> stored = [{**live[0], "gold_status": "ok", "ctx_status": "ok"}] * len(GRID)
>>> block = figures(stored, live, tau=0.65, stored_tau=0.65)
>>> [i["label"] for i in block["items"]]
['GoldSim', 'CtxSim', 'CUS', 'S_WL gold / ctx', 'S_SBERT gold / ctx']
>>> block["items"][2]["cell"]["v"][0], block["items"][2]["delta"]["t"]
(0.3333333333333333, 'as stored')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dashboard.live_alpha import GRID, cell, metrics
from s3kg_core.errors import ConfigError
from s3kg_core.statuses import describe_status, role_status, short_status

__all__ = ["COMPONENTS", "PENDING", "SCORES", "figures"]

SCORES = (
    ("GoldSim", "gold_sim", "S3KG of the answer KG against the gold KG"),
    ("CtxSim", "ctx_sim", "S3KG of the answer KG against the context KG"),
    ("CUS", "cus", "harmonic mean of GoldSim and CtxSim"),
)
"""The blended scores: label, key, what it is."""

COMPONENTS = (("S_WL gold / ctx", "s_wl"), ("S_SBERT gold / ctx", "s_sbert"))
"""The two components of GoldSim / CtxSim (alpha does not move them)."""

PENDING = "the question list's CUS and order follow when you release the slider"
"""The line shown while the slider is moved and the server has not caught up."""


def figures(
    stored: Sequence[Mapping[str, Any]],
    live: Sequence[Mapping[str, float]],
    *,
    tau: float,
    stored_tau: float,
) -> dict[str, Any]:
    """GoldSim, CtxSim, CUS and the components at every stop, each over its stored value.

    Parameters
    ----------
    stored
        The answer's stored row re-blended at each stop of :data:`dashboard.live_alpha.GRID`
        (``gold_sim``, ``ctx_sim``, ``cus``, the four components, ``gold_status`` and
        ``ctx_status``).
    live
        The same scores recomputed at ``tau``, one mapping per stop
        (:meth:`dashboard.explorer.CaseScores.scores`).
    tau, stored_tau
        The tau of ``live`` and the stored signature's: at the stored tau every second line
        reads "as stored", else the change against the stored value.

    Returns
    -------
    dict
        A :func:`dashboard.live_alpha.metrics` block. Help texts are plain text (a tooltip).

    Raises
    ------
    ConfigError
        If ``stored`` or ``live`` does not hold one entry per stop.
    """
    if len(stored) != len(GRID) or len(live) != len(GRID):
        raise ConfigError(f"the explorer's scores need one row per alpha stop ({len(GRID)})")
    same = abs(tau - stored_tau) < 1e-9
    first = stored[0]
    gold = role_status(str(first["gold_status"]), "gold")
    ctx = role_status(str(first["ctx_status"]), "context")
    unscorable = {
        "gold_sim": short_status(gold),
        "ctx_sim": short_status(ctx),
        "cus": short_status(gold if gold != "ok" else ctx),
    }
    status = (
        f"Status: gold {gold} ({describe_status(gold)}), context {ctx} ({describe_status(ctx)})."
    )
    items: list[dict[str, Any]] = []
    for label, key, what in SCORES:
        values = [float(row[key]) for row in live]
        was = [float(row[key]) for row in stored]
        helps = [
            f"{what}, at tau {tau:g} and alpha {stop:g}; stored (tau {stored_tau:g}): "
            f"{w:.3f}. {status}"
            for stop, w in zip(GRID, was, strict=True)
        ]
        item: dict[str, Any] = {"label": label, "cell": cell(values, decimals=3), "help": helps}
        if unscorable[key]:  # the reason in the second line: the block keeps its height
            item["delta"], item["tone"] = {"t": unscorable[key]}, "warn"
        elif same:
            item["delta"], item["tone"] = {"t": "as stored"}, "off"
        else:
            changes = [round(v - w, 3) for v, w in zip(values, was, strict=True)]
            item["delta"] = {
                "t": [f"{c:+.3f} vs {w:.3f}" for c, w in zip(changes, was, strict=True)]
            }
            item["tone"] = ["off" if c == 0 else "up" if c > 0 else "down" for c in changes]
        items.append(item)
    row, was_row = live[0], first  # alpha does not move the components
    for label, part in COMPONENTS:
        g, c = float(row[f"gold_{part}"]), float(row[f"ctx_{part}"])
        was_g, was_c = float(was_row[f"gold_{part}"]), float(was_row[f"ctx_{part}"])
        items.append(
            {
                "label": label,
                "cell": {"t": f"{g:.2f} / {c:.2f}"},
                "delta": {"t": "as stored" if same else f"vs {was_g:.2f} / {was_c:.2f}"},
                "tone": "off",
                "small": True,
                "help": "Structural (WL) and embedding components of GoldSim / CtxSim; "
                "alpha blends them.",
            }
        )
    return metrics(items)
