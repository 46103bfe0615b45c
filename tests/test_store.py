"""Tests of the DuckDB store (s3kg_core.store.store): schema, versions, errors, writes, locking."""

from __future__ import annotations

import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pytest
from store_helpers import build_store, count, fill_disk, start_lock_holder

from s3kg_core.errors import (
    ConfigError,
    CorruptDatabaseError,
    DatabaseError,
    DatabaseLockedError,
)
from s3kg_core.kg import Triple
from s3kg_core.store import grapheval_queries, queries
from s3kg_core.store.records import SOURCES, AnswerRecord, ItemRecord, KGRecord, ScoreRecord
from s3kg_core.store.schema import MIGRATIONS, SCHEMA_VERSION
from s3kg_core.store.store import Store

TABLES = {
    "meta",
    "datasets",
    "items",
    "runs",
    "answers",
    "kgs",
    "triples",
    "scores",
    "tau_results",
    "verdicts",
    "annotation_tasks",
    "task_items",
    "task_units",
    "tau_calibrations",
    "embeddings",
    "llm_cache",
    "bench_results",
    "grapheval_results",
    "grapheval_bench",
    "factuality_evals",
    "extra_columns",
}


def _tables(path: Path) -> set[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
    finally:
        con.close()


def _set_version(path: Path, value: str) -> None:
    con = duckdb.connect(str(path))
    try:
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [value])
    finally:
        con.close()


# -- schema and versions -------------------------------------------------------------------------


def test_first_open_creates_the_schema_and_records_its_version(tmp_path):
    path = tmp_path / "sub" / "new.duckdb"
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 9
    assert path.exists()
    assert _tables(path) >= TABLES
    con = duckdb.connect(str(path), read_only=True)
    rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
    con.close()
    applied = ",".join(str(v) for v in sorted(MIGRATIONS))
    assert rows == {"schema_version": str(SCHEMA_VERSION), "schema_migrations": applied}


def test_reopening_is_idempotent_and_keeps_data(tmp_path):
    path = tmp_path / "s.duckdb"
    build_store(path, n_items=2)
    before = {t: count(Store(path), t) for t in ("items", "runs", "answers", "kgs", "triples")}
    for _ in range(3):
        assert Store(path).schema_version() == SCHEMA_VERSION
        assert Store(path, read_only=True).schema_version() == SCHEMA_VERSION
    assert {t: count(Store(path), t) for t in before} == before
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("SELECT count(*) FROM meta").fetchall() == [(2,)]
    con.close()


@pytest.mark.parametrize("read_only", [False, True])
def test_newer_schema_version_is_refused(tmp_path, read_only):
    path = tmp_path / "future.duckdb"
    Store(path).schema_version()
    _set_version(path, str(SCHEMA_VERSION + 1))
    with (
        pytest.raises(CorruptDatabaseError, match="newer than this s3kg") as info,
        Store(path, read_only=read_only).connect(),
    ):
        pass
    assert str(path) in str(info.value)
    assert "upgrade" in str(info.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in str(info.value)


def test_a_version_1_file_with_answers_migrates_to_2_and_keeps_them(tmp_path):
    path = tmp_path / "v1.duckdb"
    con = duckdb.connect(str(path))
    for statement in MIGRATIONS[1]:
        con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.execute("INSERT INTO datasets (name) VALUES ('d')")
    con.execute("INSERT INTO runs (dataset_id, model, temperature, extractor) VALUES (1,'m',0,'x')")
    con.execute("INSERT INTO items (dataset_id, ext_id) VALUES (1, 'a'), (1, 'b'), (1, 'c')")
    con.execute(
        "INSERT INTO answers (run_id, item_id, answer, error) VALUES "
        "(1, 1, 'yes', NULL), (1, 2, '  ', NULL), (1, 3, NULL, 'HTTP 500')"
    )
    con.execute("INSERT INTO kgs VALUES (1, 1, 'gold', 'ok', 0, 0)")
    con.close()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    with store.connect() as con:
        rows = con.execute(
            "SELECT item_id, answer, status, truncated FROM answers ORDER BY item_id"
        ).fetchall()
        kgs = store.load_kgs(con)
    assert rows == [(1, "yes", "ok", False), (2, "  ", "empty", False), (3, None, "error", False)]
    assert kgs[(1, 1, "gold")].truncated is False


def test_a_version_2_file_migrates_to_3_and_gains_bench_results(tmp_path):
    path = tmp_path / "v2.duckdb"
    con = duckdb.connect(str(path))
    for version in (1, 2):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.execute("INSERT INTO datasets (name) VALUES ('kept')")
    con.close()
    assert "bench_results" not in _tables(path)
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert "bench_results" in _tables(path)
    with store.connect() as con:
        assert con.execute("SELECT name FROM datasets").fetchall() == [("kept",)]


def test_a_version_3_file_migrates_to_4_and_gains_the_grapheval_and_factuality_tables(tmp_path):
    path = tmp_path / "v3.duckdb"
    con = duckdb.connect(str(path))
    for version in (1, 2, 3):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '3')")
    con.execute("INSERT INTO datasets (name) VALUES ('kept')")
    con.close()
    new = {"grapheval_results", "grapheval_bench", "factuality_evals"}
    assert not new & _tables(path)
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    assert new <= _tables(path)
    with store.connect() as con:
        assert con.execute("SELECT name FROM datasets").fetchall() == [("kept",)]


