"""Issue 31 in a real browser: words that say what they mean, run labels, renames, addresses.

The demo database (two ``SmolLM2-135M-Instruct`` runs, T=0 and T=0.7) served by ``streamlit run
app.py`` and driven by headless Chromium: ``/Overview`` resolves (the other addresses are
test_dashboard_browser's page tour),
the two runs read apart on every picker and table without being cut at 1440x900 or 1280x720,
a run renamed on its page shows under its new name (as text) everywhere while its URL keeps
its id, and an answer whose KG is empty says which KG. First screens go to
``$S3KG_TEST_ARTEFACTS/dashboard/words_<view>_<w>x<h>.png``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dashboard_helpers import (
    CHROMIUM,
    EXCEPTION,
    REPO,
    Server,
    new_context,
    screenshot,
    streamlit_server,
    wait_idle,
)

from dashboard.navigation import OVERVIEW_ALIAS
from s3kg_core.store.store import Store

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

RENDER_MS = 180_000
SIZES = ((1440, 900), (1280, 720))
HOSTILE_NAME = "<b>bold</b> **stars** [x](javascript:alert(1))"


def artefacts() -> Path:
    root = Path(os.environ.get("S3KG_TEST_ARTEFACTS", REPO / "test-artefacts"))
    path = root / "dashboard"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def words_db(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the demo database (a test renames a run)."""
    return Path(shutil.copy(demo_db, tmp_path_factory.mktemp("words_browser") / "s3kg.duckdb"))


@pytest.fixture(scope="module")
def words_server(words_db: Path) -> Iterator[Server]:
    """The dashboard on :func:`words_db`; its log is printed when the module ends."""
    log = words_db.with_suffix(".log")
    with streamlit_server(words_db, log) as srv:
        yield srv
    print(srv.log_tail())


@pytest.fixture(scope="module")
def words_browser() -> Iterator[Any]:
    """One headless Chromium for the module (each test gets its own session: :func:`page`)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        yield browser
        browser.close()


@pytest.fixture
def page(words_browser: Any, words_server: Server) -> Iterator[Any]:
    """A fresh browser session (no cookies, no cache) at 1440x900; no dialog may open."""
    context = new_context(words_browser, (1440, 900))
    dialogs: list[str] = []
    tab = context.new_page()
    tab.set_default_timeout(60_000)
    tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    yield tab
    context.close()
    assert dialogs == [], dialogs


def _open(page: Any, server: Server, path: str) -> None:
    page.goto(f"{server.url}/{path}", timeout=RENDER_MS)
    page.wait_for_timeout(800)
    wait_idle(page, timeout_ms=RENDER_MS)
    page.locator('[data-testid="stMainBlockContainer"] h1').first.wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)


def _clean(page: Any, where: str) -> None:
    assert "Page not found" not in page.locator("body").inner_text(), where
    exceptions = page.locator(EXCEPTION)
    assert exceptions.count() == 0, f"{where}: {exceptions.first.inner_text()}"


def _shown_whole(page: Any, label: str) -> tuple[str, bool]:
    """The select box ``label``'s shown choice, and whether all of it fits in the box."""
    box = page.get_by_role("combobox", name=label, exact=True)
    fits = box.evaluate(
        "e => e.scrollWidth <= e.clientWidth + 1 && e.getBoundingClientRect().right"
        " <= window.innerWidth"
    )
    return str(box.input_value()), bool(fits)


def _cell(page: Any, text: str) -> Any:
    """The leaderboard's run cell that reads ``text`` exactly (the live table's, set as text:
    dashboard/live_alpha.py)."""
    table = page.locator('[data-kind="table"]').first
    exact = re.compile(rf"^\s*{re.escape(text)}\s*$")
    return table.locator('td[data-key="run"]').filter(has_text=exact).first


