"""Fit the SupportChecker's logistic weights on the DEV split of SummEval, QAGS-C and QAGS-X.

Never reads a test-split label: the split is the one declared in s3kg_core.evaluation.summ_sets
(articles hashed, ~30 % dev, all summaries of an article on one side).

Labels are answer-level (consistent or not), features are triple-level, so the triple model is
fitted with a multiple-instance trick: each answer is represented by its *witness*, the triple
with the highest current score; a logistic regression is fitted on the witnesses with the
answer labels, the witnesses are re-chosen with the new weights, and this repeats (at most 10
rounds, until the witnesses stop changing). Start: the hand-set fallback weights. Answers without
triples are left out of the triple fit. The raw-mode model (whole answer as one claim) is a
plain answer-level logistic regression. Both use sample weights 1 / count(dataset, label), so
each dataset and each class weighs the same.

    .venv/bin/python -m bench.experiments.calibrate_support [--data-dir DIR] [--out PATH]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from s3kg_core.evaluation.metrics import balanced_accuracy
from s3kg_core.evaluation.splits import ARTICLE_DEV_PERCENT, ARTICLE_SPLIT
from s3kg_core.evaluation.summ_sets import DATASETS, load_summ_set
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.grapheval.checkers.base import Claim
from s3kg_core.grapheval.checkers.support import (
    CALIBRATION_FILE,
    FALLBACK_WEIGHTS,
    FEATURES,
    SupportChecker,
)

MAX_ROUNDS = 10


def _features(checker, extractor, dataset, data_dir):
    summ = load_summ_set(dataset, data_dir=data_dir, split="dev")
    answers = [e.answer for e in summ.examples]
    contexts = [e.context for e in summ.examples]
    kgs = extractor.extract_texts(answers)
    jobs = [([Claim.of(t) for t in kg.triples], c) for kg, c in zip(kgs, contexts, strict=True)]
    triple_feats = checker.features_many(jobs)
    raw_feats = checker.features_many(
        [([a], c) for a, c in zip(answers, contexts, strict=True)], raw=True
    )
    y = np.array([1 - e.label for e in summ.examples])  # 1 = inconsistent
    return summ, triple_feats, np.vstack([f[0] for f in raw_feats]), y


def _score(weights, feats):
    w = np.array([weights.weights.get(f, 0.0) for f in FEATURES])
    return weights.intercept + feats @ w


def _as_weights(model):
    return {
        "intercept": round(float(model.intercept_[0]), 6),
        "weights": {f: round(float(c), 6) for f, c in zip(FEATURES, model.coef_[0], strict=True)},
    }


C = 10.0
# Monotonicity: more support (cosine, overlap) never raises P(unsupported), a mismatch never
# lowers it. Without these bounds the witness iteration drifts to degenerate solutions.
SIGNS = {"best_cos": -1, "window_overlap": -1}


class _Model:
    """A weighted L2 logistic regression with sign-bounded weights (scipy L-BFGS-B)."""

    def __init__(self, coef, intercept):
        self.coef_ = np.array([coef])
        self.intercept_ = np.array([intercept])

    def predict_proba(self, x):
        p = 1.0 / (1.0 + np.exp(-(x @ self.coef_[0] + self.intercept_[0])))
        return np.column_stack([1 - p, p])


def _fit(x, y, sample_weight):
    k = x.shape[1]

    def loss(theta):
        w, b = theta[:k], theta[k]
        z = x @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        nll = np.sum(sample_weight * (np.logaddexp(0, z) - y * z))
        grad_z = sample_weight * (p - y)
        reg = 0.5 / C * float(w @ w)
        return nll + reg, np.concatenate([x.T @ grad_z + w / C, [grad_z.sum()]])

    bounds = [(None, 0.0) if SIGNS.get(f, 1) < 0 else (0.0, None) for f in FEATURES]
    res = minimize(
        loss, np.zeros(k + 1), jac=True, method="L-BFGS-B", bounds=[*bounds, (None, None)]
    )
    return _Model(res.x[:k], res.x[k])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=str(CALIBRATION_FILE))
    parser.add_argument("--c", type=float, default=10.0, help="inverse regularisation strength")
    parser.add_argument(
        "--features-cache",
        default=None,
        help="a .pkl file: dev features are read from it if it exists, else written to it",
    )
    args = parser.parse_args()
    global C
    C = args.c
    started = time.perf_counter()
    checker = SupportChecker(calibration=None)
    extractor = OfflineExtractor()
    cache = Path(args.features_cache) if args.features_cache else None
    if cache is not None and cache.exists():
        with cache.open("rb") as fh:
            bags, raws, ys, groups, sources = pickle.load(fh)
    else:
        bags, raws, ys, groups, sources = [], [], [], [], {}
        for name in DATASETS:
            summ, tf, rf, y = _features(checker, extractor, name, args.data_dir)
            sources[name] = {
                "file": str(DATASETS[name]),
                "dev_answers": len(summ),
                "dev_inconsistent": int(y.sum()),
            }
            bags.extend(tf)
            raws.append(rf)
            ys.append(y)
            groups.extend([name] * len(y))
            print(
                f"{name}: {len(summ)} dev answers, {sum(len(b) for b in tf)} triples "
                f"({time.perf_counter() - started:.0f} s)",
                file=sys.stderr,
            )
        if cache is not None:
            with cache.open("wb") as fh:
                pickle.dump((bags, raws, ys, groups, sources), fh)
    y = np.concatenate(ys)
    groups = np.array(groups)
    raw_x = np.vstack(raws)
    cell = {(g, v): int(((groups == g) & (y == v)).sum()) for g in DATASETS for v in (0, 1)}
    sw = np.array([1.0 / cell[(g, v)] for g, v in zip(groups, y, strict=True)])
    sw *= len(sw) / sw.sum()

    # raw mode: answer-level
    raw_model = _fit(raw_x, y, sw)
    raw_pred = raw_model.predict_proba(raw_x)[:, 1] > 0.5

    # triple mode: multiple-instance witnesses
    has = np.array([len(b) > 0 for b in bags])
    weights = FALLBACK_WEIGHTS["triple"]
    witnesses = np.array([int(np.argmax(_score(weights, b))) if len(b) else -1 for b in bags])
    model = None
    rounds = 0
    for _ in range(MAX_ROUNDS):
        rounds += 1
        x = np.vstack([bags[i][witnesses[i]] for i in np.flatnonzero(has)])
        model = _fit(x, y[has], sw[has])
        new = np.array([int(np.argmax(b @ model.coef_[0])) if len(b) else -1 for b in bags])
        if np.array_equal(new, witnesses):
            break
        witnesses = new
    assert model is not None
    kg_pred = np.array(
        [bool(len(b)) and bool((model.predict_proba(b)[:, 1] > 0.5).any()) for b in bags]
    )
    dev = {}
    for g in DATASETS:
        m = groups == g
        dev[g] = {
            "raw_balanced_accuracy": round(balanced_accuracy(1 - y[m], 1 - raw_pred[m]), 4),
            "kg_balanced_accuracy": round(balanced_accuracy(1 - y[m], 1 - kg_pred[m]), 4),
            "answers_without_triples": int((~has[m]).sum()),
        }
    out = {
        "name": "dev-v1",
        "created": dt.date.today().isoformat(),
        "features": list(FEATURES),
        "triple": _as_weights(model),
        "raw": _as_weights(raw_model),
        "encoder": checker.encoder.name,
        "extractor": extractor.name,
        "split": f"{ARTICLE_SPLIT}: dev = sha256(key) % 100 < {ARTICLE_DEV_PERCENT} "
        "(article-level)",
        "data": sources,
        "method": (
            f"L2 logistic regression (C={C:g}, sign-bounded: best_cos and window_overlap <= 0, "
            "other weights >= 0; sample weight 1/count(dataset, label)); triple "
            f"weights by multiple-instance witnesses (answer label on its max-score triple, "
            f"{rounds} rounds from the hand-set weights); raw weights answer-level"
        ),
        "dev_fit": dev,
    }
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=2))
    print(f"done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
