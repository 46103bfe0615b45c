"""Dashboard data access (dashboard.data): caches, signatures, concurrent annotation writes."""

from __future__ import annotations

import json
import threading

import pytest
from store_helpers import build_store

from dashboard import data
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import reblend
from s3kg_core.stages.score import score_store


@pytest.fixture
def scored(tmp_path, minilm):
    store = build_store(tmp_path / "d.duckdb", n_items=3, n_triples=2, seed=2)
    score_store(store, encoder=minilm)
    data.clear_caches()
    return store.path


def test_components_leaderboard_and_stamp(scored):
    stamp = data.db_stamp(scored)
    sigs, latest = data.signatures(scored, stamp)
    assert sigs == [latest]
    frame = reblend(data.load_components(scored, stamp, latest), 0.25)
    board = data.leaderboard(frame)
    assert list(board["n"]) == [3, 3] and set(board["model"]) == {"model-a", "model-b"}
    assert data.leaderboard(frame.iloc[0:0]).empty
    runs = data.load_runs(scored, stamp)
    assert list(runs["scored"]) == [3, 3]


def test_two_sessions_annotating_at_once_lose_nothing(scored):
    def annotate(who: str) -> None:
        for i in range(10):
            gold = json.dumps(["g", "r", str(i)])
            data.save_annotations(scored, [(1, 1, who, gold, gold, "confirm")])

    threads = [threading.Thread(target=annotate, args=(who,)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    frame = data.annotations(scored, data.db_stamp(scored))
    assert len(frame) == 20
    assert frame.groupby("annotator").size().to_dict() == {"ann": 10, "bob": 10}
    # saving the same pair again replaces that annotator's verdict
    gold = json.dumps(["g", "r", "0"])
    data.save_annotations(scored, [(1, 1, "ann", gold, gold, "reject")])
    frame = data.annotations(scored, data.db_stamp(scored))
    assert len(frame) == 20
    assert frame[(frame.annotator == "ann") & (frame.gold_triple == gold)].verdict.tolist() == [
        "reject"
    ]


def test_realign_at_a_new_tau_uses_stored_embeddings(scored, minilm):
    from s3kg_core.kg import Triple

    _, latest = data.signatures(scored, data.db_stamp(scored))
    config = Signature.parse(latest).config_kwargs()
    answer = [Triple("aspirin", "reduces", "fever")]
    gold = [Triple("aspirin", "treats", "fever")]
    loose = data.realign(scored, "minilm", {**config, "tau": 0.0}, answer, gold)
    strict = data.realign(scored, "minilm", {**config, "tau": 1.0}, answer, gold)
    assert loose.entity_map["aspirin"] == "aspirin"
    assert strict.s_wl <= loose.s_wl


def test_a_withdrawn_verdict_is_gone_and_others_stay(scored):
    g, a = json.dumps(["g", "r", "t"]), json.dumps(["a", "r", "t"])
    data.save_annotations(scored, [(1, 1, "ann", g, a, "add"), (1, 1, "bob", g, a, "add")])
    assert data.withdraw_annotations(scored, [(1, 1, "ann", g, a)]) == 1
    assert data.withdraw_annotations(scored, [(1, 1, "ann", g, a)]) == 0
    frame = data.annotations(scored, data.db_stamp(scored))
    assert frame["annotator"].tolist() == ["bob"]


def test_tau_run_explains_every_answer_of_a_run(scored):
    stamp = data.db_stamp(scored)
    _, latest = data.signatures(scored, stamp)
    by_item = data.tau_run(scored, stamp, latest, 1)
    assert len(by_item) == 3 and all("aligned" in r for r in by_item.values())
    one = next(iter(by_item))
    assert by_item[one]["counts"] == data.tau_item(scored, stamp, latest, 1, one)["counts"]


def test_the_pending_demo_step_runs_once_in_the_background(scored, minilm):
    from s3kg_core.demo import PENDING_KEY, pending_steps
    from s3kg_core.store.store import Store

    with Store(scored).transaction() as con:
        Store.set_meta(con, PENDING_KEY, "grapheval")
    data._FINISHING.pop(scored, None)
    assert data.finish_demo_later(scored, delay=0.0) is True  # started
    thread = data._FINISHING[scored]
    assert thread is not None
    # the page keeps reading while it runs: each of the thread's connections takes the lock
    while thread.is_alive():
        assert not data.load_runs(scored, data.db_stamp(scored)).empty
        thread.join(timeout=0.2)
    assert not data.demo_finishing(scored)
    assert pending_steps(Store(scored, read_only=True)) == ()
    assert not data.grapheval_overview(scored, data.db_stamp(scored)).empty
    assert data.finish_demo_later(scored) is False  # looked once per process: nothing to do
    data._FINISHING.pop(scored, None)
    assert data.finish_demo_later(scored) is False  # and the database says it is done


def test_rows_the_demo_shipped_name_their_provenance():
    import pandas as pd

    mark = {"command": "s3kg bench pairs --dataset all", "s3kg_version": "0.1.0",
            "created": "2026-12-01"}  # fmt: skip
    rows = pd.DataFrame({"detail": [{"precomputed": mark}, {}]})
    line = data.bench_provenance(rows)
    assert line is not None and "Precomputed by the S3KG Workbench project" in line
    assert "`s3kg bench pairs --dataset all`" in line and "1 other rows" in line
    assert data.bench_provenance(pd.DataFrame({"detail": [{}]})) is None
