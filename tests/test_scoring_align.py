"""Tests of s3kg_core.scoring.align: nearest neighbours, label alignment (docs/scores.md step 4)."""

import math

import numpy as np
import pytest

import s3kg_core.scoring.align as align_module
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.align import Alignment, best_matches, soft_align


def _unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# -- best_matches ----------------------------------------------------------------------------------


def test_best_matches_picks_the_most_similar_row():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32)
    b = np.array([[0.0, 1.0], [0.8, 0.6], [1.0, 0.0]], dtype=np.float32)
    idx, sim = best_matches(a, b)
    assert idx.tolist() == [2, 0, 1]
    np.testing.assert_allclose(sim, [1.0, 1.0, 0.96], atol=1e-6)


def test_best_matches_ties_go_to_the_lowest_index():
    a = np.array([[1.0, 0.0]], dtype=np.float32)
    b = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32)
    idx, _ = best_matches(a, b)
    assert idx.tolist() == [1]


@pytest.mark.parametrize(("n_a", "n_b"), [(0, 3), (3, 0), (0, 0)])
def test_best_matches_with_an_empty_side(n_a, n_b):
    idx, sim = best_matches(np.zeros((n_a, 4), np.float32), np.zeros((n_b, 4), np.float32))
    assert idx.shape == (n_a,)
    assert sim.shape == (n_a,)
    assert np.all(np.isneginf(sim))


def test_best_matches_in_chunks_equals_the_full_product(monkeypatch):
    rng = np.random.default_rng(0)
    a, b = _unit_rows(rng, 11, 8), _unit_rows(rng, 7, 8)
    full = a @ b.T
    monkeypatch.setattr(align_module, "_CHUNK_ROWS", 4)  # chunks of 4, 4 and 3 rows
    idx, sim = best_matches(a, b)
    assert idx.tolist() == full.argmax(axis=1).tolist()
    np.testing.assert_allclose(sim, full.max(axis=1), rtol=0, atol=1e-6)


def test_best_matches_on_more_rows_than_one_chunk():
    rng = np.random.default_rng(1)
    a, b = _unit_rows(rng, 5000, 16), _unit_rows(rng, 300, 16)
    idx, sim = best_matches(a, b)
    full = a @ b.T
    assert idx.dtype == np.int64
    assert (idx == full.argmax(axis=1)).all()
    np.testing.assert_allclose(sim, full.max(axis=1), atol=1e-6)


# -- soft_align ------------------------------------------------------------------------------------

E = np.eye(4)


def _vec(cos: float) -> np.ndarray:
    """A unit vector at cosine ``cos`` to ``E[0]`` (float64, so the cosine is exact)."""
    return np.array([cos, math.sqrt(1.0 - cos * cos), 0.0, 0.0])


def test_soft_align_docstring_case():
    v = np.eye(3, dtype=np.float32)
    al = soft_align(["paris", "rome"], ["paris", "berlin"], v[[0, 1]], v[[0, 2]])
    assert al == Alignment(
        ids_1={"paris": "node_0", "rome": "rome"},
        ids_2={"paris": "node_0", "berlin": "node_1"},
        matched={"paris": "paris", "rome": None},
        similarity={"paris": 1.0, "rome": 0.0},
        nearest={"paris": "paris", "rome": "paris"},  # the best, though below tau
    )


def test_soft_align_names_the_nearest_label_aligned_or_not():
    b = np.array([0.4, 0.3, math.sqrt(0.75), 0.0])  # cosine 0.4 to x, 0.3 to y
    al = soft_align(["a", "b"], ["x", "y"], np.array([_vec(0.9), b]), E[[0, 1]], tau=0.5)
    assert al.nearest == {"a": "x", "b": "x"} and al.matched == {"a": "x", "b": None}
    assert al.similarity["b"] == pytest.approx(0.4)
    assert soft_align(["a"], [], np.array([_vec(0.9)]), np.zeros((0, 4))).nearest == {"a": None}


@pytest.mark.parametrize(
    ("cos", "tau", "aligned"),
    [
        (0.65, 0.65, True),  # the threshold is inclusive
        (0.6499, 0.65, False),
        (0.9, 0.65, True),
        (0.9, 0.95, False),
        (0.0, 0.0, True),  # tau 0 aligns everything that is not anti-correlated
        (1.0, 1.0, True),
    ],
)
def test_soft_align_threshold(cos, tau, aligned):
    al = soft_align(["usa"], ["united states"], E[[0]], _vec(cos)[None, :], tau=tau)
    assert al.ids_1["usa"] == ("node_0" if aligned else "usa")
    assert al.matched["usa"] == ("united states" if aligned else None)
    assert al.similarity["usa"] == pytest.approx(cos, abs=1e-12)


def test_soft_align_relations_use_their_own_prefix():
    al = soft_align(["win", "lose"], ["beat", "lose"], E[[0, 1]], E[[0, 1]], prefix="rel")
    assert al.ids_2 == {"beat": "rel_0", "lose": "rel_1"}
    assert al.ids_1 == {"win": "rel_0", "lose": "rel_1"}


def test_soft_align_several_g1_labels_may_share_one_id():
    v2 = E[[0]]
    v1 = np.vstack([_vec(0.9), _vec(0.8)])
    al = soft_align(["usa", "u.s."], ["united states"], v1, v2)
    assert al.ids_1 == {"usa": "node_0", "u.s.": "node_0"}


@pytest.mark.parametrize(
    ("exact_first", "expected"),
    [
        (True, {"paris": "node_1"}),  # the verbatim label wins over a noisy nearest neighbour
        (False, {"paris": "node_0"}),  # reference mode: argmax of the cosines, nothing else
    ],
)
def test_soft_align_exact_first(exact_first, expected):
    # Two G2 labels; the vectors (deliberately) make "paris " nearer to G1's "paris" than the
    # verbatim "paris" is.
    labels_2 = ["paris ", "paris"]
    v2 = np.vstack([E[0], _vec(0.99)])
    al = soft_align(["paris"], labels_2, E[[0]], v2, exact_first=exact_first)
    assert al.ids_1 == expected
    assert al.matched["paris"] == labels_2[int(expected["paris"][-1])]


def test_soft_align_with_no_g2_labels_keeps_every_text():
    al = soft_align(["a", "b"], [], E[[0, 1]], np.zeros((0, 4)))
    assert al.ids_1 == {"a": "a", "b": "b"}
    assert al.ids_2 == {}
    assert al.matched == {"a": None, "b": None}
    assert all(math.isinf(s) and s < 0 for s in al.similarity.values())


@pytest.mark.parametrize("tau", [-0.01, 1.01, 2.0])
def test_soft_align_rejects_tau_out_of_range(tau):
    with pytest.raises(ConfigError, match=r"tau must be a number in \[0, 1\]"):
        soft_align(["a"], ["b"], E[[0]], E[[1]], tau=tau)


def test_soft_align_with_real_minilm_vectors(minilm):
    # Real embeddings: near-synonyms clear tau = 0.65, unrelated labels do not.
    labels_1 = ["usa", "physician", "violin"]
    labels_2 = ["united states", "doctor", "glacier"]
    v1, v2 = minilm.encode(labels_1), minilm.encode(labels_2)
    al = soft_align(labels_1, labels_2, v1, v2)
    assert al.ids_1 == {"usa": "node_0", "physician": "node_1", "violin": "violin"}
    assert al.matched == {"usa": "united states", "physician": "doctor", "violin": None}
    assert al.similarity["usa"] > 0.8
    assert al.similarity["violin"] < 0.65
