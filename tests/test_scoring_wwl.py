"""Tests of s3kg_core.scoring.wwl and the ``wwl`` mode of KGScorer.

The invariants a meaning-graph similarity must keep (issue 41): identical graphs score 1, a role
swap scores lower, a synonym or a reification scores close to the original; the transport plan
is an n:m alignment with the right marginals; ``explain()`` is ``score()``, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig
from s3kg_core.scoring.wwl import contextualise, transport, wwl_similarity

FEED = [["feed", "ARG0", "man"], ["feed", "ARG1", "mouse"], ["feed", "ARG2", "snake"]]
FEED_SWAPPED = [["feed", "ARG0", "mouse"], ["feed", "ARG1", "man"], ["feed", "ARG2", "snake"]]


@pytest.fixture(scope="module")
def wwl(minilm: Encoder) -> KGScorer:
    return KGScorer(minilm, mode="wwl")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(rows, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- the algorithm --------------------------------------------------------------------------------


def test_a_round_mixes_each_edge_in_by_its_direction() -> None:
    nodes, rels = _unit(3, 8, 0), _unit(1, 8, 1)
    rounds = contextualise(nodes, rels, [(0, 0, 1)], 2, mix=0.5, relation_weight=1.0)
    assert len(rounds) == 3
    np.testing.assert_allclose(rounds[1][0], 0.5 * nodes[0] + 0.5 * (nodes[1] + rels[0]))
    np.testing.assert_allclose(rounds[1][1], 0.5 * nodes[1] + 0.5 * (nodes[0] - rels[0]))
    np.testing.assert_array_equal(rounds[2][2], nodes[2])  # no edge: kept
    flipped = contextualise(nodes, rels, [(1, 0, 0)], 1, mix=0.5)
    assert not np.allclose(flipped[1][0], rounds[1][0])  # the direction counts


def test_a_graph_without_edges_keeps_its_vectors_every_round() -> None:
    nodes = _unit(2, 4, 2)
    rounds = contextualise(nodes, np.zeros((0, 4)), [], 3)
    assert len(rounds) == 4 and all(np.array_equal(r, nodes) for r in rounds)


def test_the_plan_has_uniform_marginals_and_may_split_a_node() -> None:
    t = transport(_unit(2, 6, 3), _unit(5, 6, 4))
    np.testing.assert_allclose(t.plan.sum(axis=1), [0.5, 0.5])
    np.testing.assert_allclose(t.plan.sum(axis=0), [0.2] * 5)
    assert ((t.plan > 1e-12).sum(axis=1) > 1).any()  # n:m: a node sends mass to several
    assert 0.0 <= t.distance <= 2.0 and t.similarity == pytest.approx(1 - t.distance)


def test_identical_graphs_are_at_distance_zero() -> None:
    v, r = _unit(4, 8, 5), _unit(2, 8, 6)
    edges = [(0, 0, 1), (1, 1, 2), (2, 0, 3)]
    res = wwl_similarity(v, r, edges, v, r, edges, 1)
    assert res.structure.similarity == pytest.approx(1.0)
    assert res.labels.similarity == pytest.approx(1.0)


# -- the mode -------------------------------------------------------------------------------------


def test_identical_kgs_score_one(wwl: KGScorer) -> None:
    r = wwl.score(FEED, FEED)
    assert r.status == "ok"
    assert (r.s_wl, r.s_sbert, r.score) == pytest.approx((1.0, 1.0, 1.0))


def test_a_role_swap_scores_lower(wwl: KGScorer) -> None:
    same, swapped = wwl.score_pairs([(FEED, FEED), (FEED, FEED_SWAPPED)])
    assert swapped.s_wl < same.s_wl - 1e-3
    assert swapped.score < same.score
    assert swapped.s_sbert == pytest.approx(1.0)  # the labels alone do not see the swap


def test_a_flipped_edge_scores_lower(wwl: KGScorer) -> None:
    a = [["Renzo", "won_against", "Thomas"]]
    assert wwl.score(a, [["Thomas", "won_against", "Renzo"]]).s_wl < 0.95


def test_a_synonym_scores_close_to_the_original_and_above_another_concept(
    wwl: KGScorer,
) -> None:
    original = [["boy", "ride", "horse"], ["boy", "mod", "young"]]
    synonym = [["lad", "ride", "horse"], ["lad", "mod", "young"]]
    other = [["boy", "ride", "bicycle"], ["boy", "mod", "young"]]
    syn, oth = wwl.score_pairs([(original, synonym), (original, other)])
    assert syn.score > 0.85
    assert syn.score > oth.score


def test_a_reification_scores_closer_than_an_unrelated_graph(wwl: KGScorer) -> None:
    original = [["dog", "location", "park"], ["dog", "ARG0-of", "run"]]
    reified = [["be-located-at", "ARG1", "dog"], ["be-located-at", "ARG2", "park"]]
    reified.append(["run", "ARG0", "dog"])
    unrelated = [["economy", "ARG1-of", "grow"], ["grow", "time", "year"]]
    close, far = wwl.score_pairs([(original, reified), (original, unrelated)])
    assert close.score > 0.6
    assert close.score > far.score + 0.2


def test_extra_content_on_either_side_costs(wwl: KGScorer) -> None:
    """wwl is symmetric: unlike the modes built on T2^, extra T2 triples lower the score."""
    more = [*FEED, ["snake", "mod", "hungry"]]
    forward, backward = wwl.score_pairs([(FEED, more), (more, FEED)])
    assert forward.score < 1.0
    assert forward.score == pytest.approx(backward.score)


def test_explain_is_score_and_carries_the_plan(wwl: KGScorer) -> None:
    one = [["Marie Curie", "discovered", "radium"], ["radium", "is", "metal"]]
    two = [["Curie", "found", "radium"]]
    ex = wwl.explain(one, two)
    r = wwl.score(one, two)
    assert (ex.s_wl, ex.s_sbert, ex.score) == (r.s_wl, r.s_sbert, r.score)
    assert ex.signature == r.signature and "mode:wwl" in ex.signature and "|K:1|" in ex.signature
    mass: dict[str, float] = {}
    for a, _b, m in ex.transport:
        mass[a] = mass.get(a, 0.0) + m
    assert mass == pytest.approx({"marie curie": 1 / 3, "radium": 1 / 3, "metal": 1 / 3})
    assert {b for _a, b, _m in ex.transport} == {"curie", "radium"}
    assert ex.entity_map["radium"] == "radium"
    assert ex.picks == () and ex.kernels["wwl"] == r.s_wl and ex.kernels["labels"] == r.s_sbert
    assert type(ex).from_dict(ex.to_dict()).transport == ex.transport


def test_the_mode_embeds_labels_only_and_a_filled_cache_encodes_nothing(
    minilm: Encoder,
) -> None:
    pairs = [(FEED, FEED_SWAPPED), ([["Cats", "chase", "mice"]], [["cat", "eat", "fish"]])]
    scorer = KGScorer(minilm, mode="wwl")
    needed = scorer.strings_needed(pairs)
    assert "feed argument zero man" not in needed
    assert {"feed", "man", "argument zero"} <= needed  # the numbered role spelt out
    cache = EmbeddingCache(minilm)
    cache.add(needed)
    before = len(cache)
    fresh = KGScorer(minilm, mode="wwl", cache=cache)
    assert [r.score for r in fresh.score_pairs(pairs)] == [
        r.score for r in scorer.score_pairs(pairs)
    ]
    assert len(cache) == before


def test_k_defaults_per_mode_and_a_given_k_is_kept() -> None:
    assert S3KGConfig(mode="wwl").iterations == 1
    assert S3KGConfig(mode="hybrid").iterations == 5
    assert "|K:3|" in S3KGConfig(mode="wwl", wl_iterations=3).signature("minilm@0.1.0")
    with pytest.raises(ConfigError, match="wwl aligns by optimal transport"):
        S3KGConfig(mode="wwl", align=False)


def test_an_empty_side_scores_zero_with_its_reason(wwl: KGScorer) -> None:
    r = wwl.score(FEED, [])
    assert (r.status, r.score) == ("empty_kg_2", 0.0)
