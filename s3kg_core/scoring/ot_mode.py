"""The ``ot`` mode's components: triples and labels matched by optimal transport (docs/scores.md).

The ``ot`` mode keeps the two sides of S3KG and changes what each one reads:

- **S_WL, the relational side**: what is said about what. Three agreements of the two KGs'
  triples, weighted :data:`TRIPLE_TRANSPORT_WEIGHT`, :data:`BEST_MATCH_WEIGHT` and
  :data:`KERNEL_WEIGHT`:

  - the *triple transport*: every triple of either KG carries the same mass, embedded as its
    sentence ``"h r t"``; the earth mover's distance (cost one minus the cosine) moves T1's
    triples onto all of T2's, n:m, so a triple may be covered by several. Symmetric.
  - the *best match*: the mean, over T1's triples, of the cosine of each to its most similar T2
    triple. Unidirectional like S3KG's T2^ (docs/scores.md, step 2): a T2 triple that T1 does
    not need costs nothing, a T1 triple that T2 does not support costs its share.
  - the *WL kernel*: ``hybrid``'s S_WL (exact Weisfeiler-Lehman subtree counts over the soft
    aligned graphs of T1 and T2^), which sees a wrong entity or a reversed edge even where the
    sentences embed close.

  A role swap changes the triples' sentences and the kernel's subtrees; a reified relation or a
  synonym moves the sentences a little and the labels hardly at all.
- **S_SBERT, the conceptual side**: which entities occur, whatever connects them. The entity
  labels of both whole KGs carry equal mass and are matched by optimal transport (cost one minus
  the cosine of the label embeddings), so one entity may align to several; the plan is the
  alignment the Sample explorer draws.

The weights were chosen on BAMBOO dev and the nine labelled pair sets' dev splits together
(bench/README.md, "BAMBOO"); no test split was read to choose them.

References
----------
.. [1] J. Opitz, A. Daza, A. Frank, "Weisfeiler-Leman in the Bamboo: Novel AMR Graph Metrics
   and a Benchmark for AMR Graph Similarity", TACL 9 (2021) 1425-1441: n:m node alignment by
   optimal transport over label embeddings (WWLK).
.. [2] M. Kusner, Y. Sun, N. Kolkin, K. Weinberger, "From Word Embeddings To Document
   Distances", ICML 2015: the earth mover's distance over embedded units.
.. [3] T. Zhang, V. Kishore, F. Wu, K. Q. Weinberger, Y. Artzi, "BERTScore: Evaluating Text
   Generation with BERT", ICLR 2020: greedy best-match cosine (here over triples).
.. [4] R. Flamary et al., "POT: Python Optimal Transport", JMLR 22 (2021): the solver.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .parts import PartVectors, part_similarity, role_agreement, role_contexts
from .wwl import Transport

__all__ = [
    "BEST_MATCH_WEIGHT",
    "KERNEL_WEIGHT",
    "MAX_ASSIGNMENT",
    "MAX_EXACT",
    "ROLE_WEIGHT",
    "SPREAD",
    "TRIPLE_TRANSPORT_WEIGHT",
    "OTComponents",
    "best_match",
    "ot_components",
    "spread_transport",
]

Array = npt.NDArray[np.float64]

TRIPLE_TRANSPORT_WEIGHT = 0.4
"""Weight of the triple transport's similarity in the ``ot`` mode's S_WL."""

BEST_MATCH_WEIGHT = 0.4
"""Weight of the best-match mean in the ``ot`` mode's S_WL."""

KERNEL_WEIGHT = 0.2
"""Weight of the exact WL kernel (``hybrid``'s S_WL) in the ``ot`` mode's S_WL."""

ROLE_WEIGHT = 0.5
"""Weight of the part-wise comparison (:mod:`s3kg_core.scoring.parts`) in the similarity of two
triples; the rest is their sentences' cosine. Both transports of triples read this mix."""


SPREAD = 2.0
"""How much larger than T1 T2 may be before its extra content stops costing (see
:func:`spread_transport`): up to twice T1's size the transport is balanced (symmetric); past it,
each T1 unit spreads its mass over at least two T2 units and the rest of T2 costs nothing, so a
short answer is not scored against the whole of a long context (CUS's CtxSim)."""


MAX_EXACT = 1_500
"""Units (triples or entities) per side up to which the transport is solved exactly. The exact
solver's time grows with the cube of the size (1,500 x 1,500: about a second; 10,000 x 10,000:
minutes and gigabytes), so a larger KG is matched by the relaxed transport (Kusner et al. 2015):
every unit goes to its nearest partner, which gives a lower bound of the distance."""

