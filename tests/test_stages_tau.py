"""Tests of s3kg_core.stages.tau: tau_store on a scored DuckDB file."""

from __future__ import annotations

import json
import math

import pytest
from conftest import CountingEncoder
from store_helpers import build_store

from s3kg_core.encoders.backend import backend_of_name, with_backend
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.cus import harmonic_mean
from s3kg_core.scoring.result import blend
from s3kg_core.scoring.signature import Signature
from s3kg_core.scoring.tau import TAU_CATEGORIES
from s3kg_core.stages.score import score_store
from s3kg_core.stages.scored import encoder_for
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _item_cus(store: Store, signature: str) -> dict[tuple[int, int], float]:
    with store.connect() as con:
        rows = con.execute(
            "SELECT run_id, item_id, alpha, gold_s_wl, gold_s_sbert, ctx_s_wl, ctx_s_sbert "
            "FROM scores WHERE signature = ?",
            [signature],
        ).fetchall()
    return {
        (r[0], r[1]): float(harmonic_mean(blend(r[3], r[4], r[2]), blend(r[5], r[6], r[2])))
        for r in rows
    }


def _tau_rows(store: Store) -> list[tuple]:
    with store.connect() as con:
        return con.execute(
            "SELECT run_id, item_id, target, fraction, target_score, n_aligned, "
            "n_relation_mismatch, n_entity_mismatch, n_roles_swapped, n_extra, n_missing, result "
            "FROM tau_results ORDER BY target, run_id, item_id"
        ).fetchall()


@pytest.mark.parametrize(("fraction", "per_run"), [(0.05, 1), (0.5, 2), (0.51, 3), (1.0, 4)])
def test_tau_store_explains_the_lowest_ceil_fraction_of_each_run(scored, minilm, fraction, per_run):
    store, first = scored
    assert per_run == max(1, math.ceil(4 * fraction))
    report = tau_store(store, fraction=fraction, encoder=minilm)
    assert (report.signature, report.target, report.analysed) == (
        first.signature,
        "cus",
        2 * per_run,
    )
    rows = _tau_rows(store)
    assert len(rows) == 2 * per_run
    cus = _item_cus(store, first.signature)
    for run in (1, 2):
        ranked = sorted((v, item) for (r, item), v in cus.items() if r == run)
        want = sorted(item for _, item in ranked[:per_run])
        got = [row for row in rows if row[0] == run]
        assert [row[1] for row in got] == want
        for row in got:
            assert row[2:4] == ("cus", fraction)
            assert row[4] == pytest.approx(cus[(run, row[1])], abs=1e-9)
            result = json.loads(row[11])
            assert [len(result[k]) for k in TAU_CATEGORIES] == list(row[5:11])
    totals = {k: sum(r[5 + i] for r in rows) for i, k in enumerate(report.counts)}
    assert totals == report.counts


def test_tau_store_replaces_its_rows_and_keeps_targets_apart(scored, minilm):
    store, _ = scored
    tau_store(store, fraction=1.0, encoder=minilm)
    assert len(_tau_rows(store)) == 8
    tau_store(store, fraction=0.05, encoder=minilm)
    assert len(_tau_rows(store)) == 2
    report = tau_store(store, fraction=0.05, target="ctx_sim", encoder=minilm)
    assert report.analysed == 2
    rows = _tau_rows(store)
    assert [r[2] for r in rows] == ["ctx_sim", "ctx_sim", "cus", "cus"]
    with pytest.raises(ConfigError, match="target must be one of"):
        tau_store(store, target="wl", encoder=minilm)


def test_tau_store_defaults_to_the_signatures_packaged_encoder(scored):
    store, _ = scored
    assert tau_store(store).analysed == 2  # "minilm" read back from the signature


def test_tau_store_finds_a_local_model_directory_recorded_by_score(tmp_path, exported_minilm):
    store = build_store(tmp_path / "db.duckdb", n_items=2, n_triples=2, seed=2)
    report = score_store(store, encoder=str(exported_minilm))
    assert "|enc:my-minilm#" in report.signature
    enc = Signature.parse(report.signature).encoder
    assert encoder_for(store, report.signature) == with_backend(
        str(exported_minilm), backend_of_name(enc)
    )
    assert tau_store(store).analysed == 2  # no encoder given: the directory is read back


def test_tau_store_with_an_unrecorded_encoder_says_to_pass_it(tmp_path, minilm):
    store = build_store(tmp_path / "db.duckdb", n_items=2, n_triples=2, seed=2)
    local = CountingEncoder(minilm, name="my-minilm#0123abcd")  # an object: no path to record
    score_store(store, encoder=local)
    with pytest.raises(ConfigError, match="pass it with --encoder PATH"):
        tau_store(store)
    assert tau_store(store, encoder=local).analysed == 2


