"""Agreement between annotators of triple alignments, and TAU's quality against them.

Chance-corrected agreement (:func:`krippendorff_alpha`, :func:`cohen_kappa`,
:func:`agreement_report`) is computed by maintained libraries (``krippendorff``, scikit-learn's
``cohen_kappa_score``) on :class:`Judgement` rows (one label of one unit by one annotator), each
with a seeded percentile bootstrap interval over the units
(:func:`s3kg_core.stats.percentile_bootstrap`). The verdict log
(:mod:`s3kg_core.annotation.log`) gives the judgements; TAU's precision, recall and F1 against
the final labels are in :mod:`s3kg_core.annotation.quality`.

Examples
--------
>>> labels = [(1, "ann", "confirm"), (1, "bob", "confirm"), (2, "ann", "reject"),
...           (2, "bob", "reject"), (3, "ann", "confirm"), (3, "bob", "reject")]
>>> rows = [Judgement(u, who, v) for u, who, v in labels]
>>> round(krippendorff_alpha(rows, bootstrap=0).value, 3)
0.444
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import krippendorff
import numpy as np

from ..errors import InputFormatError
from ..stats import percentile_bootstrap

__all__ = [
    "Judgement",
    "Reliability",
    "agreement_report",
    "cohen_kappa",
    "krippendorff_alpha",
]


# -- chance-corrected agreement --------------------------------------------------------------


@dataclass(frozen=True)
class Judgement:
    """One annotator's label of one unit (a pair, or a single triple), with the unit's category."""

    unit: Hashable
    annotator: str
    value: str
    category: str | None = None


@dataclass(frozen=True)
class Reliability:
    """A chance-corrected agreement coefficient with its bootstrap interval.

    ``method`` is ``krippendorff_alpha`` (nominal) or ``cohen_kappa``; ``category`` is ``all``
    or the unit category it was computed on; ``units`` counts the units compared (kappa: judged
    by both annotators; alpha: judged by two or more); ``resamples`` the bootstrap resamples on
    which the coefficient was defined. ``value`` is ``nan`` when it is undefined, and
    ``reason`` says why.
    """

    method: str
    category: str
    annotators: tuple[str, ...]
    value: float
    low: float
    high: float
    units: int
    resamples: int
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``nan`` as ``None``)."""
        out = asdict(self)
        out["annotators"] = list(self.annotators)
        for key in ("value", "low", "high"):
            if math.isnan(out[key]):
                out[key] = None
        return out


def _alpha_of(matrix: np.ndarray, domain: Sequence[int]) -> float:
    """Nominal alpha of a coder x unit matrix (``nan`` where undefined)."""
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    values = matrix[:, pairable]
    if not pairable.any() or np.unique(values[~np.isnan(values)]).size < 2:
        return math.nan
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(
            krippendorff.alpha(
                reliability_data=matrix, value_domain=list(domain), level_of_measurement="nominal"
            )
        )


def _estimate(
    what: tuple[str, str, tuple[str, ...]],
    statistic: Callable[[np.ndarray], float],
    n: int,
    reasons: tuple[str, str],
    resampling: tuple[int, int, float],
) -> Reliability:
    """``statistic`` on all ``n`` units with its interval; ``nan`` and the reason why not.

    ``reasons`` says why when there are no units, and when the statistic is undefined on them.
    """
    value = statistic(np.arange(n)) if n else math.nan
    reason = reasons[0] if n == 0 else reasons[1] if math.isnan(value) else ""
    low = high = math.nan
    used = 0
    bootstrap, seed, confidence = resampling
    if n and bootstrap > 0 and not math.isnan(value):
        low, high, used = percentile_bootstrap(
            statistic, n, resamples=bootstrap, seed=seed, confidence=confidence
        )
    return Reliability(*what, value, low, high, n, used, reason)


def _check_judgements(judgements: Iterable[Judgement]) -> list[Judgement]:
    rows = list(judgements)
    seen: set[tuple[Hashable, str]] = set()
    for j in rows:
        if not isinstance(j, Judgement):
            raise InputFormatError(f"agreement needs Judgement rows; got {type(j).__name__}")
        if (j.unit, j.annotator) in seen:
            raise InputFormatError(
                f"annotator {j.annotator!r} labels unit {j.unit!r} twice; give one label each"
            )
        seen.add((j.unit, j.annotator))
    return rows


