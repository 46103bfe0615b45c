"""The Search page's query on a large database: full-text words and each filter (issue 31).

Times :func:`s3kg_core.store.search_queries.search_answers` (one page of 50 rows and the
total, as the page asks) on a copy of a database, ``--repeats`` times each, and prints the
median and the worst in milliseconds with the number of answers that matched:

- words: one common word, one rare word, two words (every word in the question, answer,
  gold answer or context, ``ILIKE``);
- filters: answer status, answer KG status, one run, a TAU category, a CUS range and a
  GoldSim range at alpha 0.5 under the latest signature, and words with every filter at once;
- page 20 of a broad search (``OFFSET`` 950).

The scale benchmark's databases (``bench/speed/bench_scale.py``) are the intended input; the
file is copied first and only read.

    python -m bench.speed.bench_search DB.duckdb [--repeats 5] [--json evidence/search.json]

``--json`` adds the run to an evidence file (``docsgen/evidence.py``) as
``figures["databases"][N]`` (N: the database's answers), with the database's size (answers,
runs, scored answers, MB), the date, commit and load average; the figures of other databases
in the file are kept, and ``docsgen/speed.py`` renders each database's table.
"""

from __future__ import annotations

import argparse
import datetime
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import git_commit, load_average, update_evidence
from s3kg_core.store.search_queries import ScoreRange, search_answers
from s3kg_core.store.store import Store


def cases(con: Any) -> list[tuple[str, dict[str, Any]]]:
    """The searches timed, named, with their arguments (picked from what the file holds)."""
    signature = con.execute("SELECT value FROM meta WHERE key = 'latest_signature'").fetchone()
    run = con.execute("SELECT min(run_id) FROM runs").fetchone()[0]
    word = con.execute(
        "SELECT w FROM (SELECT unnest(string_split(lower(question), ' ')) AS w FROM items "
        "USING SAMPLE 200 ROWS) WHERE length(w) > 6 GROUP BY w ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    common = word[0] if word else "the"
    out: list[tuple[str, dict[str, Any]]] = [
        ("words: 'the'", {"text": "the"}),
        (f"words: {common!r}", {"text": common}),
        ("words: 'zzqx' (no match)", {"text": "zzqx"}),
        (f"words: 'the {common}'", {"text": f"the {common}"}),
        ("answer status = error", {"text": "", "answer_status": "error"}),
        ("answer KG status = empty", {"text": "", "answer_kg_status": "empty"}),
        (f"run = {run}", {"text": "", "run_ids": [int(run)]}),
        ("TAU category = relation_mismatch", {"text": "", "tau_category": "relation_mismatch"}),
        ("page 20 of 'the'", {"text": "the", "offset": 950}),
    ]
    if signature is not None:
        sig = str(signature[0])
        out += [
            (
                "CUS in [0, 0.3] at alpha 0.5",
                {"text": "", "score_range": ScoreRange(sig, 0.5, "cus", 0.0, 0.3)},
            ),
            (
                "GoldSim in [0.6, 1] at alpha 0.5",
                {"text": "", "score_range": ScoreRange(sig, 0.5, "gold_sim", 0.6, 1.0)},
            ),
            (
                f"'{common}' + run + KG ok + CUS [0, 0.5]",
                {
                    "text": common,
                    "run_ids": [int(run)],
                    "answer_kg_status": "ok",
                    "score_range": ScoreRange(sig, 0.5, "cus", 0.0, 0.5),
                },
            ),
        ]
    return out


def search_row(name: str, matched: int, times_ms: list[float]) -> dict[str, Any]:
    """One search's figures as the evidence file holds them (milliseconds, rounded).

    Examples
    --------
    >>> search_row("run = 1", 1000, [120.4, 111.2, 278.0])
    {'search': 'run = 1', 'matched': 1000, 'median_ms': 120, 'worst_ms': 278}
    """
    return {
        "search": name,
        "matched": int(matched),
        "median_ms": round(statistics.median(times_ms)),
        "worst_ms": round(max(times_ms)),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="add the run to this evidence")
    args = parser.parse_args(argv)
    load_before = load_average()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "search.duckdb"
        shutil.copy(args.db, copy)
        store = Store(copy)  # a writer opens it once: an older file is migrated
        with store.connect() as con:
            answers = con.execute("SELECT count(*) FROM answers").fetchone()[0]
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
            scored = con.execute(
                "SELECT count(*) FROM (SELECT DISTINCT run_id, item_id FROM scores)"
            ).fetchone()[0]
        print(
            f"{args.db.name}: {answers:,} answers in {runs} runs; median and worst of "
            f"{args.repeats} runs, one page of 50 rows and the total"
        )
        print("| search | matched | median ms | worst ms |\n|---|---:|---:|---:|")
        with Store(copy, read_only=True).connect() as con:
            for name, kwargs in cases(con):
                params = dict(kwargs)
                offset = params.pop("offset", 0)
                times, total = [], 0
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    _, total = search_answers(con, limit=50, offset=offset, **params)
                    times.append((time.perf_counter() - started) * 1000)
                row = search_row(name, total, times)
                rows.append(row)
                print(
                    f"| {name} | {total:,} | {row['median_ms']} | {row['worst_ms']} |", flush=True
                )
    if args.json is not None:
        entry = {
            "db": args.db.name,
            "answers": int(answers),
            "runs": int(runs),
            "scored_answers": int(scored),
            "db_mb": round(args.db.stat().st_size / 1e6, 1),
            "repeats": args.repeats,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": git_commit(),
            "load_before": load_before,
            "load_after": load_average(),
            "searches": rows,
        }
        update_evidence(
            args.json,
            ["databases", str(answers)],
            entry,
            title="The Search page's query on the scale databases (bench_search.py)",
        )
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
