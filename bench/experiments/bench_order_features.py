"""Do order and locality statistics help the alignment head? A probe on frozen features.

A logistic regression (standardised features) is fitted on the alignment statistics
(:func:`s3kg_core.grapheval.checkers.alignment.feature_table`) of frozen encoder states of synthetic
pairs, and scored on pairs of other documents (a 50/50 split of the documents by hash): the
match statistics alone (the six of head ``alignment-1``) against the match statistics plus the
order ones, and each order statistic added alone. Printed: held-out AUROC overall, the AUROC of
the positives against each negative kind alone, and the accuracy at 0.5 on each kind.

    OMP_NUM_THREADS=1 nice -n 15 .venv/bin/python -m bench.experiments.bench_order_features
        --pairs-file PAIRS.jsonl [--n 2400] [--model minilm|DIR] [--max-length 160]
        [--cache FEATURES.npz]
"""

from __future__ import annotations

import argparse
import os
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from bench._common import md_table
from s3kg_core.checker_training.synthetic import (
    SyntheticPair,
    generate_pairs,
    read_pairs,
    source_documents,
)
from s3kg_core.evaluation.metrics import auroc
from s3kg_core.evaluation.splits import heldout_document
from s3kg_core.grapheval.checkers.alignment import FEATURES, feature_table
from s3kg_core.grapheval.checkers.model_format import tokenize_pairs

MATCH = ("min", "mean", "share_below_0.5", "share_below_0.6", "share_below_0.7", "share_below_0.8")
ORDER = ("bigram_min", "bigram_mean", "bigram_back_mean", "concordance", "jump", "spread")
POSITIVE = ("support", "sentence")


def _encoder(model: str) -> tuple[Any, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoTokenizer

    from s3kg_core.encoders.registry import resolve_encoder

    path = Path(model) if Path(model).is_dir() else resolve_encoder(model)[1]
    tok = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    enc = AutoModel.from_pretrained(str(path), local_files_only=True).eval()
    return tok, enc


def _table(pairs: list[SyntheticPair], model: str, max_length: int) -> dict[str, np.ndarray]:
    import torch

    tok, enc = _encoder(model)
    cols: dict[str, list[float]] = {}
    for lo in range(0, len(pairs), 32):
        chunk = pairs[lo : lo + 32]
        batch = tokenize_pairs(
            tok, [p.window for p in chunk], [p.statement for p in chunk], max_length
        )
        with torch.inference_mode():
            hidden = enc(**batch).last_hidden_state
            table = feature_table(hidden, batch["token_type_ids"], batch["attention_mask"])
        for k, v in table.items():
            cols.setdefault(k, []).extend(v.tolist())
    return {k: np.asarray(v) for k, v in cols.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs-file", type=Path, default=None)
    ap.add_argument("--n", type=int, default=2400, help="pairs sampled (seeded)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default="minilm")
    ap.add_argument("--max-length", type=int, default=160)
    ap.add_argument("--cache", type=Path, default=None, help="npz of the features (reused)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    if args.pairs_file:
        pairs = read_pairs(args.pairs_file)
    else:
        pairs = generate_pairs(source_documents(), n_pairs=args.n, seed=args.seed)
    rng = random.Random(args.seed)
    pairs = rng.sample(pairs, min(args.n, len(pairs)))
    t0 = time.perf_counter()
    if args.cache and args.cache.is_file():
        table = dict(np.load(args.cache))
    else:
        table = _table(pairs, args.model, args.max_length)
        if args.cache:
            np.savez(args.cache, **table)  # type: ignore[arg-type]
    print(f"{len(pairs)} pairs, model {args.model}: features in {time.perf_counter() - t0:.0f} s")
    y = np.array([p.label for p in pairs])
    kinds = np.array([p.kind for p in pairs])
    test = np.array([heldout_document(p.doc_id, 50) for p in pairs])
    print(f"train {int((~test).sum())} / test {int(test.sum())} pairs (documents split by hash)")
    neg_kinds = sorted({k for k in kinds[y == 0]})
    sets = {"match (alignment-1)": MATCH, "match + order (all)": MATCH + ORDER}
    sets.update({f"match + {f}": (*MATCH, f) for f in ORDER})
    sets.update({f"all - {f}": tuple(x for x in MATCH + ORDER if x != f) for f in ORDER})
    if tuple(FEATURES) not in sets.values():
        sets["FEATURES (this head)"] = tuple(FEATURES)
    head = ["set", "AUROC", *(f"{k} AUROC/acc" for k in neg_kinds)]
    body = []
    for name, feats in sets.items():
        x = np.stack([table[f] for f in feats], 1)
        clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=1.0))
        clf.fit(x[~test], y[~test])
        s = clf.predict_proba(x[test])[:, 1]
        yt, kt = y[test], kinds[test]
        cells = [name, f"{auroc(s, yt):.3f}"]
        pos = np.isin(kt, POSITIVE) & (yt == 1)
        for k in neg_kinds:
            sel = pos | (kt == k)
            auc = auroc(s[sel], yt[sel]) if (kt == k).any() else float("nan")
            acc = float((s[kt == k] <= 0.5).mean()) if (kt == k).any() else float("nan")
            cells.append(f"{auc:.3f}/{acc:.2f} (n={int((kt == k).sum())})")
        body.append(cells)
    print(md_table(head, body))


if __name__ == "__main__":
    main()
