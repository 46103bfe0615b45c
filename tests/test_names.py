"""Tests of s3kg_core.names: the one rule for every name (runs, models, datasets, tasks)."""

from __future__ import annotations

import doctest

import pytest

import s3kg_core.names as names_module
from s3kg_core.errors import ConfigError
from s3kg_core.names import MAX_NAME_CHARS, clean_name, name_problem


def test_the_module_doctests_pass():
    result = doctest.testmod(names_module)
    assert result.attempted >= 4 and result.failed == 0


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("baseline", "baseline"),
        ("  a \t b\n", "a b"),
        ("Zoe\u0301", "Zoé"),  # NFC
        ("=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0"),  # escaped where shown, not refused here
        ("x" * MAX_NAME_CHARS, "x" * MAX_NAME_CHARS),
    ],
)
def test_names_that_pass_are_cleaned(name, expected):
    assert clean_name(name) == expected


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "cannot be empty"),
        ("   ", "cannot be empty"),
        ("x" * 10_000, "at most 200 characters; this one has 10000"),
        ("m\x1b]0;owned\x07", r"U\+001B \(a control character\)"),
        ("m\x00", r"U\+0000"),
        ("\u202eecila", r"U\+202E \(a bidirectional control\)"),
        ("ann\u200b", r"U\+200B \(an invisible formatting character\)"),
        ("a\u2066b", r"U\+2066"),
        (5, "must be text"),
    ],
)
def test_names_that_are_refused_say_why(name, message):
    with pytest.raises(ConfigError, match=message):
        clean_name(name, "a model's name")


def test_name_problem_names_the_first_character():
    assert name_problem("fine") is None
    assert name_problem("a\u200db\x1b") == "U+200D (an invisible formatting character)"


def test_a_zero_width_joiner_inside_an_emoji_is_kept_elsewhere_refused():
    assert name_problem("\U0001f469\u200d\U0001f52c") is None  # one emoji: woman scientist
    assert name_problem("\u2764\ufe0f\u200d\U0001f525") is None  # heart on fire
    assert name_problem("ann\u200d") == "U+200D (an invisible formatting character)"
    assert name_problem("a\u200db") == "U+200D (an invisible formatting character)"


# -- what is read and printed meets the same rule (issue 59, item 10) -----------------------------


@pytest.mark.parametrize(
    ("text", "kept", "shown"),
    [
        ("q1", "q1", "q1"),
        ("q\x1b]0;owned\x07", "q]0;owned", "q\\x1b]0;owned\\x07"),
        ("\u202eecila", "ecila", "\\u202eecila"),
        ("a\x00b\u200bc", "abc", "a\\x00b\\u200bc"),
        ("caf\u00e9 \U0001f469\u200d\U0001f52c", "caf\u00e9 \U0001f469\u200d\U0001f52c",
         "caf\u00e9 \U0001f469\u200d\U0001f52c"),  # an emoji's joiner is part of it
    ],
)  # fmt: skip
def test_without_unsafe_and_printable_follow_name_problem(text, kept, shown):
    from s3kg_core.names import name_problem, printable, without_unsafe

    assert without_unsafe(text) == kept and name_problem(kept) is None
    assert printable(text) == shown and name_problem(printable(text)) is None
