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
    """
    if iterations < 0:
        raise ConfigError(f"WL iterations must be >= 0; got {iterations}")
    if variant not in ("paper", "struct", "kgx"):
        raise ConfigError(f"WL variant must be paper, struct or kgx; got {variant!r}")
    neighbours: dict[str, list[tuple[int, str, str]]] = {node: [] for node in node_labels}
    for head, relation, tail in edges:
        if variant == "paper":
            neighbours[head].append((1, relation, tail))
            neighbours[tail].append((-1, relation, head))
        elif variant == "struct":
            neighbours[head].append((0, "", tail))
            neighbours[tail].append((0, "", head))
        elif variant == "kgx":
            neighbours[head].append((1, "", tail))
    labels = {node: labeler((0, label)) for node, label in node_labels.items()}
    counts: Counter[int] = Counter(labels.values())
    for k in range(1, iterations + 1):
        labels = {
            node: labeler(
                (k, labels[node], tuple(sorted((d, r, labels[n]) for d, r, n in neighbours[node])))
            )
            for node in labels
        }
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
    labeler = WLLabeler()
    f1 = wl_features(edges_1, labels_1, iterations, labeler, variant=variant)
    f2 = wl_features(edges_2, labels_2, iterations, labeler, variant=variant)
    if not f1 or not f2:
        return 0.0
    if len(f2) < len(f1):
        f1, f2 = f2, f1
    dot = sum(c * f2.get(key, 0) for key, c in f1.items())
    n1 = sum(c * c for c in f1.values())
    n2 = sum(c * c for c in f2.values())
    return min(1.0, float(dot) / math.sqrt(float(n1) * float(n2)))
