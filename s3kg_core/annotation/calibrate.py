"""TAU's alignment threshold fitted to the human labels (``s3kg tau calibrate``).

TAU aligns two triples when the cosine of their sentence embeddings reaches a threshold (0.76
by default, a guess). The people's final labels (:func:`~s3kg_core.annotation.log.final_labels`)
say which pairs really are aligned:

- aligned: an aligned pair they confirmed, or a pair they added (TAU missed it);
- not aligned: an aligned pair they rejected, or a relation or entity mismatch they confirmed.

Other labels (a rejected mismatch, extra and missing triples) do not say whether a *pair* aligns
and are left out. So are roles swapped: a swapped triple's sentence embeds almost as its gold's
(cosine 0.97), and TAU tells the two apart by reading the roles, not by the threshold; a confirmed
swap would only push the threshold above every paraphrase. Every threshold of a grid (0.30 to 0.99
by 0.01, and the default) predicts "aligned" for the pairs whose cosine reaches it; the one with
the best F1 against the labels wins (ties: the one nearest the default, then the higher), with a
bootstrap interval of its F1. Below :data:`MIN_LABELS` labelled pairs of either kind the evidence
is too thin: the curve is still computed and shown, but the default threshold is kept (and said
so), since a threshold fitted to three labels fits those three. The curve is kept with the result
in the database, so ``s3kg tau --threshold calibrated`` can use it and its signature can name it.
The fit scores pairs one at a time; TAU itself also pairs triples one-to-one, best first, so its F1
at the chosen threshold can differ a little.

Examples
--------
>>> sims = [0.95, 0.9, 0.85, 0.8, 0.7] * 4
>>> c = fit_threshold(sims, [True, True, True, False, False] * 4, min_labels=5)
>>> c.threshold, c.f1, c.default.f1, c.thin
(0.81, 1.0, 0.857..., False)
>>> thin = fit_threshold([0.98, 0.97, 0.9], [True, True, False])
>>> thin.threshold, thin.fitted, thin.thin
(0.76, 0.91, True)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from sklearn.metrics import precision_recall_fscore_support

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..errors import AnnotationError
from ..kg import Triple
from ..scoring.tau import TRIPLE_THRESHOLD
from ..store import annotation_queries as aq
from ..store import queries
from ..store.store import Store
from .log import Triple3, final_labels, now
from .tasks import tau_encoder

__all__ = [
    "GRID",
    "MIN_LABELS",
    "Calibration",
    "CurvePoint",
    "calibrate_store",
    "fit_threshold",
    "labelled_pairs",
]

GRID = tuple(round(0.30 + 0.01 * i, 2) for i in range(70))
"""The thresholds tried: 0.30 to 0.99 by 0.01 (the default 0.76 is one of them)."""

MIN_LABELS = 10
"""Labelled pairs of each kind (aligned, not aligned) below which the default is kept."""

BOOTSTRAP = 1000
"""Resamples of the F1 interval at the chosen threshold."""


@dataclass(frozen=True)
class CurvePoint:
    """Precision, recall and F1 of "aligned when the cosine reaches ``threshold``"."""

    threshold: float
    precision: float
    recall: float
    f1: float


@dataclass(frozen=True)
class Calibration:
    """A fitted threshold, its figures, the whole curve and the default's point on it."""

    threshold: float
    f1: float
    precision: float
    recall: float
    positives: int
    negatives: int
    curve: tuple[CurvePoint, ...]
    default: CurvePoint
    encoder: str = ""
    calibration_id: int | None = None
    f1_interval: tuple[float, float] = (0.0, 1.0)
    fitted: float | None = None
    thin: bool = False

    def summary(self) -> str:
        """One line for the command line (two when the evidence is too thin)."""
        where = f"calibration {self.calibration_id}: " if self.calibration_id else ""
        low, high = self.f1_interval
        line = (
            f"{where}threshold {self.threshold:g} (F1 {self.f1:.3f} [{low:.3f}, {high:.3f}], "
            f"precision {self.precision:.3f}, recall {self.recall:.3f}) against the default "
            f"{self.default.threshold:g} (F1 {self.default.f1:.3f}), from {self.positives} "
            f"aligned and {self.negatives} not aligned labelled pairs; encoder {self.encoder}"
        )
        if self.thin:
            line += (
                f"\ntoo few labels to move the threshold (at least {MIN_LABELS} of each kind): "
                f"the default {self.default.threshold:g} is kept"
                + (
                    f" (the best on these labels would be {self.fitted:g})"
                    if self.fitted != self.default.threshold
                    else ""
                )
                + "; label more pairs and calibrate again"
            )
        return line

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = asdict(self)
        out["curve"] = [asdict(p) for p in self.curve]
        out["default"] = asdict(self.default)
        return out


