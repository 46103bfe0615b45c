"""Score variants that use the two texts as well as their KGs; chosen on dev, reported on test.

What is measured
----------------
On every labelled pair set in ``s3kg_release/benchmarks/*.csv`` each pair (T1 = ``kg_1``) gets
these per-pair features, all from one encoder and one embedding cache:

``wl``, ``sb``
    hybrid S3KG's two components (:class:`s3kg_core.scoring.s3kg.KGScorer`, ``mode="hybrid"``).
``text``
    cosine of the embeddings of the two texts (``paragraph_1``, ``paragraph_2``), clipped to [0, 1].
``tri_p``, ``tri_r``, ``tri_f``
    BERTScore over triples: the cosine matrix of T1's and T2's (normalised) triple sentences;
    recall = mean over T1 triples of the best T2 match, precision = mean over T2 triples of the
    best T1 match, F1 their harmonic mean.
``ent_f``
    the same soft F1 over entity labels: partial credit for near-miss node labels instead of the
    hard tau of the alignment (the iteration-0 part of a soft WL kernel).
``tok``
    BERTScore F1 of the two texts with the same encoder's token states (last layer, no idf,
    no rescaling: :func:`s3kg_core.evaluation.baselines.bertscore`); token-level matching, where
    ``text`` compares two mean-pooled vectors.

Candidate scores (alpha weights S_SBERT as in hybrid mode; beta is the weight of the text side):

``hybrid``           ``(1 - a) wl + a sb``
``text``             ``(1 - a) wl + a ((1 - b) sb + b text)``: the texts' cosine mixed into the
                     embedding side (a named mode keeps alpha live; beta is fixed)
``tri``              ``(1 - a) wl + a ((1 - b) sb + b tri_f)``
``tri_text``         ``(1 - a) tri_f + a text``: no WL at all
``soft``             ``(1 - a) ((wl + ent_f) / 2) + a sb``
``tok_fb``           ``(1 - a) wl + a ((1 - b) sb + b tok)``, ``tok`` where a KG is empty
``texttok_fb``       the same with ``(text + tok) / 2`` in place of ``tok``
``text_only``        ``text`` (the cosine baseline with this encoder)
``tok_only``         ``tok`` (the BERTScore baseline with this encoder)

Protocol (``s3kg_core.evaluation.splits.dev_mask``: about 30 % dev per set): for every candidate,
``per-set`` chooses (a, b) on each set's dev pairs by AUROC; ``global-b`` chooses one b for all
sets (best mean dev AUROC with a chosen per set on dev), which is how a named mode with a fixed
beta and a live alpha behaves; ``mode-b`` fixes b at the library's ``TEXT_WEIGHT`` (the ``text``
mode as shipped, chosen with MiniLM). Test AUROC and max-F1 are reported with percentile bootstrap
intervals (``--bootstrap`` resamples, stratified, seed 0) against the best baseline of each set.

Usage::

    python -m bench.experiments.bench_evidence --encoder minilm|mpnet --components FILE.json
        [--cache FILE.npz] [--sets a,b] [--no-score] [--bootstrap N] [--json OUT]

``--components`` is written after each set and resumed; ``--cache`` keeps the embedding cache on
disk (saved after each set), so a killed mpnet run loses at most one set.
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

from bench._common import md_table
from s3kg_core.config import default_data_dir
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.baselines import bertscore
from s3kg_core.evaluation.metrics import DEFAULT_ALPHAS, auroc, bootstrap_ci, max_f1
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.evaluation.splits import PAIR_SPLIT, dev_mask
from s3kg_core.normalize import normalize_triples
from s3kg_core.scoring.s3kg import TEXT_WEIGHT, KGScorer

Arr = npt.NDArray[np.float64]
Candidate = Callable[[float, float], Arr]

ALPHAS = [float(a) for a in DEFAULT_ALPHAS]
BETAS = [round(0.1 * i, 1) for i in range(11)]

# Best baseline test AUROC per set (bench/README.md, "s3kg bench pairs and bench_variants.py":
# `s3kg bench pairs --dataset NAME --bootstrap 500`, same split; the baselines do not depend on
# the S3KG encoder). Name of the baseline, AUROC.
BEST_BASELINE: dict[str, tuple[str, float]] = {
    "mrpc_400": ("bertscore", 0.777),
    "paws_wiki_400": ("rougeL", 0.812),
    "pubmedqa_ranked_faithfulness_400": ("bleu", 0.519),
    "semantic_kg_codex_400": ("wl_kernel", 0.963),
    "semantic_kg_combined_400": ("mpnet_cosine", 0.800),
    "semantic_kg_findkg_400": ("minilm_cosine", 0.814),
    "semantic_kg_globi_400": ("wl_kernel", 0.867),
    "semantic_kg_oregano_400": ("rougeL", 0.830),
    "sts12_400": ("mpnet_cosine", 0.905),
}

ORDER = [  # the sets where S3KG loses first, so a partial mpnet run covers them
    "mrpc_400",
    "sts12_400",
    "semantic_kg_findkg_400",
    "paws_wiki_400",
    "semantic_kg_combined_400",
    "pubmedqa_ranked_faithfulness_400",
    "semantic_kg_codex_400",
    "semantic_kg_globi_400",
    "semantic_kg_oregano_400",
]


def soft_f1(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    """BERTScore-style (precision, recall, F1) of unit rows ``b`` (candidate) against ``a``."""
    if len(a) == 0 or len(b) == 0:
        return 0.0, 0.0, 0.0
    sim = np.clip(a.astype(np.float64) @ b.astype(np.float64).T, 0.0, 1.0)
    r = float(sim.max(axis=1).mean())
    p = float(sim.max(axis=0).mean())
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


def token_f1(pair_set, encoder: str) -> list[float]:
    """BERTScore F1 of the two texts with ``encoder``'s own token states (last layer, no idf)."""
    return [float(x) for x in bertscore(pair_set, model=encoder)]


