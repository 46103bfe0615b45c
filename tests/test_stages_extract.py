"""The extraction stage (s3kg_core.stages.extract) on real DuckDB files and the scripted server."""

from __future__ import annotations

import json

import pytest
from fake_openai import Reply, fake_openai, last_user_message
from llm_helpers import ITEMS, make_dataset, toy_model

from s3kg_core.errors import ConfigError
from s3kg_core.extract.factory import make_extractor
from s3kg_core.extract.llm import LLMExtractor
from s3kg_core.llm.cache import StoreCache
from s3kg_core.llm.client import LLMClient, LLMSettings
from s3kg_core.stages.collect import UNEXTRACTED, collect_answers
from s3kg_core.stages.extract import extract_store
from s3kg_core.store.records import AnswerRecord, ItemRecord
from s3kg_core.store.store import Store


def _client(store: Store, url: str) -> LLMClient:
    settings = LLMSettings(model="toy", base_url=url, timeout=1.0, max_retries=0)
    return LLMClient(settings, cache=StoreCache(store, settings))


def _kgs(store: Store) -> dict:
    with store.connect() as con:
        return store.load_kgs(con)


@pytest.fixture
def collected(tmp_path):
    store = Store(tmp_path / "e.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url))
        yield store, server


def test_extracts_three_kgs_per_answer_and_names_the_runs_extractor(collected):
    store, server = collected
    sent = server.count()
    report = extract_store(store, LLMExtractor(_client(store, server.base_url)))
    assert server.count() - sent == len(ITEMS)
    assert report.items == len(ITEMS) and report.statuses == {"ok": 3 * len(ITEMS)}
    kgs = _kgs(store)
    assert len(kgs) == 3 * len(ITEMS)
    with store.connect() as con:
        [(extractor,)] = con.execute("SELECT extractor FROM runs").fetchall()
        item = con.execute("SELECT item_id FROM items WHERE ext_id = 'q1'").fetchall()[0][0]
    assert extractor == "llm:toy:joint-kg-v1"
    assert [t.sentence() for t in kgs[(1, item, "context")].triples] == [
        "Aspirin reduces fever",
        "Aspirin relieves pain",
    ]
    again = extract_store(store, LLMExtractor(_client(store, server.base_url)))
    assert again.items == 0 and again.already_done == len(ITEMS)


def test_failed_extractions_are_stored_with_reason_and_retried(tmp_path):
    store = Store(tmp_path / "e.duckdb")
    make_dataset(store, [ITEMS[0], ItemRecord("bad", "Q?", "BROKENJSON context. x y z.", "g")])
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url))
        report = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert report.statuses == {"ok": 3, "failed": 3}
        failed = [kg for kg in _kgs(store).values() if kg.status.startswith("failed")]
        assert len(failed) == 3 and "not JSON" in failed[0].status
        again = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert again.items == 1 and again.already_done == 1


def _flaky(body, n):
    """The toy model, but a text marked FLAKY first gets a reply beyond repair."""
    if n == 1 and "FLAKY" in last_user_message(body) and "TEXT 1:" in last_user_message(body):
        return Reply(text="Sure! Here are the graphs: knowledge_graph1 = aspirin -> fever")
    return toy_model(body, n)


def test_an_unparseable_extraction_is_asked_again_on_the_rerun_and_stored_d5(tmp_path):
    """Issue 17 (D5): the unparseable reply was cached as a success, so every rerun parsed the
    same reply from the cache, stored ``failed`` again and never asked the model."""
    store = Store(tmp_path / "e.duckdb")
    make_dataset(
        store, [ITEMS[0], ItemRecord("f", "Q?", "FLAKY sun heats earth.", "Sun heats earth.")]
    )
    with fake_openai(_flaky) as server:
        collect_answers(store, _client(store, server.base_url))
        first = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert first.statuses == {"ok": 3, "failed": 3}
        assert server.count("TEXT 1:") == 2
        again = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert server.count("TEXT 1:") == 3  # the failed one, asked again
        third = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert server.count("TEXT 1:") == 3
    assert (again.items, again.already_done, again.statuses) == (1, 1, {"ok": 3})
    assert (third.items, third.already_done) == (0, 2)
    assert all(kg.status == "ok" for kg in _kgs(store).values())


