"""Benchmark S3KG scoring: KGScorer (batched, each distinct string encoded once) vs a naive loop.

What is measured
----------------
For each pair set (``paws``: the 400 pairs of ``paws_wiki_400.csv``; ``all``: every
``s3kg_release/benchmarks/*.csv`` together, duplicates across files included, because
``semantic_kg_combined_400`` repeats pairs of the other ``semantic_kg_*`` files) and each encoder
(``minilm``, ``mpnet``), two methods are timed, each in its own child process so that peak memory
figures are not mixed:

``kgscorer``
    One :class:`s3kg_core.scoring.s3kg.KGScorer` scores every pair with one ``score_pairs`` call.
    Time split from ``KGScorer.stats``: ``seconds_encoding`` (inside the encoder, measured by the
    scorer's :class:`~s3kg_core.encoders.cache.EmbeddingCache`) and ``seconds_other`` (everything
    else: normalisation, nearest-triple picks, soft alignment, WL, bookkeeping).
    Afterwards the *embedding-bound limit* is measured: the distinct strings the scorer encoded
    (its cache's texts) are encoded again in one ``encoder.encode`` call; ``KGScorer / limit``
    says how close the scorer gets to the cost of encoding what it needed, and nothing else.
``naive``
    ``s3kg_core.scoring.s3kg.s3kg_score`` called pair by pair; every call builds its own scorer and
    cache, so it encodes that pair's strings itself. Its encoding time is measured by a thin
    timing wrapper around the same encoder object (the :class:`~s3kg_core.encoders.base.Encoder`
    protocol), "other" is the rest. With ``--naive-limit`` the loop runs on a stratified random
    subset (per file, proportional, seed 0) and its time is extrapolated per pair to the whole
    set; the output says so wherever that happens.

Both methods get the same encoder object from ``load_encoder`` (lru-cached) and pass it to the
library through the small timing wrapper, so both see identical call paths. Before the clock
starts, every child loads the encoder, runs it once on a few strings (model load and first-call
set-up are excluded) and loads lemminflect's tables (a one-off 0.3 s). Pair files are read with
``s3kg_core.kgio.read_pairs_csv`` before timing; rows whose status is not ``ok`` are skipped and
counted.

Figures per configuration: pairs/s, wall seconds split into encoding and other, the non-embedding
share (target: under 20 %), process CPU seconds (user + sys, all threads), peak RSS of the child
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``; also the RSS just after warm-up), and how busy the
machine was with *other* processes while the clock ran (from ``/proc/stat``: wall-clock figures on
a shared machine are only as good as that number). Summary per set and encoder: KGScorer vs naive
speed-up (naive seconds per pair x pairs / KGScorer seconds; target >= 5x on all pairs), also on
CPU seconds, and the largest score difference between the two methods on the pairs both scored.

Torch threads are left at the library's default (nothing here calls ``torch.set_num_threads``);
the value in effect is printed.

Usage::

    python -m bench.speed.bench_scoring                              # everything, prints a table
    python -m bench.speed.bench_scoring --sets paws --encoders minilm
    python -m bench.speed.bench_scoring --naive-limit mpnet=600 --json bench/out/bench_scoring.json
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import random
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import add_data_dir, text_table

REPO = Path(__file__).resolve().parents[2]
BENCH_SUBDIR = Path("s3kg_release") / "benchmarks"
SETS = ("paws", "all")
ENCODERS = ("minilm", "mpnet")
METHODS = ("kgscorer", "naive")
RESULT_MARK = "@@BENCH_RESULT "
NON_EMBEDDING_TARGET = 0.20
SPEEDUP_TARGET = 5.0
WARMUP_TEXTS = [
    "warm up the encoder",
    "a short label",
    "a somewhat longer sentence that pads the batch to a realistic length of tokens",
]


# -- data ------------------------------------------------------------------------------------------


def set_files(data_dir: Path, name: str) -> list[Path]:
    root = data_dir / BENCH_SUBDIR
    if not root.is_dir():
        raise SystemExit(
            f"error: {root} not found; pass --data-dir (the folder holding s3kg_release/) "
            "or set S3KG_DATA_DIR"
        )
    if name == "paws":
        files = [root / "paws_wiki_400.csv"]
    elif name == "all":
        files = [Path(p) for p in sorted(glob.glob(str(root / "*.csv")))]
    else:
        raise SystemExit(f"error: unknown set {name!r}; use one of {', '.join(SETS)}")
    missing = [str(f) for f in files if not f.is_file()]
    if missing or not files:
        raise SystemExit(f"error: pair file(s) missing: {', '.join(missing) or root}")
    return files


@dataclass
class LoadedPairs:
    pairs: list[tuple[list[Any], list[Any]]]
    files: list[str]  # file name of each pair
    rows: int
    skipped: dict[str, int]
    per_file: dict[str, int]


def load_pairs(files: Sequence[Path]) -> LoadedPairs:
    from s3kg_core.kgio import read_pairs_csv

    pairs: list[tuple[list[Any], list[Any]]] = []
    names: list[str] = []
    skipped: Counter[str] = Counter()
    per_file: dict[str, int] = {}
    rows = 0
    for path in files:
        kept = 0
        for row in read_pairs_csv(path):
            rows += 1
            if row.status != "ok":
                skipped[row.status] += 1
                continue
            pairs.append((row.kg_1, row.kg_2))
            names.append(path.name)
            kept += 1
        per_file[path.name] = kept
    return LoadedPairs(pairs, names, rows, dict(skipped), per_file)


def stratified_subset(files: Sequence[str], limit: int, seed: int = 0) -> list[int]:
    """Indices of about ``limit`` pairs, drawn per file in proportion to its size."""
    by_file: dict[str, list[int]] = {}
    for i, name in enumerate(files):
        by_file.setdefault(name, []).append(i)
    rng = random.Random(seed)
    chosen: list[int] = []
    for name in sorted(by_file):
        idx = by_file[name]
        k = max(1, round(limit * len(idx) / len(files)))
        chosen.extend(rng.sample(idx, min(k, len(idx))))
    return sorted(chosen)


# -- measurement helpers (child) -------------------------------------------------------------------


class TimedEncoder:
    """Delegates to an encoder and adds up the wall and CPU seconds spent in ``encode``.

    Every other attribute (``prepare``, ``close``, ``pool_min_texts``...) is the inner encoder's,
    so the library treats the wrapper exactly like the encoder it wraps (worker pool included).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.calls = 0
        self.texts = 0
        self.largest_job = 0  # largest job announced through prepare() or sent to encode()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def prepare(self, n_texts: int) -> None:
        self.largest_job = max(self.largest_job, n_texts)
        inner = getattr(self.inner, "prepare", None)
        if inner is not None:
            inner(n_texts)

    def encode(self, texts: Sequence[str]) -> Any:
        self.largest_job = max(self.largest_job, len(texts))
        wall, cpu = time.perf_counter(), time.process_time()  # cheap: called per pair
        try:
            return self.inner.encode(texts)
        finally:
            self.seconds += time.perf_counter() - wall
            self.cpu_seconds += time.process_time() - cpu  # this process only
            self.calls += 1
            self.texts += len(texts)


