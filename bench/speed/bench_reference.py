"""KGScorer against the authors' released procedure, in one run, on the same pairs.

The released procedure (``reference_snea.py``) encodes every string in its own call and re-encodes
all of T2 for each triple of T1, so it is timed on a stratified random sample of the shared
benchmark pairs (seed 0) and its time per pair is extrapolated; KGScorer (``mode="kgx"``, which
computes the same numbers) is timed on the sample and on every pair. The output also gives the
largest difference between the two on the sample's scores, so the comparison is like for like.

The reference always runs the torch sentence-transformers model (the authors' code does);
``--backends`` names the project side's encoder backends (default ``torch``, the same model
object as the reference's; e.g. ``onnx,torch`` for both, side by side). With more than one
backend, or with ``--threads``, KGScorer scores the sample before and after the reference (the
backends' order reversed after it) and the best of the two runs counts.

``--include-load`` also times each side's start in a fresh process (interpreter, imports, model
load, one encoded string; torch for the reference, each backend for KGScorer), twice,
interleaved, best of two, and prints the ratio with that start added to the sample's time.
``--threads N`` holds every runtime to N intra-op threads and keeps torch in this process (no
worker pool); without it torch uses its defaults, as before.

``--modes kgx,ot,hybrid`` also times other scoring modes of KGScorer on the same sample and on
every pair, with the first backend, interleaved with ``kgx`` (the sample before and after the
reference, every pair twice, the order reversed the second time; best of two): the default
mode (``ot``) does more than the authors' procedure (optimal transport over the triples, a WL
kernel), so its ratio is the one a user of the default gets. Only ``kgx`` computes the
reference's numbers, so the agreement is given for ``kgx`` alone.

``--json evidence/reference.json`` writes the figures (seconds, ms per pair, the ratios, the
agreement) as an evidence file with what produced them (``docsgen/evidence.py``), which the
docs render (``scripts/render_evidence.py``).

Usage::

    python -m bench.speed.bench_reference [--sample 40] [--encoder minilm] [--data-dir DIR]
        [--backends torch|onnx,torch,...] [--modes kgx,ot,hybrid] [--include-load] [--threads N]
        [--no-all] [--json evidence/reference.json]
"""

from __future__ import annotations

import argparse
import glob
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import add_data_dir, print_load, write_evidence

REPO = Path(__file__).resolve().parents[2]

START = """
from s3kg_core.encoders.registry import load_encoder
enc = load_encoder({name!r}, backend={backend!r}, processes=1, threads={threads!r})
{call}.encode(["warm up"])
"""


def start_seconds(name: str, backend: str, threads: int | None, reference: bool) -> float:
    """Wall seconds of a fresh process that loads the encoder and encodes one string."""
    call = "enc.load_model()" if reference else "enc"
    code = START.format(name=name, backend=backend, threads=threads, call=call)
    env = {**os.environ, "PYTHONPATH": str(REPO), "S3KG_ENCODE_PROCESSES": "1"}
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)
    return time.perf_counter() - t0