def fit_threshold(
    similarities: npt.ArrayLike,
    aligned: npt.ArrayLike,
    *,
    grid: Sequence[float] = GRID,
    default: float = TRIPLE_THRESHOLD,
    min_labels: int = MIN_LABELS,
) -> Calibration:
    """The threshold of ``grid`` with the best F1 of ``similarity >= threshold`` vs ``aligned``.

    With fewer than ``min_labels`` pairs of either kind, the best threshold is reported as
    ``fitted`` but ``threshold`` stays ``default`` (``thin``). ``f1_interval`` is a 95 %
    percentile bootstrap interval of the F1 at ``threshold`` (pairs resampled within each kind).

    Raises
    ------
    AnnotationError
        If the labels are not of both kinds, or the two sequences differ in length.
    """
    sims = np.asarray(similarities, dtype=float)
    truth = np.asarray(aligned, dtype=bool)
    if sims.shape != truth.shape:
        raise AnnotationError("give one similarity per labelled pair")
    positives, negatives = int(truth.sum()), int((~truth).sum())
    if not positives or not negatives:
        raise AnnotationError(
            f"calibration needs labelled pairs of both kinds; there are {positives} aligned "
            "(confirmed alignments, added pairs) and "
            f"{negatives} not aligned (rejected alignments, confirmed mismatches)"
        )
    thresholds = sorted({round(float(t), 4) for t in (*grid, default)})

    def point(t: float) -> CurvePoint:
        p, r, f, _ = precision_recall_fscore_support(
            truth, sims >= t, average="binary", zero_division=0.0
        )
        return CurvePoint(t, float(p), float(r), float(f))

    curve = tuple(point(t) for t in thresholds)
    best = max(curve, key=lambda c: (round(c.f1, 12), -abs(c.threshold - default), c.threshold))
    at_default = next(c for c in curve if c.threshold == round(default, 4))
    thin = min(positives, negatives) < min_labels
    chosen = at_default if thin else best
    return Calibration(
        threshold=chosen.threshold,
        f1=chosen.f1,
        precision=chosen.precision,
        recall=chosen.recall,
        positives=positives,
        negatives=negatives,
        curve=curve,
        default=at_default,
        f1_interval=_f1_interval(sims, truth, chosen.threshold),
        fitted=best.threshold,
        thin=thin,
    )


def _f1_interval(
    sims: npt.NDArray[np.float64], truth: npt.NDArray[np.bool_], t: float
) -> tuple[float, float]:
    """95 % percentile bootstrap interval of the F1 of ``sims >= t`` (resampled per kind)."""
    rng = np.random.default_rng(0)
    pos, neg = np.flatnonzero(truth), np.flatnonzero(~truth)
    predicted = sims >= t
    values = []
    for _ in range(BOOTSTRAP):
        idx = np.concatenate([rng.choice(pos, len(pos)), rng.choice(neg, len(neg))])
        tp = int(np.sum(predicted[idx] & truth[idx]))
        fp = int(np.sum(predicted[idx] & ~truth[idx]))
        fn = int(np.sum(~predicted[idx] & truth[idx]))
        values.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    low, high = np.percentile(values, [2.5, 97.5])
    return float(low), float(high)


