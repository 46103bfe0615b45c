"""Tests of s3kg_core.stages.score: score_store on a real DuckDB file with the packaged MiniLM."""

from __future__ import annotations

import json

import pytest
from store_helpers import build_store, count, stored_components

from s3kg_core.analysis.cus_table import cus_table
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.cus import harmonic_mean, score_cus_many
from s3kg_core.scoring.result import blend
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.stages.score import score_store
from s3kg_core.stages.scored import latest_signature
from s3kg_core.store import queries
from s3kg_core.store.records import KGRecord
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_score_store_scores_every_answer_with_statuses(scored, scored_template, minilm):
    store, report = scored
    assert report.signature == S3KGConfig().signature(minilm.name)
    assert (report.pending, report.scored, report.already_done) == (8, 8, 0)
    assert report.encoded == len(scored_template[2]) > 0
    assert report.statuses == {
        "ok": 11,
        "answer_kg_empty": 2,
        "answer_kg_unparseable": 2,
        "context_kg_unparseable": 1,
    }
    comps = stored_components(store, report.signature)
    assert set(comps) == {(run, item) for run in (1, 2) for item in (1, 2, 3, 4)}
    assert comps[(1, 2)] == (0.0, 0.0, "answer_kg_empty", 0.0, 0.0, "answer_kg_empty")
    assert comps[(1, 3)] == (0.0, 0.0, "answer_kg_unparseable", 0.0, 0.0, "answer_kg_unparseable")
    assert comps[(2, 4)][2] == "ok" and comps[(2, 4)][3:] == (0.0, 0.0, "context_kg_unparseable")
    for key, (gwl, gsb, gst, cwl, csb, _cst) in comps.items():
        assert all(0.0 <= v <= 1.0 for v in (gwl, gsb, cwl, csb)), key
        if gst == "ok":
            assert gsb > 0.0, key
    with store.connect() as con:
        mode, alpha, detail = con.execute(
            "SELECT mode, alpha, gold_detail FROM scores WHERE run_id = 1 AND item_id = 1"
        ).fetchall()[0]
        n_embeddings = con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0]
    assert (mode, alpha) == ("ot", 0.5)  # the default mode
    assert set(json.loads(detail)) == {
        "matched",
        "entity_map",
        "relation_map",
        "n_triples_1",
        "n_triples_2",
    }
    assert n_embeddings == report.encoded  # every encoded string is persisted


def test_second_pass_scores_and_encodes_nothing(scored, counting_minilm):
    store, first = scored
    again = score_store(store, encoder=counting_minilm)
    assert (again.pending, again.scored, again.already_done, again.encoded) == (0, 0, 8, 0)
    assert again.signature == first.signature
    assert counting_minilm.batches == []
    assert count(store, "scores") == 8


def test_new_alpha_reblends_stored_components_without_encoding(scored, counting_minilm):
    store, first = scored
    before = stored_components(store, first.signature)
    table_before = cus_table(store)
    again = score_store(store, encoder=counting_minilm, config=S3KGConfig(alpha=0.2))
    assert (again.scored, again.already_done, again.encoded) == (0, 8, 0)
    assert counting_minilm.batches == []
    assert stored_components(store, first.signature) == before
    with store.connect() as con:
        assert con.execute("SELECT DISTINCT alpha FROM scores").fetchall() == [(0.2,)]
    table = cus_table(store)
    assert table[["dataset", "model", "n"]].equals(table_before[["dataset", "model", "n"]])
    assert not table["gold_sim"].round(9).equals(table_before["gold_sim"].round(9))
    for run, model in ((1, "model-a"), (2, "model-b")):
        gold = [blend(c[0], c[1], 0.2) for (r, _), c in before.items() if r == run]
        ctx = [blend(c[3], c[4], 0.2) for (r, _), c in before.items() if r == run]
        row = table[table["model"] == model].iloc[0]
        assert row["gold_sim"] == pytest.approx(sum(gold) / 4, abs=1e-9)
        assert row["ctx_sim"] == pytest.approx(sum(ctx) / 4, abs=1e-9)
        assert row["cus"] == pytest.approx(float(harmonic_mean(gold, ctx).mean()), abs=1e-9)
    assert cus_table(store, alpha=0.5).equals(table_before)  # re-blending back is exact


def test_new_tau_is_a_new_signature_scored_from_stored_embeddings(scored, counting_minilm):
    store, first = scored
    again = score_store(store, encoder=counting_minilm, config=S3KGConfig(tau=0.9))
    assert again.signature != first.signature and "tau:0.9|" in again.signature
    assert (again.pending, again.scored, again.already_done) == (8, 8, 0)
    assert again.encoded == 0
    assert counting_minilm.batches == []
    assert count(store, "scores") == 16
    assert latest_signature(store) == again.signature
    old = cus_table(store, signature=first.signature)
    new = cus_table(store)
    assert list(old["n"]) == list(new["n"]) == [4, 4]
    statuses = {c[2] for c in stored_components(store, again.signature).values()}
    assert statuses == {"ok", "answer_kg_empty", "answer_kg_unparseable"}


def test_latest_signature_is_the_one_last_scored_even_by_a_reblend(scored, counting_minilm):
    store, first = scored
    score_store(store, encoder=counting_minilm, config=S3KGConfig(tau=0.9))
    again = score_store(store, encoder=counting_minilm, config=S3KGConfig(alpha=0.3))
    assert again.signature == first.signature
    assert latest_signature(store) == first.signature


