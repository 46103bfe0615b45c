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


def _scored(store, con):
    """Run 1's six answers (q0..q5) scored under ``sig``: GoldSim and CtxSim known at every
    alpha; q0 in kgx mode (alpha weights the WL side there)."""
    item = dict(con.execute("SELECT ext_id, item_id FROM items").fetchall())
    rows = []
    for k in range(1, 7):
        g_wl, g_sb, c_wl = k / 10, k / 10 + 0.1, 0.8
        mode = "kgx" if k == 1 else "hybrid"
        rows.append((1, item[f"q{k - 1}"], "sig", mode, 0.5, g_wl, g_sb, "ok", c_wl, c_wl, "ok"))
    con.executemany(
        "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, gold_s_sbert, "
        "gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
        rows,
    )
    con.execute(
        "INSERT INTO tau_results (run_id, item_id, signature, target, fraction, alpha, "
        "target_score, n_aligned, n_relation_mismatch, n_entity_mismatch, n_extra, n_missing, "
        "result) VALUES (1, ?, 't', 'cus', 0.2, 0.5, 0.1, 1, 2, 0, 0, 0, '{}'), "
        "(1, ?, 't', 'cus', 0.2, 0.5, 0.2, 3, 0, 0, 0, 1, '{}')",
        [item["q0"], item["q3"]],
    )
    return item


def test_score_ranges_and_tau_categories_filter_in_the_database(tmp_path):
    """Issue 31: search by TAU category and by a CUS or GoldSim range at an alpha."""
    from s3kg_core.errors import ConfigError
    from s3kg_core.store.search_queries import ScoreRange

    store = build_store(tmp_path / "s.duckdb", n_items=6)
    with store.transaction() as con:
        _scored(store, con)
    with store.connect() as con:
        # GoldSim at alpha 0: the WL side (k / 10) in hybrid mode; q0 (kgx) takes S_SBERT (0.2)
        low = ScoreRange("sig", 0.0, "gold_sim", 0.0, 0.3)
        hits, total = search_answers(con, "", score_range=low)
        assert total == 3 and hits["ext_id"].tolist() == ["q0", "q1", "q2"]
        # CUS at alpha 1: harmonic mean of k / 10 + 0.1 and 0.8; q0 (kgx) of 0.1 and 0.8
        cus = ScoreRange("sig", 1.0, "cus", 0.5, 0.65)
        hits, _ = search_answers(con, "", score_range=cus)
        assert hits["ext_id"].tolist() == ["q2", "q3"]  # 0.533 and 0.615 (q4: 0.686)
        _, total = search_answers(con, "", score_range=ScoreRange("other", 0.5))
        assert total == 0  # another signature scored nothing
        hits, _ = search_answers(con, "", tau_category="relation_mismatch")
        assert hits["ext_id"].tolist() == ["q0"]
        hits, _ = search_answers(con, "", tau_category="aligned")
        assert hits["ext_id"].tolist() == ["q0", "q3"]
        with pytest.raises(ConfigError, match="TAU category"):
            search_answers(con, "", tau_category="n_aligned; DROP TABLE runs")
        with pytest.raises(ConfigError, match="score must be"):
            search_answers(con, "", score_range=ScoreRange("sig", 0.5, "ctx_sim"))