def labelled_pairs(labels: pd.DataFrame) -> list[tuple[Triple3, Triple3, bool]]:
    """``(gold, answer, aligned)`` of the final labels that say whether a pair aligns.

    Examples
    --------
    >>> labels = pd.DataFrame({
    ...     "category": ["aligned", "relation_mismatch", None, "extra"],
    ...     "gold_triple": [("a", "r", "b"), ("a", "s", "b"), ("c", "r", "d"), None],
    ...     "answer_triple": [("a", "r", "c"), ("a", "t", "b"), ("c", "q", "d"), ("x", "y", "z")],
    ...     "label": ["reject", "confirm", "add", "confirm"]})
    >>> [aligned for _, _, aligned in labelled_pairs(labels)]
    [False, False, True]
    """
    out = []
    for row in labels.itertuples(index=False):
        gold, answer = row.gold_triple, row.answer_triple
        if gold is None or answer is None:
            continue
        if row.label == "add" or (row.category == "aligned" and row.label == "confirm"):
            out.append((tuple(gold), tuple(answer), True))
        elif (row.category == "aligned" and row.label == "reject") or (
            row.category in ("relation_mismatch", "entity_mismatch") and row.label == "confirm"
        ):
            out.append((tuple(gold), tuple(answer), False))
    return out


def _similarities(
    store: Store, encoder: Encoder, pairs: Sequence[tuple[Triple3, Triple3, bool]]
) -> np.ndarray:
    """Sentence cosines of the pairs, from the stored embeddings (new ones encoded and kept)."""
    gold = [Triple(*g).sentence() for g, _, _ in pairs]
    answer = [Triple(*a).sentence() for _, a, _ in pairs]
    cache = EmbeddingCache(encoder)
    with store.connect() as con:
        cache.update(queries.embeddings_of(con, encoder.name, {*gold, *answer}))
    flushed = len(cache)
    cache.add([*gold, *answer])
    if len(cache) > flushed:
        with store.transaction() as con:
            store.put_embeddings(con, encoder.name, cache.items(since=flushed))
    return np.asarray(
        np.einsum("ij,ij->i", cache.vectors(gold), cache.vectors(answer)), dtype=float
    )


def calibrate_store(
    store: Store,
    *,
    task_id: int | None = None,
    encoder: str | Encoder | None = None,
    signature: str | None = None,
    grid: Sequence[float] = GRID,
) -> Calibration:
    """Fit TAU's threshold to the final labels in ``store`` (of one task, when given) and store it.

    The encoder is TAU's (see :func:`~s3kg_core.annotation.tasks.tau_encoder`); the result is
    kept under its name, for ``s3kg tau --threshold calibrated``.

    Raises
    ------
    AnnotationError
        If the task does not exist or the labels are not of both kinds.
    """
    with store.connect() as con:
        labels = final_labels(con, task_id=task_id)
    pairs = labelled_pairs(labels)
    enc = tau_encoder(store, encoder, signature)
    sims = _similarities(store, enc, pairs) if pairs else np.zeros(0)
    fitted = replace(fit_threshold(sims, [p[2] for p in pairs], grid=grid), encoder=enc.name)
    detail = {
        "task_id": task_id,
        "labels": labels["source"].value_counts().to_dict() if len(labels) else {},
        "default": asdict(fitted.default),
        "f1_interval": list(fitted.f1_interval),
        "fitted": fitted.fitted,
        "thin": fitted.thin,
        "min_labels": MIN_LABELS,
        "rule": "aligned when the sentence cosine of the compared triples >= threshold",
    }
    with store.transaction() as con:
        calibration_id = aq.insert_calibration(
            con,
            {
                "created_at": now(),
                "encoder": enc.name,
                "threshold": fitted.threshold,
                "f1": fitted.f1,
                "precision": fitted.precision,
                "recall": fitted.recall,
                "positives": fitted.positives,
                "negatives": fitted.negatives,
                "curve": json.dumps([asdict(p) for p in fitted.curve]),
                "detail": json.dumps(detail),
            },
        )
    return replace(fitted, calibration_id=calibration_id)
