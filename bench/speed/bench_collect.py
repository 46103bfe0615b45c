"""Collection against a single-worker CPU-like server: answers/s and requests per answer (issue 29).

The tests' fault server (s3kg_core/llm/fault_server.py, ``workers=1``) serves one request at a time,
queues the others, spends ``--service`` seconds on each and never cancels an abandoned one, as
``transformers serve`` does with non-streamed requests. ``s3kg collect`` runs against it as a
subprocess with ``--timeout`` set (the issue's 60 s timeout against 30-90 s answers, scaled
down), at each concurrency, once with each code base, interleaved (main's checkout "before",
this one "after"):

    python -m bench.speed.bench_collect [--before /work/main] [--questions 12] [--service 1.0]
        [--timeout 2.5] [--concurrency 1,4,16] [--repeats 1]

Prints one line per run: answers stored ok, wall seconds, answers/s, requests the server received
per answer, the most requests it held at once (in line or served), and collect's exit status.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from s3kg_core.llm.fault_server import Reply, fake_openai

REPO = Path(__file__).resolve().parents[2]


def _dataset(db: Path, n: int, code: Path, env: dict[str, str]) -> None:
    """Import ``n`` questions with the code base under test (its own schema version)."""
    table = db.with_suffix(".csv")
    rows = [[f"q{i}", f"Question {i}?", f"Fact number {i}. More.", "g"] for i in range(n)]
    with table.open("w", newline="") as fh:
        csv.writer(fh).writerows([["id", "question", "context", "gold"], *rows])
    mapping = "id=id,question=question,context=context,gold=gold"
    subprocess.run(
        [sys.executable, "-m", "s3kg_core", "import", "csv", str(table), "--db", str(db),
         "--map", mapping],
        check=True, capture_output=True, cwd=code, env=env,
    )  # fmt: skip


def _answers_ok(db: Path, code: Path) -> int:
    script = (
        "import duckdb,sys; con=duckdb.connect(sys.argv[1], read_only=True); "
        "print(con.execute(\"SELECT count(*) FROM answers WHERE status='ok'\").fetchone()[0])"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(db)], capture_output=True, text=True, cwd=code
    )
    return int(out.stdout.strip() or 0)


def run_once(code: Path, concurrency: int, args: argparse.Namespace) -> dict[str, float]:
    """One ``s3kg collect`` with the code base in ``code``; the server's figures."""

    def script(body: dict, n: int) -> Reply:
        return Reply(text="An answer of a few words.", hang=args.service)

    with tempfile.TemporaryDirectory() as tmp, fake_openai(script, workers=1) as server:
        db = Path(tmp) / "bench.duckdb"
        env = dict(os.environ, PYTHONPATH=str(code))
        for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
            env.pop(var, None)
        _dataset(db, args.questions, code, env)
        command = [
            sys.executable, "-m", "s3kg_core", "collect", "--db", str(db),
            "--base-url", server.base_url, "--model", "bench", "--timeout", str(args.timeout),
            "--concurrency", str(concurrency),
        ]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=code, env=env, timeout=args.limit
        )
        seconds = time.perf_counter() - started
        ok = _answers_ok(db, code)
        sent = server.count()
        busy = server.busy
    return {
        "ok": ok,
        "seconds": seconds,
        "answers_per_s": ok / seconds,
        "requests_per_answer": sent / max(ok, 1),
        "requests": sent,
        "busy": busy,
        "exit": done.returncode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=Path("/work/main"))
    parser.add_argument("--after", type=Path, default=REPO)
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--service", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=2.5)
    parser.add_argument("--concurrency", default="1,4,16")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--limit", type=float, default=300, help="seconds before a run is killed")
    args = parser.parse_args()
    levels = [int(c) for c in args.concurrency.split(",")]
    print(
        f"{args.questions} questions, {args.service:g} s per request, one worker, "
        f"--timeout {args.timeout:g}"
    )
    print("code    conc  ok  seconds  answers/s  requests/answer  requests  held  exit")
    for _ in range(args.repeats):
        for level in levels:
            for label, code in (("before", args.before), ("after", args.after)):
                try:
                    r = run_once(code, level, args)
                except subprocess.TimeoutExpired:
                    print(f"{label:7s} {level:4d}  killed after {args.limit:.0f} s")
                    continue
                print(
                    f"{label:7s} {level:4d} {r['ok']:3d} {r['seconds']:8.1f} "
                    f"{r['answers_per_s']:10.3f} {r['requests_per_answer']:16.2f} "
                    f"{r['requests']:9d} {r['busy']:5d} {r['exit']:5d}"
                )


if __name__ == "__main__":
    main()
