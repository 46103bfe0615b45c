"""What ``s3kg report`` shows about a run, and against a baseline: :func:`build_report`.

A :class:`RunReport` gathers, from the database and the library's own functions (nothing is
computed twice): the run's settings and the scores' signature; GoldSim, CtxSim and CUS means
with their intervals (the Overview's and ``s3kg cus``'s: the run summaries of
:mod:`~s3kg_core.store.leaderboard_queries` and :func:`~s3kg_core.stats.run_interval`) and
their distributions; the TAU categories stored for the
run; the worst answers, explained by the scorer (:mod:`.cases`). With a baseline: the
gates of ``s3kg check`` (:func:`~s3kg_core.analysis.check.check_runs`, whose paired comparison
is :func:`~s3kg_core.analysis.compare.compare_runs`) and the biggest regressions with their
triple-level diff. :func:`~s3kg_core.report.html.render_report` writes it as one HTML
file.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .._version import __version__
from ..analysis.check import CheckResult, CheckSettings, check_runs
from ..analysis.compare import SCORES, RunInfo, find_run
from ..analysis.leaderboard import bootstrap_runs
from ..errors import ComparisonError, ConfigError
from ..scoring.signature import Signature
from ..scoring.tau import TAU_CATEGORIES, TauResult
from ..stages.scored import (
    EmptyPolicy,
    apply_empty_policy,
    blend_alpha,
    check_empty_policy,
    reblend,
    resolve_signature,
)
from ..stats import run_interval
from ..store import export_queries, leaderboard_queries, queries
from ..store.store import Store
from .cases import ReportCase, explain_cases

__all__ = [
    "TAU_CATEGORIES",
    "RunReport",
    "ScoreSummary",
    "TauSummary",
    "build_report",
]


@dataclass(frozen=True)
class ScoreSummary:
    """A score's mean over a run's scored answers, with its interval.

    The interval is :func:`s3kg_core.stats.run_interval`'s (the leaderboard's and ``s3kg
    cus``'s): ``low`` and ``high`` are NaN with fewer than two answers; equal to the mean when
    every answer has the same score.
    """

    metric: str
    n: int
    mean: float
    low: float
    high: float
    confidence: float


@dataclass(frozen=True)
class TauSummary:
    """TAU's stored results for a run: how many cases and triples of each category."""

    cases: int
    counts: dict[str, int]
    targets: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunReport:
    """Everything a report shows (see the module's docstring).

    Attributes
    ----------
    run, baseline
        The run reported and the baseline it is compared with (``None``: none).
    settings
        The run's recorded settings (model, endpoint, seed...; may be empty).
    signature, alpha, empty
        The scores' signature (stored components), the alpha they are blended at (given, else
        the one they are stored with) and how empty KGs count.
    scores, baseline_scores
        :class:`ScoreSummary` of GoldSim, CtxSim and CUS over each run's scored answers.
    distributions
        ``"new"`` (and ``"baseline"``) -> the CUS of every scored answer.
    check
        The gates of ``s3kg check`` against the baseline (``None`` without one).
    tau, baseline_tau
        TAU's stored categories for each run.
    cases
        The worst answers (biggest regressions, with a baseline), explained.
    created, version
        The day the report was made and the project's version.
    """

    run: RunInfo
    settings: dict[str, Any]
    signature: str
    alpha: float
    empty: EmptyPolicy
    scores: dict[str, ScoreSummary]
    distributions: dict[str, list[float]]
    tau: TauSummary
    cases: tuple[ReportCase, ...]
    baseline: RunInfo | None = None
    baseline_scores: dict[str, ScoreSummary] = field(default_factory=dict)
    baseline_tau: TauSummary | None = None
    check: CheckResult | None = None
    created: str = ""
    version: str = __version__

    @property
    def full_signature(self) -> str:
        """The signature with the alpha the report's scores are blended at."""
        return Signature.blended(self.signature, self.alpha)


def _settings(store: Store, run_id: int) -> dict[str, Any]:
    with store.connect() as con:
        meta = export_queries.run_metadata(con)
    rows = meta[meta["run_id"] == run_id]
    out: dict[str, Any] = {}
    if not rows.empty:
        row = rows.iloc[0]
        out = {"model": row["run_model"], "source": row["run_source"]}
        text = row["run_settings"]
        if isinstance(text, str) and text.strip():
            parsed = json.loads(text)
            if isinstance(parsed, dict):
                out.update(parsed)
    return {k: v for k, v in out.items() if v is not None}


def _tau(store: Store, signature: str, run_id: int) -> TauSummary:
    with store.connect() as con:
        rows = export_queries.tau_rows(con, signature)
    counts: Counter[str] = Counter({c: 0 for c in TAU_CATEGORIES})
    cases, targets = 0, set()
    for run, _item, target, result in rows:
        if int(run) != run_id:
            continue
        parsed = TauResult.from_dict(json.loads(result)).counts()  # old swaps: roles swapped
        cases += 1
        targets.add(str(target))
        for category in TAU_CATEGORIES:
            counts[category] += parsed.get(category, 0)
    return TauSummary(cases, dict(counts), tuple(sorted(targets)))


