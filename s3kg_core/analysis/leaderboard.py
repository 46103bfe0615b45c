"""The leaderboard: runs ranked within their dataset, with intervals and a verdict against #1.

One row per run (never per display name: two runs may share one), ranked by a score's mean
within its dataset only (runs of two datasets are never ranked against each other). Each
mean carries its interval (:func:`s3kg_core.stats.run_interval`: scipy's seeded BCa interval
of the mean or, for a run of :data:`~s3kg_core.stats.NORMAL_FROM` answers or more, its normal
approximation, the mean plus or minus z standard errors, which the bootstrap's interval
approaches at that size; a bootstrap of a few thousand answers per run would cost seconds at
every alpha). Each run below its dataset's #1 has a verdict against it
(:class:`~s3kg_core.analysis.compare.Verdict`: clearly lower or no clear difference): the
paired test (:func:`~s3kg_core.analysis.compare.paired_difference`, as the Run comparison and
``s3kg check`` compare two runs) when the two runs answered the same questions, the overlap of
their intervals only when they answered different question sets, and the row names its test.
Against a reference alpha (0.5, the paper's) each run has a rank change and :func:`swaps` names
the pairs of runs that changed places, so a move of alpha never re-sorts the table silently.
"""

from __future__ import annotations

from collections.abc import Mapping

import duckdb
import pandas as pd

from ..errors import ConfigError
from ..scoring.result import DEFAULT_ALPHA
from ..stats import DEFAULT_RESAMPLES, NORMAL_FROM, PairedDifference, normal_interval, run_interval
from ..store import leaderboard_queries
from .compare import SCORES, Verdict, paired_difference, paired_verdict, unpaired_verdict

__all__ = [
    "LEADERBOARD_COLUMNS",
    "REFERENCE_ALPHA",
    "SUMMARY_COLUMNS",
    "bootstrap_runs",
    "database_pairs",
    "dataset_ranks",
    "rank_change_text",
    "rank_summaries",
    "read_values",
    "swaps",
]

REFERENCE_ALPHA = DEFAULT_ALPHA
"""The alpha rank changes are counted against (the default, the paper's)."""

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
    "verdict",
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


def dataset_ranks(means: pd.DataFrame, metric: str) -> pd.Series:
    """Each run's rank in its dataset: 1 for the best mean; equal means share the better rank.

    ``means`` holds ``dataset`` and ``metric``. Means are compared to 12 decimals: a sum in
    another order (DuckDB's, in parallel) differs in the last bits, which must not split a
    tie. The one rank rule of the leaderboard (:func:`rank_summaries`, and the Overview's live
    ranks at every step of the slider).

    Examples
    --------
    >>> m = pd.DataFrame({"dataset": ["d", "d", "d", "e"], "cus": [0.4, 0.6, 0.4, 0.1]})
    >>> dataset_ranks(m, "cus").tolist()
    [2, 1, 2, 1]
    """
    rounded = means[metric].astype(float).round(12)
    return rounded.groupby(means["dataset"]).rank(ascending=False, method="min").astype(int)


def _leaders(summary: pd.DataFrame, metric: str) -> dict[int, int]:
    """Each run of ``summary`` -> its dataset's #1 (the best mean, then the lowest run id)."""
    ranked = summary.assign(rank=dataset_ranks(summary, metric).to_numpy())
    ranked = ranked.sort_values(["dataset", "rank", "run_id"], kind="stable")
    first = ranked.groupby("dataset")["run_id"].transform("first")
    return {int(r): int(f) for r, f in zip(ranked["run_id"], first, strict=True)}


def database_pairs(
    summary: pd.DataFrame, metric: str, normal_from: int | None = NORMAL_FROM
) -> dict[int, int]:
    """The runs whose paired test against their dataset's #1 is summed in DuckDB -> that #1.

    A run of ``normal_from`` answers or more with as many as its #1 (perhaps the same
    questions): its paired interval is the normal approximation, from the count, mean and
    spread of the per-question differences
    (:func:`~s3kg_core.store.leaderboard_queries.paired_summaries`); no value is read. Smaller
    runs are paired on their values (:func:`bootstrap_runs`). Empty with ``normal_from=None``.

    Examples
    --------
    >>> s = pd.DataFrame({"run_id": [1, 2, 3, 4], "dataset": ["d"] * 4, "n": [2000, 2000, 1500, 30],
    ...                   "cus": [0.6, 0.5, 0.4, 0.3]})
    >>> database_pairs(s, "cus")
    {2: 1}
    """
    if normal_from is None or summary.empty:
        return {}
    sizes = dict(zip(summary["run_id"].astype(int), summary["n"].astype(int), strict=True))
    return {
        run: leader
        for run, leader in _leaders(summary, metric).items()
        if run != leader and sizes[run] >= normal_from and sizes[run] == sizes[leader]
    }


def read_values(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    alpha: float | None,
    metric: str,
    summary: pd.DataFrame,
    *,
    drop_empty: bool = False,
) -> tuple[dict[int, pd.Series], pd.DataFrame]:
    """What :func:`rank_summaries` reads beyond the summaries: ``(values, paired)``.

    The values of the runs :func:`bootstrap_runs` names, and the paired summaries of the pairs
    :func:`database_pairs` names (both at ``alpha``, ``drop_empty`` as ``summary`` was read).
    The Overview and ``s3kg cus`` read them here; a caller may skip the call when both name
    nothing.
    """
    values = leaderboard_queries.run_values(
        con, signature, alpha, metric, bootstrap_runs(summary), drop_empty=drop_empty
    )
    paired = leaderboard_queries.paired_summaries(
        con, signature, alpha, metric, database_pairs(summary, metric), drop_empty=drop_empty
    )
    return values, paired


