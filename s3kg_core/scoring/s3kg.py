"""S3KG: compare two knowledge graphs (docs/scores.md, "S3KG").

Two entry points: :func:`s3kg_score` for one pair, and :class:`KGScorer`, which loads the encoder
once and scores many pairs, encoding every distinct triple sentence and label of the whole list
once, in large batches.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._version import SCORING_VERSION
from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple, TriplesLike, as_triples
from ..limits import MAX_TEXT_CHARS, OVERSIZED, kg_problem
from ..normalize import normalization_name, normalize_triple
from ..progress import Progress, StageProgress
from .align import Alignment, best_matches, soft_align
from .explain import Explanation, KeyedTriple, LabelMatch, Pick
from .ot_mode import OTComponents, ot_components
from .parts import PartVectors, symbol_id, unit_rows
from .result import (
    DEFAULT_ALPHA,
    DEFAULT_MODE,
    DEFAULT_TAU,
    TEXT_MODES,
    Mode,
    ScoreResult,
    check_alpha,
    check_mode,
    check_tau,
)
from .roles import read_relation, read_triple
from .signature import Signature
from .wl import kgx_graph, wl_kernel
from .wwl import Transport, WWLResult, wwl_similarity

__all__ = [
    "DEFAULT_ITERATIONS",
    "TEXT_WEIGHT",
    "KGScorer",
    "S3KGConfig",
    "ScorerStats",
    "s3kg_score",
]

_BLOCK_PAIRS = 50_000

TEXT_WEIGHT = 0.8
"""``text`` mode: the weight of the texts' cosine in S_SBERT, ``(1 - w) * cos(triples) + w *
cos(texts)``. Chosen on the dev pairs of the nine shared labelled sets, one value for all of
them (``bench/experiments/bench_evidence.py``, bench/README.md "Text-aware variants")."""

TextPair = tuple[str | None, str | None]

ROLE_MODES = ("ot",)
"""The modes that read every triple in its canonical direction and compare triples part by part
(:mod:`s3kg_core.scoring.roles`, :mod:`s3kg_core.scoring.parts`)."""

DEFAULT_ITERATIONS: dict[str, int] = {"wwl": 1}
"""K where a configuration leaves ``wl_iterations`` unset: 5 in every mode but these. One round
of contextualisation has the best BAMBOO dev mean in ``wwl`` mode (two rounds: about 1 point
less; bench/README.md, "BAMBOO")."""


@dataclass(frozen=True)
class S3KGConfig:
    """Options of an S3KG comparison.

    Parameters
    ----------
    mode
        ``paper``: normalised labels, directed edge-labelled WL with K refinement rounds, alpha
        weighting the embedding side. ``kgx``: the authors' released implementation (lowercased
        labels, undirected relation-blind grakel WL with ``n_iter=K``, alpha weighting WL).
        ``hybrid``: as ``paper``, but S_WL is the mean of the relation-aware directed kernel and
        the relation-agnostic undirected one (``wl`` variant ``struct``) on the same aligned
        graphs, so a wrong relation or a flipped edge costs half as much as a wrong entity.
        ``wwl``: Wasserstein Weisfeiler-Lehman (:mod:`s3kg_core.scoring.wwl`): node vectors from
        the encoder, contextualised by K rounds over the directed, relation-labelled edges,
        compared by optimal transport over the whole of both graphs (n:m, symmetric: no T2^,
        no tau); S_WL is the structural transport's similarity, S_SBERT the labels' alone.
        ``ot``: triples and labels matched by optimal transport (:mod:`s3kg_core.scoring.ot_mode`):
        S_WL weighs the transport of the triples' sentences (T1 onto the whole of T2, n:m),
        the mean best-match cosine of T1's triples in T2, and ``hybrid``'s WL kernel over T1
        and T2^; S_SBERT is the transport of the two KGs' entity labels.
        ``text``: as ``hybrid``, with the texts of the pair as well (pass them to
        :meth:`KGScorer.score_pairs`): S_SBERT is ``(1 - TEXT_WEIGHT)`` times the triples'
        cosine plus ``TEXT_WEIGHT`` times the texts' cosine, and a pair with an empty KG scores
        the texts' cosine (both components) instead of 0.
    alpha
        Blend weight in [0, 1] (see :func:`s3kg_core.scoring.result.blend` for its side in each
        mode).
    tau
        Soft alignment threshold in [0, 1].
    wl_iterations
        K (>= 1); ``None`` (the default) is the mode's own: 5 rounds of the WL kernel, 1 round
        of contextualisation in ``wwl`` mode (:data:`DEFAULT_ITERATIONS`).
    align
        ``False`` gives the pure WL-kernel baseline: no triple selection, no soft alignment.
    lemmatize
        Lemmatise labels in ``paper`` mode (``kgx`` only lowercases, like the reference).

    Examples
    --------
    >>> S3KGConfig().signature("minilm@0.1.0")  # doctest: +ELLIPSIS
    'mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:...'
    """

    mode: Mode = DEFAULT_MODE
    alpha: float = DEFAULT_ALPHA
    tau: float = DEFAULT_TAU
    wl_iterations: int | None = None
    align: bool = True
    lemmatize: bool = True

    def __post_init__(self) -> None:
        check_mode(self.mode)
        check_alpha(self.alpha)
        check_tau(self.tau)
        k = self.wl_iterations
        if k is not None and (not isinstance(k, int) or not 1 <= k <= 50):
            raise ConfigError(f"wl_iterations must be an integer in [1, 50]; got {k!r}")
        if self.mode in ("wwl", "ot") and not self.align:
            raise ConfigError(
                f"mode {self.mode} aligns by optimal transport; it has no align=False"
            )

    @property
    def iterations(self) -> int:
        """K: ``wl_iterations``, or the mode's default where it is ``None``.

        Examples
        --------
        >>> S3KGConfig().iterations, S3KGConfig(mode="wwl").iterations
        (5, 1)
        """
        if self.wl_iterations is not None:
            return self.wl_iterations
        return DEFAULT_ITERATIONS.get(self.mode, 5)

    @property
    def normalization(self) -> str:
        """Name of the label normalisation in signatures."""
        return "kgx-lower" if self.mode == "kgx" else normalization_name(self.lemmatize)

    def key(self, triple: Triple) -> Triple:
        """The graph labels this configuration gives a triple (docs/scores.md, S3KG step 1).

        ``kgx`` mode lowercases; the other modes normalise (lemmatised unless ``lemmatize`` is
        false), and ``ot`` mode reads the normalised triple in its canonical direction
        (:func:`s3kg_core.scoring.roles.read_triple`: a passive or an inverse relation turned
        round). A triple whose key has an empty part is dropped by those modes, not by ``kgx``.

        Examples
        --------
        >>> S3KGConfig().key(Triple("Cats", "chases", "mice"))
        Triple(head='cat', relation='chase', tail='mouse')
        >>> S3KGConfig(mode="kgx").key(Triple("Cats", "chases", "mice"))
        Triple(head='cats', relation='chases', tail='mice')
        >>> S3KGConfig().key(Triple("Penicillin", "was discovered by", "Fleming"))  # ot: roles
        Triple(head='fleming', relation='discover', tail='penicillin')
        """
        if self.mode == "kgx":
            return Triple(triple.head.lower(), triple.relation.lower(), triple.tail.lower())
        key = normalize_triple(triple, lemmatize=self.lemmatize)
        if self.mode in ROLE_MODES and key.head and key.relation and key.tail:
            return read_triple(key).triple
        return key

    def signature(self, encoder_name: str) -> str:
        """The component signature: everything that determines ``s_wl`` and ``s_sbert``."""
        return Signature(
            mode=self.mode,
            encoder=encoder_name,
            tau=float(self.tau),
            wl_iterations=self.iterations,
            align=self.align,
            normalization=self.normalization,
            version=SCORING_VERSION,
        ).format()


@dataclass
class ScorerStats:
    """Where a :class:`KGScorer`'s time went."""

    pairs: int = 0
    seconds_total: float = 0.0
    seconds_encoding: float = 0.0

    @property
    def seconds_other(self) -> float:
        """Time not spent inside the encoder."""
        return max(0.0, self.seconds_total - self.seconds_encoding)