def test_a_migration_numbered_below_the_file_s_version_still_runs_once(tmp_path, monkeypatch):
    """Branches add migrations in parallel: one merged later may carry a lower number than one
    a file already has. It must run (once), not be skipped because the version is higher."""
    import s3kg_core.store.store as store_module

    gap, top = SCHEMA_VERSION + 1, SCHEMA_VERSION + 2
    path = tmp_path / "gap.duckdb"
    later = {**MIGRATIONS, top: ("CREATE TABLE IF NOT EXISTS probe_top (x INTEGER)",)}
    monkeypatch.setattr(store_module, "MIGRATIONS", later)
    monkeypatch.setattr(store_module, "SCHEMA_VERSION", top)
    assert Store(path).schema_version() == top
    assert "probe_top" in _tables(path) and "probe_gap" not in _tables(path)
    both = {**later, gap: ("CREATE TABLE probe_gap (x INTEGER)",)}  # no IF NOT EXISTS: once only
    monkeypatch.setattr(store_module, "MIGRATIONS", both)
    with pytest.raises(DatabaseError, match=f"migrations {gap} to run"):
        Store(path, read_only=True).schema_version()
    assert Store(path).schema_version() == top
    assert "probe_gap" in _tables(path)
    assert Store(path).schema_version() == top  # a third open runs nothing again
    con = duckdb.connect(str(path), read_only=True)
    applied = con.execute("SELECT value FROM meta WHERE key = 'schema_migrations'").fetchall()
    con.close()
    assert applied == [(",".join(str(v) for v in sorted(both)),)]
    # this build without the gap's migration: the file applied one it does not know
    monkeypatch.setattr(store_module, "MIGRATIONS", later)
    with pytest.raises(CorruptDatabaseError, match="newer than this s3kg"):
        Store(path).schema_version()


def test_a_version_4_file_migrates_to_5_with_run_names_and_answer_model_ids(tmp_path):
    """Issue 29: a run collected from a local folder was shown under the folder's whole path;
    migration 5 gives every run a display name (the model's short name) and answers a model
    id and finish reason."""
    path = tmp_path / "v4.duckdb"
    con = duckdb.connect(str(path))
    for version in (1, 2, 3, 4):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '4')")
    con.execute("INSERT INTO datasets (name) VALUES ('d')")
    models = ["/root/.cache/s3kg/models/smollm2-135m-instruct", "org/Model-7B/", "gpt-4o"]
    for i, model in enumerate(models):
        con.execute(
            "INSERT INTO runs (dataset_id, model, temperature, extractor) VALUES (1, ?, ?, 'x')",
            [model, float(i)],
        )
    con.close()
    store = Store(path)
    with store.transaction() as con:
        names = con.execute("SELECT name FROM runs ORDER BY run_id").fetchall()
        ds = store.ensure_dataset(con, "d")
        ids = store.upsert_items(con, ds, [ItemRecord("q", "Why?")])
        fresh = store.ensure_run(con, ds, "/tmp/models/my-llm", 0.0, "none")
        named = store.ensure_run(con, ds, "/tmp/models/my-llm", 0.5, "none", name="mine")
        store.put_answers(
            con,
            fresh,
            [AnswerRecord(ids["q"], "a", model_id="served-id", finish_reason="length")],
        )
        row = con.execute("SELECT model_id, finish_reason FROM answers").fetchone()
        shown = queries.run_overview(con).set_index("run_id")["model"].to_dict()
    assert names == [("smollm2-135m-instruct",), ("Model-7B",), ("gpt-4o",)]
    assert row == ("served-id", "length")
    assert shown[fresh] == "my-llm" and shown[named] == "mine"


def test_a_version_5_file_migrates_to_7_and_keeps_its_rows(tmp_path):
    """Issue 32: migration 7 (the imported files' extra columns) runs on a file at version 5,
    after migration 6, which another branch added meanwhile."""
    path = tmp_path / "v5.duckdb"
    con = duckdb.connect(str(path))
    for version in (1, 2, 3, 4, 5):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '5')")
    con.execute("INSERT INTO datasets (name) VALUES ('kept')")
    con.close()
    assert "extra_columns" not in _tables(path)
    with pytest.raises(DatabaseError, match="migrations 6, 7, 8, 9 to run"):
        Store(path, read_only=True).schema_version()
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION == 9
    assert "extra_columns" in _tables(path)
    with store.connect() as con:
        assert con.execute("SELECT name FROM datasets").fetchall() == [("kept",)]
        applied = store.get_meta(con, "schema_migrations")
    assert applied == ",".join(str(v) for v in sorted(MIGRATIONS))
    assert Store(path, read_only=True).schema_version() == 9


