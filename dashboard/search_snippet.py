"""Where a search's words are: a snippet of the matched text with the words marked, as HTML.

The Search page shows, for each answer found, the text a word matched in (the answer, the
question, the gold answer or the context) around the first match, every occurrence of every
word in ``<mark>``. The texts are the user's and the model's: every part is escaped with
:func:`html.escape` before any tag is added, so no text can become markup.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

__all__ = ["MARK_STYLE", "match_row_html", "match_spans", "snippet_html"]

MARK_STYLE = "background:#ffe08a;color:#1f1f1f;padding:0 2px;border-radius:2px"
"""The marked words' style: dark text on light amber, readable in both themes."""


def match_spans(text: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """The ``(start, end)`` of every occurrence of any word in ``text`` (any case), merged.

    Words are literal (``%`` or ``.`` is itself), as the search matches them.

    Examples
    --------
    >>> match_spans("Penicillin and penicillinase", ["PENICILLIN"])
    [(0, 10), (15, 25)]
    >>> match_spans("a.b", ["."])
    [(1, 2)]
    """
    spans: list[tuple[int, int]] = []
    for word in {w for w in words if w}:
        spans += [(m.start(), m.end()) for m in re.finditer(re.escape(word), text, re.IGNORECASE)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def snippet_html(text: str, words: Sequence[str], width: int = 220) -> str:
    """About ``width`` characters of ``text`` around its first match, the words in ``<mark>``.

    The window starts a third of ``width`` before the first match (at a space where one is
    near) and ``…`` marks what was left out; the text is escaped for HTML.

    Examples
    --------
    >>> snippet_html("Fleming found <b>penicillin</b>.", ["penicillin"])  # doctest: +ELLIPSIS
    'Fleming found &lt;b&gt;<mark style="...">penicillin</mark>&lt;/b&gt;.'
    >>> snippet_html("x " * 200 + "end", ["END"], width=20)  # doctest: +ELLIPSIS
    '… x x x <mark ...>end</mark>'
    """
    spans = match_spans(text, words)
    first = spans[0][0] if spans else 0
    start = max(0, first - width // 3)
    if start:
        space = text.rfind(" ", max(0, start - 20), start + 1)
        start = space + 1 if space >= 0 else start
    end = min(len(text), max(start + width, spans[0][1] if spans else 0))
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space >= 0 else end
    parts = ["… "] if start else []
    at = start
    for s, e in spans:
        s, e = max(s, start), min(e, end)
        if s >= e:
            continue
        parts.append(html.escape(text[at:s]))
        parts.append(f'<mark style="{MARK_STYLE}">{html.escape(text[s:e])}</mark>')
        at = e
    parts.append(html.escape(text[at:end]))
    if end < len(text):
        parts.append(" …")
    return "".join(parts)


def match_row_html(
    href: str,
    item: str,
    run: str,
    matched: str,
    field: str,
    text: str,
    words: Sequence[str],
) -> str:
    """One found answer as a table row: item (a link), run, matched texts, one text's snippet.

    ``matched`` names the texts that hold a word; the snippet is of ``field``'s ``text``.

    Every argument is escaped (``href`` as an attribute).

    Examples
    --------
    >>> row = match_row_html("/Sample_explorer?run=1&item=2", "q<1>", "m", "answer", "answer",
    ...                      "ab", ["b"])
    >>> 'href="/Sample_explorer?run=1&amp;item=2"' in row and "q&lt;1&gt;" in row
    True
    """
    link = f'<a href="{html.escape(href, quote=True)}" target="_self">{html.escape(item)}</a>'
    cell = "padding:4px 8px;vertical-align:top;border-top:1px solid rgba(128,128,128,0.25)"
    return (
        f'<tr><td style="{cell};white-space:nowrap">{link}</td>'
        f'<td style="{cell};overflow-wrap:anywhere">{html.escape(run)}</td>'
        f'<td style="{cell}">{html.escape(matched)}</td>'
        f'<td style="{cell};overflow-wrap:anywhere"><i>{html.escape(field)}</i>: '
        f"{snippet_html(text, words)}</td></tr>"
    )
