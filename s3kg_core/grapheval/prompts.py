"""Prompt templates of GraphEval's LLM checker and of GraphCorrect, each with a version.

The version enters the LLM cache key (:class:`~s3kg_core.llm.client.ChatRequest`), so editing a
prompt
never serves answers cached for the old one. Every reply is asked for as one JSON object, parsed
by :func:`s3kg_core.extract.parse.repair_json` (strict JSON with a bounded repair step).

Examples
--------
>>> msgs = check_messages("Paris is in France.", ["Paris is in France", "Paris is in Spain"])
>>> [role for role, _ in msgs]
['system', 'user']
>>> "2. Paris is in Spain" in msgs[1][1]
True
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..kg import Triple

__all__ = [
    "CHECK_PROMPT_VERSION",
    "CORRECT_TRIPLE_PROMPT_VERSION",
    "DIRECT_CORRECT_PROMPT_VERSION",
    "REPLACE_PROMPT_VERSION",
    "check_messages",
    "correct_triple_messages",
    "direct_correct_messages",
    "replace_messages",
]

CHECK_PROMPT_VERSION = "grapheval-check-v1"
CORRECT_TRIPLE_PROMPT_VERSION = "graphcorrect-triple-v1"
REPLACE_PROMPT_VERSION = "graphcorrect-replace-v1"
DIRECT_CORRECT_PROMPT_VERSION = "graphcorrect-direct-v1"

Messages = tuple[tuple[str, str], ...]

_CHECK_SYSTEM = """You check statements against a context, as a careful fact checker.
A statement is supported when the context states it or it follows directly from the context.
It is not supported when the context contradicts it or does not contain the information.
Judge every statement on its own. Reply with one JSON object and nothing else:
{"verdicts": [{"id": 1, "supported": true, "confidence": 0.9}, ...]}
with one entry per statement id; "confidence" (0.5 to 1) is how sure you are of the verdict."""


def check_messages(context: str, claims: Sequence[str]) -> Messages:
    """The LLM checker's prompt: a context and numbered statements (ids start at 1)."""
    listed = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1))
    user = f"Context:\n{context}\n\nStatements:\n{listed}\n\nVerdicts (JSON):"
    return (("system", _CHECK_SYSTEM), ("user", user))


_CORRECT_TRIPLE_SYSTEM = """You correct a knowledge-graph triple that is not supported by a context.
Given the context and a triple [subject, relation, object], return the triple changed as little
as possible so that the context supports it (usually one element is wrong). Reply with one JSON
object and nothing else: {"triple": ["subject", "relation", "object"]}"""


def correct_triple_messages(context: str, triple: Triple) -> Messages:
    """GraphCorrect's first prompt: a corrected triple given the context."""
    user = (
        f"Context:\n{context}\n\nTriple: {json.dumps(triple.to_list(), ensure_ascii=False)}"
        "\n\nCorrected triple (JSON):"
    )
    return (("system", _CORRECT_TRIPLE_SYSTEM), ("user", user))


_REPLACE_SYSTEM = """You edit a text with minimal changes.
The text states the information of an incorrect triple. Replace that information with the
information of the corrected triple, changing as few words as possible and nothing else.
Reply with one JSON object and nothing else: {"answer": "the edited text"}"""


def replace_messages(answer: str, wrong: Triple, corrected: Triple) -> Messages:
    """GraphCorrect's second prompt: put the corrected triple's information in the answer."""
    user = (
        f"Text:\n{answer}\n\nIncorrect triple: {json.dumps(wrong.to_list(), ensure_ascii=False)}"
        f"\nCorrected triple: {json.dumps(corrected.to_list(), ensure_ascii=False)}"
        "\n\nEdited text (JSON):"
    )
    return (("system", _REPLACE_SYSTEM), ("user", user))


_DIRECT_SYSTEM = """You correct a text so that it is consistent with a context.
Change only what the context contradicts or does not support, with minimal edits.
Reply with one JSON object and nothing else: {"answer": "the corrected text"}"""


def direct_correct_messages(answer: str, context: str) -> Messages:
    """The direct-prompt correction baseline: one prompt, the whole answer."""
    user = f"Context:\n{context}\n\nText:\n{answer}\n\nCorrected text (JSON):"
    return (("system", _DIRECT_SYSTEM), ("user", user))
