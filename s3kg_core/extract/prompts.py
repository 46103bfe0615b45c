"""Prompt templates: answering a question, the S3KG joint extraction, GraphEval's single text.

Every template has a version; it enters the LLM cache key, so editing a prompt never serves
answers cached for the old one. Texts longer than the budget are cut at a word boundary and the
cut is reported (:func:`truncate`), never done silently.

Examples
--------
>>> truncate("one two three four", 9)
('one two', True)
>>> messages = joint_messages("Paris is in France.", "It is in France.", "Paris, France.")
>>> [role for role, _ in messages]
['system', 'user', 'assistant', 'user']
"""

from __future__ import annotations

import json

__all__ = [
    "ANSWER_PROMPT_VERSION",
    "JOINT_KEYS",
    "JOINT_PROMPT_VERSION",
    "SINGLE_KEY",
    "SINGLE_PROMPT_VERSION",
    "answer_messages",
    "joint_messages",
    "single_messages",
    "truncate",
]

ANSWER_PROMPT_VERSION = "answer-v1"
JOINT_PROMPT_VERSION = "joint-kg-v1"
SINGLE_PROMPT_VERSION = "single-kg-v1"
JOINT_KEYS = ("knowledge_graph1", "knowledge_graph2", "knowledge_graph3")
SINGLE_KEY = "knowledge_graph"

Messages = tuple[tuple[str, str], ...]


def truncate(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to at most ``limit`` characters at a word boundary, and whether it was cut."""
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(), True


def answer_messages(question: str, context: str | None) -> Messages:
    """The prompt that collects a model's answer to a question about a context."""
    system = (
        "You answer questions using the given context. Answer in a few complete sentences. "
        "If the context does not contain the answer, say so."
    )
    user = f"Context:\n{context or '(no context)'}\n\nQuestion: {question}\n\nAnswer:"
    return (("system", system), ("user", user))


_JOINT_SYSTEM = """You turn texts into knowledge graphs for comparison.
You get three texts about the same question: TEXT 1 (a reference answer), TEXT 2 (a model's
answer) and TEXT 3 (the context). Build one knowledge graph per text, in these steps:
1. Entity detection: find the entities and concepts each text talks about.
2. Coreference resolution: replace pronouns and aliases with the entity's full name.
3. Relation extraction: one triple [subject, relation, object] per fact the text states; the
   relation is a short phrase (one to three words, e.g. "treats", "born in", "not cause");
   keep negation in the relation.
4. Consistent labels: when the texts mention the same entity or relation, use exactly the same
   label in every graph.
Only state facts that the text itself states. Reply with one JSON object and nothing else:
{"knowledge_graph1": [[s, r, o], ...], "knowledge_graph2": [...], "knowledge_graph3": [...]}"""

_JOINT_EXAMPLE_IN = (
    "TEXT 1: Aspirin reduces fever and relieves mild pain. It can irritate the stomach.\n\n"
    "TEXT 2: Aspirin lowers fever. It does not cause stomach problems.\n\n"
    "TEXT 3: Aspirin is a common drug. Aspirin reduces fever, relieves mild pain and can "
    "irritate the stomach lining when taken often."
)
_JOINT_EXAMPLE_OUT = {
    "knowledge_graph1": [
        ["aspirin", "reduces", "fever"],
        ["aspirin", "relieves", "mild pain"],
        ["aspirin", "irritates", "stomach"],
    ],
    "knowledge_graph2": [
        ["aspirin", "reduces", "fever"],
        ["aspirin", "not cause", "stomach problems"],
    ],
    "knowledge_graph3": [
        ["aspirin", "is", "common drug"],
        ["aspirin", "reduces", "fever"],
        ["aspirin", "relieves", "mild pain"],
        ["aspirin", "irritates", "stomach lining"],
    ],
}


def joint_messages(reference: str, answer: str, context: str) -> Messages:
    """The S3KG paper's joint prompt: three texts in, three consistent KGs out.

    A text that is missing should be passed as an empty string; its graph is then empty.
    """
    user = (
        f"TEXT 1: {reference or '(empty)'}\n\nTEXT 2: {answer or '(empty)'}\n\n"
        f"TEXT 3: {context or '(empty)'}"
    )
    return (
        ("system", _JOINT_SYSTEM),
        ("user", _JOINT_EXAMPLE_IN),
        ("assistant", json.dumps(_JOINT_EXAMPLE_OUT)),
        ("user", user),
    )


_SINGLE_SYSTEM = """You extract a knowledge graph from a text, as GraphEval does.
Find the entities, resolve pronouns to the entity they refer to, and list every fact the text
states as a triple [subject, relation, object] with a short relation phrase; keep negation in
the relation. Do not add facts the text does not state. Reply with one JSON object and nothing
else: {"knowledge_graph": [[s, r, o], ...]}"""

_SINGLE_EXAMPLE_IN = (
    "Marie Curie was born in Warsaw. She won the Nobel Prize in Physics in 1903 with Pierre Curie."
)
_SINGLE_EXAMPLE_OUT = {
    "knowledge_graph": [
        ["marie curie", "born in", "warsaw"],
        ["marie curie", "won", "nobel prize in physics"],
        ["marie curie", "won in", "1903"],
        ["pierre curie", "won", "nobel prize in physics"],
    ]
}


def single_messages(text: str) -> Messages:
    """GraphEval's single-text extraction prompt."""
    return (
        ("system", _SINGLE_SYSTEM),
        ("user", _SINGLE_EXAMPLE_IN),
        ("assistant", json.dumps(_SINGLE_EXAMPLE_OUT)),
        ("user", text),
    )