def _save(out: dict, save: Path) -> None:
    tmp = save.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(save)


def features(data_dir: Path, encoder: str, sets: list[str], save: Path, cache_path: Path | None):
    """Per-pair features of every set; written to ``save`` after each set and resumed."""
    out: dict[str, dict[str, list]] = json.loads(save.read_text()) if save.exists() else {}
    for name in [n for n in sets if n in out and "tok" not in out[n]]:  # an older file
        start = time.perf_counter()
        out[name]["tok"] = token_f1(load_pair_set(name, data_dir), encoder)
        _save(out, save)
        print(f"token F1 {name}: {time.perf_counter() - start:.1f} s", flush=True)
    todo = [n for n in sets if n not in out]
    if not todo:
        return out
    enc = load_encoder(encoder)
    cache = EmbeddingCache(enc, cache_path)
    for name in todo:
        ps = load_pair_set(name, data_dir)
        start = time.perf_counter()
        scored = KGScorer(enc, mode="hybrid", cache=cache).score_pairs(
            zip(ps.kg_1, ps.kg_2, strict=True)
        )
        rec: dict[str, list] = {
            "ids": list(ps.ids),
            "labels": [int(x) for x in ps.labels],
            "ok": [r.ok for r in scored],
            "wl": [r.s_wl for r in scored],
            "sb": [r.s_sbert for r in scored],
        }
        tv1 = cache.vectors(list(ps.text_1)).astype(np.float64)
        tv2 = cache.vectors(list(ps.text_2)).astype(np.float64)
        rec["text"] = np.clip(np.einsum("ij,ij->i", tv1, tv2), 0.0, 1.0).tolist()
        for key in ("tri_p", "tri_r", "tri_f", "ent_f"):
            rec[key] = []
        for k1, k2 in zip(ps.kg_1, ps.kg_2, strict=True):
            n1, n2 = normalize_triples(k1), normalize_triples(k2)
            s1, s2 = [t.sentence() for t in n1], [t.sentence() for t in n2]
            p, r, f = soft_f1(cache.vectors(s1), cache.vectors(s2)) if s1 and s2 else (0, 0, 0)
            rec["tri_p"].append(p)
            rec["tri_r"].append(r)
            rec["tri_f"].append(f)
            e1 = list(dict.fromkeys(x for t in n1 for x in (t.head, t.tail)))
            e2 = list(dict.fromkeys(x for t in n2 for x in (t.head, t.tail)))
            rec["ent_f"].append(
                soft_f1(cache.vectors(e1), cache.vectors(e2))[2] if e1 and e2 else 0
            )
        rec["tok"] = token_f1(ps, encoder)
        out[name] = rec
        _save(out, save)
        if cache_path is not None:
            cache.save(cache_path)
        print(f"scored {name}: {len(ps)} pairs in {time.perf_counter() - start:.1f} s", flush=True)
    return out


