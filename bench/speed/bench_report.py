"""`s3kg report`: the HTML file's size and the time to make it, on the demo and a 2,000-answer run.

Two databases:

- the demo (``build_demo``, or ``--demo-db`` to reuse one): 30 questions, two SmolLM2 runs
  (T=0 and T=0.7), offline KGs, MiniLM;
- two runs of N answers each (``bench_check.build``: KGs of 3-6 random triples, score
  components drawn at random under a MiniLM signature; the shown answers are explained by
  MiniLM for real, their vectors encoded on the way since the database stores none).

For each, the report of the new run alone and against the baseline, with the default 10
answers shown and with 50: seconds of ``build_report`` (median of ``--repeats``), of
``render_report``, and the file's size (and gzipped, as a mail attachment travels zipped).

    python -m bench.speed.bench_report [--answers 2000] [--repeats 3] [--demo-db PATH]
        [--json evidence/report.json]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import write_evidence
from bench.speed.bench_check import build
from s3kg_core.analysis.check import CheckSettings
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.report.build import build_report
from s3kg_core.report.html import render_report
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.store.store import Store


def measure(
    store: Store, run: str | int, baseline: str | int | None, worst: int, repeats: int, enc: Any
) -> dict[str, Any]:
    build_s, render_s = [], []
    page, report = "", None
    for _ in range(repeats):
        started = time.perf_counter()
        report = build_report(
            store, run, baseline, worst=worst, settings=CheckSettings(), encoder=enc
        )
        build_s.append(time.perf_counter() - started)
        started = time.perf_counter()
        page = render_report(report)
        render_s.append(time.perf_counter() - started)
    data = page.encode("utf-8")
    if report is None:
        raise ValueError("repeats must be 1 or more")
    return {
        "baseline": baseline is not None,
        "asked": worst,
        "shown": len(report.cases),
        "build_s": round(statistics.median(build_s), 2),
        "render_s": round(statistics.median(render_s), 3),
        "kib": round(len(data) / 1024, 1),
        "gzip_kib": round(len(gzip.compress(data)) / 1024, 1),
    }


def bench(name: str, store: Store, run: str | int, baseline: str | int, args: Any, enc: Any):
    rows = {}
    for worst in (10, 50):
        for base in (None, baseline):
            key = f"{'against' if base is not None else 'alone'}_{worst}"
            rows[key] = r = measure(store, run, base, worst, args.repeats, enc)
            print(
                f"  {name:<16} {key:<11} {r['shown']:3d} shown  build {r['build_s']:6.2f} s  "
                f"render {r['render_s']:6.3f} s  {r['kib']:8.1f} KiB ({r['gzip_kib']:.1f} KiB "
                "gzipped)"
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--demo-db", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    enc = load_encoder("minilm")
    figures: dict[str, Any] = {"repeats": args.repeats}
    with tempfile.TemporaryDirectory() as folder:
        demo = args.demo_db
        if demo is None:
            from s3kg_core.demo import build_demo

            demo = Path(folder) / "demo.duckdb"
            started = time.perf_counter()
            build_demo(demo, encoder=enc, grapheval=False)
            print(f"demo database built in {time.perf_counter() - started:.0f} s")
        print("demo: run 2 (T=0.7) alone and against run 1 (T=0)")
        figures["demo"] = {
            "answers": 30,
            **bench("demo", Store(demo, read_only=True), 2, 1, args, enc),
        }
        started = time.perf_counter()
        signature = S3KGConfig().signature(enc.name)
        store = build(Path(folder) / "large.duckdb", args.answers, signature)
        print(
            f"{args.answers} answers per run (database built in "
            f"{time.perf_counter() - started:.1f} s): candidate alone and against baseline"
        )
        figures["large"] = {
            "answers": args.answers,
            **bench(f"{args.answers} answers", store, "candidate", "baseline", args, enc),
        }
    if args.json is not None:
        write_evidence(
            args.json,
            figures,
            title="s3kg report: the HTML file's size and time on the demo and a large run "
            "(bench_report.py)",
        )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
