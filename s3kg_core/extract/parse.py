r"""Strict parsing of an LLM's KG output, with a bounded repair step. Never ``eval``.

The text should be a JSON object whose values are lists of ``[subject, relation, object]``.
When it is not valid JSON, at most these repairs are tried, in order and cumulatively: strip
markdown code fences and prose around the outermost ``{...}``; remove trailing commas; turn
single-quoted strings into double-quoted ones; and, only where the caller allows it
(``repair_json(text, truncated=True)``), cut a reply that stops mid-way (a model that ran out of
tokens) after its last complete inner list or object and close what is still open, so the
complete entries survive and the cut-off one is dropped, never completed. Whatever still fails
is an :class:`~s3kg_core.errors.LLMResponseError` naming the JSON error, and so is a reply nested
too deeply to parse (``[[[[...`` 200,000 levels down) and a JSON object with none of the keys
asked for (``{"error": "I could not do that"}``: a reply of another schema, not an empty KG).
Triples of the wrong arity or with non-text parts are dropped and counted, never guessed; labels
are cleaned as every reply is (:func:`s3kg_core.llm.replies.clean_text`: a lone surrogate
becomes U+FFFD).

Examples
--------
>>> out = parse_kg_json("```json\n{'knowledge_graph1': [['A', 'r', 'B'], ['bad'],],}\n```",
...                     ["knowledge_graph1"])
>>> out.graphs["knowledge_graph1"], out.dropped["knowledge_graph1"], out.repairs
([Triple(head='A', relation='r', tail='B')], 1, ('fences', 'trailing_commas', 'single_quotes'))
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import LLMResponseError
from ..kg import Triple
from ..llm.replies import clean_text

__all__ = ["ParsedKGs", "parse_kg_json", "parse_triples", "repair_json"]

_FENCE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class ParsedKGs:
    """Triples per key, triples dropped per key, and the repairs that were needed."""

    graphs: dict[str, list[Triple]]
    dropped: dict[str, int]
    repairs: tuple[str, ...]


def _strip_fences(text: str) -> str:
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    if start < 0:
        return body.strip()
    end = max(body.rfind("}"), body.rfind("]"))
    return body[start : end + 1] if end > start else body[start:]


def _structure(text: str) -> Iterator[tuple[int, str, bool]]:
    """Each character of ``text`` with whether it is structure (outside every JSON string)."""
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            yield i, ch, False
        else:
            in_string = ch == '"'
            yield i, ch, not in_string


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that only whitespace separates from a closing bracket, outside strings."""
    out: list[str] = []
    for _, ch, structural in _structure(text):
        if structural and ch in "]}":
            j = len(out) - 1
            while j >= 0 and out[j].isspace():
                j -= 1
            if j >= 0 and out[j] == ",":
                del out[j]
        out.append(ch)
    return "".join(out)


_MAX_CUTS = 64
"""Most cut points :func:`_truncation_cuts` offers (the last ones; each costs one parse)."""


