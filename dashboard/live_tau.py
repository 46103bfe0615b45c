"""The Failure analysis's counts per run at every stop of the alpha slider, for a live table.

Issue 60: which answers are a run's lowest share moves with alpha, and so do TAU's counts over
them. :func:`dashboard.data.tau_cases.grid_counts` sums them per run at every stop whose picks
TAU has explained (a background job explains the others); this module lays them out as a
:func:`dashboard.live_alpha.table` that the browser shows at the slider's stop while it moves.
A stop not explained yet reads ``…``. The chart and the case picker are the server's and follow
on release (:data:`PENDING`).

Examples
--------
>>> import pandas as pd
>>> from dashboard.live_alpha import GRID
>>> run = {"run_id": 1, "dataset": "d", "model": "m", "temperature": 0.0, "extractor": "x"}
>>> counts = dict(relation_mismatch=1, entity_mismatch=0, roles_swapped=2, extra=3, missing=4)
>>> frame = pd.DataFrame([{**run, "aligned": 5, **counts, "cases": 2}])
>>> block = table([frame] + [None] * (len(GRID) - 1), ["relation_mismatch", "extra"])
>>> row = block["rows"][0]
>>> row["cells"]["run"]["t"], row["cells"]["extra"]["v"][0], row["cells"]["extra"]["wait"][1]
('m · T=0', 3, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from dashboard.live_alpha import GRID
from dashboard.live_alpha import table as live_table
from s3kg_core.errors import ConfigError

__all__ = ["PENDING", "table"]

PENDING = "the chart and the cases follow when you release the slider"
"""What waits for the server while the slider moves."""


def _label(row: pd.Series, several: bool) -> str:
    label = f"{row['model']} · T={float(row['temperature']):g}"
    return f"{label} · {row['extractor']}" if several else label


def table(frames: Sequence[pd.DataFrame | None], categories: Sequence[str]) -> dict[str, Any]:
    """Each run's cases and category counts at every stop (``…`` where a stop is not ready).

    Parameters
    ----------
    frames
        :func:`dashboard.data.tau_cases.grid_counts` at each stop of
        :data:`dashboard.live_alpha.GRID` (``None``: not explained yet).
    categories
        The count columns shown, in order (``relation_mismatch``, ...).

    Returns
    -------
    dict
        A live table: one row per run of any ready stop, by dataset then by the most residual
        triples at each stop (a run absent at a ready stop has no case there: zeros).

    Raises
    ------
    ConfigError
        If ``frames`` does not hold one entry per stop.
    """
    if len(frames) != len(GRID):
        raise ConfigError(f"the counts need one entry per alpha stop ({len(GRID)})")
    ready = [f for f in frames if f is not None]
    runs = (
        pd.concat([f[["run_id", "dataset", "model", "temperature", "extractor"]] for f in ready])
        .drop_duplicates("run_id")
        .sort_values(["dataset", "run_id"])
        if ready
        else pd.DataFrame(columns=["run_id", "dataset", "model", "temperature", "extractor"])
    )
    several = runs["extractor"].nunique() > 1
    by_stop = [None if f is None else f.set_index("run_id") for f in frames]
    keys = [*categories, "cases"]
    totals: list[dict[int, int]] = []
    for f in by_stop:
        if f is None:
            totals.append({})
            continue
        total = f[list(categories)].sum(axis=1)
        totals.append({int(r): int(total.get(r, 0)) for r in runs["run_id"]})
    rows: list[dict[str, Any]] = []
    dataset_of: dict[int, str] = {}
    for run in runs.itertuples(index=False):
        run_id = int(run.run_id)
        dataset_of[run_id] = str(run.dataset)
        cells: dict[str, Any] = {
            "run": {"t": _label(pd.Series(run._asdict()), several), "title": str(run.model)},
            "dataset": {"t": str(run.dataset)},
        }
        for key in keys:
            values = [
                0 if f is None or run_id not in f.index else int(f.at[run_id, key]) for f in by_stop
            ]
            cells[key] = {"v": values, "d": 0, "wait": [f is None for f in by_stop]}
        rows.append({"id": run_id, "cells": cells})
    ids = [int(r["id"]) for r in rows]
    places: list[dict[int, int]] = []
    for total in totals:  # by dataset, then the most residual triples first, at each stop
        ranked = sorted(ids, key=lambda r: (dataset_of[r], -total.get(r, 0), ids.index(r)))
        places.append({r: k for k, r in enumerate(ranked)})
    for row in rows:
        row["order"] = [p[int(row["id"])] for p in places]
    short = {
        "relation_mismatch": "relation",
        "entity_mismatch": "entity",
        "roles_swapped": "swapped",
    }
    columns: list[dict[str, Any]] = [
        {"key": "run", "label": "run", "wrap": True,
         "help": "model · temperature (the extractor if it varies)"},
        *([{"key": "dataset", "label": "dataset", "wrap": True}]
          if runs["dataset"].nunique() > 1 else []),
        {"key": "cases", "label": "cases", "align": "right", "help": "answers in the share"},
        *(
            {"key": k, "label": short.get(k, k.replace("_", " ")), "align": "right",
             "wrap": True, "help": f"{k.replace('_', ' ')}: triples in the cases"}
            for k in categories
        ),
    ]  # fmt: skip
    return live_table(columns, rows, label="TAU's counts per run at the slider's alpha")
