"""Benchmark the dashboard: cold start, the alpha slider on many answers, three 50-node graphs.

What is measured
----------------
One database is built in a temporary folder (nothing is read from ``../shared/data``):

* dataset ``bench``: ``--models`` runs over ``--answers / --models`` items, with items, answers
  and one score row per answer written directly through
  :meth:`s3kg_core.store.store.Store.put_scores` (seeded random components, no KGs): the stored
  state
  ``s3kg score`` leaves behind, at a scale where nothing has to be encoded to build it;
* dataset ``a-graphs`` (sorted first, so the sample explorer opens on it): one run with one item
  whose gold, answer and context KGs each have 50 entities, scored for real with the packaged
  MiniLM (so the page draws the stored alignment and never loads the encoder).

Both live under the same score signature.

Figures:

(a) *cold start*: seconds from launching ``streamlit run app.py`` (headless, on a free port) to
    ``/_stcore/health`` answering 200, and to the overview's first full render in headless
    Chromium: the script has run to the end (``data-test-script-state="notRunning"``) and the
    "Mean CUS" metric shows. Chromium is started before the clock. Repeated ``--repeats`` times,
    each with a fresh server.
(b) *alpha recompute*: :func:`s3kg_core.stages.scored.reblend` + each run's means (a pandas
    ``groupby``, the leaderboard the dashboard computed in pandas before issue 33) on the stored
    components of every answer (``scored_frame``), for ``--alphas`` alpha values from 0 to 1:
    median and p95 milliseconds (target: under 100 ms). Also the round trip in the browser:
    the sidebar slider moved one step with the keyboard until the overview's Mean CUS shows
    the new value and the script has finished.
(c) *sample page with three 50-node graphs*: :func:`dashboard.graphs.linked_graphs_html` for the
    three KGs (layout and page; median / p95 ms over ``--graph-repeats``), and the
    browser time to render the sample explorer: from navigation until the script has finished
    with its linked graphs document, and until that document has placed its three pictures
    (``window.s3kg.ready``). The first visit runs with empty server caches; later visits are
    new browser sessions on a warm server. ``bench/speed/bench_explorer.py`` measures the explorer
    itself in more detail.

Wall-clock figures are only comparable on an otherwise idle machine: the load average is
printed before and after.

Usage::

    python -m bench.speed.bench_dashboard --answers 10000
    python -m bench.speed.bench_dashboard --answers 10000 --json bench/out/bench_dashboard.json \\
        | tee bench/out/bench_dashboard.txt
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

from bench._common import bench_environment, load_average, text_table, write_figures
from dashboard.url_state import ALPHA_STEP
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord, ScoreRecord
from s3kg_core.store.store import Store
from tests.browser_helpers import (
    APP_IDLE,
    CHROMIUM,
    streamlit_server,
    wait_idle,
)

REPO = Path(__file__).resolve().parents[2]

RELATIONS = ("treats", "causes", "reduces", "is part of", "interacts with", "precedes")
GRAPH_NODES = 50
RENDER_MS = 300_000


# --- the database --------------------------------------------------------------------------


def tree_kg(names: Sequence[str], rng: random.Random) -> tuple[Triple, ...]:
    """A connected KG over exactly ``names``: a random tree plus a few extra edges."""
    triples = [
        Triple(names[rng.randrange(i)], rng.choice(RELATIONS), names[i])
        for i in range(1, len(names))
    ]
    for _ in range(len(names) // 5):
        a, b = rng.sample(list(names), 2)
        triples.append(Triple(a, rng.choice(RELATIONS), b))
    return tuple(dict.fromkeys(triples))


def graph_kgs(rng: random.Random) -> dict[str, tuple[Triple, ...]]:
    """Gold, answer and context KGs of 50 entities each. The answer shares half its entities
    with the gold KG and a quarter with the context KG, so the pictures have aligned (coloured)
    nodes."""
    n = GRAPH_NODES
    gold = [f"drug entity {i}" for i in range(n)]
    answer = gold[: n // 2] + [f"answer entity {i}" for i in range(n // 2, n)]
    context = gold[: n // 4] + [f"trial entity {i}" for i in range(n // 4, n)]
    return {
        "gold": tree_kg(gold, rng),
        "answer": tree_kg(answer, rng),
        "context": tree_kg(context, rng),
    }


def build_db(path: Path, n_answers: int, n_models: int, seed: int = 0) -> dict[str, Any]:
    """The benchmark database (see the module docstring); returns what was built."""
    from s3kg_core.encoders.registry import load_encoder
    from s3kg_core.stages.score import score_store

    rng = random.Random(seed)
    encoder = load_encoder("minilm")  # the default backend's name enters the signature
    signature = S3KGConfig().signature(encoder.name)
    per_model = -(-n_answers // n_models)
    store = Store(path)
    started = time.perf_counter()
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "bench", source="bench")
        ids = store.upsert_items(
            con,
            ds,
            [ItemRecord(f"b{i}", f"question {i}?", "ctx", "gold") for i in range(per_model)],
        )
        written = 0
        for m in range(n_models):
            n = min(per_model, n_answers - written)
            if n <= 0:
                break
            run = store.ensure_run(con, ds, f"model-{m}", 0.0, "bench")
            items = [ids[f"b{i}"] for i in range(n)]
            store.put_answers(con, run, [AnswerRecord(i, f"answer {i}") for i in items])
            skill = 0.15 * m
            store.put_scores(
                con,
                [
                    ScoreRecord(
                        run,
                        i,
                        signature,
                        "paper",
                        0.5,
                        rng.uniform(0, 0.6 + skill / 2),
                        rng.uniform(0.4, 1.0),
                        "ok",
                        rng.uniform(0, 0.5 + skill / 2),
                        rng.uniform(0.3, 1.0),
                        "ok",
                    )
                    for i in items
                ],
            )
            written += n
        store.set_meta(con, "latest_signature", signature)
    seconds_rows = time.perf_counter() - started

    kgs = graph_kgs(rng)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "a-graphs", source="bench")
        item = store.upsert_items(
            con, ds, [ItemRecord("g0", "What does the drug do?", "A long context.", "It helps.")]
        )["g0"]
        run = store.ensure_run(con, ds, "graph-model", 0.0, "bench")
        store.put_answers(con, run, [AnswerRecord(item, "A long answer.")])
        store.put_kgs(con, [KGRecord(run, item, source, kg) for source, kg in kgs.items()])
    started = time.perf_counter()
    report = score_store(store, encoder=encoder, run_ids=[run])
    if report.signature != signature:
        raise RuntimeError(f"signature mismatch: {report.signature} != {signature}")
    return {
        "signature": signature,
        "answers": written,
        "models": n_models,
        "graph_run": run,
        "graph_item": item,
        "graph_triples": {k: len(v) for k, v in kgs.items()},
        "seconds_score_rows": seconds_rows,
        "seconds_score_graph_item": time.perf_counter() - started,
    }


# --- figures -------------------------------------------------------------------------------


def ms_stats(seconds: Sequence[float]) -> dict[str, float]:
    """Median, p95 and max of ``seconds``, in milliseconds."""
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, max(0, round(0.95 * len(ms)) - 1))]
    return {"n": len(ms), "median_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}


def bench_reblend(db: Path, signature: str, n_alphas: int) -> dict[str, Any]:
    """(b) reblend + leaderboard for ``n_alphas`` alphas on every stored answer."""
    import numpy as np

    from s3kg_core.stages.scored import reblend, scored_frame

    def leaderboard(frame: Any) -> Any:  # each run's means, as the dashboard's pandas path did
        keys = ["run_id", "dataset", "model", "temperature", "extractor"]
        return frame.groupby(keys, sort=True)[["gold_sim", "ctx_sim", "cus"]].mean()

    started = time.perf_counter()
    frame = scored_frame(Store(db, read_only=True), signature)
    load = time.perf_counter() - started
    reblend(frame, 0.5)  # warm-up (first call pays pandas' lazy imports)
    leaderboard(reblend(frame, 0.5))
    times = []
    for alpha in np.linspace(0, 1, n_alphas):
        t0 = time.perf_counter()
        leaderboard(reblend(frame, float(alpha)))
        times.append(time.perf_counter() - t0)
    return {"rows": len(frame), "seconds_load_ms": load * 1000, **ms_stats(times)}


def bench_graphs(db: Path, info: dict[str, Any], repeats: int) -> dict[str, Any]:
    """(c) The linked document of the three 50-node KGs (layout and page), from the stored KGs."""
    from dashboard.graphs import GraphPanel, PanelEdge, PanelNode, linked_graphs_html

    run, item = info["graph_run"], info["graph_item"]
    with Store(db, read_only=True).connect() as con:
        kgs = {k[2]: v.triples for k, v in Store.load_kgs(con, [run]).items() if k[1] == item}

    def panel(source: str) -> GraphPanel:
        triples = kgs[source]
        labels = {x.lower(): x for t in triples for x in (t.head, t.tail)}
        return GraphPanel(
            source,
            source.title(),
            f"{len(triples)} triples",
            tuple(PanelNode(key, label) for key, label in labels.items()),
            tuple(
                PanelEdge(t.head.lower(), t.tail.lower(), t.relation, i)
                for i, t in enumerate(triples)
            ),
            tuple((t.head.lower(), t.relation, t.tail.lower(), t.head, t.tail) for t in triples),
        )

    times, size = [], 0
    for _ in range(repeats + 1):
        t0 = time.perf_counter()
        doc = linked_graphs_html([panel(s) for s in ("gold", "answer", "context")], [], tau=0.65)
        times.append(time.perf_counter() - t0)
        size = len(doc.html)
    return {
        "nodes": {
            source: len({x for t in kgs[source] for x in (t.head, t.tail)}) for source in kgs
        },
        "html_kib": [round(size / 1024)],
        "first_call_ms": times[0] * 1000,
        **ms_stats(times[1:]),
    }


def bench_scripts(db: Path, repeats: int) -> dict[str, Any]:
    """Server-side script time of the overview and the sample explorer (``AppTest``, no
    browser): the first run (empty Streamlit caches, in this already warm process) and the
    median of ``repeats`` more."""
    from streamlit.testing.v1 import AppTest

    quiet()
    out: dict[str, Any] = {}
    before = os.environ.get("S3KG_DB")
    os.environ["S3KG_DB"] = str(db)
    try:
        for name, script in (("overview", "app.py"), ("sample_page", "pages/1_Sample_explorer.py")):
            times = []
            for _ in range(repeats + 1):
                at = AppTest.from_file(str(REPO / script), default_timeout=RENDER_MS / 1000)
                quiet()  # AppTest resets Streamlit's log level from its config
                t0 = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t0)
                if at.exception:
                    raise RuntimeError(f"{script}: {at.exception[0].value}")
            out[name] = {"first_s": times[0], "warm_median_s": statistics.median(times[1:])}
    finally:
        if before is None:
            os.environ.pop("S3KG_DB", None)
        else:
            os.environ["S3KG_DB"] = before
    return out


def quiet() -> None:
    """Silence Streamlit's warnings about running without a server (cache, ScriptRunContext)."""
    import streamlit.logger

    streamlit.logger.set_log_level("error")


