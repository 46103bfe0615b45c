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
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ConfigError

__all__ = [
    "MAX_SCHEMA_CHARS",
    "MAX_SCHEMA_DEPTH",
    "JsonSchemaLogitsProcessor",
    "parse_response_format",
    "schema_problem",
    "tokenizer_data",
]

MAX_SCHEMA_CHARS = 64_000
"""The largest schema accepted, as JSON text (a request's schema is parsed for every token)."""

MAX_SCHEMA_DEPTH = 32
"""The deepest nesting of schemas in a schema (lm-format-enforcer walks it recursively: 300
levels of arrays ended in a ``RecursionError``)."""

_JSON_TYPES = ("array", "boolean", "integer", "null", "number", "object", "string")
_NAMING = ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref")
"""The keywords of which a schema below the top needs one (the decoder cannot follow ``{}``)."""
_COUNTS = ("minItems", "maxItems", "minLength", "maxLength", "minProperties", "maxProperties")
_REF = re.compile(r"#/(\$defs|definitions)/([^/]+)")

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
        If the field is not one of OpenAI's three forms, or its schema is not an object, is
        larger than :data:`MAX_SCHEMA_CHARS` or is one the decoder cannot follow
        (:func:`schema_problem`); the server answers 400.
    """
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
    try:
        size = len(json.dumps(schema))
    except (TypeError, ValueError, RecursionError):  # from a caller: a server's body is JSON
        size = MAX_SCHEMA_CHARS + 1
    if size > MAX_SCHEMA_CHARS:
        raise ConfigError(
            f"response_format.json_schema.schema is larger than {MAX_SCHEMA_CHARS:,} characters"
        )
    if problem := schema_problem(schema):
        raise ConfigError(f"response_format.json_schema.{problem}")
    return dict(schema)


def _short(value: Any) -> str:
    """``value`` as JSON, cut to 40 characters (a message never repeats a whole request)."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _node_problem(node: Any, where: str, top: bool, root: Mapping[str, Any]) -> str | None:
    """What in one schema (not the schemas inside it) the decoder cannot follow."""
    if not isinstance(node, Mapping):
        return f"{where} must be a schema (a JSON object); got {_short(node)}"
    if "not" in node:
        return f"{where}: 'not' is not supported by this server's decoder"
    if not top and not any(key in node for key in _NAMING):
        return f"{where} must say what its value is: give one of {', '.join(_NAMING)}"
    if "type" in node:
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        if not kinds or not all(isinstance(k, str) and k in _JSON_TYPES for k in kinds):
            return (
                f"{where}.type must be one of {', '.join(_JSON_TYPES)} (or a non-empty list of "
                f"them); got {_short(node['type'])}"
            )
    if "enum" in node and not (isinstance(node["enum"], list) and node["enum"]):
        return f"{where}.enum must be a non-empty list; got {_short(node['enum'])}"
    if "$ref" in node:
        ref = node["$ref"]
        found = _REF.fullmatch(ref) if isinstance(ref, str) else None
        defs = root.get(found[1]) if found else None
        if not (found and isinstance(defs, Mapping) and found[2] in defs):
            return (
                f"{where}.$ref must name a schema under $defs or definitions at the top "
                f"(#/$defs/NAME); got {_short(ref)}"
            )
    for key in _COUNTS:
        value = node.get(key)
        if key in node and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            return f"{where}.{key} must be a whole number from 0; got {_short(value)}"
    for low, high in (("minLength", "maxLength"), ("minItems", "maxItems")):
        if low in node and high in node and node[low] > node[high]:
            return f"{where}.{low} ({node[low]}) is above {high} ({node[high]}): nothing fits"
    required = node.get("required", [])
    if not (isinstance(required, list) and all(isinstance(r, str) for r in required)):
        return f"{where}.required must be a list of property names; got {_short(required)}"
    return None