def test_refresh_extracts_done_items_again_without_the_cache(collected):
    store, server = collected
    extract_store(store, LLMExtractor(_client(store, server.base_url)))
    sent = server.count("TEXT 1:")
    settings = _client(store, server.base_url).settings
    fresh = LLMClient(settings, cache=StoreCache(store, settings), refresh=True)
    report = extract_store(store, LLMExtractor(fresh), refresh=True)
    assert (report.items, report.already_done) == (len(ITEMS), 0)
    assert server.count("TEXT 1:") - sent == len(ITEMS)


def test_failed_answers_are_skipped_and_stale_scores_removed(tmp_path):
    store = Store(tmp_path / "e.duckdb")
    make_dataset(store, [ITEMS[0], ItemRecord("down", "Q?", "SERVERERROR now. x y z.", "g")])
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url))
        report = extract_store(store, LLMExtractor(_client(store, server.base_url)))
    assert report.items == 1 and report.skipped_failed_answers == 1
    with store.transaction() as con:
        con.execute(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, gold_s_sbert, "
            "gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "SELECT run_id, item_id, 'sig', 'paper', 0.5, 1, 1, 'ok', 1, 1, 'ok' FROM kgs "
            "WHERE source = 'answer'"
        )
        con.execute("DELETE FROM kgs WHERE source = 'gold'")  # force a re-extraction
    extract_store(store, make_fixed_extractor())
    with store.connect() as con:
        assert con.execute("SELECT count(*) FROM scores").fetchall() == [(0,)]


def make_fixed_extractor():
    from s3kg_core.extract import ItemTexts, TextKG
    from s3kg_core.kg import Triple

    class Fixed:
        name = "llm:toy:joint-kg-v1"  # the same name: resumes the run

        def extract(self, items: list[ItemTexts]):
            return [{s: TextKG((Triple("a", "r", "b"),)) for s in it.given()} for it in items]

    return Fixed()


def test_another_extractor_on_a_chosen_run_copies_the_run(collected):
    store, server = collected
    extract_store(store, LLMExtractor(_client(store, server.base_url)))

    class Other:
        name = "other-extractor"

        def extract(self, items):
            from s3kg_core.extract import TextKG

            return [{s: TextKG() for s in it.given()} for it in items]

    report = extract_store(store, Other(), run_ids=[1])
    assert report.run_ids == [2] and report.items == len(ITEMS)
    with store.connect() as con:
        runs = con.execute("SELECT run_id, model, extractor FROM runs ORDER BY 1").fetchall()
        n = con.execute("SELECT run_id, count(*) FROM answers GROUP BY 1 ORDER BY 1").fetchall()
    assert runs == [(1, "toy", "llm:toy:joint-kg-v1"), (2, "toy", "other-extractor")]
    assert n == [(1, len(ITEMS)), (2, len(ITEMS))]
    with pytest.raises(ConfigError, match="no run"):
        extract_store(store, Other(), run_ids=[99])


def test_table_imported_answers_are_extracted_offline(tmp_path):
    store = Store(tmp_path / "e.duckdb")
    make_dataset(store)
    with store.transaction() as con:
        run = store.ensure_run(con, 1, "imported", 0.0, UNEXTRACTED, source="table/x.csv")
        store.put_answers(con, run, [AnswerRecord(1, "Aspirin reduces fever.")])
    report = extract_store(store, make_extractor("offline"))
    assert report.items == 1
    kgs = _kgs(store)
    answer = kgs[(run, 1, "answer")]
    assert answer.status == "ok"
    assert [(t.head.lower(), t.tail.lower()) for t in answer.triples] == [("aspirin", "fever")]


