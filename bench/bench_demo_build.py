"""Where the demo build's time goes: a cold :func:`s3kg_core.demo.build_demo` in a fresh process.

Each repeat runs in its own child process (nothing imported, no model loaded), which wraps the
build's parts in timers and reports wall and CPU seconds for each:

* ``import``: ``import s3kg_core.demo`` and the library modules ``build_demo`` imports;
* ``encoder load``: the first ``SentenceTransformerEncoder.load_model`` (sentence-transformers,
  torch and the MiniLM weights);
* ``spaCy load``: the offline extractor's ``_load_model`` (spaCy and its English pipeline; absent
  when the KGs come from ``data/demo/kgs.jsonl``);
* one line per stage (import, extract, score, TAU, GraphEval detection, factuality, benchmark
  results), each with its ``encode`` seconds (the sentence encoder's forward passes) split out.

A part nested in another (the encoder load inside scoring) is counted in the inner part only, so
the lines add up to the total. CPU seconds are this process's user + system time (torch's
threads included): on a machine shared with other work they are the steadier figure, wall seconds
are inflated by the others' load (printed before and after).

Usage::

    python bench/bench_demo_build.py --repeats 2
    python bench/bench_demo_build.py --from-scratch     # ignore the shipped KGs (spaCy extracts)
    python bench/bench_demo_build.py --no-grapheval     # the dashboard's first start
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

# (label, module, attribute): the parts timed, innermost first wins (see _Timers).
PARTS = (
    ("encoder load", "s3kg_core.encoders.sentence", "SentenceTransformerEncoder.load_model"),
    ("spaCy load", "s3kg_core.extract.offline", "_load_model"),
    ("encode", "s3kg_core.encoders.sentence", "SentenceTransformerEncoder.encode"),
    ("stage: import", "s3kg_core.demo", "_import_demo"),
    ("stage: extract", "s3kg_core.stages.run", "extract_store"),
    ("stage: score", "s3kg_core.stages.run", "score_store"),
    ("stage: TAU", "s3kg_core.stages.run", "tau_store"),
    ("stage: GraphEval detect", "s3kg_core.grapheval.results", "detect_store"),
    ("stage: factuality", "s3kg_core.factuality.results", "save_evaluation"),
    ("stage: benchmarks", "s3kg_core.demo", "_store_bench"),
)


class _Timers:
    """Wall and CPU seconds per part; time inside a nested part is charged to it only."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.stack: list[list[Any]] = []  # [label, wall0, cpu0, child_wall, child_cpu]

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if label == "encode":  # charged to the stage it runs in
                stages = [f[0] for f in self.stack if f[0].startswith("stage: ")]
                label_here = f"encode ({stages[-1][7:]})" if stages else "encode"
            else:
                label_here = label
            frame = [label_here, time.perf_counter(), time.process_time(), 0.0, 0.0]
            self.stack.append(frame)
            try:
                return fn(*args, **kwargs)
            finally:
                self.stack.pop()
                wall = time.perf_counter() - frame[1]
                cpu = time.process_time() - frame[2]
                key = frame[0]
                self.wall[key] = self.wall.get(key, 0.0) + wall - frame[3]
                self.cpu[key] = self.cpu.get(key, 0.0) + cpu - frame[4]
                if self.stack:
                    self.stack[-1][3] += wall
                    self.stack[-1][4] += cpu

        return timed


def _child(db: Path, from_scratch: bool, grapheval: bool) -> dict[str, Any]:
    """One cold build in this (fresh) process; the figures as a dict."""
    import importlib

    t0, c0 = time.perf_counter(), time.process_time()
    import s3kg_core.demo as demo

    timers = _Timers()
    for label, module, attr in PARTS:
        mod = importlib.import_module(module)
        owner: Any = mod
        *path, name = attr.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, name):
            continue  # a part this version of the code does not have
        setattr(owner, name, timers.wrap(label, getattr(owner, name)))
    imported_wall, imported_cpu = time.perf_counter() - t0, time.process_time() - c0
    kwargs: dict[str, Any] = {}
    if from_scratch:
        kwargs["use_recorded_kgs"] = False
    if not grapheval:
        kwargs["grapheval"] = False
    started, cpu_started = time.perf_counter(), time.process_time()
    report = demo.build_demo(db, **kwargs)
    total_wall = time.perf_counter() - started
    total_cpu = time.process_time() - cpu_started
    parts = {"import": (imported_wall, imported_cpu)}
    for label in dict.fromkeys(p[0] for p in PARTS):
        for key in sorted(k for k in timers.wall if k == label or k.startswith(f"{label} (")):
            parts[key] = (timers.wall[key], timers.cpu[key])
    accounted_wall = sum(w for k, (w, _) in parts.items() if k != "import")
    accounted_cpu = sum(c for k, (_, c) in parts.items() if k != "import")
    parts["other (imports inside build_demo, writes, rename)"] = (
        total_wall - accounted_wall,
        total_cpu - accounted_cpu,
    )
    return {
        "parts": parts,
        "total_wall": imported_wall + total_wall,
        "total_cpu": imported_cpu + total_cpu,
        "answers": report.answers,
        "scored": report.scored,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1, help="cold builds, each a fresh process")
    parser.add_argument(
        "--from-scratch", action="store_true", help="extract with spaCy, not data/demo/kgs.jsonl"
    )
    parser.add_argument(
        "--no-grapheval",
        action="store_true",
        help="leave GraphEval to finish_demo, as the dashboard's first start does",
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(_child(args.child, args.from_scratch, not args.no_grapheval)))
        return 0
    runs = []
    load = [" ".join(f"{x:.2f}" for x in os.getloadavg())]
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench_demo_build_") as tmp:
            cmd = [sys.executable, __file__, "--child", str(Path(tmp) / "demo.duckdb")]
            if args.from_scratch:
                cmd.append("--from-scratch")
            if args.no_grapheval:
                cmd.append("--no-grapheval")
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        load.append(" ".join(f"{x:.2f}" for x in os.getloadavg()))
    labels = list(runs[0]["parts"])
    width = max(len(s) for s in labels) + 2
    print(
        f"demo build, {args.repeats} cold run(s), {os.cpu_count()} CPUs, load {' -> '.join(load)}"
    )
    head = "".join(f"  run {i + 1} wall / CPU s" for i in range(len(runs)))
    print(f"{'part':<{width}}{head}")
    for label in labels:
        cells = "".join(
            f"  {r['parts'].get(label, (0, 0))[0]:>8.2f} / {r['parts'].get(label, (0, 0))[1]:>6.2f}"
            for r in runs
        )
        print(f"{label:<{width}}{cells}")
    cells = "".join(f"  {r['total_wall']:>8.2f} / {r['total_cpu']:>6.2f}" for r in runs)
    print(f"{'total':<{width}}{cells}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"load": load, "runs": runs}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
