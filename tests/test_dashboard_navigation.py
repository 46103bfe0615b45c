"""Tests of dashboard/navigation.py: the page list, case URLs and links between pages."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import dashboard.navigation as navigation_module
from dashboard.navigation import PAGES, case_query, case_url, page, page_url, unknown_path_text

REPO = Path(__file__).resolve().parents[1]


def test_the_module_doctests_pass():
    assert doctest.testmod(navigation_module).failed == 0


def test_every_page_file_is_in_the_navigation_once_overview_first():
    files = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "pages").glob("*.py"))
    assert sorted(spec.file for spec in PAGES) == files
    assert PAGES[0].key == "overview" and PAGES[0].url_path == ""
    assert len({spec.url_path for spec in PAGES}) == len(PAGES)
    assert len({spec.key for spec in PAGES}) == len(PAGES)


def test_the_addresses_stay_what_links_and_bookmarks_use():
    paths = {spec.key: spec.url_path for spec in PAGES}
    assert paths["explorer"] == "Sample_explorer"
    assert paths["failure_analysis"] == "Failure_analysis"
    assert paths["annotate"] == "Annotate"
    assert paths["compare"] == "Run_comparison"


def test_the_failure_analysis_old_key_still_names_its_page():
    """Issue 42: the page's key was ``"tau"``, the word of S3KG's threshold too; the old key
    still routes to the Failure analysis (and its address never changed)."""
    assert page("tau") == page("failure_analysis")
    assert page_url("tau", {"a": "1"}) == "/Failure_analysis?a=1"
    assert case_url("tau", 1, 2) == "/Failure_analysis?run=1&item=2"


def test_a_case_is_a_url():
    assert case_query(2, 17) == {"run": "2", "item": "17"}
    assert case_url("explorer", 2, 17) == "/Sample_explorer?run=2&item=17"
    assert case_url("annotate", 1, 3) == "/Annotate?run=1&item=3"
    with pytest.raises(KeyError, match="no dashboard page 'nope'"):
        page("nope")


def _nav_app() -> None:
    import streamlit as st

    from dashboard import navigation

    nav = st.navigation(
        [st.Page(lambda: navigation.case_link("explorer", "open", 2, 17), title="Here")]
        + [st.Page(s.path, title=s.title, url_path=s.url_path) for s in navigation.PAGES[2:3]]
    )
    nav.run()


def test_case_links_are_page_links_under_the_navigation():
    at = AppTest.from_function(_nav_app)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    (link,) = at.get("page_link")
    assert (link.proto.page, link.proto.query_string) == ("Sample_explorer", "run=2&item=17")


def _bare_app() -> None:
    from dashboard import navigation

    navigation.case_link("annotate", "annotate it", 1, 3)


def test_case_links_fall_back_to_markdown_links_outside_the_navigation():
    at = AppTest.from_function(_bare_app)
    at.run()
    assert not at.exception
    assert [m.value for m in at.markdown] == ["[annotate it](/Annotate?run=1&item=3)"]


def test_an_unknown_address_is_named_with_every_page_escaped():
    # issue 43: /Failure_analysis_(TAU) silently showed the Overview
    assert all(unknown_path_text(p) is None for p in ("", "/", "Overview", "Run", "Search"))
    text = unknown_path_text("Failure_analysis_(TAU)")
    assert text is not None and text.startswith(r"No page at /Failure\_analysis\_\(TAU\);")
    for spec in PAGES:
        assert spec.title.replace("(", r"\(").replace(")", r"\)") in text
    hostile = unknown_path_text("[x](javascript:alert(1))")
    assert hostile is not None and "[x](javascript" not in hostile


def test_the_dashboard_page_lists_every_real_address():
    # issue 43: the docs said every page's sidebar name is its address; "Run details" is at /Run
    text = (REPO / "docs" / "dashboard.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (.+?) \| `(/[^`]*)` \|$", text, re.MULTILINE)
    assert rows == [(spec.title, f"/{spec.url_path}") for spec in PAGES]
