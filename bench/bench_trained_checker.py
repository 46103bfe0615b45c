"""GraphEval's Table 2 with the project's trained checker beside the support checker.

For each set (test articles; a seeded stratified sample with ``--limit``), both checkers judge
the same summaries raw (whole summary vs article) and with the offline KG (any triple over 0.5:
GraphEval's rule, the reported figure). Balanced accuracy gets a 95 % percentile bootstrap
interval resampled per class (:func:`s3kg_core.bench.metrics.bootstrap_ci`). Beside it, a
threshold chosen on a stratified sample of the **dev** articles (``--dev-limit``, the best
balanced accuracy on dev, pooled over the three sets) is applied to test: never chosen on test.

Also printed: the training time from the model's manifest, checking throughput (summaries/s,
extraction included, raw and KG mode together) on this machine, and ten examples each of
extraction misses (an inconsistent summary whose words absent from the article are in no
triple, so nothing could flag them) and checker errors (a triple flagged in a consistent
summary, or a triple with an article-absent word judged supported) for the trained checker.

    nice -n 10 .venv/bin/python bench/bench_trained_checker.py [--limit N] [--limit-summeval 400]
        [--dev-limit 120] [--checker-backend auto|torch|onnx]
        [--datasets summeval,qags_c,qags_x] [--checkers support,trained] [--out bench/out/tc.json]

Checkers: ``support``; ``trained`` (its backend ``--checker-backend``); ``trained-torch`` and
``trained-onnx``, the trained checker on torch and on its int8 ONNX export (``s3kg grapheval
export-checker``) in one run. The checkers run interleaved: for each set and split, every
checker in turn, so their summaries/s are comparable.

The int8 ONNX check (bench/README.md, "int8 ONNX trained checker on the test articles"):

    OMP_NUM_THREADS=1 nice -n 15 .venv/bin/python bench/bench_trained_checker.py
        --checkers trained-torch,trained-onnx --limit-summeval 150 --dev-limit 40
        --trained-model DIR --export --out bench/out/tc_onnx.json

(``--export``: first run ``s3kg grapheval export-checker --model DIR`` when DIR has no int8
export or a stale one; it writes ``model.int8.onnx`` and the manifest entry into DIR.)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import balanced_accuracy_score

from s3kg_core.bench.metrics import auroc, bootstrap_ci
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.grapheval.bench import run_bench
from s3kg_core.grapheval.checkers.base import triple_claim
from s3kg_core.grapheval.checkers.support import SupportChecker
from s3kg_core.grapheval.checkers.trained import (
    TrainedChecker,
    onnx_problem,
    read_manifest,
    trained_checker_dir,
)
from s3kg_core.kg import Triple
from s3kg_core.text import STOP_WORDS

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|\d+(?:[.,]\d+)*")


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _kg_score(row: dict) -> float:
    probs = [p for p in row["probabilities"] if p is not None]
    return max(probs) if probs else 0.0


def _bacc(labels, consistent_pred) -> float:
    return float(balanced_accuracy_score(labels, consistent_pred))


def _ci(labels, consistent_pred, n: int, seed: int) -> tuple[float, float]:
    low, high = bootstrap_ci(
        lambda s, y: _bacc(y, s), np.asarray(consistent_pred, float), labels, n=n, seed=seed
    )
    return round(low, 3), round(high, 3)


def _best_threshold(scores: list[float], labels: list[int]) -> float:
    grid = sorted(set(round(s, 4) for s in scores) | {0.5})
    best, where = -1.0, 0.5
    for t in grid:
        b = _bacc(labels, [0 if s > t else 1 for s in scores])
        if b > best + 1e-12:
            best, where = b, t
    return where


def _mean_triple(row: dict) -> float:
    probs = [p for p in row["probabilities"] if p is not None]
    return float(np.mean(probs)) if probs else 0.0


def _print_aurocs(names, checkers, details, results, args) -> None:
    """Threshold-free: AUROC of each mode's score for "inconsistent", with bootstrap intervals.

    raw: the whole summary's P(not supported); KG: GraphEval's score, the highest triple's;
    KG mean: the mean over the triples (not GraphEval's rule, shown for the ranking it gives).
    """
    print("\n| set | checker | raw AUROC [95% CI] | KG AUROC [95% CI] | KG mean-triple AUROC |")
    print("|---|---|---|---|---|")
    for name in names:
        for cname in checkers:
            rows = details[(cname, name, "test")][1]
            y = np.asarray([1 - r["label"] for r in rows])
            entry = results["sets"][name][cname]
            for key, fn in (
                ("raw", lambda r: r["raw_probability"] or 0.0),
                ("kg", _kg_score),
                ("kg_mean", _mean_triple),
            ):
                scores = np.asarray([fn(r) for r in rows], float)
                entry[f"{key}_auroc"] = round(auroc(scores, y), 3)
                low, high = bootstrap_ci(auroc, scores, y, n=args.bootstrap, seed=args.seed)
                entry[f"{key}_auroc_ci"] = [round(low, 3), round(high, 3)]
            print(
                f"| {name} | {cname} | {entry['raw_auroc']} {entry['raw_auroc_ci']} | "
                f"{entry['kg_auroc']} {entry['kg_auroc_ci']} | {entry['kg_mean_auroc']} "
                f"{entry['kg_mean_auroc_ci']} |"
            )


def _novel(summary: str, article: str) -> list[str]:
    low = article.lower()
    return sorted(
        {
            w
            for w in _WORD.findall(summary)
            if w.lower() not in STOP_WORDS and len(w) > 2 and w.lower() not in low
        }
    )


def _examples(rows: list[dict], contexts: dict[str, str], k: int) -> tuple[list[str], list[str]]:
    misses, errors_fa, errors_miss = [], [], []
    for r in rows:
        ctx = contexts[r["uid"]]
        novel = _novel(r["answer"], ctx)
        triples = [Triple.from_any(t) for t in r["triples"]]
        claims = [triple_claim(t) for t in triples]
        if r["label"] == 0 and not r["inconsistent"] and novel:
            covered = [w for w in novel if any(w.lower() in c.lower() for c in claims)]
            if not covered:
                misses.append(
                    f"- {r['answer'][:220]!r}\n  article lacks {novel[:6]}; triples: "
                    f"{claims[:4] or 'none'}"
                )
        if r["label"] == 1 and r["flagged"]:
            i = r["flagged"][0]
            errors_fa.append(
                f"- false alarm: {claims[i]!r} p={r['probabilities'][i]:.2f} (summary consistent: "
                f"{r['answer'][:140]!r})"
            )
        if r["label"] == 0 and novel:
            for c, p in zip(claims, r["probabilities"], strict=True):
                if p is not None and p <= 0.5 and any(w.lower() in c.lower() for w in novel):
                    errors_miss.append(
                        f"- missed: {c!r} p={p:.2f}, article lacks "
                        f"{[w for w in novel if w.lower() in c.lower()]}"
                    )
                    break
    half = k // 2
    errors = errors_fa[:half] + errors_miss[: k - min(half, len(errors_fa))]
    return misses[:k], errors[:k]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", default="summeval,qags_c,qags_x")
    parser.add_argument("--checkers", default="support,trained")
    parser.add_argument("--limit", type=int, default=None, help="test summaries per set")
    parser.add_argument(
        "--limit-summeval", type=int, default=None, help="test summaries of SummEval (its 1,168)"
    )
    parser.add_argument("--dev-limit", type=int, default=120, help="dev summaries per set")
    parser.add_argument("--trained-model", default=None)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--examples", type=int, default=10)
    parser.add_argument("--top-windows", type=int, default=2, help="trained checker's windows")
    parser.add_argument(
        "--checker-backend",
        choices=["auto", "torch", "onnx"],
        default="auto",
        help="what runs --checkers trained (trained-torch / trained-onnx name theirs)",
    )
    parser.add_argument(
        "--export",
        action="store_true",
        help="export the trained model to int8 ONNX first when it has no current export "
        "(as `s3kg grapheval export-checker --model DIR` does, into DIR)",
    )
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="read the per-set results an earlier run of the same checker and sample left in "
        "the output folder instead of running them again (runs split over processes, then one "
        "--reuse run over all sets for the pooled dev threshold and the table)",
    )
    parser.add_argument("--out", type=Path, default=Path("bench/out/trained_checker.json"))
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    names = args.datasets.split(",")
    extractor = OfflineExtractor()
    if args.export and onnx_problem(args.trained_model or trained_checker_dir()) is not None:
        from s3kg_core.grapheval.export import export_checker

        held = export_checker(args.trained_model)["heldout"]
        print(
            f"exported: held-out balanced accuracy torch {held['torch']['balanced_accuracy']} "
            f"int8 {held['onnx_int8']['balanced_accuracy']}, {held['speedup']}x",
            file=sys.stderr,
        )
    checkers = {}
    for c in args.checkers.split(","):
        if c == "support":
            checkers[c] = SupportChecker()
            continue
        backend = {"trained": args.checker_backend}.get(c, c.removeprefix("trained-"))
        if not c.startswith("trained") or backend not in ("auto", "torch", "onnx"):
            parser.error(f"unknown checker {c!r}")
        checkers[c] = TrainedChecker(
            args.trained_model, top_windows=args.top_windows, backend=backend
        )
        print(f"{c}: {checkers[c].backend} backend", file=sys.stderr)
    trained = [c for c in checkers if c.startswith("trained")]
    out_dir = args.out.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"limit": args.limit, "dev_limit": args.dev_limit, "sets": {}}
    if trained:
        m = read_manifest(args.trained_model)
        results["manifest"] = {
            k: m[k] for k in ("base_model", "seed", "data_hash", "train_pairs", "train_seconds")
        }
        results["manifest"]["heldout"] = m["heldout"]
        if "onnx" in m:
            results["manifest"]["onnx"] = {k: m["onnx"][k] for k in ("file", "sha256", "heldout")}
        results["backends"] = {c: checkers[c].backend for c in trained}
    details: dict = {}
    for name in names:
        test_limit = (
            args.limit_summeval if name == "summeval" and args.limit_summeval else args.limit
        )
        for split, limit in (("dev", args.dev_limit), ("test", test_limit)):
            for cname, checker in checkers.items():
                path = out_dir / f"tc.{cname}.{name}.{split}.jsonl"
                summary = path.with_suffix(".result.json")
                if args.reuse and summary.is_file():
                    res = json.loads(summary.read_text())
                    if res.get("limit") == limit and res.get("checker_signature") == (
                        checker.signature
                    ):
                        details[(cname, name, split)] = (res, _rows(path))
                        continue
                started = time.perf_counter()
                res = run_bench(
                    name,
                    checker,
                    extractor,
                    data_dir=args.data_dir,
                    split=split,
                    limit=limit,
                    seed=args.seed,
                    detail_path=path,
                )
                res["wall_seconds"] = round(time.perf_counter() - started, 1)
                summary.write_text(json.dumps(res, indent=2) + "\n")
                details[(cname, name, split)] = (res, _rows(path))
                print(
                    f"{cname} {name} {split} n={res['n']}: raw {res['raw']['balanced_accuracy']} "
                    f"kg {res['kg']['balanced_accuracy']} ({res['wall_seconds']} s)",
                    file=sys.stderr,
                    flush=True,
                )
    # dev thresholds, pooled over the sets
    thresholds = {}
    for cname in checkers:
        for mode in ("raw", "kg"):
            scores, labels = [], []
            for name in names:
                for r in details[(cname, name, "dev")][1]:
                    scores.append(r["raw_probability"] if mode == "raw" else _kg_score(r))
                    labels.append(r["label"])
            thresholds[(cname, mode)] = _best_threshold(scores, labels)
    print(
        "\n| set | n | checker | raw @0.5 [95% CI] | KG @0.5 [95% CI] | raw @dev-t | KG @dev-t "
        "| summaries/s |"
    )
    print("|---|---|---|---|---|---|---|---|")
    means: dict = {}
    for name in names:
        results["sets"][name] = {}
        for cname in checkers:
            res, rows = details[(cname, name, "test")]
            labels = [r["label"] for r in rows]
            raw_pred = [0 if (r["raw_probability"] or 0) > 0.5 else 1 for r in rows]
            kg_pred = [0 if r["inconsistent"] else 1 for r in rows]
            t_raw, t_kg = thresholds[(cname, "raw")], thresholds[(cname, "kg")]
            raw_t = [0 if (r["raw_probability"] or 0) > t_raw else 1 for r in rows]
            kg_t = [0 if _kg_score(r) > t_kg else 1 for r in rows]
            entry = {
                "n": len(rows),
                "raw": round(_bacc(labels, raw_pred), 3),
                "raw_ci": _ci(labels, raw_pred, args.bootstrap, args.seed),
                "kg": round(_bacc(labels, kg_pred), 3),
                "kg_ci": _ci(labels, kg_pred, args.bootstrap, args.seed),
                "raw_dev_threshold": t_raw,
                "raw_at_dev_threshold": round(_bacc(labels, raw_t), 3),
                "kg_dev_threshold": t_kg,
                "kg_at_dev_threshold": round(_bacc(labels, kg_t), 3),
                "summaries_per_s": round(len(rows) / max(res["wall_seconds"], 1e-9), 2),
                "triples": res["kg"]["triples"],
                "flagged_triples": res["kg"]["flagged_triples"],
            }
            results["sets"][name][cname] = entry
            for key in ("raw", "kg", "raw_at_dev_threshold", "kg_at_dev_threshold"):
                means.setdefault((cname, key), []).append(entry[key])
            print(
                f"| {name} | {entry['n']} | {cname} | {entry['raw']} {list(entry['raw_ci'])} | "
                f"{entry['kg']} {list(entry['kg_ci'])} | {entry['raw_at_dev_threshold']} "
                f"(t={t_raw}) | {entry['kg_at_dev_threshold']} (t={t_kg}) | "
                f"{entry['summaries_per_s']} |"
            )
    for cname in checkers:
        avg = {
            k: round(float(np.mean(means[(cname, k)])), 3)
            for k in ("raw", "kg", "raw_at_dev_threshold", "kg_at_dev_threshold")
        }
        results.setdefault("mean", {})[cname] = avg
        print(
            f"| mean | | {cname} | {avg['raw']} | {avg['kg']} | {avg['raw_at_dev_threshold']} | "
            f"{avg['kg_at_dev_threshold']} | |"
        )
    _print_aurocs(names, checkers, details, results, args)
    if "manifest" in results:
        m = results["manifest"]
        print(
            f"\ntrained checker: {m['train_pairs']} training pairs, {m['train_seconds']} s of "
            "training; held-out synthetic balanced accuracy "
            f"{m['heldout'].get('balanced_accuracy')}"
        )
    if trained:
        from s3kg_core.grapheval.datasets import load_summ_set

        misses, errors = [], []
        for name in names:
            summ = load_summ_set(name, data_dir=args.data_dir, split="test")
            contexts = {e.uid: e.context for e in summ.examples}
            mi, er = _examples(details[(trained[0], name, "test")][1], contexts, args.examples)
            misses += [f"{name} {x}" for x in mi]
            errors += [f"{name} {x}" for x in er]
        step = max(1, len(names))
        print(f"\nExtraction misses ({trained[0]} checker, test):")
        print(
            "\n".join(
                misses[:: max(1, len(misses) // args.examples)][: args.examples]
                if len(misses) > args.examples
                else misses
            )
        )
        print(f"\nChecker errors ({trained[0]} checker, test):")
        print(
            "\n".join(
                errors[:: max(1, len(errors) // args.examples)][: args.examples]
                if len(errors) > args.examples
                else errors
            )
        )
        results["examples"] = {"extraction_misses": misses, "checker_errors": errors, "sets": step}
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
