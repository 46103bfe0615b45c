"""dashboard.data.tau_cases: TAU's cases explained once, now or in the background."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest
from dashboard_helpers import hold_tau, prefetch_done

from dashboard.data import tau_cases
from dashboard.data.database import clear_caches, db_stamp
from s3kg_core.scoring.tau import TripletAnalyzer
from s3kg_core.stages.tau import tau_store
from s3kg_core.store.store import Store


@pytest.fixture
def view(two_runs_view):
    """The two runs' view, with no answer explained yet (the stores outlive a test's caches)."""
    for reference in ("gold", "context"):
        tau_cases.explained_store(two_runs_view, reference).clear()
    return two_runs_view


def test_tau_run_is_tau_item_for_every_answer_of_the_run(view):
    by_item = tau_cases.tau_run(view, 1)
    assert len(by_item) == 3
    for item, result in by_item.items():
        assert result == tau_cases.tau_item(view, 1, item)


def test_tau_live_explains_only_the_answers_a_share_step_adds(view, monkeypatch):
    explained: list[int] = []
    analyse_many = TripletAnalyzer.analyse_many

    def counting(self, pairs):
        explained.append(len(pairs))
        return analyse_many(self, pairs)

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", counting)
    small = tau_cases.tau_live(view, "cus", 0.3, 0.5)
    assert len(small) == 2 and explained == [2]  # one of three answers per run
    large = tau_cases.tau_live(view, "cus", 0.6, 0.5)
    assert len(large) == 4 and explained == [2, 2]  # the two new ones only
    tau_cases.tau_live(view, "gold_sim", 1.0, 0.2)
    assert explained == [2, 2, 2]  # the same gold reference: the last two
    kept = large.set_index(["run_id", "item_id"])["result"]
    again = small.set_index(["run_id", "item_id"])["result"]
    assert (kept.loc[again.index] == again).all()


def test_tau_live_reads_the_stored_tau_table_when_its_signature_fits(view, monkeypatch):
    live = tau_cases.tau_live(view, "cus", 1.0, 0.5)
    tau_store(Store(view.path), fraction=1.0, target="cus", signature=view.scored)
    clear_caches()

    def refuse(self, pairs):
        raise AssertionError("explained again although the TAU table holds it")

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", refuse)
    stored = tau_cases.tau_live(replace(view, stamp=db_stamp(view.path)), "cus", 1.0, 0.5)
    assert stored.drop(columns="result").equals(live.drop(columns="result"))
    # the same explanation, and the same TAU signature (the dashboard's default thresholds)
    assert [json.loads(r) for r in stored["result"]] == [json.loads(r) for r in live["result"]]


def test_prefetch_tau_explains_the_next_shares_ahead(view, monkeypatch):
    tau_cases.prefetch_tau(view, "ctx_sim", 0.5, share=0.6).join(timeout=120)

    def refuse(self, pairs):
        raise AssertionError("not explained ahead")

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", refuse)
    cases = tau_cases.tau_live(view, "ctx_sim", 0.6, 0.5)
    assert len(cases) == 4  # two of three answers of each run, all explained ahead
    with pytest.raises(AssertionError, match="not explained ahead"):
        tau_cases.tau_live(view, "ctx_sim", 1.0, 0.5)


def test_grid_counts_wait_for_every_stop_then_sum_what_tau_live_explains_there(view):
    """Issue 60: the Failure analysis's live counts per run at every stop of the slider. A stop
    whose picks are not all explained is ``None`` (nothing waits); once the grid's background
    job has run, every stop is the per-run sum of TAU's cases at that alpha (tau_live)."""
    from dashboard.live_alpha import GRID
    from s3kg_core.scoring.tau import TAU_CATEGORIES

    assert tau_cases.grid_counts(view, "cus", 0.34, GRID) == [None] * len(GRID)
    tau_cases.prefetch_grid(view, "cus", 0.34, GRID).join(timeout=120)
    counts = tau_cases.grid_counts(view, "cus", 0.34, GRID)
    assert all(c is not None for c in counts)
    for alpha, frame in zip(GRID, counts, strict=True):
        cases = tau_cases.tau_live(view, "cus", 0.34, alpha)
        want = cases.groupby("run_id")[list(TAU_CATEGORIES)].sum()
        got = frame.set_index("run_id")
        assert got[list(TAU_CATEGORIES)].equals(want.astype(got[list(TAU_CATEGORIES)].dtypes))
        assert got["cases"].tolist() == cases.groupby("run_id").size().tolist()


