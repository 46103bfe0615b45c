"""Contextual Understanding Score (CUS).

For a question, GoldSim = S3KG(T1 = KG of the answer, T2 = KG of the gold answer) and
CtxSim = S3KG(T1 = KG of the answer, T2 = KG of the context): the answer drives the matching, so
content of the gold answer or the context that the answer does not touch costs nothing. CUS is the
harmonic mean of the two (0 when both are 0); a dataset's CUS is the mean over its questions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..kg import TriplesLike
from ..statuses import role_status
from .result import ScoreResult
from .s3kg import KGScorer

__all__ = ["CUSResult", "DatasetCUS", "cus_score", "dataset_cus", "harmonic_mean", "score_cus_many"]


def harmonic_mean(a: Any, b: Any) -> Any:
    """Harmonic mean of two scores in [0, 1], 0 where both are 0 (floats or arrays).

    Examples
    --------
    >>> harmonic_mean(0.5, 1.0)
    0.6666666666666666
    >>> harmonic_mean(0.0, 0.0)
    0.0
    >>> harmonic_mean(np.array([0.0, 1.0]), np.array([0.0, 0.5])).round(3).tolist()
    [0.0, 0.667]
    """
    a_arr = np.asarray(a, dtype=np.float64)
    b_arr = np.asarray(b, dtype=np.float64)
    total = a_arr + b_arr
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(total > 0, 2.0 * a_arr * b_arr / np.where(total > 0, total, 1.0), 0.0)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class CUSResult:
    """GoldSim, CtxSim and CUS of one answer, with both S3KG results kept for re-blending.

    Examples
    --------
    >>> r = CUSResult(ScoreResult(0.5, 0.9), ScoreResult(0.2, 0.6))
    >>> round(r.gold_sim, 3), round(r.ctx_sim, 3), round(r.cus, 3)
    (0.7, 0.4, 0.509)
    >>> round(r.cus_at(0.0), 3)  # alpha 0: structure only (paper mode)
    0.286
    """

    gold: ScoreResult
    context: ScoreResult

    @property
    def gold_sim(self) -> float:
        """GoldSim at the stored alpha."""
        return self.gold.score

    @property
    def ctx_sim(self) -> float:
        """CtxSim at the stored alpha."""
        return self.context.score

    @property
    def cus(self) -> float:
        """CUS at the stored alpha."""
        return float(harmonic_mean(self.gold_sim, self.ctx_sim))

    def cus_at(self, alpha: float) -> float:
        """CUS re-blended at another alpha, without recomputation."""
        return float(harmonic_mean(self.gold.blend(alpha), self.context.blend(alpha)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict with both S3KG results and the three scores."""
        return {
            "gold_sim": self.gold_sim,
            "ctx_sim": self.ctx_sim,
            "cus": self.cus,
            "gold": self.gold.to_dict(),
            "context": self.context.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CUSResult:
        """Inverse of :meth:`to_dict`."""
        return cls(ScoreResult.from_dict(data["gold"]), ScoreResult.from_dict(data["context"]))


def score_cus_many(
    items: Iterable[tuple[TriplesLike, TriplesLike, TriplesLike]],
    scorer: KGScorer | None = None,
    *,
    texts: Iterable[tuple[str | None, str | None, str | None]] | None = None,
) -> list[CUSResult]:
    """CUS for many ``(answer, gold, context)`` KG triples in one batched scoring pass.

    Parameters
    ----------
    items
        ``(answer KG, gold KG, context KG)`` for each question.
    scorer
        The scorer to use (its encoder, cache and options); a default MiniLM one otherwise.
    texts
        ``(answer, gold answer, context)`` texts for each question, in the order of ``items``:
        needed when the scorer's mode uses texts (``text``), ignored otherwise.
    """
    scorer = scorer or KGScorer()
    pairs: list[tuple[TriplesLike, TriplesLike]] = []
    for answer, gold, context in items:
        pairs.append((answer, gold))
        pairs.append((answer, context))
    text_pairs = None
    if texts is not None and scorer.needs_texts:
        text_pairs = [p for a, g, c in texts for p in ((a, g), (a, c))]
    results = scorer.score_pairs(pairs, texts=text_pairs)
    # the statuses name the KG they are about (answer_kg_empty, gold_kg_empty, ...), not the
    # pair's sides (empty_kg_1): s3kg_core.statuses
    return [
        CUSResult(
            replace(results[i], status=role_status(results[i].status, "gold")),
            replace(results[i + 1], status=role_status(results[i + 1].status, "context")),
        )
        for i in range(0, len(results), 2)
    ]


def cus_score(
    answer: TriplesLike,
    gold: TriplesLike,
    context: TriplesLike,
    *,
    scorer: KGScorer | None = None,
    texts: tuple[str | None, str | None, str | None] | None = None,
) -> CUSResult:
    """GoldSim, CtxSim and CUS of one answer.

    ``texts`` is ``(answer, gold answer, context)``, needed when the scorer's mode uses texts.

    Examples
    --------
    >>> answer = [["aspirin", "reduces", "fever"]]
    >>> gold = [["aspirin", "reduces", "fever"], ["aspirin", "is", "nsaid"]]
    >>> context = [["aspirin", "treats", "pain"]]
    >>> r = cus_score(answer, gold, context)
    >>> r.gold_sim > r.ctx_sim, 0.0 <= r.cus <= 1.0
    (True, True)
    >>> cus_score([], gold, context).cus
    0.0
    >>> cus_score(answer, gold, []).context.status  # statuses name the KG
    'context_kg_empty'
    """
    return score_cus_many(
        [(answer, gold, context)], scorer, texts=None if texts is None else [texts]
    )[0]


@dataclass(frozen=True)
class DatasetCUS:
    """Means of GoldSim, CtxSim and CUS over a dataset's questions."""

    n: int
    gold_sim: float
    ctx_sim: float
    cus: float


def dataset_cus(results: Sequence[CUSResult], alpha: float | None = None) -> DatasetCUS:
    """Mean GoldSim, CtxSim and CUS over questions (all 0.0 for no questions, never NaN).

    Unscorable answers (empty KGs) count as 0, as their scores are.

    Examples
    --------
    >>> rs = [CUSResult(ScoreResult(1.0, 1.0), ScoreResult(1.0, 1.0)),
    ...       CUSResult(ScoreResult(0.0, 0.0, status="answer_kg_empty"),
    ...                 ScoreResult(0.0, 0.0, status="answer_kg_empty"))]
    >>> dataset_cus(rs)
    DatasetCUS(n=2, gold_sim=0.5, ctx_sim=0.5, cus=0.5)
    >>> dataset_cus([])
    DatasetCUS(n=0, gold_sim=0.0, ctx_sim=0.0, cus=0.0)
    """
    if not results:
        return DatasetCUS(0, 0.0, 0.0, 0.0)
    if alpha is None:
        gold = np.array([r.gold_sim for r in results])
        ctx = np.array([r.ctx_sim for r in results])
    else:
        gold = np.array([r.gold.blend(alpha) for r in results])
        ctx = np.array([r.context.blend(alpha) for r in results])
    return DatasetCUS(
        n=len(results),
        gold_sim=float(gold.mean()),
        ctx_sim=float(ctx.mean()),
        cus=float(np.mean(harmonic_mean(gold, ctx))),
    )