def candidates(rec: dict[str, list]) -> dict[str, Candidate]:
    """The candidate scores of one set as functions of (alpha, beta); 0 where a KG is empty."""
    c = {k: np.asarray(v, dtype=np.float64) for k, v in rec.items() if k not in ("ids", "labels")}
    ok = c["ok"] > 0
    wl, sb, text, tri, ent = c["wl"], c["sb"], c["text"], c["tri_f"], c["ent_f"]
    tok = c.get("tok", text)  # a components file from before the token F1 was added
    both = (text + tok) / 2

    def z(x: Arr) -> Arr:
        return np.where(ok, x, 0.0)

    def f(x: Arr) -> Arr:  # an empty KG: the texts' cosine stands in for the whole score
        return np.where(ok, x, text)

    out: dict[str, Candidate] = {}
    for suffix, fill in (("", z), ("_fb", f)):
        out.update(
            {
                "hybrid" + suffix: lambda a, b, g=fill: g((1 - a) * wl + a * sb),
                "text" + suffix: lambda a, b, g=fill: g(
                    (1 - a) * wl + a * ((1 - b) * sb + b * text)
                ),
                "tri" + suffix: lambda a, b, g=fill: g((1 - a) * wl + a * ((1 - b) * sb + b * tri)),
                "tri_text" + suffix: lambda a, b, g=fill: g((1 - a) * tri + a * text),
                "soft" + suffix: lambda a, b, g=fill: g((1 - a) * (wl + ent) / 2 + a * sb),
            }
        )
    for name, inner in (("tok", tok), ("texttok", both)):  # the texts' side falls back on itself
        out[name + "_fb"] = lambda a, b, t=inner: np.where(
            ok, (1 - a) * wl + a * ((1 - b) * sb + b * t), t
        )
    out["text_only"] = lambda a, b: text
    out["tok_only"] = lambda a, b: tok
    return out


USES_BETA = {"text", "tri", "text_fb", "tri_fb", "tok_fb", "texttok_fb"}


def short(name: str) -> str:
    return (
        name.replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "").removesuffix("_400")
    )


