"""A page's view state in its URL: read a link once, write the state back on every run.

A page calls :func:`adopt` first: the query parameters it did not write itself (a shared
link, a reload in a new session) come back parsed, once, for the page to put into its
widgets' session state; then :func:`write` puts the state shown into the URL, so copying the
address reopens the same view. Alpha is the sidebar's (:func:`adopt_alpha`: a link's
``?alpha=`` sets it for the whole session, as a move of the slider does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import streamlit as st

__all__ = [
    "ALPHA_STEP",
    "ALPHA_STOPS",
    "MAX_ID",
    "adopt",
    "adopt_alpha",
    "parse_alpha",
    "parse_id",
    "parse_page",
    "write",
]

ALPHA_STEP = 0.1
"""The sidebar alpha slider's step, and the grid a URL's ``?alpha=`` is rounded to (0.1: three
arrow presses from the default 0.5 to 0.2; at 0.05 it took six, issue 43.11)."""

ALPHA_STOPS: tuple[float, ...] = tuple(
    round(k * ALPHA_STEP, 2) for k in range(round(1 / ALPHA_STEP) + 1)
)
"""Every value the slider can take (0, 0.1, ..., 1): the stops live blocks hold their numbers
at (:mod:`dashboard.live_alpha`)."""

MAX_ID = 2**31 - 1
"""The largest run or item id (DuckDB's INTEGER): a URL's larger number names nothing."""


def parse_id(text: str) -> str:
    """A URL's run or item id, as text: a whole number from 0 to :data:`MAX_ID`.

    A number past it is refused as any bad value is (the link is ignored), never handed to
    DuckDB, which cannot compare it with an INTEGER column (``ConversionException``).

    Raises
    ------
    ValueError
        If ``text`` is not such a number.

    Examples
    --------
    >>> parse_id("12")
    '12'
    >>> parse_id("99999999999999999999")
    Traceback (most recent call last):
    ...
    ValueError: not an id: '99999999999999999999'
    """
    value = int(text)
    if not 0 <= value <= MAX_ID:
        raise ValueError(f"not an id: {text!r}")
    return str(value)


def parse_page(text: str) -> int:
    """A URL's 1-based page number as a 0-based index, from 1 to :data:`MAX_ID`.

    Raises
    ------
    ValueError
        If ``text`` is not such a number.

    Examples
    --------
    >>> parse_page("3"), parse_page("0")
    (2, 0)
    >>> parse_page("99999999999999999999")
    Traceback (most recent call last):
    ...
    ValueError: not a page: '99999999999999999999'
    """
    value = int(text)
    if value > MAX_ID:
        raise ValueError(f"not a page: {text!r}")
    return max(0, value - 1)


def parse_alpha(text: str) -> float:
    """A URL's alpha: a number in [0, 1] on the slider's 0.05 grid.

    Raises
    ------
    ValueError
        If ``text`` is not a number in [0, 1].

    Examples
    --------
    >>> parse_alpha("0.9"), parse_alpha("0.62")
    (0.9, 0.6)
    >>> parse_alpha("2")
    Traceback (most recent call last):
    ...
    ValueError: alpha must be between 0 and 1; got '2'
    """
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"alpha must be between 0 and 1; got {text!r}")
    return round(round(value / ALPHA_STEP) * ALPHA_STEP, 2)


def adopt(page: str, parsers: Mapping[str, Callable[[str], Any]]) -> dict[str, Any]:
    """The URL's parameters of ``parsers`` that this page did not write, parsed (once).

    Empty when the URL holds what :func:`write` last wrote for ``page`` (the page's own
    state): a link is applied on the run that opens it, never again, so a widget moved
    afterwards keeps its new value. A value its parser refuses (``ValueError``) is left out.
    """
    params = {k: str(st.query_params[k]) for k in parsers if k in st.query_params}
    seen_key = f"{page}._url"
    if not params or params == st.session_state.get(seen_key):
        return {}
    st.session_state[seen_key] = params
    out = {}
    for key, text in params.items():
        try:
            out[key] = parsers[key](text)
        except ValueError:
            continue
    return out


def adopt_alpha(page: str) -> None:
    """A link's ``?alpha=`` becomes the sidebar's alpha (call before ``widgets.sidebar``)."""
    found = adopt(f"{page}.alpha", {"alpha": parse_alpha})
    if "alpha" in found:
        st.session_state["_alpha_value"] = found["alpha"]


def write(page: str, params: Mapping[str, str | None]) -> None:
    """Put ``params`` into the URL (``None`` removes one) and remember them as the page's own.

    ``alpha`` goes with ``page + ".alpha"`` (as :func:`adopt_alpha` reads it).
    """
    for key, value in params.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != value:
            st.query_params[key] = value
    own = {k: v for k, v in params.items() if v is not None and k != "alpha"}
    if own:
        st.session_state[f"{page}._url"] = {
            k: str(st.query_params[k]) for k in st.query_params if k in own
        }
    if params.get("alpha") is not None:
        st.session_state[f"{page}.alpha._url"] = {"alpha": params["alpha"]}
