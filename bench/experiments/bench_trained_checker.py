"""GraphEval's Table 2 with the project's trained checker beside the support checker.

For each set (test articles; a seeded stratified sample with ``--limit``), the checkers judge
the same summaries raw (whole summary vs article) and with the offline KG (any triple over 0.5:
GraphEval's rule, the reported figure), in turn, so their summaries/s are comparable. Balanced
accuracy gets a 95 % percentile bootstrap interval resampled per class. Beside it, a threshold
chosen on a stratified sample of the **dev** articles (``--dev-limit``, the best balanced
accuracy on dev, pooled over the sets) is applied to test: never chosen on test. Then the
threshold-free AUROCs (raw; KG: the highest triple's probability; KG mean: the mean triple's).
All of it is :func:`s3kg_core.evaluation.grapheval.compare_checkers`.

Also printed: the training time from the model's manifest, and ten examples each of
extraction misses and checker errors for the trained checker
(:func:`s3kg_core.evaluation.grapheval.failure_examples`).

    nice -n 10 .venv/bin/python -m bench.experiments.bench_trained_checker [--limit N]
        [--limit-summeval 400] [--dev-limit 120] [--checker-backend auto|torch|onnx]
        [--datasets summeval,qags_c,qags_x] [--checkers support,trained] [--out bench/out/tc.json]

Checkers: ``support``; ``trained`` (its backend ``--checker-backend``); ``trained-torch`` and
``trained-onnx``, the trained checker on torch and on its int8 ONNX export (``s3kg grapheval
export-checker``) in one run.

The int8 ONNX check (bench/README.md, "int8 ONNX trained checker on the test articles"):

    OMP_NUM_THREADS=1 nice -n 15 .venv/bin/python -m bench.experiments.bench_trained_checker
        --checkers trained-torch,trained-onnx --limit-summeval 150 --dev-limit 40
        --trained-model DIR --export --out bench/out/tc_onnx.json

(``--export``: first run ``s3kg grapheval export-checker --model DIR`` when DIR has no int8
export or a stale one; it writes ``model.int8.onnx`` and the manifest entry into DIR.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench._common import md_table
from s3kg_core.checker_training.export import export_checker
from s3kg_core.evaluation.grapheval import compare_checkers, failure_examples
from s3kg_core.evaluation.summ_sets import load_summ_set
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.grapheval.checkers.base import Checker
from s3kg_core.grapheval.checkers.model_format import read_manifest, trained_checker_dir
from s3kg_core.grapheval.checkers.support import SupportChecker
from s3kg_core.grapheval.checkers.trained import TrainedChecker, onnx_problem


def _parser() -> argparse.ArgumentParser:
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
    return parser


def _checkers(args: argparse.Namespace, parser: argparse.ArgumentParser) -> dict[str, Checker]:
    checkers: dict[str, Checker] = {}
    for c in args.checkers.split(","):
        if c == "support":
            checkers[c] = SupportChecker()
            continue
        backend = {"trained": args.checker_backend}.get(c, c.removeprefix("trained-"))
        if not c.startswith("trained") or backend not in ("auto", "torch", "onnx"):
            parser.error(f"unknown checker {c!r}")
        trained = TrainedChecker(args.trained_model, top_windows=args.top_windows, backend=backend)
        print(f"{c}: {trained.backend} backend", file=sys.stderr)
        checkers[c] = trained
    return checkers


def _print_tables(names: list[str], results: dict[str, Any]) -> None:
    head = ["set", "n", "checker", "raw @0.5 [95% CI]", "KG @0.5 [95% CI]", "raw @dev-t"]
    head += ["KG @dev-t", "summaries/s"]
    body = []
    for name in names:
        for cname, e in results["sets"][name].items():
            body.append(
                [
                    name,
                    str(e["n"]),
                    cname,
                    f"{e['raw']} {e['raw_ci']}",
                    f"{e['kg']} {e['kg_ci']}",
                    f"{e['raw_at_dev_threshold']} (t={e['raw_dev_threshold']})",
                    f"{e['kg_at_dev_threshold']} (t={e['kg_dev_threshold']})",
                    str(e["summaries_per_s"]),
                ]
            )
    for cname, m in results["mean"].items():
        body.append(
            [
                "mean",
                "",
                cname,
                str(m["raw"]),
                str(m["kg"]),
                str(m["raw_at_dev_threshold"]),
                str(m["kg_at_dev_threshold"]),
                "",
            ]
        )
    print("\n" + md_table(head, body))
    head = ["set", "checker", "raw AUROC [95% CI]", "KG AUROC [95% CI]", "KG mean-triple AUROC"]
    body = [
        [
            name,
            cname,
            f"{e['raw_auroc']} {e['raw_auroc_ci']}",
            f"{e['kg_auroc']} {e['kg_auroc_ci']}",
            f"{e['kg_mean_auroc']} {e['kg_mean_auroc_ci']}",
        ]
        for name in names
        for cname, e in results["sets"][name].items()
    ]
    print("\n" + md_table(head, body))


def _sampled(lines: list[str], k: int) -> list[str]:
    return lines[:: max(1, len(lines) // k)][:k] if len(lines) > k else lines


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    names = args.datasets.split(",")
    if args.export and onnx_problem(args.trained_model or trained_checker_dir()) is not None:
        held = export_checker(args.trained_model)["heldout"]
        print(
            f"exported: held-out balanced accuracy torch {held['torch']['balanced_accuracy']} "
            f"int8 {held['onnx_int8']['balanced_accuracy']}, {held['speedup']}x",
            file=sys.stderr,
        )
    checkers = _checkers(args, parser)
    trained = [c for c in checkers if c.startswith("trained")]
    limits = {n: args.limit_summeval if n == "summeval" and args.limit_summeval else args.limit
              for n in names}  # fmt: skip
    compared = compare_checkers(
        names, checkers, OfflineExtractor(), out_dir=args.out.parent, data_dir=args.data_dir,
        test_limits=limits, dev_limit=args.dev_limit, seed=args.seed, bootstrap=args.bootstrap,
        reuse=args.reuse, log=lambda line: print(line, file=sys.stderr, flush=True),
    )  # fmt: skip
    runs = compared.pop("runs")
    results: dict[str, Any] = {"limit": args.limit, "dev_limit": args.dev_limit, **compared}
    if trained:
        m = read_manifest(args.trained_model)
        keep = ("base_model", "seed", "data_hash", "train_pairs", "train_seconds", "heldout")
        results["manifest"] = {k: m[k] for k in keep}
        if "onnx" in m:
            results["manifest"]["onnx"] = {k: m["onnx"][k] for k in ("file", "sha256", "heldout")}
        results["backends"] = {c: getattr(checkers[c], "backend", "") for c in trained}
    _print_tables(names, results)
    if trained:
        m = results["manifest"]
        print(
            f"\ntrained checker: {m['train_pairs']} training pairs, {m['train_seconds']} s of "
            "training; held-out synthetic balanced accuracy "
            f"{m['heldout'].get('balanced_accuracy')}"
        )
        misses, errors = [], []
        for name in names:
            summ = load_summ_set(name, data_dir=args.data_dir, split="test")
            contexts = {e.uid: e.context for e in summ.examples}
            rows = runs[(trained[0], name, "test")][1]
            mi, er = failure_examples(rows, contexts, args.examples)
            misses += [f"{name} {x}" for x in mi]
            errors += [f"{name} {x}" for x in er]
        print(f"\nExtraction misses ({trained[0]} checker, test):")
        print("\n".join(_sampled(misses, args.examples)))
        print(f"\nChecker errors ({trained[0]} checker, test):")
        print("\n".join(_sampled(errors, args.examples)))
        results["examples"] = {"extraction_misses": misses, "checker_errors": errors}
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
