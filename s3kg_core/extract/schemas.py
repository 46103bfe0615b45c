"""The JSON schemas of the extraction replies, sized to the token budget.

The LLM extractor sends them as ``response_format`` (``json_schema``). An endpoint that
constrains its output to a schema (``s3kg llm serve``, vLLM, llama.cpp, Ollama) then always
replies with JSON of the prompt's shape, complete within ``max_tokens``: every label is at
most :data:`LABEL_MAX_CHARS` characters and each graph at most as many triples as the budget
holds (about :data:`TOKENS_PER_TRIPLE` tokens a triple). A graph whose text is missing must be
empty; one whose text is given has at least one triple.

Examples
--------
>>> schema = joint_schema(384, given={"gold", "answer", "context"})
>>> schema["required"]
['knowledge_graph1', 'knowledge_graph2', 'knowledge_graph3']
>>> kg = schema["properties"]["knowledge_graph2"]
>>> kg["minItems"], kg["maxItems"], kg["items"]["items"]["maxLength"]
(1, 3, 32)
>>> joint_schema(384, given={"answer"})["properties"]["knowledge_graph1"]["maxItems"]
0
>>> single_schema(None)["properties"]["knowledge_graph"]["maxItems"]
20
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import Any

from .base import SOURCES
from .prompts import JOINT_KEYS, SINGLE_KEY

__all__ = [
    "LABEL_MAX_CHARS",
    "MAX_TRIPLES",
    "TOKENS_PER_TRIPLE",
    "joint_schema",
    "schema_text",
    "single_schema",
]

LABEL_MAX_CHARS = 32
"""The longest subject, relation or object label a schema allows."""

TOKENS_PER_TRIPLE = 30
"""Tokens one triple of labels at most :data:`LABEL_MAX_CHARS` long takes, with its JSON."""

MAX_TRIPLES = 20
"""The most triples a graph may have when the budget is unbounded."""

_OVERHEAD_TOKENS = 32  # the braces and keys of the object


def _per_graph(max_tokens: int | None, graphs: int) -> int:
    if max_tokens is None:
        return MAX_TRIPLES
    fits = (max_tokens - _OVERHEAD_TOKENS) // (max(graphs, 1) * TOKENS_PER_TRIPLE)
    return max(1, min(MAX_TRIPLES, fits))


def _graph(max_items: int, min_items: int) -> dict[str, Any]:
    label = {"type": "string", "minLength": 1, "maxLength": LABEL_MAX_CHARS}
    triple = {"type": "array", "items": label, "minItems": 3, "maxItems": 3}
    return {"type": "array", "items": triple, "minItems": min_items, "maxItems": max_items}


def _object(graphs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": dict(graphs),
        "required": list(graphs),
        "additionalProperties": False,
    }


def joint_schema(max_tokens: int | None, given: Collection[str]) -> dict[str, Any]:
    """The schema of the joint prompt's reply: three graphs, empty where a text is missing.

    Parameters
    ----------
    max_tokens
        The reply's token budget (``None``: unbounded).
    given
        The sources (``gold``, ``answer``, ``context``) whose text the prompt carries.
    """
    n = _per_graph(max_tokens, sum(source in given for source in SOURCES))
    return _object(
        {
            key: _graph(n, 1) if source in given else _graph(0, 0)
            for source, key in zip(SOURCES, JOINT_KEYS, strict=True)
        }
    )


def single_schema(max_tokens: int | None) -> dict[str, Any]:
    """The schema of GraphEval's single-text prompt's reply: one graph."""
    return _object({SINGLE_KEY: _graph(_per_graph(max_tokens, 1), 1)})


def schema_text(schema: Mapping[str, Any]) -> str:
    """A schema as canonical JSON text (what a request carries and its cache key hashes)."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"))
