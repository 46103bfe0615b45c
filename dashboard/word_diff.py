"""Two answers side by side with the words that differ marked: HTML, every word escaped.

The answers are cut into tokens: words (letters and digits, with inner hyphens and
apostrophes), single punctuation marks and the spaces between them, so the text keeps its line
breaks, "Crick," is the word "Crick" and a comma, and "DNA's" is the word "DNA". Words are
compared normalised, as the triple diff compares labels: case folded ("Evolution" is
"evolution"), curly apostrophes straight, underscores and hyphens around a word dropped
("_DNA_" is "DNA"); each side shows its own words as written. A word of A is
marked when B does not have it, counted with repetition (A's second "DNA" is marked if B has
only one), wherever it stands: a word that only moved is not a difference. The same for B
against A. Punctuation and spaces are never marked on their own. The marks are a background
*and* an underline style (dashed: only in A; solid: only in B), so they read without colour
too; the text stays dark on a light background (contrast over 7:1).
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

__all__ = ["LEGEND_HTML", "STYLE", "WordDiff", "answer_panels", "word_diff"]

_TOKENS = re.compile(r"\s+|\w+(?:-\w+)*(?:['’](?!s\b)\w+)*|['’]s\b|[^\w\s]")
_CLITICS = frozenset({"'s", "’s"})  # "DNA's" is the word "DNA" and a possessive, no word

STYLE = (
    "<style>"
    ".s3kg-wd{white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.95rem;line-height:1.6;"
    "color:#1a1a1a;margin:0}"
    ".s3kg-wd-a{background:#fbe3cf;border-bottom:2px dashed #b35806;text-decoration:none;"
    "color:#1a1a1a}"
    ".s3kg-wd-b{background:#d7e8f6;border-bottom:2px solid #0b5394;text-decoration:none;"
    "color:#1a1a1a}"
    ".s3kg-wd-legend{font-size:0.85rem;color:#31333f}"
    "</style>"
)
"""The marks' CSS (one ``<style>``, with the panels)."""

LEGEND_HTML = (
    '<p class="s3kg-wd-legend"><del class="s3kg-wd-a">dashed</del>: words only A has · '
    '<ins class="s3kg-wd-b">solid</ins>: words only B has · unmarked: in both</p>'
)
"""One line that says what the marks mean."""


@dataclass(frozen=True)
class WordDiff:
    """Both answers as HTML with their own words marked, and how many words each changed."""

    a_html: str
    b_html: str
    only_a: int
    only_b: int
    shared: int


def _is_word(token: str) -> bool:
    return token not in _CLITICS and any(ch.isalnum() for ch in token)


def _key(word: str) -> str:
    """What a word is compared by: NFKC, case folded, apostrophes straight, ends trimmed.

    Examples
    --------
    >>> [_key(w) for w in ("Evolution", "_DNA_", "Don’t", "ﬁne", "-x-ray-")]
    ['evolution', 'dna', "don't", 'fine', 'x-ray']
    """
    folded = unicodedata.normalize("NFKC", word).casefold().replace("’", "'")
    return folded.strip("_-'") or folded


def _marks(tokens: list[str], other: list[str]) -> list[bool]:
    """For each token, whether it is a word the other text lacks (by :func:`_key`, counted)."""
    left = Counter(_key(t) for t in other if _is_word(t))
    marks = []
    for t in tokens:
        if _is_word(t) and left[_key(t)] > 0:
            left[_key(t)] -= 1
            marks.append(False)
        else:
            marks.append(_is_word(t))
    return marks


def _render(tokens: list[str], marks: list[bool], tag: str, cls: str) -> str:
    """``tokens`` escaped, each run of marked words (with what stands between them) one mark."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        if not marks[i]:
            out.append(html.escape(tokens[i]))
            i += 1
            continue
        j = i  # the run ends at the last marked word before an unmarked word
        k = i + 1
        while k < len(tokens) and not (marks[k] is False and _is_word(tokens[k])):
            if marks[k]:
                j = k
            k += 1
        inner = html.escape("".join(tokens[i : j + 1]))
        out.append(f'<{tag} class="{cls}">{inner}</{tag}>')
        i = j + 1
    return "".join(out)


def word_diff(a: str, b: str) -> WordDiff:
    """The word-level difference of answer ``a`` and answer ``b``.

    Words are compared normalised ("Paris" is "paris", "_Paris_" too) and shown as written;
    punctuation is not a word ("Paris." has the word "Paris"), and a word that moved is in both.

    Examples
    --------
    >>> d = word_diff("Fleming found <b>penicillin</b>.", "In 1928, penicillin: Fleming found")
    >>> d.a_html  # doctest: +NORMALIZE_WHITESPACE
    'Fleming found &lt;<del class="s3kg-wd-a">b</del>&gt;penicillin&lt;/<del
    class="s3kg-wd-a">b</del>&gt;.'
    >>> d.b_html
    '<ins class="s3kg-wd-b">In 1928</ins>, penicillin: Fleming found'
    >>> (d.only_a, d.only_b, d.shared)
    (2, 2, 3)
    >>> word_diff("", "new").b_html, word_diff("same", "same").a_html
    ('<ins class="s3kg-wd-b">new</ins>', 'same')
    >>> word_diff("Evolution by selection.", "evolution, by Selection").only_a
    0
    """
    ta, tb = _TOKENS.findall(a or ""), _TOKENS.findall(b or "")
    ma, mb = _marks(ta, tb), _marks(tb, ta)
    only_a, only_b = sum(ma), sum(mb)
    shared = sum(1 for t in ta if _is_word(t)) - only_a
    return WordDiff(
        _render(ta, ma, "del", "s3kg-wd-a"),
        _render(tb, mb, "ins", "s3kg-wd-b"),
        only_a,
        only_b,
        shared,
    )


def answer_panels(diff: WordDiff, side: str) -> str:
    """One side's answer (``"A"`` or ``"B"``) as a block of HTML for ``st.html``.

    Examples
    --------
    >>> answer_panels(word_diff("a b", "a c"), "B")
    '<div class="s3kg-wd">a <ins class="s3kg-wd-b">c</ins></div>'
    >>> answer_panels(word_diff("", ""), "A")
    '<div class="s3kg-wd"><em>(empty)</em></div>'
    """
    body = diff.a_html if side == "A" else diff.b_html
    return f'<div class="s3kg-wd">{body or "<em>(empty)</em>"}</div>'