MAX_ASSIGNMENT = 32
"""Copies of units up to which the transport is solved as an assignment problem (exact, and
several times faster than the network simplex for small KGs)."""

_CHUNK = 1_024


def _unit(x: Array) -> Array:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return np.asarray(x / np.maximum(norm, 1e-12), dtype=np.float64)


def spread_transport(x1: Array, x2: Array, spread: float = SPREAD) -> Transport:
    """Transport the rows of ``x1`` onto those of ``x2`` (cost 1 - cosine), T2 capped.

    Every row of ``x1`` carries ``1 / n1`` of the mass and all of it is moved. While
    ``n2 <= spread * n1`` the transport is balanced: every row of ``x2`` receives ``1 / n2``
    (the earth mover's distance, symmetric). Past that, a row of ``x2`` receives at most
    ``1 / (spread * n1)`` and may receive nothing: T1 is matched against the part of T2 that
    covers it best, each of its rows spread over at least ``spread`` partners. Solved exactly
    by POT with a zero-cost dummy source that absorbs T2's spare capacity.

    Examples
    --------
    >>> x1 = np.eye(3)[:1]
    >>> round(spread_transport(x1, np.eye(3)[:2]).distance, 6)  # balanced: half to a stranger
    0.5
    >>> far = np.vstack([np.eye(3)[:1], np.eye(3)[:1], np.eye(3)[1:2], np.eye(3)[2:3]])
    >>> round(spread_transport(x1, far).distance, 6)  # 4 > 2 x 1: its two matches take it all
    0.0
    """
    n1, n2 = len(x1), len(x2)
    if max(n1, n2) > MAX_EXACT:
        return _relaxed(x1, x2, balanced=n2 <= spread * n1)
    return _transport(np.asarray(_unit(x1) @ _unit(x2).T, dtype=np.float64), spread)