@dataclass
class _Side:
    """One KG ready for scoring: graph labels, raw triple and embedded sentence per triple."""

    raw: list[Triple] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)


@dataclass
class _Pair:
    """One pair through a scoring pass: its sides, status, picks and result.

    When the pass explains (``keep``), the intermediate objects of the computation are kept
    here as well, and :meth:`KGScorer._explanation` turns them into an :class:`Explanation`.
    """

    one: _Side
    two: _Side
    status: str
    picks: list[int] = field(default_factory=list)
    result: ScoreResult | None = None
    # kept only by a pass that explains:
    chosen: list[int] = field(default_factory=list)
    cosines: list[float] = field(default_factory=list)
    exact: list[bool] = field(default_factory=list)
    entities: Alignment | None = None
    relations: Alignment | None = None
    wl_labels: tuple[dict[str, str], dict[str, str]] | None = None
    kernels: dict[str, float] = field(default_factory=dict)
    triples_cosine: float | None = None
    text_cosine: float | None = None
    transport: WWLResult | None = None
    ot: OTComponents | None = None


def _plan_alignment(
    labels_1: Sequence[str], labels_2: Sequence[str], res: WWLResult, tau: float
) -> Alignment:
    """The entity alignment a ``wwl`` transport makes.

    Each G1 node's partner is the G2 node it sends most of its mass to in the structural plan
    (ties: the lowest index); it counts as matched when their labels' cosine reaches tau, as in
    the other modes (or the labels are equal).
    """
    plan, cosine = res.structure.plan, res.labels.cosine
    ids_2 = {label: f"node_{j}" for j, label in enumerate(labels_2)}
    ids_1: dict[str, str] = {}
    matched: dict[str, str | None] = {}
    similarity: dict[str, float] = {}
    nearest: dict[str, str | None] = {}
    for i, label in enumerate(labels_1):
        j = int(np.argmax(plan[i]))
        similarity[label] = float(cosine[i, j])
        nearest[label] = labels_2[j]
        if label == labels_2[j] or cosine[i, j] >= tau:
            ids_1[label], matched[label] = ids_2[labels_2[j]], labels_2[j]
        else:
            ids_1[label], matched[label] = label, None
    return Alignment(ids_1, ids_2, matched, similarity, nearest)


