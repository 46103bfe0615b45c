"""Output held to a JSON schema while it is generated: OpenAI's ``response_format``, locally.

``s3kg llm serve`` (:mod:`s3kg_core.llm.chat_server`) honours ``response_format`` as the OpenAI
API defines it: ``{"type": "json_schema", "json_schema": {"schema": {...}}}`` constrains every
token to what can still become a JSON value valid under the schema, ``{"type": "json_object"}``
to any JSON object, ``{"type": "text"}`` (or none) to nothing. The constraint is
lm-format-enforcer's (``lmformatenforcer``: a character-level JSON-schema parser walked along
the tokenizer's prefix tree); this module only adapts it to transformers 5, whose module layout
the package's own transformers integration predates.

A model small enough to run on a CPU rarely closes free-form JSON within a token budget; held
to a schema whose arrays and strings are bounded (``maxItems``, ``maxLength``) it cannot do
anything else.

Examples
--------
>>> parse_response_format({"type": "json_schema", "json_schema": {"name": "kg",
...     "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}})
{'type': 'object', 'properties': {'a': {'type': 'string'}}}
>>> parse_response_format({"type": "json_object"})
{'type': 'object'}
>>> parse_response_format({"type": "text"}) is None
True
>>> try:
...     parse_response_format({"type": "yaml"})
... except ConfigError as exc:
...     print(exc)
response_format.type must be 'text', 'json_object' or 'json_schema'; got 'yaml'
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError

__all__ = [
    "MAX_SCHEMA_CHARS",
    "JsonSchemaLogitsProcessor",
    "parse_response_format",
    "tokenizer_data",
]

MAX_SCHEMA_CHARS = 64_000
"""The largest schema accepted, as JSON text (a request's schema is parsed for every token)."""

_MAX_WHITESPACE = 1
"""Whitespace allowed in a row between JSON tokens: a budget of tokens is not spent on layout."""

_ANY_OBJECT: dict[str, Any] = {"type": "object"}


def parse_response_format(response_format: Any) -> dict[str, Any] | None:
    """The JSON schema a request's ``response_format`` asks for, or ``None`` for free text.

    Parameters
    ----------
    response_format
        The request's ``response_format`` field (``None`` when absent).

    Returns
    -------
    dict or None
        The schema (``{"type": "object"}`` for ``json_object``), or ``None``.

    Raises
    ------
    ConfigError
        If the field is not one of OpenAI's three forms, or its schema is not an object or is
        larger than :data:`MAX_SCHEMA_CHARS` (the server answers 400).
    """
    import json

    if response_format is None:
        return None
    if not isinstance(response_format, Mapping):
        raise ConfigError('response_format must be an object such as {"type": "json_object"}')
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return dict(_ANY_OBJECT)
    if kind != "json_schema":
        raise ConfigError(
            "response_format.type must be 'text', 'json_object' or 'json_schema'; "
            f"got {str(kind)[:40]!r}"
        )
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if schema is None:
        return dict(_ANY_OBJECT)
    if not isinstance(schema, Mapping):
        raise ConfigError("response_format.json_schema.schema must be a JSON schema object")
    if len(json.dumps(schema)) > MAX_SCHEMA_CHARS:
        raise ConfigError(
            f"response_format.json_schema.schema is larger than {MAX_SCHEMA_CHARS:,} characters"
        )
    return dict(schema)


def _regular_tokens(tokenizer: Any) -> list[tuple[int, str, bool]]:
    """``(id, text, starts a word)`` of every token that is not special (lm-format-enforcer's)."""
    zero = tokenizer.encode("0", add_special_tokens=False)[-1]
    special = set(tokenizer.all_special_ids)
    tokens = []
    for token in range(len(tokenizer)):
        if token in special:
            continue
        after_zero = tokenizer.decode([zero, token])[1:]
        alone = tokenizer.decode([token])
        tokens.append((token, after_zero, len(after_zero) > len(alone)))
    return tokens


@functools.lru_cache(maxsize=4)
def _cached_data(tokenizer: Any) -> Any:
    from lmformatenforcer.tokenenforcer import TokenEnforcerTokenizerData

    def decode(tokens: list[int]) -> str:
        return str(tokenizer.decode(tokens)).rstrip("\ufffd")

    return TokenEnforcerTokenizerData(
        _regular_tokens(tokenizer), decode, tokenizer.eos_token_id, False, len(tokenizer)
    )


def tokenizer_data(tokenizer: Any) -> Any:
    """lm-format-enforcer's view of a transformers tokenizer (built once per tokenizer: ~2 s)."""
    return _cached_data(tokenizer)


@functools.lru_cache(maxsize=4)
def _token_texts(tokenizer: Any) -> tuple[dict[int, str], tuple[int, ...]]:
    """Each regular token's text, and the tokens that hold a control character."""
    texts = {int(tid): str(text) for tid, text, _ in _cached_data(tokenizer).regular_tokens}
    control = tuple(t for t, text in texts.items() if any(c < " " or c == "\x7f" for c in text))
    return texts, control


class JsonSchemaLogitsProcessor:
    """A transformers logits processor that allows only tokens keeping the output valid JSON.

    Parameters
    ----------
    tokenizer
        The model's tokenizer.
    schema
        The JSON schema the whole reply must satisfy.

    Notes
    -----
    Batch size one (the server generates one request at a time). Once the JSON value is
    complete only the end-of-sequence token is allowed, so generation stops there. Two guards
    cover what lm-format-enforcer 0.11 lets through: inside a string no token with a control
    character is allowed (JSON forbids them unescaped; the enforcer let a tab in after a
    string's first characters), and where the enforcer allows nothing the sequence ends
    (an incomplete reply, not a sampling error).
    """

    def __init__(self, tokenizer: Any, schema: Mapping[str, Any]) -> None:
        from lmformatenforcer import JsonSchemaParser, TokenEnforcer

        parser = JsonSchemaParser(dict(schema))
        self._enforcer = TokenEnforcer(tokenizer_data(tokenizer), parser)
        # TokenEnforcer gives the parser a fresh config (the tokenizer's alphabet): bound
        # whitespace on that one, and keep control characters out of its alphabet
        parser.config.max_consecutive_whitespaces = _MAX_WHITESPACE
        alphabet = "".join(c for c in parser.config.alphabet if c >= " " and c != "\x7f")
        parser.config.alphabet = alphabet
        # the parser reads a string's first characters from the alphabet it was made with
        # (COMPLETE_ALPHABET) and the others from the tokenizer's: one alphabet for both
        parser.context.alphabet_without_quotes = alphabet.replace('"', "")
        self._texts, self._control = _token_texts(tokenizer)
        eos = tokenizer.eos_token_id
        self._eos = list(eos) if isinstance(eos, list | tuple) else [eos]
        self._seen: int | None = None  # tokens lexed so far (the prompt's, at first)
        self._in_string = False
        self._escape = False

    def _lex(self, text: str) -> None:
        """Follow whether the reply is inside a JSON string."""
        for c in text:
            if self._escape:
                self._escape = False
            elif self._in_string:
                if c == "\\":
                    self._escape = True
                elif c == '"':
                    self._in_string = False
            elif c == '"':
                self._in_string = True

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """``scores`` with every token the schema forbids next set to minus infinity."""
        import torch

        sequence = input_ids[0].tolist()
        if self._seen is not None:
            for token in sequence[self._seen :]:
                self._lex(self._texts.get(token, ""))
        self._seen = len(sequence)
        allowed = self._enforcer.get_allowed_tokens(sequence).allowed_tokens
        mask = torch.full_like(scores, float("-inf"))
        if allowed:
            mask[:, allowed] = 0
        if self._in_string and self._control:
            mask[:, list(self._control)] = float("-inf")
        if not torch.isfinite(mask).any():
            mask[:, self._eos] = 0
        return scores + mask
