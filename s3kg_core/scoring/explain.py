"""What an S3KG comparison did, step by step: :class:`Explanation`.

:meth:`KGScorer.explain <s3kg_core.scoring.s3kg.KGScorer.explain>` returns one. It is not a
second computation beside the score: the scorer fills it from the very objects its scoring pass
made (the keyed triples, the picks, the alignments, the WL labels), in the same pass that gives
:meth:`~s3kg_core.scoring.s3kg.KGScorer.score` its result, so the numbers it explains are that
result's, bit for bit (:attr:`Explanation.result`).

The steps, as docs/scores.md ("S3KG") numbers them:

1. :attr:`~Explanation.triples_1`, :attr:`~Explanation.triples_2`: every triple the scorer keeps,
   raw and as it keys it, with the sentence it embeds, in its order (``kgx`` mode keeps
   duplicates and triples with an empty part, lowercased; the other modes normalise and drop
   them).
2. :attr:`~Explanation.picks`: each T1 triple's best match in T2 and its cosine; a sentence that
   occurs verbatim in T2 picks its twin (``exact``), except in ``kgx`` mode.
   :attr:`~Explanation.matched` is T2^, the distinct picks in order.
3. - 4. :attr:`~Explanation.entities`, :attr:`~Explanation.relations`: every label of G1 with
   its canonical id, its nearest G2 label and cosine, and the partner it took at tau.
5. :attr:`~Explanation.wl_labels_1`, :attr:`~Explanation.wl_labels_2`: the WL iteration-0
   label of every node; :attr:`~Explanation.kernels` the kernel value of each WL variant S_WL
   is made of.
6. - 7. S_SBERT (the triples' cosine and, in ``text`` mode, the texts' cosine), S_WL and the
   blend (:meth:`Explanation.blend`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ..kg import Triple
from .result import ScoreResult

__all__ = ["Explanation", "KeyedTriple", "LabelMatch", "Pick"]


@dataclass(frozen=True)
class KeyedTriple:
    """One triple as the scorer keeps it.

    Attributes
    ----------
    raw
        As given (the first one, where several normalise alike).
    key
        The graph labels the scorer uses (normalised, or lowercased in ``kgx`` mode).
    sentence
        The text it embeds for the triple.
    """

    raw: Triple
    key: Triple
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"raw": self.raw.to_list(), "key": self.key.to_list(), "sentence": self.sentence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KeyedTriple:
        """Inverse of :meth:`to_dict`."""
        return cls(Triple.from_any(data["raw"]), Triple.from_any(data["key"]), data["sentence"])


@dataclass(frozen=True)
class Pick:
    """The best match in T2 of one T1 triple (docs/scores.md, S3KG step 2).

    Attributes
    ----------
    one, two
        Indices into :attr:`Explanation.triples_1` and :attr:`Explanation.triples_2`.
    cosine
        Cosine of the two sentences (1.0 for an exact pick).
    exact
        Picked because its sentence occurs verbatim in T2 (not in ``kgx`` mode).
    """

    one: int
    two: int
    cosine: float
    exact: bool = False

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"one": self.one, "two": self.two, "cosine": self.cosine, "exact": self.exact}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Pick:
        """Inverse of :meth:`to_dict`."""
        return cls(int(data["one"]), int(data["two"]), float(data["cosine"]), bool(data["exact"]))


@dataclass(frozen=True)
class LabelMatch:
    """How one label of G1 was aligned to the labels of G2 (docs/scores.md, S3KG step 4).

    Attributes
    ----------
    label
        The label (keyed as in :attr:`KeyedTriple.key`).
    id
        The canonical id it took: a G2 label's ``node_j`` / ``rel_j``, or its own text.
    partner
        The G2 label it was aligned to at tau, or ``None``.
    nearest
        The G2 label of its best cosine, aligned or not (``None``: G2 has no label, or the
        comparison ran without alignment).
    cosine
        That best cosine (``None`` where nothing was compared).
    exact
        Aligned because the same label occurs in G2 (not in ``kgx`` mode).
    """

    label: str
    id: str
    partner: str | None
    nearest: str | None = None
    cosine: float | None = None
    exact: bool = False

    @property
    def aligned(self) -> bool:
        """Whether the label took a G2 label's id."""
        return self.partner is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "label": self.label,
            "id": self.id,
            "partner": self.partner,
            "nearest": self.nearest,
            "cosine": self.cosine,
            "exact": self.exact,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LabelMatch:
        """Inverse of :meth:`to_dict`."""
        cosine = data.get("cosine")
        return cls(
            str(data["label"]),
            str(data["id"]),
            data.get("partner"),
            data.get("nearest"),
            None if cosine is None else float(cosine),
            bool(data.get("exact", False)),
        )


