"""Escaping of user- and model-provided strings for each place the dashboard shows text.

Names of models, datasets, extractors, checkers and annotators, question texts and triple
labels come from files, flags and LLMs: the dashboard shows them as typed. Streamlit renders
Markdown (with its own directives, LaTeX and emoji) in ``st.markdown``, captions, alerts,
metric labels and values, help tooltips, expander and tab labels, and plotly renders a subset
of HTML (``<b>``, ``<a href>``, ``<br>``, ...) in trace names, ticks, titles and hovers. Every
such sink takes its untrusted parts through one of these functions:

* :func:`md` for Markdown text,
* :func:`code` for an inline code span (a path, a command line, a signature),
* :func:`plotly_text` for any plotly label or hover, and :func:`plotly_frame` for the string
  columns of a frame handed to ``plotly.express``.

Widgets whose options are plain text (select boxes, radio options), ``st.text``,
``st.dataframe`` and ``st.code`` need no escaping.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

import pandas as pd

__all__ = ["code", "md", "plotly_frame", "plotly_text"]

# Every ASCII punctuation character Markdown, GFM, Streamlit's directives (:red[...]),
# LaTeX ($...$) or HTML could read; CommonMark lets a backslash escape each of them.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&$:\"'=^@/%;?])")
_BACKTICKS = re.compile(r"`+")
# GFM's autolink literals (http://, www., e-mail addresses) are found in the text after the
# Markdown is parsed, so backslashes cannot stop them: an invisible word joiner (U+2060)
# between "http" and "://", "www" and ".", "@" and the domain breaks the pattern instead.
_AUTOLINK = re.compile(r"(?i)((?:https?|ftp|mailto|xmpp)(?=:)|www(?=\.)|@(?=[\w-]))")
_JOINER = "\u2060"


def md(text: object) -> str:
    r"""``text`` with every Markdown-active character backslash-escaped: shown as typed.

    No emphasis, link, image, HTML, directive or LaTeX can come from the text; line breaks
    become spaces, so the text cannot start a heading, list or table either. A URL or e-mail
    address gets an invisible word joiner, so GFM does not turn it into a link.

    Examples
    --------
    >>> md("a_b *c* <b>")
    'a\\_b \\*c\\* \\<b\\>'
    >>> md("![x](y.png)")
    '\\!\\[x\\]\\(y\\.png\\)'
    >>> md("http://h") == "http\u2060\\:\\/\\/h"
    True
    """
    flat = " ".join(str(text).splitlines())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", _AUTOLINK.sub(rf"\1{_JOINER}", flat))


def code(text: object) -> str:
    """``text`` as one inline Markdown code span, whatever backticks it holds.

    Inside a code span nothing is interpreted, but backslash escapes do not work either: the
    span is fenced with one backtick more than the longest run of backticks in the text
    (CommonMark), and padded with a space on each side where the text starts or ends with a
    backtick or a space (CommonMark strips one such pair), so that every character stays.

    Examples
    --------
    >>> code("s3kg score --db a.duckdb")
    '`s3kg score --db a.duckdb`'
    >>> code("x` ![e](http://h/e.png) `y")
    '``x` ![e](http://h/e.png) `y``'
    >>> code("`a`")
    '`` `a` ``'
    """
    flat = " ".join(str(text).splitlines()) or " "
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.strip() and (flat[0] in "` " or flat[-1] in "` ") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def plotly_text(text: object) -> str:
    """``text`` for a plotly label, tick, title or hover: ``&``, ``<``, ``>`` as entities.

    Plotly draws the entities as the characters, so the label reads as typed, and no tag of
    the text is rendered.

    Examples
    --------
    >>> plotly_text("<b>R&D</b>")
    '&lt;b&gt;R&amp;D&lt;/b&gt;'
    """
    return html.escape(str(text), quote=False)


def plotly_frame(frame: pd.DataFrame, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """A copy of ``frame`` whose text columns (or ``columns``) hold :func:`plotly_text` values.

    For the frames handed to ``plotly.express``: their values become trace names, ticks,
    facet titles and hover text.

    Examples
    --------
    >>> plotly_frame(pd.DataFrame({"model": ["<b>m</b>"], "n": [1]})).to_dict("records")
    [{'model': '&lt;b&gt;m&lt;/b&gt;', 'n': 1}]
    """
    out = frame.copy()
    chosen = (
        list(columns)
        if columns is not None
        else [
            c
            for c in out.columns
            if pd.api.types.is_object_dtype(out[c]) or pd.api.types.is_string_dtype(out[c])
        ]
    )
    for column in chosen:
        out[column] = out[column].map(lambda v: v if pd.isna(v) else plotly_text(v))
    return out
