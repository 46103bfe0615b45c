"""Benchmark the scoring pass that scores and explains: score_pairs before and after, explain_pairs.

What is measured
----------------
Issue 27 made :meth:`KGScorer.score_pairs` and :meth:`KGScorer.explain_pairs` one pass
(``KGScorer._run``; the explanation keeps what the computation made). This script checks that
scoring did not get slower and says what explaining costs:

``before``
    The scorer as it was at ``--baseline`` (a git revision): its ``scoring/s3kg.py``,
    ``scoring/align.py`` and ``normalize.py`` read with ``git show`` and loaded as modules beside
    the working tree's (everything else is shared).
``after``
    The working tree's ``KGScorer.score_pairs``.
``explain``
    The working tree's ``KGScorer.explain_pairs`` on the same pairs.

Pairs: every ``ok`` row of ``s3kg_release/benchmarks_kgs/*.csv`` (the released KGs, as
``s3kg pairs score`` reads them), or the first ``--limit`` of them. One :class:`EmbeddingCache`
is filled first (MiniLM) and shared by every scorer, so nothing is encoded while the clock runs:
the figures are the pass's own cost (normalisation, picks, alignment, WL), which is everything
the change touched (with encoding, scoring is embedding-bound: see bench_scoring.py). The
methods run interleaved, ``--rounds`` times each, in an order that rotates every round; the
table gives the median pairs/s and the ratios of the medians, by the wall clock and by the
process's CPU time (on a shared, busy machine the CPU time is the steadier of the two; run
with ``OMP_NUM_THREADS=1`` so that BLAS does not add threads of its own). It also checks that
``after`` and ``before`` give identical results and that ``explain``'s S_WL and S_SBERT are
``after``'s, bit for bit.

Usage::

    python -m bench.speed.bench_explain                       # hybrid and kgx, 5 rounds
    python -m bench.speed.bench_explain --modes hybrid --rounds 9 --baseline main
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import statistics
import subprocess
import sys
import time
import types
from functools import partial
from pathlib import Path
from typing import Any

from bench._common import add_data_dir, print_load
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.kgio import read_pairs_csv
from s3kg_core.scoring.s3kg import KGScorer

REPO = Path(__file__).resolve().parents[2]

# The baseline's modules are loaded under made-up names inside the package (their relative
# imports of the unchanged modules then resolve); no such module exists in the repository.
_PKG = "s3kg_core"
# (module path in the repository, the import lines to point at the other baseline modules)
_BASELINE = (
    ("s3kg_core/normalize.py", f"{_PKG}._baseline_normalize", {}),
    ("s3kg_core/scoring/align.py", f"{_PKG}.scoring._baseline_align", {}),
    (
        "s3kg_core/scoring/s3kg.py",
        f"{_PKG}.scoring._baseline_s3kg",
        {
            "from .align import": "from ._baseline_align import",
            "from ..normalize import": "from .._baseline_normalize import",
        },
    ),
)


def load_baseline(revision: str) -> types.ModuleType:
    """The baseline's ``scoring.s3kg`` module, with its own align and normalize modules."""
    module = None
    for path, name, rewrites in _BASELINE:
        source = subprocess.run(
            ["git", "show", f"{revision}:{path}"], cwd=REPO, check=True, capture_output=True
        ).stdout.decode()
        for old, new in rewrites.items():
            if old not in source:
                raise SystemExit(f"{path} at {revision} has no {old!r}")
            source = source.replace(old, new)
        spec = importlib.util.spec_from_loader(name, loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        module.__package__ = name.rpartition(".")[0]
        sys.modules[name] = module
        exec(compile(source, f"{revision}:{path}", "exec"), module.__dict__)
    assert module is not None
    return module


def read_pairs(data_dir: Path, limit: int | None) -> list[tuple[Any, Any]]:
    pairs = []
    for path in sorted(glob.glob(str(data_dir / "s3kg_release" / "benchmarks_kgs" / "*.csv"))):
        pairs += [(r.kg_1, r.kg_2) for r in read_pairs_csv(path) if r.status == "ok"]
    return pairs[:limit] if limit else pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default="main", help="git revision of 'before'")
    parser.add_argument("--modes", default="hybrid,kgx")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="first N pairs only")
    add_data_dir(parser, "s3kg_release/benchmarks")
    args = parser.parse_args(argv)
    baseline = load_baseline(args.baseline)
    pairs = read_pairs(args.data_dir, args.limit)
    encoder = load_encoder("minilm")
    cache = EmbeddingCache(encoder)
    print(f"{len(pairs)} pairs; baseline {args.baseline}; {args.rounds} rounds")
    print_load("before")
    print(f"{'mode, clock':13} {'before':>6} {'after p/s':>10} {'explain p/s':>12}"
          f" {'after/before':>13} {'explain/after':>14}")  # fmt: skip
    for mode in args.modes.split(","):
        scorers = {
            "before": baseline.KGScorer(encoder, mode=mode, cache=cache),
            "after": KGScorer(encoder, mode=mode, cache=cache),
        }
        texts = [("a text", "another text")] * len(pairs) if mode == "text" else None
        after = scorers["after"]
        runs = {
            "before": partial(scorers["before"].score_pairs, pairs, texts=texts),
            "after": partial(after.score_pairs, pairs, texts=texts),
            "explain": partial(after.explain_pairs, pairs, texts=texts),
        }
        first = {name: run() for name, run in runs.items()}  # fills the cache; checks
        if [r.to_dict() for r in first["before"]] != [r.to_dict() for r in first["after"]]:
            raise SystemExit(f"{mode}: before and after differ")
        same = all(
            (e.s_wl, e.s_sbert) == (r.s_wl, r.s_sbert)
            for e, r in zip(first["explain"], first["after"], strict=True)
        )
        if not same:
            raise SystemExit(f"{mode}: explain and score differ")
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        names = list(runs)
        for k in range(args.rounds):
            for name in names[k % 3 :] + names[: k % 3]:
                start, start_cpu = time.perf_counter(), time.process_time()
                runs[name]()
                times[name].append(time.perf_counter() - start)
                cpu[name].append(time.process_time() - start_cpu)
        for label, measured in (("wall", times), ("cpu", cpu)):
            rate = {name: len(pairs) / statistics.median(t) for name, t in measured.items()}
            print(
                f"{mode + ' ' + label:13} {rate['before']:6.0f} {rate['after']:10.0f}"
                f" {rate['explain']:12.0f} {rate['after'] / rate['before']:13.3f}"
                f" {rate['explain'] / rate['after']:14.3f}"
            )
        spread = {n: (min(t), max(t)) for n, t in times.items()}
        print("         wall seconds min-max: " + ", ".join(
            f"{n} {a:.2f}-{b:.2f}" for n, (a, b) in spread.items()))  # fmt: skip
    print_load("after")


if __name__ == "__main__":
    main()
