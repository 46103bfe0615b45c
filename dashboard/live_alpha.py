"""Blocks of a page drawn for every stop of the alpha slider, shown by the browser as it moves.

Issue 60: moving alpha took 106-271 ms from the slider to the new numbers, the time of a
Streamlit rerun and redraw. A *live block* (a Streamlit custom component,
``st.components.v2``, in the page itself, no iframe) is mounted once with its numbers at every
stop of the slider (:data:`GRID`): a script in the browser watches the sidebar's alpha slider
and shows the stop it is at, in the frame the slider moves (a drag, before it is released; an
arrow key). Streamlit's slider still sends the final value to the server, which reruns the
page's alpha fragment and mounts the block again: at its new alpha, the same numbers, and those
only the server computes (bootstrap intervals, verdicts: a value marked ``server``), which read
``…`` until then and say so.

A block is a dictionary: ``kind`` (``"metrics"``, ``"note"`` or ``"table"``) and its fields
(:func:`metrics`, :func:`note`, :func:`table`). A value is a *cell*: ``{"v": x, "d": 4}`` (a
number, shown with 4 decimals), ``{"r": [lo, hi], "d": 3}`` (an interval, ``lo – hi``),
``{"t": text}``, ``{"t": text, "href": url}`` (a link); where it changes with alpha, ``x``,
``[lo, hi]``, ``text`` or ``url`` is a list of one value per stop of :data:`GRID`. A cell may
add ``"title"`` (its tooltip). Text is set as text in the browser, never as markup: no
escaping is needed, and none can be missed.

Examples
--------
>>> GRID[:3], grid_index(0.3)
((0.0, 0.1, 0.2), 3)
>>> cell(0.25, decimals=2)
{'v': 0.25, 'd': 2}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.url_state import ALPHA_STOPS
from s3kg_core.errors import ConfigError

__all__ = ["GRID", "KINDS", "cell", "grid_index", "metrics", "mount", "note", "table"]

_ASSETS = Path(__file__).resolve().parent / "assets"

GRID: tuple[float, ...] = ALPHA_STOPS
"""The alpha slider's stops (0, 0.1, ..., 1): a live block holds its numbers at each."""

KINDS = ("metrics", "note", "table")
"""The kinds of live block."""

_COMPONENT = st.components.v2.component(
    "s3kg.live_alpha",
    html='<div class="s3kg-live"></div>',
    css=(_ASSETS / "live_alpha.css").read_text(encoding="utf-8"),
    js=(_ASSETS / "live_alpha.js").read_text(encoding="utf-8"),
)


def grid_index(alpha: float) -> int:
    """The stop of :data:`GRID` at ``alpha``.

    Raises
    ------
    ConfigError
        If ``alpha`` is not a stop of the slider (the page rounds a URL's alpha to one).
    """
    for k, stop in enumerate(GRID):
        if math.isclose(stop, alpha, rel_tol=0.0, abs_tol=1e-9):
            return k
    raise ConfigError(f"alpha {alpha!r} is not a stop of the slider ({GRID[0]:g} to {GRID[-1]:g})")


def cell(value: float | Sequence[float], *, decimals: int) -> dict[str, Any]:
    """A number (or one per stop) shown with ``decimals`` decimals.

    NaN (a mean of nothing) is sent as ``None`` and shown as ``n/a``: JSON has no NaN.
    """

    def clean(x: float) -> float | None:
        x = float(x)
        return None if math.isnan(x) else x

    if isinstance(value, (int, float)):
        return {"v": clean(value), "d": int(decimals)}
    return {"v": [clean(x) for x in value], "d": int(decimals)}


def metrics(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A row of figures, as ``st.metric`` shows them: each ``{"label", "help", "cell"}``.

    ``help`` (the figure's tooltip) is one text, or one per stop. An item may add a line under
    its value, ``"delta"`` (a cell) and ``"tone"`` (``"up"``, ``"down"``, ``"warn"`` or
    ``"off"``, one or one per stop: green with an arrow up, red with an arrow down, orange,
    grey); ``"small": True`` draws a wider figure in a smaller size (``"0.14 / 0.20"``).
    """
    return {"kind": "metrics", "items": [dict(i) for i in items]}


def note(texts: Sequence[str | None], pending: str, *, caption: bool = False) -> dict[str, Any]:
    """A note per stop (``None``: no note there), and the line shown while the server waits.

    ``pending`` is shown while the server has not caught up with the slider; ``{alpha}`` in it
    reads the slider's value. A ``caption`` is one grey line (``st.caption``'s look) instead
    of an info box: the stop's text, then ``pending`` after it while the slider moves.
    """
    block = {"kind": "note", "texts": list(texts), "pending": pending}
    return {**block, "style": "caption"} if caption else block


def table(
    columns: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    *,
    label: str,
) -> dict[str, Any]:
    """A table: its ``columns`` and ``rows``, each row in its place at each stop.

    ``columns``: ``key``, ``label``, ``help``, ``width``, ``align``, ``wrap`` (its text may
    wrap; a cell is one line otherwise). ``rows``: ``id``,
    ``order`` (the row's place at each stop) and ``cells`` (key -> cell; a cell with
    ``"server": True`` holds the server's value at its alpha only, one with ``"wait"`` (a
    flag per stop) reads ``…`` at the stops it flags). ``label`` names the table
    for a screen reader.
    """
    return {
        "kind": "table",
        "label": label,
        "columns": [dict(c) for c in columns],
        "rows": [dict(r) for r in rows],
    }


def mount(block: Mapping[str, Any], *, alpha: float, key: str) -> None:
    """Draw ``block`` with the server's ``alpha``; the browser shows the slider's stop.

    Raises
    ------
    ConfigError
        On an unknown kind, or an ``alpha`` that is not a stop of the slider.
    """
    if block.get("kind") not in KINDS:
        raise ConfigError(f"a live block is one of {', '.join(KINDS)}; got {block.get('kind')!r}")
    _COMPONENT(key=key, data={**block, "grid": list(GRID), "at": grid_index(alpha)})
