"""Views of the speed benchmarks (``bench/speed/``) and the README's performance table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import bold, f, figure_rows, md_table, sci, span, template, view

__all__: list[str] = []  # the views register themselves in ``VIEWS``

# -- speed ----------------------------------------------------------------------------------------


@view("scoring", "scoring")
def _scoring(fig: Mapping[str, Any]) -> str:
    rows = []
    for r in fig["throughput"].values():
        lim = f"{f(r['over_limit'], '.2f')}x" + (" (sampled)" if r["limit_sampled"] else "")
        naive = f(r["naive_pairs_per_s"], ".3g")
        if r["naive_subset"]:
            naive += f" ({r['naive_subset']}-pair subset)"
        rows.append(
            [
                f"{r['set']} ({r['pairs']:,})",
                r["encoder"],
                f(r["kgscorer_pairs_per_s"], ".3g"),
                f"{f(r['non_embedding_pct'], '.1f')} %",
                lim,
                naive,
                f"{f(r['speedup'], '.2f')}x",
            ]
        )
    header = [
        "set",
        "encoder",
        "KGScorer pairs/s",
        "non-embedding share",
        "KGScorer / limit",
        "naive pairs/s",
        "speed-up",
    ]
    return md_table(header, rows)


def _secs(x: Any, spec: str = ".1f") -> str:
    return f"{f(x, spec)} s" if x is not None else ""


def _ratio(x: Any, strong: bool = False) -> str:
    return bold(f"{f(x, '.1f')}x", strong) if x is not None else ""


def _sample(r: Mapping[str, Any]) -> str:
    return f"{_secs(r['sample_seconds'])} ({f(r['ms_per_pair'], '.0f')} ms/pair)"


def _whole(r: Mapping[str, Any]) -> str:
    if r["all_seconds"] is None:
        return ""
    return f"{_secs(r['all_seconds'])} ({f(r['all_ms_per_pair'], '.1f')} ms/pair)"


@view("reference", "reference")
def _reference(fig: Mapping[str, Any]) -> str:
    """The reference against each backend the run timed (the default, onnx, in bold)."""
    ref, backends = fig["reference"], fig["backends"]

    def both(r: Mapping[str, Any], strong: bool) -> str:
        pair = f"{f(r['ratio_all'], '.1f')}x / {f(r['ratio_all_with_start'], '.1f')}x"
        return (
            bold(pair, strong) if r["ratio_all_with_start"] is not None else _ratio(r["ratio_all"])
        )

    def agree(r: Mapping[str, Any]) -> str:
        return f"{f(r['max_abs_d_wl'], 'g')} / {sci(r['max_abs_d_sbert'])}"

    cols = list(backends)
    runs = [backends[b] for b in cols]
    strong = [b == "onnx" for b in cols]
    rows = [
        [f"{fig['sample_pairs']} sampled pairs", _sample(ref), *(_sample(r) for r in runs)],
        [
            "ratio on the sample, model load left out",
            "1",
            *(_ratio(r["ratio_sample"], s) for r, s in zip(runs, strong, strict=True)),
        ],
        [
            "start (process, imports, model load, one string)",
            *(_secs(r["start_seconds"]) for r in (ref, *runs)),
        ],
        [
            "ratio on the sample, start included",
            "1",
            *(_ratio(r["ratio_sample_with_start"], s) for r, s in zip(runs, strong, strict=True)),
        ],
        [
            f"all {fig['all_pairs']:,} pairs",
            f"{_secs(ref['all_seconds_extrapolated'], ',.0f')} (extrapolated)",
            *(_whole(r) for r in runs),
        ],
        [
            "ratio on all pairs, without / with the start",
            "1",
            *(both(r, s) for r, s in zip(runs, strong, strict=True)),
        ],
        [
            "max \\|dS_WL\\| / max \\|dS_SBERT\\| against the reference (sample)",
            "",
            *(agree(r) for r in runs),
        ],
    ]
    header = ["", "reference (torch)", *(f"KGScorer kgx, {b}" for b in cols)]
    return md_table(header, rows)


@view("reference_modes", "reference")
def _reference_modes(fig: Mapping[str, Any]) -> str:
    """The other modes timed on the same pairs, in the same run (``--modes``)."""
    modes = fig.get("modes") or {}
    mode_rows = [
        [
            f"KGScorer {m}, {r['backend']}",
            _sample(r),
            _ratio(r["ratio_sample"]),
            _whole(r),
            _ratio(r["ratio_all"], strong=True),
        ]
        for m, r in modes.items()
    ]
    mode_header = ["mode", "sampled pairs", "ratio", "all pairs", "ratio on all pairs"]
    return md_table(mode_header, mode_rows)


@view("quickstart", "quickstart")
def _quickstart(fig: Mapping[str, Any]) -> str:
    """The README's own-data quick start, line by line (``bench_quickstart.py``)."""
    rows = [[f"`{r['line']}`", f"{f(r['seconds'], '.1f')} s"] for r in fig["lines"]]
    rows.append([f"total ({fig['cache']} cache)", f"{f(fig['total_seconds'] / 60, '.1f')} min"])
    return md_table(["line", "wall time"], rows)