def test_a_version_7_file_s_statuses_are_renamed_by_the_kg_they_are_about(tmp_path):
    """Issue 31: ``empty_kg_1`` in ``gold_status`` read as "the gold KG is empty" where it meant
    the answer's. Migration 8 renames the stored values (in one transaction with the version)."""
    path = tmp_path / "v7.duckdb"
    con = duckdb.connect(str(path))
    for version in range(1, 8):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '7')")
    old = [
        ("ok", "ok"),
        ("empty_kg_1", "empty_kg_1"),
        ("empty_kg_2", "ok"),
        ("ok", "empty_kg_2"),
        ("empty_kgs", "empty_kgs"),
        ("unparseable_kg_1", "unparseable_kg_2"),
        ("oversized_kg_2", "oversized_kg_1"),
        ("gold_kg_empty", "something_else"),  # new names and unknown ones are left alone
    ]
    for item, (gold, ctx) in enumerate(old):
        con.execute(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
            "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "VALUES (1, ?, 'sig', 'hybrid', 0.5, 0, 0, ?, 0, 0, ?)",
            [item, gold, ctx],
        )
    con.close()
    store = Store(path)
    assert store.schema_version() == 9
    with store.connect() as con:
        rows = con.execute("SELECT gold_status, ctx_status FROM scores ORDER BY item_id").fetchall()
    assert rows == [
        ("ok", "ok"),
        ("answer_kg_empty", "answer_kg_empty"),
        ("gold_kg_empty", "ok"),
        ("ok", "context_kg_empty"),
        ("answer_and_gold_kgs_empty", "answer_and_context_kgs_empty"),
        ("answer_kg_unparseable", "context_kg_unparseable"),
        ("gold_kg_oversized", "answer_kg_oversized"),
        ("gold_kg_empty", "something_else"),
    ]


def test_a_version_8_file_s_swapped_entity_mismatches_are_counted_as_roles_swapped(tmp_path):
    """TAU's roles swapped became a category: migration 9 adds ``n_roles_swapped`` and moves the
    stored entity mismatches with parts "swapped" there (the JSON is read as such on load)."""
    import json

    from s3kg_core.scoring.tau import TauResult

    path = tmp_path / "v8.duckdb"
    con = duckdb.connect(str(path))
    for version in range(1, 9):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    con.execute("INSERT INTO meta VALUES ('schema_version', '8')")

    def mismatch(answer: list[str], parts: str) -> dict:
        return {"gold": ["d", "r", "e"], "answer": answer, "kind": "entity", "parts": parts,
                "similarity": 0.9}  # fmt: skip

    results = [
        {
            "entity_mismatch": [
                mismatch(["e", "r", "d"], "swapped"),
                mismatch(["d", "r", "f"], "tail"),
            ]
        },
        {"entity_mismatch": [mismatch(["f", "r", "e"], "head")]},
        {},
    ]
    for item, result in enumerate(results):
        n = len(result.get("entity_mismatch", []))
        con.execute(
            "INSERT INTO tau_results VALUES (1, ?, 's', 'cus', 0.05, 0.5, 0.1, 0, 0, ?, 0, 0, ?)",
            [item, n, json.dumps(result)],
        )
    con.close()
    store = Store(path)
    assert store.schema_version() == 9
    with store.connect() as con:
        rows = con.execute(
            "SELECT n_entity_mismatch, n_roles_swapped, result FROM tau_results ORDER BY item_id"
        ).fetchall()
        for statement in MIGRATIONS[9]:  # a second run moves nothing more
            con.execute(statement)
        again = con.execute(
            "SELECT n_entity_mismatch, n_roles_swapped FROM tau_results ORDER BY item_id"
        ).fetchall()
    assert [r[:2] for r in rows] == [(1, 1), (1, 0), (0, 0)] == again
    first = TauResult.from_dict(json.loads(rows[0][2]))
    assert first.counts()["entity_mismatch"] == first.counts()["roles_swapped"] == 1


def test_bench_results_are_replaced_by_key(tmp_path):
    from s3kg_core.store.schema import BENCH_COLUMNS

    store = Store(tmp_path / "b.duckdb")
    row = ("paws", 4, "minilm", "paper", "released", "s3kg", 0.8, 0.9, 0.3, 0.5)
    row += (0.7, 0.9, 0.8, 1.0, "{}")
    assert len(row) == len(BENCH_COLUMNS)
    with store.transaction() as con:
        assert store.put_bench_results(con, [row]) == 1
        assert store.put_bench_results(con, []) == 0
    with store.transaction() as con:
        store.put_bench_results(con, [(*row[:6], 0.85, *row[7:])])
        store.put_bench_results(con, [(*row[:5], "rouge1", *row[6:8], None, *row[9:])])
    with store.connect() as con:
        rows = store.get_bench_results(con)
        assert store.get_bench_results(con, "other") == []
    assert [(r["method"], r["f1"], r["alpha"]) for r in rows] == [
        ("rouge1", 0.8, None),
        ("s3kg", 0.85, 0.3),
    ]
    assert rows[0]["run_at"] is not None


def test_answer_and_kg_records_keep_status_and_truncation(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        ids = store.upsert_items(con, ds, [ItemRecord("a"), ItemRecord("b")])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        store.put_answers(
            con,
            run,
            [
                AnswerRecord(ids["a"], "long answer", truncated=True),
                AnswerRecord(ids["b"], None, status="refused", error="policy"),
            ],
        )
        store.put_kgs(con, [KGRecord(run, ids["a"], "context", (), "empty", 2, truncated=True)])
    with store.connect() as con:
        rows = con.execute(
            "SELECT status, truncated, error FROM answers ORDER BY item_id"
        ).fetchall()
        kg = store.load_kgs(con)[(run, ids["a"], "context")]
    assert rows == [("ok", True, None), ("refused", False, "policy")]
    assert (kg.status, kg.n_dropped, kg.truncated) == ("empty", 2, True)


def test_plain_duckdb_file_is_migrated_by_a_writer_and_refused_by_a_reader(tmp_path):
    path = tmp_path / "plain.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE unrelated (x INTEGER)")
    con.close()
    with pytest.raises(DatabaseError, match="schema version 0") as info:
        Store(path, read_only=True).schema_version()
    assert "s3kg score" in str(info.value) and str(path) in str(info.value)
    assert Store(path).schema_version() == SCHEMA_VERSION
    assert _tables(path) >= TABLES | {"unrelated"}


