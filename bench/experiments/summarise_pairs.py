"""Summarise ``s3kg bench pairs --dataset all --json OUT`` as one table: AUROC (max-F1).

Rows are the pair sets plus their mean; columns are the methods in the order the JSON has them
(the S3KG variants first). Under the dev-test protocol every figure is on the test pairs.

Usage::

    python bench/experiments/summarise_pairs.py bench/out/bench_minilm_devtest.json [--markdown]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def short(name: str) -> str:
    return (
        name.replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "").removesuffix("_400")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    results = json.loads(args.json.read_text())
    results = results if isinstance(results, list) else [results]
    methods = [m for m in results[0]["methods"] if m != "s3kg"]
    rows = []
    for r in results:
        cells = [f"{r['methods'][m]['auroc']:.3f} ({r['methods'][m]['f1']:.3f})" for m in methods]
        rows.append((f"{short(r['dataset'])} (n={r['n']})", cells))
    means = []
    for m in methods:
        auc = sum(r["methods"][m]["auroc"] for r in results) / len(results)
        f1 = sum(r["methods"][m]["f1"] for r in results) / len(results)
        means.append(f"{auc:.3f} ({f1:.3f})")
    rows.append(("mean", means))
    protocol = results[0].get("protocol", "same")
    print(f"AUROC (max-F1), encoder {results[0]['encoder']}, protocol {protocol}")
    if args.markdown:
        print("| set | " + " | ".join(methods) + " |")
        print("|---|" + "---|" * len(methods))
        for name, cells in rows:
            print(f"| {name} | " + " | ".join(cells) + " |")
    else:
        print(f"{'set':<22}" + "".join(f"{m:>15}" for m in methods))
        for name, cells in rows:
            print(f"{name:<22}" + "".join(f"{c:>15}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