def test_the_grid_prefetch_reads_the_picks_grid_counts_read(view, monkeypatch):
    """Regression: the background job of prefetch_grid scanned the answers for every stop's
    picks again (374 ms at 100,000 answers) although grid_counts had just read them."""
    from dashboard.live_alpha import GRID

    scans = []
    real = tau_cases.tau_queries.lowest_scored_grid

    def counted(*args, **kwargs):
        scans.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr(tau_cases.tau_queries, "lowest_scored_grid", counted)
    tau_cases.grid_counts(view, "cus", 0.27, GRID)
    tau_cases.prefetch_grid(view, "cus", 0.27, GRID).join(timeout=120)
    assert scans == [0.27]
    assert all(c is not None for c in tau_cases.grid_counts(view, "cus", 0.27, GRID))
    assert scans == [0.27]


def test_a_newer_prefetch_stops_the_older_one(view, monkeypatch):
    """Regression: every alpha step on the Failure analysis started one more background thread
    explaining a fifth of every run, and the older ones kept running beside it."""
    release, blocks = threading.Event(), []
    real = TripletAnalyzer.analyse_many

    def slow(self, pairs):
        blocks.append(threading.current_thread())
        release.wait(timeout=60)
        return real(self, pairs)

    monkeypatch.setattr(tau_cases, "TAU_BLOCK", 1)
    monkeypatch.setattr(TripletAnalyzer, "analyse_many", slow)
    old = tau_cases.prefetch_tau(view, "cus", 0.31, share=1.0)
    deadline = time.monotonic() + 60
    while not blocks and time.monotonic() < deadline:
        time.sleep(0.05)
    new = tau_cases.prefetch_tau(view, "cus", 0.32, share=1.0)
    release.set()
    old.join(timeout=120)
    new.join(timeout=120)
    assert not old.is_alive() and not new.is_alive()
    assert blocks.count(old) == 1  # the block it was in, then it stopped for the newer one


def test_tau_cases_shows_what_is_explained_and_the_rest_follows(view, monkeypatch):
    """Issue 33: a share jump at 100,000 answers waited ~60 s for 15,000 live explanations;
    past :data:`LIVE_TAU` unexplained answers the page gets what is done and a count."""
    release = hold_tau(monkeypatch)
    first = tau_cases.tau_cases(view, "cus", 1.0, 0.45, live=0)
    assert (first.picked, first.pending, len(first.frame)) == (6, 6, 0)  # nothing waited for
    assert list(first.frame.columns) == list(tau_cases.TAU_COLUMNS)
    assert tau_cases.tau_pending(view, "cus", 1.0, 0.45) == 6
    release.set()
    deadline = time.monotonic() + 120
    while tau_cases.tau_pending(view, "cus", 1.0, 0.45) and time.monotonic() < deadline:
        time.sleep(0.05)
    done = tau_cases.tau_cases(view, "cus", 1.0, 0.45, live=0)
    assert (done.picked, done.pending) == (6, 0)
    assert done.frame.drop(columns="result").equals(
        tau_cases.tau_live(view, "cus", 1.0, 0.45).drop(columns="result")
    )


def test_tau_cases_explains_a_small_step_before_it_returns(view):
    found = tau_cases.tau_cases(view, "gold_sim", 0.6, 0.5)  # 4 <= LIVE_TAU
    assert (found.picked, found.pending, len(found.frame)) == (4, 0, 4)


