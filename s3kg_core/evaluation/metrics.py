"""Metrics of scores against binary labels, on scikit-learn and scipy: the project's one home.

Max-F1 (:func:`sklearn.metrics.precision_recall_curve`), AUROC
(:func:`sklearn.metrics.roc_auc_score`), percentile bootstrap intervals resampled per class,
S3KG's alpha sweeps over stored components, balanced accuracy and the threshold chosen on dev
(GraphEval's Table 2), and the thresholded report of a checker's held-out pairs.

Every score metric checks its input the same way and raises a named error instead of returning
NaN: scores and labels of equal, non-zero length; finite scores; labels of 0 and 1 only, with
both classes present (:class:`~s3kg_core.errors.InputFormatError`). Options out of range
(``n``, ``level``, ``mode``, ``by``, an alpha) raise :class:`~s3kg_core.errors.ConfigError`.

References
----------
.. [1] S3KG: "Do LLMs Understand Context? A KG-Based Evaluation Framework" (2026), Table 2:
   max-F1 over a threshold sweep and AUROC on labelled pair sets.
.. [2] Sansford et al., "GraphEval: A Knowledge-Graph Based LLM Hallucination Evaluation
   Framework" (KiL 2024), Table 2: balanced accuracy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple, SupportsFloat

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, InputFormatError
from ..scoring.result import Mode, blend, check_mode
from ..stats import DEFAULT_RESAMPLES, percentile_bootstrap

__all__ = [
    "DEFAULT_ALPHAS",
    "AlphaPoint",
    "ConfidenceInterval",
    "ThresholdF1",
    "alpha_sweep",
    "auroc",
    "balanced_accuracy",
    "best_alpha",
    "best_threshold",
    "bootstrap_ci",
    "max_f1",
    "sweep",
    "threshold_report",
]

DEFAULT_ALPHAS: tuple[float, ...] = tuple(float(a) for a in np.round(np.arange(0, 1.01, 0.1), 1))
"""0.0, 0.1, ..., 1.0."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_F1_TIE = 1e-12
"""F1 values closer than this are a tie (distinct F1s of up to 10^5 pairs differ by ~1e-10)."""


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
    """Max-F1 of checked input, from :func:`sklearn.metrics.precision_recall_curve`."""
    from sklearn.metrics import precision_recall_curve

    precision, recall, thresholds = precision_recall_curve(y, s)
    precision, recall = precision[:-1], recall[:-1]  # the last point (recall 0) has no threshold
    total = precision + recall
    f1 = np.divide(2.0 * precision * recall, total, out=np.zeros_like(total), where=total > 0)
    # thresholds ascend: among F1 values equal up to rounding, the highest threshold wins
    best = int(np.flatnonzero(f1 >= f1.max() - _F1_TIE)[-1])
    return ThresholdF1(
        f1=float(f1[best]),
        threshold=float(thresholds[best]),
        precision=float(precision[best]),
        recall=float(recall[best]),
    )


