"""The verdict log (s3kg_core.annotation.log) on real DuckDB files: every act is a new row,
undo walks back, adjudication overrides the majority, disagreements and final labels."""

from __future__ import annotations

import pytest

from s3kg_core.annotation.log import (
    Decision,
    adjudicate,
    current_verdicts,
    disagreements,
    final_labels,
    judgements,
    save_decision,
    save_decisions,
    undo_last,
    withdraw,
)
from s3kg_core.errors import AnnotationError
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.store import Store

G1, A1 = ("aspirin", "reduce", "fever"), ("aspirin", "treat", "fever")
G2, A2 = ("fever", "cause", "headache"), ("fever", "bring", "headache")
EXTRA = ("doctor", "prescribe", "aspirin")


@pytest.fixture
def store(tmp_path) -> Store:
    return Store(tmp_path / "log.duckdb")


def _decide(store, who, verdict, gold=G1, answer=A1, item=1, **kw):
    kw.setdefault("category", "aligned" if answer is not None and gold is not None else "extra")
    return save_decision(store, Decision(who, 1, item, gold, answer, verdict, **kw))


def _log(store) -> list[dict]:
    with store.connect() as con:
        return aq.verdict_log(con)


def _current(store, **kw) -> dict:
    with store.connect() as con:
        frame = current_verdicts(con, **kw)
    return {(r.annotator, r.gold_triple, r.answer_triple): r.verdict for r in frame.itertuples()}


def test_each_decision_is_a_new_row_naming_the_one_it_replaces(store):
    first = _decide(store, "ann", "confirm")
    second = _decide(store, "ann", "reject")
    assert first is not None and second is not None
    assert (first.replaces, second.replaces) == (None, first.verdict_id)
    assert _current(store) == {("ann", G1, A1): "reject"}
    log = _log(store)
    assert [r["verdict"] for r in log] == ["confirm", "reject"]
    assert log[0]["created_at"] <= log[1]["created_at"]


def test_repeating_the_verdict_in_effect_writes_nothing(store):
    _decide(store, "ann", "confirm")
    assert _decide(store, "ann", "confirm") is None
    assert len(_log(store)) == 1


def test_the_log_is_append_only(store):
    """No act updates or deletes a row: every earlier row is still there, unchanged."""
    acts = [
        lambda: _decide(store, "ann", "confirm"),
        lambda: _decide(store, "bob", "reject"),
        lambda: _decide(store, "ann", "skip", gold=G2, answer=A2),
        lambda: withdraw(store, "ann", 1, 1, G1, A1),
        lambda: undo_last(store, "ann"),
        lambda: adjudicate(store, "cy", 1, 1, G1, A1, "reject", category="aligned"),
        lambda: undo_last(store, "cy", role="adjudicator"),
    ]
    seen: list[dict] = []
    for act in acts:
        act()
        log = _log(store)
        assert log[: len(seen)] == seen
        assert len(log) == len(seen) + 1
        seen = log


def test_annotators_keep_their_own_verdicts(store):
    _decide(store, "ann", "confirm")
    _decide(store, "bob", "reject")
    _decide(store, "ann", "reject", gold=G2, answer=A2)
    assert _current(store) == {
        ("ann", G1, A1): "confirm",
        ("bob", G1, A1): "reject",
        ("ann", G2, A2): "reject",
    }
    assert _current(store, annotator="bob") == {("bob", G1, A1): "reject"}


def test_withdraw_takes_a_decision_back_and_nothing_else(store):
    _decide(store, "ann", "confirm")
    _decide(store, "bob", "confirm")
    taken = withdraw(store, "ann", 1, 1, G1, A1)
    assert taken is not None and taken.verdict == "withdraw" and taken.category == "aligned"
    assert withdraw(store, "ann", 1, 1, G1, A1) is None  # nothing left to take back
    assert withdraw(store, "dee", 1, 1, G1, A1) is None  # never decided
    assert _current(store) == {("bob", G1, A1): "confirm"}


def test_undo_walks_back_through_the_annotator_s_acts_newest_first(store):
    e1 = _decide(store, "ann", "confirm")  # pair 1
    _decide(store, "ann", "reject", gold=G2, answer=A2)  # pair 2
    _decide(store, "ann", "reject")  # pair 1 again
    _decide(store, "bob", "confirm")  # someone else: never undone by ann
    undone = undo_last(store, "ann")
    assert undone.undone.verdict == "reject" and undone.undone.gold == G1
    assert undone.verdict == "confirm" and undone.restored.verdict_id == e1.verdict_id
    assert _current(store, annotator="ann") == {
        ("ann", G1, A1): "confirm",
        ("ann", G2, A2): "reject",
    }
    assert undo_last(store, "ann").undone.gold == G2
    assert _current(store, annotator="ann") == {("ann", G1, A1): "confirm"}
    last = undo_last(store, "ann")
    assert last.undone.verdict_id == e1.verdict_id and last.verdict is None
    assert _current(store, annotator="ann") == {}
    assert undo_last(store, "ann") is None
    assert _current(store) == {("bob", G1, A1): "confirm"}
    assert [r["verdict"] for r in _log(store)].count("undo") == 3


def test_undo_of_a_withdrawal_brings_the_verdict_back(store):
    _decide(store, "ann", "reject")
    withdraw(store, "ann", 1, 1, G1, A1)
    assert _current(store) == {}
    assert undo_last(store, "ann").verdict == "reject"
    assert _current(store) == {("ann", G1, A1): "reject"}


