"""Tests of s3kg_core.stages.score, .results and .tau over a stored run: score, CUS, TAU, export."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from conftest import CountingEncoder
from store_helpers import build_store, count

from s3kg_core.encoders.backend import backend_of_name, with_backend
from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.cus import dataset_cus, harmonic_mean, score_cus_many
from s3kg_core.scoring.result import blend
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import cus_table, encoder_for, export_results, latest_signature
from s3kg_core.stages.score import score_store
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.records import KGRecord
from s3kg_core.store.store import Store

TABLE_COLUMNS = [
    "dataset", "model", "temperature", "extractor", "n", "unscored", "gold_sim", "ctx_sim", "cus",
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _special_store(path: Path) -> Store:
    """Two runs of four items; run 1 item 2 has an empty answer KG, run 1 item 3 an unparseable
    answer KG, run 2 item 4 an unparseable context KG."""
    store = build_store(path, n_items=4, n_triples=3, seed=1)
    with store.transaction() as con:
        store.put_kgs(
            con,
            [
                KGRecord(1, 2, "answer", (), "empty"),
                KGRecord(1, 3, "answer", (), "unparseable"),
                KGRecord(2, 4, "context", (), "unparseable"),
            ],
        )
    return store


def _components(store: Store, signature: str) -> dict[tuple[int, int], tuple]:
    with store.connect() as con:
        rows = con.execute(
            "SELECT run_id, item_id, gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, "
            "ctx_status FROM scores WHERE signature = ?",
            [signature],
        ).fetchall()
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


@pytest.fixture(scope="module")
def scored_template(tmp_path_factory, minilm):
    """A scored database (default config), scored once per module; tests copy it."""
    path = tmp_path_factory.mktemp("pipeline") / "scored.duckdb"
    store = _special_store(path)
    encoder = CountingEncoder(minilm)
    report = score_store(store, encoder=encoder, batch_items=3)
    return path, report, encoder.texts


@pytest.fixture
def scored(tmp_path, scored_template):
    """A private copy of the scored database: ``(store, first report)``."""
    path, report, _ = scored_template
    copy = tmp_path / "scored.duckdb"
    shutil.copy(path, copy)
    return Store(copy), report


# -- score_store ---------------------------------------------------------------------------------


def test_score_store_scores_every_answer_with_statuses(scored, scored_template, minilm):
    store, report = scored
    assert report.signature == S3KGConfig().signature(minilm.name)
    assert (report.pending, report.scored, report.already_done) == (8, 8, 0)
    assert report.encoded == len(scored_template[2]) > 0
    assert report.statuses == {
        "ok": 11,
        "empty_kg_1": 2,
        "unparseable_kg_1": 2,
        "unparseable_kg_2": 1,
    }
    comps = _components(store, report.signature)
    assert set(comps) == {(run, item) for run in (1, 2) for item in (1, 2, 3, 4)}
    assert comps[(1, 2)] == (0.0, 0.0, "empty_kg_1", 0.0, 0.0, "empty_kg_1")
    assert comps[(1, 3)] == (0.0, 0.0, "unparseable_kg_1", 0.0, 0.0, "unparseable_kg_1")
    assert comps[(2, 4)][2] == "ok" and comps[(2, 4)][3:] == (0.0, 0.0, "unparseable_kg_2")
    for key, (gwl, gsb, gst, cwl, csb, _cst) in comps.items():
        assert all(0.0 <= v <= 1.0 for v in (gwl, gsb, cwl, csb)), key
        if gst == "ok":
            assert gsb > 0.0, key
    with store.connect() as con:
        mode, alpha, detail = con.execute(
            "SELECT mode, alpha, gold_detail FROM scores WHERE run_id = 1 AND item_id = 1"
        ).fetchall()[0]
        n_embeddings = con.execute("SELECT count(*) FROM embeddings").fetchall()[0][0]
    assert (mode, alpha) == ("hybrid", 0.5)  # the default mode
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
    before = _components(store, first.signature)
    table_before = cus_table(store)
    again = score_store(store, encoder=counting_minilm, config=S3KGConfig(alpha=0.2))
    assert (again.scored, again.already_done, again.encoded) == (0, 8, 0)
    assert counting_minilm.batches == []
    assert _components(store, first.signature) == before
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
    statuses = {c[2] for c in _components(store, again.signature).values()}
    assert statuses == {"ok", "empty_kg_1", "unparseable_kg_1"}


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
    store = _special_store(tmp_path / "db.duckdb")
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
        assert g_status == ("empty_kg_1" if item == 3 else "ok")
    assert rows[2][1] == rows[2][2] > 0  # the empty answer KG: the texts' cosine, both sides
    table = cus_table(store)
    assert table.iloc[0]["n"] == 3 and table.iloc[0]["cus"] > 0
    assert cus_table(store, empty="drop").iloc[0]["n"] == 2


# -- TAU -----------------------------------------------------------------------------------------


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
            "n_relation_mismatch, n_entity_mismatch, n_extra, n_missing, result "
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
            result = json.loads(row[10])
            assert [
                len(result[k])
                for k in ("aligned", "relation_mismatch", "entity_mismatch", "extra", "missing")
            ] == list(row[5:10])
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