@pytest.mark.parametrize("content", [b"this is not a database\n" * 200, b""], ids=["text", "empty"])
@pytest.mark.parametrize("read_only", [False, True])
def test_non_duckdb_file_is_a_corrupt_database_error_naming_the_path(tmp_path, content, read_only):
    path = tmp_path / "notes.duckdb"
    path.write_bytes(content)
    with pytest.raises(CorruptDatabaseError) as info:
        Store(path, read_only=read_only).schema_version()
    message = str(info.value)
    assert str(path) in message
    assert "not a DuckDB database" in message and "re-import" in message
    assert path.read_bytes() == content  # untouched


def _truncated(path: Path, fraction: float) -> bytes:
    """A real database file cut to ``fraction`` of its size; the bytes left."""
    build_store(path, n_items=2)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path.read_bytes()


DAMAGED = "is not a readable DuckDB database (truncated or damaged)"


@pytest.mark.parametrize("fraction", [0.5, 0.001], ids=["half", "header"])
@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
def test_a_truncated_file_is_a_corrupt_database_error(tmp_path, fraction, read_only):
    # Regression (issue 17, D10b): a file cut to half its size raised _duckdb.IOException ("Could
    # not read enough bytes") from the first query, a traceback in the CLI and the dashboard.
    path = tmp_path / "cut.duckdb"
    left = _truncated(path, fraction)
    with (
        pytest.raises(CorruptDatabaseError) as info,
        Store(path, read_only=read_only).connect() as con,
    ):
        con.execute("SELECT count(*) FROM kgs").fetchall()
    assert str(info.value) == (
        f"{path} {DAMAGED}; restore it from a backup, or move it aside and re-import into a "
        "new file"
    )
    assert path.read_bytes() == left  # untouched


def test_a_truncated_file_fails_a_transaction_with_the_same_error(tmp_path):
    path = tmp_path / "cut.duckdb"
    _truncated(path, 0.5)
    store = Store(path)
    with (
        pytest.raises(CorruptDatabaseError, match="truncated or damaged"),
        store.transaction() as con,
    ):
        store.ensure_dataset(con, "x")
    build_store(tmp_path / "good.duckdb", n_items=1)  # the process can still open other files
    assert count(Store(tmp_path / "good.duckdb"), "items") == 1


@pytest.mark.parametrize("read_only", [False, True], ids=["read-write", "read-only"])
def test_a_file_with_damaged_blocks_is_a_corrupt_database_error(tmp_path, read_only):
    path = tmp_path / "bad.duckdb"
    build_store(path, n_items=2)
    data = bytearray(path.read_bytes())
    data[4096:12288] = bytes(b ^ 0x55 for b in data[4096:12288])  # DuckDB's header blocks
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptDatabaseError, match=re.escape(f"{DAMAGED}; restore it from a")):
        Store(path, read_only=read_only).schema_version()


def test_read_only_open_of_a_missing_file_says_to_import_first(tmp_path):
    path = tmp_path / "missing" / "none.duckdb"
    with pytest.raises(DatabaseError) as info:
        Store(path, read_only=True).schema_version()
    assert not isinstance(info.value, DatabaseLockedError | CorruptDatabaseError)
    assert str(path) in str(info.value)
    assert "does not exist" in str(info.value) and "s3kg import" in str(info.value)
    assert not path.exists() and not path.parent.exists()


def test_a_read_only_store_refuses_transactions(tmp_path):
    path = tmp_path / "ro.duckdb"
    Store(path).schema_version()
    with pytest.raises(DatabaseError, match="read-only"), Store(path, read_only=True).transaction():
        pass


# -- writes --------------------------------------------------------------------------------------


def test_transaction_rolls_back_everything_on_an_exception(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    with pytest.raises(RuntimeError, match="boom"), store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord("a", "q")])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        store.put_answers(con, run, [AnswerRecord(ids["a"], "ans")])
        store.put_kgs(con, [KGRecord(run, ids["a"], "gold", (Triple("a", "r", "b"),))])
        store.put_embeddings(con, "enc", [("a r b", np.ones(4))])
        raise RuntimeError("boom")
    for table in ("datasets", "items", "runs", "answers", "kgs", "triples", "embeddings"):
        assert count(store, table) == 0, table
    assert store.schema_version() == SCHEMA_VERSION  # the migration itself was committed


