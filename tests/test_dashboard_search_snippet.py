"""Tests of dashboard/search_snippet.py: the matched words marked, every text escaped."""

from __future__ import annotations

import doctest
import re

import dashboard.search_snippet as snippet_module
from dashboard.search_snippet import match_row_html, match_spans, snippet_html


def test_the_module_doctests_pass():
    assert doctest.testmod(snippet_module).failed == 0


def test_every_occurrence_of_every_word_is_marked_any_case():
    # issue 43: Search showed no highlight of what matched
    shown = snippet_html(
        "Penicillin, then PENICILLIN and mould penicillin.", ["penicillin", "mould"]
    )
    assert re.findall(r"<mark [^>]*>([^<]*)</mark>", shown) == [
        "Penicillin", "PENICILLIN", "mould", "penicillin",
    ]  # fmt: skip
    assert match_spans("aaa", ["a", "aa"]) == [(0, 3)]  # overlapping matches: one mark


def test_a_long_text_is_cut_around_the_first_match_and_says_so():
    text = "words " * 100 + "the needle here " + "more " * 100
    shown = snippet_html(text, ["needle"], width=60)
    assert shown.startswith("… ") and shown.endswith(" …")
    assert "needle</mark>" in shown and len(re.sub(r"<[^>]+>", "", shown)) < 120
    assert snippet_html("no match at all", ["zzz"]) == "no match at all"


def test_user_and_model_text_never_becomes_html():
    hostile = '<img src=x onerror=alert(1)> <script>alert(2)</script> "q" & <b>bold</b>'
    shown = snippet_html(hostile, ["script", "<b>"])
    assert "<img" not in shown and "<script" not in shown and "<b>" not in shown
    assert "&lt;script&gt;" not in shown  # the word inside is marked, its brackets escaped
    assert "&lt;<mark" in shown and "&lt;b&gt;</mark>" in shown
    assert re.sub(r"</?mark[^>]*>", "", shown).count("<") == 0
    row = match_row_html(
        '/x?a=1&b="><script>', "<i>q1</i>", "<b>run</b>", "<p>x</p>", "<field>", hostile, ["alert"]
    )
    assert "<script" not in row and "<img" not in row and "<b>run" not in row and "<p>" not in row
    assert 'href="/x?a=1&amp;b=&quot;&gt;&lt;script&gt;"' in row
    tags = set(re.findall(r"</?([a-z]+)", row))
    assert tags == {"tr", "td", "a", "i", "mark"}, tags