_PAGE_KIB = (os.sysconf("SC_PAGE_SIZE") // 1024) if hasattr(os, "sysconf") else 4
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_stat(pid: int) -> list[str] | None:
    """Fields of ``/proc/PID/stat`` after the command name (field 3 onwards), or None."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_tree(root: int | None = None) -> list[int]:
    """``root`` (default: this process) and all its descendants, from ``/proc``."""
    root = os.getpid() if root is None else root
    children: dict[int, list[int]] = {}
    try:
        entries = [int(d) for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return [root]
    for pid in entries:
        stat = _proc_stat(pid)
        if stat is not None:
            children.setdefault(int(stat[1]), []).append(pid)
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process and its live descendants (worker pools)."""
    if not os.path.isdir("/proc"):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime
    total = 0
    for pid in process_tree():
        stat = _proc_stat(pid)
        if stat is not None:
            total += int(stat[11]) + int(stat[12])  # utime, stime
    return total / _TICKS


def tree_rss_kib() -> int:
    """Resident memory of this process and its live descendants, summed (KiB)."""
    if not os.path.isdir("/proc"):
        return _peak_rss_kib()
    total = 0
    for pid in process_tree():
        stat = _proc_stat(pid)
        if stat is not None:
            total += int(stat[21]) * _PAGE_KIB  # rss, in pages
    return total


class PeakTreeRSS:
    """Samples :func:`tree_rss_kib` in a thread every ``interval`` s and keeps the maximum."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self.peak_kib = tree_rss_kib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_kib = max(self.peak_kib, tree_rss_kib())

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        self.peak_kib = max(self.peak_kib, tree_rss_kib())
        return self.peak_kib


def _peak_rss_kib() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak  # bytes on macOS, KiB on Linux


class MachineLoad:
    """CPU time used by other processes while a measurement ran (Linux ``/proc``; else None).

    "Other" excludes this process and its descendants (the encoder's worker pool).
    """

    def __init__(self) -> None:
        self._start = self._sample()

    @staticmethod
    def _sample() -> tuple[int, int, float] | None:
        try:
            with open("/proc/stat", encoding="ascii") as fh:
                fields = [int(x) for x in fh.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        total = sum(fields[:8])  # user nice system idle iowait irq softirq steal
        busy = total - fields[3] - fields[4]
        return total, busy, tree_cpu_seconds() * _TICKS

    def others_share(self) -> float | None:
        """Share of the machine's CPU capacity used by other processes since creation."""
        end = self._sample()
        if self._start is None or end is None or end[0] <= self._start[0]:
            return None
        total = end[0] - self._start[0]
        others = (end[1] - self._start[1]) - (end[2] - self._start[2])
        return max(0.0, others / total)


def would_start_pool(encoder: Any, pairs: Sequence[tuple[list[Any], list[Any]]]) -> bool:
    """Whether KGScorer's first encoding job on ``pairs`` is large enough to start the pool.

    Counts distinct raw triple sentences, an upper bound of the normalised ones the scorer
    sends first; the run records the jobs it really announced, so a wrong guess shows.
    """
    threshold = getattr(encoder, "pool_min_texts", None)
    if threshold is None or getattr(encoder, "processes", 1) < 2:
        return False
    sentences = {" ".join((t.head, t.relation, t.tail)) for p in pairs for kg in p for t in kg}
    return len(sentences) >= threshold


# -- one configuration (child process) ------------------------------------------------------------


def run_one(cfg: dict[str, Any]) -> dict[str, Any]:
    data_dir = Path(cfg["data_dir"])
    loaded = load_pairs(set_files(data_dir, cfg["set"]))
    n_total = len(loaded.pairs)
    indices = list(range(n_total))
    limit = int(cfg.get("naive_limit") or 0)
    if cfg["method"] == "naive" and 0 < limit < n_total:
        indices = stratified_subset(loaded.files, limit)
    timed_pairs = [loaded.pairs[i] for i in indices]

    warm = time.perf_counter()
    import torch
    from lemminflect import getAllLemmas

    from s3kg_core.encoders.registry import load_encoder
    from s3kg_core.scoring.s3kg import KGScorer, s3kg_score

    encoder = load_encoder(cfg["encoder"])
    encoder.encode(WARMUP_TEXTS)
    getAllLemmas("tables")  # loads lemminflect's dictionaries once
    # The encoder's CPU worker pool (one single-threaded process per core) starts on jobs of
    # pool_min_texts or more, and each worker loads the model: model loading, so it happens
    # here, before the clock, for the runs where KGScorer would start it.
    pool_prestarted = False
    if cfg["method"] == "kgscorer" and would_start_pool(encoder, timed_pairs):
        encoder.prepare(encoder.pool_min_texts)
        encoder.encode([f"warm-up sentence number {i}" for i in range(512)])
        pool_prestarted = True
    warmup_s = time.perf_counter() - warm
    rss_after_warmup = tree_rss_kib()
    timed = TimedEncoder(encoder)

    peak = PeakTreeRSS()
    load = MachineLoad()
    cpu0 = tree_cpu_seconds()
    wall0 = time.perf_counter()
    out: dict[str, Any] = {}
    if cfg["method"] == "kgscorer":
        scorer = KGScorer(timed)
        results = scorer.score_pairs(timed_pairs)
        wall = time.perf_counter() - wall0
        cpu = tree_cpu_seconds() - cpu0
        others = load.others_share()
        stats = scorer.stats
        out.update(
            seconds_total=stats.seconds_total,
            seconds_encoding=stats.seconds_encoding,
            seconds_other=stats.seconds_other,
            outer_wall=wall,
            distinct_strings=len(scorer.cache),
            encode_calls=scorer.cache.stats.calls,
        )
        # Embedding-bound limit: the same distinct strings, one encode call (optionally a
        # uniform random sample of them, its time scaled up per string).
        texts = [text for text, _ in scorer.cache.items()]
        sample = int(cfg.get("limit_sample") or 0)
        encoded = random.Random(0).sample(texts, sample) if 0 < sample < len(texts) else texts
        lim_cpu0 = tree_cpu_seconds()
        lim0 = time.perf_counter()
        encoder.encode(encoded)
        scale = len(texts) / len(encoded) if encoded else 1.0
        out.update(
            limit_seconds=(time.perf_counter() - lim0) * scale,
            limit_cpu_seconds=(tree_cpu_seconds() - lim_cpu0) * scale,
            limit_strings=len(texts),
            limit_strings_timed=len(encoded),
        )
    else:
        results = [s3kg_score(t1, t2, encoder=timed) for t1, t2 in timed_pairs]
        wall = time.perf_counter() - wall0
        cpu = tree_cpu_seconds() - cpu0
        others = load.others_share()
        out.update(
            seconds_total=wall,
            seconds_encoding=timed.seconds,
            seconds_other=max(0.0, wall - timed.seconds),
            outer_wall=wall,
            distinct_strings=timed.texts,  # strings encoded, summed over calls (repeats count)
            encode_calls=timed.calls,
        )
    peak_tree = peak.stop()
    pool_min = getattr(encoder, "pool_min_texts", None)
    out.update(
        pool_prestarted=pool_prestarted,
        pool_running=getattr(encoder, "_pool", None) is not None,
        largest_job=timed.largest_job,
        pool_guess_wrong=pool_min is not None
        and getattr(encoder, "processes", 1) >= 2
        and cfg["method"] == "kgscorer"
        and pool_prestarted != (timed.largest_job >= pool_min),
        peak_tree_rss_kib=peak_tree,
    )
    out.update(
        set=cfg["set"],
        encoder=cfg["encoder"],
        encoder_name=encoder.name,
        method=cfg["method"],
        rows=loaded.rows,
        pairs_total=n_total,
        pairs_timed=len(timed_pairs),
        extrapolated=len(timed_pairs) < n_total,
        skipped=loaded.skipped,
        per_file=loaded.per_file,
        cpu_seconds=cpu,
        encoding_cpu_seconds_self=timed.cpu_seconds,
        others_cpu_share=others,
        warmup_seconds=warmup_s,
        rss_after_warmup_kib=rss_after_warmup,
        peak_rss_kib=max(_peak_rss_kib(), peak_tree),
        peak_rss_self_kib=_peak_rss_kib(),
        torch_threads=torch.get_num_threads(),
        torch_version=torch.__version__,
        statuses=dict(Counter(r.status for r in results)),
        scores={str(i): r.score for i, r in zip(indices, results, strict=True)},
    )
    return out


# -- parent: run children, summarise ---------------------------------------------------------------


def parse_limits(text: str | None, encoders: Sequence[str], option: str) -> dict[str, int]:
    """``"600"`` caps every encoder; ``"mpnet=600,minilm=0"`` caps per encoder (0: no cap)."""
    limits = dict.fromkeys(encoders, 0)
    if not text:
        return limits
    for part in text.split(","):
        name, sep, value = part.strip().rpartition("=")
        try:
            number = int(value)
        except ValueError:
            raise SystemExit(f"error: {option}: {part!r} is not N or ENCODER=N") from None
        if number < 0:
            raise SystemExit(f"error: {option} must be >= 0")
        if sep:
            if name not in limits:
                raise SystemExit(f"error: {option}: {name!r} is not a selected encoder")
            limits[name] = number
        else:
            limits = dict.fromkeys(encoders, number)
    return limits


def run_child(cfg: dict[str, Any]) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "bench.speed.bench_scoring", "--one", json.dumps(cfg)]
    label = f"{cfg['set']}/{cfg['encoder']}/{cfg['method']}"
    print(f"[bench] running {label} ...", file=sys.stderr, flush=True)
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=REPO, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith(RESULT_MARK)]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"error: child {label} failed (exit {proc.returncode})")
    result: dict[str, Any] = json.loads(lines[-1][len(RESULT_MARK) :])
    print(
        f"[bench] {label}: {result['seconds_total']:.1f} s timed, "
        f"{time.perf_counter() - start:.1f} s with start-up",
        file=sys.stderr,
        flush=True,
    )
    return result


