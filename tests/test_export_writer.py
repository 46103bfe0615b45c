"""Tests of s3kg_core.export.writer: the export in every format, in blocks, carrying everything."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.export.schema import (
    DEFAULT_INCLUDES,
    EXPORT_COLUMNS,
    INCLUDES,
    read_export,
)
from s3kg_core.export.writer import export_blocks, export_frame, export_results
from s3kg_core.kg import Triple
from s3kg_core.stages.score import score_store
from s3kg_core.stages.scored import latest_signature, scored_frame
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.records import AnswerRecord, KGRecord

pytestmark = pytest.mark.usefixtures("one_torch_thread")


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
        # the signature names the alpha (issue 58: it ended at version:N)
        assert set(frame["signature"]) == {f"{first.signature}|alpha:0.5"}
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


# -- exports that carry everything (issue 32) ----------------------------------------------------


@pytest.fixture(scope="module")
def carried(tmp_path_factory, minilm):
    """An imported run (ids of digits, an `answer_kind` column) and a collected run (latency,
    tokens, model id), with KGs, MiniLM scores and TAU: ``(store, [exports by format])``."""
    from s3kg_core.stages.importing import import_table, parse_mapping
    from s3kg_core.store.records import AnswerRecord
    from s3kg_core.store.store import Store

    folder = tmp_path_factory.mktemp("carried")
    table = folder / "answers.csv"
    table.write_text(
        "id,question,context,gold,answer,answer_kind\n"
        '0001,Does aspirin reduce fever?,"Aspirin reduces fever, the trial says.",Yes.,Yes.,short\n'
        "0002,NA,Ibuprofen treats headache.,It treats headache.,None,refusal\n"
        "0003,What irritates the stomach?,Aspirin irritates the stomach.,Aspirin.,Aspirin does.,"
        "éntity \u00ab quoted \u00bb\n",
        encoding="utf-8",
    )
    store = Store(folder / "db.duckdb")
    mapping = parse_mapping("id=id,question=question,context=context,gold=gold,answer=answer")
    imported = import_table(store, table, mapping, dataset="trial", model="org/imported")
    kg = {
        "0001": [("aspirin", "reduces", "fever")],
        "0002": [("ibuprofen", "treats", "headache")],
        "0003": [("aspirin", "irritates", "stomach")],
    }
    with store.transaction() as con:
        ids = {e: i for e, i in con.execute("SELECT ext_id, item_id FROM items").fetchall()}
        ds = con.execute("SELECT dataset_id FROM datasets").fetchall()[0][0]
        collected = store.ensure_run(
            con, ds, "/cache/models/smol", 0.7, "offline", source="collect",
            settings={"max_tokens": 64}, name="smol-run",
        )  # fmt: skip
        store.put_answers(
            con,
            collected,
            [
                AnswerRecord(ids["0001"], "It does.", seed=7, latency_s=1.25, prompt_tokens=31,
                             completion_tokens=4, model_id="smol@v1", finish_reason="stop"),
                AnswerRecord(ids["0002"], None, error="HTTP 500"),
                AnswerRecord(ids["0003"], "The stomach.", latency_s=0.5, prompt_tokens=29,
                             completion_tokens=3, truncated=True, finish_reason="length"),
            ],
        )  # fmt: skip
        con.execute("UPDATE runs SET extractor = 'offline' WHERE run_id = ?", [imported.run_id])
        records = []
        for run in (imported.run_id, collected):
            for ext, triples in kg.items():
                if run == collected and ext == "0002":
                    continue  # the failed answer has no KGs
                t = tuple(Triple(*x) for x in triples)
                answer = () if (run, ext) == (imported.run_id, "0002") else t
                if run == collected:  # a relation changed and a triple added: scores below 1
                    answer = (Triple(t[0].head, "causes", t[0].tail), Triple("pill", "is", "red"))
                records += [
                    KGRecord(run, ids[ext], "gold", t),
                    KGRecord(run, ids[ext], "context", (*t, Triple("trial", "says", "so"))),
                    KGRecord(run, ids[ext], "answer", answer, "ok" if answer else "empty"),
                ]
        store.put_kgs(con, records)
    score_store(store, encoder=minilm)
    tau_store(store, fraction=0.5, encoder=minilm)
    paths = {}
    for fmt in ("csv", "parquet", "json"):
        paths[fmt] = folder / f"export.{fmt}"
        assert export_results(store, paths[fmt], fmt=fmt, include=INCLUDES) == 6
    return store, paths


def test_an_export_reads_back_alike_from_every_format(carried):
    _, paths = carried
    frames = {fmt: read_export(path) for fmt, path in paths.items()}
    for fmt, frame in frames.items():  # dtypes and values, floats exactly
        pd.testing.assert_frame_equal(frame, frames["parquet"], check_exact=True, obj=fmt)
    frame = frames["csv"]
    expected = {c.name: c.dtype for c in EXPORT_COLUMNS.values()} | {"answer_kind": "str"}
    assert {c: str(t) for c, t in frame.dtypes.items()} == expected
    assert list(frame.columns) == [*list(EXPORT_COLUMNS)[:29], "answer_kind",
                                   *list(EXPORT_COLUMNS)[29:]]  # fmt: skip


def test_the_parquet_file_is_typed_by_itself(carried):
    _, paths = carried
    con = duckdb.connect()
    described = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(paths["parquet"])])
    types = {row[0]: row[1] for row in described.fetchall()}
    con.close()
    assert (types["ext_id"], types["prompt_tokens"], types["truncated"]) == (
        "VARCHAR",
        "BIGINT",
        "BOOLEAN",
    )
    assert (types["run_id"], types["cus"], types["answer_kind"]) == ("BIGINT", "DOUBLE", "VARCHAR")


def test_an_export_carries_ids_extra_columns_metadata_triples_and_tau(carried):
    _, paths = carried
    frame = read_export(paths["json"]).set_index(["run_name", "ext_id"])
    assert sorted(frame.index.get_level_values("ext_id").unique()) == ["0001", "0002", "0003"]
    imported = frame.loc["imported"]
    assert imported["answer_kind"].to_dict() == {
        "0001": "short", "0002": "refusal", "0003": "éntity « quoted »"
    }  # fmt: skip
    assert imported.loc["0002", "question"] == "NA" and imported.loc["0002", "answer"] == "None"
    assert imported["run_model"].unique().tolist() == ["org/imported"]
    assert imported["run_source"].unique().tolist() == ["table/answers.csv"]
    assert imported["latency_s"].isna().all() and imported["prompt_tokens"].isna().all()
    collected = frame.loc["smol-run"]
    assert collected.loc["0001", ["latency_s", "prompt_tokens", "completion_tokens"]].tolist() == [
        1.25, 31, 4
    ]  # fmt: skip
    assert collected.loc["0001", "model_id"] == "smol@v1"
    assert collected.loc["0003", "finish_reason"] == "length"
    assert bool(collected.loc["0003", "truncated"]) and not bool(collected.loc["0001", "truncated"])
    assert json.loads(collected.loc["0001", "run_settings"]) == {"max_tokens": 64}
    assert collected.loc["0001", "model"] == "smol-run"  # the display name, as before
    assert pd.isna(collected.loc["0002", "answer_kind"])  # the collected run has none
    assert collected.loc["0002", "unscored_reason"] == "collect_error"
    assert pd.isna(collected.loc["0002", "gold_triples"])  # no KG stored
    assert json.loads(imported.loc["0001", "gold_triples"]) == [["aspirin", "reduces", "fever"]]
    assert json.loads(imported.loc["0001", "context_triples"])[1] == ["trial", "says", "so"]
    assert json.loads(imported.loc["0002", "answer_triples"]) == []
    # TAU explained the lower half of each run; its categories cover every gold triple
    explained = frame[frame["tau_target"].notna()]
    assert len(explained) == 3 and set(explained["tau_target"]) == {"cus"}
    for _, row in explained.iterrows():
        gold = json.loads(row["tau_gold"])
        assert len(gold) == len(json.loads(row["gold_triples"]))
        assert {g["category"] for g in gold} <= {
            "aligned", "relation_mismatch", "entity_mismatch", "roles_swapped", "missing"
        }  # fmt: skip
        counts = {c: int(row[f"tau_{c}"]) for c in ("aligned", "missing")}
        assert counts["aligned"] == sum(g["category"] == "aligned" for g in gold)
        assert counts["missing"] == sum(g["category"] == "missing" for g in gold)
    empty = imported.loc["0002"]
    assert empty["tau_missing"] == 1 and json.loads(empty["tau_gold"])[0]["category"] == "missing"


def test_each_format_s_default_groups_and_include(carried, tmp_path):
    store, _ = carried
    base = [c.name for c in EXPORT_COLUMNS.values() if c.group == "base"]
    export_results(store, tmp_path / "d.csv", fmt="csv")  # flat: the base and the file's own
    assert list(read_export(tmp_path / "d.csv").columns) == [*base, "answer_kind"]
    export_results(store, tmp_path / "m.csv", fmt="csv", include=["metadata"])
    assert "latency_s" in read_export(tmp_path / "m.csv").columns
    export_results(store, tmp_path / "d.json", fmt="json")
    assert "tau_gold" in read_export(tmp_path / "d.json").columns
    export_results(store, tmp_path / "n.parquet", fmt="parquet", include=())
    assert list(read_export(tmp_path / "n.parquet").columns) == [*base, "answer_kind"]
    with pytest.raises(ConfigError, match="include takes metadata, triples, tau; got nope"):
        export_results(store, tmp_path / "x.csv", include=["nope"])


def test_json_export_keeps_every_digit_of_a_score(carried):
    # Regression (issue 32): pandas' to_json wrote 10 significant digits, so a JSON export's
    # scores differed from the CSV's and Parquet's in the 11th digit.
    store, paths = carried
    exact = scored_frame(store, latest_signature(store))["cus"].tolist()
    written = [r["cus"] for r in json.loads(paths["json"].read_text(encoding="utf-8"))]
    assert sorted(v for v in written if v is not None) == sorted(exact)
    assert any(len(repr(v)) > 12 for v in exact)  # a score that 10 digits would have cut


# -- exports read and written a block of answers at a time (issue 33) ----------------------------


def _parquet_rows(path):
    con = duckdb.connect()
    try:
        types = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
        return types, con.execute("SELECT * FROM read_parquet(?)", [str(path)]).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_an_export_written_in_blocks_is_the_one_block_export(carried, tmp_path, fmt):
    # Regression (issue 33): export_results built the whole frame, then a copy per format, so
    # its memory grew with the answers (2.6 GB at 100,000). It now reads and writes a block of
    # answers at a time; the file must not depend on the blocks: columns (an extra column
    # some blocks lack, answers without KGs or TAU), dtypes, order, every value.
    store, _ = carried
    whole = tmp_path / f"whole.{fmt}"
    assert export_results(store, whole, fmt=fmt, include=INCLUDES, block_size=6) == 6
    for size in (1, 4):
        out = tmp_path / f"by{size}.{fmt}"
        assert export_results(store, out, fmt=fmt, include=INCLUDES, block_size=size) == 6
        if fmt == "parquet":
            assert _parquet_rows(out) == _parquet_rows(whole)
        else:
            assert out.read_bytes() == whole.read_bytes()
        pd.testing.assert_frame_equal(read_export(out), read_export(whole), check_exact=True)
    # no part, spool or temporary file is left beside the export
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{name}.{fmt}" for name in ("whole", "by1", "by4")
    )


def test_export_frame_is_its_blocks_put_together(carried):
    store, paths = carried
    whole = export_frame(store)
    blocks = list(export_blocks(store, block_size=4))
    assert [len(b) for b in blocks] == [4, 2]
    for block in blocks:  # one set of columns and dtypes, whatever a block holds
        assert block.dtypes.to_dict() == whole.dtypes.to_dict()
    pd.testing.assert_frame_equal(pd.concat(blocks, ignore_index=True), whole, check_exact=True)
    pd.testing.assert_frame_equal(read_export(paths["parquet"]), whole, check_exact=True)
    with pytest.raises(ConfigError, match="block_size must be a positive number"):
        export_blocks(store, block_size=0)  # at once, not at the first block
    with pytest.raises(ConfigError, match="include takes"):
        export_blocks(store, include=["nope"])


def test_an_export_without_answers_is_typed_and_empty_in_every_format(tmp_path):
    from s3kg_core.store.records import ItemRecord
    from s3kg_core.store.store import Store

    store = Store(tmp_path / "db.duckdb")
    with store.transaction() as con:
        store.upsert_items(con, store.ensure_dataset(con, "d"), [ItemRecord("q1")])
    blocks = list(export_blocks(store))
    assert len(blocks) == 1 and blocks[0].empty
    assert list(blocks[0].columns) == list(EXPORT_COLUMNS)
    for fmt in ("csv", "parquet", "json"):
        assert export_results(store, tmp_path / f"e.{fmt}", fmt=fmt, block_size=1) == 0
    for fmt in ("csv", "parquet"):  # the header, typed in Parquet
        back = read_export(tmp_path / f"e.{fmt}")
        assert back.empty and list(back.columns) == list(
            export_frame(store, include=DEFAULT_INCLUDES[fmt]).columns
        )
    assert (tmp_path / "e.json").read_text(encoding="utf-8") == "[]"  # as json.dump([]) writes
    with pytest.raises(ConfigError, match="block_size"):
        export_results(store, tmp_path / "never.csv", block_size=0)
    assert not (tmp_path / "never.csv").exists()


def test_an_extra_column_named_like_an_export_column_is_renamed(tmp_path):
    from s3kg_core.stages.importing import import_table, parse_mapping
    from s3kg_core.store.store import Store

    path = tmp_path / "t.csv"
    path.write_text("q,c,g,cus,model\nq?,c.,g.,0.9,mine\n", encoding="utf-8")
    store = Store(tmp_path / "db.duckdb")
    import_table(store, path, parse_mapping("question=q,context=c,gold=g"))
    with store.transaction() as con:  # the item needs an answer to be exported
        run = store.ensure_run(con, 1, "m", 0.0, "none")
        store.put_answers(con, run, [AnswerRecord(1, "a")])
    frame = read_export(_exported(store, tmp_path / "o.csv"))
    assert frame[["input_cus", "input_model", "model"]].values.tolist() == [["0.9", "mine", "m"]]
    assert pd.isna(frame.loc[0, "cus"])


def _exported(store, path):
    export_results(store, path, fmt=path.suffix[1:])
    return path
