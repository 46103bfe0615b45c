"""Summarise ``s3kg bench pairs --dataset all --json OUT`` as one table: AUROC (max-F1).

Rows are the pair sets plus their mean; columns are the methods in the order the JSON has them
(the S3KG variants first). Under the dev-test protocol every figure is on the test pairs.

The input is the JSON of ``s3kg bench pairs`` or the demo's ``data/demo/bench_results.json``
(rows exported from a ``--db`` of the same command). ``--evidence FILE`` also writes the
figures (per set and method: AUROC, max-F1, their intervals, alpha, threshold; the means) as
an evidence file, which ``scripts/render_evidence.py`` renders into the docs; ``--command``
says what produced the input when the input does not.

Usage::

    python -m bench.experiments.summarise_pairs bench/out/bench_minilm_devtest.json [--markdown]
        [--evidence evidence/pairs_minilm.json --command "s3kg bench pairs ..."]
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench._common import machine, md_table, text_table, write_evidence

REPO = Path(__file__).resolve().parents[2]

KEPT = ("auroc", "f1", "auroc_ci", "f1_ci", "alpha", "threshold")
"""The figures of a method the evidence file keeps (no per-pair data, no sweeps)."""


def short(name: str) -> str:
    return (
        name.replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "").removesuffix("_400")
    )


def from_demo_rows(content: dict[str, Any]) -> list[dict[str, Any]]:
    """``data/demo/bench_results.json``'s rows in the ``s3kg bench pairs --json`` layout."""
    by_set: dict[str, dict[str, Any]] = {}
    for row in content["rows"]:
        detail = row.get("detail") or {}
        res = by_set.setdefault(
            row["dataset"],
            {
                "dataset": row["dataset"], "n": row["n"], "encoder": row["encoder"],
                "mode": row["mode"], "triples": row["triples"],
                "protocol": detail.get("protocol", "same"), "n_dev": detail.get("n_dev"),
                "split": detail.get("split"), "methods": {},
            },
        )  # fmt: skip
        res["methods"][row["method"]] = {
            "f1": row["f1"], "auroc": row["auroc"], "alpha": row["alpha"],
            "threshold": row["threshold"], "f1_ci": [row["f1_lo"], row["f1_hi"]],
            "auroc_ci": [row["auroc_lo"], row["auroc_hi"]],
        }  # fmt: skip
    return list(by_set.values())


def figures(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The evidence figures: per set (short name) and method, and each method's mean."""
    methods = list(results[0]["methods"])
    sets = {}
    for r in results:
        sets[short(r["dataset"])] = {
            "dataset": r["dataset"], "n": r["n"], "n_dev": r.get("n_dev"),
            "methods": {
                m: {k: v[k] for k in KEPT if k in v} for m, v in r["methods"].items()
            },
        }  # fmt: skip
    mean = {
        m: {
            "auroc": sum(r["methods"][m]["auroc"] for r in results) / len(results),
            "f1": sum(r["methods"][m]["f1"] for r in results) / len(results),
        }
        for m in methods
    }
    first = results[0]
    return {
        "encoder": first["encoder"], "mode": first.get("mode"), "triples": first.get("triples"),
        "protocol": first.get("protocol", "same"), "split": first.get("split"),
        "sets": sets, "mean": mean,
    }  # fmt: skip


def _last_commit(path: Path) -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--", str(path)],
        cwd=REPO, capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    # 12 digits as docsgen writes them: %h's length depends on the clone's size and settings
    return out[:12] or "unknown"


def write(
    path: Path, source: Path, content: Any, results: list[dict[str, Any]], command: str | None
) -> None:
    """Write ``results``' figures to the evidence file ``path``."""
    demo = isinstance(content, dict) and "rows" in content
    prov: dict[str, Any] = {}
    if demo:
        command = command or content.get("command")
        here = {k: v for k, v in machine().items() if k not in ("load_average", "env")}
        prov = {
            "machine_info": {**here, "note": "read at transcription: the run recorded none"},
            "date": content.get("created") or "unknown",
            "commit": _last_commit(source),
            "transcribed": {
                "from": source.resolve().relative_to(REPO).as_posix()
                if source.resolve().is_relative_to(REPO)
                else str(source),
                "run": f"{content.get('created')}: {content.get('command')}",
                "at": datetime.date.today().isoformat(),
            },
        }
    if not command:
        raise SystemExit("--evidence needs --command: the command that wrote the input JSON")
    sig = (results[0]["methods"].get("s3kg") or {}).get("signature")
    if demo:
        sig = content.get("signature")
    write_evidence(
        path, figures(results), command=command, signature=sig,
        title=f"S3KG and the baselines on the labelled pair sets, {results[0]['encoder']}: AUROC "
        "and max-F1 (test pairs under dev-test)",
        **prov,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--evidence", type=Path, default=None, help="also write evidence here")
    parser.add_argument("--command", default=None, help="the command that wrote the input")
    args = parser.parse_args(argv)
    content = json.loads(args.json.read_text())
    if isinstance(content, dict) and "rows" in content:
        results = from_demo_rows(content)
    else:
        results = content if isinstance(content, list) else [content]
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
        print(md_table(["set", *methods], [[name, *cells] for name, cells in rows]))
    else:
        right = range(1, len(methods) + 1)
        print(text_table(["set", *methods], [[name, *cells] for name, cells in rows], right))
    if args.evidence is not None:
        write(args.evidence, args.json, content, results, args.command)
        print(f"evidence written to {args.evidence}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
