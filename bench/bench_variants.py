"""Which S3KG variant agrees best with human labels? Chosen on dev pairs, reported on test pairs.

What is measured
----------------
On every labelled pair set in ``s3kg_release/benchmarks/*.csv`` (released triples), each pair is
scored with :class:`s3kg_core.scoring.s3kg.KGScorer` in ``paper``, ``kgx`` and ``hybrid`` mode (one
embedding cache shared by the three), with T1 = ``kg_1`` (forward) and, unless ``--no-reverse``,
with the KGs swapped (reverse). From these components the candidate scores are:

``paper``, ``kgx``, ``hybrid``
    the three modes (``hybrid``: S_WL is the mean of the paper kernel and the relation-agnostic
    undirected ``struct`` kernel on the same aligned graphs).
``struct``
    the relation-agnostic undirected kernel alone (``2 * S_WL(hybrid) - S_WL(paper)``) blended
    with S_SBERT like paper mode.
``paper_bi``, ``kgx_bi``, ``hybrid_bi``
    the mean of the forward and reverse blends (precision/recall-balanced matching: extra
    triples in T2 then cost something); ``paper_min``: the smaller of the two.

Protocol: every set is split by :func:`s3kg_core.bench.split.dev_mask` (about 30 % dev, a hash
of set name and pair id). For each candidate and set, alpha in 0.0, 0.1, ..., 1.0 is chosen by
AUROC on the dev pairs; the table reports AUROC and max-F1 on the test pairs at that alpha. The
candidate to adopt is the one with the best mean *dev* AUROC (printed first), so the test figures
are not used to choose. A second table uses one alpha for all sets (the best mean dev AUROC).

Usage::

    python bench/bench_variants.py [--encoder minilm|mpnet] [--data-dir DIR] [--json OUT]
                                   [--components FILE] [--no-reverse] [--sets a,b,...]
                                   [--no-score]

``--components FILE`` saves the per-pair components after each set and reuses the sets already
in FILE, so a killed run resumes and the analysis can be rerun without scoring again.
``--sets a,b`` scores only those sets, in that order.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from s3kg_core.bench.datasets import list_pair_sets, load_pair_set
from s3kg_core.bench.metrics import DEFAULT_ALPHAS, auroc, max_f1
from s3kg_core.bench.split import SPLIT_NAME, dev_mask
from s3kg_core.config import default_data_dir
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.scoring.s3kg import KGScorer

Arr = npt.NDArray[np.float64]
Candidate = Callable[[float], Arr]


def components(
    data_dir: Path,
    encoder: str,
    reverse: bool,
    sets: list[str] | None = None,
    save: Path | None = None,
) -> dict[str, dict[str, list]]:
    """Per-pair components of every set; with ``save``, written after each set and resumed."""
    out: dict[str, dict[str, list]] = {}
    if save is not None and save.exists():
        out = json.loads(save.read_text())
    todo = [n for n in (sets or list_pair_sets(data_dir)) if n not in out]
    if not todo:
        return out
    enc = load_encoder(encoder)
    cache = EmbeddingCache(enc)
    for name in todo:
        ps = load_pair_set(name, data_dir)
        start = time.perf_counter()
        rec: dict[str, list] = {"ids": list(ps.ids), "labels": [int(x) for x in ps.labels]}
        for direction in ("fwd", "rev") if reverse else ("fwd",):
            pairs = list(zip(ps.kg_1, ps.kg_2, strict=True))
            if direction == "rev":
                pairs = [(b, a) for a, b in pairs]
            for mode in ("paper", "kgx", "hybrid"):
                scored = KGScorer(enc, mode=mode, cache=cache).score_pairs(pairs)
                rec[f"{mode}_{direction}_wl"] = [r.s_wl for r in scored]
                rec[f"{mode}_{direction}_sb"] = [r.s_sbert for r in scored]
        out[name] = rec
        if save is not None:
            tmp = save.with_suffix(".tmp")
            tmp.write_text(json.dumps(out))
            tmp.replace(save)
        print(f"scored {name}: {len(ps)} pairs in {time.perf_counter() - start:.1f} s", flush=True)
    return out


def candidates(rec: dict[str, list]) -> dict[str, Candidate]:
    c = {k: np.asarray(v, dtype=np.float64) for k, v in rec.items() if k not in ("ids", "labels")}

    def emb(wl: Arr, sb: Arr) -> Candidate:  # paper/hybrid convention: alpha weights S_SBERT
        return lambda a: (1 - a) * wl + a * sb

    def kgx(wl: Arr, sb: Arr) -> Candidate:  # kgx convention: alpha weights S_WL
        return lambda a: a * wl + (1 - a) * sb

    out: dict[str, Candidate] = {
        "paper": emb(c["paper_fwd_wl"], c["paper_fwd_sb"]),
        "kgx": kgx(c["kgx_fwd_wl"], c["kgx_fwd_sb"]),
        "hybrid": emb(c["hybrid_fwd_wl"], c["hybrid_fwd_sb"]),
        "struct": emb(2 * c["hybrid_fwd_wl"] - c["paper_fwd_wl"], c["paper_fwd_sb"]),
    }
    if "paper_rev_wl" in c:
        for mode, conv in (("paper", emb), ("kgx", kgx), ("hybrid", emb)):
            fwd = conv(c[f"{mode}_fwd_wl"], c[f"{mode}_fwd_sb"])
            rev = conv(c[f"{mode}_rev_wl"], c[f"{mode}_rev_sb"])
            out[f"{mode}_bi"] = lambda a, f=fwd, r=rev: (f(a) + r(a)) / 2
        fwd, rev = out["paper"], emb(c["paper_rev_wl"], c["paper_rev_sb"])
        out["paper_min"] = lambda a: np.minimum(fwd(a), rev(a))
    return out


def short(name: str) -> str:
    return (
        name.replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "").removesuffix("_400")
    )


def analyse(comps: dict[str, dict[str, list]]) -> dict:
    alphas = [float(a) for a in DEFAULT_ALPHAS]
    sets = list(comps)
    names = list(candidates(comps[sets[0]]))
    per: dict[str, dict[str, dict[str, float]]] = {n: {} for n in names}
    dev_curve = {n: np.zeros(len(alphas)) for n in names}
    fns: dict[tuple[str, str], Candidate] = {}
    for ds in sets:
        rec = comps[ds]
        y = np.asarray(rec["labels"])
        dev = dev_mask(ds, rec["ids"])
        for n, fn in candidates(rec).items():
            fns[(n, ds)] = fn
            dev_auc = np.array([auroc(fn(a)[dev], y[dev]) for a in alphas])
            dev_curve[n] += dev_auc / len(sets)
            best = int(np.argmax(dev_auc))  # first best: ties go to the smaller alpha
            scores = fn(alphas[best])
            per[n][ds] = {
                "alpha": alphas[best],
                "dev_auroc": float(dev_auc[best]),
                "test_auroc": auroc(scores[~dev], y[~dev]),
                "test_f1": max_f1(scores[~dev], y[~dev]).f1,
            }
    summary = {}
    for n in names:
        g = int(np.argmax(dev_curve[n]))
        global_test = []
        for ds in sets:
            y = np.asarray(comps[ds]["labels"])
            dev = dev_mask(ds, comps[ds]["ids"])
            global_test.append(auroc(fns[(n, ds)](alphas[g])[~dev], y[~dev]))
        summary[n] = {
            "mean_dev_auroc": float(np.mean([per[n][d]["dev_auroc"] for d in sets])),
            "mean_test_auroc": float(np.mean([per[n][d]["test_auroc"] for d in sets])),
            "mean_test_f1": float(np.mean([per[n][d]["test_f1"] for d in sets])),
            "global_alpha": alphas[g],
            "global_mean_test_auroc": float(np.mean(global_test)),
        }
    return {"split": SPLIT_NAME, "sets": sets, "per_set": per, "summary": summary}


def report(result: dict) -> str:
    sets, per, summary = result["sets"], result["per_set"], result["summary"]
    order = sorted(summary, key=lambda n: -summary[n]["mean_dev_auroc"])
    lines = [f"split {result['split']}; alpha per set chosen by dev AUROC", ""]
    lines.append(
        f"{'variant':<11}{'dev AUROC':>10}{'test AUROC':>11}{'test F1':>9}"
        f"{'glob a':>8}{'glob AUROC':>11}"
    )
    for n in order:
        s = summary[n]
        lines.append(
            f"{n:<11}{s['mean_dev_auroc']:>10.3f}{s['mean_test_auroc']:>11.3f}"
            f"{s['mean_test_f1']:>9.3f}{s['global_alpha']:>8.1f}{s['global_mean_test_auroc']:>11.3f}"
        )
    lines += ["", "test AUROC (alpha) per set"]
    lines.append(f"{'variant':<11}" + "".join(f"{short(d):>14}" for d in sets))
    for n in order:
        cells = "".join(f"{per[n][d]['test_auroc']:>8.3f} ({per[n][d]['alpha']:.1f})" for d in sets)
        lines.append(f"{n:<11}{cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--components", type=Path, default=None)
    parser.add_argument("--no-reverse", action="store_true")
    parser.add_argument("--sets", default=None, help="comma-separated set names, in this order")
    parser.add_argument(
        "--no-score", action="store_true", help="analyse the sets already in --components only"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    sets = [s for s in args.sets.split(",") if s] if args.sets else None
    if args.no_score:
        if args.components is None or not args.components.exists():
            print("--no-score needs an existing --components file", file=sys.stderr)
            return 1
        comps = json.loads(args.components.read_text())
    else:
        comps = components(data_dir, args.encoder, not args.no_reverse, sets, args.components)
    if not comps:
        print(f"no pair sets under {data_dir}", file=sys.stderr)
        return 1
    result = analyse(comps)
    print(f"encoder {args.encoder}")
    print(report(result))
    if args.json is not None:
        args.json.write_text(json.dumps({"encoder": args.encoder, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
