"""Two answers side by side with the words that differ marked: HTML, every word escaped.

The answers are cut into words and the spaces between them (so the text keeps its line
breaks), :class:`difflib.SequenceMatcher` pairs the words the two share, and every other word
is marked: on A's side the words B does not have, on B's side the words A does not have. The
marks are a background *and* an underline style (dashed: only in A; solid: only in B), so
they read without colour too; the text stays dark on a light background (contrast over 7:1).
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass

__all__ = ["LEGEND_HTML", "STYLE", "WordDiff", "answer_panels", "word_diff"]

_TOKENS = re.compile(r"\s+|[^\s]+")

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


def _words(tokens: list[str]) -> list[str]:
    return [t for t in tokens if not t.isspace()]


def word_diff(a: str, b: str) -> WordDiff:
    """The word-level difference of answer ``a`` and answer ``b``.

    Words are compared as written (case and punctuation count: "Paris." is not "Paris");
    the spaces between them are kept, never marked.

    Examples
    --------
    >>> d = word_diff("Fleming found penicillin", "Fleming discovered <b>penicillin</b>")
    >>> d.a_html
    'Fleming <del class="s3kg-wd-a">found penicillin</del>'
    >>> d.b_html
    'Fleming <ins class="s3kg-wd-b">discovered &lt;b&gt;penicillin&lt;/b&gt;</ins>'
    >>> (d.only_a, d.only_b, d.shared)
    (2, 2, 1)
    >>> word_diff("", "new").b_html, word_diff("same", "same").a_html
    ('<ins class="s3kg-wd-b">new</ins>', 'same')
    """
    ta, tb = _TOKENS.findall(a or ""), _TOKENS.findall(b or "")
    # spaces never anchor a match: a run of changed words is one mark, not one per word
    matcher = difflib.SequenceMatcher(str.isspace, ta, tb, autojunk=False)
    out_a: list[str] = []
    out_b: list[str] = []
    only_a = only_b = shared = 0
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        part_a, part_b = ta[i1:i2], tb[j1:j2]
        if op == "equal":
            out_a.append(html.escape("".join(part_a)))
            out_b.append(html.escape("".join(part_b)))
            shared += len(_words(part_a))
            continue
        only_a += len(_words(part_a))
        only_b += len(_words(part_b))
        out_a.append(_marked(part_a, "del", "s3kg-wd-a"))
        out_b.append(_marked(part_b, "ins", "s3kg-wd-b"))
    return WordDiff("".join(out_a), "".join(out_b), only_a, only_b, shared)


def _marked(tokens: list[str], tag: str, cls: str) -> str:
    """``tokens`` escaped, the words inside one mark (spaces around it left outside)."""
    if not tokens:
        return ""
    lead = tokens[0] if tokens[0].isspace() else ""
    trail = tokens[-1] if tokens[-1].isspace() and len(tokens) > 1 else ""
    body = tokens[int(bool(lead)) : len(tokens) - int(bool(trail))]
    if not body:
        return html.escape("".join(tokens))
    inner = html.escape("".join(body))
    return f'{html.escape(lead)}<{tag} class="{cls}">{inner}</{tag}>{html.escape(trail)}'


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
