"""Annotator names (s3kg_core.annotation.names): one spelling per person, no disguises."""

from __future__ import annotations

import re

import pytest

from s3kg_core.annotation.log import Decision
from s3kg_core.annotation.names import BIDI_CONTROLS, MAX_NAME_LENGTH, normalize_annotator
from s3kg_core.errors import AnnotationError, AnnotatorNameError


@pytest.mark.parametrize(
    ("typed", "stored"),
    [
        ("ann", "ann"),
        ("  ann \n", "ann"),  # surrounding whitespace, a trailing newline included
        ("Zoe\u0301", "Zo\u00e9"),  # decomposed and composed accents are one name (NFC)
        ("\u00c5sa", "\u00c5sa"),
        ("Jean-Luc O'Neil", "Jean-Luc O'Neil"),
        ("\u674e\u96f7", "\u674e\u96f7"),
        ("\U0001f469\u200d\U0001f52c", "\U0001f469\u200d\U0001f52c"),  # a ZWJ emoji is a name
        ("x" * MAX_NAME_LENGTH, "x" * MAX_NAME_LENGTH),
    ],
)
def test_names_are_normalised(typed, stored):
    assert normalize_annotator(typed) == stored


# Regression (issue 28.11): names with NUL or U+202E were stored; "\u202eecila" shows as "alice".
@pytest.mark.parametrize(
    ("typed", "found"),
    [
        ("ann\x00", "U+0000"),
        ("\u202eecila", "U+202E"),
        ("a\nb", "U+000A"),
        ("a\tb", "U+0009"),
        ("a\x7fb", "U+007F"),
        ("a\x85b", "U+0085"),
        *((f"a{c}b", f"U+{ord(c):04X}") for c in sorted(BIDI_CONTROLS)),
    ],
)
def test_control_and_bidi_characters_are_refused_by_name(typed, found):
    with pytest.raises(AnnotatorNameError, match=re.escape(f"holds {found}")):
        normalize_annotator(typed)


def test_the_bidi_set_is_exactly_the_embeddings_overrides_and_isolates():
    assert sorted(map(ord, BIDI_CONTROLS)) == [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]


@pytest.mark.parametrize("typed", ["", "   ", "\u3000", "x" * (MAX_NAME_LENGTH + 1), None, 7])
def test_empty_long_and_non_text_names_are_refused(typed):
    with pytest.raises(AnnotatorNameError):
        normalize_annotator(typed)


def test_the_name_error_is_an_annotation_error_with_one_line():
    with pytest.raises(AnnotationError) as info:
        normalize_annotator("a\x00b")
    assert "\n" not in str(info.value) and "\x00" not in str(info.value)


def test_a_decision_stores_the_normalised_name_and_refuses_a_hostile_one():
    pair = {"run_id": 1, "item_id": 1, "gold": ("a", "r", "b"), "answer": None}
    assert Decision(" Zoe\u0301 ", verdict="confirm", **pair).annotator == "Zo\u00e9"
    with pytest.raises(AnnotatorNameError):
        Decision("\u2067ann", verdict="confirm", **pair)


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_characters_cannot_make_two_names_that_print_alike(invisible):
    # regression (issue 44, item 7): "ann" and "ann\u200b" were two annotators printed alike
    with pytest.raises(AnnotatorNameError, match="an invisible formatting character"):
        normalize_annotator(f"ann{invisible}")
