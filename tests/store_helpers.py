"""Small stored runs and released-run files for the store, importer, pipeline and CLI tests.

Everything here is made from a seeded vocabulary of a few words, so MiniLM encodes few strings.
Nothing is read from ``../shared/data``.
"""

from __future__ import annotations

import csv
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from s3kg_core.kg import SOURCES, Triple
from s3kg_core.stages.importing import RELEASE_LAYOUTS
from s3kg_core.store import queries
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store

REPO = Path(__file__).resolve().parents[1]

ENTITIES = (
    "aspirin",
    "fever",
    "headache",
    "ibuprofen",
    "inflammation",
    "patient",
    "doctor",
    "stomach",
)
RELATIONS = ("reduces", "treats", "causes", "is taken by", "irritates")


def random_triples(rng: random.Random, n: int, *, suffix: str = "") -> tuple[Triple, ...]:
    """``n`` distinct triples over the small vocabulary (entities get ``suffix`` appended)."""
    out: dict[Triple, None] = {}
    while len(out) < n:
        head, tail = rng.sample(ENTITIES, 2)
        out[Triple(head + suffix, rng.choice(RELATIONS), tail + suffix)] = None
    return tuple(out)


def build_store(
    path: Path,
    *,
    dataset: str = "toy",
    models: Sequence[str] = ("model-a", "model-b"),
    n_items: int = 4,
    n_triples: int = 3,
    seed: int = 0,
    distinct_per_item: bool = False,
) -> Store:
    """A database with one dataset, one run per model and answer / gold / context KGs per item.

    The answer KG shares its first triple with the gold KG and its second with the context KG,
    so the scores spread over (0, 1). ``distinct_per_item`` gives every item its own entity
    labels (more strings to encode: a slower, longer scoring job).
    """
    rng = random.Random(seed)
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, dataset, source="test")
        ids = store.upsert_items(
            con,
            ds,
            [
                ItemRecord(f"q{i}", f"question {i}?", f"context {i}.", f"gold {i}.")
                for i in range(n_items)
            ],
        )
        for model in models:
            run = store.ensure_run(con, ds, model, 0.0, "test")
            store.put_answers(
                con, run, [AnswerRecord(ids[f"q{i}"], f"{model} says {i}") for i in range(n_items)]
            )
            kgs = []
            for i in range(n_items):
                suffix = f" {i}" if distinct_per_item else ""
                gold = random_triples(rng, n_triples, suffix=suffix)
                context = random_triples(rng, n_triples + 1, suffix=suffix)
                extra = random_triples(rng, max(1, n_triples - 2), suffix=suffix)
                answer = tuple(dict.fromkeys((gold[0], context[0], *extra)))
                item = ids[f"q{i}"]
                kgs += [
                    KGRecord(run, item, "gold", gold),
                    KGRecord(run, item, "context", context),
                    KGRecord(run, item, "answer", answer),
                ]
            store.put_kgs(con, kgs)
    return store


def count(store: Store, table: str) -> int:
    """Rows of ``table`` (a fixed schema name, never user input)."""
    with store.connect() as con:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])


RELEASE_FIELDS = (
    "id",
    "question",
    "gold",
    "answer",
    "context",
    "kg_gold",
    "kg_answer",
    "kg_context",
)


def write_release_csv(
    path: Path, layout: str, rows: Sequence[dict[str, str]], *, reverse_columns: bool = False
) -> Path:
    """A released QA run file in ``layout`` (a key of the importer's layouts).

    ``rows`` use the logical names of :data:`RELEASE_FIELDS`.
    """
    columns = RELEASE_LAYOUTS[layout]
    order = list(reversed(RELEASE_FIELDS)) if reverse_columns else list(RELEASE_FIELDS)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([columns[f] for f in order])
        for row in rows:
            writer.writerow([row.get(f, "") for f in order])
    return path


def kg_cell(*triples: tuple[str, str, str], python: bool = False) -> str:
    """A KG cell as the released files write it (JSON, or Python literal with ``python``)."""
    if python:
        return str([list(t) for t in triples])
    return json.dumps([list(t) for t in triples])


def release_rows(n: int, *, start: int = 0) -> list[dict[str, str]]:
    """``n`` well-formed rows of a released run (three small KGs each)."""
    rows = []
    for i in range(start, start + n):
        rows.append(
            {
                "id": str(i),
                "question": f"What does aspirin do {i}?",
                "gold": f"Aspirin reduces fever {i}.",
                "answer": f"Aspirin treats headache {i}.",
                "context": f"Aspirin reduces fever and treats headache {i}.",
                "kg_gold": kg_cell(("aspirin", "reduces", "fever")),
                "kg_answer": kg_cell(("aspirin", "treats", "headache"), python=True),
                "kg_context": kg_cell(
                    ("aspirin", "reduces", "fever"), ("aspirin", "treats", "headache")
                ),
            }
        )
    return rows


# A second process that holds the write lock: it opens a transaction, writes, says "holding",
# waits, and (after the transaction commits and the file is closed) says "released".
HOLDER = """
import sys, time
from s3kg_core.store.records import ItemRecord
from s3kg_core.store.store import Store
path, n_rows, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[4])
hold, gap = float(sys.argv[3]), float(sys.argv[5])
store = Store(path, lock_timeout=60)
for r in range(rounds):
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "held")
        for i in range(n_rows):
            store.upsert_items(con, ds, [ItemRecord(f"r{r}-{i}", "q", "c", "g")])
            if i == 0:
                print("holding", flush=True)
            time.sleep(hold / n_rows)
    print("released", flush=True)
    time.sleep(gap)
print("done", flush=True)
"""