def test_tau_store_stores_an_oversized_kg_with_its_status_and_counts_it(
    scored, minilm, monkeypatch
):
    """Issue 28, item 5: an answer whose KG is past the limits is stored unexplained, with
    the reason, and the report says how many (it blew up TAU's memory before)."""
    import s3kg_core.limits as limits

    store, _ = scored
    monkeypatch.setattr(limits, "MAX_TRIPLES", 1)
    report = tau_store(store, fraction=1.0, encoder=minilm)
    rows = _tau_rows(store)
    statuses = [json.loads(r[-1])["status"] for r in rows]
    assert report.oversized == sum(s != "ok" for s in statuses) > 0
    assert set(statuses) <= {"ok", "oversized_gold", "oversized_answer"}
    assert "not analysed: a KG over the size limits" in report.summary()
    assert all(sum(r[5:11]) == 0 for r, s in zip(rows, statuses, strict=True) if s != "ok")


# -- the threshold, and the TAU signature that records it (issue 30) -------------------------


def _calibrate(store: Store, encoder: str, threshold: float) -> None:
    from datetime import datetime

    from s3kg_core.store import annotation_queries

    with store.transaction() as con:
        annotation_queries.insert_calibration(
            con,
            {
                "created_at": datetime(2025, 1, 1),
                "encoder": encoder,
                "threshold": threshold,
                "f1": 1.0,
                "precision": 1.0,
                "recall": 1.0,
                "positives": 1,
                "negatives": 1,
                "curve": "[]",
                "detail": "{}",
            },
        )


def _results(store: Store) -> list[dict]:
    return [json.loads(r[11]) for r in _tau_rows(store)]


def test_each_result_records_the_threshold_and_where_it_came_from(scored, minilm):
    store, _ = scored
    report = tau_store(store, fraction=1.0, encoder=minilm)
    assert (
        report.tau_signature
        == f"tau|enc:{minilm.name}|triple:0.76|component:0.76|threshold:default"
    )
    assert {r["signature"] for r in _results(store)} == {report.tau_signature}
    assert {r["triple_threshold"] for r in _results(store)} == {0.76}
    strict = tau_store(store, fraction=1.0, encoder=minilm, threshold=1.0)
    assert strict.tau_signature.endswith("|triple:1|component:0.76|threshold:given")
    assert {r["triple_threshold"] for r in _results(store)} == {1.0}
    assert strict.counts["aligned"] <= report.counts["aligned"]


def test_the_calibrated_threshold_is_the_newest_one_stored_for_the_encoder(scored, minilm):
    store, _ = scored
    with pytest.raises(ConfigError, match="s3kg tau calibrate"):
        tau_store(store, encoder=minilm, threshold="calibrated")
    _calibrate(store, "another-encoder", 0.5)
    _calibrate(store, minilm.name, 0.9)
    _calibrate(store, minilm.name, 0.83)
    report = tau_store(store, fraction=1.0, encoder=minilm, threshold="calibrated")
    assert report.tau_signature.endswith("|triple:0.83|component:0.76|threshold:calibrated#3")
    assert {r["triple_threshold"] for r in _results(store)} == {0.83}


@pytest.mark.parametrize("bad", [1.5, -0.1, "high", float("nan")])
def test_a_threshold_out_of_range_is_a_config_error(scored, minilm, bad):
    store, _ = scored
    with pytest.raises(ConfigError, match="threshold must be a number in"):
        tau_store(store, encoder=minilm, threshold=bad)


def test_tau_works_block_by_block_with_the_same_results(scored, minilm, monkeypatch):
    # Issue 33: TAU loaded every KG of every run with a pick and every stored vector; now each
    # block of answers reads only its own.
    store, _ = scored
    tau_store(store, fraction=1.0, encoder=minilm)
    whole = _tau_rows(store)
    read: list[int] = []
    load_kgs_of = Store.load_kgs_of

    def counting_kgs(con, answers):
        answers = list(answers)
        read.append(len(answers))
        return load_kgs_of(con, answers)

    def refuse(*args, **kwargs):
        raise AssertionError("the whole database was read")

    monkeypatch.setattr(Store, "load_kgs_of", staticmethod(counting_kgs))
    monkeypatch.setattr(Store, "load_kgs", staticmethod(refuse))
    monkeypatch.setattr(Store, "load_embeddings", staticmethod(refuse))
    report = tau_store(store, fraction=1.0, encoder=minilm, block=3)
    assert report.analysed == 8 and read == [3, 3, 2]
    assert _tau_rows(store) == whole
    with pytest.raises(ConfigError, match="block must be >= 1"):
        tau_store(store, encoder=minilm, block=0)
