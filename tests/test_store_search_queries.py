"""Tests of s3kg_core/store/search_queries.py on a real DuckDB file."""

from __future__ import annotations

import pytest
from store_helpers import build_store

from s3kg_core.errors import ConfigError
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


def test_answers_only_looks_in_the_answer_and_each_row_says_where_it_matched(store):
    # issue 43: the search matched the question and the context too, and never said where
    with store.connect() as con:
        _, total = search_answers(con, "context 4.", scope="answer")
        assert total == 0  # the words are in the context only
        hits, total = search_answers(con, "CONTEXT", scope="all", run_ids=[1])
        assert total == 6 and set(hits["matched"]) == {"context"}
        assert set(hits["match_field"]) == {"context"} and "context 4." in set(hits["match_text"])
        hits, total = search_answers(con, "says 3", scope="answer")
        assert total == 2 and set(hits["matched"]) == {"answer"}
        assert hits["match_text"].tolist() == ["model-a says 3", "model-b says 3"]
        hits, _ = search_answers(con, "3", scope="all", run_ids=[1])
        # every text that holds a word, as a case reads; the snippet prefers the answer
        assert hits["matched"].tolist() == ["question, answer, gold answer, context"]
        assert hits["match_field"].tolist() == ["answer"]
        plain, _ = search_answers(con, "", run_ids=[1], limit=1)
        assert plain["matched"].tolist() == [""] and plain["match_text"].isna().all()
        with pytest.raises(ConfigError, match="scope must be one of"):
            search_answers(con, "says", scope="gold")


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


@pytest.fixture(scope="module")
def hand_scored(tmp_path_factory):
    """One run of 120 scored questions: question i has CUS i / 119 at alpha 0 (kgx: WL side)."""
    from s3kg_core.store.records import ItemRecord
    from s3kg_core.store.store import Store

    db = Store(tmp_path_factory.mktemp("page") / "p.duckdb")
    with db.transaction() as con:
        ds = db.ensure_dataset(con, "toy")
        ids = db.upsert_items(
            con,
            ds,
            [ItemRecord(f"q{i:03d}", f"Question {i} 100%?", "C.", "G.") for i in range(120)],
        )
        run = db.ensure_run(con, ds, "m", 0.0, "none")
        con.executemany(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, gold_s_sbert, "
            "gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "VALUES (?, ?, 'sig', 'kgx', 0.5, 0.0, ?, 'ok', 0.0, ?, 'ok')",
            [[run, ids[f"q{i:03d}"], i / 119, i / 119] for i in range(120)],
        )
    return db, run, ids


def test_the_question_picker_pages_through_every_question_once_lowest_cus_first(hand_scored):
    """Issue 33: the Sample explorer listed every answer in one select box (5,000 at 100k)."""
    from s3kg_core.store.search_queries import PAGE_COLUMNS, question_page, question_position

    db, run, ids = hand_scored
    with db.connect() as con:
        pages = [question_page(con, "sig", run, 0.0, limit=50, offset=o) for o in (0, 50, 100)]
        past, past_total = question_page(con, "sig", run, 0.0, limit=50, offset=150)
        assert [len(rows) for rows, _ in pages] == [50, 50, 20]
        assert {total for _, total in pages} == {120} and past.empty and past_total == 120
        listed = [e for rows, _ in pages for e in rows["ext_id"]]
        assert listed == [f"q{i:03d}" for i in range(120)]  # each once, lowest CUS first
        assert list(pages[0][0].columns) == list(PAGE_COLUMNS)
        # a link's question is found on its page; the search and the range narrow the list
        assert question_position(con, "sig", run, 0.0, ids["q077"]) == 77
        found, total = question_page(con, "sig", run, 0.0, "Q007 question", limit=50)
        assert total == 1 and found["ext_id"].tolist() == ["q007"]
        literal, total = question_page(con, "sig", run, 0.0, "100%", limit=5)
        assert total == 120 and len(literal) == 5
        high, total = question_page(con, "sig", run, 0.0, low=0.5, limit=50)
        assert total == 60 and high["cus"].min() >= 0.5
        assert question_position(con, "sig", run, 0.0, ids["q007"], low=0.5) is None


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


def test_the_count_at_every_alpha_is_the_search_total_there(tmp_path):
    """Issue 60: the Search page shows how many answers a score range keeps at every stop of
    the alpha slider; one query gives each count, the total a search at that alpha finds."""
    from s3kg_core.store.search_queries import ScoreRange, count_by_alpha

    store = build_store(tmp_path / "s.duckdb", n_items=6)
    with store.transaction() as con:
        _scored(store, con)
    alphas = [round(k / 10, 1) for k in range(11)]
    with store.connect() as con:
        for score, low, high, words in (("gold_sim", 0.0, 0.3, ""), ("cus", 0.5, 0.65, "says")):
            counts = count_by_alpha(
                con, words, alphas, score_range=ScoreRange("sig", 0.5, score, low, high)
            )
            totals = [
                search_answers(con, words, score_range=ScoreRange("sig", a, score, low, high))[1]
                for a in alphas
            ]
            assert counts == totals and len(set(counts)) > 1, (score, counts)
        # the other filters hold too: run 2 has no scores, so nothing is in any range
        kept = count_by_alpha(
            con, "", alphas, score_range=ScoreRange("sig", 0.5, "cus", 0.0, 1.0), run_ids=[2]
        )
        assert kept == [0] * len(alphas)
        with pytest.raises(ConfigError, match="alpha"):
            count_by_alpha(con, "", [1.5], score_range=ScoreRange("sig", 0.5))
