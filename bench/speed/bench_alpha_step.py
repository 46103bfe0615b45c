"""The alpha step in Chromium: the numbers in the browser against the server's rerun, per page.

Issue 60: a step of the sidebar's alpha slider took 106-271 ms to show its numbers, the time of
a Streamlit rerun and redraw. The Overview's figures, note and leaderboard are live blocks
(``dashboard/live_alpha.py``) that show the slider's stop in the browser, and so are the Sample
explorer's scores, the Search page's count of a score range, the Failure analysis's counts
per run, the Run comparison's and the Run details' figures (:data:`PAGES`). This benchmark
opens each page (``--pages``) on a copy of ``--db`` (headless Chromium at 1440x900, the
dashboard as ``streamlit run app.py``) and presses the arrow keys on the slider ``--steps``
times (right to 1, then left to 0, and so on), waiting for the page to be idle between two
presses. For each press it reads, in the page's own clock (``performance.now``), the time from
the key's event to

* *live*: the page's live block drawn at the new alpha by the browser (before the server hears
  of it: the block's draw log, ``__s3kgLiveAlpha.drawn``);
* *server*: the block drawn again with the server's numbers at that alpha (the rerun that
  follows, as every number came before issue 60: the reference of the same run).

It prints the median, the 95th percentile and the largest of each, and their ratio. Both come
from one run, press by press, so a busy machine slows both.

Usage::

    python -m bench.speed.bench_alpha_step --db s3kg.duckdb [--steps 20] [--pages overview,explorer]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench._common import print_load, write_evidence

KEYDOWNS = """
window.__s3kgKeys = [];
document.addEventListener("keydown", (e) => window.__s3kgKeys.push(e.timeStamp), true);
"""

DRAWN = """([kind, alpha, server, after]) => {
  const log = (globalThis.__s3kgLiveAlpha || {drawn: []}).drawn;
  const hit = log.find((d) => d.kind === kind && d.alpha === alpha && d.server === server
                              && d.at >= after);
  return hit ? hit.at : null;
}"""

PAGES = {
    "overview": ("", "table"),
    "explorer": ("Sample_explorer", "metrics"),
    "search": ("Search?range=0.3-0.6", "note"),
    "failure": ("Failure_analysis", "table"),
    "compare": ("Run_comparison", "metrics"),
    "run": ("Run", "metrics"),
}
"""The pages timed: their path and the kind of the live block whose draws are timed (the
leaderboard, the explorer's scores, the count of the search's score range, the Failure
analysis's counts per run, the Run comparison's figures of its default pair, the Run details'
figures of its default run)."""


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values``, by linear interpolation.

    Examples
    --------
    >>> percentile([1.0, 2.0, 3.0, 4.0], 0.5)
    2.5
    """
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summary(ms: list[float]) -> dict[str, float]:
    """Median, 95th percentile and largest of ``ms``."""
    return {
        "p50_ms": statistics.median(ms),
        "p95_ms": percentile(ms, 0.95),
        "max_ms": max(ms),
        "n": len(ms),
    }


def steps_on(page: Any, n: int, kind: str = "table") -> tuple[list[float], list[float]]:
    """Press the arrow keys on the alpha slider ``n`` times; each press's live and server ms
    (the draws of the page's live block of ``kind``)."""
    from dashboard.live_alpha import GRID
    from dashboard.url_state import ALPHA_STEP
    from tests.browser_helpers import wait_idle

    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    live, server = [], []
    direction = "ArrowRight"
    for _ in range(n):
        alpha = float(slider.input_value())
        if (direction == "ArrowRight" and alpha >= GRID[-1]) or (
            direction == "ArrowLeft" and alpha <= GRID[0]
        ):
            direction = "ArrowLeft" if direction == "ArrowRight" else "ArrowRight"
        wanted = alpha + (ALPHA_STEP if direction == "ArrowRight" else -ALPHA_STEP)
        target = min(GRID, key=lambda g: abs(g - wanted))
        slider.focus()
        pressed = len(page.evaluate("() => window.__s3kgKeys"))
        page.keyboard.press(direction)
        page.wait_for_function(f"() => window.__s3kgKeys.length > {pressed}")
        down = page.evaluate(f"() => window.__s3kgKeys[{pressed}]")
        drawn = page.wait_for_function(DRAWN, arg=[kind, target, False, down]).json_value()
        redrawn = page.wait_for_function(DRAWN, arg=[kind, target, True, down], timeout=120_000)
        live.append(drawn - down)
        server.append(redrawn.json_value() - down)
        wait_idle(page, timeout_ms=120_000)
    return live, server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a scored database (copied)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None, help="write the figures as evidence")
    parser.add_argument(
        "--pages", default=",".join(PAGES), help=f"pages to time, of {', '.join(PAGES)}"
    )
    args = parser.parse_args()
    names = [p for p in args.pages.split(",") if p]
    unknown = [p for p in names if p not in PAGES]
    if unknown or not names:
        parser.error(f"--pages takes {', '.join(PAGES)}; got {args.pages!r}")

    from tests.browser_helpers import chromium, streamlit_server, wait_idle

    print_load()
    timed: dict[str, tuple[list[float], list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "s3kg.duckdb"
        shutil.copy(args.db, db)
        log = Path(tmp) / "streamlit.log"
        with streamlit_server(db, log, timeout=300) as srv, chromium((1440, 900)) as page:
            page.context.add_init_script(KEYDOWNS)
            for name in names:
                path, kind = PAGES[name]
                page.goto(f"{srv.url}/{path}", timeout=300_000)
                page.locator(f'[data-kind="{kind}"]').first.wait_for(timeout=300_000)
                wait_idle(page, timeout_ms=300_000)
                timed[name] = steps_on(page, args.steps, kind)
    print_load()
    pages: dict[str, Any] = {}
    print(f"{'alpha step, key to numbers':<40}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}")
    for name, (live, server) in timed.items():
        row: dict[str, Any] = {"live": summary(live), "server": summary(server)}
        row["ratio_p50"] = row["server"]["p50_ms"] / row["live"]["p50_ms"]
        pages[name] = row
        for which in ("live", "server"):
            s = row[which]
            label = f"{name}: " + ("browser (live block)" if which == "live" else "server rerun")
            print(f"{label:<40}{s['p50_ms']:>10.1f}{s['p95_ms']:>10.1f}{s['max_ms']:>10.1f}")
        print(f"{name}: the browser shows the numbers {row['ratio_p50']:.0f}x sooner (medians)")
    figures = {"answers_db": str(args.db.name), "steps": args.steps, "pages": pages}
    if args.json is not None:
        write_evidence(
            args.json,
            figures,
            title="The alpha step in Chromium, page by page: live block against the server's "
            "rerun (bench_alpha_step.py)",
        )
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
