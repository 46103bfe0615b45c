"""dashboard.data.explain: answers explained again from the stored vectors, the warm-up."""

from __future__ import annotations

import pytest
from conftest import SCORING_MODES

from dashboard.data import explain
from dashboard.data.database import View, clear_caches, db_stamp
from s3kg_core.scoring.result import DEFAULT_MODE, blend
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.scored import scored_frame
from s3kg_core.store.store import Store


def test_the_explorer_recomputes_a_new_tau_from_stored_embeddings(two_runs_view):
    loose = explain.explorer_case(two_runs_view, 1, 1, 0.0)
    strict = explain.explorer_case(two_runs_view, 1, 1, 1.0)
    assert loose.encoded == strict.encoded == 0  # nothing encoded: every vector was stored
    assert all(p for p in loose.entity_map("gold").values())  # tau 0 aligns every label
    assert strict.gold.s_wl <= loose.gold.s_wl


def explorer_equals_stored(path, signature, every: int = 1) -> int:
    """The explorer's numbers at the stored tau are the stored ones, bit for bit."""
    view = View(path, db_stamp(path), signature)
    frame = scored_frame(Store(path, read_only=True), signature)
    tau = Signature.parse(signature).tau
    checked = 0
    for row in frame.iloc[::every].itertuples():
        case = explain.explorer_case(view, int(row.run_id), int(row.item_id), tau)
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
    clear_caches()
    # every other answer in the demo's own mode (the default), every sixth in the others (the
    # same code path; each case opens the file twice: a tenth of a second): the explanations of
    # all 60 answers are checked against score() in test_scoring_explain.py
    every = 2 if mode == DEFAULT_MODE else 6
    assert explorer_equals_stored(path, signatures[mode], every) >= 10


@pytest.mark.shared_data
@pytest.mark.parametrize("mode", SCORING_MODES)
def test_the_explorer_shows_released_answers_stored_scores(released_every_mode, mode):
    path, signatures = released_every_mode
    clear_caches()
    assert explorer_equals_stored(path, signatures[mode], 1 if mode == DEFAULT_MODE else 2) >= 10


def test_warm_up_loads_the_lemmatizer_once_in_the_background():
    """Issue 33: the first explained answer of a process read lemminflect's dictionary (0.4 s
    of the Run comparison's first visit at 100,000 answers); app.py now starts it after the
    first page is drawn."""
    from lemminflect.core.Lemmatizer import Lemmatizer

    thread = explain.warm_up()
    thread.join(timeout=60)
    assert not thread.is_alive() and thread.daemon
    assert explain.warm_up() is thread  # one thread per process
    assert hasattr(Lemmatizer(), "lemma_dict")