def _plan_entries(
    one: Sequence[Triple], two: Sequence[Triple], res: Transport | None
) -> tuple[tuple[str, str, float], ...]:
    """An entity transport's plan as ``(G1 entity, G2 entity, mass)`` entries."""
    if res is None or res.plan.size == 0:  # none, or relaxed (too large to keep)
        return ()
    ents_1, ents_2 = _entities(one), _entities(two)
    plan = res.plan
    rows, cols = np.nonzero(plan > 1e-12)
    return tuple((ents_1[i], ents_2[j], float(plan[i, j])) for i, j in zip(rows, cols, strict=True))


def _entity_transport(pair: _Pair) -> Transport | None:
    """The entity plan an explanation shows: ``wwl``'s structural one, ``ot``'s labels'."""
    if pair.transport is not None:
        return pair.transport.structure
    if pair.ot is not None:
        return pair.ot.labels
    return None


def _entities(triples: Sequence[Triple]) -> list[str]:
    return list(dict.fromkeys(p for t in triples for p in (t.head, t.tail)))


def _relations(triples: Sequence[Triple]) -> list[str]:
    return list(dict.fromkeys(t.relation for t in triples))


def _label_matches(al: Alignment | None, labels: Sequence[str], exact: bool) -> list[LabelMatch]:
    if al is None:
        return []
    out = []
    for label in labels:
        cosine = al.similarity.get(label)
        out.append(
            LabelMatch(
                label,
                al.ids_1[label],
                al.matched[label],
                al.nearest.get(label),
                cosine,
                exact and label in al.ids_2,
            )
        )
    return out