def _summed_difference(
    row: pd.Series, new: float, baseline: float, metric: str, confidence: float
) -> PairedDifference:
    """The normal paired difference from a row of :func:`paired_summaries`' frame."""
    n, std = int(row["shared"]), float(row["difference_std"])
    difference = float(row["difference"])
    low, high = normal_interval(difference, std, n, confidence=confidence)
    method = "constant" if std == 0.0 else "normal"
    return PairedDifference(metric, n, baseline, new, difference, low, high, confidence, method)


def rank_summaries(
    summary: pd.DataFrame,
    reference: pd.DataFrame,
    values: Mapping[int, pd.Series],
    paired: pd.DataFrame | None = None,
    *,
    metric: str = "cus",
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> pd.DataFrame:
    """The leaderboard from run summaries: every run ranked by its mean ``metric`` in its dataset.

    ``summary`` and ``reference`` are
    :func:`~s3kg_core.store.leaderboard_queries.run_summaries` frames (one run per row) at the
    alpha shown and at the reference alpha; ``values`` maps each run below ``normal_from``
    answers (every run when ``None``: :func:`bootstrap_runs`) to its values of ``metric``,
    indexed by item id; ``paired`` holds the paired summaries of the pairs
    :func:`database_pairs` names (:func:`read_values` reads both). The Overview and ``s3kg cus``
    (:func:`s3kg_core.analysis.cus_table.cus_report`) show its intervals. Columns
    :data:`LEADERBOARD_COLUMNS`: ``low``/``high`` the interval of ``metric``'s mean
    (:func:`~s3kg_core.stats.run_interval`), ``verdict`` the run against its dataset's #1, a
    :class:`~s3kg_core.analysis.compare.Verdict` (``None`` for the #1 itself: the paired test
    when the two runs answered the same questions, else the overlap of their intervals; its
    :meth:`~s3kg_core.analysis.compare.Verdict.text` names the test), ``reference_rank`` the
    rank in ``reference`` and ``rank_change`` how many
    places the run rose since (negative: fell). Sorted by dataset, rank, run id: the order to
    show and to download.

    Raises
    ------
    ConfigError
        If ``metric`` is not a score, or a small run's values or a pair's summary are missing.
    """
    if metric not in SCORES:
        raise ConfigError(f"rank by one of {', '.join(SCORES)}; got {metric!r}")
    if summary.empty:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    means = summary.sort_values("run_id").reset_index(drop=True)
    means["n"] = means["n"].astype(int)
    means["rank"] = dataset_ranks(means, metric)
    before = reference.set_index("run_id").loc[means["run_id"], ["dataset", metric]]
    means["reference_rank"] = dataset_ranks(before.reset_index(drop=True), metric).to_numpy()
    means["rank_change"] = means["reference_rank"] - means["rank"]
    small = set(bootstrap_runs(means, normal_from))
    missing = sorted(small - set(values))
    if missing:
        run = means.set_index("run_id").loc[missing[0]]
        raise ConfigError(f"run {missing[0]} has {int(run['n'])} answers: its values are needed")
    bounds = [
        run_interval(
            int(row.n),
            float(getattr(row, metric)),
            float(getattr(row, f"{metric}_std")),
            values.get(int(row.run_id)),
            confidence=confidence,
            resamples=resamples,
            seed=seed,
            normal_from=normal_from,
        )
        for row in means.itertuples(index=False)
    ]
    means["low"] = [b[0] for b in bounds]
    means["high"] = [b[1] for b in bounds]
    verdicts = _verdicts(means, values, paired, metric, confidence, resamples, seed, normal_from)
    means["verdict"] = pd.Series(verdicts, index=means.index, dtype=object)
    means = means.sort_values(["dataset", "rank", "run_id"], kind="stable")
    return means.reset_index(drop=True).loc[:, list(LEADERBOARD_COLUMNS)]


def _verdicts(
    means: pd.DataFrame,
    values: Mapping[int, pd.Series],
    paired: pd.DataFrame | None,
    metric: str,
    confidence: float,
    resamples: int,
    seed: int,
    normal_from: int | None,
) -> list[Verdict | None]:
    """Each run of ``means`` (with its interval) against its dataset's #1; ``None`` for a #1."""
    leader_of = _leaders(means, metric)
    rows = means.set_index("run_id")
    summed = database_pairs(means, metric, normal_from)
    found = {} if paired is None else {int(r.run_id): r for _, r in paired.iterrows()}
    out: list[Verdict | None] = []
    for run in means["run_id"].astype(int):
        leader = leader_of[run]
        if run == leader:
            out.append(None)
            continue
        mine, theirs = rows.loc[run], rows.loc[leader]
        verdict = None
        if run in summed:
            if run not in found or int(found[run]["baseline_id"]) != leader:
                raise ConfigError(f"run {run}'s paired summary against run {leader} is needed")
            row = found[run]
            if int(row["shared"]) == int(mine["n"]) == int(theirs["n"]):
                verdict = paired_verdict(
                    _summed_difference(
                        row, float(mine[metric]), float(theirs[metric]), metric, confidence
                    )
                )
        elif run in values and leader in values and values[run].index.equals(values[leader].index):
            verdict = paired_verdict(
                paired_difference(
                    values[run], values[leader], metric=metric, confidence=confidence,
                    resamples=resamples, seed=seed, normal_from=normal_from,
                )
            )  # fmt: skip
        if verdict is None:  # different question sets: only the intervals can be compared
            verdict = unpaired_verdict(
                (float(mine["low"]), float(mine["high"])),
                (float(theirs["low"]), float(theirs["high"])),
            )
        out.append(verdict)
    return out


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