def test_score_store_only_some_runs_with_progress(tmp_path, minilm):
    store = build_store(tmp_path / "db.duckdb", n_items=3, n_triples=2, seed=4)
    calls = []
    report = score_store(
        store, encoder=minilm, run_ids=[2], batch_items=2, progress=lambda *a: calls.append(a)
    )
    assert (report.pending, report.scored) == (3, 3)
    assert calls == [("answers", 2, 3), ("answers", 3, 3)]
    with store.connect() as con:
        assert con.execute("SELECT DISTINCT run_id FROM scores").fetchall() == [(2,)]
    rest = score_store(store, encoder=minilm)
    assert (rest.scored, rest.already_done) == (3, 3)
    assert score_store(store, encoder=minilm, run_ids=[]).pending == 0


def test_answers_without_kgs_or_with_a_failed_extraction_wait_until_extracted(tmp_path, minilm):
    # regression: answers collected but not yet extracted were scored 0 ("missing") and then
    # never rescored once their KGs arrived
    store = build_store(tmp_path / "db.duckdb", models=("m",), n_items=3, n_triples=2, seed=5)
    with store.transaction() as con:
        con.execute("DELETE FROM kgs WHERE item_id = 1")
        con.execute("DELETE FROM triples WHERE item_id = 1")
        con.execute(
            "UPDATE kgs SET status = 'failed: HTTP 500' WHERE item_id = 2 AND source = 'gold'"
        )
    report = score_store(store, encoder=minilm)
    assert (report.scored, report.not_ready) == (1, 2)
    with store.transaction() as con:
        con.execute("UPDATE kgs SET status = 'ok' WHERE item_id = 2")
    later = score_store(store, encoder=minilm)
    assert (later.scored, later.already_done, later.not_ready) == (1, 1, 1)


def test_score_store_rejects_a_zero_batch(tmp_path, minilm):
    with pytest.raises(ConfigError, match="batch_items must be >= 1"):
        score_store(Store(tmp_path / "db.duckdb"), encoder=minilm, batch_items=0)


def test_text_mode_scores_with_the_stored_texts(tmp_path, minilm):
    """Issue 19: the score stage passes the answer, gold and context texts to a text-mode
    scorer; its stored components equal the library's, and an empty KG scores the texts."""
    store = build_store(tmp_path / "db.duckdb", models=("model-a",), n_items=3)
    with store.transaction() as con:
        store.put_kgs(con, [KGRecord(1, 3, "answer", (), status="empty")])
    report = score_store(store, encoder=minilm, config=S3KGConfig(mode="text"))
    assert report.signature.startswith("mode:text|") and report.scored == 3
    with store.connect() as con:
        kgs = store.load_kgs(con)
        rows = con.execute(
            "SELECT item_id, gold_s_wl, gold_s_sbert, ctx_s_wl, ctx_s_sbert, gold_status "
            "FROM scores ORDER BY item_id"
        ).fetchall()
    scorer = KGScorer(minilm, S3KGConfig(mode="text"))
    for item, g_wl, g_sb, c_wl, c_sb, g_status in rows:
        i = item - 1
        texts = (f"model-a says {i}", f"gold {i}.", f"context {i}.")
        want = score_cus_many(
            [tuple(kgs[(1, item, s)].triples for s in ("answer", "gold", "context"))],
            scorer,
            texts=[texts],
        )[0]
        assert (g_wl, g_sb) == pytest.approx((want.gold.s_wl, want.gold.s_sbert), abs=1e-6)
        assert (c_wl, c_sb) == pytest.approx((want.context.s_wl, want.context.s_sbert), abs=1e-6)
        assert g_status == ("answer_kg_empty" if item == 3 else "ok")
    assert rows[2][1] == rows[2][2] > 0  # the empty answer KG: the texts' cosine, both sides
    table = cus_table(store)
    assert table.iloc[0]["n"] == 3 and table.iloc[0]["cus"] > 0
    assert cus_table(store, empty="drop").iloc[0]["n"] == 2


def test_scoring_reads_only_its_batch_and_scores_as_one_pass_does(tmp_path, minilm, monkeypatch):
    # Issue 33: scoring held every KG and every stored vector of the database before the first
    # batch (3.7 GB at 100,000 answers); now each batch reads only its own.
    whole = build_store(tmp_path / "whole.duckdb", n_items=5, n_triples=3, seed=8)
    score_store(whole, encoder=minilm, batch_items=1000)
    streamed = build_store(tmp_path / "streamed.duckdb", n_items=5, n_triples=3, seed=8)
    read: list[int] = []
    wanted: list[int] = []
    load_kgs_of, embeddings_of = Store.load_kgs_of, queries.embeddings_of

    def counting_kgs(con, answers):
        answers = list(answers)
        read.append(len(answers))
        return load_kgs_of(con, answers)

    def counting_vectors(con, encoder, texts):
        texts = set(texts)
        wanted.append(len(texts))
        return embeddings_of(con, encoder, texts)

    def refuse(*args, **kwargs):
        raise AssertionError("the whole database was read")

    monkeypatch.setattr(Store, "load_kgs_of", staticmethod(counting_kgs))
    monkeypatch.setattr(queries, "embeddings_of", counting_vectors)
    monkeypatch.setattr(Store, "load_kgs", staticmethod(refuse))
    monkeypatch.setattr(Store, "load_embeddings", staticmethod(refuse))
    report = score_store(streamed, encoder=minilm, batch_items=3)
    assert report.scored == 10 and read == [3, 3, 3, 1] and wanted[0] > 0
    signature = report.signature
    assert stored_components(streamed, signature) == stored_components(whole, signature)
    # a second signature (another tau) reads the vectors the first pass stored
    again = score_store(streamed, encoder=minilm, config=S3KGConfig(tau=0.5), batch_items=4)
    assert again.encoded == 0 and again.scored == 10
