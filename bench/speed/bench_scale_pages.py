"""Every dashboard page timed on a scale database (issue 33): first and second visit, interactions.

What is measured
----------------
The database (``--db``, one that ``bench/speed/bench_scale.py`` built) is copied to a temporary
folder first: the server may write to its copy (never to the original). The dashboard runs on
the copy (``streamlit run app.py``, no file watcher) and headless Chromium (``/usr/bin/chromium``)
at ``--viewport`` (1440x900) tours the pages in the sidebar's order:

* *first visit*: seconds from navigating to the page until its title (the main area's
  heading) is rendered and Streamlit is idle (the script has finished, the status widget is
  gone and no element is still a grey placeholder, and it stays so for ``--settle`` ms; the
  settle time is not counted). Pages visited earlier in the tour have filled the caches they
  share (the tour is what a person does); ``--pages`` limits the tour;
* *second visit*: the same page opened again (a new script run on warm caches);
* interactions, each timed until idle again: the Failure analysis share slider 5 -> 6 % and
  then to 20 % (keyboard steps; the jump is timed until its cases show, those explained so
  far under a progress bar, and until all are explained: :func:`share_jump`); the sidebar
  alpha one step right on the Overview, the Sample explorer and the Run comparison; a run
  switch in the Sample explorer's run picker (the next run) and a search of its question
  picker (*Find*, "headache"); the next question in the Run comparison's question picker; on
  Annotate a verdict saved (a name typed, *Confirm* clicked) and the Overview's next visit
  after it (the caches the save kept: :func:`save_verdict`). The time until an alpha step's
  numbers show is ``bench_alpha_step.py``'s: since issue 60 the browser draws them before the
  server's rerun (the tour's *alpha step, numbers shown*, dropped, waited for a text the pages
  no longer show).

The server's peak resident memory (its whole process tree, sampled with ``psutil`` every
0.2 s) is reported, and a screenshot of every page (the viewport, after its first visit) goes
to ``--shots`` (``bench/out/scale/shots``), plus one at each of ``--also`` viewports on the
warm server.

Usage::

    python -m bench.speed.bench_scale_pages --db bench/out/scale/scale_20000_0.duckdb
    python -m bench.speed.bench_scale_pages --db bench/out/scale/scale_100000_0.duckdb \\
        --pages failure_analysis,overview --json evidence/scale_pages.json --as after

``--json`` adds the run to an evidence file (``docsgen/evidence.py``) as
``figures["databases"][N][AS]`` (N: the database's answers; ``--as``: ``after``, the default,
or ``before`` for the run it is compared with), with the database's size, the date, commit
and load average before and after; the other entries of the file are kept, and
``docsgen/speed.py`` renders one row per database, page and step.
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._common import (
    REPO,
    bench_environment,
    git_commit,
    load_average,
    md_table,
    read_evidence,
    update_evidence,
)
from dashboard.navigation import OLD_KEYS, PAGES
from tests.browser_helpers import (
    APP_IDLE,
    STATUS_WIDGET,
    chromium,
    streamlit_server,
)

TIMEOUT_MS = 300_000


class PeakMemory:
    """The peak resident memory (GB) of a process and its children, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        import psutil

        self._root = psutil.Process(pid)
        self._every = every
        self.peak_gb = 0.0
        self.now_gb = 0.0
        self._stop = threading.Event()
        self._sample_once()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample_once(self) -> bool:
        """Read the tree's resident memory now; ``False`` once the process is gone."""
        import psutil

        try:
            procs = [self._root, *self._root.children(recursive=True)]
        except psutil.Error:
            return False
        total = 0
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                continue
        self.now_gb = total / 1e9
        self.peak_gb = max(self.peak_gb, self.now_gb)
        return True

    def _sample(self) -> None:
        while not self._stop.is_set() and self._sample_once():
            self._stop.wait(self._every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


SKELETON = '[data-testid="stSkeleton"]'


def drawn(page: Any) -> bool:
    """Streamlit is idle (script done, no status widget) and no element is still a placeholder.

    Streamlit shows a grey placeholder (``stSkeleton``) where an element's code is still being
    loaded by the browser (tables, charts, segmented controls on a page's first visit in a new
    browser): the script can be done seconds before the page can be read.
    """
    if page.locator(APP_IDLE).count() == 0 or page.locator(STATUS_WIDGET).is_visible():
        return False
    skeletons = page.locator(SKELETON)
    return not any(skeletons.nth(i).is_visible() for i in range(skeletons.count()))


def settle(page: Any, t0: float, settle_ms: float, timeout_ms: float = TIMEOUT_MS) -> float:
    """Seconds from ``t0`` until Streamlit went idle for good (idle ``settle_ms`` in a row)."""
    deadline = time.monotonic() + timeout_ms / 1000
    quiet_since: float | None = None
    while True:
        now = time.perf_counter()
        if drawn(page):
            quiet_since = quiet_since or now
            if (now - quiet_since) * 1000 >= settle_ms:
                return quiet_since - t0
        else:
            quiet_since = None
        if time.monotonic() > deadline:
            raise TimeoutError(f"still busy after {timeout_ms / 1000:g} s")
        page.wait_for_timeout(50)


def visit(page: Any, url: str, settle_ms: float) -> float:
    """Open ``url``; seconds until the page's title shows and Streamlit is idle."""
    t0 = time.perf_counter()
    page.goto(url, timeout=TIMEOUT_MS)
    page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=TIMEOUT_MS)
    return settle(page, t0, settle_ms)