def start_lock_holder(
    path: Path, *, n_rows: int = 5, hold: float = 2.0, rounds: int = 1, gap: float = 0.0
) -> subprocess.Popen[str]:
    """Start a real second process writing ``rounds`` transactions of ``n_rows`` items to
    ``path``; return once it holds the lock (it has printed ``holding``)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path), str(n_rows), str(hold), str(rounds), str(gap)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "holding":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        raise AssertionError(f"lock holder did not start: {line!r} {err}")
    return proc


def special_store(path: Path) -> Store:
    """Two runs of four items; run 1 item 2 has an empty answer KG, run 1 item 3 an unparseable
    answer KG, run 2 item 4 an unparseable context KG."""
    store = build_store(path, n_items=4, n_triples=3, seed=1)
    with store.transaction() as con:
        store.put_kgs(
            con,
            [
                KGRecord(1, 2, "answer", (), "empty"),
                KGRecord(1, 3, "answer", (), "unparseable"),
                KGRecord(2, 4, "context", (), "unparseable"),
            ],
        )
    return store


def stored_components(store: Store, signature: str) -> dict[tuple[int, int], tuple]:
    """``{(run, item): (gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert,
    ctx_status)}`` of one signature's stored scores."""
    with store.connect() as con:
        rows = con.execute(
            "SELECT run_id, item_id, gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, "
            "ctx_status FROM scores WHERE signature = ?",
            [signature],
        ).fetchall()
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


# -- runs built to pass and to fail `s3kg check` -------------------------------------------------

CHECK_ITEMS = 16
UNRELATED = ("volcano", "lava", "ash", "glacier", "ocean", "storm")


def build_check_store(path: Path) -> Store:
    """A database for the comparison and the gates (score it before use).

    Dataset ``trial``, ``CHECK_ITEMS`` questions (ext ids ``0000``...), runs named:

    - ``baseline``: each answer KG holds two gold triples and one context triple;
    - ``steady``: the baseline's answers, one in four with another context triple instead
      of a gold one (a small change either way: the drop gates pass);
    - ``worse``: answer KGs of unrelated triples (every drop gate fails);
    - ``broken``: the baseline's answers, but questions ``0001`` and ``0002`` have an empty
      answer KG and ``0003`` a failed extraction (two become CUS 0, three unscorable);
    - ``twin``: two runs of that name (temperatures 0 and 1), for the ambiguity error.

    Dataset ``other`` has one run, ``elsewhere``, for the other-datasets error.
    """
    rng = random.Random(7)
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "trial", source="test")
        ids = store.upsert_items(
            con,
            ds,
            [
                ItemRecord(
                    f"{i:04d}", f"What does question {i} ask?", f"context {i}.", f"gold {i}."
                )
                for i in range(CHECK_ITEMS)
            ],
        )
        gold = {i: random_triples(rng, 3) for i in range(CHECK_ITEMS)}
        context = {i: tuple(dict.fromkeys((*gold[i], *random_triples(rng, 3)))) for i in gold}
        unrelated = {}
        for i in gold:
            pairs = [rng.sample(UNRELATED, 2) for _ in range(3)]
            unrelated[i] = tuple(Triple(head, "covers", tail) for head, tail in pairs)

        def answers(kind: str, i: int) -> tuple[Triple, ...]:
            if kind == "worse":
                return unrelated[i]
            if kind == "steady" and i % 4 == 0:
                return (gold[i][0], context[i][-1], context[i][-2])
            return (gold[i][0], gold[i][1], context[i][-1])

        runs = [("baseline", 0.0), ("steady", 0.0), ("worse", 0.0), ("broken", 0.0)]
        runs += [("twin", 0.0), ("twin", 1.0)]
        for name, temperature in runs:
            run = store.ensure_run(con, ds, f"org/{name}", temperature, "test", name=name)
            store.put_answers(
                con,
                run,
                [AnswerRecord(ids[f"{i:04d}"], f"{name} answer {i}") for i in range(CHECK_ITEMS)],
            )
            kgs = []
            for i in range(CHECK_ITEMS):
                item = ids[f"{i:04d}"]
                kind = "baseline" if name in ("twin",) else name
                answer = answers(kind, i)
                status = "ok"
                if name == "broken" and i in (1, 2):
                    answer, status = (), "empty"
                if name == "broken" and i == 3:
                    answer, status = (), "failed: the model's output is not JSON"
                kgs += [
                    KGRecord(run, item, "gold", gold[i]),
                    KGRecord(run, item, "context", context[i]),
                    KGRecord(run, item, "answer", answer, status),
                ]
            store.put_kgs(con, kgs)
        other = store.ensure_dataset(con, "other", source="test")
        other_ids = store.upsert_items(con, other, [ItemRecord("0000", "q?", "c.", "g.")])
        run = store.ensure_run(con, other, "org/elsewhere", 0.0, "test", name="elsewhere")
        store.put_answers(con, run, [AnswerRecord(other_ids["0000"], "a")])
        store.put_kgs(
            con,
            [
                KGRecord(run, other_ids["0000"], source, (Triple("aspirin", "reduces", "fever"),))
                for source in SOURCES
            ],
        )
    return store


def reblended_copy(store: Store, path: Path, alpha: float) -> Path:
    """A copy of ``store``'s file at ``path`` with every score re-blended at ``alpha`` (as
    ``s3kg score --alpha`` does): a stored alpha other than the default, for the outputs that
    must name it."""
    shutil.copy(store.path, path)
    copy = Store(path)
    with copy.transaction() as con:
        for signature in queries.signatures_by_recency(con):
            queries.set_score_alpha(con, signature, alpha)
    return path


def fill_disk(folder: Path) -> None:
    """Take every free byte of the file system of ``folder``."""
    with (folder / "filler").open("wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
