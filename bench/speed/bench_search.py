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

    python bench/speed/bench_search.py DB.duckdb [--repeats 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from s3kg_core.store.search_queries import ScoreRange, search_answers  # noqa: E402
from s3kg_core.store.store import Store  # noqa: E402


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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", type=Path)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "search.duckdb"
        shutil.copy(args.db, copy)
        store = Store(copy)  # a writer opens it once: an older file is migrated
        with store.connect() as con:
            answers = con.execute("SELECT count(*) FROM answers").fetchone()[0]
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
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
                print(
                    f"| {name} | {total:,} | {statistics.median(times):.0f} | {max(times):.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