def keys(page: Any, locator: Any, presses: list[str], settle_ms: float) -> float:
    """Focus ``locator``, press ``presses``; seconds until idle again."""
    locator.focus()
    t0 = time.perf_counter()
    for key in presses:
        page.keyboard.press(key)
    return settle(page, t0, settle_ms)


PROGRESS = '[data-testid="stMain"] [data-testid="stProgress"]'


def share_jump(page: Any, slider: Any, presses: int, settle_ms: float) -> dict[str, float]:
    """Move the Failure analysis share ``slider`` ``presses`` steps right, timed twice.

    *cases shown*: until the page shows its cases, either all of them (Streamlit idle) or
    those explained so far under a progress bar (the rest explained in the background);
    *all explained*: until the progress bar is gone and Streamlit is idle for ``settle_ms``.
    """
    slider.focus()
    t0 = time.perf_counter()
    for _ in range(presses):
        page.keyboard.press("ArrowRight")
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        now = time.perf_counter()
        if page.locator(PROGRESS).count() and page.locator(PROGRESS).first.is_visible():
            shown = now - t0
            break
        quiet_since = (quiet_since or now) if drawn(page) else None
        if quiet_since is not None and (now - quiet_since) * 1000 >= settle_ms:
            shown = quiet_since - t0
            break
        page.wait_for_timeout(50)
    else:
        raise TimeoutError(f"no cases after {TIMEOUT_MS / 1000:g} s")
    page.locator(PROGRESS).first.wait_for(state="detached", timeout=TIMEOUT_MS)
    return {"cases shown": shown, "all explained": settle(page, t0, settle_ms)}


def pick_next(page: Any, label: str, settle_ms: float) -> float:
    """Open the select box ``label`` in the main area, choose the option after the current."""
    box = page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text=label)
    box.first.locator("input").click()
    page.keyboard.press("ArrowDown")
    t0 = time.perf_counter()
    page.keyboard.press("Enter")
    return settle(page, t0, settle_ms)


def search(page: Any, word: str, settle_ms: float) -> float:
    """Open the Sample explorer's *Find* popover, search ``word``: seconds until idle."""
    page.locator('[data-testid="stMain"]').get_by_role("button", name="Find").click()
    box = page.get_by_label("Search", exact=True)
    box.fill(word)
    t0 = time.perf_counter()
    box.press("Enter")
    return settle(page, t0, settle_ms)