def krippendorff_alpha(
    judgements: Iterable[Judgement],
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    category: str = "all",
) -> Reliability:
    """Krippendorff's alpha (nominal) of any number of annotators, missing labels allowed.

    Computed by the ``krippendorff`` package; the interval resamples units (seeded).

    Parameters
    ----------
    judgements
        One label per annotator and unit (each annotator labels any subset of the units).
    bootstrap
        Bootstrap resamples (0: no interval).
    seed
        Seeds the resampling.
    confidence
        The interval's coverage.
    category
        A name for the rows given (``all`` by default), recorded in the result.

    Returns
    -------
    Reliability
        ``nan`` with a reason when no unit has two labels, or every label is the same (alpha
        is then undefined: no disagreement is expected by chance).

    Raises
    ------
    InputFormatError
        If an annotator labels a unit twice.

    Examples
    --------
    Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: four
    observers, twelve units, some values missing; nominal alpha 0.743.

    >>> data = {"A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    ...         "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    ...         "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    ...         "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]}
    >>> rows = [Judgement(u, who, str(v)) for who, values in data.items()
    ...         for u, v in enumerate(values) if v is not None]
    >>> round(krippendorff_alpha(rows, bootstrap=0).value, 3)
    0.743
    """
    rows = _check_judgements(judgements)
    annotators = tuple(sorted({j.annotator for j in rows}))
    units = list(dict.fromkeys(j.unit for j in rows))
    domain = sorted({j.value for j in rows})
    matrix = np.full((len(annotators), len(units)), np.nan)
    a_index = {a: i for i, a in enumerate(annotators)}
    u_index = {u: i for i, u in enumerate(units)}
    v_index = {v: i for i, v in enumerate(domain)}
    for j in rows:
        matrix[a_index[j.annotator], u_index[j.unit]] = v_index[j.value]
    pairable = (~np.isnan(matrix)).sum(axis=0) >= 2
    matrix = matrix[:, pairable]
    codes = range(len(domain))
    return _estimate(
        ("krippendorff_alpha", category, annotators),
        lambda idx: _alpha_of(matrix[:, idx], codes),
        int(pairable.sum()),
        (
            "no unit has labels from two annotators",
            "every label is the same, so no disagreement is expected by chance",
        ),
        (bootstrap, seed, confidence),
    )


def _kappa_of(a: np.ndarray, b: np.ndarray, labels: Sequence[int]) -> float:
    if np.unique(np.concatenate([a, b])).size < 2:
        return math.nan
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        from sklearn.metrics import cohen_kappa_score  # 1.5 s to import: only when used

        return float(cohen_kappa_score(a, b, labels=list(labels)))


def cohen_kappa(
    judgements: Iterable[Judgement],
    annotator_a: str,
    annotator_b: str,
    *,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    category: str = "all",
) -> Reliability:
    """Cohen's kappa of two annotators on the units both labelled (scikit-learn).

    Parameters are as :func:`krippendorff_alpha`'s; the interval resamples the shared units.

    Returns
    -------
    Reliability
        ``nan`` with a reason when the two share no unit or both give one and the same label
        throughout (kappa is then undefined).

    Examples
    --------
    The worked example of Cohen's kappa (Wikipedia, "Cohen's kappa"): 50 proposals, both say
    yes to 20 and no to 15, A alone says yes to 5 and B alone to 10; p_o = 0.7, p_e = 0.5,
    kappa = 0.4.

    >>> pairs = ([("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10
    ...          + [("no", "no")] * 15)
    >>> rows = [Judgement(i, who, v) for i, pair in enumerate(pairs)
    ...         for who, v in zip("AB", pair)]
    >>> round(cohen_kappa(rows, "A", "B", bootstrap=0).value, 3)
    0.4
    """
    rows = _check_judgements(judgements)
    domain = sorted({j.value for j in rows})
    v_index = {v: i for i, v in enumerate(domain)}
    of_a = {j.unit: v_index[j.value] for j in rows if j.annotator == annotator_a}
    of_b = {j.unit: v_index[j.value] for j in rows if j.annotator == annotator_b}
    shared = [u for u in of_a if u in of_b]
    a = np.array([of_a[u] for u in shared], dtype=int)
    b = np.array([of_b[u] for u in shared], dtype=int)
    labels = range(len(domain))
    return _estimate(
        ("cohen_kappa", category, (annotator_a, annotator_b)),
        lambda idx: _kappa_of(a[idx], b[idx], labels),
        len(shared),
        (
            f"{annotator_a} and {annotator_b} label no unit in common",
            "both give one and the same label throughout: kappa is undefined",
        ),
        (bootstrap, seed, confidence),
    )


def agreement_report(
    judgements: Iterable[Judgement],
    *,
    categories: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Reliability]:
    """Alpha of all annotators and kappa of every two who share units: overall and per category.

    ``categories`` lists the unit categories to break down by, in order (default: those the
    rows have, sorted); a category no row has is reported with a reason, not left out.

    Examples
    --------
    >>> rows = [Judgement(u, who, v, "aligned") for u, labels in enumerate(
    ...     [("confirm", "confirm"), ("reject", "reject"), ("confirm", "reject")])
    ...     for who, v in zip(("ann", "bob"), labels)]
    >>> [(r.method, r.category, round(r.value, 3)) for r in agreement_report(rows, bootstrap=0)]
    [('krippendorff_alpha', 'all', 0.444), ('cohen_kappa', 'all', 0.4), ('krippendorff_alpha', 'aligned', 0.444), ('cohen_kappa', 'aligned', 0.4)]
    """  # noqa: E501
    rows = _check_judgements(judgements)
    if categories is None:
        categories = sorted({j.category for j in rows if j.category is not None})
    out = []
    for name in ("all", *categories):
        part = rows if name == "all" else [j for j in rows if j.category == name]
        options: dict[str, Any] = {"bootstrap": bootstrap, "seed": seed, "confidence": confidence}
        out.append(krippendorff_alpha(part, category=name, **options))
        by_unit: dict[Hashable, set[str]] = {}
        for j in part:
            by_unit.setdefault(j.unit, set()).add(j.annotator)
        pairs = sorted(
            {p for who in by_unit.values() for p in itertools.combinations(sorted(who), 2)}
        )
        for a, b in pairs:
            out.append(cohen_kappa(part, a, b, category=name, **options))
    return out
