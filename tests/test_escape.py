"""Tests of s3kg_core/escape.py: names shown as typed in Markdown and in code spans."""

from __future__ import annotations

import doctest
import html

import pytest
from markdown_it import MarkdownIt

import s3kg_core.escape as escape_module
from s3kg_core.escape import code, md

MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["strikethrough", "table"])
HOSTILE = [
    "![a](http://127.0.0.1:9/a.png)",
    "x` ![e](http://127.0.0.1:9/e.png) `y",
    "<img src=x onerror=alert(1)> <b>bold</b> <a href='http://h/'>l</a>",
    "a_b *c* **d** `e` [l](javascript:x) :red[x] $x^2$ # h ~~s~~ > q",
    "R&D &lt; &amp; \\ | - 1. + = ^ {x} @user",
    "line one\n# heading\n- item\n\n| a | b |",
]


def _html(text: str) -> str:
    """Text as markdown-it writes it: ``&``, ``<``, ``>`` and ``"`` as entities."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def test_the_module_doctests_pass():
    result = doctest.testmod(escape_module)
    assert result.attempted >= 5 and result.failed == 0


@pytest.mark.parametrize("text", HOSTILE)
def test_md_renders_as_the_text_typed(text):
    shown = " ".join(text.splitlines())
    rendered = MARKDOWN.render(md(text)).replace("\u2060", "")
    assert rendered == f"<p>{_html(shown)}</p>\n"


@pytest.mark.parametrize(
    "text",
    ["see http://127.0.0.1:9/x", "HTTPS://h/x", "www.example.com", "mail me@example.com"],
)
def test_md_breaks_autolink_literals_with_an_invisible_joiner(text):
    # GFM finds these in the parsed text, where backslashes are gone
    escaped = md(text)
    assert "\u2060" in escaped
    unescaped = MARKDOWN.render(escaped)
    for literal in ("http://", "https://", "www.", "me@example"):
        assert literal not in unescaped.lower()
    assert unescaped.replace("\u2060", "") == f"<p>{_html(text)}</p>\n"


@pytest.mark.parametrize("text", [*HOSTILE, "`", "``a``", "a`", "plain", " a ", " ", "a "])
def test_code_is_one_code_span_holding_the_text(text):
    shown = " ".join(text.splitlines())
    assert MARKDOWN.render(code(text)) == f"<p><code>{_html(shown)}</code></p>\n"


def test_code_of_an_empty_text_is_still_a_span():
    assert MARKDOWN.render(f"a {code('')} b").startswith("<p>a <code>")
