"""`s3kg check` and `s3kg export` on large runs: seconds, and the export's sizes (issue 32).

Builds a database of two runs of N answers each (KGs of three to six triples, stored score
components drawn at random, no encoder: the bench measures the gate and the export, not
scoring), then times, each ``--repeats`` times:

- ``paired_bootstrap`` alone on N differences (9,999 resamples, BCa), interleaved with scipy's
  two-sample ``paired=True`` form of the same statistic (same resamples, same interval), and
  the ratio;
- ``check_runs`` end to end (three bootstraps, the unscorable count, the facts);
- ``export_frame`` with every group, and the writing of CSV, Parquet and JSON (file sizes);
- ``read_export`` of each file.

    python -m bench.speed.bench_check [--answers 2000,10000] [--repeats 2]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from s3kg_core.analysis.check import CheckSettings, check_runs
from s3kg_core.export.schema import INCLUDES, read_export
from s3kg_core.export.writer import export_frame, write_export
from s3kg_core.kg import Triple
from s3kg_core.stats import paired_bootstrap
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord, ScoreRecord
from s3kg_core.store.store import Store

WORDS = [f"entity {i}" for i in range(200)]
RELATIONS = [f"relation {i}" for i in range(30)]


def build(path: Path, n: int, signature: str = "sig") -> Store:
    """Two runs of ``n`` answers, ``baseline`` and ``candidate``, scored under ``signature``."""
    rng = random.Random(n)
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "bench")
        ids = store.upsert_items(
            con,
            ds,
            [
                ItemRecord(f"{i:06d}", f"Question {i}?", f"Context {i}. " * 20, f"Gold {i}.")
                for i in range(n)
            ],
        )
        for name, shift in (("baseline", 0.0), ("candidate", -0.01)):
            run = store.ensure_run(con, ds, f"org/{name}", 0.0, "offline", name=name)
            store.put_answers(
                con,
                run,
                [
                    AnswerRecord(item, f"Answer {i} of {name}.", latency_s=rng.random(),
                                 prompt_tokens=rng.randint(50, 500), completion_tokens=40)
                    for i, item in enumerate(ids.values())
                ],
            )  # fmt: skip
            kgs, scores = [], []
            for item in ids.values():
                for source in ("gold", "answer", "context"):
                    triples = tuple(
                        Triple(rng.choice(WORDS), rng.choice(RELATIONS), rng.choice(WORDS))
                        for _ in range(rng.randint(3, 6))
                    )
                    kgs.append(KGRecord(run, item, source, tuple(dict.fromkeys(triples))))
                base = rng.random()
                parts = [min(1.0, max(0.0, base + shift + rng.gauss(0, 0.05))) for _ in range(4)]
                scores.append(ScoreRecord(run, item, signature, "hybrid", 0.5, parts[0], parts[1],
                                          "ok", parts[2], parts[3], "ok"))  # fmt: skip
            store.put_kgs(con, kgs)
            store.put_scores(con, scores)
    return store


def _difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def two_sample(new: np.ndarray, old: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    result = stats.bootstrap(
        (new, old), _difference, paired=True, vectorized=True, n_resamples=9999,
        batch=max(1, 2_000_000 // new.size), method="BCa", rng=np.random.default_rng(0),
    )  # fmt: skip
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def timed(label: str, repeats: int, func) -> object:
    seconds = []
    result = None
    for _ in range(repeats):
        started = time.perf_counter()
        result = func()
        seconds.append(time.perf_counter() - started)
    print(f"  {label:<34} {statistics.median(seconds):8.2f} s (median of {repeats})")
    return result


def bench_one(n: int, repeats: int, folder: Path) -> None:
    started = time.perf_counter()
    store = build(folder / "bench.duckdb", n)
    print(f"{n} answers per run (database built in {time.perf_counter() - started:.1f} s)")
    rng = np.random.default_rng(0)
    old = rng.random(n)
    new = np.clip(old - 0.01 + rng.normal(0, 0.05, n), 0, 1)
    one, two = [], []
    for _ in range(repeats):  # interleaved: the machine's load hits both alike
        started = time.perf_counter()
        ours = paired_bootstrap(new, old)
        one.append(time.perf_counter() - started)
        started = time.perf_counter()
        theirs = two_sample(new, old)
        two.append(time.perf_counter() - started)
    same = np.allclose((ours.low, ours.high), theirs, rtol=0, atol=1e-12)
    ratio = statistics.median(two) / statistics.median(one)
    print(
        f"  {'paired_bootstrap (9,999, BCa)':<34} {statistics.median(one):8.2f} s; scipy's "
        f"paired=True form {statistics.median(two):.2f} s (x{ratio:.2f}); same interval: {same}"
    )
    result = timed(
        "check_runs (3 bootstraps)",
        repeats,
        lambda: check_runs(store, "candidate", "baseline", settings=CheckSettings()),
    )
    print(f"    verdict: {result.verdict()}")  # type: ignore[attr-defined]
    frame = timed(
        "export_frame (all groups)", repeats, lambda: export_frame(store, include=INCLUDES)
    )
    for fmt in ("csv", "parquet", "json"):
        out = folder / f"export.{fmt}"
        timed(f"write {fmt}", repeats, lambda fmt=fmt, out=out: write_export(frame, out, fmt))
        size = out.stat().st_size / 1e6
        timed(f"read_export {fmt} ({size:.1f} MB)", repeats, lambda out=out: read_export(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", default="2000,10000")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for n in (int(x) for x in args.answers.split(",")):
        with tempfile.TemporaryDirectory() as folder:
            bench_one(n, args.repeats, Path(folder))


if __name__ == "__main__":
    main()
