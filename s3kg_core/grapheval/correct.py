"""GraphCorrect: fix the flagged triples of an answer one at a time, then check again.

For each flagged triple (in answer order) prompt 1 asks the LLM for a corrected triple given the
context (``{"triple": [s, r, o]}``), and prompt 2 asks it to put the corrected triple's
information in the answer with minimal edits (``{"answer": "..."}``); the next flagged triple
is fixed in the answer edited so far. The corrected answer then goes through detection again
(same extractor and checker). A step that fails (HTTP error, reply beyond repair, a corrected
triple identical to the flagged one) is recorded for that triple and skipped, never raised.

The direct-prompt baseline asks once: "correct the answer given the context".

Reported per set of answers (:func:`summarise_corrections`): the share of answers detected as
inconsistent before and no longer after (the *believed-corrected* hallucinations, as GraphEval
itself judges them), flagged triples before and after, and ROUGE-1/2/L F1 between original
and corrected answers (``rouge-score``), which measures how much of the answer was kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import GraphEvalError, LLMResponseError
from ..extract.parse import parse_triples, repair_json
from ..kg import Triple
from ..llm.client import ChatRequest, LLMClient
from .detect import Detection, GraphEval
from .prompts import (
    CORRECT_TRIPLE_PROMPT_VERSION,
    DIRECT_CORRECT_PROMPT_VERSION,
    REPLACE_PROMPT_VERSION,
    correct_triple_messages,
    direct_correct_messages,
    replace_messages,
)

__all__ = [
    "TRIPLE_MAX_TOKENS",
    "Correction",
    "GraphCorrect",
    "TripleFix",
    "parse_answer_reply",
    "parse_triple_reply",
    "rouge_scores",
    "summarise_corrections",
]

TRIPLE_MAX_TOKENS = 128
"""Most completion tokens of the corrected-triple prompt (a triple is about 30)."""


def parse_triple_reply(text: str) -> Triple:
    r"""The corrected triple of prompt 1's reply.

    Raises
    ------
    LLMResponseError
        If the reply holds no ``[subject, relation, object]``.

    Examples
    --------
    >>> parse_triple_reply('```json\n{"triple": ["Eiffel Tower", "opened in", "1889"]}\n```')
    Triple(head='Eiffel Tower', relation='opened in', tail='1889')
    >>> parse_triple_reply('{"subject": "Eiffel Tower", "relation": "opened in", '
    ...                    '"object": "1889", "context": {"note": "a"}, "extra": "cut o')
    Triple(head='Eiffel Tower', relation='opened in', tail='1889')
    """
    value, _ = repair_json(text, truncated=True)
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        # {"triple": [...]} as asked; a bare {"subject", "relation", "object"} is read too
        value = lowered.get("triple", lowered.get("corrected_triple", value))
    triples, _ = parse_triples([value] if isinstance(value, list | dict) else value)
    if not triples:
        raise LLMResponseError(f'expected {{"triple": [s, r, o]}}; got {text.strip()[:120]!r}')
    return triples[0]


def parse_answer_reply(text: str) -> str:
    """The edited answer of prompt 2's (or the direct baseline's) reply.

    Raises
    ------
    LLMResponseError
        If the reply holds no non-empty ``answer`` string.

    Examples
    --------
    >>> parse_answer_reply('{"answer": "It opened in 1889."}')
    'It opened in 1889.'
    """
    value, _ = repair_json(text)
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        value = lowered.get("answer", lowered.get("text"))
    if not isinstance(value, str) or not value.strip():
        raise LLMResponseError(f'expected {{"answer": "..."}}; got {text.strip()[:120]!r}')
    return value.strip()


@dataclass(frozen=True)
class TripleFix:
    """What happened to one flagged triple: the corrected triple, or why there is none."""

    triple: Triple
    corrected: Triple | None = None
    applied: bool = False
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "triple": self.triple.to_list(),
            "corrected": self.corrected.to_list() if self.corrected else None,
            "applied": self.applied,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TripleFix:
        """Read back :meth:`to_dict`."""
        corrected = data.get("corrected")
        return cls(
            Triple.from_any(data["triple"]),
            Triple.from_any(corrected) if corrected else None,
            bool(data.get("applied")),
            data.get("error"),
        )


@dataclass(frozen=True)
class Correction:
    """A corrected answer, how it was obtained, and its detection before and after.

    Examples
    --------
    >>> c = Correction("a", "a", "graphcorrect", Detection((), (), (), False), None)
    >>> Correction.from_dict(c.to_dict()).method
    'graphcorrect'
    """

    original: str
    corrected: str
    method: str
    before: Detection
    after: Detection | None
    fixes: tuple[TripleFix, ...] = ()
    error: str | None = None
    rouge: Mapping[str, float] = field(default_factory=dict)

    @property
    def believed_corrected(self) -> bool | None:
        """Inconsistent before and consistent after (``None`` if not flagged before)."""
        if not self.before.inconsistent:
            return None
        return self.after is not None and self.after.inconsistent is False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "original": self.original,
            "corrected": self.corrected,
            "method": self.method,
            "before": self.before.to_dict(),
            "after": self.after.to_dict() if self.after is not None else None,
            "fixes": [f.to_dict() for f in self.fixes],
            "error": self.error,
            "rouge": dict(self.rouge),
            "believed_corrected": self.believed_corrected,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Correction:
        """Read back :meth:`to_dict`."""
        after = data.get("after")
        return cls(
            original=str(data["original"]),
            corrected=str(data["corrected"]),
            method=str(data["method"]),
            before=Detection.from_dict(data["before"]),
            after=Detection.from_dict(after) if after else None,
            fixes=tuple(TripleFix.from_dict(f) for f in data.get("fixes", [])),
            error=data.get("error"),
            rouge={str(k): float(v) for k, v in dict(data.get("rouge") or {}).items()},
        )


def rouge_scores(original: str, corrected: str) -> dict[str, float]:
    """ROUGE-1/2/L F1 of the corrected answer against the original (``rouge-score``).

    Examples
    --------
    >>> rouge_scores("It opened in 1899.", "It opened in 1889.")["rouge1"]
    0.75
    """
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    scores = scorer.score(original, corrected)
    return {k: round(float(v.fmeasure), 6) for k, v in scores.items()}


class GraphCorrect:
    """Correct flagged triples with an LLM, then re-run GraphEval on the result.

    Parameters
    ----------
    client
        The configured :class:`~s3kg_core.llm.client.LLMClient`.
    grapheval
        The detector used before and after (same extractor and checker).
    temperature, seed, max_tokens
        Sampling settings of the correction calls. The corrected-triple prompt never gets more
        than :data:`TRIPLE_MAX_TOKENS` (one small JSON object; a weak model would otherwise
        fill ``max_tokens`` with runaway JSON, minutes per call on a CPU).

    Examples
    --------
    >>> from s3kg_core.llm.client import LLMSettings
    >>> from s3kg_core.grapheval.checkers.base import Checker
    >>> class Never(Checker):
    ...     def _check(self, jobs, raw):
    ...         return [[Verdict(0.0) for _ in c] for c, _ in jobs]
    >>> from s3kg_core.grapheval.checkers.base import Verdict
    >>> gc = GraphCorrect(LLMClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1")),
    ...                   GraphEval(Never()))
    >>> gc.correct_many([""], ["ctx"])[0].corrected  # nothing flagged: no call, unchanged
    ''
    """

    def __init__(
        self,
        client: LLMClient,
        grapheval: GraphEval,
        *,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int = 1024,
    ) -> None:
        if not isinstance(client, LLMClient):
            raise GraphEvalError(f"client must be an LLMClient; got {type(client).__name__}")
        self.client = client
        self.grapheval = grapheval
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens

    def _request(
        self, messages: tuple[tuple[str, str], ...], version: str, max_tokens: int | None = None
    ) -> ChatRequest:
        return ChatRequest(
            messages=messages,
            prompt_version=version,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=min(self.max_tokens, max_tokens or self.max_tokens),
        )

    def _befores(
        self,
        answers: Sequence[str],
        contexts: Sequence[str],
        detections: Sequence[Detection] | None,
    ) -> list[Detection]:
        """The detections to correct: given ones (checked for length) or detected now."""
        if len(answers) != len(contexts):
            raise GraphEvalError(f"{len(answers)} answers but {len(contexts)} contexts")
        befores = (
            list(detections)
            if detections is not None
            else self.grapheval.detect_many(answers, contexts)
        )
        if len(befores) != len(answers):
            raise GraphEvalError(f"{len(answers)} answers but {len(befores)} detections")
        return befores

    def _finish(
        self,
        originals: Sequence[str],
        corrected: Sequence[str],
        contexts: Sequence[str],
        befores: Sequence[Detection],
        method: str,
        fixes: Sequence[Sequence[TripleFix]],
        errors: Sequence[str | None],
    ) -> list[Correction]:
        changed = [i for i, b in enumerate(befores) if b.inconsistent]
        afters = self.grapheval.detect_many(
            [corrected[i] for i in changed], [contexts[i] for i in changed]
        )
        after_of = dict(zip(changed, afters, strict=True))
        out = []
        for i, original in enumerate(originals):
            out.append(
                Correction(
                    original=original,
                    corrected=corrected[i],
                    method=method,
                    before=befores[i],
                    after=after_of.get(i),
                    fixes=tuple(fixes[i]),
                    error=errors[i],
                    rouge=rouge_scores(original, corrected[i]) if i in after_of else {},
                )
            )
        return out

    def correct_many(
        self,
        answers: Sequence[str],
        contexts: Sequence[str],
        detections: Sequence[Detection] | None = None,
    ) -> list[Correction]:
        """GraphCorrect every answer flagged as inconsistent; others come back unchanged.

        Parameters
        ----------
        answers, contexts
            The answers and their contexts.
        detections
            Their detections, if already computed (else detection runs first).

        Raises
        ------
        EndpointError
            When the endpoint is unreachable (from the client); per-request errors are
            recorded in the triple's :class:`TripleFix` instead.
        """
        befores = self._befores(answers, contexts, detections)
        current = list(answers)
        fixes: list[list[TripleFix]] = [[] for _ in answers]
        rounds = max((len(b.flagged) for b in befores if b.inconsistent), default=0)
        for k in range(rounds):
            todo = [i for i, b in enumerate(befores) if b.inconsistent and k < len(b.flagged)]
            flagged = {i: befores[i].flagged_triples[k] for i in todo}
            results = self.client.chat_many(
                [
                    self._request(
                        correct_triple_messages(contexts[i], flagged[i]),
                        CORRECT_TRIPLE_PROMPT_VERSION,
                        TRIPLE_MAX_TOKENS,
                    )
                    for i in todo
                ]
            )
            fixed: dict[int, Triple] = {}
            for i, result in zip(todo, results, strict=True):
                if not result.ok:
                    fixes[i].append(TripleFix(flagged[i], error=result.failure()))
                    continue
                try:
                    new = parse_triple_reply(result.text or "")
                except LLMResponseError as exc:
                    fixes[i].append(TripleFix(flagged[i], error=f"unparseable triple: {exc}"))
                    continue
                if new == flagged[i]:
                    fixes[i].append(
                        TripleFix(flagged[i], new, error="the model returned the same triple")
                    )
                    continue
                fixed[i] = new
            order = list(fixed)
            results = self.client.chat_many(
                [
                    self._request(
                        replace_messages(current[i], flagged[i], fixed[i]), REPLACE_PROMPT_VERSION
                    )
                    for i in order
                ]
            )
            for i, result in zip(order, results, strict=True):
                if not result.ok:
                    fixes[i].append(TripleFix(flagged[i], fixed[i], error=result.failure()))
                    continue
                try:
                    current[i] = parse_answer_reply(result.text or "")
                except LLMResponseError as exc:
                    fixes[i].append(
                        TripleFix(flagged[i], fixed[i], error=f"unparseable answer: {exc}")
                    )
                    continue
                fixes[i].append(TripleFix(flagged[i], fixed[i], applied=True))
        errors = [
            None if not f or any(x.applied for x in f) else "no flagged triple could be corrected"
            for f in fixes
        ]
        return self._finish(answers, current, contexts, befores, "graphcorrect", fixes, errors)

    def direct_many(
        self,
        answers: Sequence[str],
        contexts: Sequence[str],
        detections: Sequence[Detection] | None = None,
    ) -> list[Correction]:
        """The baseline: one "correct the answer given the context" prompt per flagged answer."""
        befores = self._befores(answers, contexts, detections)
        todo = [i for i, b in enumerate(befores) if b.inconsistent]
        results = self.client.chat_many(
            [
                self._request(
                    direct_correct_messages(answers[i], contexts[i]), DIRECT_CORRECT_PROMPT_VERSION
                )
                for i in todo
            ]
        )
        current = list(answers)
        errors: list[str | None] = [None] * len(answers)
        for i, result in zip(todo, results, strict=True):
            if not result.ok:
                errors[i] = result.failure()
                continue
            try:
                current[i] = parse_answer_reply(result.text or "")
            except LLMResponseError as exc:
                errors[i] = f"unparseable answer: {exc}"
        no_fixes: list[list[TripleFix]] = [[] for _ in answers]
        return self._finish(answers, current, contexts, befores, "direct", no_fixes, errors)


def summarise_corrections(corrections: Sequence[Correction]) -> dict[str, Any]:
    """Share of believed-corrected hallucinations, flagged triples before/after, mean ROUGE.

    Examples
    --------
    >>> summarise_corrections([])["believed_corrected_share"] is None
    True
    """
    flagged = [c for c in corrections if c.before.inconsistent]
    fixed = [c for c in flagged if c.believed_corrected]
    rouge = [c.rouge for c in flagged if c.rouge]
    mean = (
        {k: round(sum(r[k] for r in rouge) / len(rouge), 6) for k in ("rouge1", "rouge2", "rougeL")}
        if rouge
        else {}
    )
    return {
        "answers": len(corrections),
        "flagged_answers": len(flagged),
        "believed_corrected": len(fixed),
        "believed_corrected_share": round(len(fixed) / len(flagged), 6) if flagged else None,
        "flagged_triples_before": sum(len(c.before.flagged) for c in flagged),
        "flagged_triples_after": sum(len(c.after.flagged) for c in flagged if c.after),
        "failed": sum(1 for c in flagged if c.error),
        "rouge": mean,
    }
