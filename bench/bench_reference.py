"""KGScorer against the authors' released procedure, in one run, on the same pairs.

The released procedure (``reference_snea.py``) encodes every string in its own call and re-encodes
all of T2 for each triple of T1, so it is timed on a stratified random sample of the shared
benchmark pairs (seed 0) and its time per pair is extrapolated; KGScorer (``mode="kgx"``, which
computes the same numbers) is timed on the sample and on every pair. The output also gives the
largest difference between the two on the sample's scores, so the comparison is like for like.

Usage::

    python bench/bench_reference.py [--sample 40] [--encoder minilm] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--encoder", default="minilm")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("S3KG_DATA_DIR", REPO.parent / "shared" / "data")),
    )
    args = parser.parse_args()

    from reference_snea import reference_score

    from s3kg_core.encoders.registry import load_encoder
    from s3kg_core.kgio import read_pairs_csv
    from s3kg_core.scoring.s3kg import KGScorer

    files = sorted(glob.glob(str(args.data_dir / "s3kg_release" / "benchmarks" / "*.csv")))
    if not files:
        sys.exit(f"no benchmark files under {args.data_dir}")
    by_file = {f: [(r.kg_1, r.kg_2) for r in read_pairs_csv(f) if r.status == "ok"] for f in files}
    pairs = [p for ps in by_file.values() for p in ps]
    rng = random.Random(0)
    sample = []
    for ps in by_file.values():  # proportional to each file's size
        k = max(1, round(args.sample * len(ps) / len(pairs)))
        sample += rng.sample(ps, min(k, len(ps)))

    encoder = load_encoder(args.encoder, backend="torch")  # the authors' code runs torch
    model = encoder.load_model()  # the same SentenceTransformer object for both methods
    encoder.encode(["warm up", "the encoder"])

    t0 = time.perf_counter()
    ref = [
        reference_score(model, [t.to_list() for t in a], [t.to_list() for t in b])
        for a, b in sample
    ]
    t_ref = time.perf_counter() - t0

    t0 = time.perf_counter()
    ours_sample = KGScorer(encoder, mode="kgx").score_pairs(sample)
    t_sample = time.perf_counter() - t0

    scorer = KGScorer(encoder, mode="kgx")
    t0 = time.perf_counter()
    scorer.score_pairs(pairs)
    t_all = time.perf_counter() - t0

    d_wl = max(abs(r[0] - o.s_wl) for r, o in zip(ref, ours_sample, strict=True))
    d_sb = max(abs(r[1] - o.s_sbert) for r, o in zip(ref, ours_sample, strict=True))
    ref_pp = t_ref / len(sample)
    all_pp = t_all / len(pairs)
    print(f"encoder {encoder.name}; sample {len(sample)} of {len(pairs)} pairs (seed 0)")
    print(f"{'method':<34}{'pairs':>7}{'seconds':>10}{'ms/pair':>10}")
    print(
        f"{'reference procedure (sample)':<34}{len(sample):>7}{t_ref:>10.1f}{1000 * ref_pp:>10.1f}"
    )
    sample_pp = t_sample / len(sample)
    print(
        f"{'KGScorer kgx (sample)':<34}{len(sample):>7}{t_sample:>10.1f}{1000 * sample_pp:>10.1f}"
    )
    print(f"{'KGScorer kgx (all pairs)':<34}{len(pairs):>7}{t_all:>10.1f}{1000 * all_pp:>10.1f}")
    print(
        f"reference on all pairs, extrapolated: {ref_pp * len(pairs):.0f} s; "
        f"KGScorer is {ref_pp / all_pp:.1f}x faster per pair "
        f"({ref_pp * len(sample) / t_sample:.1f}x on the sample alone)"
    )
    print(f"agreement on the sample: max |dS_WL| = {d_wl:.2e}, max |dS_SBERT| = {d_sb:.2e}")


if __name__ == "__main__":
    main()
