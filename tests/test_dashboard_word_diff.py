"""Tests of dashboard/word_diff.py: two answers with the words that differ marked."""

from __future__ import annotations

import doctest
import re
from html.parser import HTMLParser

import dashboard.word_diff as module
from dashboard.word_diff import LEGEND_HTML, answer_panels, word_diff


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(markup: str) -> _Tags:
    parsed = _Tags()
    parsed.feed(markup)
    return parsed


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_the_marks_cover_exactly_the_words_that_differ():
    d = word_diff("Aspirin reduces fever and pain.", "Aspirin reduces fever in children.")
    marked_a = re.findall(r"<del[^>]*>(.*?)</del>", d.a_html)
    marked_b = re.findall(r"<ins[^>]*>(.*?)</ins>", d.b_html)
    assert " ".join(marked_a).split() == ["and", "pain."]
    assert " ".join(marked_b).split() == ["in", "children."]
    assert (d.only_a, d.only_b, d.shared) == (2, 2, 3)


def test_the_text_reads_back_whole_with_its_line_breaks():
    a, b = "line one\nline two", "line one\nline 2"
    d = word_diff(a, b)
    assert "".join(_parse(d.a_html).text) == a
    assert "".join(_parse(d.b_html).text) == b


def test_model_strings_are_text_never_markup():
    hostile = "<script>alert(1)</script> <img src=x onerror=alert(2)> &amp;"
    d = word_diff(hostile, "safe " + hostile)
    for side in ("A", "B"):
        parsed = _parse(answer_panels(d, side))
        assert set(parsed.tags) <= {"div", "del", "ins"}
        assert hostile in "".join(parsed.text)


def test_identical_answers_mark_nothing_and_the_legend_names_both_marks():
    d = word_diff("same words", "same words")
    assert "<del" not in d.a_html and "<ins" not in d.b_html
    assert "only A" in LEGEND_HTML and "only B" in LEGEND_HTML