def _hostile(body, n):
    """The toy model, with hostile extraction replies for texts marked so (issue 28)."""
    user = last_user_message(body)
    if "TEXT 1:" in user and "SURROGATE" in user:
        graphs = {"knowledge_graph1": [["a\ud800", "r", "b"]], "knowledge_graph2": []}
        return Reply(text=json.dumps({**graphs, "knowledge_graph3": []}))
    if "TEXT 1:" in user and "WRONGSCHEMA" in user:
        return Reply(text='{"error": "I could not do that"}')
    if "TEXT 1:" in user and "NESTED" in user:
        return Reply(text="[" * 200_000 + "]" * 200_000)
    return toy_model(body, n)


def _hostile_store(tmp_path, marker: str) -> Store:
    store = Store(tmp_path / "h.duckdb")
    make_dataset(store, [ITEMS[0], ItemRecord("h", "Q?", f"{marker} sun heats earth.", "g x y.")])
    return store


def test_a_label_with_a_lone_surrogate_is_stored_cleaned_with_the_rest_of_the_batch_28_2(
    tmp_path,
):
    """Issue 28 (2a): a label "a\\ud800" crashed put_kgs with UnicodeEncodeError after the reply
    was cached, so the batch was lost and every rerun crashed without a request."""
    store = _hostile_store(tmp_path, "SURROGATE")
    with fake_openai(_hostile) as server:
        collect_answers(store, _client(store, server.base_url))
        report = extract_store(store, LLMExtractor(_client(store, server.base_url)))
    kgs = _kgs(store)
    assert report.items == 2 and len(kgs) == 6
    labels = {t.head for kg in kgs.values() for t in kg.triples}
    assert "a\ufffd" in labels and "Aspirin" in labels


def test_a_reply_whose_kgs_the_store_rejects_is_not_cached_28_2(tmp_path, monkeypatch):
    """Issue 28 (2): the reply was cached before the store rejected its KGs, so every rerun
    replayed it from the cache without asking the endpoint."""
    store = Store(tmp_path / "r.duckdb")
    make_dataset(store, ITEMS[:1])
    real = Store.put_kgs

    def reject(con, kgs):
        raise RuntimeError("the store rejected these KGs")

    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url))
        monkeypatch.setattr(Store, "put_kgs", staticmethod(reject))
        with pytest.raises(RuntimeError, match="rejected"):
            extract_store(store, LLMExtractor(_client(store, server.base_url)))
        monkeypatch.setattr(Store, "put_kgs", staticmethod(real))
        report = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert server.count("TEXT 1:") == 2  # asked again, not replayed from the cache
    assert report.statuses == {"ok": 3}


@pytest.mark.parametrize(
    ("marker", "reason"),
    [
        ("WRONGSCHEMA", "none of the expected keys"),  # issue 28 (3)
        ("NESTED", "nests too deeply"),  # issue 28 (2d)
    ],
)
def test_a_wrong_schema_or_too_deep_reply_is_failed_and_asked_again_28(tmp_path, marker, reason):
    """Issue 28 (3): ``{"error": ...}`` became three ``empty`` KGs, cached, never retried, and
    scored CUS 0 as if the answer said nothing. (2d): 200,000 nested brackets raised
    RecursionError out of the parser."""
    store = _hostile_store(tmp_path, marker)
    with fake_openai(_hostile) as server:
        collect_answers(store, _client(store, server.base_url))
        first = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        again = extract_store(store, LLMExtractor(_client(store, server.base_url)))
        assert server.count(marker) == 1 + 2  # the answer, then the extraction twice
    assert first.statuses == {"ok": 3, "failed": 3} and again.items == 1
    failed = [kg.status for kg in _kgs(store).values() if kg.status.startswith("failed")]
    assert len(failed) == 3 and reason in failed[0]
