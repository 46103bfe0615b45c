"""Dashboard data access (dashboard.data): caches, signatures, concurrent annotation writes."""

from __future__ import annotations

import json
import threading
import time

import pytest
from conftest import SCORING_MODES
from dashboard_helpers import hold_tau
from store_helpers import build_store

from dashboard import data
from s3kg_core.scoring.result import blend
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
    from s3kg_core.annotation.log import Decision, current_verdicts

    def annotate(who: str) -> None:
        for i in range(10):
            triple = ("g", "r", str(i))
            data.record_decision(scored, Decision(who, 1, 1, triple, triple, "confirm"))

    threads = [threading.Thread(target=annotate, args=(who,)) for who in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with data.reader(scored) as con:
        frame = current_verdicts(con)
    assert len(frame) == 20
    assert frame.groupby("annotator").size().to_dict() == {"ann": 10, "bob": 10}
    # deciding the same pair again replaces that annotator's verdict; undo brings it back
    triple = ("g", "r", "0")
    data.record_decision(scored, Decision("ann", 1, 1, triple, triple, "reject"))
    undone = data.undo_decision(scored, "ann")
    assert undone is not None and undone.verdict == "confirm"
    with data.reader(scored) as con:
        frame = current_verdicts(con)
    assert len(frame) == 20
    mine = frame[(frame.annotator == "ann") & (frame.gold_triple == triple)]
    assert mine.verdict.tolist() == ["confirm"]


def test_the_explorer_recomputes_a_new_tau_from_stored_embeddings(scored):
    stamp = data.db_stamp(scored)
    _, latest = data.signatures(scored, stamp)
    assert latest is not None
    loose = data.explorer_case(scored, stamp, latest, 1, 1, 0.0)
    strict = data.explorer_case(scored, stamp, latest, 1, 1, 1.0)
    assert loose.encoded == strict.encoded == 0  # nothing encoded: every vector was stored
    assert all(p for p in loose.entity_map("gold").values())  # tau 0 aligns every label
    assert strict.gold.s_wl <= loose.gold.s_wl


def explorer_equals_stored(path, signature, every: int = 1) -> int:
    """The explorer's numbers at the stored tau are the stored ones, bit for bit."""
    stamp = data.db_stamp(path)
    frame = data.load_components(path, stamp, signature)
    tau = Signature.parse(signature).tau
    checked = 0
    for row in frame.iloc[::every].itertuples():
        case = data.explorer_case(path, stamp, signature, int(row.run_id), int(row.item_id), tau)
        assert case.encoded == 0
        for ex, side in ((case.gold, "gold"), (case.context, "ctx")):
            stored = (getattr(row, f"{side}_s_wl"), getattr(row, f"{side}_s_sbert"))
            assert (ex.s_wl, ex.s_sbert) == stored, (row.run_id, row.item_id, side)
            assert ex.score == blend(*stored, row.alpha, row.mode)
            assert ex.status == getattr(row, f"{side}_status") or ex.status.startswith("empty")
        live = case.scores(row.alpha)
        assert live["cus"] == pytest.approx(row.cus, abs=1e-12)
        checked += 1
    return checked


@pytest.mark.parametrize("mode", SCORING_MODES)
def test_the_explorer_shows_every_demo_answers_stored_scores(demo_every_mode, mode):
    path, signatures = demo_every_mode
    data.clear_caches()
    # every other answer in the demo's own mode, every sixth in the others (the same code path;
    # each case opens the file twice: a tenth of a second): the explanations of all 60 answers
    # are checked against score() in test_scoring_explain.py
    assert explorer_equals_stored(path, signatures[mode], 2 if mode == "hybrid" else 6) >= 10


@pytest.mark.shared_data
@pytest.mark.parametrize("mode", SCORING_MODES)
def test_the_explorer_shows_released_answers_stored_scores(released_every_mode, mode):
    path, signatures = released_every_mode
    data.clear_caches()
    assert explorer_equals_stored(path, signatures[mode], 1 if mode == "hybrid" else 2) >= 10


def test_tau_run_is_tau_item_for_every_answer_of_the_run(scored):
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    by_item = data.tau_run(scored, stamp, signature, 1)
    assert len(by_item) == 3
    for item, result in by_item.items():
        assert result == data.tau_item(scored, stamp, signature, 1, item)


def test_the_page_s_decisions_and_withdrawals_are_rows_of_the_verdict_log(scored):
    """record_decision keeps the page's contract on the append-only log: the decision in
    effect is the last one; the log keeps every act, each naming the row it replaces."""
    from s3kg_core.annotation.exchange import export_frame
    from s3kg_core.annotation.log import Decision, current_verdicts
    from s3kg_core.store.store import Store

    pair = {"run_id": 1, "item_id": 1, "gold": ("g", "r", "t"), "answer": ("g", "r", "t")}
    for verdict in ("confirm", "confirm", "reject"):  # the same verdict again adds no row
        data.record_decision(scored, Decision("ann", verdict=verdict, category="aligned", **pair))
    with data.reader(scored) as con:
        assert current_verdicts(con)["verdict"].tolist() == ["reject"]
    assert data.record_decision(scored, Decision("ann", verdict="withdraw", **pair)) is not None
    with data.reader(scored) as con:
        assert current_verdicts(con).empty
    log = export_frame(Store(scored))
    assert log["verdict"].tolist() == ["confirm", "reject", "withdraw"]
    assert log["replaces_uid"].tolist() == [None, log["uid"][0], log["uid"][1]]
    assert set(log["source"]) == {"page"} and set(log["category"]) == {"aligned"}


def test_record_and_undo_a_decision_show_in_the_page_s_next_read(scored):
    from dashboard import annotate_data
    from s3kg_core.annotation.log import Decision
    from s3kg_core.errors import AnnotatorNameError

    pair = {"run_id": 1, "item_id": 1, "gold": ("g", "r", "t"), "answer": ("g", "r", "t")}

    def shown() -> list[int]:
        frame = annotate_data.decisions(scored, data.db_stamp(scored), "ann", 1, 1)
        return frame["verdict_id"].tolist()

    assert shown() == []  # cached empty ...
    entry = data.record_decision(scored, Decision("ann", verdict="confirm", **pair))
    assert entry is not None and entry.verdict == "confirm" and entry.source == "page"
    assert shown() == [entry.verdict_id]  # ... and read again: the file's stamp moved
    undone = data.undo_decision(scored, "ann")
    assert undone is not None and undone.undone.verdict_id == entry.verdict_id
    assert undone.verdict is None
    assert shown() == []
    assert data.undo_decision(scored, "ann") is None  # nothing left to undo
    with pytest.raises(AnnotatorNameError, match="U\\+202E"):
        data.record_decision(scored, Decision("\u202eecila", verdict="confirm", **pair))


def test_demo_pending_reads_the_file_once_per_change(tmp_path, monkeypatch):
    # Regression: the Hallucinations page opened one more read connection on every visit to
    # ask whether the demo's GraphEval step was pending.
    import s3kg_core.demo as demo

    path = tmp_path / "s3kg.duckdb"
    build_store(path, models=("model-a",), n_items=1, n_triples=1)
    opened = []
    real = demo.pending_steps
    monkeypatch.setattr(demo, "pending_steps", lambda store: opened.append(1) or real(store))
    data.demo_pending.clear()
    stamp = data.db_stamp(path)
    assert data.demo_pending(path, stamp) == data.demo_pending(path, stamp) == ()
    assert len(opened) == 1
    assert data.demo_pending(path, stamp + 1) == ()  # the file changed: asked again
    assert len(opened) == 2


def test_kg_statuses_name_every_source_and_the_missing_ones():
    from s3kg_core.store.records import KGRecord

    view = data.ItemView(
        1, 2, "q", "?", "ctx", "gold", "answer", "ok",
        kgs={"gold": KGRecord(1, 2, "gold", (), "failed: timeout")}, details={}, tau=None,
    )  # fmt: skip
    assert view.kg_statuses == {
        "gold": "failed: timeout",
        "answer": "not extracted",
        "context": "not extracted",
    }


def test_the_leaderboard_keeps_two_runs_that_share_a_name_apart():
    # Regression: it grouped by (dataset, display name, temperature, extractor), so two runs
    # named alike merged into one row whose mean mixed both, and mark_partial matched by name.
    import pandas as pd

    frame = pd.DataFrame(
        {"run_id": [1, 1, 2, 2], "dataset": ["d"] * 4, "model": ["m"] * 4,
         "temperature": [0.0] * 4, "extractor": ["x"] * 4, "item_id": [1, 2, 1, 2],
         "gold_sim": [0.2, 0.4, 0.8, 0.6], "ctx_sim": [0.2, 0.4, 0.8, 0.6],
         "cus": [0.2, 0.4, 0.8, 0.6]}
    )  # fmt: skip
    board = data.leaderboard(frame)
    assert board["run_id"].tolist() == [1, 2]
    assert board["cus"].round(3).tolist() == [0.3, 0.7]
    runs = pd.DataFrame({"run_id": [1, 2]})
    marked = data.mark_partial(board, runs, {2: (2, 4)})
    assert marked["scoring"].tolist() == ["complete", "partial: 2 of 4 scored"]


def test_tau_live_explains_only_the_answers_a_share_step_adds(scored, monkeypatch):
    from s3kg_core.scoring.tau import TripletAnalyzer

    explained: list[int] = []
    analyse_many = TripletAnalyzer.analyse_many

    def counting(self, pairs):
        explained.append(len(pairs))
        return analyse_many(self, pairs)

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", counting)
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    small = data.tau_live(scored, stamp, signature, "cus", 0.3, 0.5)
    assert len(small) == 2 and explained == [2]  # one of three answers per run
    large = data.tau_live(scored, stamp, signature, "cus", 0.6, 0.5)
    assert len(large) == 4 and explained == [2, 2]  # the two new ones only
    data.tau_live(scored, stamp, signature, "gold_sim", 1.0, 0.2)
    assert explained == [2, 2, 2]  # the same gold reference: the last two
    kept = large.set_index(["run_id", "item_id"])["result"]
    again = small.set_index(["run_id", "item_id"])["result"]
    assert (kept.loc[again.index] == again).all()


def test_tau_live_reads_the_stored_tau_table_when_its_signature_fits(scored, monkeypatch):
    from s3kg_core.scoring.tau import TripletAnalyzer
    from s3kg_core.stages.tau import tau_store
    from s3kg_core.store.store import Store

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    live = data.tau_live(scored, stamp, signature, "cus", 1.0, 0.5)
    tau_store(Store(scored), fraction=1.0, target="cus", signature=signature)
    data.clear_caches()

    def refuse(self, pairs):
        raise AssertionError("explained again although the TAU table holds it")

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", refuse)
    stored = data.tau_live(scored, data.db_stamp(scored), signature, "cus", 1.0, 0.5)
    assert stored.drop(columns="result").equals(live.drop(columns="result"))
    # the same explanation, and the same TAU signature (the dashboard's default thresholds)
    assert [json.loads(r) for r in stored["result"]] == [json.loads(r) for r in live["result"]]


def test_an_annotation_saved_keeps_the_score_and_kg_caches(scored, monkeypatch):
    """Regression (issue 33): every cache was keyed by the file's stamp, so one decision saved
    threw away the components (and every KG read) of the whole database."""
    from s3kg_core.annotation.log import Decision
    from s3kg_core.stages import results

    calls: list[str] = []
    scored_frame = results.scored_frame

    def counting(*args, **kwargs):
        calls.append("components")
        return scored_frame(*args, **kwargs)

    monkeypatch.setattr(results, "scored_frame", counting)
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data.load_components(scored, stamp, signature)
    assert calls == ["components"]
    triple = ("g", "r", "t")
    data.record_decision(scored, Decision("ann", 1, 1, triple, triple, "confirm"))
    after = data.db_stamp(scored)
    assert after != stamp  # the file changed: annotation caches (keyed by the stamp) refill
    data.load_components(scored, after, signature)
    assert calls == ["components"]  # ... the components did not
    with data.writer(scored) as store, store.transaction() as con:
        con.execute("UPDATE scores SET gold_s_wl = gold_s_wl / 2 WHERE item_id = 1")
    data.load_components(scored, data.db_stamp(scored), signature)
    assert calls == ["components", "components"]  # a score changed: read again


def test_item_view_reads_only_its_answer_s_kgs(scored, monkeypatch):
    """Regression (issue 33): item_view loaded every KG of the run to show one answer."""
    from s3kg_core.store.store import Store

    def refuse(*args, **kwargs):
        raise AssertionError("loaded a whole run's KGs")

    monkeypatch.setattr(Store, "load_kgs", staticmethod(refuse))
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    view = data.item_view(scored, stamp, 1, 2, signature)
    assert set(view.kgs) == {"gold", "answer", "context"}
    assert all(kg.item_id == 2 and kg.run_id == 1 for kg in view.kgs.values())
    assert data.tau_item(scored, stamp, signature, 1, 2)["aligned"] is not None


def test_prefetch_tau_explains_the_next_shares_ahead(scored, monkeypatch):
    from s3kg_core.scoring.tau import TripletAnalyzer

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data.prefetch_tau(scored, stamp, signature, "ctx_sim", 0.5, share=0.6).join(timeout=120)

    def refuse(self, pairs):
        raise AssertionError("not explained ahead")

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", refuse)
    cases = data.tau_live(scored, stamp, signature, "ctx_sim", 0.6, 0.5)
    assert len(cases) == 4  # two of three answers of each run, all explained ahead
    with pytest.raises(AssertionError, match="not explained ahead"):
        data.tau_live(scored, stamp, signature, "ctx_sim", 1.0, 0.5)


def test_a_newer_prefetch_stops_the_older_one(scored, monkeypatch):
    """Regression: every alpha step on the Failure analysis started one more background thread
    explaining a fifth of every run, and the older ones kept running beside it."""
    from s3kg_core.scoring.tau import TripletAnalyzer

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    release, blocks = threading.Event(), []
    real = TripletAnalyzer.analyse_many

    def slow(self, pairs):
        blocks.append(threading.current_thread())
        release.wait(timeout=60)
        return real(self, pairs)

    monkeypatch.setattr(data, "_TAU_BLOCK", 1)
    monkeypatch.setattr(TripletAnalyzer, "analyse_many", slow)
    data._explained.clear()  # nothing explained yet: both threads have blocks to do
    old = data.prefetch_tau(scored, stamp, signature, "cus", 0.31, share=1.0)
    deadline = time.monotonic() + 60
    while not blocks and time.monotonic() < deadline:
        time.sleep(0.05)
    new = data.prefetch_tau(scored, stamp, signature, "cus", 0.32, share=1.0)
    release.set()
    old.join(timeout=120)
    new.join(timeout=120)
    assert not old.is_alive() and not new.is_alive()
    assert blocks.count(old) == 1  # the block it was in, then it stopped for the newer one


def test_tau_cases_shows_what_is_explained_and_the_rest_follows(scored, monkeypatch):
    """Issue 33: a share jump at 100,000 answers waited ~60 s for 15,000 live explanations;
    past :data:`data.LIVE_TAU` unexplained answers the page gets what is done and a count."""

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    release = hold_tau(monkeypatch)
    data._explained.clear()
    first = data.tau_cases(scored, stamp, signature, "cus", 1.0, 0.45, live=0)
    assert (first.picked, first.pending, len(first.frame)) == (6, 6, 0)  # nothing waited for
    assert list(first.frame.columns) == list(data.TAU_COLUMNS)
    assert data.tau_pending(scored, stamp, signature, "cus", 1.0, 0.45) == 6
    release.set()
    deadline = time.monotonic() + 120
    while (
        data.tau_pending(scored, stamp, signature, "cus", 1.0, 0.45) and time.monotonic() < deadline
    ):
        time.sleep(0.05)
    done = data.tau_cases(scored, stamp, signature, "cus", 1.0, 0.45, live=0)
    assert (done.picked, done.pending) == (6, 0)
    assert done.frame.drop(columns="result").equals(
        data.tau_live(scored, stamp, signature, "cus", 1.0, 0.45).drop(columns="result")
    )


def test_tau_cases_explains_a_small_step_before_it_returns(scored):
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data._explained.clear()
    found = data.tau_cases(scored, stamp, signature, "gold_sim", 0.6, 0.5)  # 4 <= LIVE_TAU
    assert (found.picked, found.pending, len(found.frame)) == (4, 0, 4)


def test_a_stopped_prefetch_starts_again_when_its_view_comes_back(scored, monkeypatch):
    """Regression: the thread of a view was cached even after a newer view's thread stopped
    it, so going back to that alpha left its answers unexplained (and the progress waiting)."""

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    monkeypatch.setattr(data, "_TAU_BLOCK", 1)
    release = hold_tau(monkeypatch)
    data._explained.clear()
    first = data.prefetch_tau(scored, stamp, signature, "ctx_sim", 0.41, share=1.0)
    second = data.prefetch_tau(scored, stamp, signature, "ctx_sim", 0.42, share=1.0)
    release.set()
    first.join(timeout=120)
    again = data.prefetch_tau(scored, stamp, signature, "ctx_sim", 0.41, share=1.0)
    assert again is not first  # stopped before it was done: a new thread for the view
    again.join(timeout=120)
    second.join(timeout=120)
    assert data.tau_pending(scored, stamp, signature, "ctx_sim", 1.0, 0.41) == 0
    assert data.prefetch_tau(scored, stamp, signature, "ctx_sim", 0.41, share=1.0) is again


def test_tau_cases_reads_what_s3kg_tau_stored_without_waiting(scored, monkeypatch):
    """Regression: past LIVE_TAU unexplained answers the stored TAU table was read by the
    background thread only, so a first visit showed "0 of 5,000 done" and a progress bar."""
    from s3kg_core.stages.tau import tau_store
    from s3kg_core.store.store import Store

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    tau_store(Store(scored), fraction=1.0, target="cus", signature=signature)
    data.clear_caches()
    data._explained.clear()
    release = hold_tau(monkeypatch)  # a live explanation would wait
    found = data.tau_cases(scored, data.db_stamp(scored), signature, "cus", 1.0, 0.5, live=0)
    release.set()
    assert (found.picked, found.pending, len(found.frame)) == (6, 0, 6)


def test_the_run_comparison_reads_its_pairs_scores_and_picker_pages_from_duckdb(scored):
    """Issue 33: the comparison page reads the pairs, the chosen pair's scores at alpha and one
    page of the picker from DuckDB; each agrees exactly with the pandas path it replaced
    (every component reblended, ``dashboard.compare``)."""
    import compare_helpers
    import pandas as pd

    from dashboard import compare
    from s3kg_core.stats import paired_bootstrap

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    frame = reblend(data.load_components(scored, stamp, signature), 0.3)
    pairs = data.comparable_pairs(scored, stamp, signature)
    assert pairs == compare_helpers.comparable_pairs(frame) == {(1, 2): 3, (2, 1): 3}
    for run_a, run_b in pairs:
        deltas = data.pair_deltas(scored, stamp, signature, run_a, run_b, 0.3)
        want = compare.question_deltas(frame, run_a, run_b, data.item_questions(scored, stamp))
        pd.testing.assert_frame_equal(deltas, want, check_exact=True)
        gates = data.pair_check(scored, stamp, signature, run_a, run_b, 0.3)
        assert gates.comparison is not None
        assert gates.comparison.differences["cus"].to_dict() == (
            paired_bootstrap(want["cus_b"], want["cus_a"], resamples=9999).to_dict()
        )
        for page in range(4):
            for keep in (None, int(want["item_id"].iloc[-1])):
                rows, total, shown = data.pair_questions(
                    scored, stamp, signature, run_a, run_b, 0.3, "QUESTION", page, 1, keep
                )
                listed, matches, at = compare_helpers.question_choices(
                    want, "question", page, 1, keep
                )
                assert rows["item_id"].tolist() == listed["item_id"].tolist()
                assert (total, shown) == (matches, at) and total == 3
    other = data.pair_deltas(scored, stamp, signature, 1, 2, 0.9)  # another alpha, other scores
    assert (
        other["cus_a"].tolist()
        != data.pair_deltas(scored, stamp, signature, 1, 2, 0.3)["cus_a"].tolist()
    )


def test_the_comparisons_gates_are_s3kg_checks_own(scored):
    """Issue 43 (item 4): the Run comparison ran a bootstrap of its own (1,999 resamples, no
    gates); its gates are now ``check_runs``' result, as ``s3kg check`` computes it."""
    from s3kg_core.stages.check import check_runs
    from s3kg_core.store.store import Store

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    shown = data.pair_check(scored, stamp, signature, 1, 2, 0.3)
    want = check_runs(Store(scored, read_only=True), 2, 1, signature=signature, alpha=0.3)
    assert [(g.name, g.passed, g.measured, g.detail) for g in shown.gates] == [
        (g.name, g.passed, g.measured, g.detail) for g in want.gates
    ]
    assert shown.facts == want.facts and shown.verdict() == want.verdict()


def test_run_unit_counts_waits_for_the_lowest_answers_only(scored, monkeypatch):
    """Issue 33: Annotate explained every answer of a run before drawing (7 s for a run of
    5,000 at 100,000 answers); now the first ``live`` in its order, the rest in the background."""
    from dashboard_helpers import prefetch_done

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data._explained.clear()
    data.run_unit_counts(scored, stamp, signature, 1, [3], live=1)  # item 3 explained now
    release = hold_tau(monkeypatch)
    release.set()  # the background thread explains items 1 and 2 as soon as it is asked
    found = data.run_unit_counts(scored, stamp, signature, 1, [3, 1, 2], live=1)
    assert 3 in found.counts and found.with_kgs == frozenset({1, 2, 3})
    prefetch_done()
    done = data.run_unit_counts(scored, stamp, signature, 1, [3, 1, 2], live=1)
    whole = data.tau_run(scored, stamp, signature, 1)
    expected = {
        i: sum(
            len(r[k])
            for k in ("aligned", "relation_mismatch", "entity_mismatch", "extra", "missing")
        )
        for i, r in whole.items()
    }
    assert (done.counts, done.pending) == (expected, 0)


def test_run_unit_counts_leaves_the_rest_pending_while_it_is_explained(scored, monkeypatch):
    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data._explained.clear()
    data.run_unit_counts(scored, stamp, signature, 2, [2], live=1)
    release = hold_tau(monkeypatch)
    try:
        found = data.run_unit_counts(scored, stamp, signature, 2, [2, 1, 3], live=1)
        assert set(found.counts) == {2} and found.pending == 2  # not waited for
    finally:
        release.set()


def test_warm_pair_fills_the_comparison_at_every_alpha_of_the_slider(scored, monkeypatch):
    """Issue 33: a Run comparison alpha step queried and resampled its pair again (~0.4 s)."""
    from s3kg_core.stages import compare
    from s3kg_core.store import compare_queries

    stamp = data.db_stamp(scored)
    _, signature = data.signatures(scored, stamp)
    assert signature is not None
    data.warm_pair(scored, stamp, signature, 1, 2, 0.5).join(timeout=120)

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(compare_queries, "pair_deltas", refuse)
    monkeypatch.setattr(compare, "paired_bootstrap", refuse)
    for alpha in (0.0, 0.35, 0.5, 0.55, 1.0):  # on the slider's grid: cached
        assert len(data.pair_deltas(scored, stamp, signature, 1, 2, alpha)) == 3
        data.pair_check(scored, stamp, signature, 1, 2, alpha)
    with pytest.raises(AssertionError, match="computed again"):
        data.pair_deltas(scored, stamp, signature, 1, 2, 0.52)


def test_exit_waits_for_the_alpha_warming_threads(scored, monkeypatch):
    """Regression: the alpha-warming threads were not waited for at exit; one killed inside a
    DuckDB query aborted the interpreter ("terminate called after throwing an instance of",
    seen at 100,000 answers). The exit handler now waits for them as for the TAU threads."""
    inside, release = threading.Event(), threading.Event()

    def in_a_query(*args):
        inside.set()
        release.wait(30)

    monkeypatch.setattr(data, "pair_deltas", in_a_query)
    monkeypatch.setattr(data, "pair_check", lambda *args: None)
    stamp = data.db_stamp(scored)
    thread = data.warm_pair(scored, stamp, "sig", 1, 2, 0.5)
    assert inside.wait(30)
    stopper = threading.Thread(target=data._stop_prefetching)
    try:
        stopper.start()
        stopper.join(0.5)
        assert stopper.is_alive() and thread.is_alive()  # exit waits for the query's end
        release.set()
        stopper.join(30)
        assert not stopper.is_alive() and not thread.is_alive()
    finally:
        release.set()
        stopper.join(30)
        data._STOP_PREFETCH.clear()


def test_warm_up_loads_the_lemmatizer_once_in_the_background():
    """Issue 33: the first explained answer of a process read lemminflect's dictionary (0.4 s
    of the Run comparison's first visit at 100,000 answers); app.py now starts it after the
    first page is drawn."""
    from lemminflect.core.Lemmatizer import Lemmatizer

    thread = data.warm_up()
    thread.join(timeout=60)
    assert not thread.is_alive() and thread.daemon
    assert data.warm_up() is thread  # one thread per process
    assert hasattr(Lemmatizer(), "lemma_dict")