def analyse(comps: dict[str, dict[str, list]], n_boot: int) -> dict:
    sets = [s for s in ORDER if s in comps] + [s for s in comps if s not in ORDER]
    names = list(candidates(comps[sets[0]]))
    # dev AUROC grid per (candidate, set): [beta][alpha]
    grids: dict[tuple[str, str], np.ndarray] = {}
    fns: dict[tuple[str, str], Candidate] = {}
    for ds in sets:
        rec = comps[ds]
        y = np.asarray(rec["labels"])
        dev = dev_mask(ds, rec["ids"])
        for n, fn in candidates(rec).items():
            fns[(n, ds)] = fn
            betas = BETAS if n in USES_BETA else [0.0]
            grids[(n, ds)] = np.array(
                [[auroc(fn(a, b)[dev], y[dev]) for a in ALPHAS] for b in betas]
            )
    result: dict = {"split": PAIR_SPLIT, "sets": sets, "regimes": {}}
    for regime in ("per-set", "global-b", "mode-b"):
        per: dict[str, dict[str, dict]] = {n: {} for n in names}
        summary: dict[str, dict] = {}
        for n in names:
            nb = grids[(n, sets[0])].shape[0]
            if regime == "global-b":
                mean_best = [np.mean([grids[(n, d)][bi].max() for d in sets]) for bi in range(nb)]
                fixed_b: int | None = int(np.argmax(mean_best))
            elif regime == "mode-b":  # the library's text mode: b = TEXT_WEIGHT
                fixed_b = BETAS.index(round(TEXT_WEIGHT, 1)) if nb > 1 else 0
            else:
                fixed_b = None
            for ds in sets:
                g = grids[(n, ds)]
                if fixed_b is None:
                    bi, ai = np.unravel_index(int(np.argmax(g)), g.shape)
                else:
                    bi, ai = fixed_b, int(np.argmax(g[fixed_b]))
                a = ALPHAS[int(ai)]
                b = BETAS[int(bi)] if n in USES_BETA else 0.0
                rec = comps[ds]
                y = np.asarray(rec["labels"])
                dev = dev_mask(ds, rec["ids"])
                s = fns[(n, ds)](a, b)
                row = {
                    "alpha": a,
                    "beta": b,
                    "dev_auroc": float(g[bi, ai]),
                    "test_auroc": auroc(s[~dev], y[~dev]),
                    "test_f1": max_f1(s[~dev], y[~dev]).f1,
                }
                if n_boot:
                    lo, hi = bootstrap_ci(auroc, s[~dev], y[~dev], n=n_boot)
                    flo, fhi = bootstrap_ci(max_f1, s[~dev], y[~dev], n=n_boot)
                    row.update(auroc_ci=[lo, hi], f1_ci=[flo, fhi])
                per[n][ds] = row
            gaps = [
                per[n][d]["test_auroc"] - BEST_BASELINE[d][1] for d in sets if d in BEST_BASELINE
            ]
            summary[n] = {
                "beta": BETAS[fixed_b] if fixed_b is not None and n in USES_BETA else None,
                "mean_dev_auroc": float(np.mean([per[n][d]["dev_auroc"] for d in sets])),
                "mean_test_auroc": float(np.mean([per[n][d]["test_auroc"] for d in sets])),
                "mean_test_f1": float(np.mean([per[n][d]["test_f1"] for d in sets])),
                "worst_gap": float(min(gaps)) if gaps else float("nan"),
            }
        result["regimes"][regime] = {"per_set": per, "summary": summary}
    return result


def report(result: dict) -> str:
    sets = result["sets"]
    lines = [f"split {result['split']}; {len(sets)} sets", ""]
    for regime, body in result["regimes"].items():
        per, summary = body["per_set"], body["summary"]
        order = sorted(summary, key=lambda n: -summary[n]["mean_dev_auroc"])
        lines.append(f"== regime {regime} (chosen by mean dev AUROC: {order[0]})")
        lines.append(
            f"{'variant':<10}{'beta':>6}{'dev AUROC':>10}{'test AUROC':>11}{'test F1':>9}"
            f"{'worst gap':>10}"
        )
        for n in order:
            s = summary[n]
            beta = "-" if s["beta"] is None else f"{s['beta']:.1f}"
            lines.append(
                f"{n:<10}{beta:>6}{s['mean_dev_auroc']:>10.3f}{s['mean_test_auroc']:>11.3f}"
                f"{s['mean_test_f1']:>9.3f}{s['worst_gap']:>+10.3f}"
            )
        lines.append("")
        lines.append("test AUROC [95% CI] (max-F1) (alpha/beta) per set")
        for n in order:
            lines.append(f"  {n}")
            for d in sets:
                r = per[n][d]
                ci = f" [{r['auroc_ci'][0]:.3f}, {r['auroc_ci'][1]:.3f}]" if "auroc_ci" in r else ""
                fci = f" [{r['f1_ci'][0]:.3f}, {r['f1_ci'][1]:.3f}]" if "f1_ci" in r else ""
                base = BEST_BASELINE.get(d, ("?", float("nan")))
                lines.append(
                    f"    {short(d):<12}{r['test_auroc']:.3f}{ci} ({r['test_f1']:.3f}{fci})"
                    f" a={r['alpha']:.1f} b={r['beta']:.1f}  best baseline {base[0]} "
                    f"{base[1]:.3f} ({r['test_auroc'] - base[1]:+.3f})"
                )
        lines.append("")
    return "\n".join(lines)


