"""Tests of s3kg_core.stages.scored: signatures, encoders, reblending, nothing scored yet."""

from __future__ import annotations

import pandas as pd
import pytest
from store_helpers import build_store

from s3kg_core.analysis.cus_table import cus_table
from s3kg_core.errors import ConfigError
from s3kg_core.export.writer import export_results
from s3kg_core.scoring.result import blend
from s3kg_core.stages.scored import blend_alpha, encoder_for, latest_signature, reblend
from s3kg_core.stages.tau import tau_store

TABLE_COLUMNS = [
    "dataset", "model", "temperature", "extractor", "run_id", "n", "unscored", "gold_sim",
    "ctx_sim", "cus", "cus_low", "cus_high",
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


def test_reblend_weights_the_embedding_side_in_hybrid_mode_as_in_paper_mode():
    # Regression: reblend treated every mode but "paper" like kgx, so hybrid scores moved the
    # wrong way when the dashboard's alpha slider moved.
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


def test_blend_alpha_is_the_given_else_the_stored_one_issue_58(tmp_path):
    """Issue 58: commands run without --alpha printed no alpha; :func:`blend_alpha` names the
    one their scores are blended at, and refuses to pick one of several."""
    from s3kg_core.store import queries
    from s3kg_core.store.records import ScoreRecord

    store = build_store(tmp_path / "db.duckdb", n_items=2)
    with pytest.raises(ConfigError, match="nothing is scored under signature sig"):
        blend_alpha(store, "sig")
    assert blend_alpha(store, "sig", 0.7) == 0.7
    with store.transaction() as con:
        store.put_scores(
            con,
            [
                ScoreRecord(1, item, "sig", "ot", 0.25, 0.2, 0.4, "ok", 0.1, 0.3, "ok", "{}", None)
                for item in (1, 2)
            ],
        )
    assert blend_alpha(store, "sig") == 0.25 and blend_alpha(store, "sig", 0.0) == 0.0
    with store.transaction() as con:
        con.execute("UPDATE scores SET alpha = 0.8 WHERE item_id = 2")
        assert queries.score_alphas(con, "sig") == [0.25, 0.8]
    with pytest.raises(ConfigError, match=r"stored with alphas 0\.25, 0\.8: pass --alpha"):
        blend_alpha(store, "sig")


def test_the_empty_policy_is_one_filter_and_refuses_an_unknown_policy():
    """Issue 61: the "drop" filter was written at four callers; one function applies it."""
    import pandas as pd
    import pytest

    from s3kg_core.errors import ConfigError
    from s3kg_core.stages.scored import apply_empty_policy

    frame = pd.DataFrame(
        {"gold_status": ["ok", "ok", "answer_kg_empty"], "ctx_status": ["ok", "parse_error", "ok"]}
    )
    assert apply_empty_policy(frame, "zero") is frame
    assert apply_empty_policy(frame, "drop").index.tolist() == [0]
    with pytest.raises(ConfigError, match="empty must be one of zero, drop"):
        apply_empty_policy(frame, "none")