@view("ray", "ray")
def _ray(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            c["label"],
            f(c["seconds"], ".1f"),
            f(c["answers_per_s"], ".2f"),
            f(c["strings_encoded"], ",d"),
        ]
        for c in fig["configs"].values()
    ]
    return md_table(["configuration", "seconds", "answers/s", "strings encoded"], rows)


@view("dashboard", "dashboard")
def _dashboard(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            f"re-blend {fig['answers']:,} stored answers and regroup the leaderboard, median / p95 "
            f"(target < {fig['target_ms']} ms)",
            f"{f(fig['reblend_ms']['median'], '.1f')} / {f(fig['reblend_ms']['p95'], '.1f')} ms",
        ],
        [
            "the three 50-node graphs as one linked document, median",
            f"{f(fig['linked_document']['ms'], '.1f')} ms ({fig['linked_document']['kib']} KiB)",
        ],
        [
            "the three separate pyvis pages it replaced",
            f"{f(fig['pyvis_pages']['ms'], '.1f')} ms, {fig['pyvis_pages']['kib']} KiB each",
        ],
        [
            "cold start to the first full render of the overview",
            f"{f(fig['cold_start_s'][0], '.1f')}-{f(fig['cold_start_s'][1], '.1f')} s",
        ],
        [
            "one alpha step in the browser, key press to updated page",
            f"{f(fig['alpha_step_s'][0], '.1f')}-{f(fig['alpha_step_s'][1], '.1f')} s",
        ],
    ]
    return md_table(["figure", "value"], rows)


@view("first_start", "first_start")
def _first_start(fig: Mapping[str, Any]) -> str:
    fs = fig["first_start"]
    rows = [
        ["server healthy", f"{f(fs['server_healthy_s'], '.1f')} s"],
        ["title and the build's steps on screen (`st.status`)", span(fs["title_s"])],
        [
            "usable overview (Mean CUS on screen), ONNX export cached",
            span(fs["usable_overview_s"]),
        ],
        [
            "usable overview with an empty cache folder (`S3KG_CACHE_DIR`: the ONNX export runs "
            "once)",
            f"{f(fs['usable_overview_empty_cache_s'], '.1f')} s",
        ],
        [
            "before this round (issue 16, quiet machine)",
            f"{span(fs['before_s'], 'd')}, one fixed spinner line",
        ],
    ]
    return md_table(["figure", "value"], rows)


@view("alpha_steps", "first_start")
def _alpha_steps(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            s["label"],
            f"{s['number_p50_ms']} / {s['number_p95_ms']} ms",
            f"{s['idle_p50_ms']} / {s['idle_p95_ms']} ms",
        ]
        for s in fig["alpha_steps"].values()
    ]
    return md_table(["page", "new number on screen", "page idle"], rows)


