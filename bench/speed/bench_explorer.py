"""Benchmark the sample explorer on a question whose context KG has 60 triples.

What is measured
----------------
A database is built in a temporary folder (nothing is read from ``../shared/data``): one run
with three questions whose answer KG has 12 triples, gold KG 20 and context KG 60 (seeded random
trees over readable multi-word labels; the answer shares entities with both), scored for real
with the packaged MiniLM, so every vector the page needs is stored.

Figures:

(a) *server side*: :func:`dashboard.data.explain.explorer_case` at a tau not computed before (the
    stored vectors read back, both S3KG comparisons and the triple table; median and p95 over
    ``--taus`` values), and :func:`dashboard.explorer.linked_view` +
    :func:`dashboard.graphs.linked_graphs_html` (the document: first call with the layout
    computed, then with it cached), and the page's whole script under ``AppTest`` (first run,
    then a tau move).
(b) *browser* (headless system Chromium at 1440 x 900): from navigating to
    ``/Sample_explorer?run=..&item=..`` until the three pictures are placed
    (``window.s3kg.ready``), over ``--visits`` fresh sessions (the first with cold server
    caches); a tau move with the keyboard until the new document is placed; switching on
    "Whole KGs" until the 60-triple picture is placed. With each, the smallest node and edge
    label on screen (vis-network's scale x font size) of every picture.

Wall-clock figures are only comparable on an otherwise idle machine: the load average is
printed before and after.

Usage::

    python -m bench.speed.bench_explorer
    python -m bench.speed.bench_explorer --visits 5 --json bench/out/bench_explorer.json
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._common import bench_environment, load_average, write_figures
from s3kg_core.kg import Triple
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store
from tests.browser_helpers import (
    CHROMIUM,
    streamlit_server,
    wait_idle,
)

REPO = Path(__file__).resolve().parents[2]

RENDER_MS = 300_000
WORDS = (
    "trial",
    "aspirin",
    "fever",
    "clinical",
    "dose",
    "patient",
    "headache",
    "inflammation",
    "study",
    "placebo",
    "heart",
    "risk",
    "stomach",
    "bleeding",
    "children",
    "reye syndrome",
    "platelet",
    "enzyme",
    "willow bark",
    "salicylic acid",
)
RELATIONS = ("reduces", "causes", "is part of", "was tested in", "treats", "increases")
READY = "() => window.s3kg && window.s3kg.ready === true"


def kg(names: Sequence[str], n_triples: int, rng: random.Random) -> tuple[Triple, ...]:
    """A connected KG over ``names`` (a random tree), topped up to ``n_triples`` triples."""
    triples = [
        Triple(names[rng.randrange(i)], rng.choice(RELATIONS), names[i])
        for i in range(1, len(names))
    ]
    while len(set(triples)) < n_triples:
        a, b = rng.sample(list(names), 2)
        triples.append(Triple(a, rng.choice(RELATIONS), b))
    return tuple(dict.fromkeys(triples))[:n_triples]


def names(prefix: str, n: int, rng: random.Random) -> list[str]:
    out: list[str] = []
    while len(out) < n:
        label = f"{rng.choice(WORDS)} {prefix} {len(out)}"
        out.append(label)
    return out


def build_db(path: Path, seed: int = 0) -> dict[str, Any]:
    """The benchmark database (see the module docstring); returns what was built."""
    from s3kg_core.encoders.registry import load_encoder
    from s3kg_core.stages.score import score_store

    rng = random.Random(seed)
    store = Store(path)
    items = []
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "explorer-bench", source="bench")
        ids = store.upsert_items(
            con,
            ds,
            [
                ItemRecord(f"x{i}", f"What does aspirin do ({i})?", "A long context.", "It helps.")
                for i in range(3)
            ],
        )
        run = store.ensure_run(con, ds, "bench-model", 0.0, "bench")
        records = []
        for ext, item in ids.items():
            shared = names("shared", 8, rng)
            context = kg(shared + names("context", 50, rng), 60, rng)
            gold = kg(shared[:5] + names("gold", 15, rng), 20, rng)
            answer = kg(shared[:6] + names("answer", 7, rng), 12, rng)
            records += [
                KGRecord(run, item, "gold", gold),
                KGRecord(run, item, "answer", answer),
                KGRecord(run, item, "context", context),
            ]
            items.append(item)
            del ext
        store.put_answers(con, run, [AnswerRecord(i, "An answer about aspirin.") for i in items])
        store.put_kgs(con, records)
    started = time.perf_counter()
    report = score_store(store, encoder=load_encoder("minilm"), run_ids=[run])
    return {
        "run": run,
        "items": items,
        "signature": report.signature,
        "seconds_scoring": time.perf_counter() - started,
        "triples": {"answer": 12, "gold": 20, "context": 60},
    }


def ms_stats(seconds: Sequence[float]) -> dict[str, float]:
    """Median, p95 and max of ``seconds``, in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))]
    return {"n": len(ms), "median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}


def quiet() -> None:
    """Silence Streamlit's "no runtime" warnings when its caches run outside a server."""
    import logging

    for name in ("streamlit", "streamlit.runtime.caching.cache_data_api"):
        logging.getLogger(name).setLevel(logging.ERROR)


def bench_server(db: Path, info: dict[str, Any], n_taus: int) -> dict[str, Any]:
    """(a) explorer_case at new taus, the document, and the page script under AppTest."""
    import numpy as np

    from dashboard.data.database import View, db_stamp
    from dashboard.data.explain import explorer_case
    from dashboard.explorer import linked_view
    from dashboard.graphs import linked_graphs_html

    quiet()
    view = View(db, db_stamp(db), info["signature"])
    run, item = info["run"], info["items"][0]
    cases, times = [], []
    for tau in np.round(np.linspace(0.3, 0.95, n_taus), 2):
        t0 = time.perf_counter()
        cases.append(explorer_case(view, run, item, float(tau)))
        times.append(time.perf_counter() - t0)
    docs = []
    for i, case in enumerate([cases[0], cases[0], *cases[1:]]):
        t0 = time.perf_counter()
        panels, rows = linked_view(case)
        doc = linked_graphs_html(panels, rows, tau=case.tau)
        docs.append(time.perf_counter() - t0)
        if i == 0:
            size = len(doc.html)
            shown = {p.key: len(p.nodes) for p in panels}
    whole = linked_view(cases[0], show_all=True)[0]
    t0 = time.perf_counter()
    linked_graphs_html(whole, [], tau=cases[0].tau)
    whole_ms = (time.perf_counter() - t0) * 1000
    return {
        "explorer_case": ms_stats(times[1:]) | {"first_ms": times[0] * 1000},
        "encoded": sum(c.encoded for c in cases),
        "document_first_ms": docs[0] * 1000,
        "document_cached_layout": ms_stats(docs[1:]),
        "document_whole_kgs_first_ms": whole_ms,
        "document_kib": round(size / 1024),
        "nodes_shown": shown,
        "nodes_whole": {p.key: len(p.nodes) for p in whole},
        "script": bench_script(db, run, item),
    }


def bench_script(db: Path, run: int, item: int) -> dict[str, float]:
    """The page's script under AppTest: the first run, then a tau move (no browser)."""
    from streamlit.testing.v1 import AppTest

    from dashboard.data.database import clear_caches

    clear_caches()
    os.environ["S3KG_DB"] = str(db)
    at = AppTest.from_file(str(REPO / "pages" / "1_Sample_explorer.py"), default_timeout=300)
    at.query_params["run"] = str(run)
    at.query_params["item"] = str(item)
    t0 = time.perf_counter()
    at.run()
    first = time.perf_counter() - t0
    if at.exception:
        raise RuntimeError(at.exception[0].value)
    t0 = time.perf_counter()
    at.slider(key="explorer.tau").set_value(0.72).run()
    moved = time.perf_counter() - t0
    return {"first_s": first, "tau_move_s": moved}


def label_sizes(frame: Any) -> dict[str, dict[str, float]]:
    """Per picture: nodes drawn and the smallest node and edge label on screen, in px."""
    metrics = frame.evaluate("() => window.s3kg.metrics()")
    return {
        key: {
            "nodes": len(m["nodes"]),
            "scale": round(m["scale"], 3),
            "min_node_px": round(min((n["px"] for n in m["nodes"]), default=0), 2),
            "min_edge_px": round(min((e["px"] for e in m["edges"]), default=0), 2),
        }
        for key, m in metrics.items()
    }


def graph_frame(page: Any) -> Any:
    frames = [f for f in page.frames if f.url == "about:srcdoc"]
    frames[0].wait_for_function(READY, timeout=RENDER_MS, polling=20)
    return frames[0]


def bench_browser(db: Path, info: dict[str, Any], log_dir: Path, visits: int) -> dict[str, Any]:
    """(b) deep link to placed pictures, a tau move, and the whole 60-triple KG."""
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {"visits": []}
    query = f"run={info['run']}&item={info['items'][0]}"
    with (
        streamlit_server(db, log_dir / "streamlit.log") as server,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        for i in range(visits):
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            t0 = time.perf_counter()
            page.goto(f"{server.url}/Sample_explorer?{query}", timeout=RENDER_MS)
            page.wait_for_selector('[data-testid="stIFrame"]', timeout=RENDER_MS)
            page.wait_for_function(
                "() => [...document.querySelectorAll('iframe')].some(f => f.contentWindow"
                " && f.contentWindow.s3kg && f.contentWindow.s3kg.ready)",
                timeout=RENDER_MS,
                polling=20,
            )
            placed = time.perf_counter() - t0
            wait_idle(page, timeout_ms=RENDER_MS)
            frame = graph_frame(page)
            visit = {"placed_s": placed, "labels": label_sizes(frame)}
            if i == visits - 1:
                slider = page.locator('[data-testid="stMain"]').get_by_role("slider").first
                slider.focus()
                t0 = time.perf_counter()
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    "() => [...document.querySelectorAll('iframe')].some(f => f.contentWindow"
                    " && f.contentWindow.s3kg && f.contentWindow.s3kg.ready"
                    " && f.contentWindow.s3kg.data.tau === '0.66')",
                    timeout=RENDER_MS,
                    polling=20,
                )
                out["tau_move_s"] = time.perf_counter() - t0
                wait_idle(page, timeout_ms=RENDER_MS)
                t0 = time.perf_counter()
                page.get_by_text("Whole KGs", exact=True).click()
                page.wait_for_function(
                    "() => [...document.querySelectorAll('iframe')].some(f => f.contentWindow"
                    " && f.contentWindow.s3kg && f.contentWindow.s3kg.ready"
                    " && f.contentWindow.s3kg.data.panels[2].note === '')",
                    timeout=RENDER_MS,
                    polling=20,
                )
                out["whole_kgs_s"] = time.perf_counter() - t0
                wait_idle(page, timeout_ms=RENDER_MS)
                out["whole_kgs_labels"] = label_sizes(graph_frame(page))
            out["visits"].append(visit)
            context.close()
        browser.close()
    return out


def report(figures: dict[str, Any]) -> str:
    """The printed summary."""
    sv, br, db = figures["server"], figures["browser"], figures["db"]
    rows = [
        ("(a) explorer_case, first (cold)", f"{sv['explorer_case']['first_ms']:.0f} ms"),
        (
            f"(a) explorer_case at a new tau, median of {sv['explorer_case']['n']}",
            f"{sv['explorer_case']['median_ms']:.0f} ms (p95 {sv['explorer_case']['p95_ms']:.0f})",
        ),
        ("(a) strings encoded while recomputing", str(sv["encoded"])),
        ("(a) document, first (layout computed)", f"{sv['document_first_ms']:.0f} ms"),
        (
            "(a) document, layout cached (median)",
            f"{sv['document_cached_layout']['median_ms']:.0f} ms",
        ),
        ("(a) document, whole KGs, first", f"{sv['document_whole_kgs_first_ms']:.0f} ms"),
        ("(a) document size", f"{sv['document_kib']} KiB"),
        ("(a) nodes drawn (neighbourhood)", str(sv["nodes_shown"])),
        ("(a) nodes drawn (whole KGs)", str(sv["nodes_whole"])),
        ("(a) page script (AppTest), first run", f"{sv['script']['first_s']:.2f} s"),
        ("(a) page script (AppTest), tau move", f"{sv['script']['tau_move_s']:.2f} s"),
    ]
    for i, v in enumerate(br.get("visits", [])):
        tag = "cold server caches" if i == 0 else "warm server"
        rows.append(
            (f"(b) deep link -> pictures placed, visit {i + 1} ({tag})", f"{v['placed_s']:.2f} s")
        )
    if "tau_move_s" in br:
        rows.append(("(b) tau +0.01 -> new pictures placed", f"{br['tau_move_s']:.2f} s"))
        rows.append(("(b) 'Whole KGs' on -> pictures placed", f"{br['whole_kgs_s']:.2f} s"))
    for name, labels in (
        ("neighbourhood", br["visits"][0]["labels"] if br.get("visits") else {}),
        ("whole KGs", br.get("whole_kgs_labels", {})),
    ):
        for key, m in labels.items():
            rows.append(
                (
                    f"(b) {name}: {key} ({m['nodes']} nodes, scale {m['scale']})",
                    f"node labels >= {m['min_node_px']} px, edge labels >= {m['min_edge_px']} px",
                )
            )
    env = figures["env"]
    width = max(len(r[0]) for r in rows)
    head = [
        f"bench_explorer: KGs of {db['triples']} triples, scored in {db['seconds_scoring']:.1f} s",
        f"signature {db['signature']}",
        f"python {env['python']}, streamlit {env['streamlit']}, {env['cpus']} CPUs, load average "
        f"{env['load_before']} before, {env['load_after']} after",
        "",
    ]
    return "\n".join(head + [f"{a:<{width}}  {b}" for a, b in rows])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--taus", type=int, default=12, help="tau values for (a)")
    parser.add_argument("--visits", type=int, default=3, help="browser sessions for (b)")
    parser.add_argument("--no-browser", action="store_true", help="skip (b)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if not args.no_browser and not CHROMIUM.exists():
        parser.error(f"no Chromium at {CHROMIUM}: set S3KG_CHROMIUM or pass --no-browser")

    quiet()
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="bench_explorer_") as tmp:
        db = Path(tmp) / "bench_explorer.duckdb"
        print(f"building {db} ...", file=sys.stderr, flush=True)
        info = build_db(db)
        figures: dict[str, Any] = {"db": info, "server": bench_server(db, info, args.taus)}
        figures["browser"] = (
            {} if args.no_browser else bench_browser(db, info, Path(tmp) / "logs", args.visits)
        )
    figures["env"] = bench_environment(load_before)
    print(report(figures))
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
