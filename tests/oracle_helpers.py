"""Pandas oracles of the dashboard's SQL reads: what a query must count, written plainly.

The dashboard reads these numbers from DuckDB (:mod:`s3kg_core.store.leaderboard_queries`);
the tests hold the queries against these straightforward versions on small frames.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RUN_KEYS = ["dataset", "model", "temperature", "extractor"]


def score_histograms(frame: pd.DataFrame, metric: str, bins: int = 20) -> pd.DataFrame:
    """Per run, how many answers fall in each of ``bins`` equal bins of ``metric`` on [0, 1].

    One :func:`numpy.bincount` over the column (never a point per answer to the browser).
    Columns: the run's (``dataset, model, temperature, extractor``, ``run_id`` where given),
    ``bin`` (its lower edge), ``answers`` and ``share`` (of the run's answers).

    Examples
    --------
    >>> f = pd.DataFrame({"dataset": "d", "model": "m", "temperature": 0.0, "extractor": "x",
    ...                   "run_id": 1, "cus": [0.0, 0.12, 0.13, 1.0]})
    >>> h = score_histograms(f, "cus", bins=4)
    >>> h[["bin", "answers"]].values.tolist()
    [[0.0, 3.0], [0.25, 0.0], [0.5, 0.0], [0.75, 1.0]]
    """
    keys = [k for k in ("run_id", *RUN_KEYS) if k in frame]
    groups = frame.groupby(keys, sort=False)
    run_of = groups.ngroup().to_numpy()
    order = groups.head(1)[keys].reset_index(drop=True)
    where = np.clip((frame[metric].to_numpy(dtype=float) * bins).astype(int), 0, bins - 1)
    counts = np.bincount(run_of * bins + where, minlength=len(order) * bins).reshape(-1, bins)
    out = order.loc[order.index.repeat(bins)].reset_index(drop=True)
    out["bin"] = np.tile(np.arange(bins) / bins, len(order))
    out["answers"] = counts.ravel().astype(float)
    totals = counts.sum(axis=1, keepdims=True)
    out["share"] = (counts / np.where(totals == 0, 1, totals)).ravel()
    return out