def test_ensure_dataset_and_run_are_idempotent(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy", source="a")
        assert store.ensure_dataset(con, "toy", source="b") == ds
        run = store.ensure_run(con, ds, "m", 0.0, "x", settings={"k": 1})
        assert store.ensure_run(con, ds, "m", 0, "x") == run
        assert store.ensure_run(con, ds, "m", 0.7, "x") != run
        assert store.ensure_run(con, ds, "m", 0.0, "y") != run
    assert count(store, "datasets") == 1
    assert count(store, "runs") == 3


def test_upsert_items_last_wins_and_keeps_ids(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        other = store.ensure_dataset(con, "other")
        first = store.upsert_items(
            con,
            ds,
            [ItemRecord("a", "q1", "c1", "g1"), ItemRecord("b", "qb"), ItemRecord("a", "q2")],
        )
        assert sorted(first) == ["a", "b"]
        store.upsert_items(con, other, [ItemRecord("a", "elsewhere")])
        second = store.upsert_items(con, ds, [ItemRecord("a", "q3", "c3", "g3")])
        assert second == {"a": first["a"]}
    with store.connect() as con:
        rows = con.execute(
            "SELECT ext_id, question, context, gold_answer FROM items WHERE dataset_id = ? "
            "ORDER BY ext_id",
            [ds],
        ).fetchall()
    assert rows == [("a", "q3", "c3", "g3"), ("b", "qb", None, None)]
    assert count(store, "items") == 3


def test_put_answers_replaces_by_run_and_item(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord("a"), ItemRecord("b")])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        assert store.put_answers(con, run, []) == 0
        store.put_answers(con, run, [AnswerRecord(ids["a"], "old"), AnswerRecord(ids["b"], "b")])
        store.put_answers(con, run, [AnswerRecord(ids["a"], "new", seed=3, error=None)])
        rows = con.execute("SELECT item_id, answer, seed FROM answers ORDER BY item_id").fetchall()
    assert rows == [(ids["a"], "new", 3), (ids["b"], "b", None)]


def test_put_kgs_replaces_triples_and_load_kgs_keeps_their_order(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    zebra = (Triple("zebra", "eats", "grass"), Triple("ant", "is", "small"), Triple("m", "r", "b"))
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord("a"), ItemRecord("b")])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        run2 = store.ensure_run(con, ds, "m2", 0.0, "x")
        a, b = ids["a"], ids["b"]
        store.put_kgs(
            con,
            [
                KGRecord(run, a, "answer", zebra),
                KGRecord(run, a, "gold", zebra[:2]),
                KGRecord(run, b, "context", (), "unparseable"),
                KGRecord(run2, a, "answer", zebra[1:], n_dropped=2),
            ],
        )
        assert store.put_kgs(con, [KGRecord(run, a, "answer", (Triple("x", "y", "z"),))]) == 1
        assert store.put_kgs(con, []) == 0
        with pytest.raises(ValueError, match="source must be one of"):
            store.put_kgs(con, [KGRecord(run, a, "question", ())])
    with store.connect() as con:
        kgs = store.load_kgs(con)
        only_2 = store.load_kgs(con, [run2])
        none = store.load_kgs(con, [])
        n_rows = con.execute(
            "SELECT n_triples FROM kgs WHERE run_id = ? AND item_id = ? AND source = 'answer'",
            [run, a],
        ).fetchall()
    assert set(kgs) == {
        (run, a, "answer"),
        (run, a, "gold"),
        (run, b, "context"),
        (run2, a, "answer"),
    }
    assert kgs[(run, a, "answer")].triples == (Triple("x", "y", "z"),)
    assert n_rows == [(1,)]
    assert kgs[(run, a, "gold")].triples == zebra[:2]  # insertion order, not sorted
    assert kgs[(run, b, "context")] == KGRecord(run, b, "context", (), "unparseable", 0)
    assert only_2 == {(run2, a, "answer"): KGRecord(run2, a, "answer", zebra[1:], "ok", 2)}
    assert none == {}
    assert count(store, "triples") == 1 + 2 + 2


def _results_of(con, run: int, item: int) -> None:
    """A score and a TAU row for ``(run, item)``, as ``s3kg score`` and ``s3kg tau`` store them."""
    Store.put_scores(
        con, [ScoreRecord(run, item, "sig", "paper", 0.5, 0.0, 0.0, "ok", 0.0, 0.0, "ok")]
    )
    con.execute(
        "INSERT INTO tau_results VALUES (?, ?, 'sig', 'cus', 0.05, 0.5, 0, 0, 0, 0, 0, 0, '{}', 0)",
        [run, item],
    )


def _scored_items(con) -> dict[str, list[int]]:
    return {
        table: [r[0] for r in con.execute(f"SELECT item_id FROM {table} ORDER BY 1").fetchall()]
        for table in ("scores", "tau_results")
    }


def _detected(con, run: int, item: int) -> None:
    """A GraphEval detection for ``(run, item)``, as ``s3kg grapheval detect`` stores it."""
    grapheval_queries.put_grapheval_result(
        con, run_id=run, item_id=item, checker="support", extractor="x", inconsistent=True,
        raw_probability=None, n_triples=1, n_flagged=1, detail="{}", signature="checker:support",
    )  # fmt: skip


def _detected_items(con, run: int) -> list[int]:
    return sorted(grapheval_queries.checked_item_ids(con, run, "support", "x"))


def test_detections_go_when_the_answer_or_its_kg_changes_not_the_gold_kg(tmp_path):
    """Regression: GraphEval's verdicts outlived a changed answer or answer KG, so a rerun of
    ``grapheval detect`` skipped the item ("already done") and showed a verdict about
    another text."""
    store = Store(tmp_path / "t.duckdb")
    one, two = (Triple("a", "r", "b"),), (Triple("c", "r", "d"),)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord(x) for x in "abcd"])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        a, b, c, d = (ids[x] for x in "abcd")
        store.put_answers(con, run, [AnswerRecord(i, "text") for i in (a, b, c, d)])
        store.put_kgs(con, [KGRecord(run, i, s, one) for i in (a, b, c, d) for s in SOURCES])
        for item in (a, b, c, d):
            _detected(con, run, item)
        store.put_kgs(
            con,
            [
                KGRecord(run, a, "answer", one),  # unchanged: keeps its verdict
                KGRecord(run, b, "answer", two),  # another answer KG: the verdict goes
                KGRecord(run, c, "gold", two),  # the gold KG plays no part in GraphEval
            ],
        )
        assert _detected_items(con, run) == [a, c, d]
        store.put_answers(con, run, [AnswerRecord(d, "another text"), AnswerRecord(a, "text")])
        assert _detected_items(con, run) == [a, c]