@view("demo_build", "first_start")
def _demo_build(fig: Mapping[str, Any]) -> str:
    build = fig["demo_build"]
    rows = []
    for part, p in build["parts"].items():
        now = "0" if p["now_s"] == 0 else f(p["now_s"], ".2f")
        if p["now_note"]:
            now = f"{now} ({p['now_note']})" if now else p["now_note"]
        rows.append([part, f(p["before_s"], ".2f"), now])
    header = [
        "part",
        f"before ({build['before_commit']}: spaCy, torch MiniLM, GraphEval in the build)",
        "now (recorded KGs, ONNX MiniLM, GraphEval deferred)",
    ]
    return md_table(header, rows)


@view("explorer", "explorer")
def _explorer(fig: Mapping[str, Any]) -> str:
    return figure_rows(fig, ["figure", "value"])


@view("annotation", "annotation")
def _annotation(fig: Mapping[str, Any]) -> str:
    return figure_rows(fig, ["figure", "median / p95"])


@view("annotation_exchange", "annotation")
def _annotation_exchange(fig: Mapping[str, Any]) -> str:
    ex = fig["exchange"]
    rows = [
        [
            label,
            f"{f(ex[k]['export_s'], '.1f')} s",
            f"{f(ex[k]['import_s'], '.1f')} s",
            f"{f(ex[k]['mb'], '.1f')} MB",
        ]
        for k, label in (("csv", "CSV"), ("parquet", "Parquet"), ("jsonl", "JSON lines"))
    ]
    return md_table([f"format ({ex['log_rows']:,} log rows)", "export", "import", "size"], rows)


ENCODER_COLUMNS = ("torch", "onnx", "openvino", "minilm-static", "onnx int8")


@view("encoders_speed", "encoders")
def _encoders_speed(fig: Mapping[str, Any]) -> str:
    rows = []
    for name, cells in fig["strings_per_s"].items():
        row = [name]
        for col in ENCODER_COLUMNS:
            c = cells.get(col)
            if c is None:
                row.append("")
                continue
            text = f"{c['median']:,} ({c['best']:,})"
            if c["speedup"] is not None:
                text += (
                    f" {f(c['speedup'], '.3g') if c['speedup'] >= 100 else f(c['speedup'], '.2f')}x"
                )
            row.append(text)
        rows.append(row)
    header = [
        "set / model",
        "torch",
        "onnx",
        "openvino",
        "minilm-static",
        "onnx int8 (not shipped)",
    ]
    return md_table(header, rows)


@view("encoders_agreement", "encoders")
def _encoders_agreement(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            name,
            a["onnx"],
            f(a["onnx_min_cosine"], ".4f"),
            a["openvino"],
            f(a["openvino_min_cosine"], ".4f"),
        ]
        for name, a in fig["agreement"].items()
    ]
    header = [
        "set / model",
        "onnx: S3KG / S_SBERT / S_WL",
        "onnx min cosine",
        "openvino: S3KG / S_SBERT / S_WL",
        "openvino min cosine",
    ]
    return md_table(header, rows)


@view("encoders_cli_100", "encoders")
def _encoders_cli_100(fig: Mapping[str, Any]) -> str:
    rows = []
    for name, cells in fig["cli_100_pairs"].items():
        row = [name]
        for col in ("torch", "onnx", "openvino", "minilm-static"):
            c = cells[col]
            text = f"{f(c['seconds'], '.1f')} s ({f(c['pairs_per_s'], '.1f')} pairs/s)"
            if c["speedup"] is not None:
                text += f" {f(c['speedup'], '.2f')}x"
            row.append(text)
        rows.append(row)
    return md_table(["set", "torch", "onnx", "openvino", "minilm-static"], rows)


