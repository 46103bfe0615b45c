"""dashboard.data.writes: decisions saved at once (two sessions lose nothing), the demo build."""

from __future__ import annotations

import threading

import pytest
from store_helpers import build_store

import dashboard.data.writes as writes_module
from dashboard import annotate_data
from dashboard.data import writes
from dashboard.data.database import View, db_stamp, reader
from s3kg_core.annotation.exchange import export_frame
from s3kg_core.annotation.log import Decision, current_verdicts
from s3kg_core.errors import AnnotatorNameError
from s3kg_core.store.store import Store


def test_two_sessions_annotating_at_once_lose_nothing(two_runs):
    def annotate(who: str) -> None:
        for i in range(10):
            triple = ("g", "r", str(i))
            writes.record_decision(two_runs, Decision(who, 1, 1, triple, triple, "confirm"))

    threads = [threading.Thread(target=annotate, args=(who,)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with reader(two_runs) as con:
        frame = current_verdicts(con)
    assert len(frame) == 20
    assert frame.groupby("annotator").size().to_dict() == {"ann": 10, "bob": 10}
    # deciding the same pair again replaces that annotator's verdict; undo brings it back
    triple = ("g", "r", "0")
    writes.record_decision(two_runs, Decision("ann", 1, 1, triple, triple, "reject"))
    undone = writes.undo_decision(two_runs, "ann")
    assert undone is not None and undone.verdict == "confirm"
    with reader(two_runs) as con:
        frame = current_verdicts(con)
    assert len(frame) == 20
    mine = frame[(frame.annotator == "ann") & (frame.gold_triple == triple)]
    assert mine.verdict.tolist() == ["confirm"]


def test_the_page_s_decisions_and_withdrawals_are_rows_of_the_verdict_log(two_runs):
    """record_decision keeps the page's contract on the append-only log: the decision in
    effect is the last one; the log keeps every act, each naming the row it replaces."""
    pair = {"run_id": 1, "item_id": 1, "gold": ("g", "r", "t"), "answer": ("g", "r", "t")}
    for verdict in ("confirm", "confirm", "reject"):  # the same verdict again adds no row
        writes.record_decision(
            two_runs, Decision("ann", verdict=verdict, category="aligned", **pair)
        )
    with reader(two_runs) as con:
        assert current_verdicts(con)["verdict"].tolist() == ["reject"]
    assert writes.record_decision(two_runs, Decision("ann", verdict="withdraw", **pair)) is not None
    with reader(two_runs) as con:
        assert current_verdicts(con).empty
    log = export_frame(Store(two_runs))
    assert log["verdict"].tolist() == ["confirm", "reject", "withdraw"]
    assert log["replaces_uid"].tolist() == [None, log["uid"][0], log["uid"][1]]
    assert set(log["source"]) == {"page"} and set(log["category"]) == {"aligned"}


def test_record_and_undo_a_decision_show_in_the_page_s_next_read(two_runs):
    pair = {"run_id": 1, "item_id": 1, "gold": ("g", "r", "t"), "answer": ("g", "r", "t")}

    def shown() -> list[int]:
        frame = annotate_data.decisions(two_runs, db_stamp(two_runs), "ann", 1, 1)
        return frame["verdict_id"].tolist()

    assert shown() == []  # cached empty ...
    entry = writes.record_decision(two_runs, Decision("ann", verdict="confirm", **pair))
    assert entry is not None and entry.verdict == "confirm" and entry.source == "page"
    assert shown() == [entry.verdict_id]  # ... and read again: the file's stamp moved
    undone = writes.undo_decision(two_runs, "ann")
    assert undone is not None and undone.undone.verdict_id == entry.verdict_id
    assert undone.verdict is None
    assert shown() == []
    assert writes.undo_decision(two_runs, "ann") is None  # nothing left to undo
    with pytest.raises(AnnotatorNameError, match="U\\+202E"):
        writes.record_decision(two_runs, Decision("\u202eecila", verdict="confirm", **pair))


def test_demo_pending_reads_the_file_once_per_change(tmp_path, monkeypatch):
    # Regression: the Hallucinations page opened one more read connection on every visit to
    # ask whether the demo's GraphEval step was pending.
    path = tmp_path / "s3kg.duckdb"
    build_store(path, models=("model-a",), n_items=1, n_triples=1)
    opened = []
    real = writes_module.pending_steps
    monkeypatch.setattr(
        writes_module, "pending_steps", lambda store: opened.append(1) or real(store)
    )
    view = View(path, db_stamp(path))
    assert writes.demo_pending(view) == writes.demo_pending(view) == ()
    assert len(opened) == 1
    assert writes.demo_pending(View(path, view.stamp + 1)) == ()  # the file changed: asked again
    assert len(opened) == 2


def test_a_run_s_new_name_is_read_on_the_next_run(two_runs):
    from dashboard.data import reads

    assert writes.rename_run(two_runs, 1, "baseline") == "baseline"
    runs = reads.load_runs(View(two_runs, db_stamp(two_runs)))
    assert "baseline" in runs.loc[runs["run_id"] == 1, "label"].iloc[0]
