"""Benchmark the encoder backends: strings/s, agreement with torch, and int8 against fp32.

What is measured
----------------
For each pair set (``paws``: ``paws_wiki_400_KGs.csv``; ``globi``:
``semantic_kg_globi_400_KGs.csv``, both from ``s3kg_release/benchmarks_kgs/``) the first
``--pairs`` pairs with two parseable KGs are scored in hybrid mode by
:class:`~s3kg_core.scoring.s3kg.KGScorer` with torch first; the distinct strings its cache
encoded (triple sentences and labels) are the *string pool*.

1. Speed: ``--n`` strings drawn from the pool (seed 0) are encoded by every encoder x backend,
   ``--reps`` repetitions, the order of the encoders rotated each repetition, all in this
   process; strings/s from the min and the median time. Every runtime is held to ``--threads``
   intra-op threads (torch: ``torch.set_num_threads``; torch runs without its worker pool).
2. Agreement: each backend scores the same pairs; the largest |difference| of S3KG (alpha 0.5),
   S_WL and S_SBERT against torch, and the smallest cosine between its vectors and torch's on
   the whole pool.
3. int8 (``--int8``, not shipped): onnxruntime's ``quantize_dynamic`` of the same ONNX export,
   against onnx fp32: vector cosines, score differences, and how many label pairs of the scored
   pairs (every KG-1 label against every KG-2 label, entities and relations apart, after the
   hybrid mode's normalisation) fall on different sides of tau.
4. ``s3kg pairs score`` (``--cli-pairs N``): wall seconds of the command per backend on the
   first N pairs of each set, model load included, one run each, interleaved.
5. ``s3kg pairs score`` on every pair (``--cli-all``): the nine labelled sets of
   ``s3kg_release/benchmarks/`` written into one ``id,kg_1,kg_2`` file (3,281 pairs), scored by
   the command once per backend and by ``minilm-static`` (with ``--static``), ``--cli-reps``
   rounds, interleaved (the order reversed every other round), ``$OMP_NUM_THREADS`` =
   ``--threads``; wall seconds of the whole command (start-up and model load included), pairs/s
   from the best round, and the largest |S3KG| difference of each backend's output against
   torch's. ``--sets ""`` skips 1-4.

Usage::

    nice -n 10 python -m bench.speed.bench_encoders --n 400 --reps 5 --pairs 100 --int8
        --cli-pairs 100
    nice -n 15 python -m bench.speed.bench_encoders --sets "" --cli-all --static --cli-reps 2
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import load_average, md_table, print_load
from s3kg_core.config import default_data_dir
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.kgio import read_pairs_csv
from s3kg_core.normalize import normalize_triples
from s3kg_core.scoring.s3kg import KGScorer
from s3kg_core.tables import csv_safe_row

REPO = Path(__file__).resolve().parents[2]

SETS = {"paws": "paws_wiki_400_KGs.csv", "globi": "semantic_kg_globi_400_KGs.csv"}


def load_pairs(data_dir: Path, key: str, limit: int) -> list[tuple[Any, Any]]:
    rows = read_pairs_csv(data_dir / "s3kg_release" / "benchmarks_kgs" / SETS[key])
    pairs = [(r.kg_1, r.kg_2) for r in rows if r.status == "ok" and r.kg_1 and r.kg_2]
    return pairs[:limit]


def score(enc: Any, pairs: list[tuple[Any, Any]]) -> tuple[np.ndarray, EmbeddingCache]:
    cache = EmbeddingCache(enc)
    results = KGScorer(enc, mode="hybrid", cache=cache).score_pairs(pairs)
    return np.array([[r.s_wl, r.s_sbert, r.score] for r in results]), cache


def label_pairs(pairs: list[tuple[Any, Any]]) -> list[tuple[list[str], list[str]]]:
    """Per pair, entity labels and relation labels of both KGs (hybrid normalisation)."""
    out = []
    for kg_1, kg_2 in pairs:
        one, two = normalize_triples(kg_1), normalize_triples(kg_2)
        for pick in (lambda t: [t.head, t.tail], lambda t: [t.relation]):
            a = sorted({x for t in one for x in pick(t)})
            b = sorted({x for t in two for x in pick(t)})
            out.append((a, b))
    return out


def tau_flips(
    fp: Any, q: Any, groups: list[tuple[list[str], list[str]]], tau: float
) -> tuple[int, int]:
    flips = total = 0
    for a, b in groups:
        sa, sb = fp.encode(a) @ fp.encode(b).T, q.encode(a) @ q.encode(b).T
        flips += int(np.sum((sa >= tau) != (sb >= tau)))
        total += sa.size
    return flips, total


def quantized(folder: Path) -> Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = Path(tempfile.mkdtemp(prefix="s3kg-int8-"))
    for f in folder.iterdir():
        if f.name != "model.onnx":
            (out / f.name).write_bytes(f.read_bytes())
    quantize_dynamic(
        str(folder / "model.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8
    )
    return out


def time_cli(
    csv_path: Path, spec: str, backend: str | None, threads: int, keep: Path | None = None
) -> float:
    """Wall seconds of ``s3kg pairs score`` on ``csv_path``; its output is copied to ``keep``."""
    cmd = [sys.executable, "-m", "s3kg_core", "pairs", "score", str(csv_path), "--encoder", spec]
    if backend:
        cmd += ["--backend", backend]
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "S3KG_ENCODE_PROCESSES": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        subprocess.run(
            [*cmd, "--output", f"{tmp}/out.csv"], check=True, env=env, capture_output=True
        )
        wall = time.perf_counter() - start
        if keep is not None:
            keep.write_bytes(Path(tmp, "out.csv").read_bytes())
        return wall


def all_pairs_csv(data_dir: Path, dest: Path) -> int:
    """Write every row of the nine labelled sets as one ``id,kg_1,kg_2`` file; the row count."""
    n = 0
    with dest.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "kg_1", "kg_2"])  # cells through csv_safe_row, as every CSV
        for f in sorted((data_dir / "s3kg_release" / "benchmarks").glob("*.csv")):
            with f.open(newline="") as src:
                for row in csv.DictReader(src):
                    writer.writerow(
                        csv_safe_row([f"{f.stem}/{row['id']}", row["kg_1"], row["kg_2"]])
                    )
                    n += 1
    return n


def s3kg_column(path: Path) -> dict[str, float]:
    with path.open(newline="") as fh:
        return {r["id"]: float(r["s3kg"]) for r in csv.DictReader(fh)}


def cli_all(
    data_dir: Path, backends: list[str], static: bool, threads: int, reps: int
) -> dict[str, Any]:
    """``s3kg pairs score`` on all pairs per backend, interleaved; prints a table."""
    specs: dict[str, tuple[str, str | None]] = {b: ("minilm", b) for b in backends}
    if static:
        specs["minilm-static"] = ("minilm-static", None)
    names = list(specs)
    walls: dict[str, list[float]] = {b: [] for b in names}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "all_pairs.csv")
        n = all_pairs_csv(data_dir, source)
        outs = {b: Path(tmp, f"{b}.csv") for b in names}
        for rep in range(reps):
            for b in names if rep % 2 == 0 else names[::-1]:
                walls[b].append(time_cli(source, *specs[b], threads, keep=outs[b]))
                print(f"  round {rep + 1} {b}: {walls[b][-1]:.1f} s", flush=True)
        scores = {b: s3kg_column(p) for b, p in outs.items()}
    base = "torch" if "torch" in names else names[0]
    best = {b: min(w) for b, w in walls.items()}
    print(
        f"\ns3kg pairs score, all {n} pairs, MiniLM (hybrid), {threads} thread(s), "
        f"start-up and load included, best of {reps} interleaved rounds; "
        f"load average {load_average()}"
    )
    head = ["encoder / backend", "seconds (best)", "rounds", "pairs/s", "vs torch", "max S3KG diff"]
    body = []
    table: dict[str, Any] = {"pairs": n, "threads": threads, "rounds": reps, "runs": {}}
    for b in names:
        diff = max(abs(scores[b][k] - scores[base][k]) for k in scores[base])
        same_space = b != "minilm-static"
        cell = f"{diff:.1e}" if same_space else "(other space)"
        rounds = " / ".join(f"{w:.1f}" for w in walls[b])
        body.append(
            [
                b,
                f"{best[b]:.1f}",
                rounds,
                f"{n / best[b]:.1f}",
                f"{best[base] / best[b]:.2f}x",
                cell,
            ]
        )
        table["runs"][b] = {
            "seconds": walls[b],
            "pairs_per_s_best": n / best[b],
            "max_abs_diff_s3kg_vs_torch": diff if same_space else None,
        }
    print(md_table(head, body))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--sets", default="paws,globi")
    parser.add_argument("--encoders", default="minilm,mpnet")
    parser.add_argument("--backends", default="torch,onnx,openvino")
    parser.add_argument("--n", type=int, default=400, help="strings per timed repetition")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=100, help="pairs scored per set")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--static", action="store_true", help="also time minilm-static")
    parser.add_argument("--int8", action="store_true", help="measure int8 against fp32")
    parser.add_argument("--cli-pairs", type=int, default=0)
    parser.add_argument("--cli-all", action="store_true", help="pairs score on all pairs")
    parser.add_argument("--cli-reps", type=int, default=2, help="rounds of --cli-all")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data_dir = args.data_dir or default_data_dir()

    import torch

    torch.set_num_threads(args.threads)
    print(f"threads {args.threads}; cpu count {os.cpu_count()}")
    print_load("before")
    report: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "sets": {}}
    backends = args.backends.split(",")
    for key in [k for k in args.sets.split(",") if k]:
        pairs = load_pairs(data_dir, key, args.pairs)
        for model in args.encoders.split(","):
            encs = {
                b: load_encoder(model, backend=b, processes=1, threads=args.threads)
                for b in backends
            }
            ref_scores, ref_cache = score(encs["torch"], pairs)
            pool = [t for t, _ in ref_cache.items()]
            ref_vecs = ref_cache.matrix
            rng = np.random.default_rng(0)
            sample = [pool[i] for i in rng.choice(len(pool), min(args.n, len(pool)), replace=False)]
            timed = dict(encs)
            if args.static and model == "minilm":
                timed["static"] = load_encoder("minilm-static")
            agree: dict[str, Any] = {}
            for b, enc in encs.items():
                if b == "torch":
                    continue
                scores, _ = score(enc, pairs)
                cos = np.sum(enc.encode(pool) * ref_vecs, axis=1)
                diff = np.abs(scores - ref_scores).max(axis=0)
                agree[b] = {
                    "name": enc.name,
                    "max_abs_diff_s_wl": float(diff[0]),
                    "max_abs_diff_s_sbert": float(diff[1]),
                    "max_abs_diff_s3kg": float(diff[2]),
                    "min_cosine": float(cos.min()),
                }
            if args.int8 and "onnx" in encs:
                from s3kg_core.encoders.runtime import RuntimeEncoder

                fp = encs["onnx"]
                q = RuntimeEncoder(
                    quantized(fp.folder), fp.name + "-int8", "onnx", threads=args.threads
                ).load()
                timed["onnx-int8"] = q
                q_scores, _ = score(q, pairs)
                fp_scores, _ = score(fp, pairs)
                cos = np.sum(q.encode(pool) * fp.encode(pool), axis=1)
                flips, total = tau_flips(fp, q, label_pairs(pairs), 0.65)
                agree["onnx-int8 vs onnx"] = {
                    "max_abs_diff_s3kg": float(np.abs(q_scores - fp_scores)[:, 2].max()),
                    "mean_abs_diff_s3kg": float(np.abs(q_scores - fp_scores)[:, 2].mean()),
                    "min_cosine": float(cos.min()),
                    "mean_cosine": float(cos.mean()),
                    "label_pairs_crossing_tau": flips,
                    "label_pairs": total,
                }
            for enc in timed.values():
                enc.encode(sample[:16])  # warm-up: first-call set-up is not timed
            times: dict[str, list[float]] = {b: [] for b in timed}
            order = list(timed)
            for rep in range(args.reps):
                for b in order[rep % len(order) :] + order[: rep % len(order)]:
                    start = time.perf_counter()
                    timed[b].encode(sample)
                    times[b].append(time.perf_counter() - start)
            speed = {
                b: {
                    "strings_per_s_best": len(sample) / min(t),
                    "strings_per_s_median": len(sample) / statistics.median(t),
                }
                for b, t in times.items()
            }
            base = speed["torch"]["strings_per_s_median"]
            print(
                f"\n{key} / {model}: {len(pairs)} pairs, pool {len(pool)} strings, n {len(sample)}"
            )
            for b, s in speed.items():
                print(
                    f"  {b:10s} {s['strings_per_s_best']:8.0f} best "
                    f"{s['strings_per_s_median']:8.0f} median strings/s  "
                    f"x{s['strings_per_s_median'] / base:.2f} (median)"
                )
            for b, a in agree.items():
                print(
                    f"  {b}: "
                    + ", ".join(
                        f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in a.items()
                    )
                )
            report["sets"][f"{key}/{model}"] = {
                "pairs": len(pairs),
                "pool": len(pool),
                "n": len(sample),
                "speed": speed,
                "agree": agree,
            }
        if args.cli_pairs:
            source = data_dir / "s3kg_release" / "benchmarks_kgs" / SETS[key]
            with source.open(newline="") as src:
                rows = list(csv.DictReader(src))
            with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="") as fh:
                writer = csv.DictWriter(fh, ["id", "kg_1", "kg_2"], extrasaction="ignore")
                writer.writeheader()
                writer.writerows(rows[: args.cli_pairs])
            specs = {b: ("minilm", b) for b in backends}
            if args.static:
                specs["static"] = ("minilm-static", None)
            walls: dict[str, list[float]] = {b: [] for b in specs}
            names = list(specs)
            for rep in range(2):  # interleaved, the order reversed the second time
                for b in names if rep == 0 else names[::-1]:
                    walls[b].append(time_cli(Path(fh.name), *specs[b], args.threads))
            best = {b: min(w) for b, w in walls.items()}
            print(f"  s3kg pairs score, {args.cli_pairs} pairs, minilm, load included, best of 2:")
            for b, w in best.items():
                ratio = best["torch"] / w
                print(f"    {b:10s} {w:6.1f} s  {args.cli_pairs / w:6.1f} pairs/s  x{ratio:.2f}")
            report["sets"][f"{key}/cli"] = {"pairs": args.cli_pairs, "seconds": walls}
    if args.cli_all:
        report["cli_all"] = cli_all(data_dir, backends, args.static, args.threads, args.cli_reps)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
