"""Aggregators: from the triples' probabilities of being unsupported to an answer's verdict.

GraphEval flags an answer when *any* of its triples is probably unsupported (``p > 0.5``):
:data:`DEFAULT_AGGREGATOR`, the rule :func:`~s3kg_core.grapheval.detect.detect` applies unless
told otherwise. Beside it, as RefChecker puts its aggregators beside each other, the answer's
score can be the **max** or the **mean** of its triples' probabilities, compared with a
threshold that may be chosen on the dev articles
(:func:`~s3kg_core.evaluation.grapheval.tune_aggregator`) instead of 0.5. ``max`` at 0.5 is
GraphEval's rule itself (the highest probability passes 0.5 exactly when one triple does).

An aggregator is pure: a sequence of probabilities in, a score and a verdict out, with a
defined result on every input:

=========================================  ===========  ============================
probabilities                              score        verdict (``inconsistent``)
=========================================  ===========  ============================
none at all (the answer has no triple)     ``0.0``      ``False``: nothing to flag
only ``None`` (no triple was judged)       ``None``     ``None``: no verdict
some judged (``None`` are left out)        max / mean   ``score > threshold``
=========================================  ===========  ============================

Examples
--------
>>> DEFAULT_AGGREGATOR.inconsistent([0.2, 0.7]), make_aggregator("mean").inconsistent([0.2, 0.7])
(True, False)
>>> DEFAULT_AGGREGATOR.score([]), DEFAULT_AGGREGATOR.inconsistent([None])
(0.0, None)
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from ..errors import GraphEvalError

__all__ = [
    "AGGREGATORS",
    "DEFAULT_AGGREGATOR",
    "THRESHOLD",
    "Aggregator",
    "MaxAggregator",
    "MeanAggregator",
    "make_aggregator",
]

THRESHOLD = 0.5
"""GraphEval's threshold: a triple is flagged when its probability of being unsupported is above."""


class Aggregator(ABC):
    """A rule from triple probabilities to a score and a verdict (see the module docstring).

    Subclasses give :attr:`name` and :meth:`_score` (on judged probabilities, never empty).

    Parameters
    ----------
    threshold
        The answer is inconsistent when its score exceeds this; in [0, 1].

    Raises
    ------
    GraphEvalError
        If ``threshold`` is not in [0, 1].
    """

    name: ClassVar[str] = ""

    def __init__(self, threshold: float = THRESHOLD) -> None:
        t = float(threshold)
        if math.isnan(t) or not 0.0 <= t <= 1.0:
            raise GraphEvalError(f"an aggregator's threshold must be in [0, 1]; got {threshold!r}")
        self.threshold = t

    @abstractmethod
    def _score(self, judged: Sequence[float]) -> float:
        """The score of a non-empty sequence of judged probabilities."""

    def score(self, probabilities: Sequence[float | None]) -> float | None:
        """The answer's score: 0.0 with no triple, ``None`` when none was judged.

        Examples
        --------
        >>> MeanAggregator().score([0.2, None, 0.6])
        0.4
        """
        if not probabilities:
            return 0.0
        judged = [float(p) for p in probabilities if p is not None]
        return self._score(judged) if judged else None

    def inconsistent(self, probabilities: Sequence[float | None]) -> bool | None:
        """Whether the answer is flagged (``None``: no triple judged, no verdict).

        Examples
        --------
        >>> MaxAggregator(0.8).inconsistent([0.7]), MaxAggregator().inconsistent([])
        (False, False)
        """
        s = self.score(probabilities)
        return None if s is None else s > self.threshold

    def flagged(self, probabilities: Sequence[float | None]) -> tuple[int, ...]:
        """Indices of the triples whose own probability exceeds the threshold (to show, to fix).

        Examples
        --------
        >>> MaxAggregator().flagged([0.9, None, 0.3, 0.6])
        (0, 3)
        """
        return tuple(i for i, p in enumerate(probabilities) if p is not None and p > self.threshold)

    def with_threshold(self, threshold: float) -> Aggregator:
        """The same rule at another threshold.

        Examples
        --------
        >>> MeanAggregator().with_threshold(0.3).signature
        'agg:mean>0.3'
        """
        return type(self)(threshold)

    @property
    def signature(self) -> str:
        """``agg:<name>><threshold>``, e.g. ``agg:max>0.5`` (GraphEval's rule)."""
        return f"agg:{self.name}>{self.threshold:g}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(threshold={self.threshold:g})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Aggregator)
            and type(other) is type(self)
            and other.threshold == self.threshold
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.threshold))


class MaxAggregator(Aggregator):
    """The highest triple probability: at 0.5, GraphEval's "any triple over 0.5".

    Examples
    --------
    >>> MaxAggregator().score([0.1, 0.4])
    0.4
    """

    name = "max"

    def _score(self, judged: Sequence[float]) -> float:
        return max(judged)


class MeanAggregator(Aggregator):
    """The mean triple probability: one unsupported triple among many weighs less.

    Examples
    --------
    >>> MeanAggregator().score([0.1, 0.4])
    0.25
    """

    name = "mean"

    def _score(self, judged: Sequence[float]) -> float:
        return math.fsum(judged) / len(judged)


AGGREGATORS: dict[str, type[Aggregator]] = {"max": MaxAggregator, "mean": MeanAggregator}
"""Aggregators by name; ``any`` (GraphEval's rule) is ``max`` at 0.5 (:func:`make_aggregator`)."""

DEFAULT_AGGREGATOR: Aggregator = MaxAggregator(THRESHOLD)
"""GraphEval's rule: an answer is inconsistent when any triple's probability exceeds 0.5."""


def make_aggregator(name: str, threshold: float = THRESHOLD) -> Aggregator:
    """The aggregator ``any`` (GraphEval's rule; threshold 0.5 only), ``max`` or ``mean``.

    Raises
    ------
    GraphEvalError
        On an unknown name, or ``any`` at another threshold than 0.5.

    Examples
    --------
    >>> make_aggregator("any") == DEFAULT_AGGREGATOR, make_aggregator("mean", 0.3)
    (True, MeanAggregator(threshold=0.3))
    """
    if name == "any":
        if threshold != THRESHOLD:
            raise GraphEvalError(f"'any' is GraphEval's rule at {THRESHOLD}; use 'max' to move it")
        return DEFAULT_AGGREGATOR
    if name not in AGGREGATORS:
        raise GraphEvalError(
            f"unknown aggregator {name!r}; use one of any, {', '.join(AGGREGATORS)}"
        )
    return AGGREGATORS[name](threshold)