@view("encoders_cli_all", "encoders")
def _encoders_cli_all(fig: Mapping[str, Any]) -> str:
    rows = []
    for c in fig["cli_all_pairs"].values():
        speed = f(c["speedup"], "d") if isinstance(c["speedup"], int) else f(c["speedup"], ".2f")
        speed = f"{speed}x" if c["speedup"] == 1 else f"**{speed}x**"
        pps = f(c["pairs_per_s"], ".3g") if c["pairs_per_s"] >= 100 else f(c["pairs_per_s"], ".1f")
        rows.append(
            [
                c["label"],
                f(c["seconds"], ".1f"),
                " / ".join(f(x, ".1f") for x in c["rounds"]),
                pps,
                speed,
                "(another space)" if c["max_abs_d_s3kg"] is None else sci(c["max_abs_d_s3kg"]),
            ]
        )
    header = [
        "encoder / backend",
        "seconds (best)",
        "both rounds",
        "pairs/s",
        "vs torch",
        "max \\|dS3KG\\| vs torch",
    ]
    return md_table(header, rows)


@view("encoders_static", "encoders")
def _encoders_static(fig: Mapping[str, Any]) -> str:
    rows = []
    for name, s in fig["static_vs_minilm"].items():
        mean = name == "mean"
        cells = [
            bold(f(s[enc][m]), mean)
            for enc in ("minilm", "minilm-static")
            for m in ("hybrid", "paper", "kgx")
        ]
        rows.append([bold(name, mean), *cells])
    header = ["set", "MiniLM hybrid", "paper", "kgx", "minilm-static hybrid", "paper", "kgx"]
    return md_table(header, rows)


@view("collect", "collect")
def _collect(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            r["code"],
            str(r["concurrency"]),
            str(r["answers_ok"]),
            f(r["seconds"], ".1f"),
            f(r["answers_per_s"], ".3f"),
            f(r["requests_per_answer"], ".2f"),
            str(r["most_held"]),
            str(r["exit"]),
        ]
        for r in fig["runs"]
    ]
    header = [
        "code",
        "--concurrency",
        "answers ok",
        "seconds",
        "answers/s",
        "requests/answer",
        "most held by the server",
        "exit",
    ]
    return md_table(header, rows)


@view("serve_disconnect", "collect")
def _serve_disconnect(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            k.replace("_", " "),
            f"{f(d['short_after_s'], 'g')} s",
            f"{f(d['short_idle_s'], 'g')} s",
            f"{f(d['long_alone_s'], 'g')} s",
        ]
        for k, d in fig["serve_disconnect"].items()
    ]
    header = [
        "the abandoned request",
        "the short request after it",
        "the short request on an idle server",
        "the long request alone",
    ]
    return md_table(header, rows)


@view("fresh_clone", "collect")
def _fresh_clone(fig: Mapping[str, Any]) -> str:
    rows = [
        [r["step"], template(r["wall_time"]), template(r["result"])] for r in fig["fresh_clone"]
    ]
    return md_table(["step", "wall time", "result"], rows)


