"""Benchmark drawing a question with large KGs: server-side layout and the browser's placing.

What is measured
----------------
Issue 28.5: the dashboard laid out the answer KG whole (4,000 triples took 71 s per panel,
8,000 never drew). For each size N (default 2,000, 8,000 and 20,000 triples), a question whose
answer, gold and context KGs have N triples each (seeded random trees over readable labels, the
answer sharing entities with both others) is explained and drawn as the Sample explorer draws it:

``server``
    In a child process of its own (so its peak memory is its own): the case
    (:func:`dashboard.explorer.case_scores`), then the drawing:
    :func:`dashboard.explorer.linked_view` and :func:`dashboard.graphs.linked_graphs_html`
    (node layout included), after a warm-up that
    loads what a running server has loaded already (lemminflect, networkx). Figures: seconds of
    each, the document's size, and the child's peak RSS (``VmHWM``) after the case and at the
    end. A child still running after ``--timeout`` seconds is killed; its peak RSS so far is
    reported with ``>``.
``browser``
    The document written to a file and opened in headless Chromium at 1440 x 900 (the system
    Chromium, as the browser tests use): seconds until every picture is placed
    (``window.s3kg.ready``), or ``>`` the ``--browser-timeout``.

``--whole`` draws with "Whole KGs" switched on as well. ``--repo DIR`` runs the server side on
another checkout of the project (for the figures before a change: ``git archive main`` into a
folder), whose ``case_scores``, ``linked_view`` and ``linked_graphs_html`` are called the same way.

The vectors come from a deterministic hashing encoder (each string's unit vector seeded by its
SHA-256), not from MiniLM: encoding 100,000 strings would take minutes and say nothing about the
layout, which depends only on which triples are picked and which labels align (exact labels
align whatever the vectors).

Usage::

    python -m bench.speed.bench_layout
    python -m bench.speed.bench_layout --sizes 2000 --whole --repo /tmp/main-tree
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
RESULT = "@@LAYOUT "
WORDS = ("trial", "aspirin", "fever", "clinical", "dose", "patient", "headache", "study",
         "placebo", "heart", "risk", "stomach", "platelet", "enzyme", "willow bark")  # fmt: skip
RELATIONS = ("reduces", "causes", "is part of", "was tested in", "treats", "increases")


class HashEncoder:
    """Unit vectors seeded by each text's SHA-256: deterministic, instant, meaningless."""

    name = "hash-384"

    def encode(self, texts: Any) -> np.ndarray:
        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(384)
            out[i] = v / np.linalg.norm(v)
        return out