def _loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


def _fmt(value: float | None, spec: str, none: str = "-") -> str:
    return none if value is None else format(value, spec)


def summarise(res: dict[str, Any]) -> dict[str, Any]:
    """Per-configuration figures, naive ones extrapolated per pair to the whole set."""
    scale = res["pairs_total"] / res["pairs_timed"] if res["pairs_timed"] else 0.0
    total = res["seconds_total"] * scale
    enc = res["seconds_encoding"] * scale
    other = res["seconds_other"] * scale
    row = {
        "set": res["set"],
        "encoder": res["encoder"],
        "method": res["method"],
        "pairs": res["pairs_total"],
        "pairs_timed": res["pairs_timed"],
        "extrapolated": res["extrapolated"],
        "seconds": total,
        "pairs_per_s": res["pairs_total"] / total if total else None,
        "seconds_encoding": enc,
        "seconds_other": other,
        "other_share": other / total if total else None,
        "cpu_seconds": res["cpu_seconds"] * scale,
        "peak_rss_mib": res["peak_rss_kib"] / 1024,
        "rss_after_warmup_mib": res["rss_after_warmup_kib"] / 1024,
        "strings_encoded": res["distinct_strings"],
        "encode_calls": res["encode_calls"],
        "others_cpu_share": res["others_cpu_share"],
        "limit_seconds": res.get("limit_seconds"),
        "limit_strings": res.get("limit_strings"),
        "limit_strings_timed": res.get("limit_strings_timed"),
        "limit_extrapolated": res.get("limit_strings_timed", 0) < res.get("limit_strings", 0),
        "over_limit": (res["seconds_total"] / res["limit_seconds"])
        if res.get("limit_seconds")
        else None,
    }
    return row


