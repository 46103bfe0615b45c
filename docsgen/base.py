"""The registry of views and the cell formats they share.

A view has an id (the marker ``<!-- evidence:ID -->`` in a Markdown file), the evidence files
it reads, and a function from those files' ``figures`` to Markdown (:func:`view` registers
one). This module also says which parts of which docs are results (:data:`SCANNED`): there, a
table with a number or a figure in prose that no marker renders is reported as drift.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SCANNED",
    "SETS",
    "VIEWS",
    "View",
    "auroc_f1",
    "bold",
    "f",
    "figure_rows",
    "md_table",
    "sci",
    "span",
    "template",
    "value_ci",
    "view",
    "with_ci",
]

Evidence = Mapping[str, Mapping[str, Any]]

SETS = (
    "mrpc",
    "paws_wiki",
    "pubmedqa",
    "sk_codex",
    "sk_combined",
    "sk_findkg",
    "sk_globi",
    "sk_oregano",
    "sts12",
)
"""The nine labelled pair sets by their short names, in the docs' order."""

SCANNED: dict[str, tuple[str, ...] | None] = {
    "README.md": ("How well it works",),
    "bench/README.md": None,
    "docs/papers.md": None,
    "docs/evidence.md": None,
}
"""Docs and their results sections (``##`` headings, by prefix; None: the whole file)."""


@dataclass(frozen=True)
class View:
    """A table of the docs: its marker id, the evidence files it reads, how it is written."""

    id: str
    sources: tuple[str, ...]
    render: Callable[[Evidence], str]


VIEWS: dict[str, View] = {}


def view(view_id: str, *sources: str) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """Register ``fn(*figures)`` as view ``view_id``, called with each source's ``figures``."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        if view_id in VIEWS:
            raise ValueError(f"view {view_id!r} registered twice")

        def render(evidence: Evidence) -> str:
            return fn(*(evidence[s]["figures"] for s in sources))

        VIEWS[view_id] = View(view_id, sources, render)
        return fn

    return register


# -- formatting -----------------------------------------------------------------------------------


def md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A Markdown table.

    Examples
    --------
    >>> print(md_table(["a", "b"], [["1", "2"]]))
    | a | b |
    |---|---|
    | 1 | 2 |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def template(cell: Mapping[str, Any]) -> str:
    """A cell kept as its wording and its numbers: ``text.format(*values)``.

    Examples
    --------
    >>> template({"text": "{0:d} / {1:d} ms", "values": [35, 40]})
    '35 / 40 ms'
    """
    return str(cell["text"]).format(*cell["values"])


def f(x: Any, spec: str = ".3f") -> str:
    """``x`` formatted; an absent figure (None, NaN) is an empty cell."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return format(x, spec)


def auroc_f1(m: Mapping[str, Any], bold: bool = False) -> str:
    """``0.605 (0.641)``: AUROC (max-F1), the AUROC bold on a mean row."""
    a = f(m["auroc"])
    return f"{'**' + a + '**' if bold else a} ({f(m['f1'])})"


def with_ci(m: Mapping[str, Any], key: str = "auroc", f1: bool = True) -> str:
    """``0.604 [0.541, 0.668] (0.641)``: a figure, its 95 % interval, and max-F1."""
    text = f(m[key])
    if m.get(f"{key}_ci"):
        lo, hi = m[f"{key}_ci"]
        text += f" [{f(lo)}, {f(hi)}]"
    if f1 and m.get("f1") is not None:
        text += f" ({f(m['f1'])})"
    return text


def value_ci(m: Mapping[str, Any]) -> str:
    """``0.664 [0.561, 0.761]`` from ``{"value", "ci"}``."""
    text = f(m["value"])
    if m.get("ci"):
        text += f" [{f(m['ci'][0])}, {f(m['ci'][1])}]"
    return text


def bold(text: str, on: bool = True) -> str:
    """``**text**`` when ``on`` (an empty cell stays empty)."""
    return f"**{text}**" if on and text else text


def span(xs: Sequence[float], spec: str = ".1f", unit: str = " s") -> str:
    """``6.6-7.7 s`` from ``[6.6, 7.7]``; one value when both ends are equal."""
    lo, hi = xs
    return (
        f"{format(lo, spec)}{unit}" if lo == hi else f"{format(lo, spec)}-{format(hi, spec)}{unit}"
    )


def figure_rows(fig: Mapping[str, Any], header: Sequence[str]) -> str:
    """A two-column table of ``fig["rows"]``: each row's label and its :func:`template` cell."""
    return md_table(header, ([r["figure"], template(r["value"])] for r in fig["rows"]))


def sci(x: float) -> str:
    """``1.6e-7`` (and ``0``): a small difference as the notebook prints it."""
    return "0" if x == 0 else f"{x:.1e}".replace("e-0", "e-")
