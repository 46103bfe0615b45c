"""Time and peak memory of inputs that used to blow up: TAU on long chains, huge texts and labels.

What is measured (issue 28, item 5)
-----------------------------------
Each figure comes from a fresh child process that imports ``s3kg_core`` from one checkout
(``--checkouts``: the code before and after, e.g. ``/work/main`` and this worktree), so both
run the same inputs side by side, interleaved (checkout A, B, A, B, ...). The parent samples the
child's resident memory every 50 ms and kills it past ``--cap-gb`` or ``--timeout`` (the figure
then says "killed"); the peak is the larger of that sample and the child's own ``ru_maxrss``.

- ``tau``: :meth:`TripletAnalyzer.analyse` of one answer against its gold KG, both chains of N
  triples (N from ``--sizes``, default 2,000 / 8,000 / 20,000; past 10,000 the limit of
  :mod:`s3kg_core.limits` answers ``oversized_gold`` at once, ``--no-limits`` lifts it to time
  TAU itself) over labels such as ``station 17``, whose triple sentences are all alike (cosine
  above 0.76 for most pairs, the worst case for a dense matrix). The answer chain changes every
  second triple (a relation, a tail, a flipped edge), so both of TAU's stages have work. Every
  string is embedded once with the packaged MiniLM into ``bench/out/tau_cache_N.npz``
  beforehand, so the child measures TAU alone (``time``: the call; ``peak``: the process's peak
  RSS, and in brackets its RSS just before the call, with the vectors and lemminflect loaded).
- ``extract``: the offline extractor on two 1 MB contexts (Wikipedia lead paragraphs from the
  shared data, joined).
- ``pairs``: ``s3kg pairs score`` on a file of two rows, one with a 5 MB label.

Usage::

    python -m bench.speed.bench_limits --checkouts /work/main,. --parts tau,extract,pairs
    python -m bench.speed.bench_limits --checkouts . --sizes 2000 --parts tau   # a quick look
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out"
NO_LIMITS = False  # --no-limits: lift s3kg_core.limits.MAX_TRIPLES in the children


# -- inputs --------------------------------------------------------------------------------------


def chains(n: int) -> tuple[list[list[str]], list[list[str]]]:
    """A gold chain of ``n`` triples and an answer chain that differs in every second one."""
    gold = [[f"station {i}", "connects to", f"station {i + 1}"] for i in range(n)]
    answer = []
    for i, (head, rel, tail) in enumerate(gold):
        kind = i % 4
        if kind == 1:
            answer.append([head, "is far from", tail])  # relation mismatch
        elif kind == 2:
            answer.append([head, rel, f"depot {i + 1}"])  # entity mismatch
        elif kind == 3:
            answer.append([tail, rel, head])  # swapped
        else:
            answer.append([head, rel, tail])
    return gold, answer


def tau_cache_path(n: int) -> Path:
    return OUT / f"tau_cache_{n}.npz"


def prepare_tau(n: int) -> Path:
    """Embed every string TAU needs for the chains of ``n`` (once; kept in bench/out)."""
    path = tau_cache_path(n)
    if path.exists():
        return path
    from s3kg_core.encoders.cache import EmbeddingCache
    from s3kg_core.encoders.registry import load_encoder
    from s3kg_core.kg import as_triples
    from s3kg_core.normalize import normalize_triples

    gold, answer = chains(n)
    cache = EmbeddingCache(load_encoder("minilm"))
    for kg in (gold, answer):
        norm = normalize_triples(as_triples(kg), lemmatize=True)
        cache.add(s for t in norm for s in (t.sentence(), t.head, t.relation, t.tail))
    return cache.save(path)


def prepare_contexts(data_dir: Path) -> Path:
    """Two 1 MB contexts of Wikipedia lead paragraphs (JSON list), kept in bench/out."""
    path = OUT / "contexts_1mb.json"
    if path.exists():
        return path
    paragraphs = []
    with (data_dir / "wikipedia_paragraphs" / "wikitext_lead_paragraphs.jsonl").open() as fh:
        for line in fh:
            paragraphs.extend(json.loads(line).get("lead_paragraphs_raw", []))
    texts = []
    for start in (0, len(paragraphs) // 2):
        parts: list[str] = []
        size = 0
        for p in paragraphs[start:] + paragraphs[:start]:
            parts.append(p)
            size += len(p) + 2
            if size >= 1_000_000:
                break
        texts.append("\n\n".join(parts)[:1_000_000])
    path.write_text(json.dumps(texts), encoding="utf-8")
    return path


def prepare_pairs() -> Path:
    path = OUT / "pairs_5mb_label.csv"
    if path.exists():
        return path
    kg = json.dumps([["Griese", "was_injured_in", "season"], ["Griese", "relieved_by", "Grossman"]])
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "kg_1", "kg_2"])
        writer.writerow(["huge", kg, json.dumps([["x" * 5_000_000, "r", "b"]])])
        writer.writerow(["small", kg, kg])
    return path


# -- children ------------------------------------------------------------------------------------


def _rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # kB on Linux


def child_tau(n: int) -> dict[str, Any]:
    import numpy as np

    if os.environ.get("BENCH_NO_LIMITS"):  # measure TAU itself past the 10,000-triple limit
        try:
            import s3kg_core.limits as limits
        except ImportError:  # code from before the limits: nothing to lift
            pass
        else:
            limits.MAX_TRIPLES = 10**9

    from s3kg_core.encoders.cache import EmbeddingCache
    from s3kg_core.scoring.tau import TripletAnalyzer

    meta = json.loads(str(np.load(tau_cache_path(n), allow_pickle=False)["meta"]))

    class Stored:
        """The vectors are all in the cache: an encoder that is never called."""

        name = meta["encoder"]

        def encode(self, texts: Any) -> Any:
            raise RuntimeError(f"{len(texts)} strings missing from the cache")

    enc = Stored()
    cache = EmbeddingCache(enc, tau_cache_path(n))
    analyzer = TripletAnalyzer(enc, cache=cache)
    gold, answer = chains(n)
    from s3kg_core.kg import as_triples
    from s3kg_core.normalize import normalize_triples

    normalize_triples(as_triples(gold[:2]), lemmatize=True)  # lemminflect loaded before the clock
    before = _rss_gb()
    start = time.perf_counter()
    result = analyzer.analyse(gold, answer)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "rss_before_gb": before,
        "counts": result.counts(),
        "status": getattr(result, "status", "ok"),
    }


def child_extract(path: Path) -> dict[str, Any]:
    from s3kg_core.extract.offline import OfflineExtractor

    texts = json.loads(path.read_text(encoding="utf-8"))
    ex = OfflineExtractor()
    ex.extract_text("Aspirin reduces fever.")  # the model loaded before the clock
    before = _rss_gb()
    start = time.perf_counter()
    kgs = ex.extract_texts(texts)
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "rss_before_gb": before,
        "triples": [len(k.triples) for k in kgs],
        "truncated": [k.truncated for k in kgs],
    }


def child_pairs(path: Path) -> dict[str, Any]:
    from s3kg_core.cli import main

    out = OUT / f"pairs_out_{os.getpid()}.csv"
    start = time.perf_counter()
    try:
        main(["pairs", "score", str(path), "-o", str(out)])
    except SystemExit as exc:
        if exc.code:
            raise
    seconds = time.perf_counter() - start
    with out.open(newline="", encoding="utf-8") as fh:
        statuses = [r["status"] for r in csv.DictReader(fh)]
    out.unlink()
    return {"seconds": seconds, "statuses": statuses}


# -- the parent ----------------------------------------------------------------------------------


def run_child(checkout: Path, args: list[str], cap_gb: float, timeout: float) -> dict[str, Any]:
    """Run this script's child mode under ``checkout``; its JSON, or how it was stopped."""
    import psutil

    env = {
        **os.environ,
        **({"BENCH_NO_LIMITS": "1"} if NO_LIMITS else {}),
        "PYTHONPATH": str(checkout),
        "S3KG_ENCODE_PROCESSES": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    result_file = OUT / f"child_{os.getpid()}_{time.monotonic_ns()}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", *args, str(result_file)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=checkout, stdout=subprocess.DEVNULL)
    watched = psutil.Process(proc.pid)
    peak = 0.0
    stopped = ""
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss / 1e9)
        except psutil.NoSuchProcess:
            break
        elapsed = time.perf_counter() - start
        if peak > cap_gb or elapsed > timeout:
            stopped = f"killed at {peak:.2f} GB after {elapsed:.0f} s"
            proc.kill()
            proc.wait()
            break
        time.sleep(0.05)
    wall = time.perf_counter() - start
    if stopped:
        return {"stopped": stopped, "peak_gb": peak, "wall": wall}
    if proc.returncode != 0 or not result_file.exists():
        return {"stopped": f"exit status {proc.returncode}", "peak_gb": peak, "wall": wall}
    data: dict[str, Any] = json.loads(result_file.read_text(encoding="utf-8"))
    result_file.unlink()
    data["peak_gb"] = max(peak, data.pop("maxrss_gb"))
    data["wall"] = wall
    return data


