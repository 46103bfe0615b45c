"""Tests of dashboard/escape.py: names shown as typed in Markdown, code spans and plotly."""

from __future__ import annotations

import doctest
import html

import pandas as pd
import pytest
from markdown_it import MarkdownIt

import dashboard.escape as escape_module
from dashboard.escape import code, md, plotly_frame, plotly_text

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
    assert result.attempted >= 6 and result.failed == 0


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


def test_plotly_text_leaves_no_tag():
    assert plotly_text("<b>B</b> & <a href='x'>") == "&lt;b&gt;B&lt;/b&gt; &amp; &lt;a href='x'&gt;"


def test_plotly_frame_escapes_text_columns_only():
    frame = pd.DataFrame({"model": ["<b>m</b>", None], "n": [1, 2], "score": [0.5, float("nan")]})
    out = plotly_frame(frame)
    assert out["model"].tolist()[0] == "&lt;b&gt;m&lt;/b&gt;"
    assert out["model"].isna().tolist() == [False, True]
    assert out["n"].tolist() == [1, 2]
    assert frame["model"].tolist()[0] == "<b>m</b>"  # the input is not changed
    assert plotly_frame(frame, ["model"])["model"].tolist()[0] == "&lt;b&gt;m&lt;/b&gt;"