def max_f1(scores: npt.ArrayLike, labels: npt.ArrayLike) -> ThresholdF1:
    """Best F1 of the positive class over every threshold, predicting 1 when ``score >= t``.

    Every distinct score is tried as ``t`` (:func:`sklearn.metrics.precision_recall_curve`);
    pairs with equal scores are always predicted together, so ties never split. Among
    thresholds with the same F1 the highest is returned.

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


def balanced_accuracy(
    labels: Sequence[int] | npt.NDArray[Any], predicted: Sequence[int] | npt.NDArray[Any]
) -> float:
    """Balanced accuracy of 0/1 predictions (:func:`sklearn.metrics.balanced_accuracy_score`).

    Raises
    ------
    InputFormatError
        If the lengths differ or the labels hold one class only (balanced accuracy is then
        undefined).

    Examples
    --------
    >>> balanced_accuracy([1, 1, 0, 0], [1, 0, 0, 0])
    0.75
    >>> balanced_accuracy([1, 1], [1, 0])
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: balanced accuracy needs both classes; every label is 1
    """
    from sklearn.metrics import balanced_accuracy_score

    if len(labels) != len(predicted):
        raise InputFormatError(f"{len(labels)} labels but {len(predicted)} predictions")
    classes = sorted({int(v) for v in labels})
    if len(classes) < 2:
        raise InputFormatError(
            "balanced accuracy needs both classes; "
            + (f"every label is {classes[0]}" if classes else "there are no labels")
        )
    return float(balanced_accuracy_score(np.asarray(labels), np.asarray(predicted)))


def best_threshold(
    scores: Sequence[float] | FloatArray, labels: Sequence[int] | IntArray, default: float = 0.5
) -> float:
    """The threshold with the best balanced accuracy when ``score > t`` predicts label 0.

    For scores of *un*-support (a checker's probability that an answer is inconsistent, label
    1 = consistent): the candidates are the scores rounded to 4 decimals and ``default``, tried
    from the lowest; ties keep the lowest. Choose it on dev, apply it to test.

    Raises
    ------
    InputFormatError
        As :func:`balanced_accuracy`.

    Examples
    --------
    >>> best_threshold([0.9, 0.7, 0.2, 0.1], [0, 0, 1, 1])
    0.2
    """
    values = [float(s) for s in scores]
    best, where = -1.0, default
    for t in sorted({round(s, 4) for s in values} | {default}):
        b = balanced_accuracy(labels, [0 if s > t else 1 for s in values])
        if b > best + 1e-12:
            best, where = b, t
    return where


def threshold_report(
    labels: Sequence[int] | IntArray,
    scores: Sequence[float] | FloatArray,
    kinds: Sequence[str] = (),
    threshold: float = 0.5,
) -> dict[str, Any]:
    """Accuracy, balanced accuracy and AUROC of ``score > threshold`` predicting label 1.

    Balanced accuracy and AUROC only when both classes occur; with ``kinds`` (one per item),
    the accuracy per kind too. Figures rounded to 4 decimals; ``{"n": 0}`` for no items.

    Examples
    --------
    >>> threshold_report([1, 0, 0], [0.9, 0.8, 0.1], ["support", "swap", "number"])
    {'n': 3, 'accuracy': 0.6667, 'balanced_accuracy': 0.75, 'auroc': 1.0, \
'accuracy_by_kind': {'number': 1.0, 'support': 1.0, 'swap': 0.0}}
    """
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    if len(labels) == 0:
        return {"n": 0}
    y = np.asarray(labels)
    s = np.asarray(scores, dtype=float)
    pred = (s > threshold).astype(int)
    out: dict[str, Any] = {"n": len(y), "accuracy": round(float(accuracy_score(y, pred)), 4)}
    if len(set(y.tolist())) == 2:
        out["balanced_accuracy"] = round(float(balanced_accuracy_score(y, pred)), 4)
        out["auroc"] = round(auroc(s, y), 4)
    if kinds:
        by_kind: dict[str, list[int]] = {}
        for i, kind in enumerate(kinds):
            by_kind.setdefault(kind, []).append(i)
        out["accuracy_by_kind"] = {
            k: round(float(accuracy_score(y[idx], pred[idx])), 4)
            for k, idx in sorted(by_kind.items())
        }
    return out


# -- bootstrap ------------------------------------------------------------------------------------


def _auroc_batch(pos: FloatArray, neg: FloatArray) -> FloatArray:
    """AUROC of each row's resample: the Mann-Whitney U of the positives (scipy), normalised."""
    from scipy.stats import mannwhitneyu

    u: FloatArray = np.asarray(
        mannwhitneyu(pos, neg, axis=1, method="asymptotic").statistic, dtype=np.float64
    )
    out: FloatArray = u / float(pos.shape[1] * neg.shape[1])
    return out


def _max_f1_batch(pos: FloatArray, neg: FloatArray) -> FloatArray:
    """Max-F1 of each row's resample (unchecked: the whole set was checked once)."""
    import sklearn

    y = np.r_[np.ones(pos.shape[1], np.int64), np.zeros(neg.shape[1], np.int64)]
    with sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        return np.array([_max_f1(np.r_[p, n], y).f1 for p, n in zip(pos, neg, strict=True)])


# the library's own metrics run on whole chunks of resamples (and skip the input checks)
_BATCHED: dict[Callable[..., Any], Callable[[FloatArray, FloatArray], FloatArray]] = {}


def _of_classes(
    batch: Callable[[FloatArray, FloatArray], FloatArray], pos: FloatArray, neg: FloatArray
) -> Callable[[IntArray, IntArray], FloatArray]:
    """``batch`` on the scores that rows of resampled indices pick from each class."""
    return lambda p, q: batch(pos[p], neg[q])


