"""s3kg_core.grapheval.results: detect_store and the grapheval tables, on a real DuckDB file."""

from __future__ import annotations

from test_grapheval_detect import YearChecker

from s3kg_core.grapheval.results import detect_store, get_bench_rows, load_results, put_bench_row
from s3kg_core.kg import Triple
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store

CTX = "The Eiffel Tower is in Paris. It opened in 1889."


def _store(path) -> tuple[Store, int]:
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(
            con, ds, [ItemRecord(f"q{i}", "When?", CTX, "1889.") for i in range(4)]
        )
        run = store.ensure_run(con, ds, "m", 0.0, "offline:test")
        items = [ids[f"q{i}"] for i in range(4)]
        store.put_answers(con, run, [AnswerRecord(i, f"answer {i}") for i in items])
        store.put_kgs(
            con,
            [
                KGRecord(run, items[0], "answer", (Triple("Eiffel Tower", "opened in", "1899"),)),
                KGRecord(run, items[1], "answer", (Triple("Eiffel Tower", "is in", "Paris"),)),
                KGRecord(run, items[2], "answer", (), status="empty"),
                KGRecord(run, items[3], "answer", (), status="failed: boom"),
            ],
        )
    return store, run


def test_detect_store_writes_one_row_per_answer_and_resumes(tmp_path):
    store, run = _store(tmp_path / "t.duckdb")
    report = detect_store(store, run, YearChecker())
    assert (report.written, report.missing_kg, report.inconsistent) == (3, 1, 1)
    with store.connect() as con:
        rows = load_results(con, run, "year")
        flagged = load_results(con, run, "year", inconsistent_only=True)
    assert len(rows) == 3 and len(flagged) == 1
    assert flagged[0]["detection"].flagged_triples[0].tail == "1899"
    assert flagged[0]["extractor"] == "offline:test" and flagged[0]["context"] == CTX
    assert rows[2]["detection"].status == "no_triples" and rows[2]["n_triples"] == 0
    again = detect_store(store, run, YearChecker())
    assert (again.written, again.already_done) == (0, 3)


def test_bench_rows_round_trip(tmp_path):
    store = Store(tmp_path / "b.duckdb")
    result = {
        "dataset": "toy",
        "n": 4,
        "checker": "year",
        "extractor": "x",
        "raw": {"balanced_accuracy": 0.5},
        "kg": {"balanced_accuracy": 1.0, "flagged_triples": 2},
    }
    with store.transaction() as con:
        put_bench_row(con, result)
        put_bench_row(con, result)
    with store.connect() as con:
        [row] = get_bench_rows(con, "toy")
    assert row["kg_balanced_accuracy"] == 1.0 and row["raw_balanced_accuracy"] == 0.5
