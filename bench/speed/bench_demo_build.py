"""Where the demo build's time goes: a cold :func:`s3kg_core.demo.build_demo` in a fresh process.

Each repeat runs in its own child process (nothing imported, no model loaded), which wraps the
build's parts in timers and reports wall and CPU seconds for each:

* ``import``: ``import s3kg_core.demo`` and the library modules ``build_demo`` imports;
* ``encoder load``: the first ``SentenceTransformerEncoder.load_model`` (sentence-transformers,
  torch and the MiniLM weights);
* ``spaCy load``: ``spacy.load`` (spaCy and its English pipeline; absent when the KGs come from
  ``data/demo/kgs.jsonl``);
* one line per stage (import, extract, score, TAU, factuality evaluations and benchmark results,
  GraphEval detection), each from the moment ``build_demo`` announces it (its ``on_step``) to
  the next, with its ``encode`` seconds (the sentence encoder's forward passes) split out.

A part nested in another (the encoder load inside scoring) is counted in the inner part only, so
the lines add up to the total. CPU seconds are this process's user + system time (torch's
threads included): on a machine shared with other work they are the steadier figure, wall seconds
are inflated by the others' load (printed before and after).

Usage::

    python -m bench.speed.bench_demo_build --repeats 2
    python -m bench.speed.bench_demo_build --from-scratch     # ignore the shipped KGs (spaCy)
    python -m bench.speed.bench_demo_build --no-grapheval     # the dashboard's first start
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

from bench._common import load_average

REPO = Path(__file__).resolve().parents[2]

STEPS = (
    ("Importing", "stage: import"),
    ("KGs:", "stage: extract"),
    ("Extracting KGs", "stage: extract"),
    ("Loading", "stage: score"),
    ("TAU", "stage: TAU"),
    ("Factuality", "stage: factuality and benchmarks"),
    ("GraphEval", "stage: GraphEval detect"),
)
"""The stages: ``build_demo``'s ``on_step`` announces each as it starts (by these prefixes)."""


class _Timers:
    """Wall and CPU seconds per part; time inside a nested part is charged to it only.

    The stages follow each other at the bottom of the stack (:meth:`step`); the calls wrapped
    by :meth:`wrap` nest above them.
    """

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.stack: list[list[Any]] = []  # [label, wall0, cpu0, child_wall, child_cpu]

    def _close(self) -> None:
        frame = self.stack.pop()
        wall = time.perf_counter() - frame[1]
        cpu = time.process_time() - frame[2]
        self.wall[frame[0]] = self.wall.get(frame[0], 0.0) + wall - frame[3]
        self.cpu[frame[0]] = self.cpu.get(frame[0], 0.0) + cpu - frame[4]
        if self.stack:
            self.stack[-1][3] += wall
            self.stack[-1][4] += cpu

    def _open(self, label: str) -> None:
        self.stack.append([label, time.perf_counter(), time.process_time(), 0.0, 0.0])

    def step(self, text: str) -> None:
        """``on_step``: the stage announced by ``text`` starts, the one before ends."""
        if len(self.stack) > 1:
            raise RuntimeError(f"a stage began inside {self.stack[-1][0]!r}")
        if self.stack:
            self._close()
        self._open(next((label for prefix, label in STEPS if text.startswith(prefix)), text))

    def finish(self) -> None:
        """The last stage ends."""
        while self.stack:
            self._close()

    def wrap(self, label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            if label == "encode":  # charged to the stage it runs in
                stages = [f[0] for f in self.stack if f[0].startswith("stage: ")]
                self._open(f"encode ({stages[-1][7:]})" if stages else "encode")
            else:
                self._open(label)
            try:
                return fn(*args, **kwargs)
            finally:
                self._close()

        return timed


def _child(db: Path, from_scratch: bool, grapheval: bool) -> dict[str, Any]:
    """One cold build in this (fresh) process; the figures as a dict."""
    t0, c0 = time.perf_counter(), time.process_time()
    import spacy

    from s3kg_core.demo import build_demo
    from s3kg_core.encoders.sentence import SentenceTransformerEncoder

    timers = _Timers()
    model = SentenceTransformerEncoder
    model.load_model = timers.wrap("encoder load", model.load_model)  # type: ignore[method-assign]
    model.encode = timers.wrap("encode", model.encode)  # type: ignore[method-assign]
    spacy.load = timers.wrap("spaCy load", spacy.load)
    imported_wall, imported_cpu = time.perf_counter() - t0, time.process_time() - c0
    kwargs: dict[str, Any] = {"on_step": timers.step}
    if from_scratch:
        kwargs["use_recorded_kgs"] = False
    if not grapheval:
        kwargs["grapheval"] = False
    started, cpu_started = time.perf_counter(), time.process_time()
    report = build_demo(db, **kwargs)
    timers.finish()
    total_wall = time.perf_counter() - started
    total_cpu = time.process_time() - cpu_started
    parts = {"import": (imported_wall, imported_cpu)}
    order = ["encoder load", "spaCy load", *dict.fromkeys(label for _, label in STEPS)]
    for label in order:
        for key in sorted(
            k for k in timers.wall if k == label or k.startswith(f"encode ({label[7:]}")
        ):
            parts[key] = (timers.wall[key], timers.cpu[key])
    accounted_wall = sum(w for k, (w, _) in parts.items() if k != "import")
    accounted_cpu = sum(c for k, (_, c) in parts.items() if k != "import")
    parts["other (imports inside build_demo, reading the demo files)"] = (
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
    load = [load_average()]
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench_demo_build_") as tmp:
            cmd = [
                sys.executable,
                "-m",
                "bench.speed.bench_demo_build",
                "--child",
                str(Path(tmp) / "demo.duckdb"),
            ]
            if args.from_scratch:
                cmd.append("--from-scratch")
            if args.no_grapheval:
                cmd.append("--no-grapheval")
            env = {**os.environ, "PYTHONPATH": str(REPO)}
            out = subprocess.run(cmd, env=env, cwd=REPO, check=True, capture_output=True, text=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        load.append(load_average())
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
