"""Tests of s3kg_core/store/search_queries.py on a real DuckDB file."""

from __future__ import annotations

import pytest
from store_helpers import build_store

from s3kg_core.store.records import AnswerRecord, KGRecord
from s3kg_core.store.search_queries import SEARCH_COLUMNS, search_answers


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Two runs of six items (``model-a says i``); run 1 item q2's answer is an error with no
    KG, and run 2 item q5's answer KG is empty."""
    store = build_store(tmp_path_factory.mktemp("search") / "s.duckdb", n_items=6)
    with store.transaction() as con:
        item = dict(con.execute("SELECT ext_id, item_id FROM items").fetchall())
        store.put_answers(con, 1, [AnswerRecord(item["q2"], None, error="HTTP 500")])
        con.execute("DELETE FROM kgs WHERE run_id = 1 AND item_id = ? AND source = 'answer'",
                    [item["q2"]])  # fmt: skip
        store.put_kgs(con, [KGRecord(2, item["q5"], "answer", (), status="empty")])
    return store


def test_words_are_matched_in_every_text_any_case_and_all_of_them(store):
    with store.connect() as con:
        hits, total = search_answers(con, "MODEL-B SAYS")
        assert (
            total == 6 and set(hits["run_id"]) == {2} and list(hits.columns) == list(SEARCH_COLUMNS)
        )
        hits, total = search_answers(con, "says 3")  # the answer's words
        assert total == 2 and hits["ext_id"].tolist() == ["q3", "q3"]
        _, total = search_answers(con, "context 4. gold")  # context and gold answer
        assert total == 2
        _, total = search_answers(con, "says 3 nowhere")
        assert total == 0


def test_filters_by_run_and_status_and_pages_in_the_database(store):
    with store.connect() as con:
        errors, total = search_answers(con, "", answer_status="error")
        assert total == 1 and errors[["run_id", "ext_id"]].values.tolist() == [[1, "q2"]]
        missing, _ = search_answers(con, "", answer_kg_status="missing")
        assert missing["ext_id"].tolist() == ["q2"]
        empty, _ = search_answers(con, "", answer_kg_status="empty", run_ids=[2])
        assert empty["ext_id"].tolist() == ["q5"]
        page, total = search_answers(con, "", limit=5, offset=10)
        assert total == 12 and len(page) == 2
        past, total = search_answers(con, "", limit=5, offset=50)
        assert past.empty and total == 12
        none, total = search_answers(con, "", run_ids=[])
        assert none.empty and total == 0


def test_wildcards_in_the_words_are_literal(store):
    with store.connect() as con:
        _, total = search_answers(con, "%")
        assert total == 0
        _, total = search_answers(con, "q_estion")
        assert total == 0