MARKDOWN_COLUMNS = [  # (header, regime, candidate)
    ("hybrid", "global-b", "hybrid"),
    ("hybrid, empty KG -> texts", "global-b", "hybrid_fb"),
    ("**text mode** (b 0.8)", "mode-b", "text_fb"),
    ("text, one b from dev", "global-b", "text_fb"),
    ("text, b per set", "per-set", "text_fb"),
    ("triple F1 + texts", "global-b", "tri_text_fb"),
]


def markdown(result: dict) -> str:
    """The per-set table of the main candidates: test AUROC [95% CI] (max-F1), best baseline."""
    sets, regimes = result["sets"], result["regimes"]
    head = [h for h, _, _ in MARKDOWN_COLUMNS]
    body = []
    for d in sets:
        cells = []
        for _, regime, n in MARKDOWN_COLUMNS:
            r = regimes[regime]["per_set"][n][d]
            ci = f" [{r['auroc_ci'][0]:.3f}, {r['auroc_ci'][1]:.3f}]" if "auroc_ci" in r else ""
            cells.append(f"{r['test_auroc']:.3f}{ci} ({r['test_f1']:.3f})")
        base = BEST_BASELINE.get(d, ("?", float("nan")))
        body.append([short(d), *cells, f"{base[1]:.3f} {base[0]}"])
    means = []
    for _, regime, n in MARKDOWN_COLUMNS:
        sm = regimes[regime]["summary"][n]
        means.append(f"**{sm['mean_test_auroc']:.3f}** ({sm['mean_test_f1']:.3f})")
    body.append(["**mean**", *means, ""])
    worst = []
    for _, regime, n in MARKDOWN_COLUMNS:
        worst.append(f"{regimes[regime]['summary'][n]['worst_gap']:+.3f}")
    body.append(["worst gap to the set's best baseline", *worst, ""])
    return md_table(["set", *head, "best baseline"], body)


CURVE_ALPHAS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0)


def kg_weight_curve(comps: dict[str, dict[str, list]], sets: list[str]) -> str:
    """Dev and test AUROC of ``text_fb`` and ``tok_fb`` with the whole embedding side on the texts
    (b = 1), as alpha takes the weight off the KG's WL side (alpha 1: the texts alone)."""
    lines = ["KG weight curve (b = 1; alpha 1 = texts only): dev / test AUROC"]
    for ds in sets:
        rec = comps[ds]
        y = np.asarray(rec["labels"])
        dev = dev_mask(ds, rec["ids"])
        cands = candidates(rec)
        for name in ("text_fb", "tok_fb"):
            cells = []
            for a in CURVE_ALPHAS:
                s = cands[name](a, 1.0)
                cells.append(f"{a:g}: {auroc(s[dev], y[dev]):.3f} / {auroc(s[~dev], y[~dev]):.3f}")
            lines.append(f"  {short(ds):<10}{name:<9}" + "  ".join(cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--components", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--sets", default=None)
    parser.add_argument("--no-score", action="store_true")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--markdown", action="store_true", help="also print the README table")
    parser.add_argument("--curve", default=None, help="sets to print the KG weight curve of")
    args = parser.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    if args.no_score:
        comps = json.loads(args.components.read_text())
    else:
        available = list_pair_sets(data_dir)
        wanted = args.sets.split(",") if args.sets else [s for s in ORDER if s in available]
        wanted += [] if args.sets else [s for s in available if s not in ORDER]
        comps = features(data_dir, args.encoder, wanted, args.components, args.cache)
    if not comps:
        print(f"no pair sets under {data_dir}", file=sys.stderr)
        return 1
    result = analyse(comps, args.bootstrap)
    print(f"encoder {args.encoder}")
    print(report(result))
    if args.markdown:
        print(markdown(result))
    if args.curve:
        print(kg_weight_curve(comps, [d for d in args.curve.split(",") if d in comps]))
    if args.json is not None:
        args.json.write_text(json.dumps({"encoder": args.encoder, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