@view("performance", "scoring", "reference", "explorer")
def _performance(scoring: Mapping[str, Any], ref: Mapping[str, Any], ex: Mapping[str, Any]) -> str:
    """README: the headline speed figures, each with the bench that measures it."""
    t = scoring["throughput"]
    mini, mp = t["all_minilm"], t["all_mpnet"]
    on, to = ref["backends"]["onnx"], ref["backends"].get("torch")
    default = (ref.get("modes") or {}).get("ot")
    rows = [
        [
            f"`KGScorer` on the {mini['pairs']:,} labelled pairs, MiniLM / mpnet (torch)",
            " / ".join(f(r["kgscorer_pairs_per_s"], ".3g") for r in (mini, mp)) + " pairs/s",
            "`bench/speed/bench_scoring.py`",
        ],
        [
            "time inside the encoder, MiniLM / mpnet",
            " / ".join(f"{f(100 - r['non_embedding_pct'], '.1f')} %" for r in (mini, mp)),
            "`bench/speed/bench_scoring.py`",
        ],
        [
            "`KGScorer` against a loop of `s3kg_score` calls, MiniLM / mpnet",
            f"{f(mini['speedup'], '.2f')}x / {f(mp['speedup'], '.2f')}x faster",
            "`bench/speed/bench_scoring.py`",
        ],
        [
            "`KGScorer` (kgx) against the authors' released procedure, all pairs, one thread: "
            + ("onnx (default) / torch" if to else "onnx (default)"),
            (
                f"{f(on['ratio_all'], '.1f')}x / {f(to['ratio_all'], '.1f')}x faster"
                if to
                else f"{f(on['ratio_all'], '.1f')}x faster"
            )
            + ", S_WL identical",
            "`bench/speed/bench_reference.py`",
        ],
        *(
            [
                [
                    "the default mode (`ot`) against the same procedure, the same pairs and run",
                    f"{f(default['ratio_all'], '.1f')}x faster",
                    "`bench/speed/bench_reference.py --modes kgx,ot,hybrid`",
                ]
            ]
            if default
            else []
        ),
        [
            f"sample explorer: a question with a {ex['context_triples']}-triple context KG at a "
            "new tau, median",
            f"{ex['tau_recompute_ms']['median']} ms, {ex['strings_encoded']} strings encoded",
            "`bench/speed/bench_explorer.py`",
        ],
        [
            "sample explorer: key press to new pictures in the browser",
            f"{f(ex['tau_to_pictures_s'], '.2f')} s",
            "`bench/speed/bench_explorer.py`",
        ],
    ]
    return md_table(["measure", "figure", "bench"], rows)


@view("alpha_step", "alpha_step")
def _alpha_step(fig: Mapping[str, Any]) -> str:
    """The alpha step page by page: the live block against the server's rerun, one run.

    An older file holds the Overview alone (``live`` and ``server`` at its top).
    """
    pages = fig.get("pages") or {"overview": {"live": fig["live"], "server": fig["server"]}}
    names = {
        "overview": "Overview",
        "explorer": "Sample explorer",
        "search": "Search (range)",
        "failure": "Failure analysis",
        "compare": "Run comparison",
        "run": "Run details",
    }
    rows = [
        [
            f"{names.get(page, page)}: {label}",
            f"{f(r['p50_ms'], '.1f')} ms",
            f"{f(r['p95_ms'], '.1f')} ms",
            f"{f(r['max_ms'], '.1f')} ms",
            str(r["n"]),
        ]
        for page, row in pages.items()
        for label, r in (
            ("in the browser (live block)", row["live"]),
            ("from the server's rerun (before issue 60)", row["server"]),
        )
    ]
    return md_table(["key press to new numbers", "median", "p95", "max", "steps"], rows)


@view("alpha_step_scale", "alpha_step_scale")
def _alpha_step_scale(fig: Mapping[str, Any]) -> str:
    """The same on a scale database (``bench_alpha_step.py --db`` a ``bench_scale.py`` one)."""
    return _alpha_step(fig)


@view("check", "check")
def _check(fig: Mapping[str, Any]) -> str:
    def io(r: Mapping[str, Any]) -> str:
        return f"{f(r['write_s'], '.2f')} / {f(r['read_s'], '.2f')} s, {f(r['mb'], '.1f')} MB"

    rows = [
        [
            f"{r['answers']:,}",
            f"{f(r['paired_bootstrap_s'], '.2f')} s",
            f"{f(r['scipy_paired_s'], '.2f')} s (x{f(r['scipy_ratio'], '.2f')})",
            f"{f(r['check_runs_s'], '.2f')} s",
            f"{f(r['export_frame_s'], '.2f')} s",
            io(r["csv"]),
            io(r["parquet"]),
            io(r["json"]),
        ]
        for r in fig["runs"].values()
    ]
    header = [
        "N per run",
        f"`paired_bootstrap` ({fig['resamples']:,}, BCa)",
        "scipy's `paired=True` form",
        "`check_runs`",
        "`export_frame`",
        "CSV write / read",
        "Parquet write / read",
        "JSON write / read",
    ]
    return md_table(header, rows)