class KGScorer:
    """Score many KG pairs with one encoder, each distinct string encoded once.

    Parameters
    ----------
    encoder
        ``"minilm"`` (default), ``"mpnet"``, a local model directory, or an :class:`Encoder`.
    config
        An :class:`S3KGConfig`; keyword ``overrides`` replace its fields.
    cache
        An :class:`EmbeddingCache` to share (for example one persisted on disk or in DuckDB).
    block_pairs
        Pairs per block: each block's strings are encoded together. Larger blocks batch better;
        the cache of a block's vectors is what bounds memory.

    Examples
    --------
    >>> scorer = KGScorer("minilm", alpha=0.5)
    >>> kg = [["Griese", "was_injured_in", "season"], ["Griese", "was_relieved_by", "Grossman"]]
    >>> same, swapped = scorer.score_pairs([
    ...     (kg, kg),
    ...     ([["Renzo", "won_against", "Thomas"]], [["Thomas", "won_against", "Renzo"]]),
    ... ])
    >>> round(same.score, 6), same.status
    (1.0, 'ok')
    >>> swapped.s_wl < 1.0  # the edge points the other way
    True
    """

    def __init__(
        self,
        encoder: str | Encoder = "minilm",
        config: S3KGConfig | None = None,
        *,
        cache: EmbeddingCache | None = None,
        block_pairs: int = _BLOCK_PAIRS,
        **overrides: Any,
    ) -> None:
        if block_pairs < 1:
            raise ConfigError(f"block_pairs must be >= 1; got {block_pairs}")
        self.block_pairs = block_pairs
        base = config or S3KGConfig()
        if overrides:
            fields = {**base.__dict__, **overrides}
            base = S3KGConfig(**fields)
        self.config = base
        self.encoder: Encoder = load_encoder(encoder) if isinstance(encoder, str) else encoder
        if cache is not None and cache.encoder.name != self.encoder.name:
            raise ConfigError(
                f"cache was built with encoder {cache.encoder.name}; "
                f"this scorer uses {self.encoder.name}"
            )
        self.cache = cache if cache is not None else EmbeddingCache(self.encoder)
        self.signature = self.config.signature(self.encoder.name)
        self.stats = ScorerStats()

    # -- preparation ---------------------------------------------------------------------------

    def _side(self, kg: TriplesLike) -> _Side:
        raw = as_triples(kg)
        key = self.config.key
        if self.config.mode == "kgx":  # every triple kept; the raw sentence embedded
            return _Side(list(raw), [key(t) for t in raw], [t.sentence() for t in raw])
        kept: dict[Triple, Triple] = {}  # key -> the first raw triple behind it
        for t in raw:
            k = key(t)
            if k.head and k.relation and k.tail:
                kept.setdefault(k, t)
        return _Side(list(kept.values()), list(kept), [t.sentence() for t in kept])

    def _prepare(self, t1: TriplesLike, t2: TriplesLike) -> _Pair:
        raw_1, raw_2 = as_triples(t1), as_triples(t2)
        for side, raw in ((1, raw_1), (2, raw_2)):
            if kg_problem(raw):  # too large to compare: nothing normalised or encoded
                return _Pair(_Side(), _Side(), f"{OVERSIZED}_kg_{side}")
        one, two = self._side(raw_1), self._side(raw_2)
        if not one.triples and not two.triples:
            status = "empty_kgs"
        elif not one.triples:
            status = "empty_kg_1"
        elif not two.triples:
            status = "empty_kg_2"
        else:
            status = "ok"
        return _Pair(one, two, status)

    # -- the two encoding phases -----------------------------------------------------------------

    def _pick(self, pair: _Pair, keep: bool) -> None:
        """T1's triples' distinct best matches in T2, in T1's order (docs/scores.md, step 2)."""
        if not self.config.align or self.config.mode == "wwl":
            pair.picks = list(range(len(pair.two.triples)))
            return
        m = self.cache.matrix
        idx, sim = best_matches(
            m[self.cache.rows(pair.one.sentences)], m[self.cache.rows(pair.two.sentences)]
        )
        if self.config.mode != "kgx":
            # A T1 triple that occurs verbatim in T2 picks it, whatever near-duplicates with
            # identical vectors say (MiniLM ignores accents: "josé" and "jose" embed alike).
            exact: dict[str, int] = {}
            for j, sentence in enumerate(pair.two.sentences):
                exact.setdefault(sentence, j)
            chosen = [exact.get(s, int(i)) for s, i in zip(pair.one.sentences, idx, strict=True)]
            if keep:
                pair.exact = [s in exact for s in pair.one.sentences]
        else:
            chosen = [int(i) for i in idx]
            if keep:
                pair.exact = [False] * len(chosen)
        pair.picks = list(dict.fromkeys(chosen))
        if keep:
            pair.chosen = chosen
            pair.cosines = [1.0 if e else float(c) for e, c in zip(pair.exact, sim, strict=True)]

    def _labels(self, pair: _Pair) -> list[str]:
        one = pair.one.triples
        two = [pair.two.triples[i] for i in pair.picks]
        labels = _entities(one) + _relations(one) + _entities(two) + _relations(two)
        if self.config.mode == "ot":  # the transports read all of T2's entities and relations
            labels += _entities(pair.two.triples) + _relations(pair.two.triples)
        return labels

    def _align(self, labels_1: list[str], labels_2: list[str], prefix: str) -> Alignment:
        if not self.config.align:
            same = {label: label for label in labels_1}
            return Alignment(
                ids_1=same,
                ids_2={label: label for label in labels_2},
                matched={label: (label if label in labels_2 else None) for label in labels_1},
                similarity={},
            )
        m = self.cache.matrix
        return soft_align(
            labels_1,
            labels_2,
            m[self.cache.rows(labels_1)],
            m[self.cache.rows(labels_2)],
            tau=self.config.tau,
            prefix=prefix,
            exact_first=self.config.mode != "kgx",
        )

    def _finish_wwl(self, pair: _Pair, keep: bool) -> ScoreResult:
        """``wwl`` mode: both transports over the whole of both graphs."""
        one, two = pair.one.triples, pair.two.triples
        m = self.cache.matrix
        sides = []
        for triples in (one, two):
            ents, rels = _entities(triples), _relations(triples)
            e_pos = {label: i for i, label in enumerate(ents)}
            r_pos = {label: i for i, label in enumerate(rels)}
            edges = [(e_pos[t.head], r_pos[t.relation], e_pos[t.tail]) for t in triples]
            sides.append((ents, rels, m[self.cache.rows(ents)], m[self.cache.rows(rels)], edges))
        (ents_1, rels_1, n1, r1, e1), (ents_2, rels_2, n2, r2, e2) = sides
        res = wwl_similarity(n1, r1, e1, n2, r2, e2, self.config.iterations)
        entities = _plan_alignment(ents_1, ents_2, res, self.config.tau)
        relations = self._align(rels_1, rels_2, "rel")
        if keep:
            pair.entities, pair.relations = entities, relations
            pair.kernels = {"wwl": res.structure.similarity, "labels": res.labels.similarity}
            pair.transport = res
        return ScoreResult(
            s_wl=res.structure.similarity,
            s_sbert=res.labels.similarity,
            alpha=self.config.alpha,
            mode=self.config.mode,
            status="ok",
            matched=tuple(two),
            entity_map=entities.matched,
            relation_map=relations.matched,
            signature=self.signature,
            n_triples_1=len(one),
            n_triples_2=len(two),
        )

    def _ot(self, pair: _Pair, kernel: float, keep: bool) -> tuple[float, float]:
        """``ot`` mode: S_WL and S_SBERT from the triple and label transports (and the kernel)."""
        m, rows = self.cache.matrix, self.cache.rows
        sides = [self._side_parts(side.triples) for side in (pair.one, pair.two)]
        comps = ot_components(
            m[rows(pair.one.sentences)],
            m[rows(pair.two.sentences)],
            sides[0][0],
            sides[1][0],
            kernel,
            parts=(sides[0][1], sides[1][1]),
            edges=(sides[0][2], sides[1][2]),
        )
        if keep:
            pair.ot = comps
            pair.kernels.update(
                {
                    "wl": kernel,
                    "triple_transport": comps.triples.similarity,
                    "best_match": comps.best_match,
                    "labels": comps.labels.similarity,
                }
            )
        return comps.s_wl, comps.s_sbert

    def _side_parts(
        self, triples: Sequence[Triple]
    ) -> tuple[np.ndarray, PartVectors, list[tuple[int, int, int]]]:
        """One KG's entity vectors, its triples' part vectors and its edges, for ``ot`` mode.

        The heads' and tails' vectors are rows of the entities' (each label looked up once).
        """
        entities = _entities(triples)
        pos = {label: i for i, label in enumerate(entities)}
        edges = [(pos[t.head], k, pos[t.tail]) for k, t in enumerate(triples)]
        vectors = unit_rows(self.cache.matrix[self.cache.rows(entities)])
        heads = np.fromiter((e[0] for e in edges), dtype=np.int64, count=len(edges))
        tails = np.fromiter((e[2] for e in edges), dtype=np.int64, count=len(edges))
        relations = [t.relation for t in triples]
        parts = PartVectors(
            heads=vectors[heads],
            relations=unit_rows(self.cache.matrix[self.cache.rows(relations)]),
            tails=vectors[tails],
            symmetric=np.array([read_relation(r).symmetric for r in relations], dtype=bool),
            symbols=tuple(symbol_id(r) for r in relations),
            unit=True,
        )
        return vectors, parts, edges

    def _finish(self, pair: _Pair, keep: bool) -> ScoreResult:
        cfg = self.config
        if cfg.mode == "wwl":
            return self._finish_wwl(pair, keep)
        one = pair.one.triples
        two = [pair.two.triples[i] for i in pair.picks]
        ents = self._align(_entities(one), _entities(two), "node")
        rels = self._align(_relations(one), _relations(two), "rel")
        if cfg.mode != "kgx":
            edges_1 = [(t.head, rels.ids_1[t.relation], t.tail) for t in one]
            edges_2 = [(t.head, rels.ids_2[t.relation], t.tail) for t in two]
            k = cfg.iterations
            s_wl = wl_kernel(edges_1, ents.ids_1, edges_2, ents.ids_2, k, variant="paper")
            if keep:
                pair.wl_labels = (ents.ids_1, ents.ids_2)
                pair.kernels = {"paper": s_wl}
            if cfg.mode in ("hybrid", "text", "ot"):
                s_struct = wl_kernel(edges_1, ents.ids_1, edges_2, ents.ids_2, k, variant="struct")
                if keep:
                    pair.kernels["struct"] = s_struct
                s_wl = 0.5 * (s_wl + s_struct)
        else:
            # The released code relabels nodes through one map merged as
            # {**entity_map, **relation_map}: a node whose label is also a relation label of its
            # graph takes the relation's id. Reproduced on purpose.
            merged_1 = {**ents.ids_1, **rels.ids_1}
            merged_2 = {**ents.ids_2, **rels.ids_2}
            labels_1 = {n: merged_1[n] for n in ents.ids_1}
            labels_2 = {n: merged_2[n] for n in ents.ids_2}
            s_wl = wl_kernel(
                kgx_graph((t.head, t.relation, t.tail) for t in one),
                labels_1,
                kgx_graph((t.head, t.relation, t.tail) for t in two),
                labels_2,
                cfg.iterations,
                variant="kgx",
            )
            if keep:
                pair.wl_labels = (labels_1, labels_2)
                pair.kernels = {"kgx": s_wl}
        if keep:
            pair.entities, pair.relations = ents, rels
        if cfg.mode != "ot" or keep:  # ot's S_SBERT is the label transport; explain() shows this
            s_sbert = self._pooled_cosine(pair)
            if keep:
                pair.triples_cosine = s_sbert
        if cfg.mode == "ot":
            s_wl, s_sbert = self._ot(pair, float(s_wl), keep)
        return ScoreResult(
            s_wl=float(s_wl),
            s_sbert=s_sbert,
            alpha=cfg.alpha,
            mode=cfg.mode,
            status="ok",
            matched=tuple(two),
            entity_map=ents.matched,
            relation_map=rels.matched,
            signature=self.signature,
            n_triples_1=len(one),
            n_triples_2=len(pair.two.triples),
        )

    def _pooled_cosine(self, pair: _Pair) -> float:
        """Cosine of T1's and T2^'s mean triple-sentence vectors (S3KG's S_SBERT)."""
        m = self.cache.matrix
        mean_1 = m[self.cache.rows(pair.one.sentences)].astype(np.float64).mean(axis=0)
        sent_2 = [pair.two.sentences[i] for i in pair.picks]
        mean_2 = m[self.cache.rows(sent_2)].astype(np.float64).mean(axis=0)
        denom = float(np.linalg.norm(mean_1) * np.linalg.norm(mean_2))
        return float(np.clip(mean_1 @ mean_2 / denom, 0.0, 1.0)) if denom > 0 else 0.0

    def _empty(self, pair: _Pair) -> ScoreResult:
        return ScoreResult(
            s_wl=0.0,
            s_sbert=0.0,
            alpha=self.config.alpha,
            mode=self.config.mode,
            status=pair.status,
            signature=self.signature,
            n_triples_1=len(pair.one.triples),
            n_triples_2=len(pair.two.triples),
        )

    def _explanation(self, pair: _Pair) -> Explanation:
        """The explanation of a pair a pass with ``keep`` went through (nothing recomputed)."""
        assert pair.result is not None  # set by _run for every pair
        exact = self.config.mode != "kgx"
        one, two = pair.one, pair.two
        ents, rels = pair.entities, pair.relations
        wl_1, wl_2 = pair.wl_labels if pair.wl_labels is not None else ({}, {})
        return Explanation(
            result=pair.result,
            tau=float(self.config.tau),
            triples_1=tuple(map(KeyedTriple, one.raw, one.triples, one.sentences)),
            triples_2=tuple(map(KeyedTriple, two.raw, two.triples, two.sentences)),
            picks=tuple(
                Pick(i, j, c, e)
                for i, (j, c, e) in enumerate(
                    zip(pair.chosen, pair.cosines, pair.exact, strict=True)
                )
            ),
            matched=tuple(pair.picks) if pair.status == "ok" else (),
            entities=tuple(_label_matches(ents, _entities(one.triples), exact)),
            relations=tuple(_label_matches(rels, _relations(one.triples), exact)),
            entity_ids_2=dict(ents.ids_2) if ents is not None else {},
            relation_ids_2=dict(rels.ids_2) if rels is not None else {},
            wl_labels_1=dict(wl_1),
            wl_labels_2=dict(wl_2),
            kernels=dict(pair.kernels),
            triples_cosine=pair.triples_cosine,
            text_cosine=pair.text_cosine,
            transport=_plan_entries(one.triples, two.triples, _entity_transport(pair)),
        )

    # -- public API --------------------------------------------------------------------------------

    def score(
        self, t1: TriplesLike, t2: TriplesLike, *, texts: TextPair | None = None
    ) -> ScoreResult:
        """Score one pair: T1 is the reference (it drives the matching), T2 the candidate.

        ``texts`` is ``(text of T1, text of T2)``, needed in ``text`` mode, ignored otherwise.
        """
        return self.score_pairs([(t1, t2)], texts=None if texts is None else [texts])[0]

    def explain(
        self, t1: TriplesLike, t2: TriplesLike, *, texts: TextPair | None = None
    ) -> Explanation:
        """Score one pair and say how: the :class:`Explanation` of :meth:`score`'s result.

        The explanation comes out of the same pass that computes the score, so its S_WL,
        S_SBERT and S3KG are :meth:`score`'s, bit for bit.

        Examples
        --------
        >>> scorer = KGScorer("minilm", mode="kgx")
        >>> ex = scorer.explain([["A", "r", "B"], ["A", "r", "B"], ["A", "", "C"]],
        ...                     [["a", "r", "b"]])
        >>> [t.key.to_list() for t in ex.triples_1]  # kgx keeps duplicates and empty parts
        [['a', 'r', 'b'], ['a', 'r', 'b'], ['a', '', 'c']]
        >>> [(p.one, p.two) for p in ex.picks]
        [(0, 0), (1, 0), (2, 0)]
        """
        return self.explain_pairs([(t1, t2)], texts=None if texts is None else [texts])[0]

    def explain_pairs(
        self,
        pairs: Iterable[tuple[TriplesLike, TriplesLike]],
        *,
        texts: Iterable[TextPair] | None = None,
    ) -> list[Explanation]:
        """:meth:`explain` for many pairs, each distinct string encoded once.

        It runs the pass of :meth:`score_pairs`, keeping what the computation made on the way.
        """
        return [self._explanation(p) for p in self._run(pairs, texts, None, keep=True)]

    def strings_needed(
        self,
        pairs: Iterable[tuple[TriplesLike, TriplesLike]],
        *,
        texts: Iterable[TextPair] | None = None,
    ) -> set[str]:
        """Every string :meth:`score_pairs` may embed for these pairs, in this scorer's mode.

        The sentences of both sides, the labels of T1 and of T2 (the scorer embeds the labels
        of the triples of T2 it picks, which only the sentences' vectors decide, so all of T2's
        are listed), and in ``text`` mode the texts. Nothing of a pair with an empty side except
        its texts. An :class:`EmbeddingCache` that holds these scores the pairs without
        encoding anything: a page can fill one from stored vectors.

        Examples
        --------
        >>> scorer = KGScorer("minilm", mode="paper")
        >>> sorted(scorer.strings_needed([([["Cats", "chase", "mice"]], [["cat", "eat", "fish"]])]))
        ['cat', 'cat chase mouse', 'cat eat fish', 'chase', 'eat', 'fish', 'mouse']
        >>> kgx = KGScorer("minilm", mode="kgx")  # raw sentences, lowercased labels
        >>> sorted(kgx.strings_needed([([["Cats", "chase", "mice"]], [["cat", "eat", "fish"]])]))
        ['Cats chase mice', 'cat', 'cat eat fish', 'cats', 'chase', 'eat', 'fish', 'mice']
        """
        prepared = [self._prepare(t1, t2) for t1, t2 in pairs]
        out: set[str] = set()
        for p in prepared:
            if p.status != "ok":
                continue
            if self.config.mode != "wwl":  # wwl embeds labels only
                out.update(p.one.sentences)
                out.update(p.two.sentences)
            if self.config.align:
                for side in (p.one, p.two):
                    out.update(_entities(side.triples))
                    out.update(_relations(side.triples))
        if self.needs_texts and texts is not None:
            out.update(t for pair in texts for t in pair if t)
        return out

    @property
    def needs_texts(self) -> bool:
        """Whether this scorer's mode uses the texts of each pair (``text`` mode)."""
        return self.config.mode in TEXT_MODES

    def _with_texts(self, prepared: Sequence[_Pair], texts: Sequence[TextPair]) -> None:
        """``text`` mode: mix the texts' cosine into S_SBERT; an empty KG scores the cosine."""
        # The encoder reads a text's first few hundred tokens: a longer text is cut before it is
        # tokenized whole (MAX_TEXT_CHARS characters are thousands of tokens).
        texts = [(a[:MAX_TEXT_CHARS] if a else a, b[:MAX_TEXT_CHARS] if b else b) for a, b in texts]
        live = {t for pair in texts for t in pair if t}
        self.cache.add(live)
        m = self.cache.matrix
        for pair, (a, b) in zip(prepared, texts, strict=True):
            res = pair.result
            assert res is not None  # every pair is scored before this
            cos = 0.0
            if a and b:
                va = m[self.cache.rows([a])[0]].astype(np.float64)
                vb = m[self.cache.rows([b])[0]].astype(np.float64)
                denom = float(np.linalg.norm(va) * np.linalg.norm(vb))
                cos = float(np.clip(va @ vb / denom, 0.0, 1.0)) if denom > 0 else 0.0
            pair.text_cosine = cos
            if res.ok:
                s_sbert = (1.0 - TEXT_WEIGHT) * res.s_sbert + TEXT_WEIGHT * cos
                pair.result = dataclasses.replace(res, s_sbert=s_sbert)
            else:
                pair.result = dataclasses.replace(res, s_wl=cos, s_sbert=cos)

    def score_pairs(
        self,
        pairs: Iterable[tuple[TriplesLike, TriplesLike]],
        *,
        texts: Iterable[TextPair] | None = None,
        progress: StageProgress | None = None,
    ) -> list[ScoreResult]:
        """Score a list of ``(t1, t2)`` pairs.

        The distinct triple sentences of all pairs (up to ``block_pairs`` at a time) are encoded
        in one job, then the distinct labels of T1 and of the matched triples T2^ in another;
        strings already in the cache are never encoded again.

        Parameters
        ----------
        pairs
            ``(T1, T2)`` pairs of :class:`KnowledgeGraph` or lists of ``[h, r, t]``.
        texts
            ``(text of T1, text of T2)`` per pair, in the order of ``pairs``: required in
            ``text`` mode (``None`` or ``""`` counts as a cosine of 0), ignored in the others.
        progress
            Called as ``progress(stage, done, total)`` with stage ``"triples"`` or ``"labels"``
            (strings encoded) and ``"pairs"`` (pairs scored).

        Raises
        ------
        TripleError
            If a triple is not three strings (parse untrusted cells before, as the CLI does).
        ConfigError
            In ``text`` mode, if ``texts`` is missing or not one per pair.
        """
        results: list[ScoreResult] = []
        for p in self._run(pairs, texts, progress, keep=False):
            assert p.result is not None  # _run scores every pair
            results.append(p.result)
        return results

    def _run(
        self,
        pairs: Iterable[tuple[TriplesLike, TriplesLike]],
        texts: Iterable[TextPair] | None,
        progress: StageProgress | None,
        *,
        keep: bool,
    ) -> list[_Pair]:
        """The scoring pass of :meth:`score_pairs` and :meth:`explain_pairs`.

        Every pair comes back with its result set and, with ``keep``, what the computation made
        on the way (for :meth:`_explanation`).
        """
        start = time.perf_counter()
        enc_before = self.cache.stats.seconds
        prepared = [self._prepare(t1, t2) for t1, t2 in pairs]
        text_pairs: list[TextPair] | None = None
        if self.needs_texts:
            text_pairs = [] if texts is None else [(a, b) for a, b in texts]
            if texts is None or len(text_pairs) != len(prepared):
                raise ConfigError(
                    f"mode {self.config.mode} needs the two texts of every pair: got "
                    + ("none" if texts is None else f"{len(text_pairs)} for {len(prepared)} pairs")
                )

        def report(stage: str) -> Progress | None:
            if progress is None:
                return None
            return lambda done, total: progress(stage, done, total)

        done = 0
        for lo in range(0, len(prepared), self.block_pairs):
            block = prepared[lo : lo + self.block_pairs]
            live = [p for p in block if p.status == "ok"]
            if self.config.mode != "wwl":  # wwl embeds labels only
                self.cache.add(
                    (s for p in live for s in (*p.one.sentences, *p.two.sentences)),
                    report("triples"),
                )
            for p in live:
                self._pick(p, keep)
            if self.config.align:
                self.cache.add((lb for p in live for lb in self._labels(p)), report("labels"))
            for p in block:
                p.result = self._finish(p, keep) if p.status == "ok" else self._empty(p)
                done += 1
                if progress is not None and (done % 256 == 0 or done == len(prepared)):
                    progress("pairs", done, len(prepared))
        if text_pairs is not None:
            self._with_texts(prepared, text_pairs)
        self.stats.pairs += len(prepared)
        self.stats.seconds_total += time.perf_counter() - start
        self.stats.seconds_encoding += self.cache.stats.seconds - enc_before
        return prepared


