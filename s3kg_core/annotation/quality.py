"""TAU's alignments against the people's final labels: precision, recall, F1 with intervals.

The final label of a pair is its adjudicated label, else its annotators' majority
(:func:`~s3kg_core.annotation.log.final_labels`). TAU's *aligned* pairs are its positive
predictions: a confirmed one is a true positive, a rejected one a false positive. A pair the
people *added* (TAU did not align it) is a false negative. So recall can only fall below 1 when
somebody added a missing pair; until then it is **untested** (``recall_tested`` is false and
:meth:`TauQuality.notes` says so), however good it looks. Beside these, the share of each TAU
category's units that the people confirmed says how far its mismatch, extra and missing calls
can be trusted: it is that category's *precision* (:func:`category_precision`).

Precision, recall and each category's precision are proportions: their intervals are Wilson's
(:func:`s3kg_core.stats.proportion_interval`), defined from the first judged unit on; F1's is a
seeded percentile bootstrap over the labelled pairs. :func:`annotation_report` puts this beside
the annotators' chance-corrected agreement (``s3kg annotate agreement``).

Examples
--------
>>> import pandas as pd
>>> labels = pd.DataFrame({"category": ["aligned", "aligned", "aligned", None],
...                        "label": ["confirm", "confirm", "reject", "add"],
...                        "source": ["majority"] * 3 + ["adjudicated"]})
>>> q = tau_quality(labels, bootstrap=0)
>>> round(q.precision.value, 3), round(q.recall.value, 3), q.recall_tested
(0.667, 0.667, True)
>>> e = q.confirmed["aligned"]
>>> round(e.value, 3), round(e.low, 3), round(e.high, 3), e.n, e.method
(0.667, 0.208, 0.939, 3, 'wilson')
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..stats import percentile_bootstrap, proportion_interval
from ..store.store import Store
from .agreement import Reliability, agreement_report
from .log import CATEGORIES, final_labels, judgements

__all__ = [
    "AnnotationReport",
    "Estimate",
    "TauQuality",
    "annotation_report",
    "category_precision",
    "tau_quality",
]


@dataclass(frozen=True)
class Estimate:
    """A figure with its interval; ``n`` is the number of pairs it is taken over.

    ``method`` names the interval: ``wilson`` (a proportion's,
    :func:`~s3kg_core.stats.proportion_interval`) or ``bootstrap`` (a seeded percentile
    bootstrap; NaN bounds when none was drawn).
    """

    value: float
    low: float
    high: float
    n: int
    method: str = "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``nan`` as ``None``)."""
        out = asdict(self)
        return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in out.items()}


@dataclass(frozen=True)
class TauQuality:
    """TAU's alignment quality against the final labels (see the module docstring).

    ``confirmed`` holds each TAU category's precision (the share of its units judged
    ``confirm`` or ``reject`` that were confirmed), in TAU's order of categories.
    """

    precision: Estimate
    recall: Estimate
    f1: Estimate
    true_positive: int
    false_positive: int
    false_negative: int
    recall_tested: bool
    confirmed: dict[str, Estimate]
    labels: dict[str, int]

    def notes(self) -> list[str]:
        """What a reader must know to read the numbers (empty when nothing needs saying)."""
        out = []
        if not self.recall_tested:
            out.append(
                "recall is untested: nobody added a pair TAU missed, so no false negative "
                "could be counted (its 1.000 means nothing yet)"
            )
        if self.labels.get("tie"):
            out.append(
                f"{self.labels['tie']} pairs have tied labels and no adjudication: they count "
                "nowhere until an adjudicator decides them"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "f1": self.f1.to_dict(),
            "true_positive": self.true_positive,
            "false_positive": self.false_positive,
            "false_negative": self.false_negative,
            "recall_tested": self.recall_tested,
            "confirmed": {k: v.to_dict() for k, v in self.confirmed.items()},
            "labels": dict(self.labels),
            "notes": self.notes(),
        }


def _prf(outcome: np.ndarray) -> tuple[float, float, float]:
    """Precision, recall, F1 of outcomes coded 0 = TP, 1 = FP, 2 = FN (``nan`` if undefined)."""
    tp, fp, fn = (int((outcome == k).sum()) for k in range(3))
    precision = tp / (tp + fp) if tp + fp else math.nan
    recall = tp / (tp + fn) if tp + fn else math.nan
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp and tp + fn else math.nan
    return precision, recall, f1


def _estimate(
    values: np.ndarray, statistic: Any, n: int, bootstrap: int, seed: int, confidence: float
) -> Estimate:
    value = statistic(values)
    low = high = math.nan
    if bootstrap > 0 and len(values) and not math.isnan(value):
        low, high, _ = percentile_bootstrap(
            lambda idx: statistic(values[idx]),
            len(values),
            resamples=bootstrap,
            seed=seed,
            confidence=confidence,
        )
    return Estimate(value, low, high, n)


def _proportion(successes: int, n: int, confidence: float) -> Estimate:
    value, low, high = proportion_interval(successes, n, confidence=confidence)
    return Estimate(value, low, high, n, "wilson")


