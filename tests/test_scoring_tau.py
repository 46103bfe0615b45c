"""Tests of s3kg_core.scoring.tau: the triplet analysis unit."""

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.tau import TauResult, TripletAnalyzer, lowest_fraction, tau_analyse


@pytest.fixture(scope="module")
def tau() -> TripletAnalyzer:
    return TripletAnalyzer("minilm")


GOLD = [
    ["Renzo", "won_against", "Thomas"],
    ["Renzo", "won_in", "finals"],
    ["Renzo", "born_in", "Italy"],
    ["aspirin", "reduces", "fever"],
]
ANSWER = [
    ["Thomas", "won_against", "Renzo"],  # swapped: entity mismatch
    ["Renzo", "won_in", "finals"],  # aligned
    ["aspirin", "causes", "fever"],  # relation mismatch
    ["Renzo", "owns", "a yacht"],  # extra
]


def test_worked_example_categories(tau):
    r = tau.analyse(GOLD, ANSWER)
    assert r.counts() == {
        "aligned": 1,
        "relation_mismatch": 1,
        "entity_mismatch": 1,
        "extra": 1,
        "missing": 1,
    }
    assert r.aligned[0].gold == Triple("renzo", "win in", "final")
    assert r.entity_mismatch[0].parts == "swapped"
    assert r.relation_mismatch[0].gold.relation == "reduce"
    assert r.relation_mismatch[0].answer.relation == "cause"
    assert r.extra == (Triple("renzo", "own", "a yacht"),)
    assert r.missing == (Triple("renzo", "born in", "italy"),)
    assert (r.triple_threshold, r.component_threshold) == (0.76, 0.76)
    assert r.encoder.startswith("minilm@")


def test_literal_mode_counts_sentence_matches_as_aligned():
    # Without component verification the swapped and the opposite-verb pairs have sentence
    # cosine >= 0.76 with MiniLM, so they count as aligned: the reason verification is default.
    r = TripletAnalyzer("minilm", verify_components=False).analyse(GOLD, ANSWER)
    assert r.counts()["aligned"] == 3
    assert r.counts()["entity_mismatch"] == r.counts()["relation_mismatch"] == 0


def test_entity_mismatch_on_one_side(tau):
    r = tau.analyse([["paris", "capital_of", "france"]], [["paris", "capital_of", "germany"]])
    kinds = [(m.kind, m.parts) for m in (*r.entity_mismatch, *r.relation_mismatch)]
    assert kinds == [("entity", "tail")]
    assert not r.extra and not r.missing


def test_alignment_is_one_to_one(tau):
    r = tau.analyse(
        [["marie curie", "discovered", "radium"]],
        [["marie curie", "discovered", "radium"], ["marie curie", "found", "radium"]],
    )
    assert len(r.aligned) == 1
    assert r.aligned[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert len(r.extra) == 1


@pytest.mark.parametrize(
    ("gold", "answer", "expected"),
    [
        ([], [["a", "r", "b"]], {"extra": 1, "missing": 0}),
        ([["a", "r", "b"]], [], {"extra": 0, "missing": 1}),
        ([], [], {"extra": 0, "missing": 0}),
        ([["a", "", "b"]], [["  ", "r", "b"]], {"extra": 0, "missing": 0}),
    ],
)
def test_empty_sides(tau, gold, answer, expected):
    counts = tau.analyse(gold, answer).counts()
    assert {k: counts[k] for k in expected} == expected
    assert counts["aligned"] == 0


def test_many_equals_one_by_one(tau):
    items = [(GOLD, ANSWER), (GOLD[:1], ANSWER[:1]), ([], ANSWER)]
    many = tau.analyse_many(items)
    single = [TripletAnalyzer("minilm").analyse(g, a) for g, a in items]
    for a, b in zip(many, single, strict=True):
        assert a.counts() == b.counts()
        assert [m.answer for m in a.entity_mismatch] == [m.answer for m in b.entity_mismatch]
        assert a.extra == b.extra and a.missing == b.missing


def test_round_trip_through_dict(tau):
    r = tau.analyse(GOLD, ANSWER)
    assert TauResult.from_dict(r.to_dict()) == r


def test_thresholds_are_validated():
    with pytest.raises(ConfigError, match="triple_threshold"):
        TripletAnalyzer("minilm", triple_threshold=1.5)
    with pytest.raises(ConfigError, match="component_threshold"):
        tau_analyse([], [], component_threshold=-0.1)


def test_opposite_verbs_with_high_sentence_cosine_are_relation_mismatches(tau):
    r = tau.analyse([["marie curie", "discovered", "radium"]], [["marie curie", "found", "radium"]])
    assert [(m.kind, m.parts) for m in r.relation_mismatch] == [("relation", "relation")]
    assert r.relation_mismatch[0].similarity >= 0.76


def test_parts_match_below_sentence_threshold_aligns_via_components(tau):
    strict = TripletAnalyzer("minilm", triple_threshold=0.999, cache=tau.cache)
    pair = ([["Marie_Curie", "discovered", "radium"]], [["Marie Curie", "discovered", "Radium."]])
    assert [a.via for a in tau.analyse(*pair).aligned] == ["sentence"]
    assert [a.via for a in strict.analyse(*pair).aligned] == ["components"]


@pytest.mark.parametrize(
    ("scores", "fraction", "expected"),
    [
        ([0.9, 0.1, 0.5, 0.1], 0.5, [1, 3]),
        ([0.9, 0.1, 0.5], 0.05, [1]),
        (list(range(100)), 0.05, [0, 1, 2, 3, 4]),
        ([0.3] * 4, 0.25, [0]),
        ([], 0.05, []),
    ],
)
def test_lowest_fraction(scores, fraction, expected):
    assert lowest_fraction(scores, fraction) == expected


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_lowest_fraction_rejects_bad_fraction(fraction):
    with pytest.raises(ConfigError):
        lowest_fraction([0.1], fraction)
