"""The dashboard as a new user meets it: the first start, and one alpha step, in the browser.

What is measured (headless Debian Chromium through playwright, 1440 x 900):

(a) *first start*: ``streamlit run app.py`` on a database file that does not exist yet, so the
    dashboard builds the demo database (``data/demo/``) as ``make run`` on a fresh checkout
    does (install time excluded). The clock starts when the server process is launched; the
    browser opens the overview as soon as ``/_stcore/health`` answers. Reported: seconds to the
    server's health, to the page title on screen (with the build's steps, ``st.status``), to
    the overview's "Mean CUS" on screen (a usable overview), and to the page idle. Repeated
    ``--repeats`` times, each a fresh server, database and browser session.
(b) *alpha steps*: on the database (a) built, the alpha slider moved one step with the keyboard,
    ``--steps`` times, on the Overview and on the Sample explorer: milliseconds until the new
    number is on screen (the overview's Mean CUS, the explorer's CUS metric; both computed
    from alpha) and until the page is idle again (Streamlit's script state ``notRunning`` and
    no "Running" widget). p50 and p95.

``bench/speed/bench_demo_build.py`` says where the build's time goes, part by part. Wall-clock
figures are only comparable on an otherwise idle machine: the load average is printed before and
after.

Usage::

    python -m bench.speed.bench_first_start --repeats 2 --steps 20
    python -m bench.speed.bench_first_start --repeats 0 --db data/s3kg.duckdb   # (b) only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._common import load_average
from tests.browser_helpers import (
    APP_IDLE,
    CHROMIUM,
    STATUS_WIDGET,
    streamlit_server,
)

REPO = Path(__file__).resolve().parents[2]

RENDER_MS = 300_000
VIEWPORT = {"width": 1440, "height": 900}

METRIC_JS = """(label) => {
  for (const m of document.querySelectorAll('[data-testid="stMetric"]')) {
    const l = m.querySelector('[data-testid="stMetricLabel"]');
    const v = m.querySelector('[data-testid="stMetricValue"]');
    if (l && v && l.innerText.trim() === label) return v.innerText.trim();
  }
  return null;
}"""

CHANGED_JS = f"""([label, before]) => {{
  const value = ({METRIC_JS})(label);
  return value !== null && value !== before;
}}"""

IDLE_JS = f"""() => !!document.querySelector('{APP_IDLE}')
  && !document.querySelector('{STATUS_WIDGET}')"""


def pct(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, linear between points."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[round(q * 100) - 1]


def first_start(browser: Any, db: Path, log: Path) -> dict[str, float]:
    """(a) One first start on the missing ``db``: seconds from launch to each milestone."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RENDER_MS)
    t0 = time.perf_counter()
    with streamlit_server(db, log, timeout=300, first_start=True) as srv:
        healthy = time.perf_counter() - t0
        page.goto(srv.url, timeout=RENDER_MS)
        page.get_by_role("heading", name="S3KG Workbench", exact=True).wait_for()
        titled = time.perf_counter() - t0
        page.wait_for_function(f"() => ({METRIC_JS})('Mean CUS') !== null", polling=50)
        usable = time.perf_counter() - t0
        page.wait_for_function(IDLE_JS, polling=50)
        idle = time.perf_counter() - t0
        if page.locator('[data-testid="stException"]').count():
            raise RuntimeError(page.locator('[data-testid="stException"]').first.inner_text())
        steps = page.locator('[data-testid="stStatusWidget"], [data-testid="stExpander"]').count()
    context.close()
    return {
        "health_s": healthy,
        "title_s": titled,
        "overview_s": usable,
        "idle_s": idle,
        "status_blocks": float(steps),
    }


def alpha_steps(page: Any, metric: str, steps: int) -> list[tuple[float, float]]:
    """(b) Move the sidebar's alpha one step ``steps`` times (right, then back left); for each,
    ms until ``metric`` shows a new value and until the page is idle."""
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    out = []
    for n in range(steps):
        before = page.evaluate(METRIC_JS, metric)
        slider.focus()
        t0 = time.perf_counter()
        page.keyboard.press("ArrowRight" if (n // 5) % 2 == 0 else "ArrowLeft")
        page.wait_for_function(CHANGED_JS, arg=[metric, before], polling="raf")
        shown = time.perf_counter() - t0
        page.wait_for_function(IDLE_JS, polling="raf")
        idle = time.perf_counter() - t0
        out.append((shown * 1000, idle * 1000))
        page.wait_for_timeout(300)
    return out


def open_page(browser: Any, url: str, heading: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    page.set_default_timeout(RENDER_MS)
    page.goto(url, timeout=RENDER_MS)
    page.get_by_role("heading", name=heading, exact=True).wait_for()
    page.wait_for_function(IDLE_JS, polling=100)
    page.wait_for_timeout(1500)
    return context, page


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2, help="first starts for (a)")
    parser.add_argument("--steps", type=int, default=20, help="alpha steps per page for (b)")
    parser.add_argument(
        "--db", type=Path, help="for (b): a copy of this demo database (default: the one (a) built)"
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if args.repeats < 1 and args.db is None:
        parser.error("--repeats 0 needs --db (the database for the alpha steps)")
    from playwright.sync_api import sync_playwright

    figures: dict[str, Any] = {"load": [load_average()], "first_start": [], "alpha": {}}
    with tempfile.TemporaryDirectory(prefix="bench_first_start_") as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            db = Path(tmp) / "run0" / "s3kg.duckdb"
            for r in range(args.repeats):
                db = Path(tmp) / f"run{r}" / "s3kg.duckdb"
                db.parent.mkdir(parents=True)
                figures["first_start"].append(first_start(browser, db, Path(tmp) / f"{r}.log"))
                figures["load"].append(load_average())
            if args.db is not None:
                db = Path(tmp) / "given" / "s3kg.duckdb"
                db.parent.mkdir()
                shutil.copy(args.db, db)
            with streamlit_server(db, Path(tmp) / "alpha.log", timeout=300) as srv:
                for name, path, heading, metric in (
                    ("Overview", "", "S3KG Workbench", "Mean CUS"),
                    ("Sample explorer", "Sample_explorer?run=2&item=9", "Sample explorer", "CUS"),
                ):
                    context, page = open_page(browser, f"{srv.url}/{path}", heading)
                    figures["alpha"][name] = alpha_steps(page, metric, args.steps)
                    context.close()
            figures["load"].append(load_average())
        finally:
            browser.close()

    print(f"{os.cpu_count()} CPUs, load {' -> '.join(figures['load'])}")
    print("(a) first start on a missing database, seconds from launching streamlit")
    print("    run  health  title  overview (Mean CUS)  idle")
    for r, f in enumerate(figures["first_start"]):
        print(
            f"    {r:>3}  {f['health_s']:6.1f}  {f['title_s']:5.1f}  {f['overview_s']:19.1f}"
            f"  {f['idle_s']:4.1f}"
        )
    print(f"(b) one alpha step in the browser, {args.steps} steps per page, ms")
    print("    page              new number p50 / p95   page idle p50 / p95")
    for name, rows in figures["alpha"].items():
        shown, idle = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"    {name:<16}  {pct(shown, 0.5):8.0f} / {pct(shown, 0.95):5.0f}"
            f"        {pct(idle, 0.5):8.0f} / {pct(idle, 0.95):5.0f}"
        )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
