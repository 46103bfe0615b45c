"""Throughput of `score` on Ray with 1 and 2 workers (and without Ray), on the released QA runs.

Each configuration imports the same released runs into a fresh DuckDB file and scores every
answer (GoldSim and CtxSim: two S3KG comparisons per answer), so nothing is cached between
configurations. Ray start-up is included in the wall time and also reported on its own.

Usage::

    python -m bench.speed.bench_ray [--runs qa/small] [--encoder minilm] [--workers 1,2]
        [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from bench._common import add_data_dir

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="qa/small", help="folder under s3kg_release/")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--workers", default="1,2")
    add_data_dir(parser)
    args = parser.parse_args()

    import ray

    from s3kg_core.analysis.cus_table import cus_table
    from s3kg_core.stages.importing import import_s3kg_release
    from s3kg_core.stages.score import score_store
    from s3kg_core.store.store import Store

    folder = args.data_dir / "s3kg_release" / args.runs
    rows = []
    tables = {}
    configs: list[int | None] = [None, *(int(w) for w in args.workers.split(","))]
    for workers in configs:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(Path(tmp) / "bench.duckdb")
            import_s3kg_release(store, folder)
            ray_start = 0.0
            if workers is not None:
                t0 = time.perf_counter()
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
                ray_start = time.perf_counter() - t0
            t0 = time.perf_counter()
            report = score_store(
                store,
                encoder=args.encoder,
                ray_address=None if workers is None else "local",
                ray_workers=workers,
                batch_items=100,
            )
            seconds = time.perf_counter() - t0
            if workers is not None:
                ray.shutdown()
            label = "no Ray (one process)" if workers is None else f"Ray, {workers} worker(s)"
            rows.append((label, report.scored, seconds, ray_start, report.encoded))
            tables[label] = cus_table(store)
    print(f"released runs: {folder}; encoder {args.encoder}; {os.cpu_count()} CPUs")
    print(
        f"{'configuration':<24}{'answers':>8}{'seconds':>9}{'answers/s':>11}"
        f"{'ray start s':>12}{'encoded':>9}"
    )
    for label, n, sec, start, enc in rows:
        print(f"{label:<24}{n:>8}{sec:>9.1f}{n / sec:>11.2f}{start:>12.1f}{enc:>9}")
    base = [r for r in rows if r[0].startswith("Ray, 1")]
    for label, _n, sec, _, _ in rows:
        if base and label.startswith("Ray, ") and not label.startswith("Ray, 1"):
            print(f"scaling {label} vs 1 worker: {base[0][2] / sec:.2f}x")
    first = next(iter(tables.values()))
    diff = max(float((t["cus"] - first["cus"]).abs().max()) for t in tables.values())
    print(f"largest CUS difference between configurations: {diff:.2e}")


if __name__ == "__main__":
    main()