def _transport(cosine: Array, spread: float) -> Transport:
    """:func:`spread_transport` of an ``n1 x n2`` cosine matrix (both sides at most MAX_EXACT).

    With equal masses per unit the transport has a plan whose entries are multiples of one
    quantum, so a small one is an assignment problem over copies of the units, solved exactly
    by SciPy's ``linear_sum_assignment`` (Birkhoff-von Neumann); POT solves the others.
    """
    n1, n2 = cosine.shape
    cost = np.clip(1.0 - cosine, 0.0, 2.0)
    if n2 <= spread * n1:
        copies = math.lcm(n1, n2)
        if copies <= MAX_ASSIGNMENT:  # every unit split into copies of mass 1 / copies
            plan = _assigned(cost, copies // n1, copies // n2) / copies
        else:
            plan = _emd(np.full(n1, 1.0 / n1), np.full(n2, 1.0 / n2), cost)
    elif float(spread).is_integer() and spread * n1 <= MAX_ASSIGNMENT:
        # each T1 unit in `spread` copies, each T2 unit takes at most one copy
        plan = _assigned(cost, int(spread), 1) / (spread * n1)
    else:
        cap = 1.0 / (spread * n1)
        spare = n2 * cap - 1.0
        total = 1.0 + spare
        full = _emd(
            np.append(np.full(n1, 1.0 / n1), spare) / total,
            np.full(n2, cap) / total,
            np.vstack([cost, np.zeros((1, n2))]),
        )
        plan = full[:n1] * total
    return Transport(float(np.sum(plan * cost)), plan, cosine)


def _assigned(cost: Array, row_copies: int, col_copies: int) -> Array:
    """How many copies of each row the optimal assignment of the copies sends to each column."""
    from scipy.optimize import linear_sum_assignment

    n1, n2 = cost.shape
    rows = np.repeat(np.arange(n1), row_copies)
    cols = np.repeat(np.arange(n2), col_copies)
    r, c = linear_sum_assignment(cost[rows][:, cols])
    flat = np.bincount(rows[r] * n2 + cols[c], minlength=n1 * n2)
    return flat.reshape(n1, n2).astype(np.float64)


def _emd(a: Array, b: Array, cost: Array) -> Array:
    """POT's exact earth mover's plan; its dual potentials are not needed, so not centred."""
    # POT imports torch (seconds) when it is installed: imported here, so that importing
    # s3kg_core loads no torch.
    import ot

    plan = ot.emd(a, b, cost, center_dual=False, check_marginals=False)
    return np.asarray(plan, dtype=np.float64)


Edges = list[tuple[int, int, int]]
"""``(head entity, triple, tail entity)`` rows of one KG's triples."""

Similarity = Callable[[slice], Array]
"""``rows -> (len(rows), n2)`` block of an ``n1 x n2`` similarity matrix."""


def _cosine_blocks(x1: Array, x2: Array) -> tuple[int, int, Similarity]:
    u1, u2t = _unit(np.asarray(x1, dtype=np.float64)), _unit(np.asarray(x2, dtype=np.float64)).T
    return len(u1), u2t.shape[1], lambda rows: np.asarray(u1[rows] @ u2t, dtype=np.float64)


def _nearest(n1: int, n2: int, blocks: Similarity) -> tuple[Array, Array, npt.NDArray[np.int64]]:
    """Each row's best similarity and each column's, and each row's best column.

    A block of rows at a time: never the whole ``n1 x n2`` matrix at once.
    """
    row_best = np.empty(n1)
    col_best = np.full(n2, -1.0)
    row_arg = np.empty(n1, dtype=np.int64)
    for start in range(0, n1, _CHUNK):
        block = blocks(slice(start, start + _CHUNK))
        row_arg[start : start + len(block)] = block.argmax(axis=1)
        row_best[start : start + len(block)] = block.max(axis=1)
        np.maximum(col_best, block.max(axis=0), out=col_best)
    return row_best, col_best, row_arg


def _relaxed(x1: Array, x2: Array, *, balanced: bool) -> Transport:
    """:func:`_relaxed_blocks` of the cosines of the rows of ``x1`` and ``x2``."""
    row_best, col_best, _ = _nearest(*_cosine_blocks(x1, x2))
    return _relaxed_blocks(row_best, col_best, balanced=balanced)


def _relaxed_blocks(row_best: Array, col_best: Array, *, balanced: bool) -> Transport:
    """The relaxed transport of a large pair: each unit to its nearest partner.

    ``row_best`` and ``col_best`` are each unit's best similarity to a partner. Its distance is
    the larger of the two one-sided means of each unit's cost to its nearest
    partner when the transport would be balanced (the relaxed word mover's bound), T1's side
    alone when T2 is capped. Its ``plan`` and ``cosine`` are left empty (``n1 x n2`` numbers
    would take gigabytes at this size).
    """
    row_cost = float(np.clip(1.0 - row_best, 0.0, 2.0).mean())
    col_cost = float(np.clip(1.0 - col_best, 0.0, 2.0).mean())
    distance = max(row_cost, col_cost) if balanced else row_cost
    return Transport(distance, np.zeros((0, 0)), np.zeros((0, 0)))


def best_match(sentences_1: Array, sentences_2: Array) -> float:
    """Mean over the rows of ``sentences_1`` of the best cosine to a row of ``sentences_2``.

    Clipped to [0, 1].

    Examples
    --------
    >>> best_match(np.eye(2), np.array([[1.0, 0.0], [1.0, 0.0]]))
    0.5
    >>> best_match(np.eye(2), np.eye(3)[:, :2])  # T2's extra row costs nothing
    1.0
    """
    cosine = (
        _unit(np.asarray(sentences_1, dtype=np.float64))
        @ _unit(np.asarray(sentences_2, dtype=np.float64)).T
    )
    return _best_match(cosine)


def _best_match(cosine: Array) -> float:
    return float(min(1.0, max(0.0, float(cosine.max(axis=1).mean()))))


@dataclass(frozen=True)
class OTComponents:
    """Everything the ``ot`` mode computes for one pair.

    Attributes
    ----------
    triples
        The transport of T1's triple sentences onto T2's.
    best_match
        :func:`best_match` of T1's triple sentences against T2's.
    kernel
        The WL kernel similarity it was given.
    labels
        The transport of T1's entity labels onto T2's (its plan is the alignment).
    """

    triples: Transport
    best_match: float
    kernel: float
    labels: Transport

    @property
    def s_wl(self) -> float:
        """The relational side: the weighted mean of the three triple agreements."""
        value = (
            TRIPLE_TRANSPORT_WEIGHT * self.triples.similarity
            + BEST_MATCH_WEIGHT * self.best_match
            + KERNEL_WEIGHT * self.kernel
        )
        return float(min(1.0, max(0.0, value)))

    @property
    def s_sbert(self) -> float:
        """The conceptual side: the entity labels' transport similarity."""
        return self.labels.similarity


def ot_components(
    sentences_1: Array,
    sentences_2: Array,
    entities_1: Array,
    entities_2: Array,
    kernel: float,
    *,
    parts: tuple[PartVectors, PartVectors] | None = None,
    edges: tuple[Edges, Edges] | None = None,
) -> OTComponents:
    """The ``ot`` mode's components of one pair of non-empty KGs.

    Parameters
    ----------
    sentences_1, sentences_2
        Embeddings of each KG's triple sentences, one row a triple (T2 whole, not T2^).
    entities_1, entities_2
        Embeddings of each KG's entity labels, one row an entity.
    kernel
        The exact WL kernel's similarity of the pair, in [0, 1].
    parts
        The heads', relations' and tails' embeddings of T1's and T2's triples (read in their
        canonical direction): two triples' similarity is then ``1 - ROLE_WEIGHT`` times their
        sentences' cosine plus ``ROLE_WEIGHT`` times their part-wise similarity. ``None``: the
        sentences' cosine alone.
    edges
        With ``parts``: each triple's ``(head, tail)`` rows in ``entities_1`` and ``entities_2``.
        Each entity then has a role context (:func:`s3kg_core.scoring.parts.role_contexts`):
        T1's from all its triples, T2's from the T2 triples T1's triples match best (T2's
        extra triples cost nothing). The label transport's plan stays the labels' (who is
        aligned with whom), and each aligned pair's similarity is its labels' cosine times its
        :func:`~s3kg_core.scoring.parts.role_agreement`. ``None``: labels alone.

    Examples
    --------
    >>> v = np.eye(3)
    >>> same = ot_components(v, v, v, v, 1.0)
    >>> round(same.s_wl, 6), round(same.s_sbert, 6)
    (1.0, 1.0)
    >>> other = ot_components(v, v[::-1] * [1, 0.5, 1] + 0.3, v, v, 0.5)
    >>> other.s_wl < same.s_wl and other.s_sbert == same.s_sbert
    True
    """
    n1, n2, cosine_blocks = _cosine_blocks(sentences_1, sentences_2)

    def blocks(rows: slice) -> Array:
        sim = cosine_blocks(rows)
        if parts is None:
            return sim
        one, two = parts
        part = part_similarity(one.rows(rows), two)
        return np.asarray((1.0 - ROLE_WEIGHT) * sim + ROLE_WEIGHT * part, dtype=np.float64)

    if max(n1, n2) > MAX_EXACT:
        row_best, col_best, partners = _nearest(n1, n2, blocks)
        triples = _relaxed_blocks(row_best, col_best, balanced=n2 <= SPREAD * n1)
        matched = float(min(1.0, max(0.0, float(row_best.mean()))))
    else:  # one similarity matrix for both
        similarity = blocks(slice(0, n1))
        triples, matched = _transport(similarity, SPREAD), _best_match(similarity)
        partners = similarity.argmax(axis=1)
    roles = None
    if parts is not None and edges is not None:
        # T2's roles as T1 needs them: from the T2 triples T1's triples match best
        needed = sorted(set(partners.tolist()))
        roles = (
            role_contexts(len(entities_1), edges[0], parts[0]),
            role_contexts(len(entities_2), [edges[1][j] for j in needed], parts[1]),
        )
    return OTComponents(
        triples=triples,
        best_match=matched,
        kernel=float(kernel),
        labels=_label_transport(entities_1, entities_2, roles),
    )


def _label_transport(x1: Array, x2: Array, roles: tuple[Array, Array] | None) -> Transport:
    """The entity labels' transport; with roles, each aligned pair's value scaled by theirs.

    The plan is the labels' own. A pair too large for an exact plan (the relaxed transport)
    takes each entity's nearest partner by the role-scaled similarity.
    """
    if roles is None:
        return spread_transport(x1, x2)
    n1, n2 = len(x1), len(x2)
    if max(n1, n2) > MAX_EXACT:
        _, _, cosine_blocks = _cosine_blocks(x1, x2)
        ctx_1, ctx_2 = roles

        def blocks(rows: slice) -> Array:
            return cosine_blocks(rows) * role_agreement(ctx_1[rows], ctx_2)

        row_best, col_best, _ = _nearest(n1, n2, blocks)
        return _relaxed_blocks(row_best, col_best, balanced=n2 <= SPREAD * n1)
    labels = spread_transport(x1, x2)
    value = labels.cosine * role_agreement(*roles)
    distance = float(np.sum(labels.plan * np.clip(1.0 - value, 0.0, 2.0)))
    return Transport(distance, labels.plan, labels.cosine)
