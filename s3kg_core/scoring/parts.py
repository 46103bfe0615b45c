"""Triples compared part by part: head with head, relation with relation, tail with tail.

A triple's sentence ``"h r t"`` embeds almost as a bag of words: ``"brutus kill caesar"`` and
``"caesar kill brutus"`` have cosine 0.97 with MiniLM. Compared part by part, the two share a
relation and nothing else: their heads differ and so do their tails. This module gives the
``n1 x n2`` matrix of such part-wise similarities between two lists of triples already read in
their canonical direction (:func:`s3kg_core.scoring.roles.read_triple`: a passive, an inverse
relation or an AMR ``-of`` role turned round), so that a swap of head and tail costs and a
rephrased direction does not.

The similarity of triples ``(h1, r1, t1)`` and ``(h2, r2, t2)`` is the weighted geometric mean of
the three parts' cosines (each clipped to ``[FLOOR, 1]``),
``cos(h1, h2) ** w_e * cos(r1, r2) ** w_r * cos(t1, t2) ** w_e`` with ``2 w_e + w_r = 1``
(:data:`ENTITY_WEIGHT`): one part that disagrees pulls the whole down, as it changes the fact.
Where either relation is symmetric (``border``, ``marry``) the crossed reading ``(h1 ~ t2, t1 ~
h2)`` counts too, the larger of the two. Relations that are symbols rather than words (PropBank's
numbered roles, ``argument zero`` ...) are compared as symbols: equal or not
(:data:`SYMBOL_MISMATCH`), since an encoder embeds ``argument zero`` and ``argument one`` almost
alike although they are opposite roles.

The label side sees roles too: an entity's *role context* (:func:`role_contexts`) sums the
relations it takes part in, plus as their head and minus as their tail, and two entities that a
label transport aligns keep their labels' similarity times the agreement of their role contexts
(:func:`role_agreement`), as a Weisfeiler-Lehman iteration refines a node's label by its edges.

References
----------
.. [1] S. Cai, K. Knight, "Smatch: an Evaluation Metric for Semantic Feature Structures", ACL
   2013: graphs compared triple by triple, each part matched.
.. [2] M. Togninalli, E. Ghisu, F. Llinares-Lopez, B. Rieck, K. Borgwardt, "Wasserstein
   Weisfeiler-Lehman Graph Kernels", NeurIPS 2019: node vectors refined by their edges.
.. [3] J. Opitz, A. Daza, A. Frank, "Weisfeiler-Leman in the Bamboo", TACL 9 (2021): role
   confusion, the test a graph metric must pass and a bag of words fails.

Examples
--------
>>> import numpy as np
>>> e = np.eye(3)
>>> h, r, t = e[[0]], e[[1]], e[[2]]
>>> same = part_similarity(PartVectors(h, r, t), PartVectors(h, r, t))
>>> swapped = part_similarity(PartVectors(h, r, t), PartVectors(t, r, h))
>>> float(same[0, 0]), float(swapped[0, 0]) < 0.2
(1.0, True)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "ENTITY_WEIGHT",
    "FLOOR",
    "ROLE_AGREEMENT_WEIGHT",
    "SYMBOL_MISMATCH",
    "PartVectors",
    "part_similarity",
    "role_agreement",
    "role_contexts",
    "symbol_id",
    "unit_rows",
]

Array = npt.NDArray[np.float64]

ENTITY_WEIGHT = 0.45
"""The exponent of the head's and of the tail's cosine; the relation's is ``1 - 2 x`` this."""

FLOOR = 0.05
"""The smallest a part's cosine counts for (an unrelated part does not zero the triple)."""

SYMBOL_MISMATCH = 0.3
"""The similarity of two different symbolic relations (``argument zero``, ``argument one``)."""

_SYMBOL_PREFIX = "argument "


_AMR_SYMBOLS = frozenset({"mod", "poss", "quant", "ord", "li", "domain", "polarity", "wiki"})
_NUMBERED = re.compile(r"(op|snt)[0-9]+|prep-[a-z-]+|consist-of")


