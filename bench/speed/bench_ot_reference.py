"""The default mode's pairs per second against the same mode at an earlier commit, interleaved.

Issue 57 allows the role-aware ``ot`` mode (scoring version 4) to be at most 1.25x slower than
the ``ot`` of scoring version 3. This script extracts the library of ``--reference`` (a commit,
by default aa0f19c, the last one before version 4) with ``git archive`` into a temporary folder
as the package ``s3kg_core_reference``, loads both libraries in one process, and scores the nine
labelled pair sets' released KGs and the BAMBOO dev graphs (``../shared/data`` or
``$S3KG_DATA_DIR``) with each, each with its own warm embedding cache (the scoring alone), A B B
A ... for ``--rounds`` rounds. It prints each round's pairs per second (this process's CPU time)
and the median ratio of the two, so a drift of the machine's speed cancels out.

    python -m bench.speed.bench_ot_reference [--reference aa0f19c] [--rounds 4]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import REPO, print_load
from s3kg_core import KGScorer
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.bamboo import load_bamboo
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set

REFERENCE = "aa0f19c"
"""The last commit before scoring version 4 (issue 57)."""


def reference_library(commit: str, folder: Path) -> Any:
    """The library at ``commit``, imported as ``s3kg_core_reference`` from ``folder``."""
    archive = folder / "ref.tar"
    subprocess.run(
        [
            "git",
            "-C",
            str(REPO),
            "archive",
            "--format=tar",
            "-o",
            str(archive),
            commit,
            "s3kg_core",
        ],
        check=True,
    )
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    package = folder / "s3kg_core_reference"
    (folder / "s3kg_core").rename(package)
    spec = importlib.util.spec_from_file_location(
        package.name, package / "__init__.py", submodule_search_locations=[str(package)]
    )
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot import the library of {commit}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[package.name] = module  # its relative imports find their package
    spec.loader.exec_module(module)
    return module


def pairs() -> list[tuple[list[list[str]], list[list[str]]]]:
    """The pair sets' and BAMBOO dev's KG pairs, as plain lists (both libraries read them)."""
    out: list[Any] = []
    for name in list_pair_sets():
        ps = load_pair_set(name)
        out += list(zip(ps.kg_1, ps.kg_2, strict=True))
    for task in load_bamboo("dev").tasks:
        out += list(zip(task.kg_1, task.kg_2, strict=True))
    return [([t.to_list() for t in a], [t.to_list() for t in b]) for a, b in out]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", default=REFERENCE, help="the commit to compare with")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds")
    args = parser.parse_args()
    print_load("before")
    with tempfile.TemporaryDirectory() as tmp:
        ref = reference_library(args.reference, Path(tmp))
        work = pairs()
        new = KGScorer(load_encoder("minilm"), mode="ot")
        old = ref.KGScorer(ref.encoders.registry.load_encoder("minilm"), mode="ot")
        new.score_pairs(work)  # warm both caches: every string encoded once
        old.score_pairs(work)
        ratios: list[float] = []
        rates: dict[str, list[float]] = {"reference": [], "now": []}
        for rnd in range(args.rounds):
            took: dict[str, float] = {}
            order = [("reference", old), ("now", new)]
            for name, scorer in order if rnd % 2 == 0 else order[::-1]:
                start = time.process_time()
                scorer.score_pairs(work)
                took[name] = time.process_time() - start
                rates[name].append(len(work) / took[name])
            ratios.append(took["reference"] / took["now"])
            print(
                f"round {rnd}: reference {len(work) / took['reference']:.0f} pairs/s, now "
                f"{len(work) / took['now']:.0f} pairs/s, speed now/reference {ratios[-1]:.3f}",
                flush=True,
            )
        before, now = statistics.median(rates["reference"]), statistics.median(rates["now"])
        print(
            f"{len(work):,} pairs, ot at {args.reference} against now: median pairs/s "
            f"{before:.0f} and {now:.0f}; "
            f"median speed ratio now/reference {statistics.median(ratios):.3f} (the limit: 0.8)"
        )
    print_load("after")


if __name__ == "__main__":
    main()
