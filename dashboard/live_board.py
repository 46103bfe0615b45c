"""The Overview's live blocks: its figures, its note and its leaderboard at every alpha stop.

Pure functions from the leaderboard the server ranked at its alpha
(:func:`dashboard.data.reads.ranked`) and every run's means at each stop of the slider
(:func:`dashboard.data.reads.means_grid`) to the blocks of :mod:`dashboard.live_alpha`: the
browser shows the stop the slider is at before the server reruns. At the server's own alpha a
block holds the server's numbers, as they are; at every other stop the grid's means (the same
SQL blend and mean, equal to 1e-12) ranked by the leaderboard's own rule
(:func:`s3kg_core.analysis.leaderboard.dataset_ranks`), the rank changes and the note of runs
that swapped places written by the same functions. Intervals and verdicts (bootstrap, paired
test) are the server's: at its alpha only.

Examples
--------
>>> import pandas as pd
>>> from dashboard.live_alpha import GRID
>>> board = pd.DataFrame({"dataset": ["d", "d"], "run_id": [1, 2], "model": ["a", "b"],
...     "temperature": [0.0, 0.7], "n": [3, 3], "rank": [1, 2], "reference_rank": [1, 2],
...     "gold_sim": [.6, .5], "ctx_sim": [.6, .5], "cus": [.6, .5]})
>>> grid = pd.DataFrame([{"run_id": r, "alpha": a, "n": 3, "gold_sim": g, "ctx_sim": g,
...     "cus": g} for r in (1, 2) for a in GRID for g in [(.6 - .2 * a) if r == 1 else .5]])
>>> frames = stops(board, grid, 0.5, "cus")
>>> [f.set_index("run_id")["rank"].to_dict() for f in (frames[0], frames[10])]
[{1: 1, 2: 2}, {1: 2, 2: 1}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dashboard import charts, leaderboard
from dashboard.live_alpha import GRID, cell, grid_index, metrics, note, table
from s3kg_core.analysis.compare import SCORES
from s3kg_core.analysis.leaderboard import dataset_ranks, rank_change_text

__all__ = ["PENDING", "metrics_block", "note_block", "stops", "table_block"]

PENDING = (
    "alpha {alpha} in your browser: the means, ranks and Δrank below follow the slider; the "
    "intervals, vs #1 and the chart follow when you release it."
)
"""The line shown while the server has not caught up with the slider."""


def stops(board: pd.DataFrame, grid: pd.DataFrame, alpha: float, metric: str) -> list[pd.DataFrame]:
    """``board``'s runs at every stop of the slider: their means and ranks there.

    ``board`` is the leaderboard the server ranked at ``alpha`` (``dataset``, ``run_id``,
    ``rank``, ``reference_rank``, the three means); ``grid`` every run's means at each stop
    (``run_id``, ``alpha``, the means). At ``alpha`` itself the frame is ``board``; elsewhere
    its means are the grid's and ``rank`` is ranked again by ``metric``.
    """
    at = grid_index(alpha)
    keep = board.drop(columns=list(SCORES))
    out = []
    for k, stop in enumerate(GRID):
        if k == at:
            out.append(board.reset_index(drop=True))
            continue
        means = grid.loc[(grid["alpha"] - stop).abs() < 1e-9, ["run_id", *SCORES]]
        frame = keep.merge(means, on="run_id", how="left", validate="one_to_one")
        frame["rank"] = dataset_ranks(frame, metric).to_numpy()
        out.append(frame)
    return out


def metrics_block(
    whole: pd.DataFrame, frames: Sequence[pd.DataFrame], datasets: int
) -> dict[str, Any]:
    """The figures above the leaderboard: runs, answers, the mean CUS (per stop), datasets.

    The mean CUS weighs each run's mean by its answers, as the page always did; ``frames``
    from :func:`stops` of every run (``whole``, not one dataset's).
    """

    def mean_cus(frame: pd.DataFrame) -> float:
        return float((frame["cus"] * frame["n"]).sum() / max(1, int(frame["n"].sum())))

    return metrics(
        [
            {"label": "Runs scored", "cell": {"t": f"{len(whole):,}"}},
            {"label": "Answers scored", "cell": {"t": f"{int(whole['n'].sum()):,}"}},
            {
                "label": "Mean CUS",
                "help": "Every scored answer's CUS at this alpha, averaged.",
                "cell": cell([mean_cus(f) for f in frames], decimals=3),
            },
            {"label": "Datasets", "cell": {"t": f"{datasets:,}"}},
        ]
    )


def note_block(frames: Sequence[pd.DataFrame], datasets: Sequence[str] | None) -> dict[str, Any]:
    """The note of runs that changed places against alpha 0.5, at every stop (none at 0.5).

    Of the runs of ``datasets`` (``None``: every dataset); with the line shown while waiting.
    """
    texts = []
    for stop, frame in zip(GRID, frames, strict=True):
        if datasets is not None:
            frame = frame[frame["dataset"].isin(datasets)]
        texts.append(leaderboard.swap_note(frame, stop, markdown=False))
    return note(texts, PENDING)


def table_block(
    shown: pd.DataFrame,
    frames: Sequence[pd.DataFrame],
    metric: str,
    *,
    partial: bool,
    columns: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any]:
    """One dataset's leaderboard at every stop of the slider.

    ``shown`` is its rows as the server shows them (:func:`dashboard.leaderboard.table`),
    ``frames`` :func:`stops`; ``columns`` the header of each column (``label``, ``help``,
    ``width``) in the order shown. Interval and verdict are the server's (at its alpha only).
    """
    by_stop = [f.set_index("run_id") for f in frames]
    rows = []
    for r in shown.itertuples(index=False):
        run = int(r.run_id)
        ranks = [int(f.at[run, "rank"]) for f in by_stop]
        reference = int(by_stop[0].at[run, "reference_rank"])
        cells: dict[str, Any] = {
            "rank": cell(ranks, decimals=0),
            "change": {"t": [rank_change_text(reference - rk) for rk in ranks]},
            "run": {"t": str(r.run)},
            "mean": cell([float(f.at[run, metric]) for f in by_stop], decimals=4),
            "interval": {"r": [float(r.low), float(r.high)], "d": 3, "server": True},
            "verdict": {"t": str(r.verdict), "title": str(r.test), "server": True},
            "n": cell(int(r.n), decimals=0),
            "run_page": {
                "t": "run page",
                "href": [leaderboard.run_url(run, stop) for stop in GRID],
            },
        }
        for m in charts.SCORE_NAMES:
            if m != metric:
                cells[m] = cell([float(f.at[run, m]) for f in by_stop], decimals=4)
        if partial:
            cells["scoring"] = {"t": str(r.scoring)}
        rows.append({"id": run, "order": ranks, "cells": cells})
    order = [k for k in columns if k != "scoring" or partial]
    header = [{"key": k, **columns[k]} for k in order]
    name = charts.SCORE_NAMES[metric]
    dataset = str(shown["dataset"].iloc[0]) if len(shown) else ""
    return table(header, rows, label=f"Leaderboard of {dataset} by mean {name}")