def test_put_kgs_drops_the_scores_and_tau_of_items_whose_kgs_changed_d3(tmp_path):
    """Issue 17 (D3): re-importing corrected KGs kept the old scores, so ``score`` skipped the
    answers ("9 already done") and ``cus`` reported the stale 0 of a KG that now parses."""
    store = Store(tmp_path / "t.duckdb")
    one = (Triple("a", "r", "b"),)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord(x) for x in "abcde"])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        a, b, c, d, e = (ids[x] for x in "abcde")
        store.put_kgs(
            con,
            [
                KGRecord(run, a, "answer", one),
                KGRecord(run, b, "answer", (), "unparseable"),
                KGRecord(run, c, "answer", one),
                KGRecord(run, d, "answer", one + one),
            ],
        )
        for item in (a, b, c, d, e):
            _results_of(con, run, item)
        store.put_kgs(
            con,
            [
                KGRecord(run, a, "answer", one),  # unchanged: keeps its results
                KGRecord(run, b, "answer", one),  # now parses
                KGRecord(run, c, "answer", one, "empty"),  # another status
                KGRecord(run, d, "answer", one),  # another triple list
                KGRecord(run, e, "gold", one),  # a KG it did not have
            ],
        )
        assert _scored_items(con) == {"scores": [a], "tau_results": [a]}


