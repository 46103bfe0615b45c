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
    assert " ".join(marked_a).split() == ["and", "pain"]  # the full stop is no word
    assert " ".join(marked_b).split() == ["in", "children"]
    assert (d.only_a, d.only_b, d.shared) == (2, 2, 3)


def test_words_that_moved_are_in_both_and_punctuation_is_no_word():
    """Regression (issue 43, item 5): Run comparison demo-10 marked "DNA", "helix", "proposed"
    and "Rosalind Franklin" as only in A although B has them, and "Crick" vs "Crick,"."""
    a = "Watson and Crick proposed the double helix of DNA, using data of Rosalind Franklin."
    b = "Using Rosalind Franklin's data? No: Rosalind Franklin, then Crick, proposed DNA's helix."
    d = word_diff(a, b)
    marked_a = re.findall(r"\w+", " ".join(re.findall(r"<del[^>]*>(.*?)</del>", d.a_html)))
    for word in ("DNA", "helix", "proposed", "Rosalind", "Franklin", "Crick"):
        assert word not in marked_a
    # both of A's "of" (B has none); "using" is B's "Using" (issue 58: case does not count)
    assert marked_a == ["Watson", "and", "the", "double", "of", "of"]
    marked_b = re.findall(r"\w+", " ".join(re.findall(r"<ins[^>]*>(.*?)</ins>", d.b_html)))
    assert marked_b == ["No", "Rosalind", "Franklin", "then"]  # B names her twice


def test_words_are_compared_normalised_and_shown_as_written_issue_58():
    """Regression (issue 58, 4): "Evolution" against "evolution" was marked as a change while
    the triple diff, which compares normalised labels, said nothing changed. Case, curly
    apostrophes and underscores around a word do not count; each side keeps its own spelling."""
    a = "Evolution by natural selection doesn't need _design_; DARWIN wrote it."
    b = "Darwin wrote: evolution by Natural Selection doesn’t need design"
    d = word_diff(a, b)
    assert (d.only_a, d.only_b, d.shared) == (1, 0, 9)
    assert re.findall(r"<del[^>]*>(.*?)</del>", d.a_html) == ["it"]
    assert "<ins" not in d.b_html
    assert "".join(_parse(d.a_html).text) == a and "".join(_parse(d.b_html).text) == b
    # a real difference of one letter is still one
    assert word_diff("evolution", "evolutions").only_a == 1


def test_a_repeated_word_is_marked_once_it_is_used_up():
    d = word_diff("the cat saw the dog", "the dog")
    assert re.findall(r"<del[^>]*>(.*?)</del>", d.a_html) == ["cat saw the"]
    assert (d.only_a, d.only_b, d.shared) == (3, 0, 2)


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
