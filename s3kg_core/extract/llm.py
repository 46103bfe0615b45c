"""KG extraction through an OpenAI-compatible LLM: the S3KG joint prompt or GraphEval's.

``prompt="joint"`` (default) sends an item's reference answer, model answer and context in one
call and asks for three KGs with consistent labels, as the S3KG paper does. ``prompt="single"``
extracts each text on its own with GraphEval's prompt. A failed call or an output that cannot be
parsed gives ``TextKG(status="failed: <reason>")`` for the affected texts; nothing is guessed.
Only replies that parse are kept in the client's cache, so a failed extraction is asked again
on the next run instead of being parsed again from the cache.

Every request carries the JSON schema of its reply (:mod:`s3kg_core.extract.schemas`) as
``response_format``: an endpoint that constrains its output to it (``s3kg llm serve``) cannot
reply with anything but complete JSON of the prompt's shape. One that rejects the field is asked
again without it for the rest of the run, one that ignores it is parsed as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Literal

from ..errors import ConfigError, LLMResponseError
from ..llm.client import ChatRequest, ChatResult, LLMClient
from ..progress import Progress
from ..store.records import short_name
from .base import SOURCES, ItemTexts, TextKG
from .parse import parse_kg_json
from .prompts import (
    JOINT_KEYS,
    JOINT_PROMPT_VERSION,
    SINGLE_KEY,
    SINGLE_PROMPT_VERSION,
    joint_messages,
    single_messages,
    truncate,
)
from .schemas import joint_schema, schema_text, single_schema

__all__ = ["LLMExtractor"]


def _parses(keys: Sequence[str]) -> Callable[[ChatResult], bool]:
    """Whether a reply parses as the KGs of ``keys`` (what the client may cache and serve)."""

    def usable(result: ChatResult) -> bool:
        try:
            parse_kg_json(result.text or "", keys)
        except LLMResponseError:
            return False
        return True

    return usable


def _failed(result: ChatResult) -> str:
    if result.status == "refused":
        return f"failed: refused ({result.error})"
    if result.status == "empty":
        return "failed: empty response"
    return f"failed: {result.error}"


class LLMExtractor:
    """Extract KGs with an LLM.

    Parameters
    ----------
    client
        The configured :class:`~s3kg_core.llm.client.LLMClient` (cache, limits, retries).
    prompt
        ``"joint"`` (three texts per call) or ``"single"`` (one text per call).
    max_input_chars
        Budget per text; a longer text is cut at a word boundary and its KG marked truncated.
    temperature, seed, max_tokens
        Sampling settings of the extraction calls.

    Examples
    --------
    >>> from s3kg_core.llm.client import LLMSettings
    >>> ex = LLMExtractor(LLMClient(LLMSettings(model="m", base_url="http://127.0.0.1:9/v1")))
    >>> ex.name
    'llm:m:joint-kg-v1'
    >>> LLMExtractor(LLMClient(LLMSettings(model="/cache/models/smol", base_url="http://h/v1"))).name
    'llm:smol:joint-kg-v1'
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        prompt: Literal["joint", "single"] = "joint",
        max_input_chars: int = 12_000,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_tokens: int | None = 2048,
    ) -> None:
        if prompt not in ("joint", "single"):
            raise ConfigError(f"prompt must be 'joint' or 'single'; got {prompt!r}")
        if max_input_chars < 100:
            raise ConfigError(f"max_input_chars must be at least 100; got {max_input_chars}")
        self.client = client
        self.prompt = prompt
        self.max_input_chars = max_input_chars
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        version = JOINT_PROMPT_VERSION if prompt == "joint" else SINGLE_PROMPT_VERSION
        model = client.settings.model
        if model.startswith(("/", "~", "./", "../")):  # a local folder: its name, not its path
            model = short_name(model)
        self.name = f"llm:{model}:{version}"

    def deferred_cache(self) -> contextlib.AbstractContextManager[None]:
        """Cache the replies of the block only if it ends without an error.

        The extraction stage wraps extracting a batch and storing its KGs in it, so a reply
        whose KGs the store rejects is not cached (see
        :meth:`~s3kg_core.llm.client.LLMClient.deferred_cache`).
        """
        return self.client.deferred_cache()

    def _unparsed(self, result: ChatResult, exc: LLMResponseError) -> str:
        """The status of a reply that did not parse, saying when it was cut at max_tokens."""
        if result.finish_reason == "length":
            return (
                f"failed: the reply stopped at the token limit ({self.max_tokens}; raise "
                f"--max-tokens) before its JSON was complete: {exc}"
            )
        return f"failed: {exc}"

    def _request(
        self, messages: tuple[tuple[str, str], ...], version: str, schema: dict[str, object]
    ) -> ChatRequest:
        return ChatRequest(
            messages=messages,
            prompt_version=version,
            temperature=self.temperature,
            seed=self.seed,
            max_tokens=self.max_tokens,
            json_schema=schema_text(schema),
        )

    def extract(
        self, items: Sequence[ItemTexts], progress: Progress | None = None
    ) -> list[dict[str, TextKG]]:
        """One ``{source: TextKG}`` per item, for the sources whose text was given."""
        if self.prompt == "single":
            return self._extract_single(items, progress)
        requests = []
        cut: list[dict[str, bool]] = []
        for item in items:
            texts = item.given()
            flags: dict[str, bool] = {}
            parts = {}
            for source in SOURCES:
                parts[source], flags[source] = truncate(texts.get(source, ""), self.max_input_chars)
            cut.append(flags)
            messages = joint_messages(parts["gold"], parts["answer"], parts["context"])
            schema = joint_schema(self.max_tokens, [s for s in SOURCES if parts[s].strip()])
            requests.append(self._request(messages, JOINT_PROMPT_VERSION, schema))
        results = self.client.chat_many(requests, progress=progress, usable=_parses(JOINT_KEYS))
        out = []
        for item, flags, result in zip(items, cut, results, strict=True):
            given = item.given()
            if not result.ok:
                status = _failed(result)
                out.append({s: TextKG(status=status, truncated=flags[s]) for s in given})
                continue
            try:
                parsed = parse_kg_json(result.text or "", JOINT_KEYS)
            except LLMResponseError as exc:
                status = self._unparsed(result, exc)
                out.append({s: TextKG(status=status, truncated=flags[s]) for s in given})
                continue
            kgs = {}
            for source, key in zip(SOURCES, JOINT_KEYS, strict=True):
                if source in given:
                    kgs[source] = TextKG(
                        tuple(parsed.graphs[key]),
                        n_dropped=parsed.dropped[key],
                        truncated=flags[source],
                    )
            out.append(kgs)
        return out

    def extract_texts(self, texts: Sequence[str], progress: Progress | None = None) -> list[TextKG]:
        """One KG per text with the single-text prompt (whatever ``prompt`` is)."""
        todo = [i for i, text in enumerate(texts) if text.strip()]
        cut = {i: truncate(texts[i], self.max_input_chars) for i in todo}
        schema = single_schema(self.max_tokens)
        requests = [
            self._request(single_messages(cut[i][0]), SINGLE_PROMPT_VERSION, schema) for i in todo
        ]
        replies = self.client.chat_many(requests, progress=progress, usable=_parses([SINGLE_KEY]))
        results = dict(zip(todo, replies, strict=True))
        out = []
        for i in range(len(texts)):
            if i not in results:
                out.append(TextKG(status="empty"))
                continue
            result, was_cut = results[i], cut[i][1]
            if not result.ok:
                out.append(TextKG(status=_failed(result), truncated=was_cut))
                continue
            try:
                parsed = parse_kg_json(result.text or "", [SINGLE_KEY])
            except LLMResponseError as exc:
                out.append(TextKG(status=self._unparsed(result, exc), truncated=was_cut))
                continue
            out.append(
                TextKG(
                    tuple(parsed.graphs[SINGLE_KEY]),
                    n_dropped=parsed.dropped[SINGLE_KEY],
                    truncated=was_cut,
                )
            )
        return out

    def _extract_single(
        self, items: Sequence[ItemTexts], progress: Progress | None
    ) -> list[dict[str, TextKG]]:
        flat = [(i, s, t) for i, item in enumerate(items) for s, t in item.given().items()]
        kgs = self.extract_texts([t for _, _, t in flat], progress)
        out: list[dict[str, TextKG]] = [{} for _ in items]
        for (i, source, _), kg in zip(flat, kgs, strict=True):
            out[i][source] = kg
        return out