def test_a_decision_after_an_undo_replaces_what_the_undo_restored(store):
    e1 = _decide(store, "ann", "confirm")
    _decide(store, "ann", "reject")
    undo_last(store, "ann")  # back to confirm
    e3 = _decide(store, "ann", "skip")
    assert e3.replaces == e1.verdict_id
    assert undo_last(store, "ann").verdict == "confirm"
    assert undo_last(store, "ann").verdict is None  # then e1 itself


def test_adjudication_overrides_the_majority_and_undo_of_it_restores_the_majority(store):
    for who, verdict in (("ann", "confirm"), ("bob", "confirm"), ("cy", "reject")):
        _decide(store, who, verdict)
    with store.connect() as con:
        assert final_labels(con)[["label", "source"]].values.tolist() == [["confirm", "majority"]]
    adjudicate(store, "judge", 1, 1, G1, A1, "reject", category="aligned")
    with store.connect() as con:
        labels = final_labels(con)
        assert labels[["label", "source"]].values.tolist() == [["reject", "adjudicated"]]
        assert labels["votes"][0] == {"ann": "confirm", "bob": "confirm", "cy": "reject"}
        # the adjudicator is no annotator: their label is not a vote
        assert {j.annotator for j in judgements(con)} == {"ann", "bob", "cy"}
    undo_last(store, "judge", role="adjudicator")
    with store.connect() as con:
        assert final_labels(con)["source"].tolist() == ["majority"]


def test_a_tie_has_no_final_label_until_adjudicated(store):
    _decide(store, "ann", "confirm")
    _decide(store, "bob", "reject")
    _decide(store, "cy", "skip")  # no label: does not break the tie
    with store.connect() as con:
        assert final_labels(con)[["label", "source"]].values.tolist() == [[None, "tie"]]
        found = disagreements(con)
    assert found["verdicts"].tolist() == [{"ann": "confirm", "bob": "reject"}]
    assert found["label"].tolist() == [None]
    adjudicate(store, "judge", 1, 1, G1, A1, "confirm")
    with store.connect() as con:
        assert disagreements(con)["label"].tolist() == ["confirm"]  # still listed, now decided
        assert final_labels(con)["label"].tolist() == ["confirm"]


def test_disagreements_list_only_pairs_whose_labels_differ(store):
    _decide(store, "ann", "confirm")
    _decide(store, "bob", "confirm")
    _decide(store, "ann", "confirm", gold=None, answer=EXTRA)
    _decide(store, "bob", "reject", gold=None, answer=EXTRA)
    _decide(store, "ann", "skip", gold=G2, answer=A2)
    _decide(store, "bob", "reject", gold=G2, answer=A2)
    with store.connect() as con:
        found = disagreements(con)
    assert found[["category", "gold_triple", "answer_triple"]].values.tolist() == [
        ["extra", None, EXTRA]
    ]


def test_judgements_carry_the_unit_category_and_skip_no_label(store):
    _decide(store, "ann", "confirm")
    _decide(store, "ann", "skip", gold=G2, answer=A2)
    save_decision(store, Decision("ann", 1, 1, G2, EXTRA, "add"))
    with store.connect() as con:
        rows = judgements(con)
    assert sorted((j.value, j.category) for j in rows) == [("add", None), ("confirm", "aligned")]
    assert {j.unit for j in rows} == {(1, 1, G1, A1), (1, 1, G2, EXTRA)}


def test_a_batch_is_one_transaction(store):
    good = Decision("ann", 1, 1, G1, A1, "confirm")
    with pytest.raises(AnnotationError):
        save_decisions(store, [good, Decision("ann", 1, 1, G1, A1, "maybe")])
    assert _log(store) == []
    written = save_decisions(store, [good, good, Decision("ann", 1, 1, G1, A1, "reject")])
    assert [e.verdict if e else None for e in written] == ["confirm", None, "reject"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"verdict": "maybe"}, "verdict must be one of"),
        ({"role": "boss"}, "role must be one of"),
        ({"category": "odd"}, "category must be one of"),
        ({"gold": None, "answer": None}, "needs a gold triple"),
        ({"gold": ("a", "b")}, "three strings"),
        ({"gold": "a r b"}, "three strings"),
        ({"run_id": "1"}, "run_id must be an integer"),
        ({"role": "adjudicator", "verdict": "skip"}, "not skip"),
    ],
)
def test_malformed_decisions_are_named_errors(fields, message):
    base = {"annotator": "ann", "run_id": 1, "item_id": 1, "gold": G1, "answer": A1}
    with pytest.raises(AnnotationError, match=message):
        Decision(**{**base, "verdict": "confirm", **fields})


def test_ids_from_a_frame_are_plain_integers():
    import numpy as np

    d = Decision("ann", np.int64(2), np.int32(5), G1, A1, "confirm", task_id=np.int64(1))
    assert (d.run_id, d.item_id, d.task_id) == (2, 5, 1)
    assert all(type(v) is int for v in (d.run_id, d.item_id, d.task_id))


def test_adjudicate_needs_a_label(store):
    with pytest.raises(AnnotationError, match="final label"):
        adjudicate(store, "judge", 1, 1, G1, A1, "skip")


def test_an_unknown_task_is_a_named_error(store):
    with store.connect() as con, pytest.raises(AnnotationError, match="no annotation task 9"):
        final_labels(con, task_id=9)
