"""Tests of s3kg_core.scoring.cus: GoldSim, CtxSim, CUS and dataset means."""

import math

import numpy as np
import pytest

from s3kg_core.scoring.cus import (
    CUSResult,
    DatasetCUS,
    cus_score,
    dataset_cus,
    harmonic_mean,
    score_cus_many,
)
from s3kg_core.scoring.result import ScoreResult
from s3kg_core.scoring.s3kg import KGScorer

GOLD = [
    ["aspirin", "reduces", "fever"],
    ["aspirin", "is_a", "nsaid"],
    ["aspirin", "inhibits", "cox_enzymes"],
]
CONTEXT = [
    ["aspirin", "inhibits", "cox_enzymes"],
    ["cox_enzymes", "produce", "prostaglandins"],
    ["prostaglandins", "cause", "fever"],
]


@pytest.fixture(scope="module")
def scorer() -> KGScorer:
    """``hybrid``: these tests pin T2^'s semantics (extra T2 triples cost nothing at any size)."""
    return KGScorer("minilm", mode="hybrid")


def test_the_default_mode_matches_a_short_t2_whole_and_a_long_one_in_part() -> None:
    """``ot`` (the default) transports onto all of a T2 up to twice T1's size: an answer that
    says two thirds of the gold scores below 1, where ``hybrid``'s T2^ gives it 1."""
    ot = KGScorer("minilm")
    assert ot.config.mode == "ot"
    assert ot.score(GOLD[:2], GOLD).score < 0.99  # 3 <= 2 x 2: the third gold triple costs
    assert KGScorer("minilm", mode="hybrid").score(GOLD[:2], GOLD).score == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [(0.5, 1.0, 2 / 3), (1.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.3, 0.3, 0.3)],
)
def test_harmonic_mean_table(a, b, expected):
    assert harmonic_mean(a, b) == pytest.approx(expected, abs=1e-12)


def test_harmonic_mean_arrays_have_no_nan():
    out = harmonic_mean(np.array([0.0, 0.2, 1.0]), np.array([0.0, 0.0, 0.5]))
    assert not np.isnan(out).any()
    assert out.tolist() == pytest.approx([0.0, 0.0, 2 / 3])


def test_answer_subset_of_gold_scores_gold_sim_one(scorer):
    # The answer drives the matching: gold triples the answer does not touch cost nothing.
    r = cus_score(GOLD[:2], GOLD, CONTEXT, scorer=scorer)
    assert r.gold_sim == pytest.approx(1.0, abs=1e-6)
    assert r.ctx_sim < r.gold_sim
    assert r.cus == pytest.approx(harmonic_mean(r.gold_sim, r.ctx_sim))


def test_reverse_direction_is_not_symmetric(scorer):
    # Gold as T1 against a one-triple answer is penalised: the gold has facts the answer lacks.
    forward = scorer.score(GOLD[:1], GOLD).score
    backward = scorer.score(GOLD, GOLD[:1]).score
    assert forward == pytest.approx(1.0, abs=1e-6)
    assert backward < forward


def test_empty_answer_gives_zero_not_nan(scorer):
    r = cus_score([], GOLD, CONTEXT, scorer=scorer)
    assert (r.gold_sim, r.ctx_sim, r.cus) == (0.0, 0.0, 0.0)
    assert r.gold.status == r.context.status == "answer_kg_empty"


def test_empty_context_zeroes_ctx_sim_and_cus(scorer):
    r = cus_score(GOLD[:1], GOLD, [], scorer=scorer)
    assert r.context.status == "context_kg_empty"
    assert r.ctx_sim == 0.0
    assert r.cus == 0.0
    assert r.gold_sim > 0.9


def test_many_equals_one_by_one(scorer):
    items = [(GOLD[:1], GOLD, CONTEXT), (CONTEXT, GOLD, CONTEXT), ([], GOLD, CONTEXT)]
    many = score_cus_many(items, scorer)
    single = [cus_score(*item, scorer=KGScorer("minilm", mode="hybrid")) for item in items]
    for a, b in zip(many, single, strict=True):
        assert a.cus == pytest.approx(b.cus, abs=1e-6)
        assert a.gold.status == b.gold.status


def test_cus_at_reblends_both_components():
    r = CUSResult(ScoreResult(0.2, 0.8), ScoreResult(0.6, 0.4))
    for alpha in (0.0, 0.3, 1.0):
        expected = harmonic_mean((1 - alpha) * 0.2 + alpha * 0.8, (1 - alpha) * 0.6 + alpha * 0.4)
        assert r.cus_at(alpha) == pytest.approx(expected)


def test_round_trip_through_dict(scorer):
    r = cus_score(GOLD[:2], GOLD, CONTEXT, scorer=scorer)
    back = CUSResult.from_dict(r.to_dict())
    assert back == r
    assert back.to_dict()["cus"] == pytest.approx(r.cus)


def test_dataset_cus_means_and_empty():
    rs = [
        CUSResult(ScoreResult(1.0, 1.0), ScoreResult(0.5, 0.5)),
        CUSResult(ScoreResult(0.0, 0.0, status="answer_kg_empty"), ScoreResult(0.0, 0.0)),
    ]
    d = dataset_cus(rs)
    assert d.n == 2
    assert d.gold_sim == pytest.approx(0.5)
    assert d.ctx_sim == pytest.approx(0.25)
    assert d.cus == pytest.approx((2 / 3 + 0.0) / 2)
    assert dataset_cus([]) == DatasetCUS(0, 0.0, 0.0, 0.0)
    assert not any(math.isnan(v) for v in (d.gold_sim, d.ctx_sim, d.cus))


def test_dataset_cus_at_another_alpha():
    rs = [CUSResult(ScoreResult(0.2, 0.8), ScoreResult(0.6, 0.4))]
    assert dataset_cus(rs, alpha=1.0).gold_sim == pytest.approx(0.8)
    assert dataset_cus(rs, alpha=0.0).ctx_sim == pytest.approx(0.6)


def test_score_cus_many_passes_the_texts_in_text_mode(minilm):
    """Issue 19: text mode compares the answer's text with the gold answer's and the context's."""

    answer = [["aspirin", "reduces", "fever"]]
    gold = [["aspirin", "reduces", "fever"], ["aspirin", "is", "nsaid"]]
    context = [["aspirin", "treats", "pain"]]
    texts = (
        "Aspirin reduces fever.",
        "Aspirin lowers fever; it is an NSAID.",
        "Aspirin treats pain.",
    )
    scorer = KGScorer(minilm, mode="text")
    with_texts = score_cus_many(
        [(answer, gold, context), ([], gold, context)], scorer, texts=[texts, texts]
    )
    gold_pair = scorer.score(answer, gold, texts=(texts[0], texts[1]))
    ctx_pair = scorer.score(answer, context, texts=(texts[0], texts[2]))
    assert with_texts[0].gold == gold_pair and with_texts[0].context == ctx_pair
    assert with_texts[1].gold.status == "answer_kg_empty" and with_texts[1].cus > 0.3
    one = cus_score(answer, gold, context, scorer=scorer, texts=texts)
    assert one == with_texts[0]