def kgs(n: int, seed: int = 0) -> dict[str, list[list[str]]]:
    """Answer, gold and context KGs of ``n`` triples each (random trees, shared entities)."""
    rng = random.Random(seed)
    shared = [f"{rng.choice(WORDS)} shared {i}" for i in range(max(8, n // 10))]

    def tree(prefix: str) -> list[list[str]]:
        names = shared[: len(shared) // 2] + [
            f"{rng.choice(WORDS)} {prefix} {i}" for i in range(n + 1 - len(shared) // 2)
        ]
        rng.shuffle(names)
        return [[names[rng.randrange(i)], rng.choice(RELATIONS), names[i]] for i in range(1, n + 1)]

    return {"answer": tree("answer"), "gold": tree("gold"), "context": tree("context")}


def peak_rss_mb(pid: int | str = "self") -> float:
    """``VmHWM`` of a process in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def warm_up() -> None:
    """Load what the first call would (lemminflect's tables, networkx and scipy's layouts),
    so that the clock measures the work, not a server's start (a running server has these)."""
    import networkx as nx

    from s3kg_core.normalize import normalize_label

    normalize_label("warming up the lemmatiser")
    graph = nx.path_graph(25)
    nx.kamada_kawai_layout(nx.path_graph(5))
    nx.spring_layout(graph, seed=7, iterations=5)


def child(n: int, whole: bool, out_html: Path) -> None:
    """One size, in this process: the case, then the drawing; prints its figures."""
    from dashboard.explorer import TABLE_COLUMNS, case_scores, linked_view
    from dashboard.graphs import linked_graphs_html
    from s3kg_core.kg import Triple
    from s3kg_core.scoring.s3kg import KGScorer

    warm_up()
    data = {k: [Triple(*t) for t in v] for k, v in kgs(n).items()}
    figures: dict[str, Any] = {"triples": n, "whole": whole, "rss_warm_mb": peak_rss_mb()}
    start = time.perf_counter()
    case = case_scores(KGScorer(HashEncoder()), data["answer"], data["gold"], data["context"])
    figures["case_s"] = time.perf_counter() - start
    figures["rss_case_mb"] = peak_rss_mb()
    print(RESULT + json.dumps(figures), flush=True)
    start = time.perf_counter()
    panels, rows = linked_view(case, show_all=whole)
    figures["view_s"] = time.perf_counter() - start
    start = time.perf_counter()
    doc = linked_graphs_html(panels, rows, tau=case.tau, columns=TABLE_COLUMNS)
    figures["document_s"] = time.perf_counter() - start
    figures["layout_s"] = figures["view_s"] + figures["document_s"]
    figures["html_mb"] = len(doc.html.encode()) / 1e6
    figures["nodes_drawn"] = {p.key: len(p.nodes) for p in panels}
    figures["rows"] = len(rows)
    figures["rss_peak_mb"] = peak_rss_mb()
    out_html.write_text(doc.html, encoding="utf-8")
    print(RESULT + json.dumps(figures), flush=True)


def server(n: int, whole: bool, repo: Path, timeout: float, out_html: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(repo)}
    cmd = [sys.executable, __file__, "--child", str(n), "--out", str(out_html)]
    if whole:
        cmd.append("--whole")
    proc = subprocess.Popen(cmd, env=env, cwd=repo, stdout=subprocess.PIPE, text=True)
    start = time.monotonic()
    peak = 0.0
    lines: list[str] = []
    import threading

    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True)
    reader.start()
    while proc.poll() is None and time.monotonic() - start < timeout:
        peak = max(peak, peak_rss_mb(proc.pid))
        time.sleep(0.2)
    killed = proc.poll() is None
    if killed:
        peak = max(peak, peak_rss_mb(proc.pid))
        proc.kill()
    proc.wait()
    reader.join(timeout=5)
    found = [json.loads(line[len(RESULT) :]) for line in lines if line.startswith(RESULT)]
    figures = found[-1] if found else {"triples": n, "whole": whole}
    figures["killed_after_s"] = timeout if killed else None
    figures["rss_peak_mb"] = max(peak, figures.get("rss_peak_mb", 0.0))
    figures["wall_s"] = time.monotonic() - start
    return figures


def browser(html: Path, timeout: float) -> float | None:
    """Seconds from opening the document until every picture is placed (None: timed out)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("S3KG_CHROMIUM", "/usr/bin/chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = b.new_page(viewport={"width": 1440, "height": 900})
            start = time.perf_counter()
            try:  # the document places its pictures while it loads: "load" may come late
                page.goto(html.as_uri(), timeout=timeout * 1000, wait_until="commit")
                left = max(1.0, timeout - (time.perf_counter() - start))
                page.wait_for_function(
                    "() => window.s3kg && window.s3kg.ready === true", timeout=left * 1000
                )
            except PlaywrightTimeout:
                return None
            return time.perf_counter() - start
        finally:
            b.close()


HEADER = (
    f"{'triples':>8} {'whole':>5} {'case s':>7} {'layout s':>9} {'doc MB':>7} "
    f"{'peak RSS MB':>12} {'nodes drawn g/a/c':>18} {'rows':>6} {'browser s':>10}"
)


def fmt(value: Any, spec: str, over: bool = False) -> str:
    if value is None:
        return "-"
    return (">" if over else "") + format(value, spec)


def line(fig: dict[str, Any], timeout: float) -> str:
    """One row of the table (``>``: killed or timed out at that many seconds)."""
    killed = fig["killed_after_s"] is not None
    drawn = fig.get("nodes_drawn")
    nodes = "/".join(str(drawn[k]) for k in ("gold", "answer", "context")) if drawn else "-"
    layout = fig.get("layout_s", timeout if killed else None)
    late = "browser_s" in fig and fig["browser_s"] is None
    browser_s = fig.get("browser_timeout_s") if late else fig.get("browser_s")
    return (
        f"{fig['triples']:8d} {'yes' if fig['whole'] else 'no':>5} "
        f"{fmt(fig.get('case_s'), '.1f'):>7} {fmt(layout, '.1f', killed):>9} "
        f"{fmt(fig.get('html_mb'), '.2f'):>7} {fmt(fig['rss_peak_mb'], '.0f', killed):>12} "
        f"{nodes:>18} {fmt(fig.get('rows'), 'd'):>6} {fmt(browser_s, '.1f', late):>10}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000,8000,20000")
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout to run the server on")
    parser.add_argument("--timeout", type=float, default=300.0, help="server seconds per size")
    parser.add_argument("--browser-timeout", type=float, default=120.0)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--whole", action="store_true", help="also with 'Whole KGs' on")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child(args.child, args.whole, args.out)
        return
    # Not at import: the child runs this file under another checkout (PYTHONPATH).
    from bench._common import print_load

    print(f"repo {args.repo}")
    print_load("before")
    print(HEADER)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            for whole in (False, True) if args.whole else (False,):
                html = Path(tmp) / f"doc_{n}_{int(whole)}.html"
                fig = server(n, whole, args.repo, args.timeout, html)
                if html.exists() and not args.no_browser:
                    fig["browser_s"] = browser(html, args.browser_timeout)
                    fig["browser_timeout_s"] = args.browser_timeout
                results.append(fig)
                print(line(fig, args.timeout), flush=True)
    print_load("after")
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
