"""Does the ``ot`` mode's transport plan help GraphEval's triple check? (issue 41.4)

GraphEval checks every triple of a summary against its source article. The offline support
checker (:class:`~s3kg_core.grapheval.checkers.support.SupportChecker`) reads the article as
text: a triple is matched to its most similar sentence windows, then numbers, negation and
entities are checked there. The ``ot`` mode gives another kind of evidence: extract the
article's KG too, and transport the summary's triples onto the article's
(:func:`~s3kg_core.scoring.ot_mode.spread_transport`, the triple transport of ``ot``); a triple
whose mass lands on dissimilar article triples is probably unsupported. This script scores each
summary by its worst triple (GraphEval's rule: the highest probability of being unsupported)
four ways, over the same answer KGs (offline spaCy extractor) and the same sentence vectors
(MiniLM), with nothing fitted:

``support``
    the support checker as GraphEval runs it (the article as text);
``best``
    1 - the cosine of the triple's most similar article triple (the article KG, no plan);
``plan``
    1 - the plan-weighted cosine of the article triples that receive the triple's mass;
``support+plan``
    the mean of ``support`` and ``plan``.

Figures: AUROC of each score for *inconsistent* summaries on each set's dev and test split (by
article, see :mod:`s3kg_core.evaluation.summ_sets`; a choice is made on dev, reported on test),
on a seeded stratified sample, and a paired bootstrap interval of each column's mean gain over
``support``. Summaries without a triple, or whose article KG is empty, score 0
in every column (GraphEval predicts them consistent).

    python -m bench.experiments.bench_grapheval_transport [--limit 150] [--splits dev,test]
        [--evidence]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import REPO, add_data_dir, print_load, text_table, write_evidence
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.evaluation.grapheval import stratified_limit, summary_scores
from s3kg_core.evaluation.metrics import auroc
from s3kg_core.evaluation.summ_sets import DATASETS, SPLITS, load_summ_set
from s3kg_core.extract.base import ItemTexts, TextKG
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.grapheval.checkers.support import SupportChecker
from s3kg_core.grapheval.detect import GraphEval
from s3kg_core.kg import Triple
from s3kg_core.scoring.ot_mode import spread_transport
from s3kg_core.stats import percentile_bootstrap

COLUMNS = ("support", "best", "plan", "support+plan")


def triple_evidence(
    cache: EmbeddingCache, answer: Sequence[Triple], article: Sequence[Triple]
) -> tuple[list[float], list[float]]:
    """Per answer triple: 1 - best article cosine, and 1 - plan-weighted article cosine."""
    if not answer or not article:
        return [0.0] * len(answer), [0.0] * len(answer)
    rows_1 = cache.rows([t.sentence() for t in answer])
    rows_2 = cache.rows([t.sentence() for t in article])  # may grow the matrix: read it after
    x1, x2 = cache.matrix[rows_1], cache.matrix[rows_2]
    t = spread_transport(x1, x2)
    cosine = np.clip(t.cosine, 0.0, 1.0)
    best = 1.0 - cosine.max(axis=1)
    if t.plan.size == 0:  # the relaxed transport of a very large pair keeps no plan
        return best.tolist(), best.tolist()
    weights = t.plan / np.maximum(t.plan.sum(axis=1, keepdims=True), 1e-12)
    plan = 1.0 - (weights * cosine).sum(axis=1)
    return best.tolist(), plan.tolist()


def run_set(
    name: str,
    split: str,
    limit: int | None,
    ge: GraphEval,
    checker: SupportChecker,
    data_dir: Path,
) -> dict[str, Any]:
    """The four scores' AUROCs on one benchmark's sample."""
    summ = load_summ_set(name, data_dir=data_dir, split=split)
    keep = stratified_limit(summ.labels(), limit, 0)
    examples = [summ.examples[i] for i in keep]
    answers: list[TextKG] = ge.extract([e.answer for e in examples])
    articles = sorted({e.context for e in examples})
    article_kgs = {
        text: kgs.get("context", TextKG(status="empty"))
        for text, kgs in zip(
            articles,
            ge.extractor.extract([ItemTexts(context=a) for a in articles]),
            strict=True,
        )
    }
    detections = ge.detect_kgs(answers, [e.context for e in examples])
    support = summary_scores(detections, "kg")
    best, plan = [], []
    for e, d in zip(examples, detections, strict=True):
        b, p = triple_evidence(checker.cache, d.triples, article_kgs[e.context].triples)
        best.append(max(b, default=0.0))
        plan.append(max(p, default=0.0))
    inconsistent = np.array([1 - e.label for e in examples])
    scores = {
        "support": np.array(support),
        "best": np.array(best),
        "plan": np.array(plan),
        "support+plan": (np.array(support) + np.array(plan)) / 2,
    }
    return {
        "scores": scores,
        "inconsistent_labels": inconsistent,
        "n": len(examples),
        "inconsistent": int(inconsistent.sum()),
        "articles": len(articles),
        "article_triples": float(np.mean([len(k.triples) for k in article_kgs.values()])),
        "empty_articles": sum(1 for k in article_kgs.values() if not k.triples),
        **{c: round(auroc(s, inconsistent), 4) for c, s in scores.items()},
    }


def gain_interval(figures: dict[str, dict[str, Any]], column: str) -> list[float]:
    """95 % interval of the mean over sets of ``column``'s AUROC minus ``support``'s.

    Paired percentile bootstrap: each resample draws every set's consistent and inconsistent
    summaries apart (with replacement) and scores both columns on the same draw.
    """
    parts = []
    for f in figures.values():
        y = f["inconsistent_labels"]
        parts += [np.flatnonzero(y == 0), np.flatnonzero(y == 1)]

    def statistic(*drawn: np.ndarray) -> float:
        gains = []
        for k, f in enumerate(figures.values()):
            idx = np.concatenate([parts[2 * k][drawn[2 * k]], parts[2 * k + 1][drawn[2 * k + 1]]])
            y = f["inconsistent_labels"][idx]
            gains.append(auroc(f["scores"][column][idx], y) - auroc(f["scores"]["support"][idx], y))
        return float(np.mean(gains))

    interval = percentile_bootstrap(statistic, [len(p) for p in parts], resamples=1000)
    return [round(interval[0], 4), round(interval[1], 4)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(DATASETS), help="comma-separated benchmarks")
    parser.add_argument(
        "--splits", default="dev,test", help="comma-separated splits: dev, test, all"
    )
    parser.add_argument("--limit", type=int, default=150, help="summaries per set (0: all)")
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="write the figures to evidence/grapheval_transport.json, with their provenance",
    )
    add_data_dir(parser)
    args = parser.parse_args()
    splits = [s for s in args.splits.split(",") if s]
    unknown = sorted(set(splits) - set(SPLITS))
    if unknown:
        parser.error(f"--splits: {', '.join(unknown)} not one of {', '.join(SPLITS)}")
    load = print_load("before")
    checker = SupportChecker()
    ge = GraphEval(checker, OfflineExtractor())
    limit = args.limit or None
    out: dict[str, Any] = {}
    for split in splits:
        start = time.perf_counter()
        figures = {
            name: run_set(name, split, limit, ge, checker, args.data_dir)
            for name in args.sets.split(",")
            if name
        }
        mean = {c: round(float(np.mean([f[c] for f in figures.values()])), 4) for c in COLUMNS}
        gain = {c: gain_interval(figures, c) for c in COLUMNS if c != "support"}
        for f in figures.values():
            del f["scores"], f["inconsistent_labels"]
        out[split] = {"sets": figures, "mean": mean, "gain_over_support_95": gain}
        rows = [
            [n, f["n"], f["articles"], *(f"{f[c]:.3f}" for c in COLUMNS)]
            for n, f in figures.items()
        ]
        rows.append(["mean", "", "", *(f"{mean[c]:.3f}" for c in COLUMNS)])
        print(f"split {split}, limit {limit}; {time.perf_counter() - start:.0f} s")
        print(text_table(["set", "summaries", "articles", *COLUMNS], rows))
        for c, (low, high) in gain.items():
            print(f"mean AUROC gain of {c} over support: 95 % interval [{low:+.3f}, {high:+.3f}]")
    if args.evidence:
        write_evidence(
            REPO / "evidence" / "grapheval_transport.json",
            {"limit": limit, "load_before": load, "splits": out},
            title="GraphEval's triple check: the support checker against the ot mode's plan",
        )


if __name__ == "__main__":
    main()
