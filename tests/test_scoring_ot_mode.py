"""Tests of s3kg_core.scoring.ot_mode and the ``ot`` mode of KGScorer.

The invariants a graph similarity must keep (issue 41): identical KGs score 1, a role swap and a
flipped edge score lower, a synonym or a reification scores close to the original; the label
plan is an n:m alignment with uniform marginals; ``explain()`` is ``score()``, bit for bit; an
empty side scores 0; extra T2 triples cost the symmetric transport but not the best match.
"""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.ot_mode import (
    BEST_MATCH_WEIGHT,
    KERNEL_WEIGHT,
    TRIPLE_TRANSPORT_WEIGHT,
    best_match,
    ot_components,
    spread_transport,
)
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig

FEED = [["feed", "ARG0", "man"], ["feed", "ARG1", "mouse"], ["feed", "ARG2", "snake"]]
FEED_SWAPPED = [["feed", "ARG0", "mouse"], ["feed", "ARG1", "man"], ["feed", "ARG2", "snake"]]


@pytest.fixture(scope="module")
def otm(minilm: Encoder) -> KGScorer:
    return KGScorer(minilm, mode="ot")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(rows, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- the components -------------------------------------------------------------------------------


def test_the_weights_of_the_relational_side_sum_to_one() -> None:
    assert pytest.approx(1.0) == TRIPLE_TRANSPORT_WEIGHT + BEST_MATCH_WEIGHT + KERNEL_WEIGHT


def test_best_match_is_unidirectional() -> None:
    one, two = _unit(2, 8, 0), _unit(3, 8, 1)
    more = np.vstack([one, two])
    assert best_match(one, more) == pytest.approx(1.0)  # T2's extra rows cost nothing
    assert best_match(more, one) < 1.0  # T1's unsupported rows cost their share
    by_hand = float(np.clip((one @ two.T).max(axis=1).mean(), 0, 1))
    assert best_match(one, two) == pytest.approx(by_hand)


def test_the_components_blend_by_their_weights() -> None:
    s1, s2, e1, e2 = _unit(3, 8, 2), _unit(4, 8, 3), _unit(2, 8, 4), _unit(4, 8, 5)
    c = ot_components(s1, s2, e1, e2, 0.25)
    expected = (
        TRIPLE_TRANSPORT_WEIGHT * c.triples.similarity
        + BEST_MATCH_WEIGHT * c.best_match
        + KERNEL_WEIGHT * 0.25
    )
    assert c.s_wl == pytest.approx(max(0.0, expected))
    assert c.s_sbert == c.labels.similarity
    np.testing.assert_allclose(c.labels.plan.sum(axis=1), [0.5, 0.5])
    np.testing.assert_allclose(c.labels.plan.sum(axis=0), [0.25] * 4)  # 4 <= 2 x 2: balanced
    np.testing.assert_allclose(c.triples.plan.sum(axis=0), [0.25] * 4)


def test_a_t2_over_twice_t1_is_capped_and_its_extra_costs_nothing() -> None:
    x1 = _unit(2, 8, 9)
    x2 = np.vstack([x1, x1, _unit(3, 8, 10)])  # 7 > 2 x 2: T1's two rows, twice, and 3 others
    t = spread_transport(x1, x2)
    np.testing.assert_allclose(t.plan.sum(axis=1), [0.5, 0.5])  # all of T1's mass moves
    assert (t.plan.sum(axis=0) <= 0.25 + 1e-12).all()  # no T2 row takes more than 1/(2 n1)
    assert t.distance == pytest.approx(0.0, abs=1e-9)  # its copies take it all; the rest: free
    balanced = spread_transport(x1, x2, spread=10.0)  # uncapped: the 3 others must be fed
    assert balanced.distance > 0.1


def _pot_distance(x1: np.ndarray, x2: np.ndarray, spread: float) -> float:
    """The transport's distance as POT's network simplex solves it, with no shortcut."""
    import ot

    u1 = x1 / np.linalg.norm(x1, axis=1, keepdims=True)
    u2 = x2 / np.linalg.norm(x2, axis=1, keepdims=True)
    cost = np.clip(1.0 - u1 @ u2.T, 0.0, 2.0)
    n1, n2 = cost.shape
    if n2 <= spread * n1:
        plan = ot.emd(np.full(n1, 1 / n1), np.full(n2, 1 / n2), cost)
    else:
        cap = 1 / (spread * n1)
        spare = n2 * cap - 1
        full = ot.emd(
            np.append(np.full(n1, 1 / n1), spare) / (1 + spare),
            np.full(n2, cap) / (1 + spare),
            np.vstack([cost, np.zeros((1, n2))]),
        )
        plan = full[:n1] * (1 + spare)
    return float(np.sum(plan * cost))


@pytest.mark.parametrize("spread", [2.0, 1.5, 10.0])
def test_the_shortcuts_solve_the_transport_pot_solves(spread: float) -> None:
    """Regression (issue 41, speed): one-unit sides in closed form and small transports as
    assignment problems over unit copies give POT's distances, ties and caps included."""
    rng = np.random.default_rng(7)
    for _ in range(150):
        n1, n2 = int(rng.integers(1, 9)), int(rng.integers(1, 25))
        x1 = rng.normal(size=(n1, 6))
        x2 = rng.normal(size=(n2, 6))
        if rng.random() < 0.3:  # exact copies: ties in the cost
            x2 = np.vstack([x1, x2])
        t = spread_transport(x1, x2, spread=spread)
        assert t.distance == pytest.approx(_pot_distance(x1, x2, spread), abs=1e-9)
        np.testing.assert_allclose(t.plan.sum(axis=1), np.full(n1, 1 / n1))
        if len(x2) <= spread * n1:
            np.testing.assert_allclose(t.plan.sum(axis=0), np.full(len(x2), 1 / len(x2)))
        else:
            assert (t.plan.sum(axis=0) <= 1 / (spread * n1) + 1e-12).all()


# -- the mode -------------------------------------------------------------------------------------


def test_identical_kgs_score_one(otm: KGScorer) -> None:
    r = otm.score(FEED, FEED)
    assert r.status == "ok"
    assert (r.s_wl, r.s_sbert, r.score) == pytest.approx((1.0, 1.0, 1.0))


def test_a_role_swap_scores_lower(otm: KGScorer) -> None:
    same, swapped = otm.score_pairs([(FEED, FEED), (FEED, FEED_SWAPPED)])
    assert swapped.s_wl < same.s_wl - 1e-3
    assert swapped.score < same.score
    assert swapped.s_sbert == pytest.approx(1.0)  # the labels alone do not see the swap


FLEMING = [["Alexander Fleming", "discovered", "penicillin"]]
BRUTUS = [["Brutus", "killed", "Caesar"], ["Caesar", "ruled", "Rome"]]


def test_swap_scores_below_passive_and_passive_as_the_fact(otm: KGScorer) -> None:
    # issue 57: who did what to whom. Hand-made KGs, the default mode.
    same, passive, swap, old_order = otm.score_pairs(
        [
            (FLEMING, FLEMING),
            (FLEMING, [["penicillin", "was discovered by", "Alexander Fleming"]]),
            (FLEMING, [["penicillin", "discovered", "Alexander Fleming"]]),
            (FLEMING, [["Alexander Fleming", "was discovered by", "penicillin"]]),
        ]
    )
    assert same.score == pytest.approx(1.0)
    assert passive.score == pytest.approx(same.score)  # read in its canonical direction
    assert swap.score < passive.score - 0.3
    assert old_order.score == pytest.approx(swap.score)  # the passive with the old order
    assert swap.s_wl < passive.s_wl and swap.s_sbert < passive.s_sbert  # both sides see it


def test_an_inverse_or_symmetric_rewording_scores_above_a_swap(otm: KGScorer) -> None:
    employs = [["Acme", "employs", "Jane Doe"]]
    borders = [["France", "borders", "Spain"]]
    inverse, swap, symmetric, replaced = otm.score_pairs(
        [
            (employs, [["Jane Doe", "works for", "Acme"]]),
            (employs, [["Jane Doe", "employs", "Acme"]]),
            (borders, [["Spain", "borders", "France"]]),
            (borders, [["France", "borders", "Italy"]]),
        ]
    )
    assert inverse.score == pytest.approx(1.0)
    assert swap.score < inverse.score - 0.3
    assert symmetric.score == pytest.approx(1.0)
    assert replaced.score < symmetric.score


def test_a_paraphrase_scores_above_the_swap_of_the_same_fact(otm: KGScorer) -> None:
    paraphrase = [["Brutus", "murdered", "Julius Caesar"], ["Julius Caesar", "governed", "Rome"]]
    swap = [["Caesar", "killed", "Brutus"], ["Caesar", "ruled", "Rome"]]
    para, swapped = otm.score_pairs([(BRUTUS, paraphrase), (BRUTUS, swap)])
    assert para.score > swapped.score


def test_the_papers_worked_example(otm: KGScorer) -> None:
    # The seed paper's Table 1: pair 12 of paws_wiki_400 (the players swapped) scores below the
    # 0.5 threshold, pair 3 (identical KGs) 1.0.
    pair_12 = (
        [["Renzo_Furlan", "won_against", "Thomas_Johansson"], ["Renzo_Furlan", "won_in", "finals"]],
        [
            ["Thomas_Johansson", "won_against", "Renzo_Furlan"],
            ["Thomas_Johansson", "won_in", "finals"],
        ],
    )
    pair_3 = [["Griese", "was_injured_in", "season"], ["Griese", "was_relieved_by", "Grossman"]]
    swapped, identical = otm.score_pairs([pair_12, (pair_3, pair_3)])
    assert swapped.score < 0.5
    assert identical.score == pytest.approx(1.0)


def test_explain_is_score_for_a_passive_and_a_swap(otm: KGScorer) -> None:
    for two in (
        [["penicillin", "discovered by", "Alexander Fleming"]],
        [["penicillin", "discovered", "Alexander Fleming"]],
    ):
        ex, r = otm.explain(FLEMING, two), otm.score(FLEMING, two)
        assert (ex.s_wl, ex.s_sbert, ex.score) == (r.s_wl, r.s_sbert, r.score)
        assert ex.triples_2[0].key.relation == "discover"  # the canonical key
        assert ex.transport  # the label plan is still drawn


def test_numbered_roles_are_embedded_spelt_out(otm: KGScorer) -> None:
    """MiniLM embeds ``arg0`` and ``arg1`` almost alike; the spelt-out roles differ more."""
    needed = otm.strings_needed([(FEED, FEED_SWAPPED)])
    assert "feed argument zero man" in needed and "feed arg0 man" not in needed
    raw = otm.encoder.encode(["feed arg0 man", "feed arg1 man"])
    spelt = otm.encoder.encode(["feed argument zero man", "feed argument one man"])
    cos = [float(a @ b / np.linalg.norm(a) / np.linalg.norm(b)) for a, b in (raw, spelt)]
    assert cos[1] < cos[0]


def test_a_flipped_edge_scores_lower(otm: KGScorer) -> None:
    a = [["Renzo", "won_against", "Thomas"]]
    assert otm.score(a, [["Thomas", "won_against", "Renzo"]]).s_wl < 0.95


def test_a_synonym_scores_close_to_the_original_and_above_another_concept(
    otm: KGScorer,
) -> None:
    original = [["boy", "ride", "horse"], ["boy", "mod", "young"]]
    synonym = [["lad", "ride", "horse"], ["lad", "mod", "young"]]
    other = [["cloud", "ride", "horse"], ["cloud", "mod", "young"]]  # the same place, not a synonym
    syn, oth = otm.score_pairs([(original, synonym), (original, other)])
    assert syn.score > 0.7
    assert syn.score > oth.score + 0.05


def test_a_reification_scores_closer_than_an_unrelated_graph(otm: KGScorer) -> None:
    original = [["dog", "location", "park"], ["dog", "ARG0-of", "run"]]
    reified = [["be-located-at", "ARG1", "dog"], ["be-located-at", "ARG2", "park"]]
    reified.append(["run", "ARG0", "dog"])
    unrelated = [["economy", "ARG1-of", "grow"], ["grow", "time", "year"]]
    close, far = otm.score_pairs([(original, reified), (original, unrelated)])
    assert close.score > 0.5
    assert close.score > far.score + 0.2


def test_extra_t2_triples_cost_the_transport_but_not_the_best_match(otm: KGScorer) -> None:
    more = [*FEED, ["snake", "mod", "hungry"]]
    forward, backward = otm.explain_pairs([(FEED, more), (more, FEED)])
    assert forward.kernels["best_match"] == pytest.approx(1.0)
    assert backward.kernels["best_match"] < 1.0
    assert forward.kernels["triple_transport"] == pytest.approx(
        backward.kernels["triple_transport"]
    )
    assert forward.score < 1.0


def test_explain_is_score_and_carries_the_label_plan(otm: KGScorer) -> None:
    one = [["Marie Curie", "discovered", "radium"], ["radium", "is", "metal"]]
    two = [["Curie", "found", "radium"]]
    ex = otm.explain(one, two)
    r = otm.score(one, two)
    assert (ex.s_wl, ex.s_sbert, ex.score) == (r.s_wl, r.s_sbert, r.score)
    assert ex.signature == r.signature and "mode:ot|" in ex.signature and "|K:5|" in ex.signature
    mass: dict[str, float] = {}
    for a, _b, m in ex.transport:
        mass[a] = mass.get(a, 0.0) + m
    assert mass == pytest.approx({"marie curie": 1 / 3, "radium": 1 / 3, "metal": 1 / 3})
    assert {b for _a, b, _m in ex.transport} == {"curie", "radium"}
    assert ex.picks  # the WL kernel reads T2^, as in hybrid
    k = ex.kernels
    assert k["wl"] == pytest.approx(0.5 * (k["paper"] + k["struct"]))
    assert r.s_sbert == k["labels"]
    assert r.s_wl == pytest.approx(
        TRIPLE_TRANSPORT_WEIGHT * k["triple_transport"]
        + BEST_MATCH_WEIGHT * k["best_match"]
        + KERNEL_WEIGHT * k["wl"]
    )
    assert type(ex).from_dict(ex.to_dict()).transport == ex.transport


def test_a_filled_cache_encodes_nothing(minilm: Encoder) -> None:
    pairs = [
        (FEED, FEED_SWAPPED),
        ([["Cats", "chase", "mice"]], [["cat", "eat", "fish"], ["dog", "bark", "loud"]]),
    ]
    scorer = KGScorer(minilm, mode="ot")
    cache = EmbeddingCache(minilm)
    cache.add(scorer.strings_needed(pairs))
    before = len(cache)
    fresh = KGScorer(minilm, mode="ot", cache=cache)
    assert [r.score for r in fresh.score_pairs(pairs)] == [
        r.score for r in scorer.score_pairs(pairs)
    ]
    assert len(cache) == before


def test_the_mode_has_no_unaligned_variant() -> None:
    assert S3KGConfig(mode="ot").iterations == 5
    with pytest.raises(ConfigError, match="ot aligns by optimal transport"):
        S3KGConfig(mode="ot", align=False)


def test_an_empty_side_scores_zero_with_its_reason(otm: KGScorer) -> None:
    r = otm.score(FEED, [])
    assert (r.status, r.score) == ("empty_kg_2", 0.0)
    both = otm.score([], [])
    assert (both.status, both.score) == ("empty_kgs", 0.0)


def test_a_large_pair_takes_the_relaxed_transport_without_a_full_matrix(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import s3kg_core.scoring.ot_mode as ot_mode

    x1, x2 = _unit(6, 8, 7), _unit(9, 8, 8)
    exact = ot_mode.spread_transport(x1, x2)
    monkeypatch.setattr(ot_mode, "MAX_EXACT", 5)
    monkeypatch.setattr(ot_mode, "_CHUNK", 4)  # the nearest partners found in blocks
    relaxed = ot_mode.spread_transport(x1, x2)
    cos = x1 @ x2.T
    rows, cols = (1 - cos.max(axis=1)).mean(), (1 - cos.max(axis=0)).mean()
    assert relaxed.distance == pytest.approx(max(rows, cols))  # 9 <= 2 x 6: balanced
    assert relaxed.distance <= exact.distance + 1e-9  # a lower bound of the exact distance
    assert relaxed.plan.size == 0
    capped = ot_mode.spread_transport(x1[:2], x2)  # 9 > 2 x 2: T1's side alone
    assert capped.distance == pytest.approx((1 - cos[:2].max(axis=1)).mean())
    assert ot_mode.best_match(x1, x2) == pytest.approx(cos.max(axis=1).mean())
