"""GraphEval detection: an answer is inconsistent if any of its triples is probably unsupported.

:func:`detect` checks the triples of one answer against its context with a
:class:`~s3kg_core.grapheval.checkers.base.Checker` and keeps every triple's probability, the
flagged ones (probability > 0.5) and the reasons for triples the checker could not judge.
:class:`GraphEval` loads an extractor and a checker once and runs many answers in batches,
optionally also in raw mode (the whole answer as one claim). The verdict is GraphEval's rule
(any triple over 0.5) unless another :class:`~s3kg_core.grapheval.aggregate.Aggregator` is
given (the max or mean probability at a threshold chosen on dev).

Statuses of a :class:`Detection`:

``ok``
    every triple was judged;
``partial``
    some triples were not judged (their reasons are kept); the verdict uses the judged ones;
``unjudged``
    no triple could be judged: ``inconsistent`` is ``None``;
``no_triples``
    the answer has no triple (blank answer, or the extractor found no fact): ``inconsistent`` is
    ``False`` (nothing to flag) and ``reason`` says so;
``extraction_failed``
    the extractor failed on the answer: ``inconsistent`` is ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import GraphEvalError
from ..extract.base import Extractor, ItemTexts, TextKG
from ..kg import Triple
from ..progress import Progress
from .aggregate import DEFAULT_AGGREGATOR, THRESHOLD, Aggregator
from .checkers.base import Checker, Verdict

__all__ = ["THRESHOLD", "Detection", "GraphEval", "detect", "detection_from_verdicts"]


@dataclass(frozen=True)
class Detection:
    """The outcome of GraphEval on one answer.

    Attributes
    ----------
    triples
        The answer's triples, in extraction order.
    probabilities
        Probability that each triple is NOT supported (``None``: not judged).
    flagged
        Indices of the triples with probability > 0.5 (the aggregator's threshold).
    inconsistent
        Whether any triple is flagged (``None`` when nothing could be judged); with another
        aggregator, whether its score passes its threshold.
    status
        See the module docstring.
    reason
        Why the answer has no verdict or no triple, else ``None``.
    reasons
        For each triple that was not judged, its index (as text) and the checker's reason.
    raw_probability
        Raw mode's probability that the whole answer is not supported, when it was run.
    checker
        The checker's signature.
    details
        Per-triple checker details (features, the model's verdict).

    Examples
    --------
    >>> d = Detection.from_dict(Detection((Triple("a", "r", "b"),), (0.9,), (0,), True).to_dict())
    >>> d.inconsistent, d.flagged_triples
    (True, [Triple(head='a', relation='r', tail='b')])
    """

    triples: tuple[Triple, ...]
    probabilities: tuple[float | None, ...]
    flagged: tuple[int, ...]
    inconsistent: bool | None
    status: str = "ok"
    reason: str | None = None
    reasons: Mapping[str, str] = field(default_factory=dict)
    raw_probability: float | None = None
    checker: str = ""
    details: tuple[Mapping[str, Any] | None, ...] = ()

    @property
    def flagged_triples(self) -> list[Triple]:
        """The flagged triples."""
        return [self.triples[i] for i in self.flagged]

    @property
    def raw_inconsistent(self) -> bool | None:
        """Raw mode's verdict (``None`` when raw mode was not run)."""
        return None if self.raw_probability is None else self.raw_probability > THRESHOLD

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "triples": [t.to_list() for t in self.triples],
            "probabilities": list(self.probabilities),
            "flagged": list(self.flagged),
            "inconsistent": self.inconsistent,
            "status": self.status,
            "reason": self.reason,
            "reasons": dict(self.reasons),
            "raw_probability": self.raw_probability,
            "checker": self.checker,
            "details": [dict(d) if d is not None else None for d in self.details],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Detection:
        """Read back :meth:`to_dict`."""
        return cls(
            triples=tuple(Triple.from_any(t) for t in data.get("triples", [])),
            probabilities=tuple(data.get("probabilities", [])),
            flagged=tuple(int(i) for i in data.get("flagged", [])),
            inconsistent=data.get("inconsistent"),
            status=str(data.get("status", "ok")),
            reason=data.get("reason"),
            reasons={str(k): str(v) for k, v in dict(data.get("reasons") or {}).items()},
            raw_probability=data.get("raw_probability"),
            checker=str(data.get("checker", "")),
            details=tuple(data.get("details") or ()),
        )


def detection_from_verdicts(
    triples: Sequence[Triple],
    verdicts: Sequence[Verdict],
    *,
    checker: str = "",
    raw: Verdict | None = None,
    aggregator: Aggregator = DEFAULT_AGGREGATOR,
) -> Detection:
    """Aggregate per-triple verdicts into a :class:`Detection` (pure, no model).

    ``aggregator`` decides the verdict and which triples are flagged (default: GraphEval's
    rule, any triple over 0.5).

    Examples
    --------
    >>> d = detection_from_verdicts([Triple("a", "r", "b"), Triple("c", "r", "d")],
    ...                             [Verdict(0.2), Verdict(None, "no verdict")])
    >>> d.status, d.inconsistent, dict(d.reasons)
    ('partial', False, {'1': 'no verdict'})
    >>> detection_from_verdicts([], []).reason
    'the answer has no triples: nothing to flag'
    """
    if len(triples) != len(verdicts):
        raise GraphEvalError(f"{len(triples)} triples but {len(verdicts)} verdicts")
    raw_p = raw.probability if raw is not None else None
    if not triples:
        return Detection(
            (),
            (),
            (),
            False,
            status="no_triples",
            reason="the answer has no triples: nothing to flag",
            raw_probability=raw_p,
            checker=checker,
        )
    probs = tuple(v.probability for v in verdicts)
    flagged = aggregator.flagged(probs)
    reasons = {str(i): v.reason or "not judged" for i, v in enumerate(verdicts) if not v.judged}
    inconsistent = aggregator.inconsistent(probs)
    if inconsistent is None:
        status, reason = "unjudged", "the checker judged none of the triples"
    else:
        status, reason = ("ok" if not reasons else "partial"), None
    return Detection(
        tuple(triples),
        probs,
        flagged,
        inconsistent,
        status=status,
        reason=reason,
        reasons=reasons,
        raw_probability=raw_p,
        checker=checker,
        details=tuple(v.detail for v in verdicts),
    )


def detect(
    answer_triples: Sequence[Triple | Sequence[str]],
    context: str,
    checker: Checker,
    *,
    answer: str | None = None,
    aggregator: Aggregator = DEFAULT_AGGREGATOR,
) -> Detection:
    """Check an answer's triples against the context.

    Parameters
    ----------
    answer_triples
        The answer's KG (from any extractor).
    context
        The text the answer should be consistent with.
    checker
        Any :class:`~s3kg_core.grapheval.checkers.base.Checker`.
    answer
        The answer's text: when given, raw mode runs too (``raw_probability``).
    aggregator
        The rule from triple probabilities to the verdict (default: any triple over 0.5).

    Examples
    --------
    >>> from s3kg_core.grapheval.checkers.support import SupportChecker
    >>> d = detect([("Eiffel Tower", "opened in", "1899")],
    ...            "The Eiffel Tower is in Paris. It opened in 1889.",
    ...            SupportChecker(calibration=None))
    >>> d.inconsistent, d.flagged
    (True, (0,))
    """
    triples = [Triple.from_any(t) for t in answer_triples]
    verdicts = checker.judge(triples, context)
    raw = checker.check_text(answer, context) if answer is not None else None
    return detection_from_verdicts(
        triples, verdicts, checker=checker.signature, raw=raw, aggregator=aggregator
    )


def _failed_detection(kg: TextKG, checker: str, raw: Verdict | None) -> Detection:
    return Detection(
        (),
        (),
        (),
        None,
        status="extraction_failed",
        reason=f"KG extraction failed: {kg.status.removeprefix('failed: ')}",
        raw_probability=raw.probability if raw is not None else None,
        checker=checker,
    )


class GraphEval:
    """Extractor + checker, loaded once, for many answers.

    Parameters
    ----------
    checker
        The triple checker.
    extractor
        Any :class:`~s3kg_core.extract.base.Extractor` (default: the offline spaCy one).
    batch_answers
        Answers per extraction and checking batch.
    aggregator
        The rule from triple probabilities to the verdict (default: any triple over 0.5).

    Examples
    --------
    >>> from s3kg_core.grapheval.checkers.support import SupportChecker
    >>> ge = GraphEval(SupportChecker(calibration=None))
    >>> [d.inconsistent for d in ge.detect_many(
    ...     ["The tower opened in 1899.", ""], ["The tower opened in 1889."] * 2)]
    [True, False]
    """

    def __init__(
        self,
        checker: Checker,
        extractor: Extractor | None = None,
        *,
        batch_answers: int = 64,
        aggregator: Aggregator = DEFAULT_AGGREGATOR,
    ) -> None:
        if not isinstance(checker, Checker):
            raise GraphEvalError(f"checker must be a Checker; got {type(checker).__name__}")
        if batch_answers < 1:
            raise GraphEvalError(f"batch_answers must be >= 1; got {batch_answers}")
        if extractor is None:
            from ..extract.offline import OfflineExtractor

            extractor = OfflineExtractor()
        self.checker = checker
        self.extractor = extractor
        self.batch_answers = batch_answers
        self.aggregator = aggregator

    def extract(self, answers: Sequence[str]) -> list[TextKG]:
        """The answer KGs (blank answers give ``empty`` without a call)."""
        items = [ItemTexts(answer=a) for a in answers]
        return [kgs.get("answer", TextKG(status="empty")) for kgs in self.extractor.extract(items)]

    def detect_kgs(
        self,
        kgs: Sequence[TextKG | Sequence[Triple]],
        contexts: Sequence[str],
        *,
        answers: Sequence[str] | None = None,
        progress: Progress | None = None,
    ) -> list[Detection]:
        """Detections for answers whose KGs are already known (e.g. stored ones).

        With ``answers``, raw mode runs too. A KG whose status is ``failed...`` gives an
        ``extraction_failed`` detection.
        """
        if len(kgs) != len(contexts) or (answers is not None and len(answers) != len(kgs)):
            raise GraphEvalError("kgs, contexts and answers must have the same length")
        out: list[Detection] = []
        for lo in range(0, len(kgs), self.batch_answers):
            hi = min(len(kgs), lo + self.batch_answers)
            batch = [k if isinstance(k, TextKG) else TextKG(tuple(k)) for k in kgs[lo:hi]]
            ctx = list(contexts[lo:hi])
            jobs = [(list(k.triples), c) for k, c in zip(batch, ctx, strict=True)]
            verdicts = self.checker.judge_many(jobs)
            raws: list[Verdict | None] = [None] * len(batch)
            if answers is not None:
                raw_jobs: list[tuple[list[str], str]] = [
                    ([a], c) for a, c in zip(answers[lo:hi], ctx, strict=True)
                ]
                raws = [v[0] for v in self.checker.judge_claims_many(raw_jobs, raw=True)]
            for kg, vs, raw in zip(batch, verdicts, raws, strict=True):
                if kg.status.startswith("failed"):
                    out.append(_failed_detection(kg, self.checker.signature, raw))
                else:
                    out.append(
                        detection_from_verdicts(
                            kg.triples,
                            vs,
                            checker=self.checker.signature,
                            raw=raw,
                            aggregator=self.aggregator,
                        )
                    )
            if progress is not None:
                progress(hi, len(kgs))
        return out

    def detect_many(
        self,
        answers: Sequence[str],
        contexts: Sequence[str],
        *,
        raw: bool = False,
        progress: Progress | None = None,
    ) -> list[Detection]:
        """Extract each answer's KG and check it against its context (and raw mode if asked)."""
        if len(answers) != len(contexts):
            raise GraphEvalError(f"{len(answers)} answers but {len(contexts)} contexts")
        out: list[Detection] = []
        for lo in range(0, len(answers), self.batch_answers):
            hi = min(len(answers), lo + self.batch_answers)
            kgs = self.extract(answers[lo:hi])
            out.extend(
                self.detect_kgs(kgs, contexts[lo:hi], answers=answers[lo:hi] if raw else None)
            )
            if progress is not None:
                progress(hi, len(answers))
        return out

    def detect(self, answer: str, context: str, *, raw: bool = False) -> Detection:
        """One answer (see :meth:`detect_many`)."""
        return self.detect_many([answer], [context], raw=raw)[0]