@view("check_demo", "check")
def _check_demo(fig: Mapping[str, Any]) -> str:
    rows = [
        [name, f"{m['difference']:+.3f}", f"{m['ci'][0]:+.3f} to {m['ci'][1]:+.3f}"]
        for name, m in fig["demo"]["metrics"].items()
    ]
    return md_table(["metric", "difference (T=0.7 - T=0)", "95 % interval"], rows)


@view("report", "report")
def _report(fig: Mapping[str, Any]) -> str:
    titles = {
        "alone_10": "the run alone",
        "against_10": "against the baseline",
        "alone_50": "the run alone",
        "against_50": "against the baseline",
    }
    rows = []
    for name, label in (("demo", "the demo, run 2 (T=0.7)"), ("large", "")):
        group = fig[name]
        label = label or f"{group['answers']:,} answers per run"
        for key, title in titles.items():
            r = group[key]
            rows.append(
                [
                    label,
                    title,
                    f"{r['shown']} of {r['asked']}",
                    f"{f(r['kib'], '.0f')} KiB",
                    f"{f(r['gzip_kib'], '.0f')} KiB",
                    f"{f(r['build_s'], '.1f')} s",
                    f"{f(r['render_s'], '.2f')} s",
                ]
            )
    header = [
        "database",
        "report",
        "answers shown",
        "HTML file",
        "gzipped",
        "`build_report`",
        "`render_report`",
    ]
    return md_table(header, rows)


@view("limits_tau", "limits")
def _limits_tau(fig: Mapping[str, Any]) -> str:
    def peak(gb: float, above: float) -> str:
        return f"{f(gb, '.2f')} GB (+{f(above, '.2f')})"

    rows = [
        [
            f"{r['n']:,}",
            f"{f(r['before_s'], '.1f')} s",
            peak(r["before_gb"], r["before_above_gb"]),
            f"{f(r['after_s'], '.1f')} s",
            peak(r["after_gb"], r["after_above_gb"]),
        ]
        for r in fig["tau"].values()
    ]
    header = [
        "N",
        "before: time",
        "before: peak (above baseline)",
        "after: time",
        "after: peak (above baseline)",
    ]
    return md_table(header, rows)


@view("layout", "layout")
def _layout(fig: Mapping[str, Any]) -> str:
    rows = [
        [
            f"{r['triples']:,}",
            r["before"],
            r["before_browser"],
            r["before_nodes"],
            f(r["after_layout_s"], ".1f"),
            f(r["after_browser_s"], ".1f"),
            r["after_nodes"],
            r["whole"],
        ]
        for r in fig["sizes"].values()
    ]
    header = [
        "triples a KG",
        "before: layout s",
        "before: browser",
        "before: nodes drawn g/a/c",
        "after: layout s",
        "after: browser s",
        "after: nodes g/a/c",
        'after, "Whole KGs": layout / browser s',
    ]
    return md_table(header, rows)


def _search_table(entry: Mapping[str, Any]) -> str:
    rows = [
        [s["search"], f"{s['matched']:,}", str(s["median_ms"]), str(s["worst_ms"])]
        for s in entry["searches"]
    ]
    return md_table(["search", "matched", "median ms", "worst ms"], rows)


@view("search_20000", "search")
def _search_20000(fig: Mapping[str, Any]) -> str:
    """The Search page's query on the 20,000-answer scale database."""
    return _search_table(fig["databases"]["20000"])


@view("search_100000", "search")
def _search_100000(fig: Mapping[str, Any]) -> str:
    """The Search page's query on the 100,000-answer scale database."""
    return _search_table(fig["databases"]["100000"])