def s3kg_score(
    t1: TriplesLike,
    t2: TriplesLike,
    *,
    encoder: str | Encoder = "minilm",
    mode: Mode = DEFAULT_MODE,
    alpha: float = DEFAULT_ALPHA,
    tau: float = DEFAULT_TAU,
    wl_iterations: int | None = None,
    align: bool = True,
    texts: TextPair | None = None,
) -> ScoreResult:
    """Compare a reference KG ``t1`` with a candidate KG ``t2`` (one pair).

    For many pairs use :class:`KGScorer`, which encodes each distinct string only once.

    Parameters
    ----------
    t1, t2
        Lists of ``[head, relation, tail]`` or :class:`KnowledgeGraph`. T1 drives the matching:
        extra triples in T2 cost nothing.
    encoder, mode, alpha, tau, wl_iterations, align
        See :class:`S3KGConfig`.
    texts
        ``(text of t1, text of t2)``: needed in ``text`` mode, ignored otherwise.

    Returns
    -------
    ScoreResult
        ``s_wl``, ``s_sbert``, ``score`` and everything needed to re-blend or explain it.

    Examples
    --------
    >>> a = [["Renzo_Furlan", "won_against", "Thomas_Johansson"],
    ...      ["Renzo_Furlan", "won_in", "finals"]]
    >>> b = [["Thomas_Johansson", "won_against", "Renzo_Furlan"],
    ...      ["Thomas_Johansson", "won_in", "finals"]]
    >>> r = s3kg_score(a, b)  # the roles swapped: the triples and the entities' roles see it
    >>> r.status, r.s_wl < 0.7, r.s_sbert < 0.7, r.score < 0.5  # the paper's worked example
    ('ok', True, True, True)
    >>> inverse = [["Thomas_Johansson", "lost_to", "Renzo_Furlan"],
    ...            ["Renzo_Furlan", "won_in", "finals"]]
    >>> s3kg_score(a, inverse).score > 0.9  # "lost to", turned round, reads as "defeat"
    True
    >>> s3kg_score([], b).status, s3kg_score([], b).score
    ('empty_kg_1', 0.0)
    >>> texts = ("Renzo Furlan beat Thomas Johansson in the final.",
    ...          "Thomas Johansson beat Renzo Furlan in the final.")
    >>> r = s3kg_score(a, b, mode="text", texts=texts)
    >>> r.status, r.s_wl < 0.5 < r.s_sbert
    ('ok', True)
    >>> s3kg_score([], b, mode="text", texts=texts).score > 0.5  # an empty KG: the texts' cosine
    True
    """
    scorer = KGScorer(
        encoder,
        S3KGConfig(mode=mode, alpha=alpha, tau=tau, wl_iterations=wl_iterations, align=align),
    )
    return scorer.score(t1, t2, texts=texts)
