"""The dashboard's pages, their addresses, and links from one page's case to another page.

``app.py`` hands :func:`pages` to ``st.navigation``; every page is one file in ``pages/`` and
keeps working on its own (``streamlit.testing`` runs them one by one). A case is a URL:
``/Sample_explorer?run=<run_id>&item=<item_id>`` (and ``/Annotate?...`` alike), built by
:func:`case_url`; :func:`case_link` draws it as an in-app link that keeps the session (alpha,
signature), or as a plain link where the page runs outside the navigation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dashboard.escape import md
from s3kg_core.resources import package_path

__all__ = [
    "OLD_KEYS",
    "OVERVIEW_ALIAS",
    "PAGES",
    "PageSpec",
    "case_link",
    "case_query",
    "case_url",
    "ensure_navigation",
    "page",
    "page_url",
    "params_link",
    "say_unknown_path",
    "take_unknown_path",
    "unknown_path_text",
]

_ROOT = package_path("dashboard")
"""The app's folder: ``app.py`` and ``pages/`` (in a checkout, links to the repository's own)."""


@dataclass(frozen=True)
class PageSpec:
    """One page of the dashboard: its file (relative to the app's folder), title and address."""

    key: str
    file: str
    title: str
    url_path: str

    @property
    def path(self) -> Path:
        """The page's file, absolute (links resolved: in a checkout, the repository's file)."""
        return (_ROOT / self.file).resolve()


PAGES: tuple[PageSpec, ...] = (
    PageSpec("overview", "pages/0_Overview.py", "Overview", ""),
    PageSpec("compare", "pages/7_Run_comparison.py", "Run comparison", "Run_comparison"),
    PageSpec("explorer", "pages/1_Sample_explorer.py", "Sample explorer", "Sample_explorer"),
    PageSpec("run", "pages/8_Run.py", "Run details", "Run"),
    PageSpec("search", "pages/9_Search.py", "Search answers", "Search"),
    PageSpec(
        "failure_analysis",
        "pages/2_Failure_analysis.py",
        "Failure analysis (TAU)",
        "Failure_analysis",
    ),
    PageSpec("annotate", "pages/3_Annotate.py", "Annotate", "Annotate"),
    PageSpec("hallucinations", "pages/5_Hallucinations.py", "Hallucinations", "Hallucinations"),
    PageSpec("factuality", "pages/6_Factuality.py", "Factuality", "Factuality"),
    PageSpec("bench", "pages/4_Benchmarks.py", "Benchmarks", "Benchmarks"),
)
"""Every page in the order of the sidebar's list; the overview is the default page."""


OLD_KEYS: dict[str, str] = {"tau": "failure_analysis"}
"""Page keys that were renamed -> their page's key now (``"tau"`` read as S3KG's threshold)."""


def page(key: str) -> PageSpec:
    """The page called ``key`` (``"explorer"``, ``"annotate"``; an old key: :data:`OLD_KEYS`).

    Examples
    --------
    >>> page("tau").key
    'failure_analysis'
    """
    key = OLD_KEYS.get(key, key)
    for spec in PAGES:
        if spec.key == key:
            return spec
    raise KeyError(f"no dashboard page {key!r}; pages: {', '.join(p.key for p in PAGES)}")


OVERVIEW_ALIAS = "Overview"
"""The overview's own address: the default page lives at ``/``, and ``/Overview`` (a page's
title in the sidebar, as every other page's address is) opens it there, its query kept."""


_DEFAULT_RESERVED = "index"


def pages() -> list[st.Page]:
    """The ``st.Page`` of every page, for ``st.navigation``, and the overview's alias.

    The default page is served at ``/`` only (Streamlit answers "Page not found" at its
    ``url_path``); a hidden page at ``/Overview`` switches to it, so that every page's name
    in the sidebar is also an address that resolves.
    """
    listed = [
        st.Page(
            spec.path,
            title=spec.title,
            # the default page still reserves its url_path (inferred: "Overview"), so it gets
            # one nobody types, and the alias gets "Overview"
            url_path=spec.url_path or _DEFAULT_RESERVED,
            default=spec.url_path == "",
        )
        for spec in PAGES
    ]
    default = listed[0]

    def to_overview() -> None:
        st.switch_page(default, query_params=st.query_params.to_dict())

    alias = st.Page(to_overview, title=PAGES[0].title, url_path=OVERVIEW_ALIAS, visibility="hidden")
    return [*listed, alias]


def unknown_path_text(requested: str) -> str | None:
    """The line that says no page lives at ``/requested``, listing the pages; ``None`` for a page.

    Streamlit shows the default page for an address it does not know, so ``/Failure_analysis_
    (TAU)`` (the page's title, not its address) looked like a broken Overview. The name is the
    user's: it is escaped for Markdown.

    Examples
    --------
    >>> unknown_path_text("Run") is None and unknown_path_text("") is None
    True
    >>> unknown_path_text("Nope").split(";")[0]
    'No page at /Nope'
    """
    name = requested.strip("/")
    if name in {spec.url_path for spec in PAGES} | {OVERVIEW_ALIAS, _DEFAULT_RESERVED}:
        return None
    listing = ", ".join(f"{spec.title} (/{spec.url_path})" for spec in PAGES)
    return f"No page at /{md(name)}; the pages are: {md(listing)}. This is the Overview."


def take_unknown_path() -> str | None:
    """Before ``st.navigation``: the line for an address no page has, the request then dropped.

    Streamlit runs the default page at an unknown address and opens its own "Page not found"
    dialog over it, which names neither the address nor the pages and hid this page's line
    (issue 43). Called by ``app.py`` before ``st.navigation``: when the browser asked for an
    unknown page name (and no page hash), the request is turned into one for the default page,
    so Streamlit opens no dialog, and the line (:func:`unknown_path_text`) is returned for
    :func:`say_unknown_path` to show above the Overview. It reads and resets the page request
    in Streamlit's page manager (``intended_page_name``, ``set_script_intent``; Streamlit
    1.67).
    """
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None:
        return None
    manager = ctx.pages_manager
    requested = manager.intended_page_name
    text = unknown_path_text(requested) if requested else None
    if text is not None and not manager.intended_page_script_hash:
        manager.set_script_intent("", "")
    return text


def say_unknown_path(text: str | None) -> None:
    """Show the line :func:`take_unknown_path` returned (nothing for ``None``), above the page."""
    if text is not None:
        st.warning(text, icon=":material/link_off:")


def ensure_navigation() -> None:
    """Run the page through ``app.py``'s navigation when Streamlit ran it on its own.

    Until a process has run ``st.navigation`` once, Streamlit treats ``pages/`` beside
    ``app.py`` as an old-style pages folder: a fresh server's first visitor who opens a page's
    URL (``/Sample_explorer?run=1&item=3``) gets that file run directly, with the folder's
    file names in the sidebar. Called first by every page: it turns that mode off and, on a
    session's first run, reruns, so ``app.py`` runs and shows the same page (its URL and query
    kept) under the navigation. Later runs never rerun (that would drop a button's click):
    ``streamlit.testing`` turns the mode back on before every run of ``app.py``, and its pages
    then run on their own, as they do outside ``app.py``.
    """
    from streamlit.runtime.pages_manager import PagesManager

    first = "_navigation_seen" not in st.session_state
    st.session_state["_navigation_seen"] = True
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        if first:
            st.rerun()


def case_query(run_id: int, item_id: int) -> dict[str, str]:
    """The query parameters that name one case (one answer of one run).

    Examples
    --------
    >>> case_query(2, 17)
    {'run': '2', 'item': '17'}
    """
    return {"run": str(int(run_id)), "item": str(int(item_id))}


def case_url(key: str, run_id: int, item_id: int) -> str:
    """The address of one case on page ``key``, relative to the server's root.

    Examples
    --------
    >>> case_url("explorer", 2, 17)
    '/Sample_explorer?run=2&item=17'
    >>> case_url("annotate", 1, 3)
    '/Annotate?run=1&item=3'
    """
    return f"/{page(key).url_path}?{urlencode(case_query(run_id, item_id))}"


def case_link(
    key: str,
    label: str,
    run_id: int,
    item_id: int,
    *,
    icon: str | None = ":material/open_in_new:",
    help: str | None = None,
) -> None:
    """A link to one case on page ``key``.

    Under ``st.navigation`` it is an ``st.page_link`` (the session, alpha included, moves with
    the user); where the page runs on its own (``streamlit run pages/...``, ``streamlit
    .testing``) it is a Markdown link to :func:`case_url`. ``label`` is Markdown (escape any
    name in it with :func:`dashboard.escape.md`).
    """
    spec = page(key)
    try:
        st.page_link(
            str(spec.path),
            label=label,
            icon=icon,
            query_params=case_query(run_id, item_id),
            help=help,
        )
    except StreamlitPageNotFoundError:  # not under st.navigation: no page to link in-app
        st.markdown(f"[{label}]({case_url(key, run_id, item_id)})", help=help)


def page_url(key: str, params: dict[str, str]) -> str:
    """The address of page ``key`` with query ``params``, relative to the server's root.

    Examples
    --------
    >>> page_url("run", {"run": "3", "alpha": "0.9"})
    '/Run?run=3&alpha=0.9'
    """
    query = f"?{urlencode(params)}" if params else ""
    return f"/{page(key).url_path}{query}"


def params_link(
    key: str,
    label: str,
    params: dict[str, str],
    *,
    icon: str | None = ":material/open_in_new:",
    help: str | None = None,
) -> None:
    """A link to page ``key`` with query ``params``, as :func:`case_link` draws one.

    In-app (the session moves with the user) under ``st.navigation``, else a Markdown link
    to :func:`page_url`. ``label`` is Markdown.
    """
    spec = page(key)
    try:
        st.page_link(str(spec.path), label=label, icon=icon, query_params=params, help=help)
    except StreamlitPageNotFoundError:  # not under st.navigation: no page to link in-app
        st.markdown(f"[{label}]({page_url(key, params)})", help=help)