@dataclass(frozen=True)
class Explanation:
    """One S3KG comparison, step by step, as the scorer computed it.

    Attributes
    ----------
    result
        The :class:`ScoreResult` of the comparison: the same object's values that
        :meth:`~s3kg_core.scoring.s3kg.KGScorer.score` returns for the pair.
    tau
        The alignment threshold used.
    triples_1, triples_2
        T1 and T2 as the scorer keeps them (:class:`KeyedTriple`), in its order.
    picks
        One :class:`Pick` per T1 triple, in order (empty when the pair was not scored or
        the comparison ran without alignment).
    matched
        T2^: indices into ``triples_2`` of the distinct picks, in order of first pick.
    entities, relations
        One :class:`LabelMatch` per entity and relation label of G1, in order of appearance.
    entity_ids_2, relation_ids_2
        The canonical id of every entity and relation label of G2 (built from T2^).
    wl_labels_1, wl_labels_2
        The WL iteration-0 label of every node of G1 and G2: two nodes are one to the kernel
        when these are equal.
    kernels
        Each part of S_WL (and S_SBERT) by name: ``paper`` (paper mode), ``paper`` and ``struct``
        (hybrid and text: S_WL is their mean), ``kgx``; ``ot`` adds ``wl`` (that mean),
        ``triple_transport`` and ``best_match`` (S_WL is their weighted sum) and ``labels`` (its
        S_SBERT); ``wwl`` has ``wwl`` (S_WL) and ``labels`` (S_SBERT).
    triples_cosine
        The triples' part of S_SBERT: ``max(0, cos(mean T1, mean T2^))`` (``None``: not scored;
        in ``ot`` mode kept beside S_SBERT, not part of it).
    text_cosine
        ``text`` mode: the cosine of the two texts (``None`` in the other modes).
    transport
        ``wwl`` mode: the structural transport plan; ``ot`` mode: the entity labels' plan.
        ``(G1 entity, G2 entity, mass)`` for every pair of nodes that exchanges mass (each G1
        node holds ``1 / n1``); the alignment is this plan: a node may send its mass to several
        nodes (empty in the other modes).

    Examples
    --------
    >>> from s3kg_core.scoring.s3kg import KGScorer
    >>> scorer = KGScorer("minilm", mode="paper", tau=0.65)
    >>> ex = scorer.explain([["Marie Curie", "discovered", "radium"]],
    ...                     [["Curie", "discovered", "radium"], ["radium", "is", "metal"]])
    >>> [(p.one, p.two, p.cosine > 0.9) for p in ex.picks], ex.matched
    ([(0, 0, True)], (0,))
    >>> [(e.label, e.partner) for e in ex.entities]
    [('marie curie', 'curie'), ('radium', 'radium')]
    >>> ex.wl_labels_1 == {"marie curie": "node_0", "radium": "node_1"}
    True
    >>> ex.s_wl == scorer.score(*[[["Marie Curie", "discovered", "radium"]],
    ...     [["Curie", "discovered", "radium"], ["radium", "is", "metal"]]]).s_wl
    True
    >>> round(ex.blend(0.0), 6) == round(ex.s_wl, 6), ex.status
    (True, 'ok')
    """

    result: ScoreResult
    tau: float
    triples_1: tuple[KeyedTriple, ...] = ()
    triples_2: tuple[KeyedTriple, ...] = ()
    picks: tuple[Pick, ...] = ()
    matched: tuple[int, ...] = ()
    entities: tuple[LabelMatch, ...] = ()
    relations: tuple[LabelMatch, ...] = ()
    entity_ids_2: dict[str, str] = field(default_factory=dict)
    relation_ids_2: dict[str, str] = field(default_factory=dict)
    wl_labels_1: dict[str, str] = field(default_factory=dict)
    wl_labels_2: dict[str, str] = field(default_factory=dict)
    kernels: dict[str, float] = field(default_factory=dict)
    triples_cosine: float | None = None
    text_cosine: float | None = None
    transport: tuple[tuple[str, str, float], ...] = ()

    # -- the numbers -------------------------------------------------------------------------

    @property
    def status(self) -> str:
        """``"ok"`` or why the pair could not be compared (see :class:`ScoreResult`)."""
        return self.result.status

    @property
    def ok(self) -> bool:
        """Whether the pair was scored (both sides non-empty)."""
        return self.result.ok

    @property
    def s_wl(self) -> float:
        """S_WL (docs/scores.md, S3KG step 5)."""
        return self.result.s_wl

    @property
    def s_sbert(self) -> float:
        """S_SBERT (docs/scores.md, S3KG step 6; ``text`` mode mixes in :attr:`text_cosine`)."""
        return self.result.s_sbert

    @property
    def alpha(self) -> float:
        """The scorer's alpha."""
        return self.result.alpha

    @property
    def mode(self) -> str:
        """The scoring mode."""
        return self.result.mode

    @property
    def signature(self) -> str:
        """The component signature."""
        return self.result.signature

    @property
    def score(self) -> float:
        """S3KG at the scorer's alpha (docs/scores.md, S3KG step 7)."""
        return self.result.score

    def blend(self, alpha: float) -> float:
        """S3KG at another alpha, from the same components."""
        return self.result.blend(alpha)

    # -- looking things up ---------------------------------------------------------------------

    @property
    def entity_map(self) -> dict[str, str | None]:
        """G1 entity label -> its partner in G2 or ``None`` (as the result stores it)."""
        return self.result.entity_map

    @property
    def relation_map(self) -> dict[str, str | None]:
        """G1 relation label -> its partner in G2 or ``None`` (as the result stores it)."""
        return self.result.relation_map

    @cached_property
    def _by_label(self) -> tuple[dict[str, LabelMatch], dict[str, LabelMatch]]:
        return {m.label: m for m in self.entities}, {m.label: m for m in self.relations}

    def entity(self, label: str) -> LabelMatch | None:
        """The alignment of a G1 entity label (``None``: not a label of G1)."""
        return self._by_label[0].get(label)

    def relation(self, label: str) -> LabelMatch | None:
        """The alignment of a G1 relation label (``None``: not a label of G1)."""
        return self._by_label[1].get(label)

    def pick_of(self, one: int) -> Pick | None:
        """The pick of T1 triple ``one`` (``None``: it has none)."""
        return self.picks[one] if 0 <= one < len(self.picks) else None

    # -- serialising ------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (a cosine of ``-inf``, no G2 label at all, becomes ``None``)."""
        return {
            "result": self.result.to_dict(),
            "tau": self.tau,
            "triples_1": [t.to_dict() for t in self.triples_1],
            "triples_2": [t.to_dict() for t in self.triples_2],
            "picks": [p.to_dict() for p in self.picks],
            "matched": list(self.matched),
            "entities": [_finite(m.to_dict()) for m in self.entities],
            "relations": [_finite(m.to_dict()) for m in self.relations],
            "entity_ids_2": dict(self.entity_ids_2),
            "relation_ids_2": dict(self.relation_ids_2),
            "wl_labels_1": dict(self.wl_labels_1),
            "wl_labels_2": dict(self.wl_labels_2),
            "kernels": dict(self.kernels),
            "triples_cosine": self.triples_cosine,
            "text_cosine": self.text_cosine,
            "transport": [list(t) for t in self.transport],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Explanation:
        """Inverse of :meth:`to_dict`."""

        def optional(value: Any) -> float | None:
            return None if value is None else float(value)

        return cls(
            result=ScoreResult.from_dict(data["result"]),
            tau=float(data["tau"]),
            triples_1=tuple(KeyedTriple.from_dict(t) for t in data.get("triples_1", ())),
            triples_2=tuple(KeyedTriple.from_dict(t) for t in data.get("triples_2", ())),
            picks=tuple(Pick.from_dict(p) for p in data.get("picks", ())),
            matched=tuple(int(i) for i in data.get("matched", ())),
            entities=tuple(LabelMatch.from_dict(m) for m in data.get("entities", ())),
            relations=tuple(LabelMatch.from_dict(m) for m in data.get("relations", ())),
            entity_ids_2=dict(data.get("entity_ids_2", {})),
            relation_ids_2=dict(data.get("relation_ids_2", {})),
            wl_labels_1=dict(data.get("wl_labels_1", {})),
            wl_labels_2=dict(data.get("wl_labels_2", {})),
            kernels={k: float(v) for k, v in data.get("kernels", {}).items()},
            triples_cosine=optional(data.get("triples_cosine")),
            text_cosine=optional(data.get("text_cosine")),
            transport=tuple((str(a), str(b), float(m)) for a, b, m in data.get("transport", ())),
        )


def _finite(data: dict[str, Any]) -> dict[str, Any]:
    cosine = data.get("cosine")
    if isinstance(cosine, float) and not math.isfinite(cosine):
        data["cosine"] = None
    return data
