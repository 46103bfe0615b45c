"""A study's worth of answers: every CLI stage timed at 2,000 / 20,000 / 100,000 answers (issue 33).

What is measured
----------------
``build`` writes, with a seeded generator, a folder of CSVs in the released runs' format from
the S3KG authors' released QA runs (``../shared/data/s3kg_release/qa/*.csv``, two datasets of
400 questions, two models each): for N answers, ``--runs`` runs per dataset of N / (2 x runs)
questions each. A question past the 400th is a released one again, its question text numbered
and its gold KG with one triple dropped at random; each run's answer KG is a released answer KG
of its dataset (a model drawn per run) with one triple dropped and, one time in three, one
relation swapped for another answer's. Nothing is committed: the folder and the databases go
to ``bench/out/scale``.

Then each stage runs as ``s3kg ...`` in a child process (``PYTHONPATH`` the checkout under test,
so ``--checkouts before,after`` compares two versions of the code on the same files,
interleaved): ``import s3kg-release``, ``score --encoder minilm-static``, ``tau``, ``cus``,
``export --format parquet``. Each figure is the child's wall time and its peak resident memory
(``ru_maxrss`` of the child, read by ``os.wait4``), and the database's size after the stages.

Usage::

    python -m bench.speed.bench_scale --sizes 2000,20000
    python -m bench.speed.bench_scale --sizes 20000 --checkouts /tmp/before,.
    python -m bench.speed.bench_scale --sizes 100000 --json bench/out/scale.json
    python -m bench.speed.bench_scale --sizes 20000,100000 --evidence evidence/scale_cli.json
    python -m bench.speed.bench_scale --sizes 100000 --mode hybrid --stages import,score

``--evidence`` adds each size's figures (wall seconds and peak memory of every stage, the
database's size, date, commit, load average) to an evidence file, which
``docsgen/speed.py`` renders as one row per size in ``bench/README.md``.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import add_data_dir, git_commit, md_table, update_evidence

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "out" / "scale"
STAGES = ("import", "score", "tau", "cus", "export")


#: the full released files' column names -> the small files' (which this script writes)
RENAMED = {"kg_gold": "gold_kg", "kg_llm": "llm_kg", "kg_context": "context_kg"}


def _read(path: Path) -> list[dict[str, str]]:
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", newline="") as fh:
        return [{RENAMED.get(k, k): v for k, v in row.items()} for row in csv.DictReader(fh)]


def _kg(cell: str) -> list[list[str]]:
    try:
        value = ast.literal_eval(cell)
    except (ValueError, SyntaxError):
        return []
    return [list(map(str, t)) for t in value if isinstance(t, list | tuple) and len(t) == 3]


def _drop_one(kg: list[list[str]], rng: random.Random) -> list[list[str]]:
    if len(kg) < 2:
        return kg
    out = list(kg)
    del out[rng.randrange(len(out))]
    return out


def build_folder(data_dir: Path, n: int, runs: int, seed: int, folder: Path) -> Path:
    """Write the CSVs of ``n`` answers (see the module's docstring) into ``folder``."""
    qa = data_dir / "s3kg_release" / "qa"
    by_dataset: dict[str, list[list[dict[str, str]]]] = {}
    for path in sorted(qa.glob("*.csv")):
        dataset = path.stem.partition("_")[0]
        by_dataset.setdefault(dataset, []).append(_read(path))
    if not by_dataset:
        raise SystemExit(f"no released runs in {qa}")
    rng = random.Random(seed)
    questions = max(1, n // (len(by_dataset) * runs))
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    fields = ["row_id", "question", "gold_answer", "gold_kg", "llm_answer", "llm_kg"]
    fields += ["context", "context_kg"]
    for dataset, models in by_dataset.items():
        base = models[0]
        items = []
        for j in range(questions):
            row = base[j % len(base)]
            gold = _kg(row["gold_kg"])
            if j >= len(base):
                gold = _drop_one(gold, rng)
            question = row["question"] if j < len(base) else f"{row['question']} (#{j})"
            items.append((row, question, gold))
        for r in range(runs):
            answers = models[r % len(models)]
            relations = [t[1] for a in answers[:50] for t in _kg(a["llm_kg"])] or ["is"]
            with (folder / f"{dataset}_model-{r:02d}.csv").open(
                "w", encoding="utf-8", newline=""
            ) as fh:
                out = csv.DictWriter(fh, fieldnames=fields)
                out.writeheader()
                for j, (row, question, gold) in enumerate(items):
                    answer = answers[j % len(answers)]
                    kg = _drop_one(_kg(answer["llm_kg"]), rng)
                    if kg and rng.random() < 1 / 3:
                        k = rng.randrange(len(kg))
                        kg[k] = [kg[k][0], rng.choice(relations), kg[k][2]]
                    out.writerow(
                        {
                            "row_id": j,
                            "question": question,
                            "gold_answer": row["gold_answer"],
                            "gold_kg": repr(gold),
                            "llm_answer": answer["llm_answer"],
                            "llm_kg": repr(kg),
                            "context": row["context"],
                            "context_kg": row["context_kg"],
                        }
                    )
    return folder


def run_stage(checkout: Path, args: list[str], timeout: float) -> dict[str, Any]:
    """``s3kg ARGS`` under ``checkout``: wall seconds, peak RSS (GB), exit status."""
    env = {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "S3KG_ENCODE_PROCESSES": "1",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    cmd = [sys.executable, "-m", "s3kg_core", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, env=env, cwd=checkout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return {"stopped": f"killed after {timeout:.0f} s", "peak_gb": usage.ru_maxrss / 1e6}
        time.sleep(0.1)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    out: dict[str, Any] = {
        "seconds": time.perf_counter() - start,
        "peak_gb": usage.ru_maxrss / 1e6,  # kB on Linux
        "exit": code,
    }
    if code:
        out["error"] = err.strip().splitlines()[-1:] or [""]
    return out


def stage_args(stage: str, db: Path, folder: Path, mode: str | None = None) -> list[str]:
    """The command line of one stage (``mode``: the scoring mode, ``None`` the default).

    >>> stage_args("score", Path("s.duckdb"), Path("csv"), "hybrid")[-2:]
    ['--mode', 'hybrid']
    """
    return {
        "import": ["import", "s3kg-release", str(folder), "--db", str(db)],
        "score": ["score", "--db", str(db), "--encoder", "minilm-static"]
        + (["--mode", mode] if mode else []),
        "tau": ["tau", "--db", str(db)],
        "cus": ["cus", "--db", str(db)],
        "export": ["export", "--db", str(db), "--format", "parquet", "--out", str(db) + ".pq"],
    }[stage]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="2000,20000,100000")
    parser.add_argument("--runs", type=int, default=10, help="Runs per dataset.")
    parser.add_argument("--seed", type=int, default=33)
    parser.add_argument("--checkouts", default=".", help="Comma-separated repository folders.")
    parser.add_argument("--stages", default=",".join(STAGES))
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--mode", default=None, help="s3kg score's --mode (default: its default)")
    add_data_dir(parser, "s3kg_release/qa")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--evidence", type=Path, default=None,
        help="add each size's figures (the first checkout's) to this evidence file",
    )  # fmt: skip
    opts = parser.parse_args()
    load_before = os.getloadavg()
    checkouts = [Path(c).resolve() for c in opts.checkouts.split(",")]
    stages = [s for s in opts.stages.split(",") if s]
    results: dict[str, Any] = {}
    for n in (int(s) for s in opts.sizes.split(",")):
        folder = build_folder(opts.data_dir, n, opts.runs, opts.seed, OUT / f"csv_{n}")
        for checkout in checkouts:
            db = OUT / f"scale_{n}_{checkouts.index(checkout)}.duckdb"
            for old in (db, Path(str(db) + ".wal"), Path(str(db) + ".pq")):
                old.unlink(missing_ok=True)
            results.setdefault(str(n), {})[str(checkout)] = row = {}
        for stage in stages:  # interleaved: each stage under every checkout in turn
            for i, checkout in enumerate(checkouts):
                db = OUT / f"scale_{n}_{i}.duckdb"
                row = results[str(n)][str(checkout)]
                row[stage] = got = run_stage(
                    checkout, stage_args(stage, db, folder, opts.mode), opts.timeout
                )
                shown = got.get("stopped") or (
                    f"{got['seconds']:.1f} s, peak {got['peak_gb']:.2f} GB"
                    + (f", exit {got['exit']}: {got['error'][0]}" if got.get("exit") else "")
                )
                print(f"N={n:,} {checkout.name or checkout}: {stage}: {shown}", flush=True)
        for i, checkout in enumerate(checkouts):
            db = OUT / f"scale_{n}_{i}.duckdb"
            size = db.stat().st_size / 1e6 if db.exists() else float("nan")
            results[str(n)][str(checkout)]["db_mb"] = size
            print(f"N={n:,} {checkout.name or checkout}: database {size:.0f} MB", flush=True)
    print()
    table = []
    for n_key, by_code in results.items():
        for code, row in by_code.items():
            cells = [
                row[s].get("stopped") or f"{row[s]['seconds']:.1f} s ({row[s]['peak_gb']:.2f} GB)"
                for s in stages
            ]
            table.append([f"{int(n_key):,}", Path(code).name, *cells, f"{row['db_mb']:.0f} MB"])
    print(md_table(["N answers", "code", *stages, "DB size"], table))
    if opts.json:
        opts.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if opts.evidence:
        add_to_evidence(opts.evidence, results, checkouts[0], load_before, opts.mode)
        print(f"wrote {opts.evidence}")


def add_to_evidence(
    path: Path,
    results: dict[str, Any],
    checkout: Path,
    load_before: tuple[float, ...],
    mode: str | None = None,
) -> None:
    """Write each size's stage figures of ``checkout`` to ``path`` as ``sizes[N]``.

    A run with another scoring mode than the default is ``sizes["N MODE"]`` beside it.
    """
    from s3kg_core.scoring.result import DEFAULT_MODE

    for size, by_code in results.items():
        n = size if mode in (None, DEFAULT_MODE) else f"{size} {mode}"
        entry = {
            **by_code[str(checkout)],
            "mode": mode or DEFAULT_MODE,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "commit": git_commit(checkout),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()],
        }
        update_evidence(
            path, ["sizes", n], entry,
            title="Every CLI stage on a scale database (bench_scale.py)",
        )  # fmt: skip


if __name__ == "__main__":
    main()