def save_verdict(page: Any, settle_ms: float) -> dict[str, float]:
    """On Annotate: type a name, confirm the current pair, then open the Overview again.

    *save*: seconds from the click on *Confirm* until the page counts the decision and is idle
    (the verdict written to the file);
    *Overview after the save*: its next visit, on the caches the save kept (issue 33: one
    saved annotation threw every cache away).
    """
    name = page.get_by_label("Your name", exact=True)
    name.fill("bench")
    name.press("Enter")
    settle(page, time.perf_counter(), settle_ms)
    button = page.locator('[data-testid="stMain"] button').filter(has_text="Confirm").first
    t0 = time.perf_counter()
    button.click()
    page.get_by_text("1 decided by you", exact=False).first.wait_for(timeout=TIMEOUT_MS)
    saved = settle(page, t0, settle_ms)
    base = "/".join(page.url.split("/")[:3])
    return {"save": saved, "Overview after the save": visit(page, base, settle_ms)}


def interactions(
    key: str, page: Any, settle_ms: float
) -> dict[str, Callable[[], float | dict[str, float]]]:
    """The interactions timed on page ``key``, by name."""
    alpha = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    share = page.locator('[data-testid="stMain"]').get_by_role("slider").first
    steps: dict[str, dict[str, Callable[[], float | dict[str, float]]]] = {
        "overview": {
            "alpha step": lambda: keys(page, alpha, ["ArrowRight"], settle_ms),
        },
        "explorer": {
            "alpha step": lambda: keys(page, alpha, ["ArrowRight"], settle_ms),
            "run switch": lambda: pick_next(page, "Run", settle_ms),
            "picker search": lambda: search(page, "headache", settle_ms),
        },
        "compare": {
            "alpha step": lambda: keys(page, alpha, ["ArrowRight"], settle_ms),
            "question pick": lambda: pick_next(page, "Question (", settle_ms),
        },
        "failure_analysis": {
            "share 5->6 %": lambda: keys(page, share, ["ArrowRight"], settle_ms),
            "share 6->20 %": lambda: share_jump(page, share, 14, settle_ms),
        },
        "annotate": {"verdict": lambda: save_verdict(page, settle_ms)},
    }
    return steps.get(key, {})


def run(opts: argparse.Namespace) -> dict[str, Any]:
    keys = {OLD_KEYS.get(k, k) for k in opts.pages.split(",")} if opts.pages else set()
    wanted = [p for p in PAGES if not keys or p.key in keys]
    width, height = (int(x) for x in opts.viewport.split("x"))
    opts.shots.mkdir(parents=True, exist_ok=True)
    load_before = load_average()
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="scale_pages_") as tmp:
        db = Path(tmp) / opts.db.name
        shutil.copy(opts.db, db)
        wal = Path(f"{opts.db}.wal")
        if wal.exists():
            shutil.copy(wal, Path(f"{db}.wal"))
        with streamlit_server(db, Path(tmp) / "server.log", timeout=300) as server:
            memory = PeakMemory(server.proc.pid)
            start_gb = memory.now_gb
            with chromium((width, height)) as page:
                page.set_default_timeout(TIMEOUT_MS)
                for spec in wanted:
                    url = f"{server.url}/{spec.url_path}"
                    row = rows.setdefault(spec.key, {"page": spec.title})
                    try:
                        row["first"] = visit(page, url, opts.settle)
                        page.screenshot(path=opts.shots / f"{spec.key}_{width}x{height}.png")
                        row["second"] = visit(page, url, opts.settle)
                        for name, act in interactions(spec.key, page, opts.settle).items():
                            timed = act()
                            if isinstance(timed, dict):  # one step, several moments
                                row.update({f"{name}, {k}": v for k, v in timed.items()})
                            else:
                                row[name] = timed
                    except Exception as exc:  # a page that fails is a figure too
                        row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
                    row["rss_gb"] = memory.now_gb
                    print(_line(row), flush=True)
            for size in opts.also.split(",") if opts.also else []:
                w, h = (int(x) for x in size.split("x"))
                with chromium((w, h)) as page:
                    page.set_default_timeout(TIMEOUT_MS)
                    for spec in wanted:
                        visit(page, f"{server.url}/{spec.url_path}", opts.settle)
                        page.screenshot(path=opts.shots / f"{spec.key}_{w}x{h}.png")
            memory.stop()
            inotify = server.log_tail(10**7).count("Inotify queue overflowed")
    return {
        "db": str(opts.db),
        "db_mb": round(opts.db.stat().st_size / 1e6, 1),
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git_commit(),
        "viewport": opts.viewport,
        "pages": rows,
        "server_start_gb": start_gb,
        "server_peak_gb": memory.peak_gb,
        "inotify_overflows": inotify,
        "environment": bench_environment(load_before),
    }


