"""The whole chain (s3kg_core.stages.run.run_pipeline) on real DuckDB files.

The chain's scores are pinned against the stages called one by one (bit-identical), and its
resumption, skipped stages, stage lines and failures are checked; the LLM stages run against
the scripted local OpenAI server.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from fake_openai import fake_openai
from llm_helpers import ITEMS, make_dataset, toy_model

from s3kg_core.errors import ConfigError, EndpointError, MappingError
from s3kg_core.extract import ItemTexts, TextKG
from s3kg_core.extract.factory import make_extractor
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.stages.extract import extract_store
from s3kg_core.stages.importing import ImportReport, import_table
from s3kg_core.stages.run import (
    CollectSettings,
    PipelineReport,
    PubMedQAImport,
    TableImport,
    TauSettings,
    run_pipeline,
)
from s3kg_core.stages.score import score_store
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")

MAPPING = {"id": "qid", "question": "q", "context": "ctx", "gold": "ref", "answer": "out"}
ROWS = [
    ["1", "What reduces fever?", "Aspirin reduces fever. It is cheap.", "Aspirin reduces fever.",
     "Aspirin reduces fever."],
    ["2", "Who wrote Hamlet?", "Shakespeare wrote Hamlet.", "Shakespeare wrote Hamlet.",
     "Marlowe wrote Hamlet in London."],
    ["3", "Where was Curie born?", "Curie was born in Warsaw.", "Curie was born in Warsaw.",
     "Curie was born in Paris."],
]  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "qa.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["qid", "q", "ctx", "ref", "out"])
        writer.writerows(ROWS)
    return path


@pytest.fixture(scope="module")
def offline():
    return make_extractor("offline")


def _rows(store: Store, sql: str) -> list[tuple]:
    with store.connect() as con:
        return con.execute(sql).fetchall()


SCORES = (
    "SELECT run_id, item_id, signature, mode, alpha, gold_s_wl, gold_s_sbert, gold_status, "
    "ctx_s_wl, ctx_s_sbert, ctx_status, gold_detail, ctx_detail FROM scores ORDER BY 1, 2, 3"
)
TAU = (
    "SELECT run_id, item_id, signature, target, fraction, alpha, target_score, n_aligned, "
    "n_relation_mismatch, n_entity_mismatch, n_extra, n_missing, result FROM tau_results "
    "ORDER BY 1, 2"
)


def test_the_chain_stores_exactly_what_the_stages_store_one_by_one(tmp_path, table, offline):
    config = S3KGConfig(mode="paper", alpha=0.3)
    chained = Store(tmp_path / "chain.duckdb")
    report = run_pipeline(
        chained,
        imports=[TableImport(table, MAPPING, model="m")],
        extractor=offline,
        encoder="minilm",
        config=config,
        tau=TauSettings(fraction=0.5),
    )
    by_hand = Store(tmp_path / "hand.duckdb")
    import_table(by_hand, table, MAPPING, model="m")
    extract_store(by_hand, offline)
    scored = score_store(by_hand, encoder="minilm", config=config)
    tau_store(by_hand, fraction=0.5, signature=scored.signature, alpha=0.3)
    assert report.score.signature == scored.signature
    assert _rows(chained, SCORES) == _rows(by_hand, SCORES)  # bit-identical components
    assert _rows(chained, TAU) == _rows(by_hand, TAU)
    assert len(_rows(chained, TAU)) == 2  # ceil(3 * 0.5)
    for table in ("kgs", "triples", "embeddings"):
        everything = f"SELECT * FROM {table} ORDER BY ALL"
        assert _rows(chained, everything) == _rows(by_hand, everything), table


def test_the_report_has_one_entry_per_stage_and_the_lines_the_cli_prints(table, tmp_path, offline):
    said: list[str] = []
    progress: list[str] = []
    report = run_pipeline(
        Store(tmp_path / "r.duckdb"),
        imports=[TableImport(table, MAPPING, model="m")],
        extractor=offline,
        on_stage=said.append,
        progress=lambda stage, done, total: progress.append(stage),
    )
    assert isinstance(report, PipelineReport)
    assert [r.summary() for r in report.imports] == ["qa.csv: qa / m: 3 items, 3 answers, 0 KGs"]
    assert report.collect is None and report.extractor == offline.name
    assert report.extract.items == 3 and report.score.scored == 3
    assert report.tau is not None and report.tau.analysed == 1  # the default: 5 % of 3, at least 1
    assert said == report.lines()
    assert said == [
        "import: qa.csv: qa / m: 3 items, 3 answers, 0 KGs",
        "collect: skipped (no endpoint configured; using stored answers)",
        f"extract ({offline.name}): {report.extract.summary()}",
        "score: 3 answers scored, 0 already done, 0 without KGs",
        f"tau: {report.tau.summary()}",
    ]
    assert {"items", "answers"} <= set(progress)
    assert report.seconds > 0


def test_a_second_chain_resumes_every_stage(tmp_path, offline, minilm):
    store = Store(tmp_path / "again.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        client = LLMClient(
            LLMSettings(model="toy", base_url=server.base_url, max_retries=0), cache=MemoryCache()
        )
        collect = CollectSettings(client, temperatures=(0.0, 0.7), limit=3)
        first = run_pipeline(store, collect=collect, extractor=offline, encoder=minilm)
        asked = server.count()
        second = run_pipeline(store, collect=collect, extractor=offline, encoder=minilm)
        assert server.count() == asked == 6  # 3 items x 2 temperatures, asked once
    assert first.collect is not None and second.collect is not None
    assert (first.collect.asked, second.collect.asked, second.collect.already_done) == (6, 0, 6)
    assert len(first.collect.run_ids) == 2
    assert (second.extract.items, second.extract.already_done) == (0, 6)
    assert (second.score.scored, second.score.already_done) == (0, 6)
    assert second.score.signature == first.score.signature
    assert second.tau is not None and second.tau.analysed == first.tau.analysed == 2
    rows = _rows(store, "SELECT count(*) FROM tau_results")
    assert rows == [(2,)]  # TAU replaced its rows: not doubled


def test_an_llm_extractor_on_the_collect_client_extracts_jointly(tmp_path, minilm):
    store = Store(tmp_path / "llm.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        client = LLMClient(LLMSettings(model="toy", base_url=server.base_url), cache=MemoryCache())
        report = run_pipeline(
            store,
            collect=CollectSettings(client, datasets=["toy"]),
            extractor=make_extractor("llm", client=client),
            encoder=minilm,
            tau=None,
        )
    assert report.extractor == "llm:toy:joint-kg-v1"
    assert report.extract.items == len(ITEMS) and report.score.scored == len(ITEMS)
    assert report.tau is None and not report.lines()[-1].startswith("tau:")
    assert _rows(store, "SELECT DISTINCT extractor FROM runs") == [("llm:toy:joint-kg-v1",)]


def test_nothing_scored_means_no_tau(tmp_path, offline):
    store = Store(tmp_path / "empty.duckdb")
    make_dataset(store)  # questions only: nothing to extract or score
    said: list[str] = []
    report = run_pipeline(store, extractor=offline, on_stage=said.append)
    assert report.score.scored == report.score.already_done == 0
    assert report.tau is None and said == report.lines() and len(said) == 3


def test_any_importer_callable_and_pubmedqa(tmp_path, offline):
    pqal = tmp_path / "ori_pqal.json"
    record = {"QUESTION": "Why?", "CONTEXTS": ["Aspirin reduces fever."], "LONG_ANSWER": "So."}
    pqal.write_text(json.dumps({"111": record}))
    seen: list[Store] = []

    def custom(store: Store) -> list[ImportReport]:
        seen.append(store)
        return [ImportReport(source="custom", dataset="x"), ImportReport(source="c2", dataset="y")]

    store = Store(tmp_path / "imports.duckdb")
    report = run_pipeline(store, imports=[PubMedQAImport(pqal), custom], extractor=offline)
    assert [r.source for r in report.imports] == ["ori_pqal.json", "custom", "c2"]
    assert seen == [store]
    assert _rows(store, "SELECT name FROM datasets") == [("pubmedqa_pqal",)]
    assert [line.split(":")[0] for line in report.lines()][:3] == ["import"] * 3


class _Down:
    """An extractor whose endpoint is down."""

    name = "llm:down:joint-kg-v1"

    def extract(self, items: list[ItemTexts]) -> list[dict[str, TextKG]]:
        raise EndpointError("the endpoint is down")


def test_a_failing_stage_keeps_what_the_stages_before_it_stored_and_said(tmp_path, table):
    store = Store(tmp_path / "fail.duckdb")
    said: list[str] = []
    with pytest.raises(EndpointError, match="down"):
        run_pipeline(
            store,
            imports=[TableImport(table, MAPPING, model="m")],
            extractor=_Down(),
            on_stage=said.append,
        )
    assert said[0].startswith("import: qa.csv") and said[1].startswith("collect: skipped")
    assert len(said) == 2
    assert _rows(store, "SELECT count(*) FROM answers") == [(3,)]


def test_an_answer_column_without_a_model_is_the_importers_error(tmp_path, table, offline):
    with pytest.raises(MappingError, match="name its model"):
        run_pipeline(
            Store(tmp_path / "m.duckdb"), imports=[TableImport(table, MAPPING)], extractor=offline
        )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fraction": 0.0}, "fraction must be in"),
        ({"fraction": 1.5}, "fraction must be in"),
        ({"target": "bleu"}, "target must be one of"),
    ],
)
def test_bad_tau_settings_fail_before_any_work(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        TauSettings(**kwargs)


def test_tau_on_another_target_explains_against_the_context(tmp_path, table, offline):
    store = Store(tmp_path / "ctx.duckdb")
    report = run_pipeline(
        store,
        imports=[TableImport(table, MAPPING, model="m")],
        extractor=offline,
        tau=TauSettings(fraction=1.0, target="ctx_sim"),
    )
    assert report.tau is not None and report.tau.target == "ctx_sim"
    assert _rows(store, "SELECT DISTINCT target FROM tau_results") == [("ctx_sim",)]
    assert len(_rows(store, "SELECT * FROM tau_results")) == 3
    stored = _rows(store, "SELECT result FROM tau_results ORDER BY item_id")
    assert all(json.loads(r) for (r,) in stored)
