"""Is the default below another mode on any pair set beyond its paired-bootstrap noise?

For each pair set: ``run_pair_benchmark`` under the ``dev-test`` protocol with two S3KG methods
(the default mode and ``--against``, each with its own alpha chosen on the dev pairs), then the
test AUROC difference (default minus the other) with a paired percentile bootstrap over the
test pairs: one resample draws the same pairs for both methods (within each class, as the
benchmark's own intervals: :func:`s3kg_core.stats.percentile_bootstrap`). A set is "below
beyond noise" when the whole interval is below 0.

Usage::

    python -m bench.experiments.pairs_paired [--against hybrid] [--bootstrap 1000]
        [--data-dir DIR] [--json evidence/pairs_paired.json]

``--json`` writes the figures as an evidence file (``docsgen/evidence.py``: with the command,
machine and commit that produced them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import text_table, write_evidence
from s3kg_core.config import default_data_dir
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.metrics import auroc
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.evaluation.pairs import run_pair_benchmark
from s3kg_core.scoring.result import DEFAULT_MODE
from s3kg_core.stats import percentile_bootstrap


def paired_auroc(
    new: np.ndarray, old: np.ndarray, labels: np.ndarray, *, resamples: int, seed: int = 0
) -> dict[str, float]:
    """AUROC(new) - AUROC(old) on the same pairs, with a paired percentile interval.

    >>> y = np.array([1, 1, 0, 0])
    >>> d = paired_auroc(np.array([0.9, 0.8, 0.1, 0.2]), np.array([0.2, 0.8, 0.1, 0.9]), y,
    ...                  resamples=200)
    >>> d["difference"], d["low"] <= d["difference"] <= d["high"]
    (0.5, True)
    """
    pos, neg = np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]

    def diff(i: np.ndarray, j: np.ndarray) -> float:
        rows = np.r_[pos[i], neg[j]]
        return auroc(new[rows], y) - auroc(old[rows], y)

    low, high, _ = percentile_bootstrap(diff, [len(pos), len(neg)], resamples=resamples, seed=seed)
    point = auroc(new, labels) - auroc(old, labels)
    return {"difference": float(point), "low": float(low), "high": float(high)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", default="hybrid", help="the other S3KG mode (default hybrid)")
    ap.add_argument("--encoder", default="minilm")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None, help="write the figures as an evidence file")
    args = ap.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    encoder = load_encoder(args.encoder)
    other = f"s3kg@{args.against}"
    rows, out = [], {}
    for name in list_pair_sets(data_dir):
        ps = load_pair_set(name, data_dir)
        r = run_pair_benchmark(
            ps, encoder=encoder, mode=DEFAULT_MODE, methods=["s3kg", other], bootstrap=1
        )
        labels = np.asarray(r.labels)
        new = np.asarray(r.methods["s3kg"].scores)
        old = np.asarray(r.methods[other].scores)
        d = paired_auroc(new, old, labels, resamples=args.bootstrap)
        below = d["high"] < 0
        aurocs = {DEFAULT_MODE: r.methods["s3kg"].auroc, args.against: r.methods[other].auroc}
        out[name] = {"n": len(labels), **aurocs, **d, "below_beyond_noise": below}
        rows.append([name, len(labels), f"{r.methods['s3kg'].auroc:.3f}",
                     f"{r.methods[other].auroc:.3f}",
                     f"{d['difference']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}]",
                     "yes" if below else "no"])  # fmt: skip
        print(rows[-1], flush=True, file=sys.stderr)
    header = ["set", "test pairs", DEFAULT_MODE, args.against, "difference [95 % paired]", "below"]
    print(text_table(header, rows))
    if args.json:
        payload: dict[str, Any] = {
            "against": args.against,
            "bootstrap": args.bootstrap,
            "sets": out,
        }
        title = f"Pair sets: the default ({DEFAULT_MODE}) against {args.against}, paired test AUROC"
        write_evidence(args.json, payload, title=title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