def _children(node: Mapping[str, Any], where: str) -> Iterator[tuple[str, Any]] | str:
    """The schemas inside ``node`` with where they are, or what is wrong with their place."""
    found: list[tuple[str, Any]] = []
    for key in ("properties", "$defs", "definitions"):
        if key in node:
            value = node[key]
            if not isinstance(value, Mapping):
                return f"{where}.{key} must be an object of schemas; got {_short(value)}"
            found += [(f"{where}.{key}.{name}", child) for name, child in value.items()]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            value = node[key]
            if not (isinstance(value, list) and value):
                return f"{where}.{key} must be a non-empty list of schemas; got {_short(value)}"
            found += [(f"{where}.{key}[{i}]", child) for i, child in enumerate(value)]
    if "items" in node:
        found.append((f"{where}.items", node["items"]))
    extra = node.get("additionalProperties")
    if extra is not None and not isinstance(extra, bool):  # true / false: allowed or not
        found.append((f"{where}.additionalProperties", extra))
    return iter(found)


def schema_problem(schema: Mapping[str, Any]) -> str | None:
    """What in ``schema`` this server's decoder cannot follow, in words, or ``None``.

    lm-format-enforcer fails on such a schema with its own errors (pydantic's, a
    ``RecursionError``, ``Unsupported type None``), some only when generation reaches the
    part: every schema in it is checked here first, without recursion. Below the top, a schema
    must say what its value is (``type``, ``enum``, ``const``, ``anyOf``, ``oneOf``, ``allOf``
    or ``$ref``); ``type`` is one of JSON's seven (or a non-empty list of them), ``enum`` a
    non-empty list, ``$ref`` a name under the schema's ``$defs`` or ``definitions``, a minimum
    length or count no larger than its maximum; ``not`` is not supported; nesting is at most
    :data:`MAX_SCHEMA_DEPTH` schemas deep.

    Examples
    --------
    >>> schema_problem({"type": "object", "properties": {"a": {"type": "string"}}}) is None
    True
    >>> schema_problem({"type": "object", "properties": {"a": {"enum": []}}})
    'schema.properties.a.enum must be a non-empty list; got []'
    >>> schema_problem({"$ref": "#"})
    'schema.$ref must name a schema under $defs or definitions at the top (#/$defs/NAME); got "#"'
    """
    stack: list[tuple[Any, str, int]] = [(schema, "schema", 1)]
    while stack:
        node, where, depth = stack.pop()
        if depth > MAX_SCHEMA_DEPTH:
            return f"schema is nested more than {MAX_SCHEMA_DEPTH} schemas deep (at {where[:80]})"
        if problem := _node_problem(node, where, depth == 1, schema):
            return problem
        children = _children(node, where)
        if isinstance(children, str):
            return children
        stack.extend((child, name, depth + 1) for name, child in reversed(list(children)))
    return None


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
    (an incomplete reply, not a sampling error): :attr:`cut_short` then says so, and the
    server reports the reply as cut (``finish_reason: "length"``), never as finished. An
    error of the enforcer while generating (a part of the schema it cannot follow) ends the
    sequence too, and :attr:`failure` names it.

    Attributes
    ----------
    cut_short
        The sequence was ended where the schema allowed nothing more: the JSON is incomplete.
    failure
        The enforcer's error that ended the sequence, in one line; ``""`` when none.
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
        self.cut_short = False
        self.failure = ""

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
        mask = torch.full_like(scores, float("-inf"))
        try:
            allowed = self._enforcer.get_allowed_tokens(sequence).allowed_tokens
        except Exception as exc:  # the enforcer's own (ValueError, RecursionError...): ends here
            text = str(exc).strip()
            self.failure = f"{type(exc).__name__}: {text.splitlines()[0][:200] if text else ''}"
            allowed = []
        if allowed:
            mask[:, allowed] = 0
        if self._in_string and self._control:
            mask[:, list(self._control)] = float("-inf")
        if not torch.isfinite(mask).any():
            self.cut_short = True  # nothing the schema allows: the reply ends incomplete
            mask[:, self._eos] = 0
        return scores + mask
