"""A griffe extension for the docs site: the reStructuredText of docstrings made Markdown.

The library's docstrings name other objects as Sphinx does (``:class:`Triple```,
``:func:`~s3kg_core.grapheval.detect.detect```) and a few hold RST simple tables (rows between
``=====  =====`` borders); Markdown would show both as they are. mkdocs.yml loads this file
(mkdocstrings, ``extensions``): a role becomes a code span (``~`` keeps the last part of a
dotted name), a simple table a Markdown table.
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

__all__ = ["BORDER", "ROLE", "ReSTToMarkdown", "rst_tables", "strip_roles"]

ROLE = re.compile(r":(?:py:)?(?:class|func|meth|data|attr|mod|exc|obj|const):`(~?)([^`]+)`")
BORDER = re.compile(r"^(?P<indent> *)=+(?: +=+)+ *$")


def strip_roles(text: str) -> str:
    """``text`` with every Sphinx object role written as a Markdown code span.

    Examples
    --------
    >>> strip_roles("See :class:`Triple` and :func:`~s3kg_core.grapheval.detect.detect`.")
    'See `Triple` and `detect`.'
    """
    return ROLE.sub(lambda m: f"`{m[2].rsplit('.', 1)[-1] if m[1] else m[2]}`", text)


def _cells(line: str, starts: list[int]) -> list[str]:
    bounds = [*starts[1:], None]
    return [line[a:b].strip() for a, b in zip(starts, bounds, strict=True)]


def _table(lines: list[str]) -> list[str]:
    """A Markdown table from an RST simple table's lines (its three borders included)."""
    border = lines[0]
    starts = [m.start() for m in re.finditer(r"=+", border)]
    rows: list[list[str]] = []
    section = rows_section = header_rows = 0
    for line in lines[1:]:
        if BORDER.match(line):
            section += 1
            continue
        if not line.strip():
            continue
        cells = _cells(line, starts)
        if rows and not cells[0] and section == rows_section:  # a continuation line
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        else:
            rows.append(cells)
            rows_section = section
        if section == 0:
            header_rows = len(rows)
    indent = BORDER.match(border)["indent"]  # type: ignore[index]
    header, body = rows[:header_rows], rows[header_rows:]
    head = [" ".join(c for c in col if c) for col in zip(*header, strict=True)]
    out = [indent + "| " + " | ".join(head) + " |", indent + "|" + "---|" * len(head)]
    out += [indent + "| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    return out


def rst_tables(text: str) -> str:
    r"""``text`` with every RST simple table (header, rows, three borders) as a Markdown table.

    A line whose first cell is blank continues the row above it.

    Examples
    --------
    >>> print(rst_tables("Rules:\n\n====  =====\nin    out\n====  =====\nnone  0.0\n"
    ...                  "some  max,\n      mean\n====  =====\n\nDone."))
    Rules:
    <BLANKLINE>
    | in | out |
    |---|---|
    | none | 0.0 |
    | some | max, mean |
    <BLANKLINE>
    Done.
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        if BORDER.match(lines[i]):
            ends = [j for j in range(i + 1, len(lines)) if lines[j] == lines[i]]
            if len(ends) >= 2:
                out += _table(lines[i : ends[1] + 1])
                i = ends[1] + 1
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


class ReSTToMarkdown(Extension):
    """Rewrites every docstring griffe loads (modules, classes, functions, attributes)."""

    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        """Called by griffe for each object it loads."""
        if obj.docstring is not None:
            obj.docstring.value = rst_tables(strip_roles(obj.docstring.value))