def tau_quality(
    labels: pd.DataFrame, *, bootstrap: int = 1000, seed: int = 0, confidence: float = 0.95
) -> TauQuality:
    """TAU's precision, recall and F1 against final labels, with their intervals.

    Precision, recall and each category's precision (``confirmed``) take Wilson's interval,
    F1 a percentile bootstrap (none with ``bootstrap=0``).

    Parameters
    ----------
    labels
        One row per labelled pair with ``category`` (TAU's, ``None`` for an added pair),
        ``label`` (``confirm``, ``reject``, ``add``; ``None`` for a tie) and ``source``
        (as :func:`~s3kg_core.annotation.log.final_labels` gives them).
    bootstrap, seed, confidence
        F1's bootstrap resamples (0: no interval) and seed; every interval's coverage.

    Returns
    -------
    TauQuality
    """
    category = labels["category"].tolist() if len(labels) else []
    label = labels["label"].tolist() if len(labels) else []
    outcomes = []
    for cat, lab in zip(category, label, strict=True):
        if cat == "aligned" and lab in ("confirm", "add"):
            outcomes.append(0)
        elif cat == "aligned" and lab == "reject":
            outcomes.append(1)
        elif lab == "add":
            outcomes.append(2)
    outcome = np.array(outcomes, dtype=int)
    tp, fp, fn = (int((outcome == k).sum()) for k in range(3))

    precision = _proportion(tp, tp + fp, confidence)
    recall = _proportion(tp, tp + fn, confidence)
    f1 = _estimate(outcome, lambda o: _prf(o)[2], tp + fp + fn, bootstrap, seed, confidence)
    confirmed = {}
    for name in CATEGORIES:
        judged = [lab == "confirm" for cat, lab in zip(category, label, strict=True)
                  if cat == name and lab in ("confirm", "reject")]  # fmt: skip
        confirmed[name] = _proportion(sum(judged), len(judged), confidence)
    sources = labels["source"].value_counts().to_dict() if len(labels) else {}
    return TauQuality(
        precision=precision,
        recall=recall,
        f1=f1,
        true_positive=tp,
        false_positive=fp,
        false_negative=fn,
        recall_tested=fn > 0,
        confirmed=confirmed,
        labels={str(k): int(v) for k, v in sources.items()},
    )


_METHOD = {"krippendorff_alpha": "alpha", "cohen_kappa": "kappa"}


def _figure(value: float, low: float, high: float) -> str:
    if math.isnan(value):
        return "n/a"
    interval = "" if math.isnan(low) else f" [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}{interval}"


@dataclass(frozen=True)
class AnnotationReport:
    """Agreement between the annotators and TAU's quality against the final labels."""

    task_id: int | None
    agreement: list[Reliability]
    quality: TauQuality

    def lines(self) -> list[str]:
        """The report as lines of text."""
        scope = f"task {self.task_id}" if self.task_id is not None else "all annotations"
        out = [f"agreement ({scope}; 95% bootstrap intervals):"]
        for r in self.agreement:
            who = " vs ".join(r.annotators) if r.method == "cohen_kappa" else "all annotators"
            figure = _figure(r.value, r.low, r.high)
            note = f" ({r.reason})" if r.reason else ""
            out.append(
                f"  {r.category:<17} {_METHOD[r.method]:<6} {who:<28} {figure} "
                f"on {r.units} units{note}"
            )
        q = self.quality
        out.append(
            f"TAU against the final labels ({q.true_positive} confirmed, {q.false_positive} "
            f"rejected, {q.false_negative} added): precision "
            f"{_figure(q.precision.value, q.precision.low, q.precision.high)}, recall "
            f"{_figure(q.recall.value, q.recall.low, q.recall.high)} (95% Wilson intervals), "
            f"F1 {_figure(q.f1.value, q.f1.low, q.f1.high)}"
        )
        out.append(
            "TAU's precision by category (the share of its judged units the final labels "
            "confirm; 95% Wilson intervals):"
        )
        for name, e in q.confirmed.items():
            figure = _figure(e.value, e.low, e.high) if e.n else "n/a (nothing judged yet)"
            out.append(f"  {name:<17} {figure}" + (f" of {e.n}" if e.n else ""))
        out += [f"  note: {n}" for n in q.notes()]
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "task_id": self.task_id,
            "agreement": [r.to_dict() for r in self.agreement],
            "tau": self.quality.to_dict(),
        }


def annotation_report(
    store: Store,
    *,
    task_id: int | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> AnnotationReport:
    """Kappa and alpha of the annotators, overall and per TAU category, and TAU's quality.

    With ``task_id``, only that task's units and annotators count.

    Raises
    ------
    AnnotationError
        If ``task_id`` names no task.
    """
    with store.connect() as con:
        rows = judgements(con, task_id=task_id)
        labels = final_labels(con, task_id=task_id)
    agreement = agreement_report(
        rows, categories=CATEGORIES, bootstrap=bootstrap, seed=seed, confidence=confidence
    )
    quality = tau_quality(labels, bootstrap=bootstrap, seed=seed, confidence=confidence)
    return AnnotationReport(task_id, agreement, quality)


def category_precision(
    store: Store, *, task_id: int | None = None, confidence: float = 0.95
) -> dict[str, Estimate]:
    """Each TAU category's precision against the final labels, with Wilson's interval.

    The ``confirmed`` figures of :func:`annotation_report` (the same numbers, in TAU's order of
    categories), without its agreement and bootstraps: cheap enough to show after every
    decision. A category nobody judged yet has ``n = 0`` and NaN figures.

    Raises
    ------
    AnnotationError
        If ``task_id`` names no task.
    """
    with store.connect() as con:
        labels = final_labels(con, task_id=task_id)
    return tau_quality(labels, bootstrap=0, confidence=confidence).confirmed