def compare(kgs: dict[str, Any], naive: dict[str, Any]) -> dict[str, Any]:
    a, b = summarise(kgs), summarise(naive)
    common = [k for k in naive["scores"] if k in kgs["scores"]]
    diffs = [abs(kgs["scores"][k] - naive["scores"][k]) for k in common]
    return {
        "set": kgs["set"],
        "encoder": kgs["encoder"],
        "pairs": a["pairs"],
        "naive_pairs_timed": b["pairs_timed"],
        "naive_extrapolated": b["extrapolated"],
        "speedup_wall": b["seconds"] / a["seconds"] if a["seconds"] else None,
        "speedup_cpu": b["cpu_seconds"] / a["cpu_seconds"] if a["cpu_seconds"] else None,
        "kgscorer_other_share": a["other_share"],
        "kgscorer_over_limit": a["over_limit"],
        "max_abs_score_diff": max(diffs) if diffs else None,
        "pairs_compared": len(diffs),
        "meets_non_embedding_target": a["other_share"] is not None
        and a["other_share"] < NON_EMBEDDING_TARGET,
        "meets_speedup_target": (b["seconds"] / a["seconds"] >= SPEEDUP_TARGET)
        if a["seconds"]
        else False,
    }


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The three label columns left-aligned, the figures right-aligned."""
    return text_table(headers, rows, right=range(3, len(headers)))


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> dict[str, Any]:
    first = results[0]
    print("S3KG scoring benchmark: KGScorer vs naive s3kg_score loop")
    print(
        f"python {platform.python_version()}, torch {first['torch_version']}, "
        f"torch threads {first['torch_threads']} (library default, not changed), "
        f"{os.cpu_count()} CPUs, {platform.machine()}"
    )
    print(f"data: {Path(args.data_dir).resolve() / BENCH_SUBDIR}")
    if args.report_from:
        print(f"report rebuilt from {args.report_from} (options: see the tables' marks)")
    else:
        print(
            f"run: {time.strftime('%Y-%m-%d %H:%M:%S')}, options: sets={args.sets} "
            f"encoders={args.encoders} naive-limit={args.naive_limit or 'none'} "
            f"limit-sample={args.limit_sample or 'none'}; load average at the end "
            f"{_loadavg()}"
        )
    seen_sets: set[str] = set()
    for res in results:
        if res["set"] in seen_sets:
            continue
        seen_sets.add(res["set"])
        skipped = sum(res["skipped"].values())
        files = ", ".join(f"{k} {v}" for k, v in res["per_file"].items())
        print(
            f"set {res['set']}: {res['pairs_total']} pairs scored from {res['rows']} rows "
            f"({skipped} skipped, status not ok: {res['skipped'] or 'none'}); {files}"
        )
    encoders = {res["encoder"]: res["encoder_name"] for res in results}
    print("encoders: " + ", ".join(f"{k} = {v}" for k, v in encoders.items()))
    print()

    rows = [summarise(r) for r in results]
    spreads = [
        f"{r.get('runs', 1)}"
        + (
            " (" + "/".join(f"{x:.1f}" for x in r["all_seconds"]) + ")"
            if r.get("runs", 1) > 1
            else ""
        )
        for r in results
    ]
    headers = [
        "set",
        "encoder",
        "method",
        "pairs",
        "timed",
        "seconds",
        "pairs/s",
        "encode s",
        "other s",
        "other %",
        "CPU s",
        "strings",
        "calls",
        "RSS warm MiB",
        "peak RSS MiB",
        "others' CPU %",
        "runs (wall s)",
    ]
    body = []
    for r, spread in zip(rows, spreads, strict=True):
        mark = "*" if r["extrapolated"] else ""
        body.append(
            [
                r["set"],
                r["encoder"],
                r["method"] + mark,
                str(r["pairs"]),
                str(r["pairs_timed"]),
                _fmt(r["seconds"], ".1f") + mark,
                _fmt(r["pairs_per_s"], ".2f") + mark,
                _fmt(r["seconds_encoding"], ".1f") + mark,
                _fmt(r["seconds_other"], ".2f") + mark,
                _fmt(None if r["other_share"] is None else 100 * r["other_share"], ".1f"),
                _fmt(r["cpu_seconds"], ".1f") + mark,
                str(r["strings_encoded"]),
                str(r["encode_calls"]),
                _fmt(r["rss_after_warmup_mib"], ".0f"),
                _fmt(r["peak_rss_mib"], ".0f"),
                _fmt(None if r["others_cpu_share"] is None else 100 * r["others_cpu_share"], ".0f"),
                spread,
            ]
        )
    print("Per configuration (each in its own process; model load and warm-up excluded)")
    print(table(headers, body))
    if any(r.get("runs", 1) > 1 for r in results):
        print(
            "runs: each configuration was run that many times (rounds interleaved); figures "
            "are those of its fastest run, the wall seconds of every run are in brackets."
        )
    print(
        "strings: kgscorer = distinct strings encoded; naive = strings encoded summed over "
        "calls (each pair encodes its own).\nothers' CPU %: share of the machine's CPU used by "
        "other processes while the clock ran (high = wall times inflated by contention)."
    )
    if any(r["extrapolated"] for r in rows):
        print(
            "* naive loop run on a stratified random subset of 'timed' pairs (per file, "
            "proportional, seed 0); seconds, pairs/s and CPU s are EXTRAPOLATED per pair to all "
            "'pairs'."
        )
    print()

    limit_rows = [
        [
            r["set"],
            r["encoder"],
            str(r["limit_strings"]),
            str(r["limit_strings_timed"]),
            _fmt(r["limit_seconds"], ".1f") + ("+" if r["limit_extrapolated"] else ""),
            _fmt(r["seconds"], ".1f"),
            _fmt(r["over_limit"], ".2f") + "x" + ("+" if r["limit_extrapolated"] else ""),
        ]
        for r in rows
        if r["method"] == "kgscorer"
    ]
    if limit_rows:
        print("Embedding-bound limit (KGScorer's distinct strings encoded again in one call)")
        print(
            table(
                ["set", "encoder", "strings", "timed", "limit s", "KGScorer s", "KGScorer/limit"],
                limit_rows,
            )
        )
        if any(r["limit_extrapolated"] for r in rows if r["method"] == "kgscorer"):
            print(
                "+ limit timed on a uniform random sample of 'timed' strings (seed 0) and "
                "EXTRAPOLATED per string to all 'strings'."
            )
        print()

    comparisons = []
    by_key = {(r["set"], r["encoder"], r["method"]): r for r in results}
    for s in dict.fromkeys(r["set"] for r in results):
        for e in dict.fromkeys(r["encoder"] for r in results):
            kgs, naive = by_key.get((s, e, "kgscorer")), by_key.get((s, e, "naive"))
            if kgs and naive:
                comparisons.append(compare(kgs, naive))
    if comparisons:
        print(
            f"Summary (targets: non-embedding share < {100 * NON_EMBEDDING_TARGET:.0f} %, "
            f"KGScorer >= {SPEEDUP_TARGET:g}x naive on all pairs)"
        )
        crow = []
        for c in comparisons:
            mark = "*" if c["naive_extrapolated"] else ""
            crow.append(
                [
                    c["set"],
                    c["encoder"],
                    f"{c['pairs']}",
                    _fmt(
                        None
                        if c["kgscorer_other_share"] is None
                        else 100 * c["kgscorer_other_share"],
                        ".1f",
                    )
                    + (" ok" if c["meets_non_embedding_target"] else " MISS"),
                    _fmt(c["kgscorer_over_limit"], ".2f") + "x",
                    _fmt(c["speedup_wall"], ".2f")
                    + "x"
                    + mark
                    + (" ok" if c["meets_speedup_target"] else " MISS"),
                    _fmt(c["speedup_cpu"], ".2f") + "x" + mark,
                    _fmt(c["max_abs_score_diff"], ".2e") + f" ({c['pairs_compared']})",
                ]
            )
        print(
            table(
                [
                    "set",
                    "encoder",
                    "pairs",
                    "KGS other %",
                    "KGS/limit",
                    "speed-up (wall)",
                    "speed-up (CPU)",
                    "max |score diff| (pairs)",
                ],
                crow,
            )
        )
        if any(c["naive_extrapolated"] for c in comparisons):
            print("* naive time extrapolated per pair from a stratified subset (see above).")
        print()
    raw = [{k: v for k, v in r.items() if k != "scores"} for r in results]
    return {"configurations": rows, "comparisons": comparisons, "raw": raw}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_dir(parser, "s3kg_release/benchmarks")
    parser.add_argument("--encoders", default=",".join(ENCODERS), help="comma list of encoders")
    parser.add_argument("--sets", default=",".join(SETS), help="comma list: paws, all")
    parser.add_argument("--methods", default=",".join(METHODS), help=argparse.SUPPRESS)
    parser.add_argument(
        "--naive-limit",
        default=None,
        help="cap on pairs for the naive loop: N, or ENCODER=N[,...]; the rest is extrapolated",
    )
    parser.add_argument(
        "--limit-sample",
        default=None,
        help="time the embedding-bound limit on at most N of the distinct strings "
        "(N or ENCODER=N[,...]); the time is extrapolated per string",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run every configuration N times (rounds interleave the configurations) and "
        "report the run with the lowest wall time, with the spread of all runs",
    )
    parser.add_argument(
        "--parts",
        default=None,
        help="append each configuration's raw result to this JSON-lines file as soon as it "
        "finishes (a long run killed half-way keeps what it measured)",
    )
    parser.add_argument(
        "--report-from",
        default=None,
        help="print the report from a --parts file instead of running anything",
    )
    parser.add_argument("--json", dest="json_out", default=None, help="also write figures here")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.one is not None:
        result = run_one(json.loads(args.one))
        print(RESULT_MARK + json.dumps(result), flush=True)
        return 0

    if args.report_from is not None:
        path = Path(args.report_from)
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SystemExit(f"error: cannot read {path}: {exc.strerror or exc}") from None
        results = [json.loads(line) for line in lines if line.strip()]
        if not results:
            raise SystemExit(f"error: {path} holds no results")
        finish(report(best_runs(results), args), args)
        return 0

    encoders = [e.strip() for e in args.encoders.split(",") if e.strip()]
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for name, chosen, allowed in (
        ("--encoders", encoders, ENCODERS),
        ("--sets", sets, SETS),
        ("--methods", methods, METHODS),
    ):
        bad = [c for c in chosen if c not in allowed]
        if bad or not chosen:
            raise SystemExit(f"error: {name}: use some of {', '.join(allowed)}; got {chosen}")
    limits = parse_limits(args.naive_limit, encoders, "--naive-limit")
    samples = parse_limits(args.limit_sample, encoders, "--limit-sample")
    data_dir = Path(args.data_dir)
    for s in sets:
        set_files(data_dir, s)  # fail early on a wrong path

    if args.repeat < 1:
        raise SystemExit("error: --repeat must be >= 1")

    configs = [
        {
            "set": s,
            "encoder": e,
            "method": m,
            "data_dir": str(data_dir),
            "naive_limit": limits[e] if m == "naive" else 0,
            "limit_sample": samples[e] if m == "kgscorer" else 0,
        }
        for s in sets
        for e in encoders
        for m in methods
    ]
    runs: list[list[dict[str, Any]]] = [[] for _ in configs]
    for round_no in range(1, args.repeat + 1):
        for i, cfg in enumerate(configs):
            result = run_child(cfg)
            result["round"] = round_no
            runs[i].append(result)
            if args.parts:
                parts = Path(args.parts)
                parts.parent.mkdir(parents=True, exist_ok=True)
                with parts.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(result) + "\n")
    finish(report(best_runs([r for rs in runs for r in rs]), args), args)
    return 0


def best_runs(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One result per configuration: the fastest run, with every run's wall seconds attached."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for res in results:
        groups.setdefault((res["set"], res["encoder"], res["method"]), []).append(res)
    best = []
    for group in groups.values():
        fastest = dict(min(group, key=lambda r: r["seconds_total"] / max(1, r["pairs_timed"])))
        fastest["runs"] = len(group)
        fastest["all_seconds"] = [r["seconds_total"] for r in group]
        best.append(fastest)
    return best


def finish(figures: dict[str, Any], args: argparse.Namespace) -> None:
    if args.json_out:
        out = Path(args.json_out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
        print(f"figures written to {out}")


if __name__ == "__main__":
    sys.exit(main())
