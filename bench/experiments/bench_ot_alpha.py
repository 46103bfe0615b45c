"""Which alpha do the two families of evidence ask of the ``ot`` mode? (issue 41.3)

The default alpha (0.5, DESIGN.md) weighs S_WL and S_SBERT alike. This script measures, for the
default mode and MiniLM, what other alphas would do to each family, from the same scorer (one
embedding cache; a score's components do not depend on alpha):

- BAMBOO (dev and train): the benchmark's mean of 12 figures and PARA main, at each alpha of
  ``--bamboo-alphas`` (the benchmark's protocol fixes one alpha for every task);
- the nine labelled pair sets: the mean **dev** AUROC at one fixed alpha for every set, at each
  alpha 0.0, 0.1, ..., 1.0, and the alpha each set's own protocol chooses on its dev pairs. The
  test pairs are not read.

    python -m bench.experiments.bench_ot_alpha [--bamboo-alphas 0.4,0.5,0.6,0.7] [--evidence]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from bench._common import REPO, add_data_dir, print_load, text_table, write_evidence
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.bamboo import load_bamboo, run_bamboo
from s3kg_core.evaluation.metrics import auroc
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.evaluation.pairs import DEFAULT_ALPHAS, choose_alpha
from s3kg_core.evaluation.splits import checked_dev_mask
from s3kg_core.scoring.result import blend
from s3kg_core.scoring.s3kg import KGScorer

MODE = "ot"


def pair_sets_at_alphas(cache: EmbeddingCache, data_dir: Any) -> dict[str, Any]:
    """Each set's dev AUROC at every alpha of the sweep, and the alpha its protocol chooses."""
    scorer = KGScorer(cache.encoder, mode=MODE, cache=cache)
    sets: dict[str, Any] = {}
    for name in list_pair_sets(data_dir):
        ps = load_pair_set(name, data_dir)
        dev = checked_dev_mask(ps)
        scored = scorer.score_pairs(list(zip(ps.kg_1, ps.kg_2, strict=True)))
        wl = np.array([r.s_wl for r in scored])
        sb = np.array([r.s_sbert for r in scored])

        def at(alpha: float, wl: np.ndarray = wl, sb: np.ndarray = sb) -> np.ndarray:
            return np.asarray(blend(wl, sb, alpha, MODE), dtype=np.float64)

        sets[name] = {
            "dev_auroc": {f"{a:.1f}": auroc(at(a)[dev], ps.labels[dev]) for a in DEFAULT_ALPHAS},
            "chosen_alpha": choose_alpha(at, ps.labels, dev).alpha,
        }
    mean = {
        key: float(np.mean([s["dev_auroc"][key] for s in sets.values()]))
        for key in next(iter(sets.values()))["dev_auroc"]
    } if sets else {}  # fmt: skip
    return {"sets": sets, "mean_dev_auroc": mean}


def bamboo_at_alphas(
    cache: EmbeddingCache, data_dir: Any, alphas: list[float]
) -> dict[str, dict[str, Any]]:
    """BAMBOO's mean and PARA main per split and alpha."""
    out: dict[str, dict[str, Any]] = {}
    for split in ("dev", "train"):
        data = load_bamboo(split, data_dir)
        out[split] = {}
        for a in alphas:
            result = run_bamboo(KGScorer(cache.encoder, mode=MODE, alpha=a, cache=cache), data=data)
            out[split][f"{a:.1f}"] = {
                "mean": result.mean(),
                "para_main": result.figure("para", "main").value,
            }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--bamboo-alphas", default="0.4,0.5,0.6,0.7", help="comma-separated alphas for BAMBOO"
    )
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="write the figures to evidence/ot_alpha.json, with their provenance",
    )
    add_data_dir(parser)
    args = parser.parse_args()
    alphas = [float(a) for a in args.bamboo_alphas.split(",") if a]
    load = print_load("before")
    start = time.perf_counter()
    cache = EmbeddingCache(load_encoder("minilm"))
    pairs = pair_sets_at_alphas(cache, args.data_dir)
    bamboo = bamboo_at_alphas(cache, args.data_dir, alphas)
    print(f"{time.perf_counter() - start:.0f} s")
    print(
        text_table(
            ["split", "alpha", "BAMBOO mean", "PARA main"],
            [
                [split, a, f"{f['mean']:.2f}", f"{f['para_main']:.1f}"]
                for split, by in bamboo.items()
                for a, f in by.items()
            ],
        )
    )
    print(
        text_table(
            ["alpha", "pair sets mean dev AUROC"],
            [[a, f"{v:.4f}"] for a, v in pairs["mean_dev_auroc"].items()],
        )
    )
    chosen = {n: s["chosen_alpha"] for n, s in pairs["sets"].items()}
    print("alpha each pair set chooses on its dev pairs:", chosen)
    if args.evidence:
        write_evidence(
            REPO / "evidence" / "ot_alpha.json",
            {"mode": MODE, "encoder": "minilm", "load_before": load, "bamboo": bamboo, **pairs},
            title="The ot mode at other alphas: BAMBOO dev/train and the pair sets' dev AUROC",
            signature=KGScorer(cache.encoder, mode=MODE, cache=cache).signature,
        )


if __name__ == "__main__":
    main()