def test_put_answers_with_another_text_drops_its_kgs_scores_and_tau_d3(tmp_path):
    """Issue 17 (D3): whatever changes an answer changes its KGs; the KGs, scores and TAU rows
    made from the old text go, those of an answer written again unchanged stay."""
    store = Store(tmp_path / "t.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord("a"), ItemRecord("b"), ItemRecord("c")])
        run = store.ensure_run(con, ds, "m", 0.0, "x")
        a, b, c = ids["a"], ids["b"], ids["c"]
        store.put_answers(
            con, run, [AnswerRecord(a, "same"), AnswerRecord(b, "old"), AnswerRecord(c, None)]
        )
        store.put_kgs(
            con, [KGRecord(run, i, s, (Triple("x", "y", "z"),)) for i in (a, b, c) for s in SOURCES]
        )
        for item in (a, b, c):
            _results_of(con, run, item)
        store.put_answers(
            con, run, [AnswerRecord(a, "same"), AnswerRecord(b, "new"), AnswerRecord(c, "now")]
        )
        kgs = con.execute("SELECT DISTINCT item_id FROM kgs ORDER BY 1").fetchall()
        triples = con.execute("SELECT DISTINCT item_id FROM triples ORDER BY 1").fetchall()
        assert kgs == triples == [(a,)]
        assert _scored_items(con) == {"scores": [a], "tau_results": [a]}


def test_put_scores_replaces_by_signature(tmp_path):
    store = Store(tmp_path / "t.duckdb")

    def record(sig: str, wl: float) -> ScoreRecord:
        return ScoreRecord(1, 1, sig, "paper", 0.5, wl, 0.5, "ok", 0.1, 0.2, "ok", "{}", None)

    with store.transaction() as con:
        assert store.put_scores(con, []) == 0
        store.put_scores(con, [record("s1", 0.1), record("s2", 0.2)])
        store.put_scores(con, [record("s1", 0.9)])
        rows = con.execute("SELECT signature, gold_s_wl FROM scores ORDER BY signature").fetchall()
    assert rows == [("s1", 0.9), ("s2", 0.2)]


def test_embeddings_round_trip_as_float32_and_first_write_wins(tmp_path):
    store = Store(tmp_path / "t.duckdb")
    rng = np.random.default_rng(0)
    vectors = {f"text {i}": rng.standard_normal(384).astype(np.float32) for i in range(5)}
    vectors["ünïcode 'quoted' text"] = rng.standard_normal(384).astype(np.float32)
    with store.transaction() as con:
        assert store.put_embeddings(con, "enc-a", vectors.items()) == 6
        assert store.put_embeddings(con, "enc-a", [("text 0", np.zeros(384))]) == 1
        store.put_embeddings(con, "enc-b", [("text 0", np.ones(384, dtype=np.float64))])
        assert store.put_embeddings(con, "enc-a", []) == 0
    with store.connect() as con:
        got = dict(store.load_embeddings(con, "enc-a"))
        other = dict(store.load_embeddings(con, "enc-b"))
        assert dict(store.load_embeddings(con, "nobody")) == {}
    assert set(got) == set(vectors)
    for text, vec in vectors.items():
        assert got[text].dtype == np.float32
        assert np.array_equal(got[text], vec), text  # bit for bit, and the first write kept
    assert np.array_equal(other["text 0"], np.ones(384, dtype=np.float32))


# -- two processes -------------------------------------------------------------------------------


def test_reader_gets_a_clear_lock_error_then_reads_once_the_writer_is_done(tmp_path):
    path = tmp_path / "locked.duckdb"
    Store(path).schema_version()
    holder = start_lock_holder(path, n_rows=20, hold=2.5)
    try:
        started = time.monotonic()
        with (
            pytest.raises(DatabaseLockedError) as info,
            Store(path, read_only=True, lock_timeout=0.5).connect(),
        ):
            pass
        assert time.monotonic() - started < 2.5
        message = str(info.value)
        assert str(path) in message
        assert "locked by another process" in message
        assert "wait for it to finish" in message and "retry" in message
        # a writer is refused the same way
        with pytest.raises(DatabaseLockedError), Store(path, lock_timeout=0.2).transaction():
            pass
        with Store(path, read_only=True, lock_timeout=30).connect() as con:
            rows = con.execute("SELECT count(*) FROM items").fetchall()[0][0]
        assert rows == 20  # all of the writer's transaction, never part of it
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0, holder.stderr.read() if holder.stderr else ""


def test_polling_reader_never_sees_a_torn_write(tmp_path):
    path = tmp_path / "torn.duckdb"
    Store(path).schema_version()
    n_rows, rounds = 8, 3
    holder = start_lock_holder(path, n_rows=n_rows, hold=0.3, rounds=rounds, gap=0.15)
    seen: list[int] = []
    locked = 0
    try:
        while holder.poll() is None or not seen or seen[-1] != n_rows * rounds:
            try:
                with Store(path, read_only=True, lock_timeout=0.02).connect() as con:
                    seen.append(con.execute("SELECT count(*) FROM items").fetchall()[0][0])
            except DatabaseLockedError:
                locked += 1
            time.sleep(0.01)
            if len(seen) + locked > 5000:
                break
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0, holder.stderr.read() if holder.stderr else ""
    assert locked > 0
    assert seen and seen[-1] == n_rows * rounds
    assert all(n % n_rows == 0 for n in seen), sorted(set(seen))
    assert seen == sorted(seen)
    assert len(set(seen)) >= 2  # it read between the writer's transactions too


def test_put_embeddings_is_a_bulk_insert(tmp_path):
    # Regression: row-by-row executemany took ~4 ms a vector, so a scoring batch with tens of
    # thousands of new strings held the write lock for minutes and readers timed out.
    import time

    import numpy as np

    store = Store(tmp_path / "e.duckdb")
    vecs = np.random.default_rng(0).random((20_000, 384), dtype=np.float32)
    start = time.perf_counter()
    with store.transaction() as con:
        assert (
            store.put_embeddings(con, "enc", ((f"t{i}", v) for i, v in enumerate(vecs))) == 20_000
        )
    elapsed = time.perf_counter() - start
    with store.connect() as con:
        back = dict(store.load_embeddings(con, "enc"))
    assert len(back) == 20_000
    np.testing.assert_array_equal(back["t7"], vecs[7])
    assert elapsed < 30  # row by row this took ~80 s; bulk takes about 1 s


# -- a full disk, a read-only file system (issue 28, item 6) ---------------------------------------


def _items(n: int, size: int = 2000) -> list[ItemRecord]:
    return [ItemRecord(f"q{i}", "why?" * size, "ctx", "gold") for i in range(n)]


def test_a_full_disk_is_one_database_error_naming_the_file_and_keeps_the_file_readable(
    small_disk,
):
    """Regression: a full disk gave DuckDB's TransactionException / FatalException traceback."""
    db = small_disk / "runs.duckdb"
    store = Store(db)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        store.upsert_items(con, ds, _items(3, 10))
    fill_disk(small_disk)
    with pytest.raises(DatabaseError) as info, store.transaction() as con:
        store.upsert_items(con, ds, _items(200))
    message = str(info.value)
    assert message.startswith(f"cannot write database {db}: the disk is full")
    assert "\n" not in message and "free space on its disk" in message
    assert type(info.value.__cause__).__module__.startswith(("duckdb", "_duckdb"))
    with Store(db, read_only=True).connect() as con:  # what was committed is still there
        assert con.execute("SELECT count(*) FROM items").fetchone() == (3,)


def test_a_read_only_file_system_is_one_database_error(small_disk):
    import subprocess

    db = small_disk / "runs.duckdb"
    with Store(db).transaction() as con:
        Store.ensure_dataset(con, "toy")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    read_only = r"its file system is read-only; .*open it read-only"
    with pytest.raises(DatabaseError, match=read_only), Store(db).transaction() as con:
        Store.ensure_dataset(con, "other")
    with Store(db, read_only=True).connect() as con:
        assert con.execute("SELECT name FROM datasets").fetchall() == [("toy",)]


class _FailingCommit:
    """A DuckDB connection whose COMMIT fails as DuckDB's does on a full disk."""

    def __init__(self, con, exc):
        self._con, self._exc = con, exc

    def execute(self, sql, *args):
        if sql == "COMMIT":
            raise self._exc
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (
            duckdb.TransactionException(
                'TransactionContext Error: Failed to commit: Could not write file "{db}.wal": '
                "No space left on device"
            ),
            "cannot write database {db}: the disk is full (No space left on device); what was "
            "saved before is kept and the file stays readable: free space on its disk (or use a "
            "database on another disk), then rerun",
        ),
        (
            duckdb.FatalException("FATAL Error: Failed to flush the write-ahead log\nmore"),
            "cannot write database {db}: FATAL Error: Failed to flush the write-ahead log",
        ),
    ],
    ids=["disk-full", "fatal"],
)
def test_write_errors_at_the_commit_become_one_line(tmp_path, monkeypatch, exc, expected):
    """The same translation without a small file system: DuckDB's error injected at COMMIT."""
    from s3kg_core.store import store as store_module

    db = tmp_path / "runs.duckdb"
    Store(db).schema_version()
    real = store_module.opened_for_writing

    @contextmanager
    def failing(database):
        with real(database) as con:
            yield _FailingCommit(con, type(exc)(str(exc).format(db=db)))

    monkeypatch.setattr(store_module, "opened_for_writing", failing)
    with pytest.raises(DatabaseError) as info, Store(db).transaction() as con:
        Store.ensure_dataset(con, "toy")
    assert str(info.value) == expected.format(db=db)


