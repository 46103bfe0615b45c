"""Issue 58.7 in a real browser: Annotate's queue across TAU's categories, and each precision.

The demo database with a task for two annotators, served by ``streamlit run app.py`` and driven
by headless Chromium. The queue opens on an answer with an aligned pair (the issue's annotators
judged ten extra or missing pairs first, so TAU's alignment precision stayed "n/a"); the line of
each category's precision so far, with its interval, shows under the decision panel (in the
first screen at 1440x900; at 1280x720 the panel fills it) and changes with each key press.
First screens go to ``$S3KG_TEST_ARTEFACTS/dashboard/queue_<view>_<w>x<h>.png``.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import chromium, focused_pair, press_for_next_pair
from dashboard_helpers import CHROMIUM, EXCEPTION, Server, streamlit_server, wait_idle
from test_dashboard_browser import artefacts

from s3kg_core.annotation.quality import category_precision
from s3kg_core.annotation.tasks import QueueItem, create_task, queue
from s3kg_core.store.store import Store

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

RENDER_MS = 180_000
SIZES = ((1440, 900), (1280, 720))
PRECISION = re.compile(r"^TAU's precision so far \(task \d+;")


@pytest.fixture(scope="module")
def queue_db(demo_db: Path, minilm: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo database with task 1: eight answers of run 1 for ivy and jon."""
    db = Path(shutil.copy(demo_db, tmp_path_factory.mktemp("queue_browser") / "s3kg.duckdb"))
    create_task(Store(db), ["ivy", "jon"], 2, run_ids=[1], sample=8, seed=2, encoder=minilm)
    return db


@pytest.fixture(scope="module")
def queue_server(queue_db: Path) -> Iterator[Server]:
    with streamlit_server(queue_db, queue_db.with_suffix(".log")) as srv:
        yield srv
    print(srv.log_tail())


@pytest.fixture
def page(queue_server: Server) -> Iterator[Any]:
    """A fresh session at 1440x900 in headless Chromium; no dialog may open."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    dialogs: list[str] = []
    with chromium((1440, 900)) as tab:
        tab.set_default_timeout(60_000)
        tab.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        yield tab
    assert dialogs == [], dialogs


def _open_as(page: Any, server: Server, name: str, query: str = "") -> None:
    page.goto(f"{server.url}/Annotate?annotator={name}{query}", timeout=RENDER_MS)
    page.get_by_role("button", name=f"I am {name}").click(timeout=RENDER_MS)
    from playwright.sync_api import expect

    expect(page.get_by_role("textbox", name="Your name")).to_have_value(name, timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)


def _in_first_screen(locator: Any, size: tuple[int, int]) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= size[1]


def _fits(locator: Any) -> bool:
    """Drawn whole: no text cut by its own width, nothing past the window's right edge."""
    return bool(
        locator.evaluate(
            "e => e.scrollWidth <= e.clientWidth + 1 && e.getBoundingClientRect().right"
            " <= window.innerWidth"
        )
    )


def _precision(page: Any) -> Any:
    return page.locator('[data-testid="stCaptionContainer"]').filter(has_text=PRECISION).first


def _screens(page: Any, name: str, main: tuple[Any, ...], at_1440: tuple[Any, ...] = ()) -> None:
    """First screens at both sizes: ``main`` drawn whole in both, ``at_1440`` in 1440x900's
    (at 1280x720 the decision panel fills the first screen; the precision line follows it)."""
    for size in SIZES:
        page.set_viewport_size({"width": size[0], "height": size[1]})
        page.wait_for_timeout(600)
        for element in (*main, *at_1440) if size == SIZES[0] else main:
            assert _in_first_screen(element, size), (name, size, element.bounding_box())
        for element in (*main, *at_1440):
            assert _fits(element), (name, size, element)
        page.screenshot(path=str(artefacts() / f"queue_{name}_{size[0]}x{size[1]}.png"))
    page.set_viewport_size({"width": 1440, "height": 900})


def _line(estimates: dict[str, Any], name: str) -> str:
    e = estimates[name]
    return f"{name.replace('_', ' ')} {e.value:.3f} ({e.low:.3f} to {e.high:.3f}, n = {e.n})"


def test_the_queue_opens_on_an_aligned_pair_and_shows_each_category_s_precision(
    page: Any, queue_server: Server, queue_db: Path
) -> None:
    with Store(queue_db, read_only=True).connect() as con:
        mine: list[QueueItem] = queue(con, 1, "ivy")
    assert "aligned" in mine[0].categories
    _open_as(page, queue_server, "ivy")
    main = page.locator('[data-testid="stMain"]')
    picker = page.get_by_role("combobox", name=re.compile(r"^Your queue in task 1"))
    widget = page.locator('[data-testid="stSelectbox"]').filter(has=picker)
    shown = str(picker.input_value() or widget.inner_text().split("\n")[-1])
    assert shown.startswith(f"1. run {mine[0].run_id} · item {mine[0].item_id} · "), shown
    assert "aligned" in shown, shown
    line = _precision(page)
    line.wait_for(timeout=RENDER_MS)
    assert "aligned: none judged yet" in line.inner_text()
    confirm = main.get_by_role("button", name=re.compile(r"^Confirm"))
    _screens(page, "annotate_before", (confirm,), (line,))
    # judge the answer's pairs by key: Y on the aligned ones, N on the rest
    first = focused_pair(page)
    assert first is not None
    n = first[1]
    page.evaluate("document.activeElement && document.activeElement.blur()")
    for k in range(1, n):
        press_for_next_pair(page, "y" if k == 1 else "n", k + 1)
    page.keyboard.press("n")
    page.get_by_text(re.compile(rf"{n} decided by you\.$")).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    found = category_precision(Store(queue_db, read_only=True), task_id=1)
    aligned = found["aligned"]
    assert aligned.n >= 1 and aligned.value == 1 / aligned.n  # the first pair is aligned
    text = _precision(page).inner_text()
    for name, e in found.items():
        if e.n:
            assert _line(found, name) in text, (name, text)
    _screens(page, "annotate_after", (confirm,), (_precision(page),))
    # the Agreement view: the same figures in its table, every category named
    page.get_by_role("radio", name="Agreement", exact=True).click()
    wait_idle(page, timeout_ms=RENDER_MS)
    heading = main.get_by_text(re.compile(r"^TAU's precision by category"))
    heading.wait_for(timeout=RENDER_MS)
    _screens(page, "agreement", (), (heading,))
    assert page.locator(EXCEPTION).count() == 0
