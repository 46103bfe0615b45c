"""The Overview and the Sample explorer's picker on a large database (issue 33).

What is measured
----------------
On a copy of a scored database (``bench/speed/bench_scale.py`` builds 20,000 and 100,000
answers), with every Streamlit cache empty:

* *functions* (outside Streamlit, the dashboard's own loaders in this process): the Overview's
  first visit (runs, components, partial runs, the ranked leaderboard, its table and the run
  chart), one alpha step (a new alpha's leaderboard, table and chart), the Distributions chart,
  the explorer's first visit (its picker page and first case) and a picker search. The same
  script runs against another checkout for before / after figures (``-P`` leaves the current
  folder off the path, so ``PYTHONPATH`` decides whose ``dashboard`` is timed:
  ``PYTHONPATH=../other:. python -P bench/speed/bench_overview_scale.py --db ...``): a figure
  that checkout cannot build (no paged picker) is skipped.
* *browser* (``--browser``): headless Chromium at 1440x900 on a fresh server; the Overview's
  first visit (until "Mean CUS" shows and the script has finished), three alpha steps (until
  the signature caption names the new alpha), the explorer's first visit and a picker search.
  ``--shots DIR`` saves the Overview and the explorer at 1440x900 and 1280x720.

Usage::

    python -m bench.speed.bench_overview_scale --db /tmp/copy_of_scale_100000.duckdb
    python -m bench.speed.bench_overview_scale --db /tmp/copy.duckdb --browser --shots /tmp/shots
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``fn`` took, and what it returned."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def functions(db: Path) -> dict[str, float]:
    """The Overview's and the picker's work outside Streamlit, cold caches; seconds each."""
    from dashboard import charts, leaderboard
    from dashboard.data import explain, reads, search
    from dashboard.data.database import View, clear_caches, db_stamp

    file = View(db, db_stamp(db))
    signature = reads.signatures(file)[1]
    if signature is None:
        raise SystemExit(f"{db} holds no scores")
    view = View(db, file.stamp, signature)
    out: dict[str, float] = {}

    def overview(alpha: float) -> None:
        runs = reads.load_runs(view)
        partial = reads.partial_runs(view)
        board = reads.ranked(view, alpha, "cus")
        leaderboard.table(board, runs, partial, "cus", alpha)
        means = reads.mark_partial(board, runs, partial)
        charts.leaderboard_figure(charts.top_runs(means, charts.TOP_RUNS)).to_json()

    out["overview first visit"], _ = timed(lambda: overview(0.5))
    steps = [timed(lambda a=a: overview(a))[0] for a in (0.55, 0.6, 0.65)]
    out["alpha step (median of 3)"] = statistics.median(steps)

    def distributions() -> int:
        hist = reads.score_histograms(view, 0.6, "cus", None)
        return len(charts.distribution_figure(hist, "cus").to_json())

    out["distributions chart"], size = timed(distributions)
    out["distributions chart MB"] = size / 1e6
    run_id = reads.scored_runs(view)[0]

    def picker(text: str) -> int:
        rows, _ = search.question_page(view, run_id, 0.5, text, 0.0, 1.0, 0)
        return len(rows)

    def explorer() -> None:
        out["explorer: picker's first page"], _ = timed(lambda: picker(""))
        first = int(reads.run_components(view, run_id)["item_id"].iloc[0])
        reads.item_view(view, run_id, first)
        explain.explorer_case(view, run_id, first, 0.65)

    clear_caches()
    reads.run_summaries(view, 0.5)  # the Overview's read, before the explorer's
    out["explorer first visit (after Overview)"], _ = timed(explorer)
    out["picker search"], _ = timed(lambda: picker("what is"))
    return out


def browser(db: Path, shots: Path | None) -> dict[str, float]:
    """The same in headless Chromium at 1440x900 on a fresh server; seconds each."""
    from bench.speed.bench_dashboard import RENDER_MS, alpha_round_trips
    from tests.browser_helpers import APP_IDLE, chromium, streamlit_server, wait_idle

    out: dict[str, float] = {}
    log = Path("/tmp") / f"bench_overview_{db.stem}.log"
    with streamlit_server(db, log) as server, chromium((1440, 900)) as page:
        page.set_default_timeout(RENDER_MS)
        t0 = time.perf_counter()
        page.goto(server.url, timeout=RENDER_MS)
        page.get_by_text("Mean CUS", exact=True).wait_for()
        page.wait_for_selector(APP_IDLE)
        out["overview first visit"] = time.perf_counter() - t0
        wait_idle(page)
        out["alpha step (median of 3)"] = statistics.median(alpha_round_trips(page, 3))
        if shots:
            for size in ((1440, 900), (1280, 720)):
                page.set_viewport_size({"width": size[0], "height": size[1]})
                wait_idle(page)
                page.screenshot(path=str(shots / f"overview_{db.stem}_{size[0]}.png"))
                chart = page.locator('[data-testid="stPlotlyChart"]').first
                chart.scroll_into_view_if_needed()
                page.screenshot(path=str(shots / f"overview_{db.stem}_{size[0]}_runs.png"))
            page.get_by_text("Distributions", exact=True).click(timeout=20_000)
            wait_idle(page)
            page.locator('[data-testid="stPlotlyChart"]').first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots / f"overview_{db.stem}_1280_dist.png"))
            page.set_viewport_size({"width": 1440, "height": 900})
        t0 = time.perf_counter()
        page.goto(f"{server.url}/Sample_explorer", timeout=RENDER_MS)
        page.get_by_role("heading", name="Sample explorer", exact=True).wait_for()
        page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first.wait_for()
        page.wait_for_selector(APP_IDLE)
        out["explorer first visit"] = time.perf_counter() - t0
        wait_idle(page)
        if shots:
            for size in ((1440, 900), (1280, 720)):
                page.set_viewport_size({"width": size[0], "height": size[1]})
                wait_idle(page)
                page.screenshot(path=str(shots / f"explorer_{db.stem}_{size[0]}.png"))
        find = page.get_by_role("button", name="Find")
        if find.count():
            find.click()
            box = page.get_by_role("textbox", name="Search")
            box.fill("what is")
            t0 = time.perf_counter()
            box.press("Enter")
            page.wait_for_timeout(50)
            page.wait_for_selector(APP_IDLE)
            out["picker search"] = time.perf_counter() - t0
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="a COPY of a scored database")
    parser.add_argument("--browser", action="store_true", help="also time it in Chromium")
    parser.add_argument("--shots", type=Path, help="save screenshots here (with --browser)")
    args = parser.parse_args(argv)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    rows = functions(args.db)
    if args.browser:
        if args.shots:
            args.shots.mkdir(parents=True, exist_ok=True)
        rows.update({f"browser: {k}": v for k, v in browser(args.db, args.shots).items()})
    for name, value in rows.items():
        unit = "" if name.endswith("MB") else " s"
        print(f"{name:<45} {value:8.3f}{unit}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