def figures(
    *,
    encoder: str,
    threads: int | None,
    n_sample: int,
    n_all: int,
    t_ref: float,
    t_sample: dict[str, list[float]],
    t_all: dict[str, float],
    starts: dict[str, list[float]],
    agreement: dict[str, tuple[float, float]],
    modes: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The run's figures as ``--json`` writes them (and ``docsgen/speed.py`` reads them)."""
    ref_pp = t_ref / n_sample
    ref_start = min(starts["reference"]) if starts.get("reference") else None
    out: dict[str, Any] = {
        "encoder": encoder,
        "threads": threads,
        "sample_pairs": n_sample,
        "all_pairs": n_all,
        "reference": {
            "sample_seconds": t_ref,
            "ms_per_pair": 1000 * ref_pp,
            "start_seconds": ref_start,
            "all_seconds_extrapolated": ref_pp * n_all,
        },
        "backends": {},
    }
    for b, times in t_sample.items():
        best = min(times)
        ours = min(starts[b]) if starts.get(b) else None
        full = t_all.get(b)
        row: dict[str, Any] = {
            "sample_seconds": best,
            "ms_per_pair": 1000 * best / n_sample,
            "all_seconds": full,
            "all_ms_per_pair": None if full is None else 1000 * full / n_all,
            "start_seconds": ours,
            "ratio_sample": t_ref / best,
            "ratio_sample_with_start": None,
            "ratio_all": None if full is None else ref_pp * n_all / full,
            "ratio_all_with_start": None,
            "max_abs_d_wl": agreement[b][0],
            "max_abs_d_sbert": agreement[b][1],
        }
        if ref_start is not None and ours is not None:
            row["ratio_sample_with_start"] = (ref_start + t_ref) / (ours + best)
            if full is not None:
                row["ratio_all_with_start"] = (ref_start + ref_pp * n_all) / (ours + full)
        out["backends"][b] = row
    for mode, m in (modes or {}).items():
        best = min(m["sample_seconds"])
        full = m.get("all_seconds")
        out.setdefault("modes", {})[mode] = {
            "backend": m["backend"],
            "sample_seconds": best,
            "ms_per_pair": 1000 * best / n_sample,
            "all_seconds": full,
            "all_ms_per_pair": None if full is None else 1000 * full / n_all,
            "ratio_sample": t_ref / best,
            "ratio_all": None if full is None else ref_pp * n_all / full,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--encoder", default="minilm")
    add_data_dir(parser, "s3kg_release/benchmarks")
    parser.add_argument("--backends", default="torch", help="KGScorer's backends, comma list")
    parser.add_argument(
        "--modes", default="kgx", help="KGScorer's modes, comma list (kgx first: the agreement)"
    )
    parser.add_argument("--include-load", action="store_true", help="also time each start")
    parser.add_argument("--threads", type=int, default=None, help="intra-op threads")
    parser.add_argument("--no-all", action="store_true", help="skip KGScorer on all pairs")
    parser.add_argument("--json", type=Path, default=None, help="write the figures as evidence")
    args = parser.parse_args()
    backends = args.backends.split(",")
    others = [m for m in args.modes.split(",") if m and m != "kgx"]

    from bench.speed.reference_snea import reference_score
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

    opts: dict[str, Any] = {}
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)
        opts = {"processes": 1, "threads": args.threads}
    torch_enc = load_encoder(args.encoder, backend="torch", **opts)  # the authors' code runs torch
    model = torch_enc.load_model()  # the same SentenceTransformer object for both methods
    encoders = {
        b: torch_enc if b == "torch" else load_encoder(args.encoder, backend=b, **opts)
        for b in backends
    }
    for enc in encoders.values():
        enc.encode(["warm up", "the encoder"])
    print_load()
    print(f"threads {args.threads or 'default'}")

    starts: dict[str, list[float]] = {"reference": [], **{b: [] for b in backends}}
    if args.include_load:
        order = ["reference", *backends]
        for rep in range(2):  # interleaved, the order reversed the second time
            for who in order if rep == 0 else order[::-1]:
                ref = who == "reference"
                backend = "torch" if ref else who
                starts[who].append(start_seconds(args.encoder, backend, args.threads, ref))

    t_sample: dict[str, list[float]] = {b: [] for b in backends}
    ours_sample: dict[str, Any] = {}

    t_modes: dict[str, dict[str, Any]] = {
        m: {"backend": backends[0], "sample_seconds": []} for m in others
    }

    def run_ours(order: list[str]) -> None:
        for b in order:
            t0 = time.perf_counter()
            ours_sample[b] = KGScorer(encoders[b], mode="kgx").score_pairs(sample)
            t_sample[b].append(time.perf_counter() - t0)
        for m in others if order == backends else others[::-1]:
            t0 = time.perf_counter()
            KGScorer(encoders[backends[0]], mode=m).score_pairs(sample)
            t_modes[m]["sample_seconds"].append(time.perf_counter() - t0)

    interleave = len(backends) > 1 or args.threads is not None or bool(others)
    if interleave:
        run_ours(backends)
    t0 = time.perf_counter()
    ref = [
        reference_score(model, [t.to_list() for t in a], [t.to_list() for t in b])
        for a, b in sample
    ]
    t_ref = time.perf_counter() - t0
    run_ours(backends[::-1] if interleave else backends)

    t_all: dict[str, float] = {}
    if not args.no_all:
        # with other modes: every run twice, the order reversed the second time, best of two,
        # so a change of the machine's load falls on every method alike
        runs = [("kgx", b) for b in backends] + [(m, backends[0]) for m in others]
        for order in [runs, runs[::-1]] if others else [runs]:
            for mode, b in order:
                scorer = KGScorer(encoders[b], mode=mode)
                t0 = time.perf_counter()
                scorer.score_pairs(pairs)
                took = time.perf_counter() - t0
                if mode == "kgx":
                    t_all[b] = min(t_all.get(b, took), took)
                else:
                    t_modes[mode]["all_seconds"] = min(t_modes[mode].get("all_seconds", took), took)

    ref_pp = t_ref / len(sample)
    print(f"encoder {torch_enc.name}; sample {len(sample)} of {len(pairs)} pairs (seed 0)")
    print(f"{'method':<34}{'pairs':>7}{'seconds':>10}{'ms/pair':>10}")
    print(
        f"{'reference procedure (sample)':<34}{len(sample):>7}{t_ref:>10.1f}{1000 * ref_pp:>10.1f}"
    )
    for b in backends:
        tag = "" if backends == ["torch"] else f" {b}"
        best = min(t_sample[b])
        label = f"KGScorer kgx{tag} (sample)"
        print(f"{label:<34}{len(sample):>7}{best:>10.1f}{1000 * best / len(sample):>10.1f}")
        if b in t_all:
            label = f"KGScorer kgx{tag} (all pairs)"
            pp = t_all[b] / len(pairs)
            print(f"{label:<34}{len(pairs):>7}{t_all[b]:>10.1f}{1000 * pp:>10.1f}")
    for b in backends:
        best = min(t_sample[b])
        tag = "KGScorer" if backends == ["torch"] else f"KGScorer ({b})"
        line = f"{tag}: {t_ref / best:.1f}x faster on the sample"
        if b in t_all:
            line = (
                f"reference on all pairs, extrapolated: {ref_pp * len(pairs):.0f} s; "
                f"{tag} is {ref_pp * len(pairs) / t_all[b]:.1f}x faster per pair "
                f"({t_ref / best:.1f}x on the sample alone)"
            )
        print(line)
    for m in others:
        best = min(t_modes[m]["sample_seconds"])
        line = f"KGScorer {m} ({backends[0]}): {t_ref / best:.1f}x faster on the sample"
        if "all_seconds" in t_modes[m]:
            full = t_modes[m]["all_seconds"]
            line += (
                f"; all pairs {full:.1f} s ({1000 * full / len(pairs):.1f} ms/pair), "
                f"{ref_pp * len(pairs) / full:.1f}x faster per pair than the reference"
            )
        print(line)
    if args.include_load:
        ref_start = min(starts["reference"])
        print(f"start (fresh process, load, one string; best of 2): reference {ref_start:.1f} s")
        for b in backends:
            ours = min(starts[b])
            best = min(t_sample[b])
            print(
                f"  {b}: start {ours:.1f} s; on the sample with the start: reference "
                f"{ref_start + t_ref:.1f} s, KGScorer {ours + best:.1f} s, "
                f"{(ref_start + t_ref) / (ours + best):.1f}x (without: {t_ref / best:.1f}x)"
            )
            if b in t_all:
                ref_all = ref_start + ref_pp * len(pairs)
                print(
                    f"  {b}: all pairs with the start: reference {ref_all:.0f} s (extrapolated), "
                    f"KGScorer {ours + t_all[b]:.1f} s, {ref_all / (ours + t_all[b]):.1f}x "
                    f"(without: {ref_pp * len(pairs) / t_all[b]:.1f}x)"
                )
    agreement = {}
    for b in backends:
        d_wl = max(abs(r[0] - o.s_wl) for r, o in zip(ref, ours_sample[b], strict=True))
        d_sb = max(abs(r[1] - o.s_sbert) for r, o in zip(ref, ours_sample[b], strict=True))
        agreement[b] = (d_wl, d_sb)
        tag = "" if backends == ["torch"] else f" ({b})"
        print(
            f"agreement on the sample{tag}: max |dS_WL| = {d_wl:.2e}, max |dS_SBERT| = {d_sb:.2e}"
        )
    if args.json is not None:
        from s3kg_core.scoring.s3kg import S3KGConfig

        write_evidence(
            args.json,
            figures(
                encoder=args.encoder, threads=args.threads, n_sample=len(sample),
                n_all=len(pairs), t_ref=t_ref, t_sample=t_sample, t_all=t_all, starts=starts,
                agreement=agreement, modes=t_modes,
            ),
            title=f"KGScorer ({', '.join(['kgx', *others])}) against the authors' released "
            "procedure (bench_reference.py)",
            signature=S3KGConfig(mode="kgx").signature(torch_enc.name)
            + f" (reference: torch; KGScorer: {','.join(backends)})",
        )  # fmt: skip
        print(f"figures written to {args.json}")


if __name__ == "__main__":
    main()
