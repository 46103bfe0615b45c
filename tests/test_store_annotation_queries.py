"""The SQL of annotation (s3kg_core.store.annotation_queries) on real DuckDB files."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from store_helpers import build_store

from s3kg_core.kg import Triple
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.records import KGRecord
from s3kg_core.store.store import Store

T0 = datetime(2025, 3, 1, 12, 0, 0)
G, A = ("a", "r", "b"), ("a", "r", "c")


def _row(uid: str, verdict: str, *, who="ann", gold=G, answer=A, replaces=None, role="annotator"):
    return {
        "uid": uid,
        "created_at": T0,
        "annotator": who,
        "role": role,
        "task_id": None,
        "run_id": 1,
        "item_id": 1,
        "category": "aligned",
        "gold_triple": gold,
        "answer_triple": answer,
        "gold_extracted": ((gold[0].upper(), *gold[1:]),) if gold else (),
        "answer_extracted": (),
        "verdict": verdict,
        "replaces": replaces,
        "source": "test",
    }


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "q.duckdb")


def test_rows_come_back_with_tuples_and_in_effect_through_undo(store):
    with store.transaction() as con:
        one = aq.insert_verdict(con, _row("u1", "confirm"))
        two = aq.insert_verdict(con, _row("u2", "reject", replaces=one))
        aq.insert_verdict(con, _row("u3", "undo", replaces=two))
        aq.insert_verdict(con, _row("u4", "confirm", who="bob", gold=None))
        current = aq.current_verdicts(con)
        assert [(r["uid"], r["verdict"]) for r in current] == [("u1", "confirm"), ("u4", "confirm")]
        assert current[0]["gold_triple"] == G and current[0]["gold_extracted"] == (("A", "r", "b"),)
        assert current[1]["gold_triple"] is None and current[1]["answer_extracted"] == ()
        assert aq.effective_entry(con, "ann", "annotator", 1, 1, G, A)["uid"] == "u1"
        assert aq.effective_entry(con, "bob", "annotator", 1, 1, None, A)["uid"] == "u4"
        assert aq.effective_entry(con, "bob", "annotator", 1, 1, G, A) is None
        assert aq.last_undoable(con, "ann", "annotator")["uid"] == "u1"  # u2 is undone
        assert aq.current_verdicts(con, annotator="bob", role="annotator")[0]["uid"] == "u4"


def test_a_withdrawal_is_in_effect_but_no_current_verdict(store):
    with store.transaction() as con:
        one = aq.insert_verdict(con, _row("u1", "confirm"))
        aq.insert_verdict(con, _row("u2", "withdraw", replaces=one))
        assert aq.current_verdicts(con) == []
        assert aq.effective_entry(con, "ann", "annotator", 1, 1, G, A)["verdict"] == "withdraw"


def test_a_bulk_insert_keeps_its_order_and_types(store):
    rows = [_row(f"u{i}", "confirm", gold=("a", "r", str(i))) for i in range(5)]
    rows[2] = {**_row("u2", "reject", gold=None), "answer_extracted": (("x", "y", "z"),)}
    with store.transaction() as con:
        assert aq.insert_verdicts(con, rows) == 5
        assert aq.insert_verdicts(con, []) == 0
        log = aq.verdict_log(con)
        assert [r["uid"] for r in log] == [f"u{i}" for i in range(5)]
        assert [r["verdict_id"] for r in log] == [1, 2, 3, 4, 5]
        assert log[2]["gold_triple"] is None and log[2]["answer_extracted"] == (("x", "y", "z"),)
        assert log[3]["gold_triple"] == ("a", "r", "3") and log[3]["created_at"] == T0
        assert aq.uids_present(con, ["u1", "nope", "u4"]) == {"u1": 2, "u4": 5}
        aq.set_replaces(con, [])  # regression: an import replacing nothing failed here
        aq.set_replaces(con, [(2, 5)])
        assert aq.verdict_entries(con, [5, 99])[5]["replaces"] == 2


def test_uids_are_unique(store):
    import duckdb

    with store.transaction() as con:
        aq.insert_verdict(con, _row("same", "confirm"))
    with pytest.raises(duckdb.ConstraintException), store.transaction() as con:
        aq.insert_verdict(con, _row("same", "reject"))


def test_eligible_items_need_both_kgs_unfailed_and_a_triple(tmp_path):
    store = build_store(tmp_path / "e.duckdb", models=("m",), n_items=4)
    with store.transaction() as con:
        store.put_kgs(
            con,
            [
                KGRecord(1, 1, "gold", (), status="failed: timeout"),
                KGRecord(1, 2, "gold", ()),
                KGRecord(1, 2, "answer", ()),
                KGRecord(1, 3, "gold", ()),
                KGRecord(1, 3, "answer", (Triple("a", "r", "b"),)),
            ],
        )
        assert aq.eligible_items(con) == [(1, 3), (1, 4)]
        assert aq.eligible_items(con, [2]) == []
        assert aq.item_keys(con, [(1, 3), (7, 7)]) == {(1, 3): ("toy", "q2")}


def test_tasks_units_and_queues(store):
    unit = {
        "run_id": 1,
        "item_id": 1,
        "unit": 0,
        "category": "aligned",
        "gold_triple": G,
        "answer_triple": A,
        "gold_extracted": (G,),
        "answer_extracted": (A,),
        "similarity": 0.9,
    }
    with store.transaction() as con:
        task = aq.insert_task(
            con, name="t", created_at=T0, annotators=["ann", "bob"], overlap=1, settings="{}"
        )
        aq.insert_task_items(con, task, [("ann", 0, 1, 1), ("bob", 0, 1, 2)])
        aq.insert_task_units(
            con, task, [unit, {**unit, "unit": 1, "category": "extra", "gold_triple": None}]
        )
        aq.insert_task_units(con, task, [{**unit, "item_id": 2}])
        assert aq.task(con, task)["annotators"] == ("ann", "bob") and aq.task(con, 99) is None
        assert [t["name"] for t in aq.tasks(con)] == ["t"]
        assert [r["item_id"] for r in aq.task_items(con, task, "bob")] == [2]
        assert len(aq.task_units(con, task, 1, 1)) == 2
        assert aq.task_unit(con, task, 1, 1, None, A)["category"] == "extra"
        assert aq.task_unit(con, task, 1, 1, G, None) is None
        assert aq.queue_rows(con, task, "ann") == [
            {"position": 0, "run_id": 1, "item_id": 1, "units": 2, "decided": 0,
             "categories": ["aligned", "extra"]}
        ]  # fmt: skip
        aq.insert_verdict(con, _row("u1", "skip"))
        aq.insert_verdict(con, _row("u2", "confirm", who="bob"))  # bob's, on ann's item
        assert aq.queue_rows(con, task, "ann")[0]["decided"] == 1
        aq.insert_verdict(con, _row("u3", "confirm", gold=None))
        assert aq.queue_rows(con, task, "ann")[0]["decided"] == 2
        aq.insert_verdict(con, _row("u4", "undo", gold=None, replaces=3))
        assert aq.queue_rows(con, task, "ann")[0]["decided"] == 1


def test_calibrations_newest_first_per_encoder(store):
    row = {
        "created_at": T0,
        "encoder": "enc@1",
        "threshold": 0.8,
        "f1": 0.9,
        "precision": 0.9,
        "recall": 0.9,
        "positives": 3,
        "negatives": 2,
        "curve": json.dumps([]),
        "detail": json.dumps({}),
    }
    with store.transaction() as con:
        assert aq.latest_calibration(con) is None
        aq.insert_calibration(con, row)
        newest = aq.insert_calibration(con, {**row, "threshold": 0.7})
        aq.insert_calibration(con, {**row, "encoder": "other", "threshold": 0.5})
        found = aq.latest_calibration(con, "enc@1")
        assert (found["calibration_id"], found["threshold"]) == (newest, 0.7)
        assert aq.latest_calibration(con)["encoder"] == "other"


def test_an_export_frame_goes_to_parquet_and_back(tmp_path):
    import duckdb
    import pandas as pd

    frame = pd.DataFrame(
        {
            "uid": ["u1", "u2"],
            "created_at": [T0, T0],
            "task_id": [None, 3],
            "gold_triple": [G, None],
            "gold_extracted": [(G, A), ()],
            "note": ["x", None],
        },
        dtype=object,
    )
    con = duckdb.connect()
    try:
        aq.copy_export_to_parquet(con, frame, tmp_path / "o'k.parquet")
        back = aq.read_parquet_frame(con, tmp_path / "o'k.parquet")
    finally:
        con.close()
    assert back["gold_triple"].tolist() == [list(G), None]
    assert back["gold_extracted"].tolist() == [[list(G), list(A)], []]
    assert back["task_id"].tolist()[1] == 3 and back["created_at"].tolist() == [T0, T0]
