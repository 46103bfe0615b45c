"""Every interval the project computes, with one default number of resamples.

Four kinds of interval, each written once:

- :func:`paired_bootstrap` and :func:`mean_interval`: the mean of per-question differences (two
  runs compared on their shared questions) or of one run's values, with a seeded BCa bootstrap
  interval (:func:`scipy.stats.bootstrap`; the percentile interval where BCa is undefined) or,
  from ``normal_from`` values, its normal approximation;
- :func:`normal_interval`: a mean plus or minus z standard errors, from the mean, the sample
  standard deviation and the count alone (the leaderboard's interval of a large run);
  :func:`run_interval` picks between it and :func:`mean_interval` for a run's mean
  (:data:`NORMAL_FROM`): the one interval of a run's mean on every surface (the Overview, its
  CSV, ``s3kg cus``, ``s3kg report``);
- :func:`percentile_bootstrap`: the percentile interval of any statistic of units resampled
  with replacement, within groups (a metric's two classes,
  :func:`s3kg_core.evaluation.metrics.bootstrap_ci`) or over all units (annotators'
  agreement, :mod:`s3kg_core.annotation.agreement`, and TAU's quality,
  :mod:`s3kg_core.annotation.quality`'s F1);
- :func:`proportion_interval`: a proportion of yes/no outcomes (TAU's precision and recall, the
  precision of each TAU category against the people's labels) with Wilson's score interval
  (:func:`scipy.stats.binomtest`'s ``proportion_ci``), which stays honest for a handful of
  outcomes where a bootstrap of three confirmations says "1.000 to 1.000".

Every bootstrap is seeded: the same inputs and seed give the same interval.
:data:`DEFAULT_RESAMPLES` is the default of each; a caller that shows a figure computed with
another count passes it. A run's mean and two runs' paired difference switch to the normal
approximation from :data:`NORMAL_FROM` values wherever they are shown (the leaderboard, the
report, ``s3kg cus``, ``s3kg check``, ``s3kg compare``), so a run and a pair of runs have one
interval each.

References
----------
.. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall, 1993:
   the bootstrap of a mean and of paired data (ch. 6-7), the percentile interval (ch. 13),
   the BCa interval (ch. 14).
.. [2] B. Efron, "Better Bootstrap Confidence Intervals", *Journal of the American Statistical
   Association* 82 (397), 1987, pp. 171-185: the BCa interval.
.. [3] A. C. Davison and D. V. Hinkley, *Bootstrap Methods and their Application*, Cambridge
   University Press, 1997: stratified resampling (ch. 3.2).
.. [4] E. B. Wilson, "Probable Inference, the Law of Succession, and Statistical Inference",
   *Journal of the American Statistical Association* 22 (158), 1927, pp. 209-212.
.. [5] L. D. Brown, T. T. Cai and A. DasGupta, "Interval Estimation for a Binomial
   Proportion", *Statistical Science* 16 (2), 2001, pp. 101-133: Wilson's interval for small n.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from .errors import ConfigError

__all__ = [
    "DEFAULT_RESAMPLES",
    "NORMAL_FROM",
    "BootstrapInterval",
    "MeanInterval",
    "PairedDifference",
    "mean_interval",
    "normal_interval",
    "paired_bootstrap",
    "percentile_bootstrap",
    "proportion_interval",
    "run_interval",
]

DEFAULT_RESAMPLES = 9999
"""The bootstrap resamples of every interval unless a caller says otherwise (scipy's default)."""

NORMAL_FROM = 1000
"""From this many values a run's mean (:func:`run_interval`) and a paired difference (the
``normal_from`` its callers pass to :func:`paired_bootstrap`) take the normal approximation of
the bootstrap's interval, below it the bootstrap's: a BCa bootstrap of a few thousand values per
run would cost seconds at every alpha, and agrees with it to the third decimal there."""

_BATCH_CELLS = 2_000_000  # resamples x values held in memory at once by the BCa bootstrap
_CHUNK = 250  # resamples handed to a batched statistic at once


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


class MeanInterval(NamedTuple):
    """A mean with its interval: ``(mean, low, high)``."""

    mean: float
    low: float
    high: float


class BootstrapInterval(NamedTuple):
    """A percentile interval and the resamples it rests on: ``(low, high, resamples)``.

    ``resamples`` counts those on which the statistic was defined (not NaN).
    """

    low: float
    high: float
    resamples: int


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ConfigError(f"confidence must be between 0 and 1; got {confidence}")


def normal_interval(
    mean: float, std: float, n: int, *, confidence: float = 0.95
) -> tuple[float, float]:
    """The normal approximation of a mean's interval: ``mean`` plus or minus z standard errors.

    ``std`` is the values' sample standard deviation (``ddof=1``) and ``n`` their number; with
    fewer than two values there is no interval (NaN). For a few thousand values the bootstrap's
    interval of the mean agrees with it to the third decimal, at no cost.

    Parameters
    ----------
    mean, std, n
        The values' mean, sample standard deviation and number.
    confidence
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    tuple of float
        ``(low, high)``.

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
    _check_confidence(confidence)
    if n < 2:
        return math.nan, math.nan
    half = NormalDist().inv_cdf(0.5 + confidence / 2) * float(std) / math.sqrt(n)
    return float(mean) - half, float(mean) + half


def _mean_bootstrap(
    x: npt.NDArray[np.float64],
    confidence: float,
    resamples: int,
    seed: int,
    normal_from: int | None,
) -> tuple[float, float, float, str]:
    """``(mean, low, high, method)`` of the values ``x`` (at least one, confidence checked)."""
    point = float(x.mean())
    low = high = math.nan
    method = "none"
    if x.size >= 2 and float(np.ptp(x)) == 0.0:
        low = high = point
        method = "constant"
    elif normal_from is not None and x.size >= max(2, normal_from):
        low, high = normal_interval(point, float(x.std(ddof=1)), int(x.size), confidence=confidence)
        method = "normal"
    elif x.size >= 2:
        from scipy import stats  # here: the dashboard imports this module, rarely this function

        for method in ("BCa", "percentile"):
            # a degenerate BCa (ties, NaN) is no news to the user: its NaN interval moves on to
            # the percentile one below; scipy's DegenerateDataWarning would reach stderr
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", stats.DegenerateDataWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                result = stats.bootstrap(
                    (x,),
                    np.mean,
                    vectorized=True,
                    n_resamples=resamples,
                    batch=max(1, _BATCH_CELLS // x.size),
                    confidence_level=confidence,
                    method=method,
                    rng=np.random.default_rng(seed),
                )
            low, high = (float(v) for v in result.confidence_interval)
            if math.isfinite(low) and math.isfinite(high):
                break
    return point, low, high, method


def mean_interval(
    values: Sequence[float] | npt.NDArray[np.floating[Any]],
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> MeanInterval:
    """The mean of ``values`` and its seeded bootstrap interval ``(mean, low, high)``.

    scipy's BCa interval of the mean (the percentile one where BCa is undefined); the mean
    itself when every value is equal (a zero-width interval); NaN bounds with one value. The
    same interval as :func:`paired_bootstrap` of ``values`` against zeros.

    Parameters
    ----------
    values
        The values (at least one).
    confidence
        The two-sided confidence level, in (0, 1).
    resamples
        Bootstrap resamples (every run's interval, :func:`run_interval`, takes the default).
    seed
        Seeds the resampling.

    Returns
    -------
    MeanInterval

    Raises
    ------
    ConfigError
        If ``values`` is empty or ``confidence`` is not in (0, 1).

    Examples
    --------
    >>> mean, low, high = mean_interval([0.2, 0.4, 0.6, 0.8], resamples=999)
    >>> round(mean, 2), low < mean < high
    (0.5, True)
    >>> mean_interval([0.3, 0.3])
    MeanInterval(mean=0.3, low=0.3, high=0.3)
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ConfigError(f"a mean's interval needs one or more values; got shape {x.shape}")
    _check_confidence(confidence)
    mean, low, high, _ = _mean_bootstrap(x, confidence, resamples, seed, None)
    return MeanInterval(mean, low, high)


def run_interval(
    n: int,
    mean: float,
    std: float,
    values: Sequence[float] | npt.NDArray[np.floating[Any]] | None,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> tuple[float, float]:
    """The interval of a run's mean score: the one every surface shows for that run.

    From ``normal_from`` answers (``None``: never) :func:`normal_interval` of the run's
    ``mean``, sample standard deviation ``std`` and count ``n`` (what a ``GROUP BY`` gives:
    the answers are not read); below it :func:`mean_interval` of the run's ``values`` (in item
    order: the resamples are drawn by position). The Overview's leaderboard and its CSV
    (:func:`s3kg_core.analysis.leaderboard.rank_summaries`), ``s3kg cus`` and ``s3kg report``
    call it with these defaults, so one run has one interval.

    Parameters
    ----------
    n, mean, std
        The run's answers, their mean and sample standard deviation (``ddof=1``).
    values
        The run's values, in item order; needed below ``normal_from`` answers only.
    confidence, resamples, seed
        As :func:`mean_interval`'s.
    normal_from
        From this many answers, the normal approximation (``None``: never).

    Returns
    -------
    tuple of float
        ``(low, high)``: NaN with fewer than two answers.

    Raises
    ------
    ConfigError
        If the values are needed and missing or not ``n`` of them, or ``confidence`` is not in
        (0, 1).

    Examples
    --------
    >>> values = [0.2, 0.4, 0.6, 0.8]
    >>> run_interval(4, 0.5, 0.258, values, resamples=999) == mean_interval(
    ...     values, resamples=999)[1:]
    True
    >>> [round(v, 4) for v in run_interval(1600, 0.5, 0.2, None)]
    [0.4902, 0.5098]
    """
    if normal_from is not None and n >= normal_from:
        return normal_interval(mean, std, n, confidence=confidence)
    if values is None or len(values) != n:
        got = "none" if values is None else str(len(values))
        raise ConfigError(f"a run of {n} answers needs its {n} values for a bootstrap; got {got}")
    _, low, high = mean_interval(values, confidence=confidence, resamples=resamples, seed=seed)
    return low, high


def paired_bootstrap(
    new: Sequence[float] | npt.NDArray[np.floating[Any]],
    baseline: Sequence[float] | npt.NDArray[np.floating[Any]],
    *,
    metric: str = "cus",
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
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

    Parameters
    ----------
    new, baseline
        One value per question, in the same order.
    metric
        The score's name, recorded in the result.
    confidence
        The two-sided confidence level, in (0, 1).
    resamples
        Bootstrap resamples.
    seed
        Seeds the resampling.
    normal_from
        From this many questions, the normal approximation (``None``: never).

    Returns
    -------
    PairedDifference

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
    _check_confidence(confidence)
    point, low, high, method = _mean_bootstrap(a - b, confidence, resamples, seed, normal_from)
    return PairedDifference(
        metric, int(a.size), float(b.mean()), float(a.mean()), point, low, high, confidence, method
    )


def percentile_bootstrap(
    statistic: Callable[..., float],
    sizes: int | Sequence[int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    confidence: float = 0.95,
    batched: Callable[..., npt.NDArray[np.float64]] | None = None,
) -> BootstrapInterval:
    """The percentile interval of ``statistic`` over units resampled with replacement.

    The units come in groups (strata) of the given ``sizes``; each resample draws, group by
    group, as many units from each group as it has (indices into the group, from
    :func:`numpy.random.default_rng` seeded by ``seed``, one resample after the other), so a
    resample keeps the groups' sizes: a metric of two classes resamples each class. Resamples
    on which the statistic is NaN (undefined) are left out and not counted. The interval is the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the rest.

    Parameters
    ----------
    statistic
        ``statistic(*indices)``: one array of indices per group, the statistic of the resample.
    sizes
        The number of units (one group), or of each group's units.
    resamples
        Bootstrap resamples (at least 1).
    seed
        Seeds the resampling.
    confidence
        The interval's coverage, in (0, 1).
    batched
        ``batched(*index_matrices)``: the statistic of many resamples at once, one row per
        resample (up to 250 rows a call), for a statistic that vectorises; it gives the same
        values as ``statistic`` on each row.

    Returns
    -------
    BootstrapInterval
        ``(low, high, resamples)``; ``(nan, nan, 0)`` when the statistic is defined on no
        resample.

    Raises
    ------
    ConfigError
        If ``resamples`` is not an integer >= 1, a group is empty or ``confidence`` is not in
        (0, 1).

    Examples
    --------
    >>> values = np.array([0.0, 1.0, 1.0, 1.0])
    >>> low, high, n = percentile_bootstrap(lambda i: float(values[i].mean()), 4, resamples=200)
    >>> bool(0.0 <= low <= 0.75 <= high <= 1.0), n
    (True, 200)
    """
    if isinstance(resamples, bool) or not isinstance(resamples, int | np.integer) or resamples < 1:
        raise ConfigError(f"resamples must be an integer >= 1; got {resamples!r}")
    _check_confidence(confidence)
    groups = [int(sizes)] if isinstance(sizes, int | np.integer) else [int(s) for s in sizes]
    if not groups or min(groups) < 1:
        raise ConfigError(f"every group needs one or more units; got sizes {groups}")
    rng = np.random.default_rng(seed)
    values = np.empty(int(resamples), dtype=np.float64)
    for lo in range(0, int(resamples), _CHUNK):
        rows = min(_CHUNK, int(resamples) - lo)
        drawn = [np.empty((rows, size), dtype=np.int64) for size in groups]
        for i in range(rows):  # group after group, resample after resample
            for matrix, size in zip(drawn, groups, strict=True):
                matrix[i] = rng.integers(0, size, size=size)
        if batched is not None:
            values[lo : lo + rows] = batched(*drawn)
        else:
            values[lo : lo + rows] = [
                float(statistic(*(matrix[i] for matrix in drawn))) for i in range(rows)
            ]
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return BootstrapInterval(math.nan, math.nan, 0)
    tail = (1.0 - float(confidence)) / 2.0
    low, high = np.quantile(defined, [tail, 1.0 - tail])
    return BootstrapInterval(float(low), float(high), int(defined.size))


def proportion_interval(successes: int, n: int, *, confidence: float = 0.95) -> MeanInterval:
    """The proportion ``successes / n`` and Wilson's score interval ``(mean, low, high)``.

    Wilson's interval [4]_ (scipy's :func:`~scipy.stats.binomtest`, ``proportion_ci``): never
    outside [0, 1], never zero-width, and close to its nominal coverage from a few outcomes on
    [5]_, where a percentile bootstrap of all-equal outcomes gives a zero-width interval. No
    resampling, so no seed. With ``n = 0`` the proportion is undefined: NaN throughout.

    Parameters
    ----------
    successes, n
        The outcomes that count (``0 <= successes <= n``) and all outcomes.
    confidence
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    MeanInterval

    Raises
    ------
    ConfigError
        If the counts are not integers with ``0 <= successes <= n``, or ``confidence`` is not
        in (0, 1).

    Examples
    --------
    >>> p, low, high = proportion_interval(3, 3)
    >>> p, round(low, 3), high
    (1.0, 0.439, 1.0)
    >>> [round(v, 3) for v in proportion_interval(6, 8)]
    [0.75, 0.409, 0.929]
    >>> proportion_interval(0, 0)
    MeanInterval(mean=nan, low=nan, high=nan)
    """
    counts = (successes, n)
    if any(isinstance(c, bool) or not isinstance(c, int | np.integer) for c in counts) or not (
        0 <= successes <= n
    ):
        raise ConfigError(f"a proportion needs counts 0 <= successes <= n; got {successes} of {n}")
    _check_confidence(confidence)
    if n == 0:
        return MeanInterval(math.nan, math.nan, math.nan)
    from scipy import stats  # here: the dashboard imports this module, rarely this function

    found = stats.binomtest(int(successes), int(n)).proportion_ci(
        confidence_level=confidence, method="wilson"
    )
    low = min(max(float(found.low), 0.0), 1.0)
    high = min(max(float(found.high), 0.0), 1.0)
    return MeanInterval(int(successes) / int(n), low, high)
