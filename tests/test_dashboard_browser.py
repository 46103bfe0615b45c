"""The real dashboard in a real browser: ``streamlit run app.py`` driven by headless Chromium.

A small database is built and scored with the packaged MiniLM. Its numbers are known in
advance, so the tests check what the page shows against them: the overview's Mean CUS before
and after the sidebar's alpha slider moves, every page renders without a Streamlit exception,
the sample explorer draws its three graph iframes, and a label that is an XSS payload shows as
text while no JavaScript dialog ever opens, and no page requests anything from a host but the
dashboard's server. Screenshots of every page at 1440x900 go to
``$S3KG_TEST_ARTEFACTS/dashboard/`` (default ``test-artefacts/dashboard/`` in the repository):
``<page>.png`` the whole page, ``<page>_first_screen.png`` what the first screen shows.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser_helpers import focused_pair, new_context, press_for_next_pair, wait_for_pair
from dashboard_helpers import (
    CHROMIUM,
    EXCEPTION,
    REPO,
    Server,
    metric_value,
    screenshot,
    streamlit_server,
    wait_for_value,
    wait_idle,
)
from store_helpers import build_store, start_lock_holder

from dashboard import navigation
from dashboard.data.database import View
from dashboard.data.reads import load_runs
from dashboard.graphs import HIGHLIGHT_COLOUR, LinkedStyle, short_label
from s3kg_core.grapheval.checkers.base import Checker, Verdict
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.stages.score import score_store
from s3kg_core.stages.scored import latest_signature, reblend, scored_frame
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.records import KGRecord

pytest.importorskip("playwright.sync_api", reason="playwright is not installed")

XSS = "<img src=x onerror=alert(1)>"
# How Jinja's tojson writes XSS into the graph page's script: no "<" survives.
XSS_JSON = XSS.replace("<", "\\u003c").replace(">", "\\u003e")
PAGES = {
    "sample_explorer": ("Sample_explorer", "Sample explorer"),
    "failure_analysis": ("Failure_analysis", "Failure analysis (TAU)"),
    "run_comparison": ("Run_comparison", "Run comparison"),
    "run_details": ("Run", "Run details"),
    "search": ("Search", "Search answers"),
    "annotate": ("Annotate", "Annotate alignments"),
    "benchmarks": ("Benchmarks", "Benchmarks"),
    "hallucinations": ("Hallucinations", "Hallucinations"),
    "factuality": ("Factuality", "Factuality"),
}
RENDER_MS = 180_000  # the first render of a page may load MiniLM on a busy 2-core machine
VIEWPORT = (1440, 900)  # DESIGN.md: legible at first sight at 1440x900


def artefacts() -> Path:
    """``$S3KG_TEST_ARTEFACTS/dashboard`` (relative paths from the repository root)."""
    root = Path(os.environ.get("S3KG_TEST_ARTEFACTS", "test-artefacts"))
    folder = (root if root.is_absolute() else REPO / root) / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@dataclass(frozen=True)
class DashboardDB:
    """The test database and the numbers the dashboard must show for it."""

    path: Path
    xss_run: int
    xss_item: int
    mean_cus: dict[float, str]  # alpha -> Mean CUS as the overview formats it
    item_cus: dict[float, dict[int, str]]  # alpha -> item of the XSS run -> its CUS, formatted
    run_cus: dict[float, dict[int, float]]  # alpha -> run -> its mean CUS (the server's blend)


class _FlagReduces(Checker):
    """A scripted checker: a claim with "reduces" in it is unsupported (0.9), others 0.1."""

    name = "flag-reduces"

    def _check(self, jobs, raw):  # type: ignore[no-untyped-def]
        return [
            [Verdict(0.9 if "reduces" in c.text else 0.1) for c in claims] for claims, _ in jobs
        ]


@pytest.fixture(scope="module")
def dashboard_db(
    tmp_path_factory: pytest.TempPathFactory, minilm: Any, one_torch_thread: None
) -> DashboardDB:
    """Two models x four items, scored with MiniLM; item q0 of model-a carries the XSS label.

    That item's answer and gold KGs share the payload entity, its context KG shares nothing
    with the answer, so its CUS is the run's lowest at every alpha (the sample explorer opens
    on it).
    """
    path = tmp_path_factory.mktemp("dashboard") / "dashboard.duckdb"
    store = build_store(path, n_items=4, n_triples=3, seed=3)
    with store.transaction() as con:
        run = int(con.execute("SELECT run_id FROM runs WHERE model = 'model-a'").fetchall()[0][0])
        item = int(con.execute("SELECT item_id FROM items WHERE ext_id = 'q0'").fetchall()[0][0])
        store.put_kgs(
            con,
            [
                KGRecord(
                    run,
                    item,
                    "gold",
                    (Triple(XSS, "reduces", "fever"), Triple("aspirin", "treats", "headache")),
                ),
                KGRecord(
                    run,
                    item,
                    "answer",
                    (Triple(XSS, "reduces", "fever"), Triple("stomach", "irritates", "doctor")),
                ),
                KGRecord(run, item, "context", (Triple("patient", "is taken by", "inflammation"),)),
            ],
        )
    score_store(store, encoder=minilm, config=S3KGConfig(mode="hybrid"))  # margins built for it
    tau_store(store, fraction=0.25, encoder=minilm)
    # GraphEval rows for the Hallucinations page (the XSS triple is flagged, so its label is
    # drawn in the highlighted answer and the red KG) and the demo's factuality evaluations.
    from s3kg_core.demo import DEMO_DIR
    from s3kg_core.factuality.results import read_evaluations, save_evaluation
    from s3kg_core.grapheval.results import detect_store

    detect_store(store, run, _FlagReduces())
    for evaluation in read_evaluations(DEMO_DIR / "factuality_eval.json"):
        save_evaluation(store, evaluation)

    signature = latest_signature(store)
    assert signature is not None
    frame = scored_frame(store, signature)
    assert (frame["gold_s_wl"] - frame["gold_s_sbert"]).abs().max() > 0.1, "alpha must matter"
    means, item_cus, run_cus = {}, {}, {}
    for alpha in np.round(np.linspace(0, 1, 21), 2):
        blended = reblend(frame, float(alpha))
        run_cus[float(alpha)] = {
            int(r): float(c) for r, c in blended.groupby("run_id")["cus"].mean().items()
        }
        run_rows = blended[blended["run_id"] == run].sort_values("cus")
        assert int(run_rows["item_id"].iloc[0]) == item, f"XSS item not lowest at {alpha}"
        means[float(alpha)] = f"{blended['cus'].mean():.3f}"
        item_cus[float(alpha)] = {
            int(i): f"{c:.3f}" for i, c in zip(run_rows["item_id"], run_rows["cus"], strict=True)
        }
    by_model = reblend(frame, 0.5).groupby("model")["cus"].mean()
    assert abs(by_model["model-a"] - by_model["model-b"]) > 0.005, "models must differ"
    assert means[0.5] != means[0.6] != means[1.0], "Mean CUS must show the alpha move"
    return DashboardDB(path, run, item, means, item_cus, run_cus)


@pytest.fixture(scope="module")
def server(dashboard_db: DashboardDB, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``streamlit run app.py`` on the test database; the process group is killed afterwards."""
    log = tmp_path_factory.mktemp("streamlit") / "streamlit.log"
    with streamlit_server(dashboard_db.path, log) as srv:
        yield srv
    print(f"--- streamlit log ({log}) ---\n{srv.log_tail()}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless system Chromium (Playwright never downloads one here)."""
    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM} (set S3KG_CHROMIUM to another binary)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@dataclass
class Watched:
    """A page with every JS dialog, uncaught page error and request it raised."""

    page: Any
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@contextmanager
def watched_session(browser: Any, viewport: tuple[int, int] = VIEWPORT) -> Iterator[Watched]:
    """A fresh browser session (1440 x 900 unless ``viewport`` says otherwise) whose dialogs,
    page errors and requests are recorded (a dialog is dismissed)."""
    context = new_context(browser, viewport)
    page = context.new_page()
    page.set_default_timeout(60_000)
    w = Watched(page)
    context.on("request", lambda request: w.requests.append(request.url))

    def on_dialog(dialog: Any) -> None:
        w.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: w.errors.append(str(exc)))
    try:
        yield w
    finally:
        context.close()


@pytest.fixture
def watched(browser: Any, server: Server) -> Iterator[Watched]:
    """A fresh browser session; any ``alert``/``confirm``/``prompt`` is recorded and dismissed,
    and the URL of every request of every page and frame is recorded."""
    with watched_session(browser) as w:
        yield w


