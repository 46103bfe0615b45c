"""Pairs per second of two scoring modes on the same pairs, interleaved (issue 41).

Loads the encoder once, then scores the nine labelled pair sets' released KGs and the BAMBOO dev
graphs (``../shared/data`` or ``$S3KG_DATA_DIR``) with each mode in turn, A B A B ...,
``--rounds`` times: each round with a cold embedding cache (every string encoded, as
``s3kg pairs score`` does) and again with the cache warm (the scoring alone). Prints the median
pairs/s of each mode and the median of the per-round ratios B/A, so a drift of the machine's
speed cancels out.

    python -m bench.speed.bench_modes [--modes hybrid,wwl] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from bench._common import print_load
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.bamboo import load_bamboo
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.scoring.s3kg import KGScorer


def _pair_sets() -> list[tuple[Any, Any]]:
    pairs: list[tuple[Any, Any]] = []
    for name in list_pair_sets():
        ps = load_pair_set(name)
        pairs.extend(zip(ps.kg_1, ps.kg_2, strict=True))
    return pairs


def _bamboo() -> list[tuple[Any, Any]]:
    split = load_bamboo("dev")
    return [(a, b) for task in split.tasks for a, b in zip(task.kg_1, task.kg_2, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", default="hybrid,wwl", help="two modes, A,B")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall-clock time, or this process's CPU time (steadier on a machine others load)",
    )
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",")]
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    encoder = load_encoder("minilm")
    sets = {"pair sets": _pair_sets(), "BAMBOO dev": _bamboo()}
    print_load()
    print(f"encoder {encoder.name}")
    for label, pairs in sets.items():
        rates: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for mode in modes:
                cache = EmbeddingCache(encoder)
                for state in ("cold", "warm"):
                    scorer = KGScorer(encoder, mode=mode, cache=cache)
                    start = clock()
                    scorer.score_pairs(pairs)
                    rate = len(pairs) / (clock() - start)
                    rates.setdefault((mode, state), []).append(rate)
        print(f"{label}: {len(pairs):,} pairs, {args.rounds} interleaved rounds")
        for state in ("cold", "warm"):
            a, b = (rates[(m, state)] for m in modes)
            ratio = statistics.median(y / x for x, y in zip(a, b, strict=True))
            print(
                f"  {state:4s} cache: {modes[0]} {statistics.median(a):7.0f} pairs/s, "
                f"{modes[1]} {statistics.median(b):7.0f} pairs/s, {modes[1]}/{modes[0]} "
                f"{ratio:.2f}"
            )


if __name__ == "__main__":
    main()
