"""Metrics of a similarity score against binary labels: max-F1, AUROC, bootstrap CIs, alpha sweeps.

Every function checks its input the same way and raises a named error instead of returning NaN:
scores and labels of equal, non-zero length; finite scores; labels of 0 and 1 only, with both
classes present (:class:`~s3kg_core.errors.InputFormatError`). Options out of range (``n``,
``level``, ``mode``, ``by``, an alpha) raise :class:`~s3kg_core.errors.ConfigError`.

References
----------
.. [1] S3KG: "Do LLMs Understand Context? A KG-Based Evaluation Framework" (2026), Table 2:
   max-F1 over a threshold sweep and AUROC on labelled pair sets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple, SupportsFloat

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, InputFormatError
from ..scoring.result import MODES, Mode, blend

__all__ = [
    "DEFAULT_ALPHAS",
    "AlphaPoint",
    "ConfidenceInterval",
    "ThresholdF1",
    "alpha_sweep",
    "auroc",
    "best_alpha",
    "bootstrap_ci",
    "max_f1",
]

DEFAULT_ALPHAS: tuple[float, ...] = tuple(float(a) for a in np.round(np.arange(0, 1.01, 0.1), 1))
"""0.0, 0.1, ..., 1.0."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class ThresholdF1:
    """The best F1 of the positive class over thresholds, and where it is reached.

    ``float(result)`` is the F1, so :func:`max_f1` can be handed to :func:`bootstrap_ci`.

    Attributes
    ----------
    f1, precision, recall
        Of the prediction ``score >= threshold``.
    threshold
        The score used as the threshold (one of the input scores).
    """

    f1: float
    threshold: float
    precision: float
    recall: float

    def __float__(self) -> float:
        return self.f1

    def to_dict(self) -> dict[str, float]:
        """Return ``{"f1": ..., "threshold": ..., "precision": ..., "recall": ...}``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ThresholdF1:
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: float(data[k]) for k in ("f1", "threshold", "precision", "recall")})


@dataclass(frozen=True, slots=True)
class AlphaPoint:
    """Max-F1 (with its threshold) and AUROC of the scores blended at one alpha."""

    alpha: float
    f1: float
    threshold: float
    auroc: float

    def to_dict(self) -> dict[str, float]:
        """Return ``{"alpha": ..., "f1": ..., "threshold": ..., "auroc": ...}``."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AlphaPoint:
        """Inverse of :meth:`to_dict`."""
        return cls(**{k: float(data[k]) for k in ("alpha", "f1", "threshold", "auroc")})


class ConfidenceInterval(NamedTuple):
    """A two-sided percentile interval; unpacks as ``low, high``."""

    low: float
    high: float


# -- input checks ---------------------------------------------------------------------------------


def _as_scores(scores: npt.ArrayLike, what: str = "scores") -> FloatArray:
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputFormatError(f"{what} must be numbers; {exc}") from exc
    if s.ndim != 1:
        raise InputFormatError(f"{what} must be one-dimensional; got shape {s.shape}")
    n_nan = int(np.isnan(s).sum())
    if n_nan:
        raise InputFormatError(
            f"{n_nan} of {len(s)} {what} are NaN; score or drop those pairs before measuring"
        )
    n_inf = int(np.isinf(s).sum())
    if n_inf:
        raise InputFormatError(f"{n_inf} of {len(s)} {what} are infinite; scores must be finite")
    return s


def _as_labels(labels: npt.ArrayLike, n: int) -> IntArray:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise InputFormatError(f"labels must be one-dimensional; got shape {y.shape}")
    if len(y) != n:
        raise InputFormatError(f"got {n} scores but {len(y)} labels; give one label per score")
    if n == 0:
        raise InputFormatError("no scores to measure: scores and labels are empty")
    try:
        binary = bool(np.isin(y, (0, 1)).all())
    except TypeError:
        binary = False
    if not binary:
        found = sorted({str(v) for v in y.tolist()})[:5]
        raise InputFormatError(f"labels must be 0 or 1 (or booleans); found values {found}")
    out = y.astype(np.int64)
    n_pos = int(out.sum())
    if n_pos in (0, n):
        only = "positive (1)" if n_pos else "negative (0)"
        raise InputFormatError(
            f"all {n} labels are {only}: max-F1, AUROC and their intervals need both classes"
        )
    return out


