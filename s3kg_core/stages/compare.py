"""Two runs compared on the questions both answered: per-question changes, a paired bootstrap.

A run is named by its id or its display name (:func:`find_run`). :func:`compare_runs` takes
a new run and a baseline of the same dataset, scored under one signature, and gives for
GoldSim, CtxSim and CUS the mean change over the questions both have a score for (new minus
baseline) with a seeded paired-bootstrap interval (:func:`paired_bootstrap`, scipy's BCa), the
change of every question (:func:`question_deltas`, biggest regression first), and the questions
the baseline could score that the new run cannot. The dashboard's Run comparison page, the
``s3kg check`` gate and the report read the same functions.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ComparisonError, ConfigError, RunSelectionError
from ..statuses import Reference, role_status
from ..store import queries
from ..store.store import Store
from .results import (
    EmptyPolicy,
    check_empty_policy,
    reblend,
    resolve_signature,
    unscored_reasons,
)

__all__ = [
    "DELTA_COLUMNS",
    "SCORES",
    "UNSCORABLE_COLUMNS",
    "PairedDifference",
    "RunComparison",
    "RunInfo",
    "compare_runs",
    "find_run",
    "normal_interval",
    "paired_bootstrap",
    "question_deltas",
    "scorability",
]

SCORES = ("gold_sim", "ctx_sim", "cus")
"""The per-answer scores compared, in the order shown."""

DELTA_COLUMNS = (
    "item_id",
    "ext_id",
    "question",
    *(f"{s}_{side}" for s in SCORES for side in ("a", "b")),
    *(f"d_{s}" for s in SCORES),
)
"""The columns of :func:`question_deltas`."""

UNSCORABLE_COLUMNS = ("item_id", "ext_id", "question", "baseline", "new")
"""The columns of :attr:`RunComparison.unscorable`: the question and each run's state."""

_BATCH_CELLS = 2_000_000  # resamples x questions held in memory at once by the bootstrap


@dataclass(frozen=True)
class RunInfo:
    """A run as a user names it: id, display name, dataset, temperature, extractor."""

    run_id: int
    name: str
    dataset: str
    temperature: float
    extractor: str

    def label(self) -> str:
        """``name (run 3: dataset d, temperature 0.7, extractor offline)``."""
        return (
            f"{self.name} (run {self.run_id}: dataset {self.dataset}, temperature "
            f"{self.temperature:g}, extractor {self.extractor})"
        )


def find_run(store: Store, ref: str | int) -> RunInfo:
    """The run ``ref`` names: its id, or its display name (``runs.name``).

    An id wins: where a run's name is made of digits that are another run's id (a run
    renamed ``1``), ``1`` names run 1, and the renamed run is named by its own id.

    Raises
    ------
    RunSelectionError
        If no run has that id or name (the message lists the runs), or the name fits several
        runs (the message lists them: pass the id).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
    >>> with store.transaction() as con:
    ...     ds = store.ensure_dataset(con, "toy")
    ...     a = store.ensure_run(con, ds, "org/m", 0.0, "offline")
    ...     b = store.ensure_run(con, ds, "org/m", 0.7, "offline")
    >>> find_run(store, "2").label()
    'm (run 2: dataset toy, temperature 0.7, extractor offline)'
    >>> find_run(store, "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.RunSelectionError: run name 'm' fits 2 runs; name one by its id: 1 = m ...
    """
    with store.connect() as con:
        runs = queries.run_overview(con)
    text = str(ref).strip()
    infos = [
        RunInfo(int(r.run_id), str(r.model), str(r.dataset), float(r.temperature), str(r.extractor))
        for r in runs.sort_values("run_id").itertuples()
    ]
    by_id = [r for r in infos if text.isdigit() and r.run_id == int(text)]
    # an id wins over a name made of the same digits (run 1 stays addressable as `1`)
    found = by_id or [r for r in infos if r.name == text]
    if len(found) == 1:
        return found[0]
    listed = "; ".join(f"{r.run_id} = {r.label()}" for r in (found or infos)[:20])
    if len(found) > 1:
        raise RunSelectionError(
            f"run name {text!r} fits {len(found)} runs; name one by its id: {listed}"
        )
    if not infos:
        raise RunSelectionError(f"no run {text!r}: the database has no runs; import some first")
    more = f" and {len(infos) - 20} more" if len(infos) > 20 else ""
    raise RunSelectionError(f"no run {text!r} (by id or name); the runs: {listed}{more}")


