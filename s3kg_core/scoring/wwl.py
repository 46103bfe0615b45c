"""Wasserstein Weisfeiler-Lehman similarity of two KGs: the ``wwl`` mode (docs/scores.md, "Modes").

Every node of a KG starts as its label's embedding. Each Weisfeiler-Lehman round mixes into a
node the messages of its edges: over an out-edge ``(v, r, u)`` the neighbour's vector plus the
relation's embedding, over an in-edge ``(u, r, v)`` the neighbour's vector minus it, so that the
direction and the relation of an edge count (a role swap moves the vectors), and a relation
that embeds close to another one (``born in`` / ``was born in``) costs little. The two graphs'
nodes are then compared by optimal transport: every node carries the same mass, the ground cost
is one minus the cosine of two nodes' vectors, and the earth mover's distance is the least cost
of moving one graph's mass onto the other's. A node may spread its mass over several nodes of
the other graph (n:m alignment); the transport plan is the alignment.

Two similarities come out, one minus a distance each:

- the structural one, over the vectors after the last round (``s_wl`` of the ``wwl`` mode);
- the label one, over the round-0 vectors, the labels alone (``s_sbert`` of the ``wwl`` mode).

References
----------
.. [1] M. Togninalli, E. Ghisu, F. Llinares-López, B. Rieck, K. Borgwardt, "Wasserstein
   Weisfeiler-Lehman Graph Kernels", NeurIPS 2019.
.. [2] J. Opitz, A. Daza, A. Frank, "Weisfeiler-Leman in the Bamboo: Novel AMR Graph Metrics
   and a Benchmark for AMR Graph Similarity", TACL 9 (2021) 1425-1441.
.. [3] R. Flamary et al., "POT: Python Optimal Transport", JMLR 22 (2021): the solver.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "MIX",
    "RELATION_WEIGHT",
    "Transport",
    "WWLResult",
    "contextualise",
    "transport",
    "wwl_similarity",
]

Array = npt.NDArray[np.float64]

MIX = 0.3
"""Share of a node's vector that each round takes from its edges' messages (the rest is kept).
Chosen by the BAMBOO dev mean (0.3: 67.7, 0.5: 66.4; bench/README.md, "BAMBOO")."""

RELATION_WEIGHT = 1.0
"""Weight of the relation's embedding in an edge's message."""

Edge = tuple[int, int, int]
"""``(head node, relation, tail node)``, as indices into the node and relation vectors."""


def _unit(x: Array) -> Array:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.asarray(x / np.maximum(norm, 1e-12), dtype=np.float64)


def contextualise(
    nodes: Array,
    relations: Array,
    edges: Sequence[Edge],
    iterations: int,
    *,
    mix: float = MIX,
    relation_weight: float = RELATION_WEIGHT,
) -> list[Array]:
    """The node vectors of rounds ``0..iterations``, each round's row ``i`` for node ``i``.

    Round k: ``x_v <- (1 - mix) x_v + mix * mean(messages)`` over every edge at ``v``, the
    message of an out-edge ``(v, r, u)`` being ``x_u + w e_r`` and of an in-edge ``(u, r, v)``
    ``x_u - w e_r`` (w = ``relation_weight``). A node without edges keeps its vector.

    Examples
    --------
    >>> n = np.eye(3)                 # three nodes with orthogonal labels
    >>> r = np.array([[0.0, 0.0, 1.0]])
    >>> rounds = contextualise(n, r, [(0, 0, 1)], 1, mix=0.5)
    >>> rounds[1].round(2).tolist()   # node 2 has no edge: unchanged
    [[0.5, 0.5, 0.5], [0.5, 0.5, -0.5], [0.0, 0.0, 1.0]]
    """
    x = np.asarray(nodes, dtype=np.float64)
    rel = np.asarray(relations, dtype=np.float64)
    rounds = [x]
    if not edges:
        return rounds + [x] * iterations
    e = np.asarray(edges, dtype=np.int64)
    heads, rels, tails = e[:, 0], e[:, 1], e[:, 2]
    degree = np.bincount(np.concatenate([heads, tails]), minlength=len(x)).astype(np.float64)
    has_edges = degree > 0
    for _ in range(iterations):
        agg = np.zeros_like(x)
        np.add.at(agg, heads, x[tails] + relation_weight * rel[rels])
        np.add.at(agg, tails, x[heads] - relation_weight * rel[rels])
        mean = agg / np.maximum(degree, 1.0)[:, None]
        x = np.where(has_edges[:, None], (1.0 - mix) * x + mix * mean, x)
        rounds.append(x)
    return rounds


@dataclass(frozen=True)
class Transport:
    """The optimal transport of one graph's nodes onto the other's.

    Attributes
    ----------
    distance
        The earth mover's distance: the least total cost, in [0, 2] (cosine costs).
    plan
        ``plan[i, j]``: the mass node ``i`` of G1 sends to node ``j`` of G2 (rows sum to
        ``1 / n1``, columns to ``1 / n2``).
    cosine
        The cosines the costs were made of.
    """

    distance: float
    plan: Array
    cosine: Array

    @property
    def similarity(self) -> float:
        """``1 - distance``, clipped to [0, 1]."""
        return float(min(1.0, max(0.0, 1.0 - self.distance)))


def transport(x1: Array, x2: Array) -> Transport:
    """Transport the rows of ``x1`` onto those of ``x2`` (uniform masses, cost 1 - cosine).

    Examples
    --------
    >>> t = transport(np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 0.0]]))
    >>> round(t.distance, 6), t.plan.round(3).tolist()
    (0.166667, [[0.0, 0.333, 0.167], [0.333, 0.0, 0.167]])
    """
    # POT imports torch (seconds) when it is installed: imported here, so that importing
    # s3kg_core loads no torch (tests/test_config.py), only the first transport does.
    import ot

    cosine = np.asarray(_unit(x1) @ _unit(x2).T, dtype=np.float64)
    cost = np.clip(1.0 - cosine, 0.0, 2.0)
    n1, n2 = cost.shape
    a = np.full(n1, 1.0 / n1)
    b = np.full(n2, 1.0 / n2)
    plan = np.asarray(ot.emd(a, b, cost), dtype=np.float64)
    return Transport(float(np.sum(plan * cost)), plan, cosine)


@dataclass(frozen=True)
class WWLResult:
    """Both transports of :func:`wwl_similarity`."""

    structure: Transport
    labels: Transport


def wwl_similarity(
    nodes_1: Array,
    relations_1: Array,
    edges_1: Sequence[Edge],
    nodes_2: Array,
    relations_2: Array,
    edges_2: Sequence[Edge],
    iterations: int,
) -> WWLResult:
    """The structural and label transports of two graphs.

    Parameters
    ----------
    nodes_1, nodes_2
        Unit label embeddings of each graph's nodes (one row a node).
    relations_1, relations_2
        Unit embeddings of each graph's relation labels.
    edges_1, edges_2
        Each graph's edges as index triples into its nodes and relations.
    iterations
        Weisfeiler-Lehman rounds (>= 1).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> v = _unit(rng.normal(size=(3, 8)))
    >>> r = _unit(rng.normal(size=(2, 8)))
    >>> same = wwl_similarity(v, r, [(0, 0, 1), (0, 1, 2)], v, r, [(0, 0, 1), (0, 1, 2)], 1)
    >>> round(same.structure.similarity, 6), round(same.labels.similarity, 6)
    (1.0, 1.0)
    >>> swap = wwl_similarity(v, r, [(0, 0, 1), (0, 1, 2)], v, r, [(0, 0, 2), (0, 1, 1)], 1)
    >>> swap.structure.similarity < 1.0 == swap.labels.similarity
    True
    """
    rounds_1 = contextualise(nodes_1, relations_1, edges_1, iterations)
    rounds_2 = contextualise(nodes_2, relations_2, edges_2, iterations)
    return WWLResult(
        structure=transport(rounds_1[-1], rounds_2[-1]),
        labels=transport(rounds_1[0], rounds_2[0]),
    )