def _screens(page: Any, name: str) -> None:
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        page.screenshot(path=str(artefacts() / f"words_{name}_{width}x{height}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})


def test_the_overview_address_resolves_with_its_query(page: Any, words_server: Server) -> None:
    """Regression (issue 31): ``/Overview`` answered "Page not found" (the default page lives
    at ``/``); it now opens the overview there with its query kept. Every other page's address
    is opened by test_dashboard_browser's page tour (which checks that it opens them all)."""
    _open(page, words_server, f"{OVERVIEW_ALIAS}?alpha=0.9")
    assert page.url.endswith("/?alpha=0.9"), page.url
    page.get_by_role("heading", name="S3KG Workbench", exact=True).wait_for()
    _clean(page, "/Overview")


def test_an_unknown_address_says_so_and_lists_the_pages(page: Any, words_server: Server) -> None:
    """Regression (issue 43): ``/Failure_analysis_(TAU)`` (the page's title, not its address)
    silently showed the Overview; the Overview now opens under a line naming the address, and
    Streamlit's own "Page not found" dialog (which named nothing) no longer covers it."""
    _open(page, words_server, "Failure_analysis_(TAU)")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="No page at")
    alert.first.wait_for(timeout=RENDER_MS)
    text = alert.first.inner_text()
    assert "No page at /Failure_analysis_(TAU); the pages are:" in text, text
    assert "Failure analysis (TAU) (/Failure_analysis)" in text and "Run details (/Run)" in text
    assert page.locator(EXCEPTION).count() == 0
    # no Streamlit "Page not found" dialog over the line (it named nothing and hid the line)
    page.wait_for_timeout(1_000)
    assert page.get_by_text("Page not found").count() == 0
    assert page.locator('[role="dialog"]').count() == 0
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(400)
        assert alert.first.is_visible()
        page.screenshot(path=str(artefacts() / f"words_unknown_address_{width}x{height}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})
    _open(page, words_server, "Failure_analysis")  # a real address: no such line
    assert page.get_by_text("No page at").count() == 0


def test_the_two_demo_runs_read_apart_and_whole_on_every_picker(
    page: Any, words_server: Server
) -> None:
    """Regression (issue 31): both demo runs read "SmolLM2-135M-Instruct", and the explorer's
    run picker cut the temperature at 1280 px."""
    _open(page, words_server, "Run_comparison?a=1&b=2&alpha=0.5")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        a, a_fits = _shown_whole(page, "Run A (the baseline)")
        b, b_fits = _shown_whole(page, "Run B (compared with A)")
        assert {a, b} == {"SmolLM2-135M-Instruct · T=0", "SmolLM2-135M-Instruct · T=0.7"}
        assert a_fits and b_fits, (width, a, b)
    _screens(page, "run_comparison")
    _open(page, words_server, "Sample_explorer?run=2")
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        shown, fits = _shown_whole(page, "Run")
        assert shown == "SmolLM2-135M-Instruct · T=0.7" and fits, (width, shown)
    _screens(page, "explorer")
    _open(page, words_server, "")
    _cell(page, "SmolLM2-135M-Instruct · T=0.7").wait_for(state="attached")
    _cell(page, "SmolLM2-135M-Instruct · T=0").wait_for(state="attached")
    _screens(page, "overview")
    _clean(page, "overview")


def test_a_run_renamed_on_its_page_is_called_so_everywhere(
    page: Any, words_server: Server, words_db: Path
) -> None:
    """Issue 31: the display name is edited on the Run page, stored, shown as text (never
    markup) on every picker and table, and the URL keeps the run's id."""
    _open(page, words_server, "Run?run=2")
    page.get_by_role("button", name="Rename").click()
    field = page.get_by_role("textbox", name="Display name")
    field.fill(HOSTILE_NAME)
    _screens(page, "run_rename")
    page.get_by_role("button", name="Save name").click()
    page.wait_for_timeout(800)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert "run=2" in page.url, page.url
    shown, fits = _shown_whole(page, "Run")
    assert shown == HOSTILE_NAME and fits, shown
    with Store(words_db, read_only=True).connect() as con:
        stored = con.execute("SELECT name FROM runs WHERE run_id = 2").fetchone()
    assert stored == (HOSTILE_NAME,)
    _screens(page, "run_renamed")
    _clean(page, "run page")
    _open(page, words_server, "Run_comparison?a=1&b=2")
    b, _ = _shown_whole(page, "Run B (compared with A)")
    assert b == HOSTILE_NAME
    a, _ = _shown_whole(page, "Run A (the baseline)")
    assert a == "SmolLM2-135M-Instruct"  # no longer shares its name: no settings needed
    _open(page, words_server, "")
    _cell(page, HOSTILE_NAME).wait_for(state="attached")
    assert page.locator('[data-testid="stMain"] b', has_text="bold").count() == 0
    _clean(page, "overview after the rename")
    page.goto(f"{words_server.url}/Run?run=2", timeout=RENDER_MS)  # reset for other tests
    wait_idle(page, timeout_ms=RENDER_MS)
    page.get_by_role("button", name="Rename").click()
    page.get_by_role("textbox", name="Display name").fill("SmolLM2-135M-Instruct")
    page.get_by_role("button", name="Save name").click()
    wait_idle(page, timeout_ms=RENDER_MS)


def test_an_empty_answer_kg_is_named_as_the_answer_s(
    page: Any, words_server: Server, words_db: Path
) -> None:
    """Regression (issue 31): status ``empty_kg_1`` read as "the gold KG is empty" where it
    meant the answer's; the stored status and the page now say ``answer_kg_empty``."""
    with Store(words_db, read_only=True).connect() as con:
        row = con.execute(
            "SELECT run_id, item_id, gold_status FROM scores WHERE gold_status <> 'ok' LIMIT 1"
        ).fetchone()
        old = con.execute(
            "SELECT count(*) FROM scores WHERE gold_status LIKE '%kg_1' OR ctx_status LIKE "
            "'%kg_2' OR gold_status = 'empty_kgs'"
        ).fetchone()
    assert row is not None and row[2] == "answer_kg_empty", row
    assert old == (0,)
    _open(page, words_server, f"Sample_explorer?run={row[0]}&item={row[1]}")
    # the explorer's scores are a live block (issue 60): a figure's reason is its second line
    metric = page.locator('[data-testid="s3kgLiveMetric"]').filter(has_text="GoldSim").first
    assert "answer KG empty" in metric.inner_text()
    _screens(page, "explorer_empty_answer_kg")
    _clean(page, "explorer on an empty answer KG")


def test_one_question_in_both_runs_marks_the_words_that_differ(
    page: Any, words_server: Server
) -> None:
    """Issue 31: the comparison's two answers with their differing words marked, and a legend."""
    _open(page, words_server, "Run_comparison?a=1&b=2")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("words only A has").first.wait_for()
    only_a, only_b = main.locator("del.s3kg-wd-a"), main.locator("ins.s3kg-wd-b")
    assert only_a.count() + only_b.count() > 0
    colours = only_b.first.evaluate(
        "e => [getComputedStyle(e).backgroundColor, getComputedStyle(e).color]"
    )
    # dark text on a light mark: a contrast over 7:1 (the page's own text colour is as dark)
    assert colours[0] == "rgb(215, 232, 246)", colours
    assert all(int(v) < 80 for v in re.findall(r"\d+", colours[1])), colours
    page.get_by_text("The two answers").first.scroll_into_view_if_needed()
    _screens(page, "word_diff")
    _clean(page, "run comparison")


def test_search_filters_by_tau_category_and_score_range_from_the_url(
    page: Any, words_server: Server
) -> None:
    """Issue 31: TAU category and CUS range filters, read from and kept in the URL."""
    _open(page, words_server, "Search?range=0-0.3&alpha=0.5")
    text = page.locator('[data-testid="stMain"]').inner_text()
    # the demo (ot, scoring version 4): 3 answers with CUS <= 0.3 (2 with version 3)
    assert "3 answers match" in text, text[:400]
    assert "range=0-0.3" in page.url
    _open(page, words_server, "Search?tau=missing")
    assert "tau=missing" in page.url
    shown = page.get_by_role("combobox", name="TAU category").input_value()
    assert shown == "missing", shown
    text = page.locator('[data-testid="stMain"]').inner_text()
    assert "4 answers match" in text, text[:400]
    _screens(page, "search")
    _clean(page, "search")


_CUT = """() => [...document.querySelectorAll(
        '[data-testid="stDataFrame"], [data-testid="stHtml"]')].filter(e => e.offsetParent)
    .flatMap(e => {
        const s = e.querySelector('.dvn-scroller') || e;
        const box = e.getBoundingClientRect();
        return (s.scrollWidth > s.clientWidth + 1 || box.right > window.innerWidth + 0.5)
            ? [e.dataset.testid + ': ' + s.scrollWidth + ' in ' + s.clientWidth] : [];
    })"""


def test_search_marks_the_words_in_the_answers_and_says_where_they_matched(
    page: Any, words_server: Server
) -> None:
    """Regression (issue 43): Search matched questions and contexts too, marked nothing and
    never said which text matched. Answers only by default, the words marked in a snippet,
    nothing cut at 1280x720 (``words_search_marks_<w>x<h>.png``, the whole page)."""
    _open(page, words_server, "Search?q=penicillin")
    main = page.locator('[data-testid="stMain"]')
    assert page.get_by_role("combobox", name="Words in").input_value() == "answers only"
    assert "(words in the answer)" in main.inner_text()
    marks = main.locator("mark")
    marks.first.wait_for(timeout=RENDER_MS)
    assert {m.lower() for m in marks.all_inner_texts()} == {"penicillin"}
    colour = marks.first.evaluate("m => getComputedStyle(m).backgroundColor")
    assert colour == "rgb(255, 224, 138)", colour
    assert set(main.locator("td i").all_inner_texts()) == {"answer"}
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        assert page.evaluate(_CUT) == [], (width, page.evaluate(_CUT))
        screenshot(page, artefacts() / f"words_search_marks_{width}x{height}.png")
    page.set_viewport_size({"width": 1440, "height": 900})
    _open(page, words_server, "Search?q=penicillin&in=all")
    main.locator("mark").first.wait_for(timeout=RENDER_MS)
    fields = set(main.locator("td i").all_inner_texts())
    assert "answer" in fields and fields - {"answer"}, fields
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        assert page.evaluate(_CUT) == [], (width, page.evaluate(_CUT))
        assert _shown_whole(page, "Words in") == ("answers, questions, contexts", True), width
        screenshot(page, artefacts() / f"words_search_all_{width}x{height}.png")
    page.set_viewport_size({"width": 1440, "height": 900})
    _clean(page, "search")