def _summaries(
    store: Store,
    signature: str,
    alpha: float,
    empty: EmptyPolicy,
    run_ids: list[int],
    settings: CheckSettings,
) -> dict[int, dict[str, ScoreSummary]]:
    """Each run's :class:`ScoreSummary` per score: the Overview's means and intervals.

    The run summaries of the Overview and ``s3kg cus`` (computed in DuckDB), the values of a run
    too small for the normal interval in item order, and :func:`~s3kg_core.stats.run_interval`
    with the check's confidence, resamples, seed and ``normal_from``.
    """
    drop = empty == "drop"
    with store.connect() as con:
        summary = leaderboard_queries.run_summaries(con, signature, alpha, drop_empty=drop)
        summary = summary[summary["run_id"].isin(run_ids)]
        small = bootstrap_runs(summary, settings.normal_from)
        values = {
            s: leaderboard_queries.run_values(con, signature, alpha, s, small, drop_empty=drop)
            for s in SCORES
        }
    out: dict[int, dict[str, ScoreSummary]] = {}
    for row in summary.itertuples(index=False):
        run, n = int(row.run_id), int(row.n)
        out[run] = {}
        for s in SCORES:
            mean = float(getattr(row, s))
            low, high = run_interval(
                n,
                mean,
                float(getattr(row, f"{s}_std")),
                values[s].get(run),
                confidence=settings.confidence,
                resamples=settings.resamples,
                seed=settings.seed,
                normal_from=settings.normal_from,
            )
            out[run][s] = ScoreSummary(s, n, mean, low, high, settings.confidence)
    return out


def build_report(
    store: Store,
    run: str | int,
    baseline: str | int | None = None,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
    worst: int = 10,
    settings: CheckSettings | None = None,
    encoder: Any | None = None,
) -> RunReport:
    """Gather the report of run ``run`` (id or display name), against ``baseline`` if given.

    ``worst`` answers are explained: the run's lowest CUS, or with a baseline the biggest
    drops of CUS on the shared questions. ``settings`` are the check's gates and the
    bootstrap's confidence, resamples and seed (also used for the score intervals).

    Raises
    ------
    RunSelectionError
        If a run is unknown or its name ambiguous.
    ComparisonError
        If a run has no score under the signature, or the two runs cannot be compared.
    ConfigError
        If nothing is scored, ``signature`` is unknown, ``empty`` is not zero or drop, or
        ``worst`` is negative.
    """
    check_empty_policy(empty)
    if worst < 0:
        raise ConfigError(f"worst must be 0 or more; got {worst}")
    settings = settings or CheckSettings()
    new_run = find_run(store, run)
    resolved = resolve_signature(store, signature)
    if resolved is None:
        raise ComparisonError(f"nothing is scored in {store.path}: run `s3kg score` first")
    with store.connect() as con:
        components = queries.scored_components(con, resolved)
    frame = apply_empty_policy(reblend(components, alpha), empty)
    mine = frame[frame["run_id"] == new_run.run_id]
    if mine.empty:
        raise ComparisonError(
            f"run {new_run.label()} has no score under signature {resolved}; score it "
            "(`s3kg score`) or pass --signature"
        )
    shown_alpha = blend_alpha(store, resolved, alpha)
    picks: list[tuple[int, dict[str, float], dict[str, float] | None]]
    check = old_run = None
    old_scores: dict[str, ScoreSummary] = {}
    distributions = {"new": mine["cus"].astype(float).tolist()}
    if baseline is not None:
        check = check_runs(
            store, new_run.run_id, baseline, settings=settings, signature=resolved,
            alpha=alpha, empty=empty,
        )  # fmt: skip
        comparison = check.comparison
        if comparison is None:  # pragma: no cover - check_runs compares with every baseline
            raise ComparisonError("the check made no comparison with the baseline")
        old_run = comparison.baseline
        theirs = frame[frame["run_id"] == old_run.run_id]
        distributions["baseline"] = theirs["cus"].astype(float).tolist()
        deltas = comparison.deltas
        picks = [
            (
                int(r.item_id),
                {s: float(getattr(r, f"{s}_b")) for s in SCORES},
                {s: float(getattr(r, f"{s}_a")) for s in SCORES},
            )
            for r in deltas.head(worst).itertuples()
        ]
    else:
        lowest = mine.sort_values(["cus", "item_id"], kind="stable").head(worst)
        picks = [
            (int(r.item_id), {s: float(getattr(r, s)) for s in SCORES}, None)
            for r in lowest.itertuples()
        ]
    ids = [new_run.run_id] + ([old_run.run_id] if old_run is not None else [])
    summaries = _summaries(store, resolved, shown_alpha, empty, ids, settings)
    if old_run is not None:
        old_scores = summaries[old_run.run_id]
    cases = explain_cases(
        store,
        resolved,
        picks,
        new_run.run_id,
        old_run.run_id if old_run is not None else None,
        encoder=encoder,
    )
    return RunReport(
        run=new_run,
        settings=_settings(store, new_run.run_id),
        signature=resolved,
        alpha=shown_alpha,
        empty=empty,
        scores=summaries[new_run.run_id],
        distributions=distributions,
        tau=_tau(store, resolved, new_run.run_id),
        cases=tuple(cases),
        baseline=old_run,
        baseline_scores=old_scores,
        baseline_tau=_tau(store, resolved, old_run.run_id) if old_run is not None else None,
        check=check,
        created=date.today().isoformat(),
    )