def test_load_kgs_of_reads_those_answers_as_load_kgs_does(tmp_path):
    store = build_store(tmp_path / "s.duckdb", n_items=4, n_triples=3, seed=2)
    with store.connect() as con:
        every = store.load_kgs(con)
        some = store.load_kgs_of(con, [(1, 2), (2, 4), (9, 9)])
        assert store.load_kgs_of(con, []) == {}
    assert some == {k: v for k, v in every.items() if (k[0], k[1]) in {(1, 2), (2, 4)}}
    assert {k[2] for k in some} == {"answer", "gold", "context"}


def test_load_kgs_of_reads_only_the_sources_asked(tmp_path):
    store = build_store(tmp_path / "s.duckdb", n_items=4, n_triples=3, seed=2)
    with store.connect() as con:
        every = store.load_kgs_of(con, [(1, 2), (2, 4)])
        two = store.load_kgs_of(con, [(1, 2), (2, 4)], ("gold", "answer"))
        assert store.load_kgs_of(con, [(1, 2)], ()) == {}
    assert two == {k: v for k, v in every.items() if k[2] != "context"}
    assert len(two) == 4


def test_a_run_is_renamed_in_place_and_bad_names_are_refused(tmp_path):
    """Issue 31: the Run page renames a run (its id, and so its links, stay)."""
    from s3kg_core.errors import ConfigError, RunSelectionError
    from s3kg_core.store.run_queries import MAX_RUN_NAME, rename_run

    store = Store(tmp_path / "r.duckdb")
    with store.transaction() as con:
        run = store.ensure_run(con, store.ensure_dataset(con, "d"), "org/m", 0.7, "x")
        assert rename_run(con, run, "  <b>mine</b>\n v2 ") == "<b>mine</b> v2"
        for bad, message in (
            ("   ", "cannot be empty"),
            ("x" * (MAX_RUN_NAME + 1), "at most"),
            ("a\u202eb", "control or formatting"),
        ):
            with pytest.raises(ConfigError, match=message):
                rename_run(con, run, bad)
        with pytest.raises(RunSelectionError, match="no run 99"):
            rename_run(con, 99, "x")
    with store.connect() as con:
        shown = queries.run_overview(con)[["run_id", "model"]].values.tolist()
    assert shown == [[run, "<b>mine</b> v2"]]


def test_a_database_folder_that_cannot_be_made_is_one_database_error(small_disk):
    """Regression (issue 44, item 5): ``OSError: [Errno 30]`` from mkdir, with a traceback."""
    import subprocess

    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    db = small_disk / "sub" / "runs.duckdb"
    read_only = r"its file system is read-only"
    with pytest.raises(DatabaseError, match=read_only), Store(db).transaction() as con:
        Store.ensure_dataset(con, "toy")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "n\x1b]0;owned\x07"}, "a run's name cannot hold control or formatting"),
        ({"name": "x" * 10_000}, "a run's name is at most 200 characters"),
        ({"model": "m\u202e"}, "a model's name cannot hold control or formatting"),
    ],
    ids=["osc-name", "long-name", "bidi-model"],
)
def test_run_names_follow_the_rule_of_every_name(tmp_path, kwargs, message):
    """Regression (issue 44, item 7): `collect --name` and `import csv --model` stored ESC/OSC
    sequences, U+202E and 10,000 characters that Rename refuses."""
    store = Store(tmp_path / "n.duckdb")
    args = {"model": "m", **kwargs}
    with pytest.raises(ConfigError, match=message), store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        store.ensure_run(con, ds, args.pop("model"), 0.0, "x", **args)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        run = store.ensure_run(con, ds, "m", 0.0, "x", name="  two\n words ")
        assert con.execute("SELECT name FROM runs WHERE run_id = ?", [run]).fetchone() == (
            "two words",
        )


def test_a_session_holds_one_connection_for_its_thread_and_closes_it_after(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    with store.transaction() as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    seen: dict[str, object] = {}
    with store.session() as held:
        with store.connect() as a, store.session() as inner:
            assert a is held and inner is held  # nested: the outer connection
        with store.transaction() as con:  # a write in a session runs on its connection
            assert con is held
            con.execute("INSERT INTO t VALUES (1)")

        def other_thread() -> None:
            with store.connect() as con:
                seen["other"] = con

        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join(30)
        assert seen["other"] is not held  # another thread opens its own
    with pytest.raises(duckdb.ConnectionException):
        held.execute("SELECT 1")  # closed when the session ended
    with store.connect() as con:
        assert con is not held
    assert count(store, "t") == 1


def test_a_failure_inside_a_session_ends_it_and_the_next_read_opens_anew(tmp_path):
    path = tmp_path / "s.duckdb"
    Store(path).schema_version()  # create it
    store = Store(path, read_only=True)
    with (
        pytest.raises(duckdb.Error, match="read-only"),
        store.session() as held,
        store.connect() as con,
    ):
        con.execute("CREATE TABLE t (x INTEGER)")  # a read-only file refuses
    with store.connect() as con:  # not the failed session's (closed) connection
        assert con is not held and con.execute("SELECT 1").fetchone() == (1,)
