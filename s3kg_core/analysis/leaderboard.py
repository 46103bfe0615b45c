"""The leaderboard: runs ranked within their dataset, with bootstrap intervals and ties.

One row per run (never per display name: two runs may share one), ranked by a score's mean
within its dataset only (runs of two datasets are never ranked against each other). Each
mean carries a seeded bootstrap interval (:func:`s3kg_core.stats.mean_interval`: scipy's BCa
interval of the mean) or, for a run of :data:`NORMAL_FROM` answers or more, the normal
approximation of that interval (:func:`s3kg_core.stats.normal_interval`: the mean plus or
minus z standard errors, which the bootstrap's
interval approaches at that size; a bootstrap of a few thousand answers per run would cost
seconds at every alpha); a run whose interval
overlaps its dataset leader's is marked tied with it. Against a reference alpha (0.5, the
paper's) each run has a rank change and :func:`swaps` names the pairs of runs that changed
places, so a move of alpha never re-sorts the table silently.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..errors import ConfigError
from ..stats import mean_interval, normal_interval
from .compare import SCORES

__all__ = [
    "LEADERBOARD_COLUMNS",
    "NORMAL_FROM",
    "REFERENCE_ALPHA",
    "SUMMARY_COLUMNS",
    "bootstrap_runs",
    "rank_change_text",
    "rank_summaries",
    "swaps",
]

REFERENCE_ALPHA = 0.5
"""The alpha rank changes are counted against (the paper's)."""

NORMAL_FROM = 1000
"""From this many answers a run's interval is :func:`s3kg_core.stats.normal_interval`, below it
the bootstrap's (:func:`s3kg_core.stats.mean_interval`)."""

LEADERBOARD_COLUMNS = (
    "dataset",
    "rank",
    "run_id",
    "model",
    "temperature",
    "extractor",
    "n",
    "gold_sim",
    "ctx_sim",
    "cus",
    "low",
    "high",
    "tied",
    "reference_rank",
    "rank_change",
)
"""The columns of :func:`rank_summaries`, in order (``model`` is the run's display name)."""


SUMMARY_COLUMNS = (
    "run_id",
    "dataset",
    "model",
    "temperature",
    "extractor",
    "n",
    *SCORES,
    *(f"{score}_std" for score in SCORES),
)
"""The columns of a run summary (:func:`s3kg_core.store.leaderboard_queries.run_summaries`,
computed in DuckDB where the scores are stored): per run the answers scored, each
score's mean and its sample standard deviation (``ddof=1``; NaN for one answer)."""


def bootstrap_runs(summary: pd.DataFrame, normal_from: int | None = NORMAL_FROM) -> list[int]:
    """The runs of ``summary`` whose interval is a bootstrap's: their values are needed.

    Those of fewer than ``normal_from`` answers (every run when ``None``), by id: the
    ``values`` :func:`rank_summaries` asks for.

    Examples
    --------
    >>> bootstrap_runs(pd.DataFrame({"run_id": [1, 2, 3], "n": [30, 1000, 999]}))
    [1, 3]
    """
    small = summary if normal_from is None else summary[summary["n"] < normal_from]
    return [int(r) for r in small["run_id"]]


def _ranks(means: pd.DataFrame, metric: str) -> pd.Series:
    """1 for the best mean of each dataset; equal means share the better rank.

    Means are compared to 12 decimals: a sum in another order (DuckDB's, in parallel) differs
    in the last bits, which must not split a tie.
    """
    rounded = means[metric].astype(float).round(12)
    return rounded.groupby(means["dataset"]).rank(ascending=False, method="min").astype(int)


def rank_summaries(
    summary: pd.DataFrame,
    reference: pd.DataFrame,
    values: Mapping[int, np.ndarray],
    *,
    metric: str = "cus",
    confidence: float = 0.95,
    resamples: int = 1999,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> pd.DataFrame:
    """The leaderboard from run summaries: every run ranked by its mean ``metric`` in its dataset.

    ``summary`` and ``reference`` are
    :func:`~s3kg_core.store.leaderboard_queries.run_summaries` frames (one run per row) at the
    alpha shown and at the reference alpha; ``values`` maps each run below ``normal_from``
    answers (every run when ``None``: :func:`bootstrap_runs`) to its values of ``metric``, in
    item order, for its bootstrap interval. The one interval of a run's mean: the Overview and
    ``s3kg cus`` (:func:`s3kg_core.analysis.cus_table.cus_report`) both show it. The Overview
    builds both summaries with one ``GROUP BY`` each in DuckDB and reads the values of small
    runs only. Columns :data:`LEADERBOARD_COLUMNS`: ``low``/``high``
    the interval of ``metric``'s mean (:func:`~s3kg_core.stats.mean_interval`;
    :func:`~s3kg_core.stats.normal_interval` for a run of ``normal_from`` answers or more,
    ``None``: never), ``tied`` whether the run's interval overlaps its dataset leader's (the
    leader itself: ``False``), ``reference_rank`` the rank
    in ``reference`` and ``rank_change`` how many places the run rose since (negative: fell).
    Sorted by dataset, rank, run id: the order to show and to download.

    Raises
    ------
    ConfigError
        If ``metric`` is not a score, or a small run's values are missing.
    """
    if metric not in SCORES:
        raise ConfigError(f"rank by one of {', '.join(SCORES)}; got {metric!r}")
    if summary.empty:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    means = summary.sort_values("run_id").reset_index(drop=True)
    means["n"] = means["n"].astype(int)
    means["rank"] = _ranks(means, metric)
    before = reference.set_index("run_id").loc[means["run_id"], ["dataset", metric]]
    means["reference_rank"] = _ranks(before.reset_index(drop=True), metric).to_numpy()
    means["rank_change"] = means["reference_rank"] - means["rank"]
    bounds = []
    for row in means.itertuples(index=False):
        size, mean = int(row.n), float(getattr(row, metric))
        if normal_from is not None and size >= normal_from:
            std = float(getattr(row, f"{metric}_std"))
            bounds.append(normal_interval(mean, std, size, confidence=confidence))
            continue
        if int(row.run_id) not in values:
            raise ConfigError(f"run {int(row.run_id)} has {size} answers: its values are needed")
        low, high = mean_interval(
            values[int(row.run_id)], confidence=confidence, resamples=resamples, seed=seed
        )[1:]
        bounds.append((low, high))
    means["low"] = [b[0] for b in bounds]
    means["high"] = [b[1] for b in bounds]
    means = means.sort_values(["dataset", "rank", "run_id"], kind="stable")
    leaders = means.groupby("dataset").head(1).set_index("dataset")
    lead_low = means["dataset"].map(leaders["low"])
    lead_high = means["dataset"].map(leaders["high"])
    is_leader = means["run_id"].isin(leaders["run_id"])
    means["tied"] = ~is_leader & (means["high"] >= lead_low) & (means["low"] <= lead_high)
    return means.reset_index(drop=True).loc[:, list(LEADERBOARD_COLUMNS)]


def rank_change_text(change: int) -> str:
    """A rank change as a reader sees it: ``▲2`` (rose two places), ``▼1``, ``=``.

    Examples
    --------
    >>> [rank_change_text(c) for c in (2, -1, 0)]
    ['▲2', '▼1', '=']
    """
    if change > 0:
        return f"▲{change}"
    if change < 0:
        return f"▼{-change}"
    return "="


def swaps(board: pd.DataFrame) -> list[tuple[str, int, int]]:
    """The pairs of runs of one dataset whose order differs from the reference alpha's.

    ``board`` is :func:`rank_summaries`' frame; each pair is ``(dataset, above, below)``: run
    ``above`` now ranks above run ``below``, which ranked above it at the reference alpha.

    Examples
    --------
    >>> b = pd.DataFrame({"dataset": ["d", "d", "d"], "run_id": [2, 1, 3],
    ...                   "rank": [1, 2, 3], "reference_rank": [2, 1, 3]})
    >>> swaps(b)
    [('d', 2, 1)]
    """
    out = []
    for dataset, group in board.groupby("dataset", sort=True):
        rows = list(group[["run_id", "rank", "reference_rank"]].itertuples(index=False))
        for a in rows:
            for b in rows:
                if a.rank < b.rank and a.reference_rank > b.reference_rank:
                    out.append((str(dataset), int(a.run_id), int(b.run_id)))
    return out
