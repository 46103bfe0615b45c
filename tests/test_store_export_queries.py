"""Tests of s3kg_core.store.export_queries on a real DuckDB file."""

from __future__ import annotations

import doctest
import json

import s3kg_core.store.export_queries as export_queries_module
from s3kg_core.kg import Triple
from s3kg_core.store import queries
from s3kg_core.store.export_queries import (
    ITEM_LEVEL,
    answer_metadata,
    export_keys,
    export_rows,
    extra_column_positions,
    extra_columns,
    kg_triples_json,
    replace_extra_columns,
    run_metadata,
    tau_rows,
)
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store


def test_the_module_doctests_pass():
    assert doctest.testmod(export_queries_module).failed == 0


def _store(tmp_path) -> tuple[Store, int, dict[str, int]]:
    store = Store(tmp_path / "x.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        ids = store.upsert_items(con, ds, [ItemRecord("a"), ItemRecord("b")])
        run = store.ensure_run(con, ds, "org/m", 0.3, "x", source="collect", settings={"k": 1})
    return store, run, ids


def test_extra_columns_are_replaced_per_key(tmp_path):
    store, run, ids = _store(tmp_path)
    a, b = ids["a"], ids["b"]
    with store.transaction() as con:
        replace_extra_columns(
            con,
            [(run, a), (run, b)],
            [(run, a, "kind", 2, "x"), (run, a, "topic", 1, None), (run, b, "kind", 2, "y")],
        )
        replace_extra_columns(con, [(run, a)], [(run, a, "kind", 2, "z")])  # topic goes
        replace_extra_columns(con, [(ITEM_LEVEL, b)], [(ITEM_LEVEL, b, "kind", 0, "item")])
        rows = extra_columns(con).values.tolist()
    assert rows == [
        [ITEM_LEVEL, b, "kind", 0, "item"],
        [run, a, "kind", 2, "z"],
        [run, b, "kind", 2, "y"],
    ]


def test_kgs_as_json_keep_their_order_and_text(tmp_path):
    store, run, ids = _store(tmp_path)
    odd = Triple('say "hi"', "é\\n", "[x]")
    with store.transaction() as con:
        store.put_kgs(
            con,
            [
                KGRecord(
                    run, ids["a"], "gold", (Triple("z", "r", "a"), odd, Triple("a", "r", "b"))
                ),
                KGRecord(run, ids["a"], "answer", (), "empty"),
                KGRecord(run, ids["b"], "answer", (), "failed: no JSON"),
            ],
        )
        frame = kg_triples_json(con)
    got = {(int(r.item_id), r.source): json.loads(r.triples) for r in frame.itertuples()}
    assert got == {
        (ids["a"], "gold"): [["z", "r", "a"], ['say "hi"', "é\\n", "[x]"], ["a", "r", "b"]],
        (ids["a"], "answer"): [],
        (ids["b"], "answer"): [],
    }


def test_answer_and_run_metadata(tmp_path):
    store, run, ids = _store(tmp_path)
    with store.transaction() as con:
        store.put_answers(
            con,
            run,
            [AnswerRecord(ids["a"], "x", seed=3, latency_s=0.5, prompt_tokens=10,
                          completion_tokens=2, model_id="m@1", finish_reason="stop")],
        )  # fmt: skip
        answers = answer_metadata(con).iloc[0].to_dict()
        runs = run_metadata(con).iloc[0].to_dict()
    assert answers == {
        "run_id": run, "item_id": ids["a"], "seed": 3, "latency_s": 0.5, "prompt_tokens": 10,
        "completion_tokens": 2, "model_id": "m@1", "finish_reason": "stop", "truncated": False,
    }  # fmt: skip
    assert runs == {
        "run_id": run, "run_name": "m", "run_model": "org/m", "run_source": "collect",
        "run_settings": '{"k": 1}',  # as stored
    }  # fmt: skip


def test_tau_rows_of_one_signature(tmp_path):
    store, run, ids = _store(tmp_path)
    with store.transaction() as con:
        row = [run, ids["a"], "sig", "cus", 0.05, 0.5, 0.1, 1, 0, 0, 0, 0, 0, '{"aligned": []}']
        queries.replace_tau_results(con, "sig", "cus", [row])
        assert tau_rows(con, "sig") == [(run, ids["a"], "cus", '{"aligned": []}')]
        assert tau_rows(con, "other") == []


# -- an export read a block of answers at a time (issue 33) --------------------------------------


def _two_runs(tmp_path) -> tuple[Store, list[int], dict[str, int]]:
    """Two runs named alike (same display name, temperature, extractor), answers to a and b."""
    store = Store(tmp_path / "k.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        ids = store.upsert_items(con, ds, [ItemRecord("a", "qa?"), ItemRecord("b", "qb?")])
        runs = [store.ensure_run(con, ds, f"org{i}/m", 0.0, "x") for i in (1, 2)]
        for run in runs:
            store.put_answers(
                con, run, [AnswerRecord(i, f"{run}/{e}", seed=run) for e, i in ids.items()]
            )
    return store, runs, ids


def test_export_keys_order_answers_by_item_then_run_among_runs_named_alike(tmp_path):
    store, runs, ids = _two_runs(tmp_path)
    with store.connect() as con:
        keys = export_keys(con).values.tolist()
        only = export_keys(con, [runs[1]]).values.tolist()
        none = export_keys(con, [])
    assert keys == [[r, i] for i in sorted(ids.values()) for r in sorted(runs)]
    assert only == [[runs[1], i] for i in sorted(ids.values())]
    assert none.empty and list(none.columns) == ["run_id", "item_id"]


def test_export_rows_follow_the_keys_order(tmp_path):
    store, _, ids = _two_runs(tmp_path)
    ext = {i: e for e, i in ids.items()}
    with store.connect() as con:
        keys = export_keys(con).iloc[::-1]
        rows = export_rows(con, None, keys)
    assert rows[["run_id", "item_id"]].values.tolist() == keys.values.tolist()
    assert rows["answer"].tolist() == [f"{r}/{ext[i]}" for r, i in keys.values.tolist()]
    assert rows["model"].unique().tolist() == ["m"] and not rows["scored"].any()
    assert rows["mode"].isna().all() and rows["question"].notna().all()


def test_the_groups_queries_keep_the_answers_of_the_keys(tmp_path):
    store, runs, ids = _two_runs(tmp_path)
    a, b = ids["a"], ids["b"]
    with store.transaction() as con:
        store.put_kgs(con, [KGRecord(r, i, "gold", (Triple("x", "r", "y"),)) for r in runs
                            for i in (a, b)])  # fmt: skip
        row = [runs[0], b, "sig", "cus", 0.05, 0.5, 0.1, 1, 0, 0, 0, 0, 0, '{"aligned": []}']
        queries.replace_tau_results(con, "sig", "cus", [row])
        keys = export_keys(con)
        block = keys[keys["item_id"] == b]
        assert sorted(kg_triples_json(con, block)["run_id"]) == sorted(runs)
        assert set(kg_triples_json(con, block)["item_id"]) == {b}
        assert len(kg_triples_json(con)) == 4
        assert answer_metadata(con, block)[["run_id", "item_id"]].values.tolist() == [
            [r, b] for r in runs
        ]
        assert tau_rows(con, "sig", block) == [(runs[0], b, "cus", '{"aligned": []}')]
        assert tau_rows(con, "sig", keys[keys["item_id"] == a]) == []


def test_extra_columns_of_the_keys_and_their_first_positions(tmp_path):
    store, runs, ids = _two_runs(tmp_path)
    a, b = ids["a"], ids["b"]
    with store.transaction() as con:
        replace_extra_columns(
            con,
            [(ITEM_LEVEL, a), (ITEM_LEVEL, b), (runs[0], a)],
            [
                (ITEM_LEVEL, a, "kind", 0, "item a"),
                (ITEM_LEVEL, b, "topic", 5, "item b"),
                (runs[0], a, "kind", 3, "own"),  # hides item a's kind (at 0) for this answer
                (runs[0], a, "note", 1, "n"),
            ],
        )
        keys = export_keys(con)
        first = keys[keys["run_id"] == runs[0]]
        own_a = first[first["item_id"] == a]
        values = extra_columns(con, own_a).values.tolist()
        positions = dict(extra_column_positions(con, own_a).values.tolist())
        everyone = dict(extra_column_positions(con, keys).values.tolist())
    assert values == [[ITEM_LEVEL, a, "kind", 0, "item a"], [runs[0], a, "note", 1, "n"],
                      [runs[0], a, "kind", 3, "own"]]  # fmt: skip
    assert positions == {"kind": 3, "note": 1}
    assert everyone == {"kind": 0, "note": 1, "topic": 5}  # run 2's answer to a has item a's