GRAPHS_READY = """() => {
  const f = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stIFrame"]')];
  return f.length >= 1 && f.some(el => el.contentWindow && el.contentWindow.s3kg
    && el.contentWindow.s3kg.ready === true);
}"""


def bench_browser(db: Path, log_dir: Path, repeats: int) -> dict[str, Any]:
    """(a) cold starts, the alpha round trip, and (c) the sample explorer in the browser."""
    from playwright.sync_api import sync_playwright

    out: dict[str, Any] = {
        "cold_start": [],
        "alpha_round_trip_s": [],
        "sample_page": [],
        "overview_warm_s": [],
    }
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            for r in range(repeats):
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                page.set_default_timeout(RENDER_MS)
                t0 = time.perf_counter()
                with streamlit_server(db, log_dir / f"streamlit_{r}.log", timeout=300) as srv:
                    healthy = time.perf_counter() - t0
                    page.goto(srv.url, timeout=RENDER_MS)
                    page.wait_for_selector(APP_IDLE, timeout=RENDER_MS)
                    page.get_by_text("Mean CUS", exact=True).wait_for(timeout=RENDER_MS)
                    rendered = time.perf_counter() - t0
                    out["cold_start"].append({"health_s": healthy, "first_render_s": rendered})
                    wait_idle(page, timeout_ms=RENDER_MS)
                    if r == 0:
                        out["alpha_round_trip_s"] = alpha_round_trips(page, steps=3)
                        out["sample_page"] = sample_pages(browser, srv.url, visits=3)
                        out["overview_warm_s"] = overview_pages(browser, srv.url, visits=2)
                context.close()
        finally:
            browser.close()
    return out


