"""The CUS table: GoldSim, CtxSim and CUS means per run of a signature, with what they cover.

What ``s3kg cus`` prints. The means are the Overview's leaderboard's
(:func:`s3kg_core.store.leaderboard_queries.run_summaries`, computed in DuckDB), and so is the
interval of each run's mean CUS (:func:`s3kg_core.analysis.leaderboard.rank_summaries`, whose
:func:`s3kg_core.stats.run_interval` with its seed and resamples every surface shows); the
answers without a score are counted by reason
(:class:`~s3kg_core.stages.scored.ScoreCoverage`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..errors import ConfigError
from ..scoring.signature import Signature
from ..stages.scored import (
    EmptyPolicy,
    ScoreCoverage,
    blend_alpha,
    check_empty_policy,
    coverage_of,
    resolve_signature,
)
from ..store import leaderboard_queries, queries
from ..store.store import Store
from .leaderboard import rank_summaries, read_values

__all__ = ["TABLE_COLUMNS", "CUSReport", "cus_report", "cus_table"]

TABLE_COLUMNS = [
    "dataset",
    "model",
    "temperature",
    "extractor",
    "run_id",
    "n",
    "unscored",
    "gold_sim",
    "ctx_sim",
    "cus",
    "cus_low",
    "cus_high",
]
"""The columns of the CUS table: one row per run (``run_id``: two runs may share a display
name, temperature and extractor), ``n`` answers scored, ``unscored`` stored but not scored,
``cus_low`` and ``cus_high`` the 95 % interval of the mean CUS, the Overview's."""


@dataclass(frozen=True)
class CUSReport:
    """The CUS table of a signature, with what it covers.

    Attributes
    ----------
    signature
        The scores' signature (stored components, without alpha).
    alpha
        The alpha the table is blended at: the one given, else the one the scores are stored
        with (:func:`~s3kg_core.stages.scored.blend_alpha`).
    table
        One row per run, by dataset, name, temperature, extractor (:data:`TABLE_COLUMNS`); the means
        are NaN where no answer is scored.
    coverage
        The stored answers the table covers and why the others are not scored.
    empty
        How answers with an empty or unparseable KG count: ``"zero"`` (scored 0, in ``n``) or
        ``"drop"`` (left out of the means and of ``n``).
    """

    signature: str
    alpha: float
    table: pd.DataFrame
    coverage: ScoreCoverage
    empty: EmptyPolicy = "zero"

    @property
    def full_signature(self) -> str:
        """The signature of the table's numbers: the components' with the alpha blended at."""
        return Signature.blended(self.signature, self.alpha)

    def records(self) -> list[dict[str, Any]]:
        """The table as a list of dicts, each with :attr:`full_signature` (NaN means: ``None``)."""
        return [
            {
                **{
                    k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()
                },
                "signature": self.full_signature,
            }
            for row in self.table.to_dict(orient="records")
        ]

    def lines(self) -> list[str]:
        """What ``s3kg cus`` prints: the table, the coverage lines, the signature last."""
        text = self.table.to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-")
        signature = f"signature {self.full_signature}"
        coverage = self.coverage.lines()
        if self.empty == "drop" and self.coverage.empty_kg:
            coverage = [line for line in coverage if " scored answers ha" not in line] + [
                f"{self.coverage.empty_kg} of the {self.coverage.scored} scored answers are left "
                "out of the means (--empty drop): a KG is empty or unparseable"
            ]
        return [*text.splitlines(), *coverage, signature]


def cus_report(
    store: Store,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
) -> CUSReport:
    """GoldSim, CtxSim and CUS means per dataset x model x temperature x extractor, with coverage.

    ``alpha`` re-blends the stored components (default: the alpha the scores are stored with).
    ``cus_low`` and ``cus_high`` are the interval of each run's mean CUS the Overview shows
    (:func:`~s3kg_core.analysis.leaderboard.rank_summaries`: a seeded bootstrap, the normal
    approximation from :data:`~s3kg_core.analysis.leaderboard.NORMAL_FROM` answers).
    With ``empty="zero"`` (the default) answers whose KG is empty or unparseable are scored 0
    and count in ``n``; with ``empty="drop"`` they are left out of the means and of ``n`` (what
    the authors' released QA scripts do: their score is ``None``), and counted in
    :attr:`ScoreCoverage.zero_kg` all the same. Answers without a score count in ``unscored``,
    by reason in :attr:`CUSReport.coverage`. The means are the Overview's leaderboard's
    (:func:`s3kg_core.store.leaderboard_queries.run_summaries`, computed in DuckDB). One
    connection reads the scores and the answers, so the counts agree even while ``s3kg score``
    writes.

    Raises
    ------
    ConfigError
        If nothing is scored, ``signature`` is unknown, ``empty`` is not zero or drop, or
        ``alpha`` is not given and the scores are stored with several alphas.

    Examples
    --------
    >>> import os, tempfile
    >>> cus_report(Store(os.path.join(tempfile.mkdtemp(), "e.duckdb")))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: no scores in ...e.duckdb: run `s3kg score --db ...e.duckdb`
    """
    check_empty_policy(empty)
    resolved = resolve_signature(store, signature)
    if resolved is None:
        raise ConfigError(f"no scores in {store.path}: run `s3kg score --db {store.path}`")
    alpha = blend_alpha(store, resolved, alpha)
    drop = empty == "drop"
    with store.connect() as con:
        summaries = leaderboard_queries.run_summaries(con, resolved, alpha, drop_empty=drop)
        values, paired = read_values(con, resolved, alpha, "cus", summaries, drop_empty=drop)
        components = queries.scored_components(con, resolved)  # for the coverage's counts
        statuses = queries.answer_statuses(con, resolved)
    # the Overview's interval: the same function, seed and resamples (rank_summaries' defaults)
    board = rank_summaries(summaries, summaries, values, paired, metric="cus")
    intervals = board.loc[:, ["run_id", "low", "high"]]
    keys = ["dataset", "model", "temperature", "extractor", "run_id"]
    means = summaries.loc[:, [*keys, "n", "gold_sim", "ctx_sim", "cus"]].merge(
        intervals.rename(columns={"low": "cus_low", "high": "cus_high"}), on="run_id"
    )
    unscored = (~statuses["scored"].astype(bool)).groupby([statuses[k] for k in keys]).sum()
    table = means.merge(unscored.rename("unscored").reset_index(), on=keys, how="outer")
    table = table.sort_values(keys).reset_index(drop=True)
    for column in ("n", "unscored"):
        table[column] = table[column].fillna(0).astype(int)
    return CUSReport(
        resolved, alpha, table[TABLE_COLUMNS], coverage_of(statuses, components, resolved), empty
    )


def cus_table(
    store: Store,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
) -> pd.DataFrame:
    """The table of :func:`cus_report`; empty (with :data:`TABLE_COLUMNS`) when nothing is scored.

    Raises
    ------
    ConfigError
        If ``signature`` is given and unknown, or ``empty`` is not zero or drop.
    """
    if resolve_signature(store, signature) is None:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    return cus_report(store, signature=signature, alpha=alpha, empty=empty).table