def open_page(w: Watched, server: Server, path: str, title: str) -> None:
    """Load ``/path`` and wait until its script has run to the end."""
    w.page.goto(f"{server.url}/{path}", timeout=RENDER_MS)
    w.page.get_by_role("heading", name=title, exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(w.page, timeout_ms=RENDER_MS)


def foreign_requests(w: Watched, server: Server) -> list[str]:
    """The requests that went anywhere but the dashboard's server (or stayed in the page)."""
    local = re.compile(rf"^(?:{re.escape(server.url)}/|about:|data:|blob:)")
    return sorted({url for url in w.requests if not local.match(url)})


def first_screen(page: Any, path: Path) -> Path:
    """A screenshot of what the first screen shows (the viewport, nothing scrolled)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    return path


def assert_clean(w: Watched, server: Server, where: str) -> None:
    """No Streamlit exception on the page, no traceback in the server log, no dialog, no
    request to another host."""
    exceptions = w.page.locator(EXCEPTION)
    if exceptions.count():
        raise AssertionError(f"{where}: Streamlit exception:\n{exceptions.first.inner_text()}")
    assert "Traceback" not in server.log_tail(100_000), f"{where}: {server.log_tail()}"
    assert w.dialogs == [], f"{where}: a JavaScript dialog opened: {w.dialogs}"
    assert w.errors == [], f"{where}: uncaught page errors: {w.errors}"
    assert foreign_requests(w, server) == [], f"{where}: requests to other hosts"


def test_overview_mean_cus_follows_alpha(
    watched: Watched, server: Server, dashboard_db: DashboardDB
) -> None:
    page = watched.page
    open_page(watched, server, "", "S3KG Workbench")
    page.get_by_text("Leaderboard", exact=True).wait_for()
    # the heading can arrive before the tables: wait for them (a CI run counted too early)
    page.locator('[data-kind="table"] table').first.wait_for(timeout=RENDER_MS)
    page.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=RENDER_MS)
    assert page.locator('[data-kind="table"] tbody tr').count() == 2  # the live leaderboard
    assert metric_value(page, "Answers scored") == "8"
    assert metric_value(page, "Mean CUS") == dashboard_db.mean_cus[0.5]
    screenshot(page, artefacts() / "overview.png")
    first_screen(page, artefacts() / "overview_first_screen.png")

    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    assert slider.input_value() == "0.5"
    slider.focus()
    page.keyboard.press("ArrowRight")  # one press: a step of 0.1 (issue 43.11: 0.05 before)
    shown = wait_for_value(page, lambda: metric_value(page, "Mean CUS"), dashboard_db.mean_cus[0.6])
    assert shown == dashboard_db.mean_cus[0.6], "Mean CUS did not follow alpha 0.5 -> 0.6"
    assert slider.input_value() == "0.6"
    wait_idle(page, timeout_ms=RENDER_MS)

    page.keyboard.press("End")
    shown = wait_for_value(page, lambda: metric_value(page, "Mean CUS"), dashboard_db.mean_cus[1.0])
    assert shown == dashboard_db.mean_cus[1.0], "Mean CUS did not follow alpha -> 1.0"
    wait_idle(page, timeout_ms=RENDER_MS)
    assert slider.input_value() == "1"
    caption = page.get_by_text(re.compile(r"Signature of every number on this page")).inner_text()
    assert caption.endswith("|alpha:1"), caption
    screenshot(page, artefacts() / "overview_alpha_1.png")
    assert_clean(watched, server, "overview")

    # The sidebar navigation keeps the session, and with it alpha.
    page.locator('[data-testid="stSidebarNav"] a[href$="/Sample_explorer"]').click()
    page.get_by_role("heading", name="Sample explorer", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    page.get_by_text(re.compile(r"^alpha 1 \(sidebar\) · Signature ")).wait_for()
    assert_clean(watched, server, "sample explorer after navigation")


def _live_means(page: Any) -> dict[int, float]:
    """The live leaderboard's mean of each run, as its cells hold it (full precision)."""
    rows = page.locator('[data-kind="table"] tbody tr')
    return {
        int(rows.nth(i).get_attribute("data-run")): float(
            rows.nth(i).locator('td[data-key="mean"]').get_attribute("data-value")
        )
        for i in range(rows.count())
    }


def _grab_alpha(page: Any) -> Any:
    """Press the mouse on the sidebar's alpha thumb (and keep it pressed); returns
    ``drag_to(alpha)``, which moves it along the track (0 to 1) without releasing it: Streamlit
    tells the server nothing until ``page.mouse.up()``."""
    thumb = page.locator('[data-testid="stSidebar"] [data-testid="stSliderThumbValue"]')
    track = thumb.locator("xpath=../..").bounding_box()  # the thumb's track: alpha 0 to 1
    start = thumb.locator("..").bounding_box()
    y = start["y"] + start["height"] / 2
    page.mouse.move(start["x"] + start["width"] / 2, y)
    page.mouse.down()

    def drag_to(alpha: float) -> None:
        page.mouse.move(track["x"] + alpha * track["width"], y, steps=4)

    return drag_to


def test_the_overview_follows_a_drag_of_alpha_before_the_server_hears_it(
    watched: Watched, server: Server, dashboard_db: DashboardDB
) -> None:
    """Issue 60: the leaderboard, its ranks and the Mean CUS follow the slider in the browser
    while it is dragged (Streamlit's slider tells the server nothing until it is released):
    at five alphas they are the server's blend (1e-12) and in its order, with the intervals
    marked as waiting; released, the server's rerun, the URL and the other pages agree."""
    from playwright.sync_api import expect

    page = watched.page
    open_page(watched, server, "", "S3KG Workbench")
    table = page.locator('[data-kind="table"]').first
    table.locator("tbody tr").first.wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    caption = page.get_by_text(re.compile(r"Signature of every number on this page"))
    assert caption.inner_text().endswith("|alpha:0.5")
    assert _live_means(page) == pytest.approx(dashboard_db.run_cus[0.5], rel=0, abs=1e-12)

    drag_to = _grab_alpha(page)
    for alpha in (0.8, 1.0, 0.2, 0.0, 0.9):
        drag_to(alpha)
        expect(table).to_have_attribute("data-alpha", f"{alpha:g}")
        # the server has not heard: its alpha, its caption and its intervals are still 0.5's
        assert table.get_attribute("data-at") == "0.5"
        assert caption.inner_text().endswith("|alpha:0.5")
        want = dashboard_db.run_cus[alpha]
        assert _live_means(page) == pytest.approx(want, rel=0, abs=1e-12), alpha
        order = [int(r) for r in table.locator("tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.run)")]  # fmt: skip
        assert order == sorted(want, key=lambda r: (-round(want[r], 12), r)), alpha
        assert metric_value(page, "Mean CUS") == dashboard_db.mean_cus[alpha]
        waiting = table.locator('td[data-key="interval"].waiting')
        assert alpha == 0.5 or waiting.count() == 2
        assert (
            page.get_by_role("status").filter(has_text=f"alpha {alpha:g} in your browser").count()
        )
        if alpha == 0.2:
            screenshot(page, artefacts() / "overview_dragging.png")
    page.mouse.up()  # released at 0.9: now the server hears it
    expect(table).to_have_attribute("data-at", "0.9", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert caption.inner_text().endswith("|alpha:0.9")
    assert _live_means(page) == pytest.approx(dashboard_db.run_cus[0.9], rel=0, abs=1e-12)
    assert table.locator("td.waiting").count() == 0  # the intervals came with the rerun
    assert "alpha=0.9" in page.url
    assert_clean(watched, server, "overview after a drag")
    page.locator('[data-testid="stSidebarNav"] a[href$="/Run"]').click()
    page.get_by_role("heading", name="Run details", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    assert slider.input_value() == "0.9"  # the stored alpha: the other pages read it

    # the Run page's figures follow a drag too (its live block), before the server hears it
    run = dashboard_db.xss_run
    open_page(watched, server, f"Run?run={run}&alpha=0.9", "Run details")
    figures = page.locator('[data-kind="metrics"]').first
    expect(figures).to_have_attribute("data-at", "0.9", timeout=RENDER_MS)
    assert metric_value(page, "Mean CUS") == f"{dashboard_db.run_cus[0.9][run]:.3f}"
    _grab_alpha(page)(0.3)
    expect(figures).to_have_attribute("data-alpha", "0.3")
    assert figures.get_attribute("data-at") == "0.9"  # the server has not heard
    assert metric_value(page, "Mean CUS") == f"{dashboard_db.run_cus[0.3][run]:.3f}"
    screenshot(page, artefacts() / "run_details_dragging.png")
    page.mouse.up()
    expect(figures).to_have_attribute("data-at", "0.3", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert metric_value(page, "Mean CUS") == f"{dashboard_db.run_cus[0.3][run]:.3f}"
    assert_clean(watched, server, "run details after a drag")

    # ... and so do the Run comparison's (the two runs answered the same four questions)
    other = next(r for r in dashboard_db.run_cus[0.3] if r != run)
    open_page(watched, server, f"Run_comparison?a={run}&b={other}&alpha=0.3", "Run comparison")
    figures = page.locator('[data-kind="metrics"]').first
    expect(figures).to_have_attribute("data-at", "0.3", timeout=RENDER_MS)
    _grab_alpha(page)(0.8)
    expect(figures).to_have_attribute("data-alpha", "0.8")
    assert figures.get_attribute("data-at") == "0.3"  # the server has not heard
    cus = dashboard_db.run_cus[0.8]
    assert metric_value(page, "Mean CUS · A") == f"{cus[run]:.3f}"
    assert metric_value(page, "Mean CUS · B") == f"{cus[other]:.3f}"
    delta = figures.locator(".delta").first
    assert delta.inner_text() == f"{cus[other] - cus[run]:+.3f}"
    pending = page.get_by_role("status").filter(has_text="alpha 0.8 in your browser")
    assert pending.count() == 1  # the check and the table below are still alpha 0.3's: said so
    screenshot(page, artefacts() / "run_comparison_dragging.png")
    page.mouse.up()
    expect(figures).to_have_attribute("data-at", "0.8", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert_clean(watched, server, "run comparison after a drag")


def test_the_page_tour_opens_every_address_but_the_overviews() -> None:
    """The tour below opens every page by its address (the Overview's ``/`` and ``/Overview``
    are opened by the Overview tests and test_dashboard_browser_words)."""
    assert sorted(path for path, _ in PAGES.values()) == sorted(
        spec.url_path for spec in navigation.PAGES if spec.url_path
    )


@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_without_exception(watched: Watched, server: Server, name: str) -> None:
    path, title = PAGES[name]
    open_page(watched, server, path, title)
    assert "Page not found" not in watched.page.locator("body").inner_text(), name
    screenshot(watched.page, artefacts() / f"{name}.png")
    first_screen(watched.page, artefacts() / f"{name}_first_screen.png")
    assert_clean(watched, server, name)
    main = watched.page.locator('[data-testid="stMain"]')
    sidebar = watched.page.locator('[data-testid="stSidebar"]')
    alpha = sidebar.get_by_role("slider", name="alpha")
    if name in ("benchmarks", "hallucinations", "factuality"):  # alpha: no effect
        assert alpha.count() == 0
    else:
        assert alpha.count() == 1
    # charts and component iframes mount after the script ends: wait for them, then count
    if name == "failure_analysis":
        main.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=RENDER_MS)
        assert main.locator('[data-testid="stPlotlyChart"]').count() >= 1
        # the case's KGs: the explorer's linked document, the residual triples as red edges
        frame = graph_frame(watched.page)
        assert not legibility_problems(frame.evaluate("() => window.s3kg.metrics()"))
        assert main.locator('[data-testid="stIFrame"]').count() == 1
        assert red_edges(frame)["answer"], "the extra answer triple is marked"
        # the case links to the explorer and to Annotate, both in-app page links
        for target in ("Sample_explorer", "Annotate"):
            link = main.locator(f'a[href*="{target}?run="]')
            assert link.count() == 1, target
            assert re.search(r"\?run=\d+&item=\d+$", link.get_attribute("href") or "")
    elif name == "run_comparison":
        main.locator('[data-testid="stPlotlyChart"]').first.wait_for(timeout=RENDER_MS)
        assert main.locator('[data-testid="stPlotlyChart"]').count() == 1
        assert main.locator('a[href*="Sample_explorer?run="]').count() == 2
    elif name == "annotate":
        main.get_by_text(re.compile(r"^Keys: Y confirm")).wait_for()
    elif name == "hallucinations":  # the flagged spans of the answer, and the answer KG
        main.locator('[data-testid="stIFrame"]').first.wait_for(timeout=RENDER_MS)
        assert main.locator('[data-testid="stIFrame"]').count() >= 1
        assert main.locator("img[onerror], [onerror]").count() == 0
        # every triple in a wrapped table, its reason column whole at both sizes (issue 43.7:
        # a dataframe ran the reason off the right edge at 1280 px)
        table = main.locator('[data-testid="stTable"]').filter(has_text="reason").first
        table.wait_for(timeout=RENDER_MS)
        for width, height in ((1280, 720), (1440, 900)):
            watched.page.set_viewport_size({"width": width, "height": height})
            watched.page.wait_for_timeout(400)
            table.scroll_into_view_if_needed()
            assert _unclipped(table), (width, height)
            first_screen(watched.page, artefacts() / f"hallucinations_triples_{width}x{height}.png")
    elif name == "factuality":  # the demo evaluation's charts
        main.locator('[data-testid="stPlotlyChart"]').nth(2).wait_for(timeout=RENDER_MS)
        assert main.locator('[data-testid="stPlotlyChart"]').count() >= 3


def graph_frame(page: Any) -> Any:
    """The sample explorer's linked graphs document, once every picture is placed."""
    deadline = RENDER_MS
    page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first.wait_for(timeout=deadline)
    frames = [f for f in page.frames if f.url == "about:srcdoc"]
    assert len(frames) == 1, "one document holds the three graphs"
    frames[0].wait_for_function("() => window.s3kg && window.s3kg.ready === true", timeout=deadline)
    return frames[0]


def red_edges(frame: Any) -> dict[str, list[str]]:
    """Per picture, the labels of the edges drawn in the marked colour."""
    return frame.evaluate(
        "() => Object.fromEntries(Object.entries(window.s3kgNetworks).map(([k, n]) => [k, "
        "Object.values(n.body.edges).filter(e => e.options.color.color === "
        f"{json.dumps(HIGHLIGHT_COLOUR)}).map(e => e.options.label)]))"
    )


def question_picker(page: Any) -> Any:
    return page.get_by_role("combobox", name=re.compile(r"^Question \(\d+, lowest CUS first\)"))


def test_sample_explorer_shows_graphs_and_escapes_labels(
    watched: Watched, server: Server, dashboard_db: DashboardDB
) -> None:
    page = watched.page
    open_page(watched, server, "Sample_explorer", "Sample explorer")
    assert (
        question_picker(page)
        .input_value()
        .startswith(f"CUS {dashboard_db.item_cus[0.5][dashboard_db.xss_item]} · q0 · ")
    )
    iframes = page.locator('[data-testid="stMain"] [data-testid="stIFrame"]')
    # The frontend mounts component iframes after the script has finished: on a loaded machine
    # (a fresh-clone CI run beside other jobs) it was not there yet when counted at once.
    iframes.first.wait_for(state="attached", timeout=RENDER_MS)
    assert iframes.count() == 1, "gold, answer and context graphs in one document"
    source = iframes.first.get_attribute("srcdoc") or ""
    assert XSS_JSON in source, "labels reach the page as JSON-escaped text"
    assert "<img" not in source, "the payload reached the graph page as markup"

    frame = graph_frame(page)
    labels = frame.evaluate(
        "() => Object.fromEntries(Object.entries(window.s3kgNetworks).map("
        "([k, n]) => [k, Object.values(n.body.nodes).map(x => x.options.label)]))"
    )
    assert [k for k, v in labels.items() if XSS in v] == ["gold", "answer"], labels
    assert frame.locator("canvas").count() == 3, "vis-network drew three pictures"
    assert frame.locator("img[onerror], [onerror]").count() == 0
    # the aligned payload entity carries the same badge in the answer and the gold picture
    badges = frame.evaluate(
        "() => S3KG_DATA.panels.map(p => [p.key, p.nodes.filter(n => n.label === "
        f"{json.dumps(XSS)}).map(n => n.badges)])"
    )
    assert badges[0][1] == badges[1][1] != [[]], badges
    # the triple table shows the payload as text
    assert XSS in frame.locator("#s3kg-table").inner_text()
    assert page.locator("[onerror]").count() == 0
    page.wait_for_timeout(1000)  # a fired onerror would open its alert by now
    screenshot(page, artefacts() / "sample_explorer_xss.png")
    assert_clean(watched, server, "sample explorer (XSS item)")


def test_search_counts_its_score_range_while_alpha_is_dragged(
    watched: Watched, server: Server
) -> None:
    """Issue 60: with a CUS range set, the Search page says how many answers the range keeps
    at the slider's stop while it is dragged (the rows below are the server's and wait for the
    release, as the line says); released, the server's search finds that many."""
    from playwright.sync_api import expect

    page = watched.page
    open_page(watched, server, "Search?range=0.3-0.6", "Search answers")
    line = page.locator('[data-kind="note"]').first
    expect(line).to_have_attribute("data-at", "0.5", timeout=RENDER_MS)
    drag_to = _grab_alpha(page)
    shown = {}
    for alpha in (0.9, 0.1):
        drag_to(alpha)
        expect(line).to_have_attribute("data-alpha", f"{alpha:g}")
        assert line.get_attribute("data-at") == "0.5"  # the server has not heard
        text = line.inner_text()
        assert text.startswith(f"CUS between 0.3 and 0.6 at alpha {alpha:g}: ")
        assert text.endswith("the rows below follow when you release the slider")
        shown[alpha] = text.split(": ", 1)[1].split(" · ")[0]  # "N answers"
        for width, height in ((1440, 900), (1280, 720)):
            page.set_viewport_size({"width": width, "height": height})
            first_screen(page, artefacts() / f"search_dragging_{width}x{height}.png")
    page.mouse.up()
    expect(line).to_have_attribute("data-at", "0.1", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    head = page.get_by_text(re.compile(r" match(es)? · page ")).first.inner_text()
    assert head.startswith(shown[0.1].split()[0] + " answer"), (head, shown)
    assert "alpha=0.1" in page.url
    assert_clean(watched, server, "search after a drag")


def test_failure_analysis_counts_follow_a_drag_of_alpha(watched: Watched, server: Server) -> None:
    """Issue 60: the Failure analysis's counts per run follow the slider in the browser (the
    stops TAU has explained; the page explains the others in the background); the chart and
    the cases follow on release, as the line above the counts says while it moves."""
    from playwright.sync_api import expect

    page = watched.page
    open_page(watched, server, "Failure_analysis", "Failure analysis (TAU)")
    counts = page.locator('[data-kind="table"]').first

    def drag_through(alphas: tuple[float, ...]) -> bool:
        """Drag (unreleased) to each alpha; False at the first stop not explained yet."""
        drag_to = _grab_alpha(page)
        for alpha in alphas:
            drag_to(alpha)
            expect(counts).to_have_attribute("data-alpha", f"{alpha:g}")
            assert counts.get_attribute("data-at") == "0.5"  # the server has not heard
            if counts.locator("td.waiting").count():
                return False
        return True

    # the server explains the other stops in the background after drawing: until its job is
    # done a stop reads "…"; the page drawn again then holds them (bounded, not timed)
    for _ in range(30):
        expect(counts).to_have_attribute("data-at", "0.5", timeout=RENDER_MS)
        wait_idle(page, timeout_ms=RENDER_MS)
        if drag_through((0.0, 1.0)):
            break
        waiting = page.locator("td.waiting").first
        assert waiting.get_attribute("title"), "a waiting cell says why"
        page.mouse.up()
        wait_idle(page, timeout_ms=RENDER_MS)
        open_page(watched, server, "Failure_analysis?alpha=0.5", "Failure analysis (TAU)")
    else:
        raise AssertionError("the background job never explained every stop")
    line = page.get_by_role("status").filter(has_text="the chart and the cases follow")
    assert line.inner_text().startswith("Per run at alpha 1: the lowest 5 %")
    shown = counts.locator("tbody").inner_text()
    for width, height in ((1440, 900), (1280, 720)):
        page.set_viewport_size({"width": width, "height": height})
        first_screen(page, artefacts() / f"failure_analysis_dragging_{width}x{height}.png")
    page.mouse.up()
    expect(counts).to_have_attribute("data-at", "1", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert counts.locator("tbody").inner_text() == shown  # the server's numbers at 1: the same
    assert_clean(watched, server, "failure analysis after a drag")


def test_sample_explorer_keeps_the_question_when_alpha_moves(
    watched: Watched, server: Server, dashboard_db: DashboardDB
) -> None:
    page = watched.page
    open_page(watched, server, "Sample_explorer", "Sample explorer")
    order = list(dashboard_db.item_cus[0.5])  # lowest CUS first, as the picker lists them
    other = order[2]
    question = question_picker(page)
    question.click()
    # regression: the label held the CUS at the current alpha, so moving alpha changed the
    # label and Streamlit fell back to the first question; now the value is the item id
    options = page.get_by_role("option")
    texts = [options.nth(i).inner_text() for i in range(options.count())]
    assert [t.split(" ")[1] for t in texts] == [dashboard_db.item_cus[0.5][i] for i in order], texts
    options.nth(2).click()
    wait_idle(page, timeout_ms=RENDER_MS)
    picked = question.input_value()
    assert picked.startswith(f"CUS {dashboard_db.item_cus[0.5][other]} · "), (
        texts,
        picked,
        page.url,
    )
    assert f"item={other}" in page.url

    # issue 60: the scores follow a drag in the browser, before the server hears it; the
    # picker's CUS (the server's) follows on release, and the line under the scores says so
    from playwright.sync_api import expect

    scores = page.locator('[data-kind="metrics"]').first
    expect(scores).to_have_attribute("data-at", "0.5", timeout=RENDER_MS)
    drag_to = _grab_alpha(page)
    for alpha in (0.8, 0.2):
        drag_to(alpha)
        expect(scores).to_have_attribute("data-alpha", f"{alpha:g}")
        assert scores.get_attribute("data-at") == "0.5"  # the server has not heard
        assert metric_value(page, "CUS") == dashboard_db.item_cus[alpha][other]
        assert question.input_value() == picked  # the picker is the server's: alpha 0.5's
        waiting = page.get_by_role("status").filter(has_text="the question list's CUS")
        assert waiting.inner_text().startswith(f"alpha {alpha:g} (sidebar) · Signature ")
        if alpha == 0.2:
            screenshot(page, artefacts() / "sample_explorer_dragging.png")
    page.mouse.up()
    expect(scores).to_have_attribute("data-at", "0.2", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert question.input_value().startswith(f"CUS {dashboard_db.item_cus[0.2][other]} · ")

    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    slider.focus()
    page.keyboard.press("End")
    expect(scores).to_have_attribute("data-at", "1", timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert f"item={other}" in page.url, "the chosen question changed with alpha"
    after = question.input_value()
    assert after.split(" · ", 1)[1] == picked.split(" · ", 1)[1]  # same question ...
    assert after.startswith(f"CUS {dashboard_db.item_cus[1.0][other]} · ")  # ... its new CUS
    assert metric_value(page, "CUS") == dashboard_db.item_cus[1.0][other]
    assert_clean(watched, server, "sample explorer after alpha")


def test_a_failure_case_opens_in_the_explorer_with_the_session_kept(
    watched: Watched, server: Server
) -> None:
    page = watched.page
    open_page(watched, server, "Failure_analysis", "Failure analysis (TAU)")
    case = page.get_by_role("combobox", name="Case (lowest CUS first)")
    case.click()
    options = page.get_by_role("option")
    assert options.count() == 2  # 5 % of each of the two runs
    second = options.nth(1).inner_text()
    options.nth(1).click()
    wait_idle(page, timeout_ms=RENDER_MS)
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    slider.focus()
    page.keyboard.press("End")
    wait_for_value(page, slider.input_value, "1")
    wait_idle(page, timeout_ms=RENDER_MS)
    # the label carries the score, which moved with alpha; the case stays the chosen one
    shown = case.input_value() or page.locator('[data-testid="stSelectbox"]').first.inner_text()
    assert shown.split(" · ", 1)[1] == second.split(" · ", 1)[1], (shown, second)
    assert shown.split(" · ", 1)[0] != second.split(" · ", 1)[0], "the score did not move"
    link = page.locator('[data-testid="stMain"] a[href*="Sample_explorer?run="]')
    href = link.get_attribute("href") or ""
    run, item = re.search(r"\?run=(\d+)&item=(\d+)$", href).groups()  # type: ignore[union-attr]
    link.click()
    page.get_by_role("heading", name="Sample explorer", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    # the explorer adds the tau it shows to the URL
    assert re.search(rf"/Sample_explorer\?run={run}&item={item}&threshold=[0-9.]+$", page.url), (
        page.url
    )
    page.get_by_text(re.compile(r"^alpha 1 \(sidebar\) · ")).wait_for()  # the same session
    assert_clean(watched, server, "explorer from a failure case")


# -- the sample explorer on the demo database, at 1440 x 900 ----------------------------------

NODE_PX, EDGE_PX, EDGE_RULE_MAX = 12.0, 10.0, 25  # the legibility rules the explorer keeps


@pytest.fixture(scope="module")
def demo_copy(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the demo database (built as a first start builds it) for the server."""
    import shutil

    path = tmp_path_factory.mktemp("demo_server") / "s3kg.duckdb"
    shutil.copy(demo_db, path)
    return path


@pytest.fixture(scope="module")
def demo_server(demo_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``streamlit run app.py`` on the demo database."""
    log = tmp_path_factory.mktemp("streamlit_demo") / "streamlit.log"
    with streamlit_server(demo_copy, log) as srv:
        yield srv
    print(f"--- streamlit log ({log}) ---\n{srv.log_tail()}")


@pytest.fixture
def explorer(browser: Any, demo_server: Server) -> Iterator[Watched]:
    """A fresh 1440 x 900 session on the demo server; every request is recorded."""
    with watched_session(browser) as w:
        yield w


def first_questions(db: Path, n: int = 5) -> dict[int, list[int]]:
    """Per run, the first ``n`` questions of the explorer's picker (lowest CUS first)."""
    from s3kg_core.store.store import Store

    store = Store(db, read_only=True)
    signature = latest_signature(store)
    assert signature is not None
    frame = reblend(scored_frame(store, signature), 0.5).sort_values(["cus", "item_id"])
    return {
        int(run): [int(i) for i in rows["item_id"].head(n)]
        for run, rows in frame.groupby("run_id", sort=True)
    }


def open_case(w: Watched, server: Server, query: str) -> Any:
    """Open ``/Sample_explorer?<query>`` and return its graph document once it is placed."""
    w.page.goto(f"{server.url}/Sample_explorer?{query}", timeout=RENDER_MS)
    w.page.get_by_role("heading", name="Sample explorer", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(w.page, timeout_ms=RENDER_MS)
    return graph_frame(w.page)


def legibility_problems(metrics: dict[str, Any]) -> list[str]:
    """Every breach of the rules: node labels >= 12 px and inside the frame (graphs of up to
    40 nodes), edge labels >= 10 px (graphs of up to 25 edges), from vis-network's numbers."""
    problems = []
    for key, m in metrics.items():
        if len(m["nodes"]) > 40:
            continue
        for n in m["nodes"]:
            if n["px"] < NODE_PX:
                problems.append(f"{key}: {n['label']!r} drawn at {n['px']:.1f} px")
            inside = (
                n["left"] >= -0.5
                and n["top"] >= -0.5
                and n["right"] <= m["width"] + 0.5
                and n["bottom"] <= m["height"] + 0.5
            )
            if not inside:
                problems.append(
                    f"{key}: {n['label']!r} leaves the {m['width']}x{m['height']} frame"
                )
        if len(m["edges"]) <= EDGE_RULE_MAX:
            problems += [
                f"{key}: edge {e['id']} drawn at {e['px']:.1f} px"
                for e in m["edges"]
                if e["px"] < EDGE_PX
            ]
    return problems


def test_explorer_labels_are_legible_in_every_graph_of_the_first_questions(
    explorer: Watched, demo_server: Server, demo_copy: Path
) -> None:
    """Node labels >= 12 px inside their frame, edge labels >= 10 px (vis-network's own
    scale x font size, and each node's box through canvasToDOM), for the first five questions
    of each demo run at 1440 x 900; the figures go to explorer_label_sizes.json."""
    cases = first_questions(demo_copy)
    assert len(cases) == 2 and all(len(v) == 5 for v in cases.values())
    report, problems = [], []
    for run, items in cases.items():
        for i, item in enumerate(items):
            frame = open_case(explorer, demo_server, f"run={run}&item={item}")
            metrics = frame.evaluate("() => window.s3kg.metrics()")
            problems += [f"run {run} item {item}: {p}" for p in legibility_problems(metrics)]
            report.append(
                {
                    "run": run,
                    "item": item,
                    **{
                        key: {
                            "nodes": len(m["nodes"]),
                            "edges": len(m["edges"]),
                            "frame": [m["width"], m["height"]],
                            "scale": round(m["scale"], 3),
                            "layout": m["layout"],
                            "overlap_px2": m["overlap"],
                            "min_node_px": round(min((n["px"] for n in m["nodes"]), default=0), 2),
                            "min_edge_px": round(min((e["px"] for e in m["edges"]), default=0), 2),
                        }
                        for key, m in metrics.items()
                    },
                }
            )
            if i == 0:
                explorer.page.screenshot(path=str(artefacts() / f"explorer_run{run}_first.png"))
    (artefacts() / "explorer_label_sizes.json").write_text(json.dumps(report, indent=1))
    assert not problems, "\n".join(problems)
    assert_clean(explorer, demo_server, "explorer, first five questions of each run")


LABEL_COVER = 0.2
"""The share of a box a relation label may cover before it counts as drawn on it (the same rule
as linked_graphs.js's boxesMeet: a label grazing a node's border is still read)."""


def label_clashes(metrics: dict[str, Any]) -> dict[str, int]:
    """Relation labels drawn on a node's text (or its badge), and pairs of relation labels drawn
    on each other (vis-network's own boxes, on screen), summed over the pictures; and the labels
    shown and hidden."""

    def meet(a: dict[str, float], b: dict[str, float]) -> bool:
        ox = min(a["right"], b["right"]) - max(a["left"], b["left"])
        oy = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
        if ox <= 0 or oy <= 0:
            return False
        area = [(x["right"] - x["left"]) * (x["bottom"] - x["top"]) for x in (a, b)]
        return ox * oy >= LABEL_COVER * min(area)

    out = {"on_nodes": 0, "on_labels": 0, "shown": 0, "hidden": 0}
    for m in metrics.values():
        labels = [e for e in m["edges"] if "left" in e]
        out["on_nodes"] += sum(meet(e, n["text"]) for e in labels for n in m["nodes"])
        out["on_labels"] += sum(meet(a, b) for i, a in enumerate(labels) for b in labels[i + 1 :])
        out["shown"] += len(labels)
        out["hidden"] += sum(bool(e.get("hidden")) for e in m["edges"])
    return out


def test_explorer_relation_labels_keep_off_nodes_and_each_other_at_1280(
    browser: Any, demo_server: Server, demo_copy: Path
) -> None:
    """Issue 43, item 6: at 1280 x 720 relation labels were drawn on nodes' texts and on each
    other in the gold and context KGs (over the first five questions of run 1, 15 pictures: 74
    labels on a node's text or badge and 12 pairs on each other). The layout now keeps room for
    them, and a label it cannot place is shown on hover instead of on top of another text: none
    is drawn on a node's text or a label, most are shown (153 of 214), and each picture's header
    says how many are hidden.

    Issue 58 (item 5): a label is whole ("inoculating..." was cut at 18 characters), inside
    its picture (a bent edge carried "came from" past the gold KG's top edge) and the lines
    under the pictures wrap ("...in all three gra...")."""
    items = first_questions(demo_copy)[1]
    totals = {"on_nodes": 0, "on_labels": 0, "shown": 0, "hidden": 0}
    untold, cut_heads, outside, cut_labels, cut_lines = [], [], [], [], []
    with watched_session(browser, (1280, 720)) as w:
        for item in items:
            frame = open_case(w, demo_server, f"run=1&item={item}")
            metrics = frame.evaluate("() => window.s3kg.metrics()")
            cut_heads += [(item, h) for h in frame.evaluate(CUT_HEADS)]
            for key, value in label_clashes(metrics).items():
                totals[key] += value
            sizes = frame.evaluate(
                "() => Object.fromEntries(Object.entries(window.s3kgNetworks).map(([k, n]) =>"
                " [k, [n.body.container.clientWidth, n.body.container.clientHeight]]))"
            )
            for key, m in metrics.items():
                width, height = sizes[key]
                for e in m["edges"]:
                    if e["label"].endswith("\u2026"):
                        cut_labels.append((item, key, e["label"]))
                    if "left" in e and not (
                        e["left"] >= -0.5
                        and e["top"] >= -0.5
                        and e["right"] <= width + 0.5
                        and e["bottom"] <= height + 0.5
                    ):
                        outside.append((item, key, e["label"]))
            cut_lines += frame.evaluate(
                "() => [...document.querySelectorAll('#s3kg-hint, .s3kg-note, #s3kg-table-count')]"
                ".filter(x => x.scrollWidth > x.clientWidth + 1"
                " || x.scrollHeight > x.clientHeight + 1)"
                ".map(x => x.textContent)"
            )
            heads = frame.evaluate(
                "() => [...document.querySelectorAll('.s3kg-hid')].map(h => h.textContent)"
            )
            for key, m in metrics.items():
                hidden = sum(bool(e.get("hidden")) for e in m["edges"])
                head = heads[list(metrics).index(key)] if len(heads) == len(metrics) else None
                if head is None or not ((f"{hidden} label" in head) if hidden else head == ""):
                    untold.append((item, key, hidden, head))
        w.page.screenshot(path=str(artefacts() / "explorer_labels_1280.png"))
        assert_clean(w, demo_server, "explorer at 1280 x 720")
    (artefacts() / "explorer_label_clashes_1280.json").write_text(json.dumps(totals))
    assert totals["on_nodes"] == 0 and totals["on_labels"] == 0, totals
    # most shown: 153 of 214 with scoring version 3; version 4 reads triples in their canonical
    # direction (issue 57) and the same layout code shows 140 of 212 on the demo's new picks
    assert totals["shown"] >= 1.8 * totals["hidden"], totals
    assert untold == [], untold
    assert cut_heads == [], cut_heads  # regression: "Gold KG 10 tripl... · 1 label on ho..."
    assert outside == [] and cut_labels == [] and cut_lines == [], (outside, cut_labels, cut_lines)


def test_explorer_a_hidden_relation_label_shows_while_its_node_is_in_focus(
    explorer: Watched, demo_server: Server
) -> None:
    """A relation label the layout hid (it would cover a node or another label) is drawn while
    one of its nodes is in focus, and hidden again when the focus is cleared."""
    w = explorer
    w.page.set_viewport_size({"width": 1280, "height": 720})
    frame = open_case(w, demo_server, "run=2&item=9")
    probe = """(focus) => {
      for (const p of window.s3kg.data.panels) {
        const net = window.s3kgNetworks[p.key];
        for (const e of p.edges) {
          if (!e.hidden) continue;
          if (focus) window.s3kg.focusNode(p.key, e.from);
          return {panel: p.key, label: e.label, drawn: net.body.edges[e.id].options.label};
        }
      }
      return null;
    }"""
    hidden = frame.evaluate(probe, False)
    assert hidden is not None, "no label was hidden on the densest demo question"
    assert hidden["drawn"].strip() == "", hidden
    shown = frame.evaluate(probe, True)
    assert shown["drawn"] == shown["label"], shown
    frame.evaluate("() => window.s3kg.clear()")
    assert frame.evaluate(probe, False)["drawn"].strip() == ""
    assert_clean(w, demo_server, "explorer, a hidden label in focus")


def test_explorer_hover_and_rows_highlight_partners_in_all_three_graphs(
    explorer: Watched, demo_server: Server
) -> None:
    page = explorer.page
    frame = open_case(explorer, demo_server, "run=2&item=9")
    # an answer entity aligned in both other graphs, and where its node is on the screen
    target = frame.evaluate(
        """() => {
      const D = S3KG_DATA, net = window.s3kgNetworks;
      const panel = k => D.panels.find(p => p.key === k);
      for (const n of panel("answer").nodes) {
        if (!n.badges.length) continue;
        const partners = k =>
          panel(k).nodes.filter(m => m.badges.includes(n.badges[0])).map(m => m.id);
        if (!partners("gold").length || !partners("context").length) continue;
        const dom = net.answer.canvasToDOM(net.answer.getPositions([n.id])[n.id]);
        const box = document.getElementById("s3kg-graph-answer").getBoundingClientRect();
        return {id: n.id, badge: n.badges[0], gold: partners("gold"), context: partners("context"),
                x: box.left + dom.x, y: box.top + dom.y};
      }
      return null;
    }"""
    )
    assert target is not None, "no answer entity aligned in both the gold and the context KG"
    origin = page.locator('[data-testid="stMain"] iframe').first.bounding_box()
    page.mouse.move(origin["x"] + target["x"], origin["y"] + target["y"])
    frame.wait_for_function("() => window.s3kg.highlighted().answer.length > 0", timeout=10_000)
    lit = frame.evaluate("() => window.s3kg.highlighted()")
    assert target["id"] in lit["answer"]
    assert set(target["gold"]) <= set(lit["gold"]) and set(target["context"]) <= set(lit["context"])
    drawn = frame.evaluate(
        "([k, id]) => window.s3kgNetworks[k].body.nodes[id].options.borderWidth",
        ["gold", target["gold"][0]],
    )
    assert drawn == 4, "the partner is drawn highlighted in the gold picture"
    assert frame.evaluate("() => window.s3kg.rows()"), "its triples' rows light up"
    page.screenshot(path=str(artefacts() / "explorer_hover.png"))

    # a table row: its answer triple and both matched triples light up
    page.mouse.move(5, 5)
    row = frame.locator("#s3kg-table tbody tr").first
    row.scroll_into_view_if_needed()
    row.click()
    picked = frame.evaluate("() => [window.s3kg.highlighted(), S3KG_DATA.rows[0]]")
    lit, links = picked
    for key in ("gold", "answer", "context"):
        triple = frame.evaluate(
            "([k, t]) => S3KG_DATA.panels.find(p => p.key === k).triples[t]",
            [key, links["links"][key]],
        )
        assert {triple[0], triple[2]} <= set(lit[key]), (key, triple, lit[key])
    assert frame.evaluate("() => window.s3kg.rows()") == [0]

    # tau moves: a new document, the same positions, the clicked row still picked
    before = frame.evaluate("() => window.s3kgNetworks.context.getPositions()")
    slider = page.locator('[data-testid="stMain"]').get_by_role("slider").first
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "() => [...document.querySelectorAll('iframe')].some(f => f.contentWindow"
        " && f.contentWindow.s3kg && f.contentWindow.s3kg.ready"
        " && f.contentWindow.s3kg.data.tau === '0.66')",
        timeout=RENDER_MS,
    )
    wait_idle(page, timeout_ms=RENDER_MS)
    assert page.url.endswith("threshold=0.66")
    frame = graph_frame(page)
    assert frame.evaluate("() => window.s3kgNetworks.context.getPositions()") == before
    assert frame.evaluate("() => window.s3kg.rows()") == [0]
    assert frame.evaluate("() => window.s3kg.sticky()") == "row:0"
    assert_clean(explorer, demo_server, "explorer hover")


def test_explorer_deep_link_opens_the_case_and_survives_leaving_the_page(
    explorer: Watched, demo_server: Server
) -> None:
    page = explorer.page
    frame = open_case(explorer, demo_server, "run=2&item=9&threshold=0.7")
    assert page.url.endswith("/Sample_explorer?run=2&item=9&threshold=0.7")
    run = page.get_by_role("combobox", name="Run").input_value()
    assert run == "SmolLM2-135M-Instruct · T=0.7", run  # run 2 (dashboard.run_names)
    assert " · demo-09 · What did Johannes Gutenberg" in question_picker(page).input_value()
    thumb = page.locator('[data-testid="stMain"] [data-testid="stSliderThumbValue"]').first
    assert thumb.inner_text() == "0.70"
    assert frame.evaluate("() => S3KG_DATA.tau") == "0.7"
    page.screenshot(path=str(artefacts() / "explorer_deep_link.png"))
    screenshot(page, artefacts() / "explorer_deep_link_full.png")

    page.locator('[data-testid="stSidebarNav"] a[href$="/Annotate"]').click()
    page.get_by_role("heading", name="Annotate alignments", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    page.locator('[data-testid="stSidebarNav"] a[href$="/Sample_explorer"]').click()
    page.get_by_role("heading", name="Sample explorer", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    graph_frame(page)
    assert page.url.endswith("/Sample_explorer?run=2&item=9&threshold=0.7"), page.url
    assert " · demo-09 · " in question_picker(page).input_value()
    assert foreign_requests(explorer, demo_server) == []  # nothing from another host
    # issue 42: a link written before the threshold had its name (tau=) opens the same case
    frame = open_case(explorer, demo_server, "run=2&item=9&tau=0.8")
    assert frame.evaluate("() => S3KG_DATA.tau") == "0.8"
    assert page.url.endswith("/Sample_explorer?run=2&item=9&threshold=0.8"), page.url
    assert_clean(explorer, demo_server, "explorer deep link")


def demo_case(db: Path, ext_id: str, temperature: float) -> tuple[int, int]:
    """The run and item ids of the demo answer to ``ext_id`` at ``temperature``."""
    from s3kg_core.store.store import Store

    with Store(db, read_only=True).connect() as con:
        (run,) = con.execute(
            "SELECT run_id FROM runs WHERE temperature = ?", [temperature]
        ).fetchone()
        (item,) = con.execute("SELECT item_id FROM items WHERE ext_id = ?", [ext_id]).fetchone()
    return int(run), int(item)


TABLE_CELLS = """() => [...document.querySelectorAll('#s3kg-table tbody tr')].map(tr =>
    [...tr.children].map(td => ({text: td.textContent, cls: td.className, title: td.title})))"""


def test_the_fleming_passive_is_aligned_in_the_explorer_with_the_badges_it_is_written_with(
    explorer: Watched, demo_server: Server, demo_copy: Path
) -> None:
    """This round's acceptance: the demo's T=0 answer to demo-01 has "Penicillin -- discovered
    by -- Alexander Fleming" against the gold "Alexander Fleming -- discovered -- penicillin";
    the triple table showed it "not aligned". The ot mode reads the passive turned round: the
    row is aligned in all three parts (its tooltip says how it was read). Regression of the
    same round: the explorer paired the key's head with the written head, so "Penicillin"
    carried gold's "Alexander Fleming" badge in the row and the answer picture, and the
    picture's node "Alexander Fleming" stood for penicillin."""
    run, item = demo_case(demo_copy, "demo-01", 0.0)
    frame = open_case(explorer, demo_server, f"run={run}&item={item}")
    rows = frame.evaluate(TABLE_CELLS)
    passive = re.compile(r"Penicillin discovered by .*Alexander Fleming")
    (row,) = [r for r in rows if passive.search(r[1]["text"])]
    gold, at_tau = row[2], row[4]
    assert re.search(r"Alexander Fleming discovered .*penicillin", gold["text"]), gold
    assert at_tau["text"] == "h\u2713r\u2713t\u2713" and "s3kg-pass" in at_tau["cls"], at_tau
    reading = "read turned round, as \u201calexander fleming discover penicillin\u201d"
    assert reading in at_tau["title"], at_tau
    badge = {  # the badge of each written label, in the answer row and in the gold match
        m.group(2).lower(): m.group(1)
        for cell in (row[1], gold)
        for m in re.finditer(r"(E\d+) (Penicillin|penicillin|Alexander Fleming)", cell["text"])
    }
    nodes = frame.evaluate(
        "() => Object.fromEntries(S3KG_DATA.panels.map(p => [p.key, "
        "Object.fromEntries(p.nodes.map(n => [n.label, n.badges.join('+')]))]))"
    )
    assert nodes["answer"]["Penicillin"] == nodes["gold"]["penicillin"] == badge["penicillin"]
    assert nodes["answer"]["Alexander Fleming"] == nodes["gold"]["Alexander Fleming"]
    assert nodes["answer"]["Alexander Fleming"] == badge["alexander fleming"] != badge["penicillin"]
    written = [r[1]["text"] for r in rows if "Penicillin" in r[1]["text"]]
    assert all(f"{badge['penicillin']} Penicillin" in t for t in written), written
    explorer.page.screenshot(path=str(artefacts() / "explorer_fleming.png"))
    assert_clean(explorer, demo_server, "explorer, the Fleming passive")


SIZES = ((1440, 900), (1280, 720))  # the screens the explorer and failure analysis must read on


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_explorer_and_failure_analysis_read_at_both_screen_sizes(
    browser: Any, demo_server: Server, size: tuple[int, int]
) -> None:
    """Issue 27: both pages now draw from the scorer's explanation. At 1440x900 and 1280x720
    the graphs start on the first screen, every label is legible, nothing raises; the first
    screens go to explorer_<w>x<h>.png and failure_analysis_<w>x<h>.png."""
    with watched_session(browser, size) as w:
        page = w.page
        frame = open_case(w, demo_server, "run=2&item=9")
        assert not legibility_problems(frame.evaluate("() => window.s3kg.metrics()"))
        rows = frame.evaluate("() => S3KG_DATA.rows.map(r => r.number)")
        assert rows == list(range(1, len(rows) + 1)) and rows, "one row per answer triple"
        graphs = page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first
        assert graphs.bounding_box()["y"] < size[1] - 200, "the graphs start on the first screen"
        first_screen(page, artefacts() / f"explorer_{size[0]}x{size[1]}.png")
        open_page(w, demo_server, "Failure_analysis", "Failure analysis (TAU)")
        frame = graph_frame(page)
        assert red_edges(frame)["gold"], "the residual triples are drawn red"
        assert not legibility_problems(frame.evaluate("() => window.s3kg.metrics()"))
        first_screen(page, artefacts() / f"failure_analysis_{size[0]}x{size[1]}.png")
        assert_clean(w, demo_server, f"explorer and failure analysis at {size}")


CUT_HEADS = """() => [...document.querySelectorAll('.s3kg-head')].filter(h =>
    h.scrollWidth > h.clientWidth + 1
    || [...h.querySelectorAll('.s3kg-sub')].some(s => s.scrollWidth > s.clientWidth)
).map(h => h.innerText)"""
"""The pictures' headers that are cut: one pixel too wide is an ellipsis on screen (the hidden
labels' count "· 1 label on ho..." at 1280, when the check allowed a pixel and read one part)."""


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_triple_row_every_header_and_the_tau_chart_show_at_both_sizes(
    browser: Any, demo_server: Server, size: tuple[int, int]
) -> None:
    """Issue 43 (item 6): the explorer's triple table sat in a box 8 rows of 27 px high, so
    rows of two lines hid (1 of 2 showed); the pictures' headers were cut ("Answer KG 0
    tripl..."); long relation labels ran into each other; the TAU chart's bars were ~70 px
    wide at 1280. Now every row shows (the frame fits its content) with a count above the
    table, headers shorten or wrap, an edge shows at most 18 characters (whole in its
    tooltip), and the chart has room (``<page>_rows_<w>x<h>.png``)."""
    with watched_session(browser, size) as w:
        page = w.page
        frame = open_case(w, demo_server, "run=1&item=3")
        count = frame.locator("#s3kg-table-count")
        shown, total = (int(count.get_attribute(a) or -1) for a in ("data-shown", "data-total"))
        assert shown == total == len(frame.evaluate("() => S3KG_DATA.rows")) > 2
        assert count.inner_text() == f"All {total} answer triples:"
        box = frame.locator("#s3kg-table-box")
        assert box.evaluate("b => b.scrollHeight <= b.clientHeight + 1"), "no row is hidden"
        iframe = page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first
        inner = frame.evaluate("() => document.documentElement.scrollHeight")
        assert iframe.bounding_box()["height"] >= inner - 2, "the frame holds the whole table"
        assert frame.evaluate(CUT_HEADS) == []
        edges = frame.evaluate("() => S3KG_DATA.panels.flatMap(p => p.edges)")
        # issue 58.5: a relation is shown whole up to LinkedStyle.edge_label_chars (48: every
        # relation of the demo), cut at a word with "…" past it (it was cut at 18)
        limit = LinkedStyle().edge_label_chars
        assert edges and all(len(e["label"]) <= limit for e in edges)
        assert any(len(e["label"]) > 18 for e in edges)  # one the 18-character cut hid
        assert all(e["label"] == short_label(e["label"], limit) for e in edges)
        first_screen(page, artefacts() / f"explorer_rows_{size[0]}x{size[1]}.png")
        open_page(w, demo_server, "Failure_analysis", "Failure analysis (TAU)")
        frame = graph_frame(page)
        assert frame.evaluate(CUT_HEADS) == []
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        plot = chart.locator(".nsewdrag").first.bounding_box()
        assert plot is not None and plot["width"] >= 140, plot
        labels = page.locator('[data-testid="stMain"] [data-testid="stMetricLabel"]')
        assert [labels.nth(i).inner_text().strip() for i in range(labels.count())] == [
            "aligned", "relation", "entity", "roles swapped", "extra", "missing"
        ]  # fmt: skip
        for i in range(labels.count()):  # one row of six: "swap…", "relati…", even "ali…" at 1280
            assert labels.nth(i).evaluate(
                "e => [...e.querySelectorAll('*')].every(x => x.scrollWidth <= x.clientWidth + 1)"
            ), labels.nth(i).inner_text()
        legend = chart.locator(".legend .legendtext").evaluate_all("l => l.map(e => e.textContent)")
        assert "roles swapped" in legend, legend
        links = page.locator('[data-testid="stMain"] [data-testid="stPageLink"]')
        assert links.count() >= 2
        for i in range(links.count()):  # "Open in the Sample explor" at 1280 with a wider chart
            assert links.nth(i).evaluate(
                "e => [e, ...e.querySelectorAll('*')]"
                ".every(x => x.scrollWidth <= x.clientWidth + 1)"
            ), links.nth(i).inner_text()
        first_screen(page, artefacts() / f"failure_analysis_rows_{size[0]}x{size[1]}.png")
        assert_clean(w, demo_server, f"rows and headers at {size}")


@pytest.fixture(scope="module")
def wwl_server(
    demo_db: Path, minilm: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The demo database scored again in ``wwl`` mode (issue 41), served."""
    import shutil

    from s3kg_core.store.store import Store

    folder = tmp_path_factory.mktemp("wwl_server")
    path = folder / "s3kg.duckdb"
    shutil.copy(demo_db, path)
    score_store(Store(path), encoder=minilm, config=S3KGConfig(mode="wwl"))
    with streamlit_server(path, folder / "streamlit.log") as srv:
        yield srv


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_transport_plan_of_a_wwl_run_reads_at_both_screen_sizes(
    browser: Any, wwl_server: Server, size: tuple[int, int]
) -> None:
    """Issue 41: in wwl mode the explorer shows the n:m transport plan under the graphs; the
    graphs keep the first screen; explorer_wwl_<w>x<h>.png and transport_plan_<w>x<h>.png."""
    with watched_session(browser, size) as w:
        page = w.page
        frame = open_case(w, wwl_server, "run=2&item=9")
        assert not legibility_problems(frame.evaluate("() => window.s3kg.metrics()"))
        graphs = page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first
        assert graphs.bounding_box()["y"] < size[1] - 200, "the graphs start on the first screen"
        first_screen(page, artefacts() / f"explorer_wwl_{size[0]}x{size[1]}.png")
        no_pick = frame.get_by_text("no triple pick: wwl transports nodes (see the transport plan)")
        assert no_pick.count() > 0, "the table says why no triple is picked, not 'no triple'"
        plan = page.locator('[data-testid="stExpander"]', has_text="Transport plan (wwl mode)")
        plan.get_by_text("Transport plan (wwl mode)").click()
        table = plan.locator('[data-testid="stDataFrame"]')
        table.wait_for(timeout=RENDER_MS)
        plan.scroll_into_view_if_needed()
        wait_idle(page, timeout_ms=RENDER_MS)
        box = plan.bounding_box()
        assert box["width"] > size[0] * 0.5, "the plan uses the page's width"
        page.screenshot(path=str(artefacts() / f"transport_plan_{size[0]}x{size[1]}.png"))
        assert_clean(w, wwl_server, f"the wwl explorer at {size}")


def test_the_browser_packs_components_for_its_frame(browser: Any) -> None:
    """The one shelf packing (linked_graphs.js; until issue 27 there was a Python copy too):
    components in shelves, the shelf width a frame of that shape shows largest; placed
    pictures never overlap."""
    from dashboard.graphs import LINKED_STYLE, GraphPanel, PanelEdge, PanelNode, linked_graphs_html

    labels = [f"island {i}" for i in range(8)] + ["hub", "spoke a", "spoke b", "spoke c"]
    nodes = tuple(PanelNode(lb, lb) for lb in labels)
    triples = tuple(("hub", "has", t, "hub", t) for t in ("spoke a", "spoke b", "spoke c"))
    edges = tuple(PanelEdge(h, t, r, i) for i, (h, r, t, _, _) in enumerate(triples))
    doc = linked_graphs_html([GraphPanel("gold", "Gold", "", nodes, edges, triples)], [], tau=0.5)
    gap = LINKED_STYLE.gap_px
    with watched_session(browser) as w:
        w.page.set_content(doc.html)
        w.page.wait_for_function("() => window.s3kg && window.s3kg.ready === true")
        comps = [{"w": 40, "h": 20}] * 6
        wide = w.page.evaluate("c => { const p = s3kg.pack(c, 1000, 20); delete p.placed; "
                               "return p; }", comps)  # fmt: skip
        assert {y for _, y in wide["spots"]} == {0} and wide["w"] == 6 * 40 + 5 * gap
        tall = w.page.evaluate("c => { const p = s3kg.pack(c, 40, 1000); delete p.placed; "
                               "return p; }", comps)  # fmt: skip
        assert {x for x, _ in tall["spots"]} == {0} and tall["h"] == 6 * 20 + 5 * gap
        metrics = w.page.evaluate("() => window.s3kg.metrics()")["gold"]
        assert metrics["overlap"] == 0 and len(metrics["nodes"]) == 12
        boxes = [(n["left"], n["top"], n["right"], n["bottom"]) for n in metrics["nodes"]]
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])
        assert w.errors == []


def test_a_test_session_runs_css_animations_to_their_end_at_once(browser: Any) -> None:
    """The sessions of these tests (browser_helpers.new_context) run every CSS animation to its
    end at once, in the page and in its frames: a spinner does not repaint for as long as a test
    waits, and an animation's end event still fires. A benchmark's session may keep them."""
    page_html = """<style>@keyframes spin { to { transform: rotate(360deg); } }
      .s { animation: spin 1s linear infinite; } .f { animation: spin 5s 2s; }</style>
      <div class="s" id="s"></div><div class="f" id="f"></div>
      <iframe srcdoc="<style>@keyframes p{to{opacity:0}}
        i{animation:p 1s infinite}</style><i>x</i>"></iframe>
      <script>window.ended = 0; document.getElementById('f')
        .addEventListener('animationend', () => { window.ended += 1; });</script>"""
    style = "id => { const c = getComputedStyle(document.getElementById(id)); " \
            "return [c.animationDuration, c.animationIterationCount]; }"  # fmt: skip
    url = "http://animations.invalid/"  # served by the route: no network

    def serve(page: Any) -> None:
        page.route(url, lambda r: r.fulfill(body=page_html, content_type="text/html"))
        page.goto(url)

    with watched_session(browser) as w:
        serve(w.page)
        assert w.page.evaluate(style, "s") == ["0s", "1"]
        w.page.wait_for_function("() => window.ended === 1", timeout=5_000)
        frame = w.page.frames[1]
        assert frame.evaluate("() => getComputedStyle(document.querySelector('i'))"
                              ".animationDuration") == "0s"  # fmt: skip
    context = new_context(browser, VIEWPORT, still=False)
    try:
        page = context.new_page()
        serve(page)
        assert page.evaluate(style, "s") == ["1s", "infinite"]
    finally:
        context.close()


# -- the first start, as `make run` on a fresh checkout -----------------------------------------


def test_a_first_start_shows_title_and_steps_then_the_overview(
    browser: Any, tmp_path: Path
) -> None:
    """Regression (issue 16): a fresh start showed one fixed spinner line for 24-28 s, with no
    title, steps or elapsed time. Now the title is there at once, the build's steps appear as
    they run (st.status, each with its seconds), and the overview follows without a reload."""
    db = tmp_path / "fresh" / "s3kg.duckdb"
    with (
        watched_session(browser) as w,
        streamlit_server(db, tmp_path / "streamlit.log", timeout=300, first_start=True) as srv,
    ):
        page = w.page
        page.set_default_timeout(RENDER_MS)
        page.goto(srv.url, timeout=RENDER_MS)
        page.get_by_role("heading", name="S3KG Workbench", exact=True).wait_for()
        steps = page.get_by_text(re.compile(r"^\s*[0-9.]+ s  Importing 30 demo questions"))
        steps.wait_for(state="attached")  # in the status box (collapsed once it is done)
        first_screen(page, artefacts() / "first_start_building.png")
        page.get_by_text("Mean CUS", exact=True).wait_for(timeout=RENDER_MS)
        wait_idle(page, timeout_ms=RENDER_MS)
        status = page.locator('[data-testid="stMain"] [data-testid="stExpander"]').first
        label = status.locator("summary").inner_text()
        assert re.search(r"Built the demo database .* in \d+ s", label), label
        lines = status.locator('[data-testid="stText"]').all_text_contents()  # collapsed
        assert any("recorded in kgs.jsonl" in line for line in lines), lines  # no spaCy
        assert lines[-1].split()[-1] == "done", lines
        assert metric_value(page, "Answers scored") == "60"
        first_screen(page, artefacts() / "first_start_done.png")
        assert_clean(w, srv, "first start")


# --- Annotate, Benchmarks and Factuality on the demo database (issue 16) ---------------------


@pytest.fixture(scope="module")
def annotate_db(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the demo database (the tests write)."""
    import shutil

    db = tmp_path_factory.mktemp("demo_browser") / "s3kg.duckdb"
    shutil.copy(demo_db, db)
    return db


@pytest.fixture(scope="module")
def annotate_server(annotate_db: Path) -> Iterator[Server]:
    """``streamlit run app.py`` on :func:`annotate_db`."""
    with streamlit_server(annotate_db, annotate_db.parent / "streamlit.log") as srv:
        yield srv
    print(f"--- streamlit log ---\n{srv.log_tail()}")


def _in_first_screen(locator: Any, viewport: tuple[int, int] = VIEWPORT) -> bool:
    """Whether the element is drawn inside the viewport without scrolling."""
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= viewport[1]


def _chosen(page: Any, label: str) -> str:
    """The shown choice of the select box whose label starts with ``label``."""
    box = page.get_by_role("combobox", name=re.compile(rf"^{re.escape(label)}"))
    value = box.input_value()
    if not value:  # a select box that shows its choice as text beside the input
        widget = page.locator('[data-testid="stSelectbox"]').filter(has=box)
        value = widget.inner_text().split("\n")[-1]
    return str(value)


def _stored(db: Path, annotator: str, role: str = "annotator") -> list[tuple[int, str]]:
    """``(item_id, verdict)`` of a person's decisions in effect in the database file."""
    from s3kg_core.annotation.log import current_verdicts
    from s3kg_core.store.store import Store

    with Store(db, read_only=True).connect() as con:
        frame = current_verdicts(con, annotator=annotator, role=role)
    return list(zip(frame.item_id.astype(int), frame.verdict, strict=True))


def _open_as(w: Watched, server: Server, query: str, name: str) -> Any:
    """Open Annotate with ``?...&annotator=name`` and confirm the name (the one click)."""
    open_page(w, server, f"Annotate?{query}&annotator={name}", "Annotate alignments")
    page = w.page
    page.get_by_text(re.compile(rf"This link names the annotator {name}\.")).wait_for()
    page.get_by_role("button", name=f"I am {name}").click()
    # the click's rerun may start after a first idle look on a loaded machine (the box was
    # read empty once in a fresh clone): wait for the name itself, then for the page
    from playwright.sync_api import expect

    box = page.get_by_role("textbox", name="Your name")
    expect(box).to_have_value(name, timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert box.input_value() == name
    return page


def _unclipped(locator: Any) -> bool:
    """The element shows all its text: nothing cut off by its own width or by the viewport."""
    return bool(
        locator.evaluate(
            "e => e.scrollWidth <= e.clientWidth + 1 && e.getBoundingClientRect().right"
            " <= window.innerWidth"
        )
    )


def cut_tables(page: Any) -> list[str]:
    """Every drawn dataframe of the page whose columns do not all fit: its grid scrolls
    sideways (a column off the right edge), or the grid itself leaves the window; the live
    tables (dashboard/live_alpha.py, in their shadow roots) too."""
    found = page.evaluate(
        """() => {
            const cut = (el, box) => el.scrollWidth > el.clientWidth + 1
                || box.right > window.innerWidth + 0.5;
            const grids = [...document.querySelectorAll('[data-testid="stDataFrame"]')]
                .flatMap((f, i) => {
                    const s = f.querySelector('.dvn-scroller');
                    if (!s || !f.offsetParent) return [];  // not drawn (a closed expander)
                    const header = [...f.querySelectorAll('[role="columnheader"]')]
                        .map(h => h.innerText.trim()).join(' | ');
                    return cut(s, f.getBoundingClientRect())
                        ? [`table ${i} (${header}): ${s.scrollWidth} px in ${s.clientWidth}`]
                        : [];
                });
            const roots = [...document.querySelectorAll('*')].filter(e => e.shadowRoot)
                .map(e => e.shadowRoot);
            const live = roots.flatMap(r => [...r.querySelectorAll('.wrap')]).flatMap((w, i) => {
                const header = [...w.querySelectorAll('th')].map(h => h.innerText.trim())
                    .join(' | ');
                return cut(w, w.getBoundingClientRect())
                    ? [`live table ${i} (${header}): ${w.scrollWidth} px in ${w.clientWidth}`]
                    : [];
            });
            return [...grids, ...live];
        }"""
    )
    return list(found)


def _screens(page: Any, name: str) -> None:
    """First screens of the page at 1440x900 and 1280x720 (back to 1440x900 after)."""
    for width, height in ((1440, 900), (1280, 720)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(600)
        first_screen(page, artefacts() / f"{name}_{width}x{height}.png")
    page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})


def test_no_decision_is_lost_on_any_route_the_page_offers(
    watched: Watched, annotate_server: Server, annotate_db: Path
) -> None:
    """Issue 30: a decision followed by "Next with pairs" was thrown away without a word. Each
    decision is saved as it is made: decide, leave by every route, find it in the file."""
    page = _open_as(watched, annotate_server, "run=1&item=4", "dora")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    shown = focused_pair(page)
    assert shown is not None and shown[0] == 1
    decided = []

    def decide(key: str, verdict: str, following: int | None = None) -> None:
        """Press ``key`` on the focused pair; ``following``: the pair focused next."""
        k = focused_pair(page)
        assert k is not None
        press_for_next_pair(page, key, following or (k[0] + 1 if k[0] < k[1] else k[0]))
        decided.append(verdict)

    # next pair and previous pair
    decide("y", "confirm")  # pair 1
    press_for_next_pair(page, "j", 3)
    assert [v for _, v in _stored(annotate_db, "dora")] == decided
    decide("n", "reject")  # pair 3
    press_for_next_pair(page, "k", 3)
    press_for_next_pair(page, "k", 2)
    assert [v for _, v in _stored(annotate_db, "dora")] == decided
    # next item (by key), then the picker
    decide("s", "skip", following=4)  # pair 2; the next undecided is pair 4
    page.keyboard.press("i")
    wait_idle(page, timeout_ms=RENDER_MS)
    assert not _chosen(page, "Answer (").startswith("item 4 · ")
    assert [v for _, v in _stored(annotate_db, "dora")] == decided
    decide("y", "confirm")
    target = 7 if _chosen(page, "Answer (").startswith("item 5 · ") else 5
    page.get_by_role("combobox", name=re.compile(r"^Answer \(")).click()
    page.keyboard.type(f"item {target} · ")  # the list is long: filter it, then choose
    page.get_by_role("option", name=re.compile(rf"^item {target} · ")).click()
    wait_idle(page, timeout_ms=RENDER_MS)
    assert _chosen(page, "Answer (").startswith(f"item {target} · ")
    assert [v for _, v in _stored(annotate_db, "dora")] == decided
    # another page of the sidebar, and back: the decision is there and shown
    page.evaluate("document.activeElement && document.activeElement.blur()")  # the picker's
    decide("n", "reject")
    page.locator('[data-testid="stSidebarNav"] a[href$="/Sample_explorer"]').click()
    page.get_by_role("heading", name="Sample explorer", exact=True).wait_for(timeout=RENDER_MS)
    assert [v for _, v in _stored(annotate_db, "dora")] == decided
    page.locator('[data-testid="stSidebarNav"] a[href$="/Annotate"]').click()
    page.get_by_role("heading", name="Annotate alignments", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert _chosen(page, "Answer (").startswith(f"item {target} · ")
    page.get_by_text(re.compile(r"1 decided by you\.$")).wait_for()
    # a reload (a new session: this browser confirmed the name, so it is kept; issue 43)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    decide("y", "confirm")
    page.reload()
    wait_idle(page, timeout_ms=RENDER_MS)
    assert page.get_by_role("textbox", name="Your name").input_value() == "dora"
    assert page.get_by_role("button", name="I am dora").count() == 0
    page.get_by_text(re.compile(r"2 decided by you\.$")).wait_for()
    stored = _stored(annotate_db, "dora")
    assert [v for _, v in stored] == decided == [
        "confirm", "reject", "skip", "confirm", "reject", "confirm"
    ]  # fmt: skip
    items = [i for i, _ in stored]
    assert items[:3] == [4, 4, 4] and items[3] != 4 and items[-2:] == [target, target]
    assert_clean(watched, annotate_server, "annotate: every route")


def test_keyboard_only_annotation_of_one_answer_and_its_screens(
    watched: Watched, annotate_server: Server, annotate_db: Path
) -> None:
    page = _open_as(watched, annotate_server, "run=1&item=7", "erin")
    main = page.locator('[data-testid="stMain"]')
    hints = main.get_by_text(re.compile(r"^Keys: Y confirm · N reject · S skip · U undo"))
    assert _in_first_screen(hints)
    for label, key in (("Confirm", "Y"), ("Reject", "N"), ("Next item", "I")):
        button = main.get_by_role("button", name=re.compile(rf"^{label}"))
        assert key in button.inner_text(), button.inner_text()  # the key shown on its button
    shown = focused_pair(page)
    assert shown is not None
    n = shown[1]
    page.evaluate("document.activeElement && document.activeElement.blur()")
    keys = ["y", "n", "s"]
    for k in range(1, n):
        press_for_next_pair(page, keys[(k - 1) % 3], k + 1)
    page.keyboard.press(keys[(n - 1) % 3])
    page.get_by_text(re.compile(rf"{n} decided by you\.$")).wait_for()
    expected = {"y": "confirm", "n": "reject", "s": "skip"}
    assert [v for _, v in _stored(annotate_db, "erin")] == [expected[keys[d % 3]] for d in range(n)]
    page.keyboard.press("u")  # undo the last: one fewer, its pair focused again
    page.get_by_text(re.compile(rf"{n - 1} decided by you\.$")).wait_for()
    assert len(_stored(annotate_db, "erin")) == n - 1 and focused_pair(page) == (n, n)
    screenshot(page, artefacts() / "annotate_keys.png")
    _screens(page, "annotate_view")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_timeout(600)
    for a in ("Confirm", "Reject", "Skip", "Undo", "Previous pair", "Next pair", "Next item"):
        button = main.get_by_role("button", name=re.compile(rf"^{a}"))
        assert _unclipped(button), f"{a} is clipped at 1280x720"
        assert _in_first_screen(button, (1280, 720)), f"{a} is below the first screen"
    page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
    assert_clean(watched, annotate_server, "annotate by keyboard")


def test_two_annotators_and_an_adjudicator_end_to_end(
    browser: Any, annotate_server: Server, annotate_db: Path
) -> None:
    for name, key in (("fay", "y"), ("gus", "n")):
        with watched_session(browser) as w:
            page = _open_as(w, annotate_server, "run=1&item=8", name)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            press_for_next_pair(page, key, 2)
            assert_clean(w, annotate_server, f"annotate as {name}")
    with watched_session(browser) as w:
        page = _open_as(w, annotate_server, "run=1&item=8&view=adjudicate", "hal")
        main = page.locator('[data-testid="stMain"]')
        row = (
            main.locator('[data-testid="stHorizontalBlock"]')
            .filter(has_text=re.compile(r"fay: confirm"))
            .filter(has_text=re.compile(r"gus: reject"))
            .last
        )
        row.wait_for()
        assert "item 8" in row.inner_text()
        _screens(page, "annotate_adjudicate")
        row.get_by_role("button", name="Reject").click()
        wait_idle(page, timeout_ms=RENDER_MS)
        assert _stored(annotate_db, "hal", role="adjudicator") == [(8, "reject")]
        # the agreement panel: TAU measured against the adjudicated label, recall untested
        page.get_by_role("radio", name="Agreement", exact=True).click()
        wait_idle(page, timeout_ms=RENDER_MS)
        assert metric_value(page, "TAU precision") != "n/a"
        assert main.get_by_text(re.compile(r"^Recall is untested")).count() == 1
        assert main.get_by_text("Agreement between annotators").count() == 1
        for width, height in ((1280, 720), (1440, 900)):  # issue 43: "Note" was cut at 1280
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(600)
            assert main.locator('[data-testid="stDataFrame"]').count() >= 1
            assert cut_tables(page) == [], (width, cut_tables(page))
        _screens(page, "annotate_agreement")
        screenshot(page, artefacts() / "annotate_agreement.png")
        with page.expect_download() as download:
            main.get_by_role("button", name=re.compile("Download the decisions")).click()
        text = Path(download.value.path()).read_text(encoding="utf-8")
        header, *rows = text.splitlines()
        assert header.startswith("uid,created_at,annotator") and "adjudicated" in header
        assert any(",hal," in r and ",adjudicator," in r for r in rows)
        assert_clean(w, annotate_server, "adjudication and agreement")


def test_annotate_keeps_the_confirmed_name_across_pages_and_reloads(
    browser: Any, annotate_server: Server
) -> None:
    """Issue 43 (item 8): a reload asked "I am bob" again, and the picker said "item 13"
    where the page said "demo-13" (typing the id found nothing). The confirmed name is kept
    across the sidebar's pages and a reload (a cookie of the browser session), the page says
    how to switch, and the picker finds an answer by the id the page shows."""
    with watched_session(browser, (1280, 720)) as w:
        page = _open_as(w, annotate_server, "run=1&item=12", "bob")
        nav = page.locator('[data-testid="stSidebarNav"]')
        nav.get_by_role("link", name="Overview").click()
        wait_idle(page, timeout_ms=RENDER_MS)
        nav.get_by_role("link", name="Annotate").click()
        wait_idle(page, timeout_ms=RENDER_MS)
        assert page.get_by_role("textbox", name="Your name").input_value() == "bob"
        page.reload()
        wait_idle(page, timeout_ms=RENDER_MS)
        assert page.get_by_role("textbox", name="Your name").input_value() == "bob"
        assert page.get_by_role("button", name="I am bob").count() == 0
        switch = page.get_by_text(re.compile(r"^Working as bob: kept .* To switch, type"))
        assert _in_first_screen(switch, (1280, 720))
        page.get_by_role("combobox", name=re.compile(r"^Answer \(")).click()
        page.keyboard.type("demo-13")
        page.get_by_role("option", name=re.compile(r"· demo-13 ·")).first.click()
        wait_idle(page, timeout_ms=RENDER_MS)
        assert " · demo-13 · " in _chosen(page, "Answer (")
        page.get_by_text(re.compile(r"^Question · demo-13 · ")).wait_for()
        _screens(page, "annotate_name_kept")
        assert_clean(w, annotate_server, "annotate: the name kept")


def test_a_failure_case_link_opens_that_case_in_annotate(
    watched: Watched, annotate_server: Server, annotate_db: Path
) -> None:
    page = watched.page
    runs = load_runs(View(annotate_db, 0))
    labels = {int(r): str(label) for r, label in zip(runs["run_id"], runs["label"], strict=True)}
    open_page(watched, annotate_server, "Failure_analysis", "Failure analysis (TAU)")
    frame = graph_frame(page)  # the demo's worst case: an empty answer KG, 13 missing triples
    assert len(red_edges(frame)["gold"]) == 13
    assert not legibility_problems(frame.evaluate("() => window.s3kg.metrics()"))
    screenshot(page, artefacts() / "failure_analysis_demo.png")
    first_screen(page, artefacts() / "failure_analysis_demo_first_screen.png")
    link = page.locator('[data-testid="stMain"] a[href*="Annotate?run="]')
    href = link.get_attribute("href") or ""
    run, item = re.search(r"\?run=(\d+)&item=(\d+)$", href).groups()  # type: ignore[union-attr]
    link.click()
    page.get_by_role("heading", name="Annotate alignments", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert _chosen(page, "Answer (").startswith(f"item {item} · ")
    assert _chosen(page, "Run") == labels[int(run)]  # a run reads the same on every picker
    assert_clean(watched, annotate_server, "annotate from a failure case")


def test_the_demos_benchmarks_and_factuality_pages_say_what_they_show(
    watched: Watched, annotate_server: Server
) -> None:
    page = watched.page
    open_page(watched, annotate_server, "Benchmarks", "Benchmarks")
    main = page.locator('[data-testid="stMain"]')
    note = main.get_by_text(re.compile(r"^Precomputed project results\."))
    assert _in_first_screen(note)
    table = main.locator('[data-testid="stDataFrame"]').first
    table.wait_for(timeout=RENDER_MS)
    assert table.bounding_box()["y"] < VIEWPORT[1] - 150  # the AUROC table starts on screen
    first_screen(page, artefacts() / "benchmarks_demo_first_screen.png")
    screenshot(page, artefacts() / "benchmarks_demo.png")
    assert_clean(watched, annotate_server, "benchmarks (demo)")

    open_page(watched, annotate_server, "Factuality", "Factuality")
    warning = page.get_by_text(re.compile(r"unrelated to the demo's questions"))
    assert _in_first_screen(warning)
    first_screen(page, artefacts() / "factuality_demo_first_screen.png")
    screenshot(page, artefacts() / "factuality_demo.png")
    assert_clean(watched, annotate_server, "factuality (demo)")


def test_the_workbench_pages_read_at_both_sizes_and_the_csv_is_the_screen(
    watched: Watched, annotate_server: Server
) -> None:
    """Issue 31: the leaderboard, the Run details page and the comparison's triple diff in the
    first screen at 1440x900 and 1280x720 (``<page>_<w>x<h>.png``), every link state in the
    URL, and the leaderboard's CSV in the order of the screen."""
    import csv
    import io

    page = watched.page
    views = [
        ("?alpha=0.9", "S3KG Workbench", "overview_leaderboard", "Leaderboard"),
        ("Run?run=2", "Run details", "run_details", "Who and how"),
        ("Run_comparison?a=1&b=2&item=7", "Run comparison", "run_comparison_diff",
         "Worse in B"),
        ("Search?q=penicillin", "Search answers", "search", "Answer KG"),
    ]  # fmt: skip
    for path, title, name, first in views:
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
        open_page(watched, annotate_server, path, title)
        if name == "overview_leaderboard":
            assert "alpha=0.9" in page.url
            slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
            assert slider.input_value() == "0.9"
            grid = page.locator('[data-kind="table"] table').first  # the live leaderboard
            grid.scroll_into_view_if_needed()
            ranks = [t.strip() for t in grid.locator('td[data-key="rank"]').all_inner_texts()]
            shown_runs = [t.strip() for t in grid.locator('td[data-key="run"]').all_inner_texts()]
            assert ranks == ["1", "2"], ranks
            with page.expect_download() as download:
                page.get_by_role("button", name="Leaderboard (CSV)").click()
            text = Path(download.value.path()).read_text(encoding="utf-8")
            rows = list(csv.DictReader(io.StringIO(text)))
            assert [r["rank"] for r in rows] == ranks
            assert [r["run"] for r in rows] == shown_runs
            assert {r["signature"].rsplit("|", 1)[1] for r in rows} == {"alpha:0.9"}
        for width, height in ((1440, 900), (1280, 720)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(500)
            target = page.get_by_text(first, exact=True).first
            box = target.bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, name
            first_screen(page, artefacts() / f"{name}_{width}x{height}.png")
        screenshot(page, artefacts() / f"{name}.png")
        assert_clean(watched, annotate_server, name)
        if name == "run_comparison_diff":
            assert re.search(r"[?&]a=1&b=2&item=7", page.url), page.url
            page.get_by_text("Triple by triple", exact=False).first.wait_for()


def test_no_column_is_cut_at_1280_and_the_comparison_shows_the_checks_gates(
    watched: Watched, annotate_server: Server
) -> None:
    """Issue 43 (items 4 and 7): at 1280x720 the comparison's ΔGoldSim, ΔCtxSim and "in B"
    columns, the leaderboard's model column and Search's run column ran off the right edge of
    their tables; the comparison never showed the gate ``s3kg check`` failed. Every table now
    fits at both sizes (``<page>_cols_<w>x<h>.png``), and the gates are on the page."""
    page = watched.page
    views = [
        ("?alpha=0.5", "S3KG Workbench", "overview"),
        ("Run_comparison?a=1&b=2&item=7", "Run comparison", "run_comparison"),
        ("Search?q=penicillin", "Search answers", "search"),
    ]
    for path, title, name in views:
        page.set_viewport_size({"width": 1280, "height": 720})
        open_page(watched, annotate_server, path, title)
        main = page.locator('[data-testid="stMain"]')
        if name == "run_comparison":
            main.get_by_text("Triple by triple", exact=False).first.wait_for()
            verdict = main.get_by_text(re.compile(r"^s3kg check FAILED: \d+ of \d+ gates")).first
            assert _in_first_screen(verdict, (1280, 720)), "the verdict is on the first screen"
            gates = main.locator("table").filter(has_text="Fails when").first
            row = gates.locator("tr").filter(has_text="new_unscorable")
            assert "FAIL" in row.inner_text() and "demo-02: answer_kg_empty" in row.inner_text()
            assert _unclipped(gates)
        for width, height in ((1280, 720), (1440, 900)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(600)
            # a loaded machine draws the table after the title: wait for it, do not count early
            tables = main.locator('[data-testid="stDataFrame"], [data-kind="table"] table')
            tables.first.wait_for(timeout=60_000)  # the Overview's leaderboard: a live table
            assert tables.count() >= 1, name
            assert cut_tables(page) == [], (name, width, cut_tables(page))
            first_screen(page, artefacts() / f"{name}_cols_{width}x{height}.png")
        assert_clean(watched, annotate_server, name)


def test_the_verdict_against_1_is_on_the_first_screen_of_each_page_issue_58(
    watched: Watched, annotate_server: Server
) -> None:
    """Issue 58: the demo's T=0.7 (run 2) against T=0 (run 1) is one verdict, with the test
    named, on the first screen at 1440x900 and 1280x720 (``<page>_<w>x<h>.png``) of the
    Overview (the "vs #1" column, the line naming the test and the link to the comparison of
    the two), the Run comparison and the Run page; the Overview's link opens that pair."""
    text = "clearly lower (paired bootstrap over 30 shared questions)"
    page = watched.page
    main = page.locator('[data-testid="stMain"]')
    views = [
        ("?alpha=0.5", "S3KG Workbench", "overview_verdict"),
        ("Run_comparison?a=1&b=2", "Run comparison", "run_comparison_verdict"),
        ("Run?run=2", "Run details", "run_verdict"),
    ]
    for path, title, name in views:
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
        open_page(watched, annotate_server, path, title)
        for width, height in ((1440, 900), (1280, 720)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(600)
            size = (width, height)
            if name == "overview_verdict":
                grid = main.locator('[data-kind="table"] table').first  # the live leaderboard
                grid.wait_for(timeout=60_000)
                assert _in_first_screen(grid, size), size
                verdicts = grid.locator('td[data-key="verdict"]').all_inner_texts()
                assert [v.strip() for v in verdicts] == ["", "clearly lower"]  # "vs #1"
                assert cut_tables(page) == [], (size, cut_tables(page))
                note = main.locator("p").filter(has_text="each run's mean against the dataset's #1")
                assert "by the paired bootstrap over 30 shared questions" in note.inner_text()
                link = main.get_by_role("link", name=re.compile("against #1, question by question"))
                shown = [note, link]
            elif name == "run_comparison_verdict":
                said = main.get_by_text(f"B against A: {text}.", exact=False).first
                assert said.inner_text().startswith("s3kg check FAILED")
                shown = [said]
            else:
                shown = [main.get_by_text(f"Mean CUS against #1 of demo: {text}", exact=False)]
                link = main.get_by_role("link", name="Compare it with #1, question by question")
                assert link.count() == 1
            for element in shown:
                assert _in_first_screen(element.first, size), (name, size)
            first_screen(page, artefacts() / f"{name}_{width}x{height}.png")
        assert_clean(watched, annotate_server, name)
    open_page(watched, annotate_server, "?alpha=0.5", "S3KG Workbench")
    main.get_by_role("link", name=re.compile("against #1, question by question")).first.click()
    page.get_by_role("heading", name="Run comparison", exact=True).wait_for(timeout=RENDER_MS)
    wait_idle(page, timeout_ms=RENDER_MS)
    assert re.search(r"[?&]a=1&b=2", page.url), page.url
    assert main.get_by_text(f"B against A: {text}.", exact=False).count() == 1
    assert_clean(watched, annotate_server, "overview link to the comparison")


def _release_folder(shared_data: Path, folder: Path, rows: int) -> Path:
    """A released QA run of ``rows`` rows (the released MesaQA Gemma rows, renumbered)."""
    import csv

    source = shared_data / "s3kg_release" / "qa" / "mesaqa_gemma-7b-it.csv"
    with source.open(newline="", encoding="utf-8") as fh:
        header, *body = list(csv.reader(fh))
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "mesaqa_long-import.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        for n in range(rows):
            row = list(body[n % len(body)])
            row[header.index("id")] = str(n)
            writer.writerow(row)
    return folder


_FOCUSED_LINE = re.compile(r"^Pair \d+ of ")
_SAVING = re.compile(
    r"^Saving reject for pair 1 … \(database busy: waiting \d+ s\) then confirm for pair 2, "
    r"skip for pair 3, in this order$"
)


def _pair_verdicts(page: Any) -> dict[int, str]:
    """``{pair: verdict}`` as the decision panel shows them, stepping back with K to pair 1."""
    seen: dict[int, str] = {}
    while True:
        line = page.locator('[data-testid="stMain"] p').filter(has_text=_FOCUSED_LINE)
        text = line.first.inner_text()
        k = int(text.split()[1])
        seen[k] = text.rsplit("your verdict: ", 1)[1].strip()
        if k == 1:
            return seen
        press_for_next_pair(page, "k", k - 1)


def test_keys_pressed_while_another_process_holds_the_file_judge_their_own_pairs(
    watched: Watched, annotate_server: Server, annotate_db: Path
) -> None:
    """Issue 44, item 1: another process held the write lock; Reject on pair 1, Confirm on
    pair 2 two seconds later, Skip on pair 3 two seconds after that were stored as pair 2 =
    skip, pair 3 = confirm, with no word, and nothing showed a save was pending. Now each key
    judges the pair it was pressed on, the page shows what waits to be saved (screenshots at
    1440x900 and 1280x720), and the saves land in order once the file is free."""
    page = _open_as(watched, annotate_server, "run=2&item=10", "gwen")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    shown = focused_pair(page)
    assert shown is not None and shown[0] == 1 and shown[1] >= 4, shown
    main = page.locator('[data-testid="stMain"]')
    saving = main.locator('[data-testid="stAlert"] [data-testid="stMarkdownContainer"]').filter(
        has_text=re.compile(r"^Saving ")
    )
    holder = start_lock_holder(annotate_db, hold=14.0)
    try:
        press_for_next_pair(page, "n", 2, timeout_ms=10_000)  # the page goes on at once ...
        saving.filter(has_text="Saving reject for pair 1").wait_for(timeout=10_000)  # ... saying
        page.wait_for_timeout(2000)
        press_for_next_pair(page, "y", 3, timeout_ms=10_000)
        page.wait_for_timeout(2000)
        press_for_next_pair(page, "s", 4, timeout_ms=10_000)
        line = saving.filter(has_text="skip for pair 3")
        line.wait_for(timeout=10_000)
        text = line.inner_text()
        assert _SAVING.match(text), text
        for width, height in ((1440, 900), (1280, 720)):
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(600)
            first_screen(page, artefacts() / f"annotate_saving_{width}x{height}.png")
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
    finally:
        holder.communicate(timeout=120)
    saving.first.wait_for(state="detached", timeout=120_000)  # saved: the line goes
    assert [v for _, v in _stored(annotate_db, "gwen")] == ["reject", "confirm", "skip"]
    page.reload()  # a new session reads the verdicts back from the file
    wait_idle(page, timeout_ms=RENDER_MS)
    confirm_name = page.get_by_role("button", name="I am gwen")
    if confirm_name.count():  # where the name is not kept across reloads, confirm it again
        confirm_name.click()
        wait_idle(page, timeout_ms=RENDER_MS)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    verdicts = _pair_verdicts(page)
    assert [verdicts[k] for k in (1, 2, 3)] == ["reject", "confirm", "skip"]  # each on its pair
    assert_clean(watched, annotate_server, "annotate: keys while the file is held")


def test_a_save_during_a_long_import_is_stored_without_a_traceback(
    watched: Watched, annotate_server: Server, annotate_db: Path, shared_data: Path
) -> None:
    """Issue 28, item 6: `s3kg import s3kg-release` of a 6,000-row file held the write lock for
    52.8 s (its KG cells were parsed inside the transaction), and an annotator saving meanwhile
    got a DatabaseLockedError traceback after 15 s, the verdicts lost. Now a decision that
    cannot get the file says so in one line and keeps its pair focused for a retry (screenshots
    at 1440x900 and 1280x720), and the import writes in transactions of 1,000 rows, parsing
    between them: a save during one (a 4,000-row import here) waits for it at most and is
    stored."""
    import subprocess
    import sys
    import time

    folder = _release_folder(shared_data, annotate_db.parent / "long_import", 4000)
    page = _open_as(watched, annotate_server, "run=1&item=4", "carol")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    # another process holds the file past the dashboard's 15 s of retries
    holder = start_lock_holder(annotate_db, n_rows=20, hold=24.0)
    try:
        page.keyboard.press("n")
        error = page.locator('[data-testid="stAlert"]').filter(has_text="Not saved")
        error.wait_for(timeout=120_000)
        text = error.inner_text()
        assert "is locked by another process" in text and "Press the key again" in text
        assert "Traceback" not in page.locator('[data-testid="stMain"]').inner_text()
        assert focused_pair(page) is not None and focused_pair(page)[0] == 1  # kept for a retry
        for width, height in ((1440, 900), (1280, 720)):
            page.set_viewport_size({"width": width, "height": height})
            error.scroll_into_view_if_needed()
            first_screen(page, artefacts() / f"annotate_save_locked_{width}x{height}.png")
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
    finally:
        holder.communicate(timeout=120)
    wal = Path(f"{annotate_db}.wal")
    wal.unlink(missing_ok=True)
    importer = subprocess.Popen(
        [sys.executable, "-m", "s3kg_core", "import", "s3kg-release", str(folder), "--db",
         str(annotate_db)],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while not wal.exists() and importer.poll() is None:  # its first write has begun
            assert time.monotonic() < deadline, "the import never wrote"
            time.sleep(0.05)
        assert importer.poll() is None, importer.communicate()[0]
        page.keyboard.press("n")
        # the save was asked for while the import wrote (measured at the press, not when the
        # page has redrawn: on a loaded machine the import may end before the redraw)
        saved_during_import = importer.poll() is None
        wait_for_pair(page, 2, timeout_ms=120_000)
        first_screen(page, artefacts() / "annotate_saved_during_import.png")
    finally:
        output, _ = importer.communicate(timeout=600)
    assert importer.returncode == 0, output
    assert "mesaqa_long-import.csv: mesaqa / long-import: 4000 items" in output
    assert saved_during_import, "the import ended before the save: nothing was tested"
    # the save is the page's queue's (it retries with growing pauses, up to a second): under
    # load it may get the file only after the import's last batch, so the file is read once
    # the page no longer says it is saving (regression: read at once, it was read first)
    page.get_by_text("Saving reject for pair 1").first.wait_for(state="hidden", timeout=120_000)
    assert page.locator('[data-testid="stAlert"]').filter(has_text="Not saved").count() == 0
    from s3kg_core.annotation.log import current_verdicts
    from s3kg_core.store.store import Store

    with Store(annotate_db, read_only=True).connect() as con:
        verdicts = current_verdicts(con)
    assert verdicts[verdicts["annotator"] == "carol"]["verdict"].tolist() == ["reject"]
    assert_clean(watched, annotate_server, "annotate during an import")


def test_a_partial_run_is_marked_on_every_page_that_shows_its_numbers(
    watched: Watched, annotate_server: Server, annotate_db: Path
) -> None:
    """Issue 28, item 7: a run whose scoring is in progress or stopped is marked in the first
    screen of Overview, Run comparison, Sample explorer and Failure analysis, at 1440x900 and
    1280x720 (screenshots: ``<page>_partial_<w>x<h>.png``)."""
    import duckdb

    con = duckdb.connect(str(annotate_db))
    try:  # the demo's run 1 as a stopped `s3kg score` leaves it: 4 of its 30 answers unscored
        con.execute("DELETE FROM scores WHERE run_id = 1 AND item_id IN (SELECT item_id "
                    "FROM scores WHERE run_id = 1 ORDER BY item_id DESC LIMIT 4)")  # fmt: skip
    finally:
        con.close()
    page = watched.page
    pages = [
        ("", "S3KG Workbench", "overview"),
        ("Run_comparison", "Run comparison", "run_comparison"),
        ("Sample_explorer?run=1", "Sample explorer", "sample_explorer"),
        ("Failure_analysis", "Failure analysis (TAU)", "failure_analysis"),
    ]
    for path, title, name in pages:
        page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
        open_page(watched, annotate_server, path, title)
        for width, height in ((1440, 900), (1280, 720)):  # one load, both sizes
            page.set_viewport_size({"width": width, "height": height})
            page.wait_for_timeout(500)
            note = page.locator('[data-testid="stAlert"]').filter(has_text="Partial run")
            note.first.wait_for(timeout=RENDER_MS)
            assert note.count() == 1, name
            assert "(run 1): 26 of 30 answers scored" in note.inner_text(), note.inner_text()
            box = note.bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height, name
            first_screen(page, artefacts() / f"{name}_partial_{width}x{height}.png")
        assert_clean(watched, annotate_server, f"partial run on {name}")
    page.set_viewport_size({"width": VIEWPORT[0], "height": VIEWPORT[1]})
    open_page(watched, annotate_server, "", "S3KG Workbench")
    screenshot(page, artefacts() / "overview_partial.png")