def alpha_round_trips(page: Any, steps: int) -> list[float]:
    """Move the sidebar alpha one step right ``steps`` times; seconds until the overview's
    signature caption names the new alpha and the script has finished."""
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name="alpha")
    times = []
    for _ in range(steps):
        alpha = round(float(slider.input_value()) + ALPHA_STEP, 2)
        caption = page.get_by_text(f"|alpha:{alpha:g}", exact=False)
        slider.focus()
        t0 = time.perf_counter()
        page.keyboard.press("ArrowRight")
        caption.wait_for(timeout=RENDER_MS)
        page.wait_for_selector(APP_IDLE, timeout=RENDER_MS)
        times.append(time.perf_counter() - t0)
        wait_idle(page, timeout_ms=RENDER_MS)
    return times


def sample_pages(browser: Any, url: str, visits: int) -> list[dict[str, float]]:
    """Open the sample explorer in ``visits`` fresh sessions; time script and graphs."""
    rows = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.set_default_timeout(RENDER_MS)
        t0 = time.perf_counter()
        page.goto(f"{url}/Sample_explorer", timeout=RENDER_MS)
        page.get_by_role("heading", name="Sample explorer", exact=True).wait_for()
        page.wait_for_selector(APP_IDLE, timeout=RENDER_MS)
        page.locator('[data-testid="stMain"] [data-testid="stIFrame"]').first.wait_for()
        script = time.perf_counter() - t0
        page.wait_for_function(GRAPHS_READY, timeout=RENDER_MS, polling=50)
        graphs = time.perf_counter() - t0
        if page.locator('[data-testid="stException"]').count():
            raise RuntimeError(page.locator('[data-testid="stException"]').first.inner_text())
        rows.append({"script_and_iframes_s": script, "graphs_stabilised_s": graphs})
        context.close()
    return rows


