"""Weisfeiler-Lehman (WL) subtree features and kernel for knowledge graphs.

Two variants, both exact (labels are compressed through a dictionary shared by the two graphs of
a pair, so there are no hash collisions):

``paper`` (docs/scores.md, S3KG step 5)
    Directed multigraph with edge labels. Iteration 0 labels a node by its (aligned) entity label;
    iteration k relabels it by its label and the sorted multiset of
    ``(direction, relation label, neighbour label)`` over its out- and in-edges. Features count
    every label of iterations 0..K.
``struct``
    Relation-agnostic and undirected, on the same graph as ``paper``: iteration k relabels a node
    by its label and the sorted multiset of its neighbours' labels over all its edges (parallel
    edges count). The ``hybrid`` S3KG mode averages this kernel with the ``paper`` kernel.
``kgx`` (the authors' released code)
    What networkx + grakel compute there: an undirected simple graph whose edges are walked one
    way only (from the endpoint that appeared first, as ``networkx.Graph.edges()`` yields them),
    relation labels ignored, and ``WeisfeilerLehman(n_iter=K)``, which also counts iterations
    0..K.

The kernel is the cosine of the two feature-count vectors, in [0, 1].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Literal

from ..errors import ConfigError

__all__ = ["WLLabeler", "kgx_graph", "wl_features", "wl_kernel"]

Variant = Literal["paper", "struct", "kgx"]
Edge = tuple[str, str, str]


class WLLabeler:
    """Compresses WL signatures to integers; share one between the graphs you compare."""

    def __init__(self) -> None:
        self._ids: dict[Hashable, int] = {}

    def __call__(self, signature: Hashable) -> int:
        """Return the integer of ``signature``, assigning the next one if it is new."""
        found = self._ids.get(signature)
        if found is None:
            found = self._ids[signature] = len(self._ids)
        return found


def kgx_graph(edges: Iterable[Edge]) -> list[Edge]:
    """Collapse edges the way ``networkx.Graph`` does and orient them as its ``edges()`` yields.

    Nodes are numbered by first appearance (head before tail); each unordered pair keeps one
    edge, oriented from the node that appeared first; the relation is the last one written,
    as networkx keeps it.

    Examples
    --------
    >>> kgx_graph([("b", "r", "a"), ("a", "s", "b"), ("c", "t", "a")])
    [('b', 's', 'a'), ('a', 't', 'c')]
    """
    order: dict[str, int] = {}
    kept: dict[tuple[str, str], str] = {}
    for head, relation, tail in edges:
        order.setdefault(head, len(order))
        order.setdefault(tail, len(order))
        key = (head, tail) if order[head] <= order[tail] else (tail, head)
        kept[key] = relation
    ordered = sorted(kept.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]]))
    return [(u, relation, v) for (u, v), relation in ordered]


def _neighbours(
    edges: Sequence[Edge], nodes: Iterable[str], variant: Variant
) -> dict[str, list[tuple[int, str, str]]]:
    """Each node's ``(direction, relation, neighbour)`` list as ``variant`` reads the edges."""
    if variant not in ("paper", "struct", "kgx"):
        raise ConfigError(f"WL variant must be paper, struct or kgx; got {variant!r}")
    neighbours: dict[str, list[tuple[int, str, str]]] = {node: [] for node in nodes}
    for head, relation, tail in edges:
        if variant == "paper":
            neighbours[head].append((1, relation, tail))
            neighbours[tail].append((-1, relation, head))
        elif variant == "struct":
            neighbours[head].append((0, "", tail))
            neighbours[tail].append((0, "", head))
        else:  # kgx
            neighbours[head].append((1, "", tail))
    return neighbours


def _refine(
    labels: dict[str, int],
    neighbours: Mapping[str, list[tuple[int, str, str]]],
    k: int,
    labeler: WLLabeler,
) -> dict[str, int]:
    """Iteration ``k``'s labels: each node's label and its neighbours' multiset, compressed."""
    return {
        node: labeler(
            (k, labels[node], tuple(sorted((d, r, labels[n]) for d, r, n in neighbours[node])))
        )
        for node in labels
    }


