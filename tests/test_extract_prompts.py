"""Prompt templates (s3kg_core.extract.prompts)."""

from __future__ import annotations

import json

from s3kg_core.extract.prompts import (
    JOINT_KEYS,
    answer_messages,
    joint_messages,
    single_messages,
    truncate,
)


def test_truncate_cuts_at_a_word_boundary_and_reports_it():
    assert truncate("short", 10) == ("short", False)
    text, cut = truncate("alpha beta gamma delta", 12)
    assert cut and text == "alpha beta"
    text, cut = truncate("x" * 50, 10)  # no space: a hard cut
    assert cut and text == "x" * 10


def test_answer_prompt_carries_question_and_context():
    messages = answer_messages("Why?", "Because of X.")
    assert messages[0][0] == "system"
    assert "Because of X." in messages[1][1] and "Question: Why?" in messages[1][1]
    assert "(no context)" in answer_messages("Why?", None)[1][1]


def test_joint_prompt_has_the_papers_steps_a_valid_example_and_the_three_texts():
    messages = joint_messages("gold text", "answer text", "context text")
    system = messages[0][1]
    for step in ("Entity detection", "Coreference", "Relation extraction", "Consistent labels"):
        assert step in system
    example = json.loads(messages[2][1])
    assert set(example) == set(JOINT_KEYS)
    assert all(len(t) == 3 for graph in example.values() for t in graph)
    last = messages[-1][1]
    assert last.index("gold text") < last.index("answer text") < last.index("context text")
    assert "(empty)" in joint_messages("", "a", "c")[-1][1]


def test_single_prompt_has_a_valid_example_and_the_text_last():
    messages = single_messages("Some text.")
    assert json.loads(messages[2][1])["knowledge_graph"]
    assert messages[-1] == ("user", "Some text.")
