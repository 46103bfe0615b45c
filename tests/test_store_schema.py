"""Tests of s3kg_core.store.schema: the migrations on a real DuckDB file, and BENCH_COLUMNS.

The store's own upgrade path (reading ``meta``, running what is missing) is tested in
tests/test_store.py; here the migration statements themselves are run on a bare connection.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from s3kg_core.kg import SOURCES
from s3kg_core.store.records import AnswerRecord
from s3kg_core.store.schema import BENCH_COLUMNS, MIGRATIONS, SCHEMA_VERSION


def _migrate(path: Path, upto: int = SCHEMA_VERSION) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(path))
    for version in sorted(v for v in MIGRATIONS if v <= upto):
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    return con


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position",
        [table],
    ).fetchall()
    return [r[0] for r in rows]


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }


def test_migrations_are_numbered_up_to_the_schema_version():
    # branches number their migrations in parallel, so a number may be missing until its
    # branch is merged (the store runs each missing one, whatever its number)
    assert min(MIGRATIONS) == 1 and max(MIGRATIONS) == SCHEMA_VERSION
    assert all(isinstance(v, int) and MIGRATIONS[v] for v in MIGRATIONS)


def test_every_migration_runs_on_a_fresh_file_and_again_without_error(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    before = _tables(con)
    for version in sorted(MIGRATIONS):  # IF NOT EXISTS everywhere: a rerun changes nothing
        for statement in MIGRATIONS[version]:
            con.execute(statement)
    assert _tables(con) == before
    con.close()


@pytest.mark.parametrize(
    ("version", "tables"),
    [
        (1, {"meta", "datasets", "items", "runs", "answers", "kgs", "triples", "scores"}),
        (2, {"llm_cache"}),
        (3, {"bench_results"}),
        (4, {"grapheval_results", "grapheval_bench", "factuality_evals"}),
        (6, {"verdicts", "annotation_tasks", "task_items", "task_units", "tau_calibrations"}),
    ],
)
def test_each_version_adds_its_tables(tmp_path, version, tables):
    con = _migrate(tmp_path / "s.duckdb", version - 1)
    assert not tables & _tables(con)
    for statement in MIGRATIONS[version]:
        con.execute(statement)
    assert tables <= _tables(con)
    con.close()


def test_version_2_backfills_answer_status_from_error_and_text(tmp_path):
    con = _migrate(tmp_path / "s.duckdb", 1)
    con.execute(
        "INSERT INTO answers (run_id, item_id, answer, error) VALUES "
        "(1, 1, 'yes', NULL), (1, 2, '   ', NULL), (1, 3, NULL, NULL), (1, 4, 'x', 'HTTP 500')"
    )
    con.execute("INSERT INTO kgs VALUES (1, 1, 'gold', 'ok', 0, 0)")
    for statement in MIGRATIONS[2]:
        con.execute(statement)
    rows = con.execute("SELECT item_id, status, truncated FROM answers ORDER BY item_id").fetchall()
    assert rows == [(1, "ok", False), (2, "empty", False), (3, "empty", False), (4, "error", False)]
    assert con.execute("SELECT truncated FROM kgs").fetchall() == [(False,)]
    con.close()


# Regression: the backfill used trim(), which strips only spaces, so a v1 answer of "\n" or
# "\t" became 'ok' where AnswerRecord (str.strip()) says 'empty'.
ANSWERS = ["\n", "\t \r\n", "\x0b\x0c", "\u00a0", "\u2003\u3000", "\x1c\x85", " a\n", "\u200b"]


def test_version_2_backfill_agrees_with_answer_record_on_whitespace(tmp_path):
    con = _migrate(tmp_path / "s.duckdb", 1)
    con.executemany(
        "INSERT INTO answers (run_id, item_id, answer) VALUES (1, ?, ?)",
        [[i, text] for i, text in enumerate(ANSWERS)],
    )
    for statement in MIGRATIONS[2]:
        con.execute(statement)
    got = [r[0] for r in con.execute("SELECT status FROM answers ORDER BY item_id").fetchall()]
    assert got == [AnswerRecord(0, text).status for text in ANSWERS]
    assert got == ["empty"] * 6 + ["ok", "ok"]  # a zero-width space is not whitespace
    con.close()


def test_version_2_backfill_keeps_a_status_already_set(tmp_path):
    con = _migrate(tmp_path / "s.duckdb", 2)
    con.execute("INSERT INTO answers (run_id, item_id, answer, status) VALUES (1, 1, '', 'ok')")
    for statement in MIGRATIONS[2]:  # the UPDATE only fills NULL statuses
        con.execute(statement)
    assert con.execute("SELECT status FROM answers").fetchall() == [("ok",)]
    con.close()


def test_kg_sources_are_exactly_the_sources_of_a_kg(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    for i, source in enumerate(SOURCES):
        con.execute(
            "INSERT INTO kgs (run_id, item_id, source, status, n_triples) VALUES "
            "(1, ?, ?, 'ok', 0)",
            [i, source],
        )
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            "INSERT INTO kgs (run_id, item_id, source, status, n_triples) VALUES "
            "(1, 9, 'question', 'ok', 0)"
        )
    con.close()


def test_primary_keys_refuse_a_second_row_for_the_same_key(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    con.execute(
        "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
        "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) VALUES "
        "(1, 1, 'sig', 'paper', 0.5, 1, 1, 'ok', 1, 1, 'ok')"
    )
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
            "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) VALUES "
            "(1, 1, 'sig', 'mean', 0.1, 0, 0, 'ok', 0, 0, 'ok')"
        )
    con.close()


def test_ids_come_from_their_sequences_starting_at_one(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    con.execute("INSERT INTO datasets (name) VALUES ('a'), ('b')")
    con.execute("INSERT INTO items (dataset_id, ext_id) VALUES (1, 'x')")
    assert con.execute("SELECT dataset_id FROM datasets ORDER BY 1").fetchall() == [(1,), (2,)]
    assert con.execute("SELECT item_id FROM items").fetchall() == [(1,)]
    con.close()


def test_bench_columns_are_the_bench_table_after_its_timestamp(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    columns = _columns(con, "bench_results")
    assert columns[0] == "run_at"
    assert tuple(columns[1:]) == BENCH_COLUMNS
    con.close()


def test_a_row_in_bench_column_order_inserts_and_stamps_run_at(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    row = ("paws", 4, "minilm", "paper", "released", "s3kg", 0.8, 0.9, 0.3, 0.5)
    row += (0.7, 0.9, 0.8, 1.0, '{"k": 1}')
    assert len(row) == len(BENCH_COLUMNS)
    names = ", ".join(BENCH_COLUMNS)
    marks = ", ".join("?" * len(BENCH_COLUMNS))
    con.execute(f"INSERT INTO bench_results ({names}) VALUES ({marks})", list(row))
    got = con.execute(f"SELECT run_at, {names} FROM bench_results").fetchall()
    assert got[0][0] is not None
    assert got[0][1:10] == row[:9]
    con.close()


# -- 6: the legacy annotations move into the verdict log -------------------------------------


def _legacy(path: Path) -> duckdb.DuckDBPyConnection:
    """A file at version 4 whose ``annotations`` table the Annotate page filled."""
    con = _migrate(path, 4)
    con.execute(
        "INSERT INTO annotations (run_id, item_id, annotator, gold_triple, answer_triple, "
        "verdict, created_at) VALUES "
        '(1, 2, \'ann\', \'["a", "r", "b"]\', \'["a","r","c"]\', \'confirm\', '
        "'2024-05-01 10:00:00'), "
        '(1, 2, \'bob\', \'["a", "r", "b"]\', \'["a","r","c"]\', \'reject\', '
        "'2024-05-01 10:01:00'), "
        '(1, 2, \'ann\', \'["g","\\u00e9","t"]\', \'["x","y","z"]\', \'add\', '
        "'2024-05-01 10:02:00'), "
        "(1, 3, 'e\u0301ve', NULL, '[\"x\",\"y\",\"z\"]', 'odd', NULL)"
    )
    return con


def test_version_6_moves_every_annotation_into_the_log_and_drops_the_table(tmp_path):
    con = _legacy(tmp_path / "s.duckdb")
    for statement in MIGRATIONS[6]:
        con.execute(statement)
    assert "annotations" not in _tables(con)
    rows = con.execute(
        "SELECT verdict_id, annotator, role, run_id, item_id, category, gold_triple, "
        "answer_triple, verdict, replaces, created_at FROM verdicts ORDER BY verdict_id"
    ).fetchall()
    assert [r[:10] for r in rows] == [
        (1, "ann", "annotator", 1, 2, "aligned", ["a", "r", "b"], ["a", "r", "c"], "confirm", None),
        (2, "bob", "annotator", 1, 2, "aligned", ["a", "r", "b"], ["a", "r", "c"], "reject", None),
        (3, "ann", "annotator", 1, 2, None, ["g", "\u00e9", "t"], ["x", "y", "z"], "add", None),
        # nothing is lost: an unknown verdict is kept (and counts as no decision)
        (4, "\u00e9ve", "annotator", 1, 3, None, None, ["x", "y", "z"], "odd", None),
    ]
    assert str(rows[0][10]) == "2024-05-01 10:00:00" and rows[3][10] is not None
    uids = [r[0] for r in con.execute("SELECT uid FROM verdicts").fetchall()]
    assert len(set(uids)) == 4 and all(u.startswith("legacy-") for u in uids)
    con.close()


def test_version_6_rerun_copies_nothing_twice(tmp_path):
    con = _legacy(tmp_path / "s.duckdb")
    for _ in range(2):
        for statement in MIGRATIONS[6]:
            con.execute(statement)
    assert con.execute("SELECT count(*) FROM verdicts").fetchall() == [(4,)]
    con.close()


def test_version_6_chains_a_legacy_pair_saved_under_two_json_spellings(tmp_path):
    con = _migrate(tmp_path / "s.duckdb", 4)
    con.execute(
        "INSERT INTO annotations (run_id, item_id, annotator, gold_triple, answer_triple, "
        "verdict) VALUES (1, 1, 'ann', '[\"a\",\"r\",\"b\"]', NULL, 'confirm'), "
        "(1, 1, 'ann', '[\"a\", \"r\", \"b\"]', NULL, 'reject')"
    )
    for statement in MIGRATIONS[6]:
        con.execute(statement)
    got = con.execute("SELECT verdict_id, verdict, replaces FROM verdicts ORDER BY 1").fetchall()
    assert got == [(1, "confirm", None), (2, "reject", 1)]
    con.close()


def test_verdict_roles_are_checked(tmp_path):
    con = _migrate(tmp_path / "s.duckdb")
    with pytest.raises(duckdb.ConstraintException):
        con.execute(
            "INSERT INTO verdicts (uid, created_at, annotator, role, run_id, item_id, verdict) "
            "VALUES ('u', current_timestamp, 'ann', 'boss', 1, 1, 'confirm')"
        )
    con.close()
