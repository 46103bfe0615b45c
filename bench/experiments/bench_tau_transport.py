"""Does the ``ot`` mode's transport plan align triples better than TAU's greedy? (issue 41.4)

TAU's first step aligns gold and answer triples one to one, best sentence cosine first, at cosine
>= :data:`~s3kg_core.scoring.tau.TRIPLE_THRESHOLD`. The ``ot`` mode's triple transport gives
another alignment over the same sentence vectors: each gold triple goes to the answer triple that
receives most of its mass (n:m), kept when their cosine reaches the same threshold. Both are
scored on the nine labelled pair sets (``kg_1`` as gold, ``kg_2`` as answer), with no parameter
fitted, by two figures per set:

- the AUROC of the *aligned share* (aligned gold triples plus covered answer triples, over all
  triples of the pair) against the pair's label: the better alignment separates the similar
  pairs from the others better;
- the *agreement* of the two: the share of gold triples that both call aligned or both do not.

The sentence step is compared alone (TAU with ``verify_components=False``), so that the
component checks, which both would share, do not blur the difference.

    python -m bench.experiments.bench_tau_transport [--sets paws_wiki_400,...] [--evidence]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import REPO, add_data_dir, print_load, text_table, write_evidence
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.metrics import auroc
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.normalize import normalize_triples
from s3kg_core.scoring.ot_mode import spread_transport
from s3kg_core.scoring.tau import TRIPLE_THRESHOLD, TripletAnalyzer

FIGURES = ("auroc_greedy", "auroc_plan", "agreement")


def plan_alignment(
    gold: np.ndarray, answer: np.ndarray, threshold: float
) -> tuple[set[int], set[int]]:
    """The gold rows the transport aligns and the answer rows they cover (cosine >= threshold)."""
    t = spread_transport(gold, answer)
    if t.plan.size == 0:  # the relaxed transport of a very large pair has no plan
        return set(), set()
    best = t.plan.argmax(axis=1)
    rows = [i for i, j in enumerate(best) if t.cosine[i, j] >= threshold]
    return set(rows), {int(best[i]) for i in rows}


def run_set(
    name: str, tau: TripletAnalyzer, cache: EmbeddingCache, data_dir: Path
) -> dict[str, Any]:
    """Both alignments' aligned shares on one pair set, their AUROCs and their agreement."""
    ps = load_pair_set(name, data_dir)
    greedy, plan, labels = [], [], []
    agree = total = 0
    for g_raw, a_raw, label in zip(ps.kg_1, ps.kg_2, ps.labels, strict=True):
        gold, answer = normalize_triples(g_raw), normalize_triples(a_raw)
        if not gold or not answer:
            continue
        result = tau.analyse(g_raw, a_raw)
        g_greedy = {gold.index(a.gold) for a in result.aligned}
        a_greedy = {answer.index(a.answer) for a in result.aligned}
        rows_g = cache.rows([t.sentence() for t in gold])
        rows_a = cache.rows([t.sentence() for t in answer])
        g_plan, a_plan = plan_alignment(
            cache.matrix[rows_g], cache.matrix[rows_a], tau.triple_threshold
        )
        n = len(gold) + len(answer)
        greedy.append((len(g_greedy) + len(a_greedy)) / n)
        plan.append((len(g_plan) + len(a_plan)) / n)
        labels.append(int(label))
        agree += sum((i in g_greedy) == (i in g_plan) for i in range(len(gold)))
        total += len(gold)
    return {
        "pairs": len(labels),
        "auroc_greedy": auroc(np.array(greedy), np.array(labels)),
        "auroc_plan": auroc(np.array(plan), np.array(labels)),
        "agreement": agree / total if total else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="", help="comma-separated pair sets (default: all)")
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="write the figures to evidence/tau_transport.json, with their provenance",
    )
    add_data_dir(parser)
    args = parser.parse_args()
    names = [s for s in args.sets.split(",") if s] or list_pair_sets(args.data_dir)
    load = print_load("before")
    encoder = load_encoder("minilm")
    cache = EmbeddingCache(encoder)
    tau = TripletAnalyzer(encoder, cache=cache, verify_components=False)
    start = time.perf_counter()
    figures = {name: run_set(name, tau, cache, args.data_dir) for name in names}
    rows = [
        [
            n,
            f["pairs"],
            f"{f['auroc_greedy']:.3f}",
            f"{f['auroc_plan']:.3f}",
            f"{f['agreement']:.3f}",
        ]
        for n, f in figures.items()
    ]
    mean = {k: float(np.mean([f[k] for f in figures.values()])) for k in FIGURES}
    rows.append(
        ["mean", sum(f["pairs"] for f in figures.values()), *(f"{mean[k]:.3f}" for k in FIGURES)]
    )
    print(f"threshold {TRIPLE_THRESHOLD}; {time.perf_counter() - start:.0f} s")
    print(text_table(["set", "pairs", "AUROC greedy", "AUROC plan", "agreement"], rows))
    if args.evidence:
        write_evidence(
            REPO / "evidence" / "tau_transport.json",
            {"threshold": TRIPLE_THRESHOLD, "load_before": load, "sets": figures, "mean": mean},
            title="TAU's sentence alignment: greedy against the ot mode's transport plan",
        )


if __name__ == "__main__":
    main()
