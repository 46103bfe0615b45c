"""Escaping of user- and model-provided strings for Markdown: shown as typed, never as markup.

Names of runs, models and datasets, question texts and triple labels come from files, flags
and LLMs. Every Markdown sink (the dashboard's ``st.markdown`` and captions, the Markdown
summary of ``s3kg check`` for a CI job) takes them through :func:`md` (text) or :func:`code`
(an inline code span: a path, a command line, a signature).
"""

from __future__ import annotations

import re

__all__ = ["code", "md"]

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