def _truncation_cuts(text: str) -> list[str]:
    """Prefixes of ``text`` that end after a complete inner list or object, closed; last first.

    Brackets inside strings do not count. A prefix is only offered while some container is
    still open (a complete text needs no cut).
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    for i, ch, structural in _structure(text):
        if not structural:
            continue
        if ch in "[{":
            stack.append("]" if ch == "[" else "}")
        elif ch in "]}":
            if not stack or stack[-1] != ch:
                return []  # mismatched: not a truncation this repair can handle
            stack.pop()
            if stack:
                cuts.append((i + 1, "".join(reversed(stack))))
    if not stack:
        return []
    return [text[:end] + closing for end, closing in reversed(cuts[-_MAX_CUTS:])]


def _single_to_double(text: str) -> str:
    """Requote single-quoted JSON-like strings; apostrophes inside words are left alone."""
    out: list[str] = []
    quote: str | None = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is None:
            if ch in "\"'":
                quote = ch
                out.append('"')
            else:
                out.append(ch)
        elif ch == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 1
        elif ch == quote:
            nxt = text[i + 1 : i + 2]
            # an apostrophe followed by a letter ("Renzo's") stays inside the string
            if quote == "'" and nxt.isalpha():
                out.append("'")
            else:
                quote = None
                out.append('"')
        elif ch == '"' and quote == "'":
            out.append('\\"')
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def repair_json(text: str, *, truncated: bool = False) -> tuple[Any, tuple[str, ...]]:
    """Parse ``text`` as JSON, applying the bounded repairs if needed.

    Parameters
    ----------
    text
        The model's reply.
    truncated
        Also try the ``truncated`` repair: keep what precedes the last complete inner list or
        object of a reply that stops mid-way, and close it. Only for callers that treat missing
        entries explicitly (a cut-off KG would look complete, so extraction does not allow it).

    Returns
    -------
    value, repairs
        The parsed value and the names of the repairs that were applied.

    Raises
    ------
    LLMResponseError
        If the text is still not JSON after every repair.

    Examples
    --------
    >>> repair_json('{"a": [1, 2,]}')
    ({'a': [1, 2]}, ('trailing_commas',))
    >>> repair_json('{"v": [{"id": 1}, {"id": 2}, {"id": 3, "no', truncated=True)
    ({'v': [{'id': 1}, {'id': 2}]}, ('fences', 'truncated'))
    """
    if not text or not text.strip():
        raise LLMResponseError("the model returned no text where JSON was expected")
    try:
        return _repair(text, truncated)
    except RecursionError:
        raise LLMResponseError(
            f"the model's output nests too deeply to parse; it began: {_snippet(text)!r}"
        ) from None


def _snippet(text: str) -> str:
    return clean_text(text.strip().replace("\n", " "), limit=120)


def _repair(text: str, truncated: bool) -> tuple[Any, tuple[str, ...]]:
    try:
        return json.loads(text), ()
    except json.JSONDecodeError:
        pass
    repairs: list[str] = []
    candidate = text
    error: json.JSONDecodeError | None = None
    steps = (
        ("fences", _strip_fences),
        ("trailing_commas", _drop_trailing_commas),
        ("single_quotes", _single_to_double),
    )
    for name, step in steps:
        fixed = step(candidate)
        if fixed != candidate:
            repairs.append(name)
            candidate = fixed
        try:
            return json.loads(candidate), tuple(repairs)
        except json.JSONDecodeError as exc:
            error = exc
    if truncated:
        for cut in _truncation_cuts(candidate):
            try:
                return json.loads(cut), (*repairs, "truncated")
            except json.JSONDecodeError:
                continue
    raise LLMResponseError(
        f"the model's output is not JSON even after repairs ({error}); it began: {_snippet(text)!r}"
    )


def _part(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value.strip():
        return clean_text(" ".join(value.split()))
    return None


def parse_triples(value: Any) -> tuple[list[Triple], int]:
    """Triples from a JSON list of ``[s, r, o]`` (or ``{"subject", "relation", "object"}``).

    Returns the triples (duplicates removed, order kept) and how many entries were dropped.

    Examples
    --------
    >>> parse_triples([["a", "r", "b"], ["a", "r"], ["a", "r", "b"], ["x", "y", 3]])
    ([Triple(head='a', relation='r', tail='b'), Triple(head='x', relation='y', tail='3')], 1)
    """
    if value is None:
        return [], 0
    if not isinstance(value, list):
        return [], 1
    triples: dict[Triple, None] = {}
    dropped = 0
    for entry in value:
        if isinstance(entry, dict):
            entry = [
                entry.get("subject", entry.get("head")),
                entry.get("relation", entry.get("predicate")),
                entry.get("object", entry.get("tail")),
            ]
        if not isinstance(entry, list) or len(entry) != 3:
            dropped += 1
            continue
        parts = [_part(p) for p in entry]
        if any(p is None for p in parts):
            dropped += 1
            continue
        head, relation, tail = (p for p in parts if p is not None)
        triples[Triple(head, relation, tail)] = None
    return list(triples), dropped


def parse_kg_json(text: str, keys: Sequence[str]) -> ParsedKGs:
    """Parse an LLM's KG output into triples for each of ``keys``.

    A bare list is accepted when one key is expected. A missing key gives an empty graph, as
    long as one of ``keys`` is there: an object with none of them answers another question.

    Raises
    ------
    LLMResponseError
        If the output is not JSON after the repairs (or nests too deeply to parse), not an
        object, or an object with none of ``keys``.

    Examples
    --------
    >>> try:
    ...     parse_kg_json('{"error": "I could not do that"}', ["knowledge_graph"])
    ... except LLMResponseError as exc:
    ...     print(exc)
    the reply has none of the expected keys ['knowledge_graph'] (it has ['error'])
    """
    value, repairs = repair_json(text)
    if isinstance(value, list) and len(keys) == 1:
        value = {keys[0]: value}
    if not isinstance(value, dict):
        raise LLMResponseError(
            f"expected a JSON object with keys {list(keys)}; got {type(value).__name__}"
        )
    lowered = {str(k).strip().lower(): v for k, v in value.items()}
    if not any(key.lower() in lowered for key in keys):
        found = [clean_text(str(k), limit=40) for k in list(value)[:5]]
        raise LLMResponseError(
            f"the reply has none of the expected keys {list(keys)} (it has {found})"
        )
    graphs: dict[str, list[Triple]] = {}
    dropped: dict[str, int] = {}
    for key in keys:
        graphs[key], dropped[key] = parse_triples(lowered.get(key.lower()))
    return ParsedKGs(graphs, dropped, repairs)