def overview_pages(browser: Any, url: str, visits: int) -> list[float]:
    """The overview in ``visits`` fresh sessions on a warm server: the baseline cost of a new
    session (Streamlit's page bundle, the websocket, one script run) on this machine."""
    times = []
    for _ in range(visits):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        t0 = time.perf_counter()
        page.goto(url, timeout=RENDER_MS)
        page.wait_for_selector(APP_IDLE, timeout=RENDER_MS)
        page.get_by_text("Mean CUS", exact=True).wait_for(timeout=RENDER_MS)
        times.append(time.perf_counter() - t0)
        context.close()
    return times


# --- report --------------------------------------------------------------------------------


def report(figures: dict[str, Any]) -> str:
    """The printed summary."""
    db, rb, gr, br = figures["db"], figures["reblend"], figures["graphs"], figures["browser"]
    rows: list[tuple[str, str, str]] = []
    for i, c in enumerate(br.get("cold_start", [])):
        rows.append(("(a) cold start", f"run {i + 1}: health 200", f"{c['health_s']:.2f} s"))
        rows.append(
            ("(a) cold start", f"run {i + 1}: overview rendered", f"{c['first_render_s']:.2f} s")
        )
    for key, part in (("overview", "(a) overview script"), ("sample_page", "(c) sample script")):
        sc = figures["scripts"][key]
        rows.append((part, "AppTest run, empty caches", f"{sc['first_s']:.2f} s"))
        rows.append((part, "AppTest run, warm (median of 3)", f"{sc['warm_median_s']:.2f} s"))
    part = "(b) alpha recompute"
    rows += [
        (part, f"load components ({rb['rows']} rows)", f"{rb['seconds_load_ms']:.0f} ms"),
        (part, f"reblend+leaderboard median ({rb['n']} alphas)", f"{rb['median_ms']:.1f} ms"),
        (part, "reblend+leaderboard p95 (target < 100 ms)", f"{rb['p95_ms']:.1f} ms"),
    ]
    for i, t in enumerate(br.get("alpha_round_trip_s", [])):
        rows.append(("(b) alpha in browser", f"step {i + 1}: key -> page updated", f"{t:.2f} s"))
    part = "(c) graphs"
    rows += [
        (part, f"linked document median ({gr['n']} runs)", f"{gr['median_ms']:.1f} ms"),
        (part, "linked document p95", f"{gr['p95_ms']:.1f} ms"),
        (part, "first call (script and layout caches)", f"{gr['first_call_ms']:.1f} ms"),
    ]
    for i, t in enumerate(br.get("overview_warm_s", [])):
        rows.append(("(c) baseline", f"overview, new session {i + 1}, warm server", f"{t:.2f} s"))
    for i, v in enumerate(br.get("sample_page", [])):
        tag = f"visit {i + 1} ({'cold caches' if i == 0 else 'warm server'})"
        rows.append(
            (
                "(c) sample page",
                f"{tag}: script + graph frame",
                f"{v['script_and_iframes_s']:.2f} s",
            )
        )
        rows.append(
            ("(c) sample page", f"{tag}: graphs placed", f"{v['graphs_stabilised_s']:.2f} s")
        )
    env = figures["env"]
    head = [
        f"bench_dashboard: {db['answers']} stored answers over {db['models']} runs",
        f"graph item: nodes {gr['nodes']}, triples {db['graph_triples']}, "
        f"linked document {gr['html_kib'][0]} KiB",
        f"signature {db['signature']}",
        f"python {env['python']}, streamlit {env['streamlit']}, {env['cpus']} CPUs, load average "
        f"{env['load_before']} before, {env['load_after']} after",
        f"DB built in {db['seconds_score_rows']:.1f} s (score rows) + "
        f"{db['seconds_score_graph_item']:.1f} s (MiniLM scoring of the graph item)",
        "",
    ]
    return "\n".join([*head, text_table(["part", "figure", "value"], rows)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--answers", type=int, default=10_000, help="stored answers (scores)")
    parser.add_argument("--models", type=int, default=5, help="runs the answers are spread over")
    parser.add_argument("--alphas", type=int, default=50, help="alpha values for (b)")
    parser.add_argument(
        "--graph-repeats", type=int, default=20, help="linked-document repeats for (c)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="cold starts for (a)")
    parser.add_argument("--no-browser", action="store_true", help="skip (a) and browser (c)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--keep", type=Path, help="build the database in this folder, kept")
    args = parser.parse_args(argv)
    if args.answers < 1 or args.models < 1:
        parser.error("--answers and --models must be >= 1")
    if not args.no_browser and not CHROMIUM.exists():
        parser.error(f"no Chromium at {CHROMIUM}: set S3KG_CHROMIUM or pass --no-browser")

    quiet()
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="bench_dashboard_") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        db = folder / "bench_dashboard.duckdb"
        db.unlink(missing_ok=True)
        Path(f"{db}.wal").unlink(missing_ok=True)
        print(f"building {db} ...", file=sys.stderr, flush=True)
        info = build_db(db, args.answers, args.models)
        print("timing reblend and graphs ...", file=sys.stderr, flush=True)
        figures: dict[str, Any] = {
            "db": info,
            "reblend": bench_reblend(db, info["signature"], args.alphas),
            "graphs": bench_graphs(db, info, args.graph_repeats),
            "scripts": bench_scripts(db, 3),
            "browser": {},
        }
        if not args.no_browser:
            print("timing the browser ...", file=sys.stderr, flush=True)
            figures["browser"] = bench_browser(db, folder / "logs", args.repeats)
    figures["env"] = bench_environment(load_before)
    print(report(figures))
    write_figures(args.json, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