def bootstrap_ci(
    metric_fn: Callable[[FloatArray, IntArray], SupportsFloat],
    scores: npt.ArrayLike,
    labels: npt.ArrayLike,
    n: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> ConfidenceInterval:
    """Percentile bootstrap interval of a metric, resampling pairs within each class.

    Each of the ``n`` resamples draws, with replacement, as many positives from the positives
    and as many negatives from the negatives as the set has, so every resample keeps the class
    balance and both classes (a metric such as AUROC is always defined). The resamples are
    drawn from :func:`numpy.random.default_rng` (``seed``), positives then negatives, one
    resample after the other: :func:`s3kg_core.stats.percentile_bootstrap` with the two classes
    as its groups (this function checks the input and picks the metric's batched form).

    Parameters
    ----------
    metric_fn
        ``metric_fn(scores, labels)`` returning a number, or anything ``float()`` accepts
        (:func:`max_f1`'s result gives its F1). :func:`auroc` is computed on many resamples at
        once as the Mann-Whitney U statistic (:func:`scipy.stats.mannwhitneyu`, mid-ranks:
        equal to :func:`sklearn.metrics.roc_auc_score` up to rounding, ~1e-15), and
        :func:`max_f1` without its input checks (done once on the whole set).
    scores, labels
        As for :func:`max_f1`.
    n
        Number of resamples (at least 1; :data:`s3kg_core.stats.DEFAULT_RESAMPLES` by default).
    seed
        The generator's seed; the same seed gives the same interval.
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
    pos, neg = s[y == 1], s[y == 0]
    try:
        fast = _BATCHED.get(metric_fn)
    except TypeError:  # an unhashable callable
        fast = None
    y_resampled = np.r_[np.ones(len(pos), np.int64), np.zeros(len(neg), np.int64)]

    def one(p: IntArray, q: IntArray) -> float:
        return float(metric_fn(np.r_[pos[p], neg[q]], y_resampled))

    interval = percentile_bootstrap(
        one,
        (len(pos), len(neg)),
        resamples=int(n),
        seed=seed,
        confidence=float(level),
        batched=None if fast is None else _of_classes(fast, pos, neg),
    )
    if interval.resamples < n:
        raise InputFormatError(
            f"metric_fn returned NaN on {int(n) - interval.resamples} of {n} resamples"
        )
    return ConfidenceInterval(interval.low, interval.high)


_BATCHED.update({auroc: _auroc_batch, max_f1: _max_f1_batch})


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
    check_mode(mode)
    wl = _as_scores(s_wl, "s_wl values")
    sb = _as_scores(s_sbert, "s_sbert values")
    if len(wl) != len(sb):
        raise InputFormatError(f"got {len(wl)} s_wl values but {len(sb)} s_sbert values")
    return sweep(lambda a: np.asarray(blend(wl, sb, a, mode), dtype=np.float64), labels, alphas)


def sweep(
    scores_at: Callable[[float], npt.ArrayLike],
    labels: npt.ArrayLike,
    alphas: Sequence[float] | npt.NDArray[np.floating[Any]] = DEFAULT_ALPHAS,
) -> list[AlphaPoint]:
    """Max-F1 and AUROC of the scores ``scores_at(alpha)`` gives at each alpha.

    :func:`alpha_sweep` is this for S3KG's blend; any family of scores with one parameter
    (a mean of two blends, their minimum) sweeps the same way.

    Raises
    ------
    InputFormatError
        On bad scores or labels (see :func:`max_f1`).
    ConfigError
        If ``alphas`` is empty.

    Examples
    --------
    >>> pts = sweep(lambda a: [a, 1 - a, 0.5], [1, 0, 1], alphas=[0.0, 1.0])
    >>> [(p.alpha, p.auroc) for p in pts]
    [(0.0, 0.0), (1.0, 1.0)]
    """
    grid = [float(a) for a in np.asarray(alphas, dtype=np.float64).ravel()]
    if not grid:
        raise ConfigError("alphas is empty; give at least one alpha in [0, 1]")
    points = []
    for alpha in grid:
        s, y = _checked(scores_at(alpha), labels)
        best = _max_f1(s, y)
        points.append(
            AlphaPoint(alpha=alpha, f1=best.f1, threshold=best.threshold, auroc=auroc(s, y))
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
