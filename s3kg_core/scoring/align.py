"""Soft label alignment (docs/scores.md, S3KG step 4) and the nearest-neighbour search it rests on.

Every label of the candidate graph G2 gets a canonical id (``node_j`` for entities, ``rel_j`` for
relations). A label of the reference graph G1 whose best cosine to a G2 label is at least ``tau``
takes that label's id; otherwise it keeps its own text. Equal ids are what the WL kernel then
counts as equal labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .result import DEFAULT_TAU, check_tau

__all__ = ["Alignment", "best_matches", "soft_align"]

_CHUNK_ROWS = 2048


def best_matches(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For every row of ``a``, the index and cosine of the most similar row of ``b``.

    Rows must be unit-norm. Ties go to the lowest index. Large inputs are processed in chunks of
    rows, so two 10,000-row sides never build a 10,000 x 10,000 matrix at once.

    Examples
    --------
    >>> a = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    >>> b = np.array([[0.0, 1.0], [0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
    >>> idx, sim = best_matches(a, b)
    >>> idx.tolist(), sim.round(2).tolist()
    ([2, 0], [1.0, 1.0])
    """
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros(a.shape[0], dtype=np.int64), np.full(a.shape[0], -np.inf)
    idx = np.empty(a.shape[0], dtype=np.int64)
    sim = np.empty(a.shape[0], dtype=np.float64)
    bt = b.T
    for start in range(0, a.shape[0], _CHUNK_ROWS):
        block = a[start : start + _CHUNK_ROWS] @ bt
        best = block.argmax(axis=1)
        idx[start : start + len(best)] = best
        sim[start : start + len(best)] = block[np.arange(len(best)), best]
    return idx, sim


@dataclass(frozen=True)
class Alignment:
    """The result of aligning the labels of G1 to those of G2.

    Attributes
    ----------
    ids_1, ids_2
        Canonical id of every label of G1 and of G2.
    matched
        For every label of G1, the G2 label it was aligned to, or ``None``.
    similarity
        For every label of G1, its best cosine to any G2 label (``-inf`` if G2 has none).
    nearest
        For every label of G1, the G2 label of that best cosine, aligned or not (``None`` if G2
        has none).
    """

    ids_1: dict[str, str]
    ids_2: dict[str, str]
    matched: dict[str, str | None]
    similarity: dict[str, float]
    nearest: dict[str, str | None] = field(default_factory=dict)


def soft_align(
    labels_1: Sequence[str],
    labels_2: Sequence[str],
    vectors_1: np.ndarray,
    vectors_2: np.ndarray,
    *,
    tau: float = DEFAULT_TAU,
    prefix: str = "node",
    exact_first: bool = True,
) -> Alignment:
    """Align the distinct labels of G1 to the distinct labels of G2.

    Parameters
    ----------
    labels_1, labels_2
        Distinct labels of each graph.
    vectors_1, vectors_2
        Unit-norm embeddings: ``vectors_k[i]`` embeds ``labels_k[i]``.
    tau
        Minimum cosine for a G1 label to take a G2 label's id.
    prefix
        Id prefix: ``node`` for entities, ``rel`` for relations.
    exact_first
        A G1 label that also occurs verbatim in G2 aligns to it, whatever floating-point noise
        says about near-duplicates (the reference-compatible mode turns this off).

    Examples
    --------
    >>> v = np.eye(3, dtype=np.float32)
    >>> al = soft_align(["paris", "rome"], ["paris", "berlin"], v[[0, 1]], v[[0, 2]])
    >>> al.ids_1, al.ids_2
    ({'paris': 'node_0', 'rome': 'rome'}, {'paris': 'node_0', 'berlin': 'node_1'})
    >>> al.matched, al.nearest
    ({'paris': 'paris', 'rome': None}, {'paris': 'paris', 'rome': 'paris'})
    """
    check_tau(tau)
    ids_2 = {label: f"{prefix}_{j}" for j, label in enumerate(labels_2)}
    position = {label: j for j, label in enumerate(labels_2)}
    idx, sim = best_matches(vectors_1, vectors_2)
    ids_1: dict[str, str] = {}
    matched: dict[str, str | None] = {}
    similarity: dict[str, float] = {}
    nearest: dict[str, str | None] = {}
    for i, label in enumerate(labels_1):
        if exact_first and label in position:
            j, s = position[label], 1.0
        else:
            j, s = int(idx[i]), float(sim[i])
        similarity[label] = s
        nearest[label] = labels_2[j] if labels_2 else None
        if labels_2 and s >= tau:
            ids_1[label] = f"{prefix}_{j}"
            matched[label] = labels_2[j]
        else:
            ids_1[label] = label
            matched[label] = None
    return Alignment(
        ids_1=ids_1, ids_2=ids_2, matched=matched, similarity=similarity, nearest=nearest
    )