@lru_cache(maxsize=100_000)
def symbol_id(relation: str) -> str | None:
    """The symbol a relation is, or ``None`` for a relation in words.

    Symbols are the roles of AMR's closed inventory that are no English relation: PropBank's
    numbered roles (spelt out by the normaliser), ``op1``, ``snt1``, ``prep-*``, ``mod``,
    ``poss``, ``quant``, ``ord``, ``li``, ``domain``, ``polarity``, ``wiki``, ``consist-of``.
    Their meaning is the frame's, not their words': two different symbols are different roles
    however alike an encoder embeds them.

    Examples
    --------
    >>> symbol_id("argument zero"), symbol_id("op1"), symbol_id("discover")
    ('argument zero', 'op1', None)
    """
    if (
        relation.startswith(_SYMBOL_PREFIX)
        or relation in _AMR_SYMBOLS
        or _NUMBERED.fullmatch(relation) is not None
    ):
        return relation
    return None


@dataclass(frozen=True)
class PartVectors:
    """The embeddings of a list of triples' heads, relations and tails (one row a triple).

    The rows are stored as unit vectors.

    ``symmetric`` marks the triples whose relation reads the same both ways; ``symbols`` holds
    each relation's :func:`symbol_id` (``None`` for a relation in words). Both default to none.
    """

    heads: Array
    relations: Array
    tails: Array
    symmetric: npt.NDArray[np.bool_] | None = None
    symbols: tuple[str | None, ...] = field(default=())

    unit: bool = False
    """Whether the rows are unit vectors already (else they are scaled on construction)."""

    def __post_init__(self) -> None:
        if self.unit:
            return
        for name in ("heads", "relations", "tails"):  # unit rows, once: every cosine reads them
            object.__setattr__(self, name, _unit(getattr(self, name)))
        object.__setattr__(self, "unit", True)

    def __len__(self) -> int:
        return len(self.heads)

    def take(self, rows: Sequence[int]) -> PartVectors:
        """The triples of these rows, in this order."""
        idx = np.asarray(rows, dtype=np.int64)
        return PartVectors(
            self.heads[idx],
            self.relations[idx],
            self.tails[idx],
            None if self.symmetric is None else self.symmetric[idx],
            tuple(self.symbols[i] for i in rows) if self.symbols else (),
            unit=True,
        )

    def rows(self, rows: slice) -> PartVectors:
        """The triples of a slice of rows."""
        return PartVectors(
            self.heads[rows],
            self.relations[rows],
            self.tails[rows],
            None if self.symmetric is None else self.symmetric[rows],
            self.symbols[rows],
            unit=True,
        )


def unit_rows(x: npt.ArrayLike) -> Array:
    """Rows of ``x`` scaled to unit length (a zero row stays zero).

    Examples
    --------
    >>> unit_rows([[3.0, 4.0], [0.0, 0.0]]).tolist()
    [[0.6, 0.8], [0.0, 0.0]]
    """
    return _unit(np.asarray(x, dtype=np.float64))


