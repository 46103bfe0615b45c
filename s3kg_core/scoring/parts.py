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

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = [
    "ENTITY_WEIGHT",
    "FLOOR",
    "ROLE_CONTEXT_WEIGHT",
    "SYMBOL_MISMATCH",
    "PartVectors",
    "entity_role_vectors",
    "part_similarity",
    "symbol_id",
]

Array = npt.NDArray[np.float64]

ENTITY_WEIGHT = 0.35
"""The exponent of the head's and of the tail's cosine; the relation's is ``1 - 2 x`` this."""

FLOOR = 0.05
"""The smallest a part's cosine counts for (an unrelated part does not zero the triple)."""

SYMBOL_MISMATCH = 0.3
"""The similarity of two different symbolic relations (``argument zero``, ``argument one``)."""

_SYMBOL_PREFIX = "argument "


_AMR_SYMBOLS = frozenset({"mod", "poss", "quant", "ord", "li", "domain", "polarity", "wiki"})
_NUMBERED = re.compile(r"(op|snt)[0-9]+|prep-[a-z-]+|consist-of")


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

    ``symmetric`` marks the triples whose relation reads the same both ways; ``symbols`` holds
    each relation's :func:`symbol_id` (``None`` for a relation in words). Both default to none.
    """

    heads: Array
    relations: Array
    tails: Array
    symmetric: npt.NDArray[np.bool_] | None = None
    symbols: tuple[str | None, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.heads)

    def rows(self, rows: slice) -> PartVectors:
        """The triples of a slice of rows."""
        return PartVectors(
            self.heads[rows],
            self.relations[rows],
            self.tails[rows],
            None if self.symmetric is None else self.symmetric[rows],
            self.symbols[rows],
        )


def _unit(x: Array) -> Array:
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12))


def _cos(a: Array, b: Array) -> Array:
    return np.clip(_unit(a) @ _unit(b).T, FLOOR, 1.0)


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


ROLE_CONTEXT_WEIGHT = 0.7
"""How much an entity's roles weigh beside its label in :func:`entity_role_vectors`."""

_SYMBOL_SEED = 20261207
SYMBOL_CONTEXT = True


def _symbol_vector(symbol: str, dim: int) -> Array:
    """A fixed random unit vector for a symbolic relation (seeded by its name)."""
    digest = int.from_bytes(hashlib.sha256(symbol.encode()).digest()[:8], "big")
    v = np.random.default_rng([_SYMBOL_SEED, digest]).standard_normal(dim)
    return np.asarray(v / np.linalg.norm(v), dtype=np.float64)


def entity_role_vectors(
    entities: Sequence[str],
    labels: Array,
    edges: Sequence[tuple[int, int, int]],
    parts: PartVectors,
    *,
    weight: float | None = None,
) -> Array:
    """Entity vectors that carry their roles: the label beside the relations it takes part in.

    Each entity's vector is its label's unit vector followed by ``weight`` times the unit
    vector of its role context: the sum of the unit vectors of the relations of which it is the
    head, minus those of which it is the tail (both plus, for a symmetric relation). An entity
    that is the subject of ``kill`` in one KG and its object in the other loses most of its
    similarity; a passive read in its canonical direction keeps all of it. A symbolic relation
    (:func:`symbol_id`) takes a fixed random vector of its own, so different numbered roles are
    orthogonal.

    Parameters
    ----------
    entities
        The KG's entity labels, one row of ``labels`` each.
    labels
        Their label embeddings.
    edges
        ``(head entity, triple, tail entity)`` indices: one per triple of ``parts``.
    parts
        The triples' part vectors (relations, symmetric flags and symbols are read).
    weight
        The role context's weight beside the label; ``None``: :data:`ROLE_CONTEXT_WEIGHT`.

    Examples
    --------
    >>> v = np.eye(3)
    >>> parts = PartVectors(v[[0]], v[[2]], v[[1]])
    >>> a = entity_role_vectors(["b", "c"], v[:2], [(0, 0, 1)], parts)
    >>> b = entity_role_vectors(["b", "c"], v[:2], [(1, 0, 0)], parts)  # roles swapped
    >>> cos = (a / np.linalg.norm(a, axis=1, keepdims=True)) @ (
    ...     b / np.linalg.norm(b, axis=1, keepdims=True)).T
    >>> round(float(cos[0, 0]), 3)  # "b": subject in one, object in the other
    0.342
    """
    if weight is None:
        weight = ROLE_CONTEXT_WEIGHT
    n, dim = len(entities), labels.shape[1]
    relations = _unit(parts.relations)
    for i, symbol in enumerate(parts.symbols):
        if symbol is not None:
            relations[i] = _symbol_vector(symbol, dim) if SYMBOL_CONTEXT else 0.0
    context = np.zeros((n, dim))
    symmetric = parts.symmetric if parts.symmetric is not None else np.zeros(len(parts), bool)
    for head, k, tail in edges:
        context[head] += relations[k]
        context[tail] += relations[k] if symmetric[k] else -relations[k]
    has_roles = np.linalg.norm(context, axis=1, keepdims=True) > 1e-9  # else no role part
    return np.hstack([_unit(labels), weight * _unit(context) * has_roles])