def _line(row: dict[str, Any]) -> str:
    timed = ", ".join(
        f"{k} {v:.2f} s" for k, v in row.items() if isinstance(v, float) and k != "rss_gb"
    )
    return f"{row['page']}: {timed}; server {row['rss_gb']:.2f} GB {row.get('error', '')}"


def table(figures: dict[str, Any]) -> str:
    """The figures as a Markdown table: one row per page, interactions in the last column."""
    body = []
    for row in figures["pages"].values():
        extra = [
            f"{k} {v:.2f} s"
            for k, v in row.items()
            if isinstance(v, float) and k not in ("first", "second", "rss_gb")
        ]
        if "error" in row:
            extra.append(f"error: {row['error']}")

        def cell(k: str, row: dict[str, Any] = row) -> str:
            return f"{row[k]:.2f} s" if k in row else "-"

        body.append([row["page"], cell("first"), cell("second"), "; ".join(extra)])
    lines = [md_table(["page", "first visit", "second visit", "interactions"], body)]
    lines.append(
        f"\nserver memory: {figures['server_start_gb']:.2f} GB at start, peak "
        f"{figures['server_peak_gb']:.2f} GB; load {figures['environment']['load_before']} -> "
        f"{figures['environment']['load_after']}"
    )
    return "\n".join(lines)


def database_size(db: Path) -> dict[str, int]:
    """The answers and runs ``db`` holds (read-only)."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        answers = con.execute("SELECT count(*) FROM answers").fetchone()
        runs = con.execute("SELECT count(*) FROM runs").fetchone()
    return {"answers": int(answers[0]) if answers else 0, "runs": int(runs[0]) if runs else 0}


def add_to_evidence(path: Path, figures: dict[str, Any], size: dict[str, int], name: str) -> None:
    """Write the run ``figures`` into the evidence file ``path`` as ``databases[N][name]``."""
    key = str(size["answers"])
    entry: dict[str, Any] = {"answers": size["answers"], "runs": size["runs"]}
    if path.exists():
        entry = read_evidence(path)["figures"].get("databases", {}).get(key, entry)
    entry.update(size)
    entry[name] = figures
    update_evidence(
        path,
        ["databases", key],
        entry,
        title="Every dashboard page on a scale database (bench_scale_pages.py)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="A scale database (copied first).")
    parser.add_argument("--pages", default="", help="Comma-separated page keys (default: all).")
    parser.add_argument("--viewport", default="1440x900")
    parser.add_argument("--also", default="", help="More viewports for screenshots: 1280x720.")
    parser.add_argument("--settle", type=float, default=750.0, help="Idle ms that end a step.")
    parser.add_argument("--shots", type=Path, default=REPO / "bench" / "out" / "scale" / "shots")
    parser.add_argument("--json", type=Path, default=None, help="add the run to this evidence")
    parser.add_argument(
        "--as", dest="name", choices=("before", "after"), default="after", help="its column"
    )
    opts = parser.parse_args()
    size = database_size(opts.db)
    figures = run(opts)
    print()
    print(table(figures))
    if opts.json is not None:
        add_to_evidence(opts.json, figures, size, opts.name)
        print(f"wrote {opts.json}")


if __name__ == "__main__":
    main()