def _unit(x: Array) -> Array:
    """Rows of ``x`` scaled to unit length (a zero row stays zero)."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        x = x.reshape(len(x), -1)
    norm = np.sqrt(np.einsum("ij,ij->i", x, x))  # several times faster than linalg.norm here
    return np.asarray(x / np.maximum(norm, 1e-12)[:, None])


def _cos(a: Array, b: Array) -> Array:
    """Cosines of unit rows, at least :data:`FLOOR`."""
    return np.clip(a @ b.T, FLOOR, 1.0)


def _relation_cosine(one: PartVectors, two: PartVectors) -> Array:
    cos = _cos(one.relations, two.relations)
    if one.symbols and two.symbols:
        s1 = [i for i, s in enumerate(one.symbols) if s is not None]
        s2 = [j for j, s in enumerate(two.symbols) if s is not None]
        if s1 and s2:
            a = np.array([one.symbols[i] for i in s1], dtype=object)
            b = np.array([two.symbols[j] for j in s2], dtype=object)
            same = a[:, None] == b[None, :]
            cos[np.ix_(s1, s2)] = np.where(same, 1.0, SYMBOL_MISMATCH)
    return cos


def part_similarity(
    one: PartVectors, two: PartVectors, *, entity_weight: float | None = None
) -> Array:
    """The ``len(one) x len(two)`` matrix of part-wise triple similarities, in ``[0, 1]``.

    Parameters
    ----------
    one, two
        The parts of each list of triples, read in their canonical direction.
    entity_weight
        The exponent of the head's and of the tail's cosine (the relation's: ``1 - 2 x``);
        ``None``: :data:`ENTITY_WEIGHT`.

    Examples
    --------
    >>> import numpy as np
    >>> v = np.eye(4)
    >>> a = PartVectors(v[[0]], v[[1]], v[[2]], symmetric=np.array([True]))
    >>> b = PartVectors(v[[2]], v[[1]], v[[0]], symmetric=np.array([True]))
    >>> float(part_similarity(a, b)[0, 0])  # a symmetric relation read crossed
    1.0
    """
    if entity_weight is None:
        entity_weight = ENTITY_WEIGHT
    w_r = 1.0 - 2.0 * entity_weight
    rel = _relation_cosine(one, two) ** w_r
    direct = (_cos(one.heads, two.heads) * _cos(one.tails, two.tails)) ** entity_weight
    out = np.asarray(direct * rel, dtype=np.float64)
    sym_1 = one.symmetric if one.symmetric is not None else np.zeros(len(one), dtype=bool)
    sym_2 = two.symmetric if two.symmetric is not None else np.zeros(len(two), dtype=bool)
    either = sym_1[:, None] | sym_2[None, :]
    if either.any():
        crossed = (_cos(one.heads, two.tails) * _cos(one.tails, two.heads)) ** entity_weight
        out = np.where(either, np.maximum(out, crossed * rel), out)
    return out


ROLE_AGREEMENT_WEIGHT = 0.8
"""How much two aligned entities' roles can take from their similarity (:func:`role_agreement`):
an entity that is the subject in one KG and the object in the other keeps ``1 -`` this of it."""


def role_contexts(n: int, edges: Sequence[tuple[int, int, int]], parts: PartVectors) -> Array:
    """Each entity's role context: the relations it takes part in, and on which side.

    The unit vector of the sum of the unit vectors of the relations of which the entity is the
    head, minus those of which it is the tail (plus for a symmetric relation, which has no
    sides); a zero row for an entity with no relation in words. Symbolic relations
    (:func:`symbol_id`, AMR's roles) are left out: what an ``argument zero`` is depends on its
    frame, which the triples' part-wise comparison already sees.

    Parameters
    ----------
    n
        The number of entities.
    edges
        ``(head entity, triple, tail entity)`` indices, one per triple of ``parts``.
    parts
        The triples' part vectors (relations, symmetric flags and symbols are read).

    Examples
    --------
    >>> v = np.eye(3)
    >>> parts = PartVectors(v[[0]], v[[2]], v[[1]])
    >>> role_contexts(2, [(0, 0, 1)], parts)[:, 2].tolist()  # subject +, object -
    [1.0, -1.0]
    """
    relations = parts.relations  # unit rows
    words = np.array([s is None for s in parts.symbols] if parts.symbols else [True] * len(parts))
    symmetric = parts.symmetric if parts.symmetric is not None else np.zeros(len(parts), bool)
    context = np.zeros((n, relations.shape[1] if relations.ndim == 2 else 0))
    for head, k, tail in edges:  # a loop: np.add.at is slower for a KG's few edges
        if words[k]:
            context[head] += relations[k]
            context[tail] += relations[k] if symmetric[k] else -relations[k]
    has = np.linalg.norm(context, axis=1, keepdims=True) > 1e-9
    return np.asarray(_unit(context) * has, dtype=np.float64)


def role_agreement(contexts_1: Array, contexts_2: Array, *, weight: float | None = None) -> Array:
    """The ``n1 x n2`` factors by which two entities' roles scale their label similarity.

    ``1 - weight * (1 - cos) / 2`` of the two role contexts' cosine: 1 for the same roles,
    ``1 - weight`` for opposite ones (subject of ``kill`` in one KG, its object in the other).
    A pair in which either entity has no role context keeps its similarity (factor 1).

    Examples
    --------
    >>> c = np.array([[1.0, 0.0]])
    >>> role_agreement(c, c).tolist(), role_agreement(c, -c).round(2).tolist()
    ([[1.0]], [[0.2]])
    >>> role_agreement(c, np.zeros((1, 2))).tolist()
    [[1.0]]
    """
    if weight is None:
        weight = ROLE_AGREEMENT_WEIGHT
    cos = contexts_1 @ contexts_2.T
    both = (np.abs(contexts_1).sum(axis=1) > 0)[:, None] & (np.abs(contexts_2).sum(axis=1) > 0)
    return np.asarray(np.where(both, 1.0 - weight * (1.0 - cos) / 2.0, 1.0), dtype=np.float64)
