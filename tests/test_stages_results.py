"""Tests of s3kg_core.stages.results: signatures, the CUS table, reblending and export."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest
from store_helpers import build_store, special_store

from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.cus import dataset_cus, score_cus_many
from s3kg_core.scoring.result import blend
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.stages.results import cus_table, encoder_for, export_results, latest_signature
from s3kg_core.stages.score import score_store
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.records import KGRecord

TABLE_COLUMNS = [
    "dataset", "model", "temperature", "extractor", "n", "unscored", "gold_sim", "ctx_sim", "cus",
]  # fmt: skip

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_nothing_scored_yet(tmp_path):
    store = build_store(tmp_path / "db.duckdb", n_items=1)
    assert latest_signature(store) is None
    table = cus_table(store)
    assert table.empty and list(table.columns) == TABLE_COLUMNS
    with pytest.raises(ConfigError, match="run `s3kg score` first"):
        tau_store(store)
    # export writes every answer even before scoring: statuses, and no scores (issue 17)
    assert export_results(store, tmp_path / "out.csv") == 2
    frame = pd.read_csv(tmp_path / "out.csv")
    assert frame["unscored_reason"].tolist() == ["not_scored", "not_scored"]
    assert frame["cus"].isna().all() and frame["signature"].isna().all()
    assert set(frame["answer_kg_status"]) == {"ok"}


# -- cus_table against the library ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["paper", "kgx"])
def test_cus_table_equals_a_manual_computation(tmp_path, minilm, mode):
    store = special_store(tmp_path / "db.duckdb")
    config = S3KGConfig(mode=mode, alpha=0.35)
    report = score_store(store, encoder=minilm, config=config)
    table = cus_table(store)
    assert list(table.columns) == TABLE_COLUMNS
    with store.connect() as con:
        kgs = store.load_kgs(con)
    scorer = KGScorer(minilm, config)  # its own cache: nothing shared with the store
    for run, model in ((1, "model-a"), (2, "model-b")):

        def triples(item: int, source: str, run: int = run) -> tuple[Triple, ...]:
            return kgs[(run, item, source)].triples

        results = score_cus_many(
            [
                (triples(i, "answer"), triples(i, "gold"), triples(i, "context"))
                for i in range(1, 5)
            ],
            scorer,
        )
        row = table[table["model"] == model].iloc[0]
        assert (row["dataset"], row["temperature"], row["extractor"]) == ("toy", 0.0, "test")
        for alpha, got in ((None, row), (0.8, cus_table(store, alpha=0.8).iloc[run - 1])):
            want = dataset_cus(results, alpha=alpha)
            assert got["n"] == want.n == 4
            assert got["gold_sim"] == pytest.approx(want.gold_sim, abs=1e-6)
            assert got["ctx_sim"] == pytest.approx(want.ctx_sim, abs=1e-6)
            assert got["cus"] == pytest.approx(want.cus, abs=1e-6)
    assert report.signature.startswith(f"mode:{mode}|")


def test_cus_table_drops_answers_with_an_empty_kg_only_when_asked(tmp_path, minilm):
    """Issue 19: `--empty drop` leaves answers with an empty KG out of the means (the authors'
    QA scripts score them None); the default counts them as 0."""
    store = build_store(tmp_path / "db.duckdb", models=("model-a",), n_items=4)
    with store.transaction() as con:
        store.put_kgs(con, [KGRecord(1, 1, "answer", (), status="empty")])
    score_store(store, encoder=minilm)
    zero = cus_table(store).iloc[0]
    drop = cus_table(store, empty="drop").iloc[0]
    assert (zero["n"], drop["n"]) == (4, 3)
    # the empty answer scored 0: dropping it multiplies each mean by 4 / 3
    for column in ("gold_sim", "ctx_sim", "cus"):
        assert drop[column] == pytest.approx(zero[column] * 4 / 3, abs=1e-9)
        assert drop[column] > zero[column]
    assert cus_table(store, empty="zero").equals(cus_table(store))
    with pytest.raises(ConfigError, match="empty must be one of zero, drop"):
        cus_table(store, empty="none")  # type: ignore[arg-type]


# -- export --------------------------------------------------------------------------------------


def test_export_results_in_every_format(scored, tmp_path):
    store, first = scored
    frames = {}
    for fmt in ("csv", "parquet", "json"):
        out = tmp_path / "exports" / f"results.{fmt}"
        assert export_results(store, out, fmt=fmt) == 8
        if fmt == "csv":
            frames[fmt] = pd.read_csv(out, keep_default_na=False)
        elif fmt == "json":
            frames[fmt] = pd.DataFrame(json.loads(out.read_text(encoding="utf-8")))
        else:
            con = duckdb.connect()
            frames[fmt] = con.execute("SELECT * FROM read_parquet(?)", [str(out)]).df()
            con.close()
    for fmt, frame in frames.items():
        assert len(frame) == 8, fmt
        for column in (
            "dataset",
            "model",
            "ext_id",
            "question",
            "context",
            "gold_answer",
            "answer",
            "gold_status",
            "ctx_status",
            "gold_s_wl",
            "gold_sim",
            "ctx_sim",
            "cus",
            "signature",
        ):
            assert column in frame.columns, (fmt, column)
        assert set(frame["signature"]) == {first.signature}
        assert sorted(frame["answer"]) == sorted(
            f"{m} says {i}" for m in ("model-a", "model-b") for i in range(4)
        )
        assert frame["cus"].between(0.0, 1.0).all()
        by_item = dict(
            zip(zip(frame["model"], frame["ext_id"], strict=True), frame["cus"], strict=True)
        )
        assert by_item == pytest.approx(
            dict(
                zip(
                    zip(frames["csv"]["model"], frames["csv"]["ext_id"], strict=True),
                    frames["csv"]["cus"],
                    strict=True,
                )
            ),
            abs=1e-9,
        )
    with pytest.raises(ConfigError, match="format must be csv, parquet or json"):
        export_results(store, tmp_path / "x.xlsx", fmt="xlsx")


def test_export_parquet_to_a_path_with_a_quote(scored, tmp_path):
    store, _ = scored
    out = tmp_path / "it's here" / "r.parquet"
    assert export_results(store, out, fmt="parquet") == 8
    con = duckdb.connect()
    assert con.execute("SELECT count(*) FROM read_parquet(?)", [str(out)]).fetchall() == [(8,)]
    con.close()


def test_reblend_weights_the_embedding_side_in_hybrid_mode_as_in_paper_mode():
    # Regression: reblend treated every mode but "paper" like kgx, so hybrid scores moved the
    # wrong way when the dashboard's alpha slider moved.
    from s3kg_core.stages.results import reblend

    frame = pd.DataFrame(
        {
            "mode": ["paper", "hybrid", "kgx"],
            "alpha": [0.5] * 3,
            "gold_s_wl": [1.0] * 3,
            "gold_s_sbert": [0.0] * 3,
            "ctx_s_wl": [1.0] * 3,
            "ctx_s_sbert": [0.0] * 3,
        }
    )
    out = reblend(frame, 0.25)
    assert out["gold_sim"].tolist() == [blend(1.0, 0.0, 0.25, m) for m in frame["mode"]]
    assert out["gold_sim"].tolist() == [0.75, 0.75, 0.25]


def test_encoder_for_keeps_the_signatures_backend(tmp_path, monkeypatch):
    # A database that recorded "minilm" for scores made by OpenVINO reloads OpenVINO, whatever
    # $S3KG_ENCODER_BACKEND says now; a signature without a suffix (before backends) is torch's.
    store = build_store(tmp_path / "db.duckdb", n_items=1, n_triples=1, seed=2)
    base = "mode:hybrid|enc:{}|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0"
    with store.transaction() as con:
        store.set_meta(con, "encoder:minilm@0.1.0+openvino", "minilm")
        store.set_meta(con, "encoder:my-model#0123abcd", "/models/my-model")
    monkeypatch.setenv("S3KG_ENCODER_BACKEND", "onnx")
    assert encoder_for(store, base.format("minilm@0.1.0+openvino")) == "minilm+openvino"
    assert encoder_for(store, base.format("minilm@0.1.0")) == "minilm+torch"
    assert encoder_for(store, base.format("mpnet@0.0.1+onnx")) == "mpnet+onnx"
    assert encoder_for(store, base.format("my-model#0123abcd")) == "/models/my-model+torch"