def wl_features(
    edges: Sequence[Edge],
    node_labels: Mapping[str, str],
    iterations: int,
    labeler: WLLabeler,
    *,
    variant: Variant = "paper",
) -> Counter[int]:
    """Count the WL labels of one graph over all iterations.

    Parameters
    ----------
    edges
        ``(head node, relation label, tail node)``; for ``kgx`` pass :func:`kgx_graph` output.
    node_labels
        Initial label of every node (its aligned entity id).
    iterations
        Refinement rounds K: the labels of iterations 0..K are counted (grakel's ``n_iter``).
    labeler
        Shared with the other graph of the comparison.
    variant
        ``paper``, ``struct`` or ``kgx``; see the module docstring.

    Examples
    --------
    >>> f = wl_features([("a", "r", "b")], {"a": "x", "b": "y"}, 1, WLLabeler())
    >>> sorted(f.values())  # two labels at iteration 0, two at iteration 1
    [1, 1, 1, 1]
    """
    if iterations < 0:
        raise ConfigError(f"WL iterations must be >= 0; got {iterations}")
    neighbours = _neighbours(edges, node_labels, variant)
    labels = {node: labeler((0, label)) for node, label in node_labels.items()}
    counts: Counter[int] = Counter(labels.values())
    for k in range(1, iterations + 1):
        labels = _refine(labels, neighbours, k, labeler)
        counts.update(labels.values())
    return counts


def wl_kernel(
    edges_1: Sequence[Edge],
    labels_1: Mapping[str, str],
    edges_2: Sequence[Edge],
    labels_2: Mapping[str, str],
    iterations: int = 5,
    *,
    variant: Variant = "paper",
) -> float:
    """Normalised WL subtree kernel of two graphs: cosine of their WL feature counts.

    Returns 0.0 when either graph has no node.

    Examples
    --------
    >>> e1 = [("renzo", "win against", "thomas")]
    >>> e2 = [("thomas", "win against", "renzo")]
    >>> labels = {"renzo": "renzo", "thomas": "thomas"}
    >>> wl_kernel(e1, labels, e1, labels)
    1.0
    >>> round(wl_kernel(e1, labels, e2, labels), 4)  # direction matters
    0.1667
    >>> wl_kernel(e1, labels, e2, labels, variant="struct")  # not to the structural variant
    1.0
    """
    if iterations < 0:
        raise ConfigError(f"WL iterations must be >= 0; got {iterations}")
    near_1 = _neighbours(edges_1, labels_1, variant)
    near_2 = _neighbours(edges_2, labels_2, variant)
    if not labels_1 or not labels_2:
        return 0.0
    labeler = WLLabeler()
    ids_1 = {node: labeler((0, label)) for node, label in labels_1.items()}
    ids_2 = {node: labeler((0, label)) for node, label in labels_2.items()}
    dot = norm_1 = norm_2 = 0
    classes = -1
    for k in range(iterations + 1):
        if k:
            ids_1 = _refine(ids_1, near_1, k, labeler)
            ids_2 = _refine(ids_2, near_2, k, labeler)
        c1, c2 = Counter(ids_1.values()), Counter(ids_2.values())
        step_dot = sum(c * c2.get(key, 0) for key, c in c1.items())
        step_1 = sum(c * c for c in c1.values())
        step_2 = sum(c * c for c in c2.values())
        now = len(c1.keys() | c2.keys())
        # A round refines the last one's partition of both graphs' nodes; one that splits no
        # class leaves every later round the same partition, class sizes and counts: add them
        # all now (exact, the same integers as running them).
        repeat = iterations - k + 1 if now == classes else 1
        dot += repeat * step_dot
        norm_1 += repeat * step_1
        norm_2 += repeat * step_2
        if repeat > 1:
            break
        classes = now
    return min(1.0, float(dot) / math.sqrt(float(norm_1) * float(norm_2)))
