"""The checker interface: how likely each triple is NOT supported by the context.

A :class:`Checker` gets triples (or, in raw mode, whole texts) and a context, and returns one
:class:`Verdict` per claim: the probability that the claim is *not* supported, or ``None`` with a
reason when the checker could not judge it (an LLM that skipped it, an HTTP error). Nothing is
ever silently turned into 0.

The base class validates the input, turns triples into sentences, splits many jobs into batches
and hands them to the subclass's :meth:`Checker._check`; it also answers for an empty context
(nothing can be supported by it: probability 1 with that reason) without calling the model.

Examples
--------
>>> class Lexical(Checker):
...     name = "lexical"
...     def _check(self, jobs, raw):
...         return [[Verdict(0.0 if c.text.lower() in ctx.lower() else 1.0) for c in claims]
...                 for claims, ctx in jobs]
>>> Lexical().check([Triple("Paris", "is in", "France")], "Paris is in France.")
[0.0]
>>> Lexical().judge([Triple("a", "b", "c")], "   ")[0].reason
'empty context: nothing supports the claim'
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import CheckerError, TripleError
from ...kg import Triple
from ...scoring.signature import CheckerSignature

__all__ = ["EMPTY_CONTEXT", "Checker", "Claim", "Verdict", "triple_claim"]

EMPTY_CONTEXT = "empty context: nothing supports the claim"
"""The reason given to every claim checked against a blank context (probability 1)."""


@dataclass(frozen=True)
class Verdict:
    """A checker's answer for one claim.

    Attributes
    ----------
    probability
        Probability that the claim is NOT supported by the context, in [0, 1]; ``None`` when
        the checker could not judge it.
    reason
        Why there is no probability (or a note on how it was obtained), else ``None``.
    detail
        Checker-specific extras (features, the model's verdict), JSON-serialisable.

    Examples
    --------
    >>> Verdict(0.25).judged, Verdict(None, "no verdict").judged
    (True, False)
    >>> Verdict.from_dict(Verdict(0.5, detail={"cos": 0.9}).to_dict())
    Verdict(probability=0.5, reason=None, detail={'cos': 0.9})
    """

    probability: float | None
    reason: str | None = None
    detail: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        p = self.probability
        if p is not None:
            if not isinstance(p, int | float) or math.isnan(float(p)) or not 0.0 <= p <= 1.0:
                raise CheckerError(f"a verdict's probability must be in [0, 1]; got {p!r}")
            object.__setattr__(self, "probability", float(p))
        elif not self.reason:
            raise CheckerError("a verdict without a probability needs a reason")

    @property
    def judged(self) -> bool:
        """Whether the checker gave a probability."""
        return self.probability is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "probability": self.probability,
            "reason": self.reason,
            "detail": dict(self.detail) if self.detail is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        """Read back :meth:`to_dict`."""
        return cls(data.get("probability"), data.get("reason"), data.get("detail"))


@dataclass(frozen=True)
class Claim:
    """What a checker judges: a sentence, and the triple it came from (``None`` in raw mode).

    Examples
    --------
    >>> Claim.of(Triple("Paris", "capital_of", "France")).text
    'Paris capital of France'
    """

    text: str
    triple: Triple | None = None

    @classmethod
    def of(cls, triple: Triple) -> Claim:
        """The claim of a triple (see :func:`triple_claim`)."""
        return cls(triple_claim(triple), triple)


def triple_claim(triple: Triple) -> str:
    """The sentence a checker sees for a triple: ``head relation tail`` with ``_`` as spaces.

    Examples
    --------
    >>> triple_claim(Triple("Eiffel_Tower", "opened in", "1889"))
    'Eiffel Tower opened in 1889'
    """
    text = f"{triple.head} {triple.relation} {triple.tail}".replace("_", " ")
    return " ".join(text.split())


class Checker(ABC):
    """Base class of triple checkers (see the module docstring).

    Subclasses set :attr:`name` (short, stored as the checker column) and implement
    :meth:`_check`; they may extend :attr:`signature`.

    Parameters
    ----------
    batch_size
        Most claims handed to :meth:`_check` in one job (an LLM prompt, an NLI batch).
    """

    name: str = "checker"
    version: str = "1"

    def __init__(self, batch_size: int = 16) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise CheckerError(f"batch_size must be a positive integer; got {batch_size!r}")
        self.batch_size = batch_size

    @property
    def signature(self) -> str:
        """What produced the probabilities: checker, model, prompt, calibration, version."""
        return CheckerSignature(self.name, self.version).format()

    # -- the subclass's part ----------------------------------------------------------------------

    @abstractmethod
    def _check(self, jobs: Sequence[tuple[Sequence[Claim], str]], raw: bool) -> list[list[Verdict]]:
        """One list of verdicts per ``(claims, context)`` job, one verdict per claim.

        Contexts are never blank and every job has at most :attr:`batch_size` claims. ``raw``
        says that the claims are whole answers rather than triple sentences.
        """

    # -- public entry points ----------------------------------------------------------------------

    def judge_claims_many(
        self, jobs: Sequence[tuple[Sequence[Claim | str], str]], *, raw: bool = False
    ) -> list[list[Verdict]]:
        """Verdicts for many ``(claims, context)`` pairs, batched (a string is a raw claim).

        Raises
        ------
        CheckerError
            If a claim or a context is not a string, or the checker returns the wrong count.
        """
        out: list[list[Verdict]] = [[] for _ in jobs]
        chunks: list[tuple[int, list[Claim], str]] = []
        for n, job in enumerate(jobs):
            if not isinstance(job, tuple | list) or len(job) != 2:
                raise CheckerError(f"job {n}: expected (claims, context); got {job!r:.80}")
            claims, context = job
            if not isinstance(context, str):
                raise CheckerError(f"job {n}: the context must be a string; got {context!r:.80}")
            if isinstance(claims, str) or not all(isinstance(c, str | Claim) for c in claims):
                raise CheckerError(f"job {n}: claims must be a list of strings or Claims")
            items = [c if isinstance(c, Claim) else Claim(c) for c in claims]
            if not context.strip():
                out[n] = [Verdict(1.0, EMPTY_CONTEXT) for _ in items]
                continue
            for lo in range(0, len(items), self.batch_size):
                chunks.append((n, items[lo : lo + self.batch_size], context))
        if chunks:
            results = self._check([(c, ctx) for _, c, ctx in chunks], raw)
            if len(results) != len(chunks):
                raise CheckerError(
                    f"{self.name}: returned {len(results)} results for {len(chunks)} batches"
                )
            for (n, claims, _), verdicts in zip(chunks, results, strict=True):
                if len(verdicts) != len(claims):
                    raise CheckerError(
                        f"{self.name}: returned {len(verdicts)} verdicts for {len(claims)} claims"
                    )
                out[n].extend(verdicts)
        return out

    def judge_many(
        self, jobs: Sequence[tuple[Sequence[Triple | Sequence[str]], str]]
    ) -> list[list[Verdict]]:
        """Verdicts for many ``(triples, context)`` pairs (one list per pair).

        Raises
        ------
        CheckerError
            If a triple is not three strings, or a context is not a string.

        Examples
        --------
        >>> class Always(Checker):
        ...     name = "always"
        ...     def _check(self, jobs, raw):
        ...         return [[Verdict(0.9) for _ in claims] for claims, _ in jobs]
        >>> [[v.probability for v in vs] for vs in Always(batch_size=1).judge_many(
        ...     [([("a", "r", "b"), ("c", "r", "d")], "ctx"), ([], "ctx")])]
        [[0.9, 0.9], []]
        """
        converted: list[tuple[Sequence[Claim | str], str]] = []
        for n, job in enumerate(jobs):
            if not isinstance(job, tuple | list) or len(job) != 2:
                raise CheckerError(f"job {n}: expected (triples, context); got {job!r:.80}")
            triples, context = job
            try:
                claims: list[Claim | str] = [Claim.of(Triple.from_any(t)) for t in triples]
            except TripleError as exc:
                raise CheckerError(f"job {n}: {exc}") from exc
            converted.append((claims, context))
        return self.judge_claims_many(converted)

    def judge(self, triples: Sequence[Triple | Sequence[str]], context: str) -> list[Verdict]:
        """One :class:`Verdict` per triple."""
        return self.judge_many([(triples, context)])[0]

    def check(self, triples: Sequence[Triple | Sequence[str]], context: str) -> list[float | None]:
        """Probability that each triple is NOT supported by ``context`` (``None``: not judged).

        See :meth:`judge` for the reasons behind a ``None``.
        """
        return [v.probability for v in self.judge(triples, context)]

    def check_text(self, text: str, context: str) -> Verdict:
        """Raw mode: one verdict for a whole answer against the context."""
        return self.judge_claims_many([([text], context)], raw=True)[0][0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.signature!r})"
