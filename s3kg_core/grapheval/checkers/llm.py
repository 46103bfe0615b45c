"""The LLM checker: one prompt per batch of claims with the context, strict JSON verdicts.

The model answers ``{"verdicts": [{"id": 1, "supported": true, "confidence": 0.9}, ...]}``.
A verdict's confidence (clipped to [0.5, 1], 1 when missing) becomes the probability of *not*
supported: ``confidence`` for ``supported: false``, ``1 - confidence`` for ``true``. A claim
without a usable verdict (missing id, garbled entry, output beyond repair, HTTP error, refusal)
gets no probability and the reason, never a silent 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...errors import CheckerError, LLMResponseError
from ...extract.parse import repair_json
from ...extract.prompts import truncate
from ...llm.client import ChatRequest, ChatResult, LLMClient
from ...scoring.signature import CheckerSignature
from ..prompts import CHECK_PROMPT_VERSION, check_messages
from .base import Checker, Claim, Verdict

__all__ = ["LLMChecker", "parse_verdicts"]

_TRUE = frozenset({"true", "yes", "supported", "support", "1"})
_FALSE = frozenset({"false", "no", "unsupported", "not supported", "0"})


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
    return None


def _confidence(value: Any) -> float | None:
    if value is None:
        return 1.0
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        c = float(value)
    except ValueError:
        return None
    if c != c:  # NaN
        return None
    if c > 1.0 and c <= 100.0:  # a percentage
        c /= 100.0
    return min(1.0, max(0.5, c))


def parse_verdicts(text: str, n: int) -> tuple[list[Verdict], tuple[str, ...]]:
    """Turn an LLM reply into ``n`` verdicts (ids 1..n) and the JSON repairs that were needed.

    Raises
    ------
    LLMResponseError
        If the reply is not JSON after the bounded repairs, or has no list of verdicts.

    Examples
    --------
    >>> vs, _ = parse_verdicts('{"verdicts": [{"id": 2, "supported": false, "confidence": 0.8},'
    ...                        ' {"id": 1, "supported": "yes"}]}', 3)
    >>> [v.probability for v in vs]
    [0.0, 0.8, None]
    >>> vs[2].reason
    'no verdict for statement 3 in the reply'

    A reply that stops mid-way (out of tokens) keeps its complete verdicts:

    >>> vs, repairs = parse_verdicts('{"verdicts": [{"id": 1, "supported": true, '
    ...                              '"confidence": 0.9}, {"id": 2, "supp', 2)
    >>> [round(v.probability, 3) if v.probability is not None else v.reason for v in vs], repairs
    ([0.1, 'the reply was cut off before statement 2'], ('fences', 'truncated'))
    """
    value, repairs = repair_json(text, truncated=True)
    if isinstance(value, dict):
        lowered = {str(k).lower(): v for k, v in value.items()}
        value = lowered.get("verdicts")
    if not isinstance(value, list):
        raise LLMResponseError('expected {"verdicts": [...]} in the reply')
    found: dict[int, Verdict] = {}
    for pos, entry in enumerate(value, 1):
        if not isinstance(entry, dict):
            continue
        raw_id = entry.get("id", pos)
        try:
            key = int(raw_id)
        except (TypeError, ValueError):
            continue
        if not 1 <= key <= n or key in found:
            continue
        supported = _as_bool(entry.get("supported"))
        confidence = _confidence(entry.get("confidence"))
        if supported is None or confidence is None:
            found[key] = Verdict(
                None,
                f"unusable verdict for statement {key}: {entry!r:.120}",
            )
            continue
        p = 1.0 - confidence if supported else confidence
        found[key] = Verdict(p, detail={"supported": supported, "confidence": confidence})
    cut = "truncated" in repairs
    return [found.get(i, Verdict(None, _missing_reason(i, cut))) for i in range(1, n + 1)], repairs


def _has_verdicts(result: ChatResult) -> bool:
    """Whether a reply holds a list of verdicts (only those are cached: a rerun asks again)."""
    try:
        parse_verdicts(result.text or "", 1)
    except LLMResponseError:
        return False
    return True


def _missing_reason(statement: int, cut: bool) -> str:
    if cut:
        return f"the reply was cut off before statement {statement}"
    return f"no verdict for statement {statement} in the reply"


class LLMChecker(Checker):
    """Check claims with an LLM through the project's OpenAI-compatible client.

    Parameters
    ----------
    client
        A configured :class:`~s3kg_core.llm.client.LLMClient` (cache, limits, retries).
    batch_size
        Claims per prompt.
    max_context_chars
        Longer contexts are cut at a word boundary; the verdicts then say so in their detail.
    temperature, seed, max_tokens
        Sampling settings (``max_tokens`` default: 40 per claim plus 40).

    Examples
    --------
    >>> from s3kg_core.llm.client import LLMSettings
    >>> c = LLMChecker(LLMClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1")))
    >>> c.name, c.signature
    ('llm:m', 'checker:llm|model:m|prompt:grapheval-check-v1|batch:8|version:llm-1')
    """

    version = "llm-1"

    def __init__(
        self,
        client: LLMClient,
        *,
        batch_size: int = 8,
        max_context_chars: int = 12_000,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(batch_size)
        if not isinstance(client, LLMClient):
            raise CheckerError(f"client must be an LLMClient; got {type(client).__name__}")
        if max_context_chars < 100:
            raise CheckerError(f"max_context_chars must be at least 100; got {max_context_chars}")
        self.client = client
        self.max_context_chars = max_context_chars
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self.name = f"llm:{client.settings.model}"

    @property
    def signature(self) -> str:
        """Checker, model, prompt version, batch size, version (never the endpoint's key)."""
        settings = (
            ("model", self.client.settings.model),
            ("prompt", CHECK_PROMPT_VERSION),
            ("batch", self.batch_size),
        )
        return CheckerSignature("llm", self.version, settings).format()

    def _check(self, jobs: Sequence[tuple[Sequence[Claim], str]], raw: bool) -> list[list[Verdict]]:
        requests = []
        cut_flags = []
        for claims, context in jobs:
            ctx, cut = truncate(context, self.max_context_chars)
            cut_flags.append(cut)
            requests.append(
                ChatRequest(
                    messages=check_messages(ctx, [c.text for c in claims]),
                    prompt_version=CHECK_PROMPT_VERSION,
                    temperature=self.temperature,
                    seed=self.seed,
                    max_tokens=self.max_tokens or 40 + 40 * len(claims),
                    json_mode=False,
                )
            )
        results = self.client.chat_many(requests, usable=_has_verdicts)
        out: list[list[Verdict]] = []
        for (claims, _), cut, result in zip(jobs, cut_flags, results, strict=True):
            if not result.ok:
                reason = result.failure()
                out.append([Verdict(None, reason) for _ in claims])
                continue
            try:
                verdicts, repairs = parse_verdicts(result.text or "", len(claims))
            except LLMResponseError as exc:
                out.append([Verdict(None, f"unparseable reply: {exc}") for _ in claims])
                continue
            extra = {"context_truncated": cut, "repairs": list(repairs)}
            out.append(
                [
                    Verdict(v.probability, v.reason, {**(v.detail or {}), **extra})
                    if v.judged
                    else v
                    for v in verdicts
                ]
            )
        return out
