"""Tests of s3kg_core.stages.ray_scoring: scoring a stored run on a real local Ray cluster."""

import shutil

import pytest

from s3kg_core.analysis.cus_table import cus_table
from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.stages.score import score_store
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store

pytest.importorskip("ray")

T = Triple


def _build(path) -> Store:
    store = Store(path)
    kgs_by_item = {
        "q1": (
            [T("aspirin", "reduces", "fever")],
            [T("aspirin", "reduces", "fever"), T("aspirin", "is", "nsaid")],
            [T("aspirin", "inhibits", "cox")],
        ),
        "q2": ([T("paris", "capital_of", "france")], [T("paris", "capital_of", "france")], []),
        "q3": ([], [T("a", "r", "b")], [T("a", "r", "b")]),
        "q4": (
            [T("renzo", "beat", "thomas")],
            [T("thomas", "beat", "renzo")],
            [T("renzo", "won", "final")],
        ),
        "q5": ([T("curie", "discovered", "radium")], [T("curie", "found", "radium")], []),
    }
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy")
        ids = store.upsert_items(con, ds, [ItemRecord(k, k, "ctx", "gold") for k in kgs_by_item])
        for model in ("m1", "m2"):
            run = store.ensure_run(con, ds, model, 0.0, "test")
            store.put_answers(con, run, [AnswerRecord(ids[k], "answer") for k in kgs_by_item])
            store.put_kgs(
                con,
                [
                    KGRecord(run, ids[k], source, tuple(kg), "ok" if kg else "empty")
                    for k, kgs in kgs_by_item.items()
                    for source, kg in zip(("answer", "gold", "context"), kgs, strict=True)
                ],
            )
    return store


def _components(store: Store) -> list[tuple]:
    with store.connect() as con:
        return con.execute(
            "SELECT run_id, item_id, gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl, "
            "ctx_s_sbert, ctx_status FROM scores ORDER BY run_id, item_id"
        ).fetchall()


def test_ray_scores_equal_single_process_scores(tmp_path):
    local = _build(tmp_path / "local.duckdb")
    shutil.copy(local.path, tmp_path / "ray.duckdb")
    on_ray = Store(tmp_path / "ray.duckdb")
    single = score_store(local, encoder="minilm", batch_items=3)
    report = score_store(
        on_ray, encoder="minilm", batch_items=3, ray_address="local", ray_workers=2
    )
    assert report.scored == single.scored == 10
    assert report.signature == single.signature
    a, b = _components(local), _components(on_ray)
    assert [r[:2] for r in a] == [r[:2] for r in b]
    for x, y in zip(a, b, strict=True):
        assert x[2:4] == pytest.approx(y[2:4], abs=1e-6)
        assert x[5:7] == pytest.approx(y[5:7], abs=1e-6)
        assert (x[4], x[7]) == (y[4], y[7])
    t1, t2 = cus_table(local), cus_table(on_ray)
    assert t1["cus"].tolist() == pytest.approx(t2["cus"].tolist(), abs=1e-6)
    # the workers' embeddings were persisted by the driver: nothing left to encode locally
    again = score_store(Store(tmp_path / "ray.duckdb"), encoder="minilm", config=None)
    assert again.scored == 0 and again.already_done == 10


def test_ray_needs_an_encoder_name(tmp_path):
    from s3kg_core.encoders.registry import load_encoder

    store = _build(tmp_path / "x.duckdb")
    with pytest.raises(ConfigError, match="encoder by name"):
        score_store(store, encoder=load_encoder("minilm"), ray_address="local")
