"""Export the project's ``s3kg bench pairs`` results into ``data/demo/bench_results.json``.

The demo database carries them (:func:`s3kg_core.evaluation.demo_results.store_demo_bench`), so the
dashboard's Benchmarks page has content on a fresh checkout, without ``../shared/data``.
Input: a database written by ``s3kg bench pairs ... --db FILE``, for instance

    s3kg bench pairs --dataset all --bootstrap 200 --json OUT.json --db bench/out/bench_demo.duckdb

Output: figures only (F1, AUROC, their bootstrap intervals, alpha, threshold, the alpha sweeps,
each method's signature); the per-pair ids, labels and scores stay out, so nothing of the
public pair sets themselves is copied into the repository. The file names the command, the
project version, the date and the S3KG score signature(s); the demo build stores its rows
marked as precomputed by the project, and the Benchmarks page says so.

Usage::

    python scripts/make_demo_bench.py --db bench/out/bench_demo.duckdb --command "s3kg ..."
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PER_PAIR = ("ids", "labels", "scores")
"""Per-pair data of the public sets in a row's detail: never exported."""


def export(db: Path, command: str, created: str | None = None) -> dict[str, Any]:
    """The demo benchmark file's content from the benchmark rows stored in ``db``."""
    from s3kg_core import __version__
    from s3kg_core.evaluation.demo_results import BENCH_FORMAT
    from s3kg_core.evaluation.pairs import load_bench_results
    from s3kg_core.store.schema import BENCH_COLUMNS
    from s3kg_core.store.store import Store

    rows = []
    for row in load_bench_results(Store(db, read_only=True)):
        detail = {k: v for k, v in row["detail"].items() if k not in (*PER_PAIR, "precomputed")}
        rows.append({**{c: row[c] for c in BENCH_COLUMNS}, "detail": detail})
    rows.sort(key=lambda r: (r["dataset"], r["encoder"], r["mode"], r["triples"], r["method"]))
    signatures = sorted(
        {
            str(r["detail"]["signature"])
            for r in rows
            if r["method"] == "s3kg" and "signature" in r["detail"]
        }
    )
    return {
        "format": BENCH_FORMAT,
        "note": (
            "Precomputed by the S3KG Workbench project on the public labelled pair sets "
            "(the S3KG authors' released benchmarks); figures only."
        ),
        "command": command,
        "generated_by": "scripts/make_demo_bench.py",
        "s3kg_version": __version__,
        "created": created or datetime.date.today().isoformat(),
        "signature": " ; ".join(signatures),
        "datasets": sorted({r["dataset"] for r in rows}),
        "rows": rows,
    }


def render(content: dict[str, Any]) -> str:
    """The file's text: the header indented, one row a line (small, readable diffs)."""
    head = json.dumps({k: v for k, v in content.items() if k != "rows"}, indent=1)
    rows = ",\n".join(f" {json.dumps(r)}" for r in content["rows"])
    return f'{head[:-2]},\n "rows": [\n{rows}\n ]\n}}\n'


def main(argv: list[str] | None = None) -> int:
    """Read the benchmark database, write the demo's benchmark file."""
    from s3kg_core.evaluation.demo_results import BENCH_FILE, read_bench_file

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, required=True, help="a `s3kg bench pairs --db` file")
    parser.add_argument("--command", required=True, help="the `s3kg bench pairs` command run")
    parser.add_argument("--created", default=None, help="the date the results were computed")
    parser.add_argument("--out", type=Path, default=BENCH_FILE)
    args = parser.parse_args(argv)
    content = export(args.db, args.command, args.created)
    args.out.write_text(render(content), encoding="utf-8")
    read_bench_file(args.out)  # the demo build can read what was written
    print(
        f"wrote {len(content['rows'])} rows of {len(content['datasets'])} sets to {args.out} "
        f"({args.out.stat().st_size // 1024} KiB)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
