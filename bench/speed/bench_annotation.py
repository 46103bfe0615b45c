"""Benchmark the verdict log: one decision saved, undone, and the queries the page will make.

What is measured
----------------
One database is built in a temporary folder: ``--items`` answers of one run with small gold and
answer KGs, and a task over them for three annotators (overlap 2), whose units are the pairs
TAU proposes (the packaged MiniLM, loaded once; building is not timed). Then:

(a) *save*: :func:`s3kg_core.annotation.log.save_decision` of one decision on a task unit (its
    own read-write transaction: open the file, find the verdict in effect, append, commit,
    close), ``--repeats`` times, interleaved with (b) *undo*
    (:func:`s3kg_core.annotation.log.undo_last`) so the log grows as it would;
(c) *queries* on a log of ``--log-rows`` rows (written in one bulk insert): the verdicts in
    effect, one annotator's queue progress, disagreements and final labels of the task, each
    with its read-only open;
(d) *open*: a read-only ``Store.connect()`` alone and a bare ``duckdb.connect`` of the file,
    the floor under every figure above;
(e) *export / import* of the whole log as CSV, Parquet and JSON lines.

Medians and p95 in milliseconds. Wall-clock figures are only comparable on an otherwise idle
machine: the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import duckdb

from bench._common import print_load
from s3kg_core.annotation.exchange import export_verdicts, import_verdicts
from s3kg_core.annotation.log import (
    Decision,
    current_verdicts,
    disagreements,
    final_labels,
    now,
    save_decision,
    undo_last,
)
from s3kg_core.annotation.tasks import create_task, item_units, queue_progress
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.kg import Triple
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store

WORDS = ["aspirin", "fever", "headache", "patient", "doctor", "river", "sea", "city", "paris"]
VERBS = ["reduce", "cause", "treat", "flow into", "visit", "be capital of"]


def _triples(rng: random.Random, n: int) -> tuple[Triple, ...]:
    out = []
    for _ in range(n):
        head, tail = rng.sample(WORDS, 2)
        out.append(Triple(head, rng.choice(VERBS), tail))
    return tuple(out)


def _build(path: Path, items: int) -> Store:
    rng = random.Random(0)
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "bench")
        ids = store.upsert_items(con, ds, [ItemRecord(f"q{i}", f"q {i}?") for i in range(items)])
        run = store.ensure_run(con, ds, "m", 0.0, "bench")
        store.put_answers(con, run, [AnswerRecord(i, "a") for i in ids.values()])
        kgs = []
        for item in ids.values():
            gold = _triples(rng, 4)
            kgs += [
                KGRecord(run, item, "gold", gold),
                KGRecord(run, item, "answer", (*gold[:2], *_triples(rng, 2))),
            ]
        store.put_kgs(con, kgs)
    return store


def _ms(samples: list[float]) -> str:
    samples = sorted(samples)
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return f"median {1000 * statistics.median(samples):7.1f} ms  p95 {1000 * p95:7.1f} ms"


def _time(call: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--log-rows", type=int, default=20_000)
    args = parser.parse_args()
    print_load("before")
    folder = Path(tempfile.mkdtemp())
    store = _build(folder / "bench.duckdb", args.items)
    encoder = load_encoder("minilm")
    create_task(store, ["ann", "bob", "cy"], 2, encoder=encoder)
    with store.connect() as con:
        key = queue_progress(con, 1, "ann").next_item
        units = item_units(con, 1, *key)
    saves: list[float] = []
    undos: list[float] = []
    for n in range(args.repeats):
        unit = units[n % len(units)]
        verdict = ("confirm", "reject", "skip")[n % 3]
        decision = Decision(
            "ann", unit.run_id, unit.item_id, unit.gold, unit.answer, verdict, task_id=1
        )
        saves += _time(lambda d=decision: save_decision(store, d), 1)
        if n % 2:
            undos += _time(lambda: undo_last(store, "ann"), 1)
    print(f"(a) save one decision        {_ms(saves)}  ({len(saves)} saves)")
    print(f"(b) undo the last decision   {_ms(undos)}  ({len(undos)} undos)")

    # (c) a big log: every annotator labels units of the task, in bulk
    with store.connect() as con:
        all_units = aq.task_units(con, 1)
    rng = random.Random(1)
    rows = []
    for n in range(args.log_rows):
        u = all_units[n % len(all_units)]
        rows.append(
            {
                "uid": uuid.uuid4().hex,
                "created_at": now(),
                "annotator": f"a{n // len(all_units)}" if n // len(all_units) < 50 else "ann",
                "role": "annotator",
                "task_id": 1,
                "run_id": u["run_id"],
                "item_id": u["item_id"],
                "category": u["category"],
                "gold_triple": u["gold_triple"],
                "answer_triple": u["answer_triple"],
                "gold_extracted": u["gold_extracted"],
                "answer_extracted": u["answer_extracted"],
                "verdict": rng.choice(["confirm", "reject"]),
                "replaces": None,
                "source": "bench",
            }
        )
    with store.transaction() as con:
        aq.insert_verdicts(con, rows)
    total = len(rows) + len(saves) + len(undos)
    reader = Store(store.path, read_only=True)

    def read(query: Callable[[duckdb.DuckDBPyConnection], object]) -> Callable[[], object]:
        def run() -> object:
            with reader.connect() as con:
                return query(con)

        return run

    for label, query in (
        ("verdicts in effect", lambda con: current_verdicts(con)),
        ("one queue's progress", lambda con: queue_progress(con, 1, "ann")),
        ("disagreements of the task", lambda con: disagreements(con, task_id=1)),
        ("final labels of the task", lambda con: final_labels(con, task_id=1)),
    ):
        print(f"(c) {label:<26} {_ms(_time(read(query), 10))}  ({total} log rows)")
    print(f"(d) Store.connect (read-only) {_ms(_time(read(lambda con: None), 20))}")
    bare = _time(lambda: duckdb.connect(str(store.path), read_only=True).close(), 20)
    print(f"(d) duckdb.connect + close    {_ms(bare)}")
    for fmt in ("csv", "parquet", "jsonl"):
        out = folder / f"log.{fmt}"
        start = time.perf_counter()
        export_verdicts(reader, out)
        exported = time.perf_counter() - start
        copy = folder / f"copy_{fmt}.duckdb"
        _build(copy, args.items)
        with Store(copy).transaction() as con:  # the same task id must exist there
            aq.insert_task(
                con, name=None, created_at=now(), annotators=["ann"], overlap=1, settings="{}"
            )
        start = time.perf_counter()
        report = import_verdicts(Store(copy), out)
        imported = time.perf_counter() - start
        print(
            f"(e) {fmt:<7} export {exported:6.2f} s, import {imported:6.2f} s "
            f"({report.added} rows, {out.stat().st_size / 1e6:.1f} MB)"
        )
    print_load("after")


if __name__ == "__main__":
    main()
