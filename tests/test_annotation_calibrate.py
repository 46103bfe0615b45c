"""TAU's threshold fitted to human labels (s3kg_core.annotation.calibrate)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from s3kg_core.annotation.calibrate import GRID, calibrate_store, fit_threshold, labelled_pairs
from s3kg_core.annotation.log import Decision, adjudicate, save_decision
from s3kg_core.errors import AnnotationError
from s3kg_core.kg import Triple
from s3kg_core.stages.tau import resolve_threshold
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_best_f1_wins_and_ties_go_to_the_threshold_nearest_the_default():
    sims = [0.95, 0.9, 0.85, 0.8, 0.7]
    fitted = fit_threshold(sims, [True, True, True, False, False], min_labels=1)
    assert (fitted.threshold, fitted.f1, fitted.positives, fitted.negatives) == (0.81, 1.0, 3, 2)
    # at the default 0.76 the 0.8 negative counts as aligned: precision 3/4
    assert fitted.default.threshold == 0.76 and fitted.default.precision == 0.75
    assert [p.threshold for p in fitted.curve] == list(GRID)
    assert all(0 <= p.f1 <= 1 for p in fitted.curve)
    # every threshold from 0.81 to 0.85 separates perfectly: the nearest to 0.76 is chosen
    assert [p.threshold for p in fitted.curve if p.f1 == 1.0] == [0.81, 0.82, 0.83, 0.84, 0.85]


def test_the_curve_is_the_f1_of_thresholding_at_each_point():
    rng = np.random.default_rng(0)
    truth = rng.random(200) < 0.5
    sims = np.clip(np.where(truth, 0.8, 0.6) + rng.normal(0, 0.1, 200), 0, 1)
    fitted = fit_threshold(sims, truth)
    for p in fitted.curve[::7]:
        pred = sims >= p.threshold
        tp = int((pred & truth).sum())
        f1 = 2 * tp / (pred.sum() + truth.sum())
        assert p.f1 == pytest.approx(f1)
    assert 0.6 < fitted.threshold < 0.8
    assert fitted.f1 == max(p.f1 for p in fitted.curve)


def test_too_few_labels_keep_the_default_and_say_so():
    """Regression (issue 43, item 3): 2 aligned and 1 not aligned labels fitted 0.97 (F1 1.0),
    and `s3kg tau --threshold calibrated` then called 61 of 61 pairs missing."""
    fitted = fit_threshold([0.98, 0.97, 0.9], [True, True, False])
    assert fitted.thin and fitted.threshold == 0.76 and fitted.fitted == 0.91
    assert (fitted.f1, fitted.precision) == (fitted.default.f1, fitted.default.precision)
    assert "too few labels" in fitted.summary() and "the default 0.76 is kept" in fitted.summary()
    enough = fit_threshold([0.98, 0.97, 0.9] * 10, [True, True, False] * 10)
    assert not enough.thin and enough.threshold == 0.91 and "too few" not in enough.summary()


def test_the_f1_interval_narrows_with_more_labels():
    rng = np.random.default_rng(1)

    def interval(n: int) -> tuple[float, float]:
        truth = rng.random(n) < 0.5
        sims = np.clip(np.where(truth, 0.8, 0.6) + rng.normal(0, 0.1, n), 0, 1)
        fitted = fit_threshold(sims, truth)
        low, high = fitted.f1_interval
        assert low <= fitted.f1 <= high
        return low, high

    small, large = interval(30), interval(600)
    assert large[1] - large[0] < small[1] - small[0]


@pytest.mark.parametrize("truth", [[True, True], [False, False], []])
def test_labels_of_one_kind_cannot_calibrate(truth):
    with pytest.raises(AnnotationError, match="both kinds"):
        fit_threshold([0.9] * len(truth), truth)


def test_only_labels_that_say_whether_a_pair_aligns_are_used():
    g, a = ("a", "r", "b"), ("a", "s", "b")
    labels = pd.DataFrame(
        [
            ("aligned", g, a, "confirm", True),
            ("aligned", g, a, "reject", False),
            (None, g, a, "add", True),
            ("relation_mismatch", g, a, "confirm", False),
            ("entity_mismatch", g, a, "confirm", False),
            ("roles_swapped", g, a, "confirm", None),  # the threshold cannot tell a swap
            ("roles_swapped", g, a, "reject", None),
            ("relation_mismatch", g, a, "reject", None),  # aligned, or unrelated? unknown
            ("extra", None, a, "confirm", None),
            ("missing", g, None, "reject", None),
            ("aligned", g, a, None, None),  # a tie
        ],
        columns=["category", "gold_triple", "answer_triple", "label", "want"],
    )
    got = [aligned for _, _, aligned in labelled_pairs(labels)]
    assert got == [w for w in labels["want"] if w is not None]


PARAPHRASES = [  # (gold, answer) pairs people say align
    (("aspirin", "reduce", "fever"), ("aspirin", "lower", "fever")),
    (("marie curie", "win", "nobel prize"), ("curie", "receive", "nobel prize")),
    (("the river", "flow into", "the sea"), ("the river", "empty into", "the sea")),
]
CONTRADICTIONS = [  # pairs people say do not
    (("aspirin", "reduce", "fever"), ("aspirin", "cause", "fever")),
    (("paris", "be capital of", "france"), ("paris", "be capital of", "germany")),
    (("the cat", "chase", "the mouse"), ("the mouse", "chase", "the cat")),
]


def test_calibrating_a_store_stores_the_fit_of_the_people_s_labels(tmp_path, minilm):
    store = Store(tmp_path / "c.duckdb")
    for g, a in PARAPHRASES:
        save_decision(store, Decision("ann", 1, 1, g, a, "confirm", category="aligned"))
    for g, a in CONTRADICTIONS[:2]:
        save_decision(store, Decision("ann", 1, 1, g, a, "reject", category="aligned"))
    g, a = CONTRADICTIONS[2]
    save_decision(store, Decision("ann", 1, 1, g, a, "confirm", category="entity_mismatch"))
    save_decision(store, Decision("bob", 1, 1, g, a, "reject", category="entity_mismatch"))
    adjudicate(store, "judge", 1, 1, g, a, "confirm", category="entity_mismatch")
    fitted = calibrate_store(store, encoder=minilm)
    sims = [
        float(minilm.encode([Triple(*g).sentence()])[0] @ minilm.encode([Triple(*a).sentence()])[0])
        for g, a in PARAPHRASES + CONTRADICTIONS
    ]
    want = fit_threshold(sims, [True] * 3 + [False] * 3)
    assert (fitted.threshold, fitted.f1, fitted.curve) == (want.threshold, want.f1, want.curve)
    assert (fitted.positives, fitted.negatives, fitted.encoder) == (3, 3, minilm.name)
    assert fitted.calibration_id == 1 and "threshold" in fitted.summary()
    with store.connect() as con:
        stored = aq.latest_calibration(con, minilm.name)
        texts = {t for t, _ in store.load_embeddings(con, minilm.name)}
    assert stored["threshold"] == fitted.threshold
    assert len(json.loads(stored["curve"])) == len(GRID)
    assert json.loads(stored["detail"])["labels"] == {"majority": 5, "adjudicated": 1}
    assert Triple(*PARAPHRASES[0][1]).sentence() in texts  # the new embeddings are kept
    assert resolve_threshold(store, "calibrated", minilm.name) == (fitted.threshold, "calibrated#1")


def test_a_store_without_labels_of_both_kinds_is_a_named_error(tmp_path, minilm):
    store = Store(tmp_path / "c.duckdb")
    g, a = PARAPHRASES[0]
    save_decision(store, Decision("ann", 1, 1, g, a, "confirm", category="aligned"))
    with pytest.raises(AnnotationError, match=r"1 aligned .* and 0 not aligned"):
        calibrate_store(store, encoder=minilm)
    with store.connect() as con:
        assert aq.latest_calibration(con) is None
