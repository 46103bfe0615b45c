"""Tests of s3kg_core.factuality.prompts: the labelling prompt, as messages and as model input."""

from __future__ import annotations

import re

import pytest
from tiny_models import WORD_CHAT_TEMPLATE

from s3kg_core.factuality.labels import LABELS, parse_label
from s3kg_core.factuality.prompts import (
    ANSWER_OPTIONS,
    LABEL_PROMPT_VERSION,
    LABEL_SYSTEM_PROMPT,
    LABEL_USER_PROMPT,
    label_messages,
    label_prompt_text,
)

STATEMENT = "Apple controls Beats."


@pytest.fixture(scope="module")
def chat_tokenizer():
    """A real fast tokenizer with the tests' minimal chat template."""
    from tokenizers import Tokenizer, models
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordLevel(vocab={"<unk>": 0}, unk_token="<unk>"))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    tokenizer.chat_template = WORD_CHAT_TEMPLATE
    return tokenizer


class _NoTemplate:
    chat_template = None


def test_version_is_a_named_version():
    assert re.fullmatch(r"factuality-label-v\d+", LABEL_PROMPT_VERSION)


def test_answer_options_follow_the_label_order_and_parse_back():
    assert tuple(ANSWER_OPTIONS) == LABELS
    for label, text in ANSWER_OPTIONS.items():
        assert parse_label(text) == label
        assert text in LABEL_SYSTEM_PROMPT  # the prompt offers every option it scores


def test_label_messages_are_system_then_user_with_the_statement():
    msgs = label_messages(STATEMENT)
    assert msgs == [
        {"role": "system", "content": LABEL_SYSTEM_PROMPT},
        {"role": "user", "content": f"Statement: {STATEMENT}\nIs the statement true?"},
    ]
    assert msgs[1]["content"] == LABEL_USER_PROMPT.format(statement=STATEMENT)


def test_label_messages_keep_braces_in_the_statement_verbatim():
    odd = "The set {a, b} is {0}."
    assert label_messages(odd)[1]["content"].splitlines()[0] == f"Statement: {odd}"


def test_without_a_template_the_prompt_ends_where_the_answer_starts():
    text = label_prompt_text(_NoTemplate(), STATEMENT)
    assert text == (
        f"{LABEL_SYSTEM_PROMPT}\n\nStatement: {STATEMENT}\nIs the statement true?\nAnswer: "
    )


def test_an_empty_template_counts_as_none():
    class EmptyTemplate:
        chat_template = ""

    assert label_prompt_text(EmptyTemplate(), STATEMENT).endswith("\nAnswer: ")
    assert label_prompt_text(object(), STATEMENT).endswith("\nAnswer: ")  # no attribute at all


def test_with_a_template_the_generation_prompt_is_added(chat_tokenizer):
    text = label_prompt_text(chat_tokenizer, STATEMENT)
    expected = chat_tokenizer.apply_chat_template(
        label_messages(STATEMENT), tokenize=False, add_generation_prompt=True
    )
    assert text == expected
    assert text.startswith(f"<|im_start|> system {LABEL_SYSTEM_PROMPT} <|im_end|> ")
    assert text.endswith("<|im_start|> assistant ")
    assert "Answer: " not in text


def test_the_statement_is_the_only_part_that_changes(chat_tokenizer):
    # The prompt runner caches the text before the statement: it must not depend on it.
    for tokenizer in (chat_tokenizer, _NoTemplate()):
        a = label_prompt_text(tokenizer, "Apple controls Beats.")
        b = label_prompt_text(tokenizer, "Samsung operates in Germany.")
        head_a, tail_a = a.split("Apple controls Beats.")
        head_b, tail_b = b.split("Samsung operates in Germany.")
        assert head_a == head_b and tail_a == tail_b
