"""Tests of s3kg_core.store.export_queries on a real DuckDB file."""

from __future__ import annotations

import doctest
import json

import s3kg_core.store.export_queries as export_queries_module
from s3kg_core.kg import Triple
from s3kg_core.store.export_queries import (
    ITEM_LEVEL,
    answer_metadata,
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
        row = [run, ids["a"], "sig", "cus", 0.05, 0.5, 0.1, 1, 0, 0, 0, 0, '{"aligned": []}']
        con.execute("INSERT INTO tau_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
        assert tau_rows(con, "sig") == [(run, ids["a"], "cus", '{"aligned": []}')]
        assert tau_rows(con, "other") == []