def _checked(scores: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[FloatArray, IntArray]:
    s = _as_scores(scores)
    return s, _as_labels(labels, len(s))


# -- metrics --------------------------------------------------------------------------------------


def _max_f1(s: FloatArray, y: IntArray) -> ThresholdF1:
    n_pos = int(y.sum())
    order = np.argsort(-s, kind="mergesort")
    s_sorted, y_sorted = s[order], y[order]
    tp = np.cumsum(y_sorted)
    predicted = np.arange(1, len(s) + 1)
    # a threshold admits every pair with an equal score: keep the last index of each tie run
    last = np.r_[s_sorted[1:] != s_sorted[:-1], True]
    tp, predicted, thresholds = tp[last], predicted[last], s_sorted[last]
    f1 = 2.0 * tp / (predicted + n_pos)
    best = int(np.argmax(f1))  # first maximum: the highest threshold among equals
    return ThresholdF1(
        f1=float(f1[best]),
        threshold=float(thresholds[best]),
        precision=float(tp[best] / predicted[best]),
        recall=float(tp[best] / n_pos),
    )


def max_f1(scores: npt.ArrayLike, labels: npt.ArrayLike) -> ThresholdF1:
    """Best F1 of the positive class over every threshold, predicting 1 when ``score >= t``.

    Every distinct score is tried as ``t``; pairs with equal scores are always predicted
    together, so ties never split. Among thresholds with the same F1 the highest is returned.

    Parameters
    ----------
    scores
        One similarity score per pair (higher means more likely positive).
    labels
        0 or 1 per pair; both classes must occur.

    Returns
    -------
    ThresholdF1
        F1, threshold, precision and recall at the best threshold.

    Raises
    ------
    InputFormatError
        On mismatched lengths, NaN or infinite scores, non-binary or single-class labels.

    Examples
    --------
    >>> max_f1([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
    ThresholdF1(f1=1.0, threshold=0.8, precision=1.0, recall=1.0)
    >>> r = max_f1([0.5, 0.5, 0.5, 0.5], [1, 0, 0, 0])  # all tied: predict all positive
    >>> round(r.f1, 3), r.threshold, r.precision, r.recall
    (0.4, 0.5, 0.25, 1.0)
    """
    return _max_f1(*_checked(scores, labels))


def auroc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """Area under the ROC curve (:func:`sklearn.metrics.roc_auc_score`); ties count one half.

    Parameters
    ----------
    scores
        One similarity score per pair (higher means more likely positive).
    labels
        0 or 1 per pair; both classes must occur.

    Returns
    -------
    float
        1.0 when every positive outscores every negative, 0.0 when the order is reversed,
        0.5 when all scores are equal.

    Raises
    ------
    InputFormatError
        On mismatched lengths, NaN or infinite scores, non-binary or single-class labels.

    Examples
    --------
    >>> auroc([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
    1.0
    >>> auroc([0.9, 0.8, 0.3, 0.1], [0, 0, 1, 1])
    0.0
    >>> auroc([0.7, 0.7, 0.7], [1, 0, 1])
    0.5
    """
    from sklearn.metrics import roc_auc_score

    s, y = _checked(scores, labels)
    return float(roc_auc_score(y, s))


def _auroc_ranks(s: FloatArray, y: IntArray) -> float:
    """AUROC as the Mann-Whitney statistic with mid-ranks (ties count one half), unchecked."""
    order = np.argsort(s, kind="mergesort")
    s_sorted = s[order]
    starts = np.r_[True, s_sorted[1:] != s_sorted[:-1]]
    first = np.flatnonzero(starts)
    ends = np.r_[first[1:], len(s)]
    mid_rank = (first + 1 + ends) / 2.0  # mean of the 1-based ranks first+1 .. ends
    ranks = np.empty(len(s), dtype=np.float64)
    ranks[order] = mid_rank[np.cumsum(starts) - 1]
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


# resamples are already checked: the library's own metrics skip the checks (and sklearn's)
_UNCHECKED: dict[Callable[..., Any], Callable[[FloatArray, IntArray], SupportsFloat]] = {}


def bootstrap_ci(
    metric_fn: Callable[[FloatArray, IntArray], SupportsFloat],
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    n: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of a metric, resampling pairs within each class.

    Each of the ``n`` resamples draws, with replacement, as many positives from the positives
    and as many negatives from the negatives as the set has, so every resample keeps the class
    balance and both classes (a metric such as AUROC is always defined).

    Parameters
    ----------
    metric_fn
        ``metric_fn(scores, labels)`` returning a number, or anything ``float()`` accepts
        (:func:`max_f1`'s result gives its F1). For :func:`auroc` and :func:`max_f1` the
        resamples skip the input checks (done once on the whole set) and AUROC is computed from
        mid-ranks, which equals :func:`sklearn.metrics.roc_auc_score` up to rounding (~1e-15)
        and is about 50 times faster.
    scores, labels
        As for :func:`max_f1`.
    n
        Number of resamples (at least 1).
    seed
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same interval.
    level
        Coverage of the interval, in (0, 1).

    Returns
    -------
    ConfidenceInterval
        ``(low, high)``: the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the
        resampled metric.

    Raises
    ------
    InputFormatError
        On bad scores or labels (see :func:`max_f1`), or when ``metric_fn`` returns NaN.
    ConfigError
        If ``n < 1`` or ``level`` is not in (0, 1).

    Examples
    --------
    >>> scores = [0.9, 0.8, 0.7, 0.6, 0.4, 0.3, 0.65, 0.2]
    >>> labels = [1, 1, 1, 0, 1, 0, 0, 0]
    >>> low, high = bootstrap_ci(auroc, scores, labels, n=200, seed=1)
    >>> round(low, 4), round(high, 4)  # the same for every run with seed=1
    (0.6219, 1.0)
    >>> bool(low <= auroc(scores, labels) <= high)
    True
    """
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ConfigError(f"n (number of resamples) must be an integer >= 1; got {n!r}")
    if not 0.0 < float(level) < 1.0:
        raise ConfigError(f"level must be in (0, 1), e.g. 0.95; got {level!r}")
    s, y = _checked(scores, labels)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    y_resampled = np.r_[np.ones(len(pos), np.int64), np.zeros(len(neg), np.int64)]
    try:
        fn = _UNCHECKED.get(metric_fn, metric_fn)
    except TypeError:  # an unhashable callable
        fn = metric_fn
    rng = np.random.default_rng(seed)
    values = np.empty(int(n), dtype=np.float64)
    for i in range(int(n)):
        idx = np.r_[
            pos[rng.integers(0, len(pos), size=len(pos))],
            neg[rng.integers(0, len(neg), size=len(neg))],
        ]
        values[i] = float(fn(s[idx], y_resampled))
    n_nan = int(np.isnan(values).sum())
    if n_nan:
        raise InputFormatError(f"metric_fn returned NaN on {n_nan} of {n} resamples")
    tail = (1.0 - float(level)) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return ConfidenceInterval(float(low), float(high))


_UNCHECKED.update({auroc: _auroc_ranks, max_f1: _max_f1})


def alpha_sweep(
    s_wl: npt.ArrayLike,
    s_sbert: npt.ArrayLike,
    labels: npt.ArrayLike,
    mode: Mode,
    alphas: Sequence[float] | npt.NDArray[np.floating[Any]] = DEFAULT_ALPHAS,
) -> list[AlphaPoint]:
    """Max-F1 and AUROC of the S3KG blend at each alpha, from stored components.

    The blend is :func:`s3kg_core.scoring.result.blend`: ``(1 - alpha) * s_wl + alpha * s_sbert`` in
    ``paper`` mode, ``alpha * s_wl + (1 - alpha) * s_sbert`` in ``kgx`` mode, applied to whole
    arrays; nothing is re-embedded.

    Parameters
    ----------
    s_wl, s_sbert
        The structural and embedding components, one per pair.
    labels
        0 or 1 per pair; both classes must occur.
    mode
        ``"paper"`` or ``"kgx"``: which side alpha weights.
    alphas
        Alphas in [0, 1], evaluated in the order given (default 0.0, 0.1, ..., 1.0).

    Returns
    -------
    list of AlphaPoint
        One point per alpha, in the order of ``alphas``.

    Raises
    ------
    InputFormatError
        On bad components or labels (see :func:`max_f1`).
    ConfigError
        On an unknown mode, an alpha outside [0, 1], or no alphas.

    Examples
    --------
    >>> wl, sb, y = [0.9, 0.1, 0.2, 0.0], [0.1, 0.2, 0.9, 0.8], [1, 0, 1, 0]
    >>> points = alpha_sweep(wl, sb, y, "paper", alphas=[0.0, 1.0])
    >>> [(p.alpha, round(p.f1, 3), p.auroc) for p in points]
    [(0.0, 1.0, 1.0), (1.0, 0.667, 0.5)]
    >>> [p.auroc for p in alpha_sweep(wl, sb, y, "kgx", alphas=[0.0, 1.0])]
    [0.5, 1.0]
    """
    from sklearn.metrics import roc_auc_score

    if mode not in MODES:
        raise ConfigError(f"mode must be one of {MODES}; got {mode!r}")
    grid = [float(a) for a in np.asarray(alphas, dtype=np.float64).ravel()]
    if not grid:
        raise ConfigError("alphas is empty; give at least one alpha in [0, 1]")
    wl = _as_scores(s_wl, "s_wl values")
    sb = _as_scores(s_sbert, "s_sbert values")
    if len(wl) != len(sb):
        raise InputFormatError(f"got {len(wl)} s_wl values but {len(sb)} s_sbert values")
    y = _as_labels(labels, len(wl))
    points = []
    for alpha in grid:
        scores = np.asarray(blend(wl, sb, alpha, mode), dtype=np.float64)
        best = _max_f1(scores, y)
        points.append(
            AlphaPoint(
                alpha=alpha,
                f1=best.f1,
                threshold=best.threshold,
                auroc=float(roc_auc_score(y, scores)),
            )
        )
    return points


def best_alpha(points: Sequence[AlphaPoint], by: Literal["f1", "auroc"] = "f1") -> AlphaPoint:
    """The point with the highest ``by`` metric; ties go to the other metric, then to the first.

    Parameters
    ----------
    points
        The result of :func:`alpha_sweep`.
    by
        ``"f1"`` or ``"auroc"``.

    Raises
    ------
    ConfigError
        If ``points`` is empty or ``by`` is unknown.

    Examples
    --------
    >>> pts = [AlphaPoint(0.0, 0.8, 0.4, 0.7), AlphaPoint(0.5, 0.8, 0.5, 0.9),
    ...        AlphaPoint(1.0, 0.7, 0.6, 0.95)]
    >>> best_alpha(pts).alpha, best_alpha(pts, by="auroc").alpha
    (0.5, 1.0)
    """
    if by not in ("f1", "auroc"):
        raise ConfigError(f"by must be 'f1' or 'auroc'; got {by!r}")
    if not points:
        raise ConfigError("no alpha points to choose from; run alpha_sweep first")
    other = "auroc" if by == "f1" else "f1"
    return max(points, key=lambda p: (getattr(p, by), getattr(p, other)))
