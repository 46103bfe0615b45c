"""Benchmark the Annotate page by keyboard: decisions per second and key-to-next-pair latency.

What is measured
----------------
The dashboard (``streamlit run app.py``) on a copy of the demo database (``--db``, default: a
demo database built in a temporary folder), driven by headless Chromium. The annotator
confirms their name (the one click), then makes ``--decisions`` decisions by keyboard alone on
the demo answer with the most units (``Y`` confirm and ``N`` reject in turn; ``I`` for the next
answer when one is done): each key press is one saved decision (the verdict log, its own
transaction) and moves the focus to the next pair.

- *key to next pair focused*: from the key press (Playwright's ``keyboard.press``) until the
  page shows the next pair as focused ("Pair k of n"), per decision: median and p95, ms;
- *wall time*: from the first key press until the last decision's next pair is focused,
  page reruns included, s;
- every decision is then looked up in the database file (``stored``): nothing is counted
  that was not saved.

The first key press of a session also warms Streamlit's caches: ``--warmup`` decisions (on
another answer) are made first and not counted. Wall-clock figures are only comparable on an
otherwise idle machine: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import bench_environment, load_average, write_figures
from tests.browser_helpers import (
    chromium,
    focused_pair,
    press_for_next_pair,
    streamlit_server,
    wait_idle,
)

__all__ = ["main"]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _stored(db: Path, annotator: str) -> int:
    from s3kg_core.annotation.log import current_verdicts
    from s3kg_core.store.store import Store

    with Store(db, read_only=True).connect() as con:
        return len(current_verdicts(con, annotator=annotator))


def _decide(page: Any, n: int, key_of: Any) -> list[float]:
    """``n`` decisions by key; the seconds from each press to the next pair focused."""
    times = []
    for d in range(n):
        shown = focused_pair(page)
        if shown is None:
            raise RuntimeError("no focused pair on the page")
        k, total = shown
        if k == total:  # the answer's last pair: decide it, then the next answer by key
            page.keyboard.press(key_of(d))
            wait_idle(page, settle_ms=200)
            times.append(press_for_next_pair(page, "i", 1))
            continue
        times.append(press_for_next_pair(page, key_of(d), k + 1))
    return times


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, help="a demo database to copy (default: build one)")
    parser.add_argument("--decisions", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--run", type=int, default=1)
    parser.add_argument("--item", type=int, default=6, help="the answer judged (demo: 23 units)")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    load_before = load_average()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "s3kg.duckdb"
        if args.db is not None:
            shutil.copy(args.db, db)
        else:
            from dashboard.data.writes import ensure_database

            ensure_database(db)
        with (
            streamlit_server(db, Path(folder) / "streamlit.log") as srv,
            chromium((1440, 900)) as page,
        ):
            page.set_default_timeout(180_000)
            # warm-up on another answer, by another annotator: caches, the first fragment run
            page.goto(f"{srv.url}/Annotate?run={args.run}&item=4&annotator=warmup")
            page.get_by_role("button", name="I am warmup").click()
            wait_idle(page, timeout_ms=180_000)
            _decide(page, args.warmup, lambda d: "s")
            page.goto(f"{srv.url}/Annotate?run={args.run}&item={args.item}&annotator=kb")
            page.get_by_role("button", name="I am kb").click()
            wait_idle(page, timeout_ms=180_000)
            start = time.perf_counter()
            times = _decide(page, args.decisions, lambda d: "y" if d % 2 == 0 else "n")
            wall = time.perf_counter() - start
            stored = _stored(db, "kb")
    figures = {
        "decisions": args.decisions,
        "stored": stored,
        "wall_s": round(wall, 2),
        "key_to_next_pair_ms": {
            "p50": round(1000 * statistics.median(times), 1),
            "p95": round(1000 * _percentile(times, 0.95), 1),
            "max": round(1000 * max(times), 1),
        },
        "targets": {"wall_s": 20, "p50_ms": 300},
        "environment": bench_environment(load_before),
    }
    print(
        f"{args.decisions} decisions by keyboard: {wall:.2f} s wall (target < 20 s); key to "
        f"next pair focused p50 {figures['key_to_next_pair_ms']['p50']:.0f} ms, p95 "
        f"{figures['key_to_next_pair_ms']['p95']:.0f} ms, max "
        f"{figures['key_to_next_pair_ms']['max']:.0f} ms (target p50 < 300 ms); "
        f"{stored} of {args.decisions} found in the database"
    )
    print(f"load average before: {load_before}; after: {load_average()}")
    write_figures(args.json, figures)
    return figures


if __name__ == "__main__":
    main()