def test_a_stopped_prefetch_starts_again_when_its_view_comes_back(view, monkeypatch):
    """Regression: the thread of a view was cached even after a newer view's thread stopped
    it, so going back to that alpha left its answers unexplained (and the progress waiting)."""
    monkeypatch.setattr(tau_cases, "TAU_BLOCK", 1)
    release = hold_tau(monkeypatch)
    first = tau_cases.prefetch_tau(view, "ctx_sim", 0.41, share=1.0)
    second = tau_cases.prefetch_tau(view, "ctx_sim", 0.42, share=1.0)
    release.set()
    first.join(timeout=120)
    again = tau_cases.prefetch_tau(view, "ctx_sim", 0.41, share=1.0)
    assert again is not first  # stopped before it was done: a new thread for the view
    again.join(timeout=120)
    second.join(timeout=120)
    assert tau_cases.tau_pending(view, "ctx_sim", 1.0, 0.41) == 0
    assert tau_cases.prefetch_tau(view, "ctx_sim", 0.41, share=1.0) is again


def test_tau_cases_reads_what_s3kg_tau_stored_without_waiting(view, monkeypatch):
    """Regression: past LIVE_TAU unexplained answers the stored TAU table was read by the
    background thread only, so a first visit showed "0 of 5,000 done" and a progress bar."""
    tau_store(Store(view.path), fraction=1.0, target="cus", signature=view.scored)
    clear_caches()
    release = hold_tau(monkeypatch)  # a live explanation would wait
    after = replace(view, stamp=db_stamp(view.path))
    found = tau_cases.tau_cases(after, "cus", 1.0, 0.5, live=0)
    release.set()
    assert (found.picked, found.pending, len(found.frame)) == (6, 0, 6)


def test_run_unit_counts_waits_for_the_lowest_answers_only(view, monkeypatch):
    """Issue 33: Annotate explained every answer of a run before drawing (7 s for a run of
    5,000 at 100,000 answers); now the first ``live`` in its order, the rest in the background."""
    tau_cases.run_unit_counts(view, 1, [3], live=1)  # item 3 explained now
    release = hold_tau(monkeypatch)
    release.set()  # the background thread explains items 1 and 2 as soon as it is asked
    found = tau_cases.run_unit_counts(view, 1, [3, 1, 2], live=1)
    assert 3 in found.counts and found.with_kgs == frozenset({1, 2, 3})
    prefetch_done()
    done = tau_cases.run_unit_counts(view, 1, [3, 1, 2], live=1)
    whole = tau_cases.tau_run(view, 1)
    expected = {
        i: sum(
            len(r[k])
            for k in ("aligned", "relation_mismatch", "entity_mismatch", "extra", "missing")
        )
        for i, r in whole.items()
    }
    assert (done.counts, done.pending) == (expected, 0)


def test_run_unit_counts_leaves_the_rest_pending_while_it_is_explained(view, monkeypatch):
    tau_cases.run_unit_counts(view, 2, [2], live=1)
    release = hold_tau(monkeypatch)
    try:
        found = tau_cases.run_unit_counts(view, 2, [2, 1, 3], live=1)
        assert set(found.counts) == {2} and found.pending == 2  # not waited for
    finally:
        release.set()


def test_a_stored_result_from_before_roles_swapped_is_read_with_it():
    old = {
        "entity_mismatch": [
            {"gold": ["d", "r", "e"], "answer": ["e", "r", "d"], "kind": "entity",
             "parts": "swapped", "similarity": 0.97},
        ],
        "signature": "tau|enc:x",
    }  # fmt: skip
    found = tau_cases._current(old)
    assert found["entity_mismatch"] == [] and found["signature"] == "tau|enc:x"
    assert [m["parts"] for m in found["roles_swapped"]] == ["swapped"]
    assert tau_cases._tau_counts(found) == (0, 0, 0, 1, 0, 0)