SCALE_STEPS = {
    "first": "first visit",
    "second": "second visit",
    "share 5->6 %": "share slider 5 -> 6 %",
    "share 6->20 %": "share slider 6 -> 20 % (14 key presses)",
    "share 6->20 %, cases shown": "share slider 6 -> 20 %: cases on screen",
    "share 6->20 %, all explained": "share slider 6 -> 20 %: every case explained",
    "alpha step, numbers shown (median of 5)": "alpha one step: new numbers shown (median of 5)",
    "alpha step": "alpha one step (page idle)",
    "run switch": "run switch",
    "picker search": "question picker: a search (Find, one word)",
    "verdict, save": "a verdict saved (Confirm)",
    "verdict, Overview after the save": "the Overview's next visit after that save",
}
"""The steps of ``bench_scale_pages.py`` as the table names them (others by their key)."""


@view("scale_pages", "scale_pages")
def _scale_pages(fig: Mapping[str, Any]) -> str:
    """One row per database, page and step: the ``before`` and ``after`` runs side by side.

    A database added to the evidence (one more entry of ``databases``) adds its rows; a run
    it lacks (no ``before``) leaves its cells empty.
    """

    def secs(run: Mapping[str, Any] | None, page: str, step: str) -> str:
        value = (run or {}).get("pages", {}).get(page, {}).get(step)
        return f"{f(value, '.1f')} s" if isinstance(value, int | float) else ""

    def gb(run: Mapping[str, Any] | None) -> str:
        value = (run or {}).get("server_peak_gb")
        return f"{f(value, '.2f')} GB" if value is not None else ""

    rows = []
    for db in sorted(fig["databases"].values(), key=lambda d: d["answers"]):
        before, after = db.get("before"), db.get("after")
        answers = f"{db['answers']:,}"
        pages: dict[str, str] = {}
        for run in (before, after):
            for key, p in (run or {}).get("pages", {}).items():
                pages.setdefault(key, p["page"])
        for key, title in pages.items():
            steps: list[str] = []
            for run in (before, after):
                page = (run or {}).get("pages", {}).get(key, {})
                steps += [
                    k
                    for k, v in page.items()
                    if isinstance(v, int | float) and k != "rss_gb" and k not in steps
                ]
            rows += [
                [answers, title, SCALE_STEPS.get(s, s), secs(before, key, s), secs(after, key, s)]
                for s in steps
            ]
        rows.append([answers, "the server", "peak memory", gb(before), gb(after)])
    return md_table(["answers", "page", "step", "before", "after"], rows)


SCALE_STAGES = ("import", "score", "tau", "cus", "export")
"""The CLI stages ``bench_scale.py`` times, in their order."""


@view("scale_cli", "scale_cli")
def _scale_cli(fig: Mapping[str, Any]) -> str:
    """One row per database size: each stage's wall time (peak memory), the database's size."""

    def cell(stage: Mapping[str, Any] | None) -> str:
        if not stage:
            return ""
        if "stopped" in stage:
            return str(stage["stopped"])
        return f"{f(stage['seconds'], '.1f')} s ({f(stage['peak_gb'], '.2f')} GB)"

    def label(key: str) -> str:  # "100000" (the default mode) or "100000 hybrid"
        n, _, mode = key.partition(" ")
        return f"{int(n):,}" + (f" ({mode})" if mode else "")

    rows = [
        [label(n), *(cell(row.get(s)) for s in SCALE_STAGES), f"{f(row['db_mb'], '.0f')} MB",
         f"{row['commit']}, load {row['load_before'][0]:g} -> {row['load_after'][0]:g}"]
        for n, row in sorted(fig["sizes"].items(), key=lambda kv: (int(kv[0].split()[0]), kv[0]))
    ]  # fmt: skip
    return md_table(["answers", *SCALE_STAGES, "database", "commit, load"], rows)
