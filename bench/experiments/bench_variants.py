"""Which S3KG variant agrees best with human labels? Chosen on dev pairs, reported on test pairs.

The candidates and the protocol are :mod:`s3kg_core.evaluation.variants` (the pair benchmark's
``dev-test`` protocol, :func:`s3kg_core.evaluation.pairs.choose_alpha`, on every candidate and
set; the candidate to adopt has the best mean *dev* AUROC). This script scores the sets and
prints the tables.

Usage::

    python -m bench.experiments.bench_variants [--encoder minilm|mpnet] [--data-dir DIR]
        [--json OUT] [--components FILE] [--no-reverse] [--sets a,b,...] [--no-score]

``--components FILE`` saves the per-pair components after each set and reuses the sets already
in FILE, so a killed run resumes and the analysis can be rerun without scoring again.
``--sets a,b`` scores only those sets, in that order. ``--json evidence/variants_ENC.json``
writes the analysis as an evidence file with what produced it (``docsgen/evidence.py``), which
the docs render (``scripts/render_evidence.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench._common import write_evidence
from s3kg_core.config import default_data_dir
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
from s3kg_core.evaluation.variants import analyse, report, score_components

REPO = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--components", type=Path, default=None)
    parser.add_argument("--no-reverse", action="store_true")
    parser.add_argument("--sets", default=None, help="comma-separated set names, in this order")
    parser.add_argument(
        "--no-score", action="store_true", help="analyse the sets already in --components only"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or default_data_dir()
    done = {}
    encoder = None
    if args.components is not None and args.components.exists():
        done = json.loads(args.components.read_text())
    if args.no_score:
        if not done:
            print("--no-score needs an existing --components file", file=sys.stderr)
            return 1
        comps = done
    else:
        names = [s for s in args.sets.split(",") if s] if args.sets else list_pair_sets(data_dir)
        todo = [load_pair_set(n, data_dir) for n in names if n not in done]
        encoder = load_encoder(args.encoder) if todo else None
        comps = done if encoder is None else score_components(
            todo, encoder, reverse=not args.no_reverse, done=done, save=args.components,
            log=lambda line: print(line, flush=True),
        )  # fmt: skip
    if not comps:
        print(f"no pair sets under {data_dir}", file=sys.stderr)
        return 1
    result = analyse(comps)
    print(f"encoder {args.encoder}")
    print(report(result))
    if args.json is not None:
        from s3kg_core.scoring.s3kg import S3KGConfig

        name = (encoder or load_encoder(args.encoder)).name
        write_evidence(
            args.json, {"encoder": args.encoder, **result},
            title=f"S3KG variants, {args.encoder}: mean dev and test AUROC, alpha per set from "
            "dev (bench_variants.py)",
            signature=S3KGConfig(mode="hybrid").signature(name),
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