@dataclass(frozen=True)
class PairedDifference:
    """The mean change of one score from a baseline to a new run, with its interval.

    Attributes
    ----------
    metric
        The score (``cus``, ``gold_sim``, ``ctx_sim``, or ``s3kg`` for pair files).
    n
        Questions (or pairs) compared: those both sides have a score for.
    baseline_mean, new_mean
        The score's mean on those questions in each run.
    difference
        ``new_mean - baseline_mean`` (negative: a drop).
    low, high
        The ``confidence`` paired-bootstrap interval of ``difference`` (NaN with one question).
    confidence
        The interval's two-sided confidence level.
    method
        ``BCa`` or ``percentile`` (scipy's bootstrap), ``normal`` (its normal approximation,
        for many questions), ``constant`` when every question changed by the same amount (the
        interval is that point), ``none`` with fewer than two.
    """

    metric: str
    n: int
    baseline_mean: float
    new_mean: float
    difference: float
    low: float
    high: float
    confidence: float
    method: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN as ``None``)."""
        return {
            k: (None if isinstance(v, float) and math.isnan(v) else v)
            for k, v in asdict(self).items()
        }


def normal_interval(
    mean: float, std: float, n: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """The normal approximation of a mean's interval: ``mean`` plus or minus z standard errors.

    ``std`` is the values' sample standard deviation (``ddof=1``) and ``n`` their number; with
    fewer than two values there is no interval (NaN). For a few thousand values the bootstrap's
    interval of the mean agrees with it to the third decimal, at no cost.

    Raises
    ------
    ConfigError
        If ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> low, high = normal_interval(0.5, 0.2, 1600)
    >>> round(low, 4), round(high, 4)
    (0.4902, 0.5098)
    >>> normal_interval(0.3, 0.0, 2000)
    (0.3, 0.3)
    """
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1; got {confidence}")
    if n < 2:
        return math.nan, math.nan
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * float(std) / math.sqrt(n)
    return float(mean) - half, float(mean) + half


def paired_bootstrap(
    new: Sequence[float] | np.ndarray,
    baseline: Sequence[float] | np.ndarray,
    *,
    metric: str = "cus",
    confidence: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
    normal_from: int | None = None,
) -> PairedDifference:
    """The mean of ``new - baseline`` over paired questions, with a paired-bootstrap interval.

    Questions are resampled with replacement as pairs: ``scipy.stats.bootstrap`` of the
    per-question differences' mean (the same resamples and interval as its ``paired=True``
    form on the two means, 1.4-2.3x faster: bench/speed/bench_check.py), BCa interval, the
    generator seeded by ``seed``: the same inputs give the same interval. Where BCa is
    undefined the percentile interval is used; when every question changed by the same amount
    the interval is that point; with one question there is none (NaN). From ``normal_from``
    questions (``None``: never) the interval is the bootstrap's normal approximation
    (:func:`normal_interval` of the differences, method ``normal``), as the leaderboard's: at
    5,000 questions a BCa bootstrap takes most of a second and agrees with it to the third
    decimal.

    Raises
    ------
    ConfigError
        If the two lengths differ, nothing is paired, or ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> d = paired_bootstrap([0.5, 0.6, 0.7, 0.4], [0.6, 0.6, 0.8, 0.6], resamples=999)
    >>> round(d.difference, 3), d.low <= d.difference <= d.high, d.method
    (-0.1, True, 'BCa')
    >>> paired_bootstrap([0.5, 0.6], [0.6, 0.7]).method
    'constant'
    """
    a = np.asarray(new, dtype=float)
    b = np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ConfigError(f"paired samples must have one length; got {a.shape} and {b.shape}")
    if a.size == 0:
        raise ConfigError("nothing to compare: no paired values")
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1; got {confidence}")
    diff = a - b
    point = float(diff.mean())
    low = high = math.nan
    method = "none"
    if a.size >= 2 and float(np.ptp(diff)) == 0.0:
        low = high = point
        method = "constant"
    elif normal_from is not None and a.size >= max(2, normal_from):
        low, high = normal_interval(
            point, float(diff.std(ddof=1)), int(a.size), confidence=confidence
        )
        method = "normal"
    elif a.size >= 2:
        from scipy import stats  # here: the dashboard imports this module, rarely this function

        for method in ("BCa", "percentile"):
            # a degenerate BCa (ties, NaN) is no news to the user: its NaN interval moves on to
            # the percentile one below; scipy's DegenerateDataWarning would reach stderr
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", stats.DegenerateDataWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                result = stats.bootstrap(
                    (diff,),
                    np.mean,
                    vectorized=True,
                    n_resamples=resamples,
                    batch=max(1, _BATCH_CELLS // a.size),
                    confidence_level=confidence,
                    method=method,
                    rng=np.random.default_rng(seed),
                )
            low, high = (float(v) for v in result.confidence_interval)
            if math.isfinite(low) and math.isfinite(high):
                break
    return PairedDifference(
        metric, int(a.size), float(b.mean()), float(a.mean()), point, low, high, confidence, method
    )


def question_deltas(
    frame: pd.DataFrame, run_a: int, run_b: int, questions: pd.DataFrame
) -> pd.DataFrame:
    """GoldSim, CtxSim and CUS of each question both runs answered, and B minus A.

    Biggest regression first: sorted by ``d_cus`` ascending (then by item). ``frame`` is the
    blended per-answer frame (``reblend``), ``questions`` has ``item_id, ext_id, question``.
    Columns: :data:`DELTA_COLUMNS`.

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 2, 2], "item_id": [1, 2, 1, 2],
    ...                   "gold_sim": [.5, .5, .4, .7], "ctx_sim": [.5, .5, .5, .5],
    ...                   "cus": [.5, .5, .45, .6]})
    >>> q = pd.DataFrame({"item_id": [1, 2], "ext_id": ["q1", "q2"], "question": ["a?", "b?"]})
    >>> question_deltas(f, 1, 2, q)[["item_id", "d_cus"]].round(2).to_dict("records")
    [{'item_id': 1, 'd_cus': -0.05}, {'item_id': 2, 'd_cus': 0.1}]
    """
    cols = ["item_id", *SCORES]
    a = frame.loc[frame["run_id"] == run_a, cols]
    b = frame.loc[frame["run_id"] == run_b, cols]
    both = a.merge(b, on="item_id", suffixes=("_a", "_b"))
    for s in SCORES:
        both[f"d_{s}"] = both[f"{s}_b"] - both[f"{s}_a"]
    texts = questions[["item_id", "ext_id", "question"]]
    both = both.merge(texts, on="item_id", how="left")
    both["ext_id"] = both["ext_id"].fillna("").astype(str)
    both["question"] = both["question"].fillna("").astype(str)
    both["item_id"] = both["item_id"].astype(int)
    return (
        both.sort_values(["d_cus", "item_id"], kind="stable")
        .reset_index(drop=True)
        .loc[:, list(DELTA_COLUMNS)]
    )


def scorability(statuses: pd.DataFrame, scored: pd.DataFrame) -> pd.Series:
    """Why each answer of ``statuses`` cannot be scored, ``None`` where it can.

    An answer is unscorable without a score under the signature (the reason of
    :func:`~s3kg_core.stages.results.unscored_reasons`: ``collect_error``,
    ``kg_extraction_failed``, ``not_extracted``, ``not_scored``) or when a comparison found a
    KG empty or unparseable: the statuses, which name the KG (``answer_kg_empty``,
    ``gold_kg_empty, context_kg_unparseable``...; the old pair names are read too).
    ``scored`` holds ``run_id, item_id, gold_status, ctx_status`` of the scored answers.

    Examples
    --------
    >>> st = pd.DataFrame({"run_id": [1, 1, 1], "item_id": [1, 2, 3],
    ...                    "scored": [True, True, False], "answer_status": ["ok"] * 3,
    ...                    "gold_kg_status": ["ok"] * 3, "answer_kg_status": ["ok", "empty", None],
    ...                    "context_kg_status": ["ok"] * 3})
    >>> sc = pd.DataFrame({"run_id": [1, 1], "item_id": [1, 2],
    ...                    "gold_status": ["ok", "answer_kg_empty"],
    ...                    "ctx_status": ["ok", "answer_kg_empty"]})
    >>> scorability(st, sc).tolist()
    [None, 'answer_kg_empty', 'not_extracted']
    """
    reasons = unscored_reasons(statuses)
    merged = statuses[["run_id", "item_id"]].merge(
        scored[["run_id", "item_id", "gold_status", "ctx_status"]],
        on=["run_id", "item_id"],
        how="left",
    )
    out: list[str | None] = []
    for reason, gold, ctx in zip(reasons, merged["gold_status"], merged["ctx_status"], strict=True):
        if reason is not None:
            out.append(str(reason))
            continue
        sides: tuple[tuple[Reference, Any], ...] = (("gold", gold), ("context", ctx))
        parts = dict.fromkeys(
            role_status(status, ref)
            for ref, status in sides
            if isinstance(status, str) and status != "ok"
        )
        out.append(", ".join(parts) or None)
    return pd.Series(out, index=statuses.index, dtype=object)


@dataclass(frozen=True)
class RunComparison:
    """A new run against a baseline on the questions both answered.

    Attributes
    ----------
    baseline, new
        The two runs.
    signature
        The scores' signature (without alpha); ``alpha`` the blend (``None``: as stored).
    empty
        How answers with an empty or unparseable KG count (``zero`` or ``drop``).
    differences
        :class:`PairedDifference` of each of :data:`SCORES`, by name.
    deltas
        :func:`question_deltas` with A the baseline and B the new run.
    unscorable
        The questions both runs answered that the baseline could score and the new run cannot
        (:data:`UNSCORABLE_COLUMNS`; ``baseline`` and ``new`` say why, ``None``: scorable).
    resamples, seed
        The bootstrap's settings.
    """

    baseline: RunInfo
    new: RunInfo
    signature: str
    alpha: float | None
    empty: EmptyPolicy
    differences: dict[str, PairedDifference]
    deltas: pd.DataFrame
    unscorable: pd.DataFrame
    resamples: int
    seed: int

    @property
    def shared(self) -> int:
        """Questions compared (both runs have a score for them)."""
        return len(self.deltas)


def compare_runs(
    store: Store,
    new: str | int,
    baseline: str | int,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
    confidence: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
) -> RunComparison:
    """Compare run ``new`` with run ``baseline`` (ids or display names) on shared questions.

    Both runs must be of one dataset and scored under ``signature`` (default: the latest).
    With ``empty="drop"`` questions where either run's KG is empty or unparseable are left
    out of the means (they still count in :attr:`RunComparison.unscorable`).

    Raises
    ------
    RunSelectionError
        If a run is unknown or its name ambiguous.
    ComparisonError
        If the runs are one run, of other datasets, one of them has no score under the
        signature, or no question is scored in both.
    ConfigError
        If nothing is scored, ``signature`` is unknown or ``empty`` is not zero or drop.
    """
    check_empty_policy(empty)
    old_run, new_run = find_run(store, baseline), find_run(store, new)
    if old_run.run_id == new_run.run_id:
        raise ComparisonError(f"--run and --baseline name one run: {new_run.label()}")
    if old_run.dataset != new_run.dataset:
        raise ComparisonError(
            f"the runs answer other datasets ({new_run.dataset} and {old_run.dataset}); "
            "compare runs of one dataset"
        )
    resolved = resolve_signature(store, signature)
    if resolved is None:
        raise ComparisonError(f"nothing is scored in {store.path}: run `s3kg score` first")
    ids = [old_run.run_id, new_run.run_id]
    with store.connect() as con:
        components = queries.scored_components(con, resolved, ids)  # only these two runs
        statuses = queries.answer_statuses(con, resolved)
        questions = queries.item_texts(con)
    statuses = statuses[statuses["run_id"].isin(ids)].reset_index(drop=True)
    for run in (new_run, old_run):
        if not (components["run_id"] == run.run_id).any():
            raise ComparisonError(
                f"run {run.label()} has no score under signature {resolved}; score it with "
                "the same settings (`s3kg score`) or pass --signature"
            )
    frame = reblend(components, alpha)
    if empty == "drop":
        frame = frame[(frame["gold_status"] == "ok") & (frame["ctx_status"] == "ok")]
    deltas = question_deltas(frame, old_run.run_id, new_run.run_id, questions)
    if deltas.empty:
        raise ComparisonError(
            f"no question is scored in both runs ({new_run.label()}; {old_run.label()})"
        )
    differences = {
        score: paired_bootstrap(
            deltas[f"{score}_b"].to_numpy(),
            deltas[f"{score}_a"].to_numpy(),
            metric=score,
            confidence=confidence,
            resamples=resamples,
            seed=seed,
        )
        for score in SCORES
    }
    return RunComparison(
        baseline=old_run,
        new=new_run,
        signature=resolved,
        alpha=alpha,
        empty=empty,
        differences=differences,
        deltas=deltas,
        unscorable=_became_unscorable(statuses, components, old_run, new_run, questions),
        resamples=resamples,
        seed=seed,
    )


def _became_unscorable(
    statuses: pd.DataFrame,
    scored: pd.DataFrame,
    old_run: RunInfo,
    new_run: RunInfo,
    questions: pd.DataFrame,
) -> pd.DataFrame:
    why = statuses[["run_id", "item_id"]].assign(why=scorability(statuses, scored))
    old = why[why["run_id"] == old_run.run_id].drop(columns="run_id")
    new = why[why["run_id"] == new_run.run_id].drop(columns="run_id")
    both = old.merge(new, on="item_id", suffixes=("_old", "_new"))
    lost = both[both["why_old"].isna() & both["why_new"].notna()]
    lost = lost.merge(questions[["item_id", "ext_id", "question"]], on="item_id", how="left")
    out = pd.DataFrame(
        {
            "item_id": lost["item_id"].astype(int),
            "ext_id": lost["ext_id"].astype(str),
            "question": lost["question"].fillna("").astype(str),
            "baseline": lost["why_old"],
            "new": lost["why_new"],
        }
    )
    return out.sort_values("item_id", kind="stable").reset_index(drop=True)