def describe(data: dict[str, Any]) -> str:
    if "stopped" in data:
        return data["stopped"]
    before = f" (before the call {data['rss_before_gb']:.2f})" if "rss_before_gb" in data else ""
    return f"{data['seconds']:.1f} s, peak {data['peak_gb']:.2f} GB{before}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--checkouts", default=".", help="Comma-separated repository folders.")
    parser.add_argument("--parts", default="tau,extract,pairs")
    parser.add_argument("--sizes", default="2000,8000,20000", help="Chain lengths for tau.")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--cap-gb", type=float, default=6.0, help="Kill a child past this RSS.")
    parser.add_argument("--timeout", type=float, default=300.0, help="Kill a child after this.")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder holding the shared datasets (default: $S3KG_DATA_DIR, else ../shared/data)",
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--no-limits",
        action="store_true",
        help="Lift the 10,000-triple limit of s3kg_core.limits in the children (where it exists) "
        "to time TAU itself on 20,000 triples; without it such a KG gets status oversized_*.",
    )
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if args.child:
        part, value, result_file = args.child
        if part == "tau":
            data = child_tau(int(value))
        elif part == "extract":
            data = child_extract(Path(value))
        else:
            data = child_pairs(Path(value))
        data["maxrss_gb"] = _rss_gb()
        Path(result_file).write_text(json.dumps(data), encoding="utf-8")
        return

    # Not at import: the child runs this file under another checkout (PYTHONPATH), whose
    # bench/ and s3kg_core may predate these modules.
    from bench._common import print_load
    from s3kg_core.config import default_data_dir

    global NO_LIMITS
    NO_LIMITS = args.no_limits
    checkouts = [Path(c).resolve() for c in args.checkouts.split(",")]
    parts = args.parts.split(",")
    jobs: list[tuple[str, str]] = []
    if "tau" in parts:
        for n in (int(s) for s in args.sizes.split(",")):
            prepare_tau(n)
            jobs.append((f"tau, chains of {n:,} triples", f"tau {n}"))
    if "extract" in parts:
        contexts = prepare_contexts(args.data_dir or default_data_dir())
        jobs.append(("offline extraction, two 1 MB contexts", f"extract {contexts}"))
    if "pairs" in parts:
        jobs.append(("pairs score, one 5 MB label", f"pairs {prepare_pairs()}"))
    print_load("before")
    figures: list[dict[str, Any]] = []
    for title, job in jobs:
        for repeat in range(args.repeats):
            for checkout in checkouts:  # interleaved: A, B, A, B
                data = run_child(checkout, job.split(" ", 1), args.cap_gb, args.timeout)
                data.update(job=title, checkout=str(checkout), repeat=repeat)
                figures.append(data)
                keys = ("counts", "status", "triples", "truncated", "statuses")
                extra = {k: data[k] for k in keys if k in data}
                print(f"{title:<38} {checkout.name:<7} {describe(data):<50} {extra}", flush=True)
    print_load("after")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
