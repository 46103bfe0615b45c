"""Triplet Analysis Unit (TAU): explain a low score triple by triple.

Every gold and answer triple is normalised (as in S3KG's paper mode) and read in its canonical
direction (:func:`s3kg_core.scoring.roles.read_triple`: ``(penicillin, discover by, alexander
fleming)`` is ``(alexander fleming, discover, penicillin)``, ``(irene, child of, marie)`` is
``(marie, parent of, irene)``). The canonical triples are compared; the result reports the
normalised triples as written. Each is embedded as the sentence ``"head relation tail"``. Pairs
with cosine >= ``triple_threshold`` (0.76) are aligned one-to-one, best first. The rest are
compared part by part, each part matching when equal or when its label embeddings have cosine
>= ``component_threshold`` (by default the same 0.76):

- relation mismatch: head and tail match, the relation differs;
- entity mismatch: the relation matches and one entity differs;
- roles swapped: the relation matches and the answer's head is the gold tail and its tail the
  gold head (``(caesar, kill, brutus)`` for ``(brutus, kill, caesar)``); for a symmetric
  relation (``border``, ``married to``, the bare copula ``be``) that is the same fact, and the
  pair is aligned; where one relation is the other and more words (``release during`` against
  ``release``: an agentless passive, whose direction its words do not say) nothing is claimed;
- a residual pair whose three parts all match is aligned too (``via="components"``);
- extra: an answer triple with no counterpart (a possible hallucination);
- missing: a gold triple the answer does not cover.

Residual pairs are also taken one-to-one, best sentence cosine first.

Memory grows with the KGs' sizes, not with their product: the gold-by-answer similarities are
computed a block of rows at a time (:data:`_BLOCK_CELLS` cells), and each gold triple keeps only
its best few candidates (:data:`_TOP`), recomputed on the rare occasion that all of them are
taken; the one-to-one choice is the same as sorting every pair (best first, ties by position).
A KG past the limits of :mod:`s3kg_core.limits` (more than 10,000 triples, a label over 1,000
characters) is not analysed: :attr:`TauResult.status` says why and the lists are empty.

Sentence embeddings barely see argument order or opposite verbs: "renzo win against thomas" and
"thomas win against renzo" have cosine 0.97 with MiniLM, "aspirin reduce fever" and "aspirin cause
fever" 0.90. So by default (``verify_components=True``) a sentence-aligned pair is also compared
part by part, and reported as a relation mismatch, an entity mismatch or roles swapped when
exactly that is what differs (its ``similarity`` then is >= 0.76). ``verify_components=False``
gives the literal reading: every sentence-aligned pair counts as aligned.
"""

from __future__ import annotations

import heapq
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple, TriplesLike, as_triples
from ..limits import OVERSIZED, kg_problem
from ..normalize import normalize_triples
from .roles import Reading, read_triple

__all__ = [
    "COMPONENT_THRESHOLD",
    "LOWEST_FRACTION",
    "TAU_CATEGORIES",
    "TRIPLE_THRESHOLD",
    "AlignedTriple",
    "Mismatch",
    "TauResult",
    "TripletAnalyzer",
    "lowest_fraction",
    "tau_analyse",
]

TRIPLE_THRESHOLD = 0.76
"""The sentence cosine at which TAU aligns two triples, by default (docs/scores.md, "TAU")."""

COMPONENT_THRESHOLD = 0.76
"""The label cosine at which two heads, relations or tails match, by default."""

LOWEST_FRACTION = 0.05
"""The lowest-scoring share of each run that TAU explains, by default."""

TAU_CATEGORIES = (
    "aligned",
    "relation_mismatch",
    "entity_mismatch",
    "roles_swapped",
    "extra",
    "missing",
)
"""TAU's categories, in the order shown: the pair categories, then ``extra`` and ``missing``
(single triples). Each names a :class:`TauResult` field and a key of :meth:`TauResult.counts`;
the store counts each in a column ``n_<category>`` of ``tau_results``."""

_BLOCK_CELLS = 1_000_000
"""Gold-by-answer similarities computed at once (a block of gold rows; 4 MB of float32)."""

_TOP = 512
"""Candidates first kept per gold triple (4 KB each): enough that a row is rarely recomputed
when the triples are all alike (chains of 8,000 triples: 40 recomputations against 670 with
32). A recomputed row keeps four times more, up to :data:`_TOP_MAX`."""

_TOP_MAX = 2048
"""The most candidates kept for one gold triple (16 KB; in practice few rows get there)."""

_SLACK = 1e-5
"""Component cosines this close below the threshold are checked one by one (float rounding)."""


@dataclass(frozen=True)
class AlignedTriple:
    """A gold triple and the answer triple that covers it.

    ``rule`` says how the two were read alike when their wording has head and tail in other
    places (:func:`~s3kg_core.scoring.roles.read_relation`'s rules: ``"passive"``,
    ``"inverse"``, ``"amr inverse"``, ``"have-of"``..., or ``"symmetric"`` for a symmetric
    relation read both ways); ``""`` when both read as written.
    """

    gold: Triple
    answer: Triple
    similarity: float
    via: Literal["sentence", "components"] = "sentence"
    rule: str = ""


@dataclass(frozen=True)
class Mismatch:
    """A gold triple and an answer triple that agree on all but one thing.

    ``kind`` is ``"relation"``, ``"entity"`` or ``"roles"``; ``parts`` names what differs
    (``"relation"``, ``"head"``, ``"tail"``, or ``"swapped"`` for roles swapped).
    """

    gold: Triple
    answer: Triple
    kind: Literal["relation", "entity", "roles"]
    parts: str
    similarity: float


@dataclass(frozen=True)
class TauResult:
    """The triple-by-triple explanation of one answer against its gold answer.

    Examples
    --------
    >>> r = TauResult(missing=(Triple("a", "r", "b"),))
    >>> r.counts()["missing"], TauResult.from_dict(r.to_dict()) == r
    (1, True)

    A result stored before roles swapped was a category of its own (an entity mismatch whose
    parts are ``"swapped"``) reads as roles swapped:

    >>> old = {"entity_mismatch": [{"gold": ["a", "r", "b"], "answer": ["b", "r", "a"],
    ...                             "kind": "entity", "parts": "swapped", "similarity": 0.9}]}
    >>> [(m.kind, m.parts) for m in TauResult.from_dict(old).roles_swapped]
    [('roles', 'swapped')]
    """

    aligned: tuple[AlignedTriple, ...] = ()
    relation_mismatch: tuple[Mismatch, ...] = ()
    entity_mismatch: tuple[Mismatch, ...] = ()
    roles_swapped: tuple[Mismatch, ...] = ()
    extra: tuple[Triple, ...] = ()
    missing: tuple[Triple, ...] = ()
    triple_threshold: float = TRIPLE_THRESHOLD
    component_threshold: float = COMPONENT_THRESHOLD
    encoder: str = ""
    status: str = "ok"

    def counts(self) -> dict[str, int]:
        """Number of triples (or pairs) in each of :data:`TAU_CATEGORIES`, in that order."""
        return {category: len(getattr(self, category)) for category in TAU_CATEGORIES}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (triples as lists)."""

        def mismatch(m: Mismatch) -> dict[str, Any]:
            return {
                "gold": m.gold.to_list(),
                "answer": m.answer.to_list(),
                "kind": m.kind,
                "parts": m.parts,
                "similarity": m.similarity,
            }

        def aligned(a: AlignedTriple) -> dict[str, Any]:
            out = {
                "gold": a.gold.to_list(),
                "answer": a.answer.to_list(),
                "similarity": a.similarity,
                "via": a.via,
            }
            if a.rule:
                out["rule"] = a.rule
            return out

        return {
            "aligned": [aligned(a) for a in self.aligned],
            "relation_mismatch": [mismatch(m) for m in self.relation_mismatch],
            "entity_mismatch": [mismatch(m) for m in self.entity_mismatch],
            "roles_swapped": [mismatch(m) for m in self.roles_swapped],
            "extra": [t.to_list() for t in self.extra],
            "missing": [t.to_list() for t in self.missing],
            "triple_threshold": self.triple_threshold,
            "component_threshold": self.component_threshold,
            "encoder": self.encoder,
            "status": self.status,
            "counts": self.counts(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TauResult:
        """Inverse of :meth:`to_dict`.

        A dict without ``roles_swapped`` (stored before it was a category) has its entity
        mismatches with parts ``"swapped"`` read as roles swapped.
        """

        def mismatch(d: Mapping[str, Any]) -> Mismatch:
            return Mismatch(
                Triple.from_any(d["gold"]),
                Triple.from_any(d["answer"]),
                d["kind"],
                d["parts"],
                float(d["similarity"]),
            )

        entity = [mismatch(m) for m in data.get("entity_mismatch", ())]
        swapped = tuple(
            Mismatch(m.gold, m.answer, "roles", m.parts, m.similarity)
            for m in entity
            if m.parts == "swapped"
        )
        return cls(
            aligned=tuple(
                AlignedTriple(
                    Triple.from_any(a["gold"]),
                    Triple.from_any(a["answer"]),
                    float(a["similarity"]),
                    a.get("via", "sentence"),
                    str(a.get("rule", "")),
                )
                for a in data.get("aligned", ())
            ),
            relation_mismatch=tuple(mismatch(m) for m in data.get("relation_mismatch", ())),
            entity_mismatch=tuple(m for m in entity if m.parts != "swapped"),
            roles_swapped=(*swapped, *(mismatch(m) for m in data.get("roles_swapped", ()))),
            extra=tuple(Triple.from_any(t) for t in data.get("extra", ())),
            missing=tuple(Triple.from_any(t) for t in data.get("missing", ())),
            triple_threshold=float(data.get("triple_threshold", TRIPLE_THRESHOLD)),
            component_threshold=float(data.get("component_threshold", COMPONENT_THRESHOLD)),
            encoder=str(data.get("encoder", "")),
            status=str(data.get("status", "ok")),
        )


def _top(keys: np.ndarray, k: int) -> np.ndarray:
    """Columns of the ``k`` smallest finite ``keys``, ordered by (key, column)."""
    finite = np.isfinite(keys)
    if np.count_nonzero(finite) > k:
        kth = np.partition(keys, k - 1)[k - 1]
        cols = np.flatnonzero(keys <= kth)  # ties at the k-th key all in, by column
    else:
        cols = np.flatnonzero(finite)
    order = np.lexsort((cols, keys[cols]))
    return cols[order[:k]].astype(np.int32)


def _greedy(
    n_rows: int,
    n_cols: int,
    keys: Callable[[np.ndarray], np.ndarray],
    accept: Callable[[int, int, float], bool],
) -> Iterator[tuple[int, int, float]]:
    """One-to-one pairs ``(row, col, sim)`` best first, in memory linear in rows and columns.

    ``keys(rows)`` gives the ``(len(rows), n_cols)`` block of ``-sim`` for the candidate pairs
    of those rows and ``inf`` for pairs that are no candidates. The pairs taken are those of a
    walk through every candidate pair sorted by ``(-sim, row, col)`` that takes a pair when its
    row and column are both free and ``accept(row, col, sim)`` agrees.

    Each row keeps its best :data:`_TOP` candidates, and a heap holds each row's best one not
    yet taken. When a row's kept candidates are all taken or refused, its block of rows is
    computed again, and that row and the block's other rows that have lost candidates keep
    four times as many from then on (up to :data:`_TOP_MAX`): one block product costs little
    more than one row's, and a crowded row is recomputed a few times, not once per pick.
    """
    if n_rows == 0 or n_cols == 0:
        return
    used_cols = np.zeros(n_cols, dtype=bool)
    done = np.zeros(n_rows, dtype=bool)
    refused: dict[int, set[int]] = {}
    kept: list[tuple[np.ndarray, np.ndarray, bool]] = [(np.empty(0, np.int32), np.empty(0), True)]
    kept *= n_rows  # per row: kept columns, their keys, and whether they are all it has
    position = [0] * n_rows
    capacity = [_TOP] * n_rows
    version = [0] * n_rows
    heap: list[tuple[float, int, int, int]] = []
    step = max(1, _BLOCK_CELLS // n_cols)

    def fill(rows: np.ndarray) -> None:
        """Keep each row's best candidates among the free columns, and push its first."""
        block = keys(rows)
        block[:, used_cols] = np.inf
        for k, row in enumerate(rows.tolist()):
            row_keys = block[k]
            if row in refused:
                row_keys[list(refused[row])] = np.inf
            cols = _top(row_keys, capacity[row])
            complete = int(np.count_nonzero(np.isfinite(row_keys))) <= capacity[row]
            kept[row] = cols, row_keys[cols], complete
            position[row] = 0
            version[row] += 1
            if cols.size:
                heapq.heappush(heap, (float(row_keys[cols[0]]), row, int(cols[0]), version[row]))

    for lo in range(0, n_rows, step):
        fill(np.arange(lo, min(lo + step, n_rows)))
    while heap:
        key, row, col, seen = heapq.heappop(heap)
        if seen != version[row]:
            continue  # the row was topped up since: its new first candidate is in the heap
        if not used_cols[col] and accept(row, col, -key):
            used_cols[col] = True
            done[row] = True
            yield row, col, -key
            continue
        if not used_cols[col]:
            refused.setdefault(row, set()).add(col)
        cols, vals, complete = kept[row]
        pos = position[row] + 1
        while pos < cols.size and used_cols[cols[pos]]:
            pos += 1
        position[row] = pos
        if pos < cols.size:
            heapq.heappush(heap, (float(vals[pos]), row, int(cols[pos]), seen))
        elif not complete:  # all kept ones gone: compute its block again
            lo = row // step * step
            block = np.arange(lo, min(lo + step, n_rows))
            worn = [
                r
                for r in block.tolist()
                if r == row or (not done[r] and not kept[r][2] and position[r] > 0)
            ]
            for r in worn:  # crowded rows: keep more of theirs from now on
                capacity[r] = min(capacity[r] * 4, _TOP_MAX)
            fill(np.array(worn))


class TripletAnalyzer:
    """Run TAU on many answers with one encoder and cache.

    Parameters
    ----------
    encoder
        ``"minilm"``, ``"mpnet"``, a local model directory, or an :class:`Encoder`.
    triple_threshold
        Sentence cosine for two triples to be aligned (0.76).
    component_threshold
        Label cosine for two heads, relations or tails to match (0.76). Single words are a hard
        case for sentence encoders: with MiniLM "france"/"germany" have cosine 0.75 and
        "discover"/"find" 0.61, so no threshold separates synonyms from substitutes; 0.76 errs
        on the side of reporting a mismatch, which the Annotate page lets people check.
    cache
        An :class:`EmbeddingCache` to share with a :class:`~s3kg_core.scoring.s3kg.KGScorer`.
    lemmatize
        Normalise labels with lemmas, as S3KG's paper mode does.
    verify_components
        Report a sentence-aligned pair as a relation or entity mismatch when its parts say so
        (see the module docstring).
    """

    def __init__(
        self,
        encoder: str | Encoder = "minilm",
        *,
        triple_threshold: float = TRIPLE_THRESHOLD,
        component_threshold: float = COMPONENT_THRESHOLD,
        cache: EmbeddingCache | None = None,
        lemmatize: bool = True,
        verify_components: bool = True,
    ) -> None:
        for name, value in (
            ("triple_threshold", triple_threshold),
            ("component_threshold", component_threshold),
        ):
            if not isinstance(value, numbers.Real) or not 0.0 <= float(value) <= 1.0:
                raise ConfigError(f"{name} must be a number in [0, 1]; got {value!r}")
        self.encoder: Encoder = load_encoder(encoder) if isinstance(encoder, str) else encoder
        self.cache = cache if cache is not None else EmbeddingCache(self.encoder)
        self.triple_threshold = float(triple_threshold)
        self.component_threshold = float(component_threshold)
        self.lemmatize = lemmatize
        self.verify_components = verify_components

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        out: np.ndarray = self.cache.matrix[self.cache.rows(texts)]
        return out

    def _matches(
        self, gold: Sequence[str], answer: Sequence[str]
    ) -> Callable[[np.ndarray], np.ndarray]:
        """``rows -> (len(rows), len(answer))`` booleans: which labels may match (a superset).

        Equal labels match, and so do labels whose cosine is within :data:`_SLACK` of the
        threshold or above it; :meth:`_match` decides each pair that is then taken.
        """
        ids_g, ids_a = self.cache.rows(gold), self.cache.rows(answer)
        vec_g, vec_a = self.cache.matrix[ids_g], self.cache.matrix[ids_a]
        floor = self.component_threshold - _SLACK

        def block(rows: np.ndarray) -> np.ndarray:
            out: np.ndarray = np.greater_equal(vec_g[rows] @ vec_a.T, floor)
            out |= ids_g[rows, None] == ids_a[None, :]
            return out

        return block

    def _match(self, x: str, y: str) -> bool:
        if x == y:
            return True
        m = self.cache.matrix
        rx, ry = self.cache.rows([x, y])
        return float(m[rx] @ m[ry]) >= self.component_threshold

    def _classify(self, rg: Reading, ra: Reading) -> tuple[str, str] | None:
        """``(kind, parts)`` of two canonical readings; ``None`` if unrelated.

        ``kind`` is aligned (``parts``: the rule that read them alike, or ``""``), relation,
        entity or roles.
        """
        g, a = rg.triple, ra.triple
        head, rel, tail = (
            self._match(a.head, g.head),
            self._match(a.relation, g.relation),
            self._match(a.tail, g.tail),
        )
        if head and tail:
            return ("aligned", _rule(rg, ra)) if rel else ("relation", "relation")
        if not rel:
            return None
        if head or tail:
            return "entity", "tail" if head else "head"
        if self._match(a.head, g.tail) and self._match(a.tail, g.head):
            if rg.symmetric or ra.symmetric:  # "spain border france" is "france border spain"
                return "aligned", _rule(rg, ra, "symmetric")
            if _extends(a.relation, g.relation) or _extends(g.relation, a.relation):
                return None  # "oxygen release during photosynthesis": an agentless passive
            return "roles", "swapped"
        return None

    def analyse(self, gold: TriplesLike, answer: TriplesLike) -> TauResult:
        """Explain ``answer`` against ``gold`` triple by triple.

        Examples
        --------
        >>> tau = TripletAnalyzer()
        >>> r = tau.analyse(
        ...     gold=[["Renzo", "won_against", "Thomas"], ["Renzo", "won_in", "finals"],
        ...           ["Renzo", "born_in", "Italy"]],
        ...     answer=[["Thomas", "won_against", "Renzo"], ["Renzo", "won_in", "finals"],
        ...             ["Renzo", "owns", "a yacht"]])
        >>> r.counts()
        {'aligned': 1, 'relation_mismatch': 0, 'entity_mismatch': 0, 'roles_swapped': 1, \
'extra': 1, 'missing': 1}
        >>> r.roles_swapped[0].answer
        Triple(head='thomas', relation='win against', tail='renzo')

        A passive or an inverse relation states the gold fact: aligned, and ``rule`` says why.

        >>> r = tau.analyse([["Alexander Fleming", "discover", "penicillin"]],
        ...                 [["Penicillin", "discovered by", "Alexander Fleming"]])
        >>> [(a.answer.relation, a.rule) for a in r.aligned]
        [('discover by', 'passive')]
        """
        return self.analyse_many([(gold, answer)])[0]

    def _normalized(
        self, items: Iterable[tuple[TriplesLike, TriplesLike]]
    ) -> list[tuple[tuple[Triple, ...], tuple[Triple, ...]] | str]:
        """Each pair normalised, or the status of a pair past :mod:`s3kg_core.limits`."""
        norm: list[tuple[tuple[Triple, ...], tuple[Triple, ...]] | str] = []
        for g, a in items:
            raw_g, raw_a = as_triples(g), as_triples(a)
            problem = next(
                (f"{OVERSIZED}_{side}" for side, kg in (("gold", raw_g), ("answer", raw_a))
                 if kg_problem(kg)),
                None,
            )  # fmt: skip
            norm.append(
                problem
                if problem is not None
                else (
                    normalize_triples(raw_g, lemmatize=self.lemmatize),
                    normalize_triples(raw_a, lemmatize=self.lemmatize),
                )
            )
        return norm

    @staticmethod
    def _strings(
        norm: Iterable[tuple[Sequence[Triple], Sequence[Triple]] | str],
    ) -> Iterable[str]:
        return (
            s
            for pair in norm
            if not isinstance(pair, str)
            for t in (*pair[0], *pair[1])
            for c in (read_triple(t).triple,)
            for s in (c.sentence(), c.head, c.relation, c.tail)
        )

    def strings_needed(self, items: Iterable[tuple[TriplesLike, TriplesLike]]) -> set[str]:
        """Every string :meth:`analyse_many` embeds for these ``(gold, answer)`` pairs.

        An :class:`EmbeddingCache` that holds them analyses the pairs without encoding anything.

        Examples
        --------
        >>> sorted(TripletAnalyzer().strings_needed([([["Cats", "chase", "mice"]], [])]))
        ['cat', 'cat chase mouse', 'chase', 'mouse']

        Triples are embedded in their canonical direction:

        >>> sorted(TripletAnalyzer().strings_needed([([["Mice", "chased by", "cats"]], [])]))
        ['cat', 'cat chase mouse', 'chase', 'mouse']
        """
        return set(self._strings(self._normalized(items)))

    def analyse_many(self, items: Iterable[tuple[TriplesLike, TriplesLike]]) -> list[TauResult]:
        """Run :meth:`analyse` on ``(gold, answer)`` pairs, encoding all strings in one batch.

        A pair with a KG past the limits of :mod:`s3kg_core.limits` is not analysed: its
        result has no triples and ``status`` ``oversized_gold`` or ``oversized_answer``.
        """
        norm = self._normalized(items)
        self.cache.add(self._strings(norm))
        return [
            self._result((), (), status=pair) if isinstance(pair, str) else self._analyse(*pair)
            for pair in norm
        ]

    def _result(
        self,
        gold: Sequence[Triple],
        answer: Sequence[Triple],
        aligned: Sequence[AlignedTriple] = (),
        mismatches: Mapping[str, Sequence[Mismatch]] | None = None,
        left: tuple[Iterable[int], Iterable[int]] = ((), ()),
        status: str = "ok",
    ) -> TauResult:
        mismatches = mismatches or {}
        return TauResult(
            aligned=tuple(aligned),
            relation_mismatch=tuple(mismatches.get("relation", ())),
            entity_mismatch=tuple(mismatches.get("entity", ())),
            roles_swapped=tuple(mismatches.get("roles", ())),
            extra=tuple(answer[j] for j in sorted(left[1])),
            missing=tuple(gold[i] for i in sorted(left[0])),
            triple_threshold=self.triple_threshold,
            component_threshold=self.component_threshold,
            encoder=self.encoder.name,
            status=status,
        )

    def _analyse(self, gold: Sequence[Triple], answer: Sequence[Triple]) -> TauResult:
        aligned: list[AlignedTriple] = []
        mismatches: dict[str, list[Mismatch]] = {"relation": [], "entity": [], "roles": []}
        left_g, left_a = set(range(len(gold))), set(range(len(answer)))
        read_g, read_a = [read_triple(t) for t in gold], [read_triple(t) for t in answer]
        canon_g, canon_a = [r.triple for r in read_g], [r.triple for r in read_a]

        def record(i: int, j: int, s: float, kind: tuple[str, str] | None, via: str) -> None:
            if kind is None:  # literal mode: the sentences align
                kind = ("aligned", _rule(read_g[i], read_a[j]))
            if kind[0] == "aligned":
                aligned.append(AlignedTriple(gold[i], answer[j], s, via, kind[1]))  # type: ignore[arg-type]
            else:
                mismatches[kind[0]].append(
                    Mismatch(gold[i], answer[j], kind[0], kind[1], s)  # type: ignore[arg-type]
                )
            left_g.discard(i)
            left_a.discard(j)

        if not (gold and answer):
            return self._result(gold, answer, left=(left_g, left_a))
        vec_g = self._vectors([t.sentence() for t in canon_g])
        vec_a = self._vectors([t.sentence() for t in canon_a])
        threshold = self.triple_threshold

        def sentence_keys(rows: np.ndarray) -> np.ndarray:
            sim: np.ndarray = vec_g[rows] @ vec_a.T
            below = sim < threshold
            np.negative(sim, out=sim)
            sim[below] = np.inf
            return sim

        for i, j, s in _greedy(len(gold), len(answer), sentence_keys, lambda *_: True):
            kind = self._classify(read_g[i], read_a[j]) if self.verify_components else None
            record(i, j, s, kind, "sentence")

        # The rest, best sentence cosine first: pairs whose parts say relation or entity
        # mismatch, roles swapped (or all match). Such a pair shares an entity (head, tail, or
        # crossed), and that is checked for a block of pairs at once before each pair taken is
        # classified. All on the canonical readings.
        rows, cols = sorted(left_g), sorted(left_a)
        g_rest, a_rest = [canon_g[i] for i in rows], [canon_a[j] for j in cols]
        heads = self._matches([t.head for t in g_rest], [t.head for t in a_rest])
        tails = self._matches([t.tail for t in g_rest], [t.tail for t in a_rest])
        rels = self._matches([t.relation for t in g_rest], [t.relation for t in a_rest])
        g_tail_a_head = self._matches([t.tail for t in g_rest], [t.head for t in a_rest])
        g_head_a_tail = self._matches([t.head for t in g_rest], [t.tail for t in a_rest])
        vg, va = vec_g[rows], vec_a[cols]

        def component_keys(block: np.ndarray) -> np.ndarray:
            hh, tt = heads(block), tails(block)
            crossed = g_tail_a_head(block)
            crossed &= g_head_a_tail(block)
            crossed |= hh
            crossed |= tt
            crossed &= rels(block)  # the relation matches and an entity does (or both swap)
            hh &= tt  # or head and tail match
            crossed |= hh
            keys: np.ndarray = vg[block] @ va.T
            np.negative(keys, out=keys)
            keys[~crossed] = np.inf
            return keys

        def accept(r: int, c: int, s: float) -> bool:
            kind = self._classify(read_g[rows[r]], read_a[cols[c]])
            if kind is not None:
                record(rows[r], cols[c], s, kind, "components")
            return kind is not None

        for _ in _greedy(len(rows), len(cols), component_keys, accept):
            pass
        return self._result(gold, answer, aligned, mismatches, (left_g, left_a))


def _extends(longer: str, shorter: str) -> bool:
    """Whether relation ``longer`` is ``shorter`` and more words (``release during``, ``release``).

    Such a pair read crossed is mostly an agentless passive (``oxygen, released during,
    photosynthesis``) whose direction its words do not say, not a swap of roles.
    """
    return longer.startswith(shorter + " ")


def _rule(rg: Reading, ra: Reading, *more: str) -> str:
    """The rules that read two triples alike, as :attr:`AlignedTriple.rule` (``""``: none)."""
    rules = [r.rule for r in (rg, ra) if r.flipped] if rg.flipped != ra.flipped else []
    return ", ".join(dict.fromkeys((*rules, *more)))


def tau_analyse(
    gold: TriplesLike,
    answer: TriplesLike,
    *,
    encoder: str | Encoder = "minilm",
    triple_threshold: float = TRIPLE_THRESHOLD,
    component_threshold: float = COMPONENT_THRESHOLD,
) -> TauResult:
    """Explain one answer's KG against its gold KG (see :class:`TripletAnalyzer`).

    Examples
    --------
    >>> r = tau_analyse([["aspirin", "reduces", "fever"]], [["aspirin", "causes", "fever"]])
    >>> [(m.kind, m.parts) for m in r.relation_mismatch]
    [('relation', 'relation')]
    >>> tau_analyse([], [["a", "r", "b"]]).counts()["extra"]
    1
    """
    analyzer = TripletAnalyzer(
        encoder, triple_threshold=triple_threshold, component_threshold=component_threshold
    )
    return analyzer.analyse(gold, answer)


def lowest_fraction(scores: Sequence[float], fraction: float = LOWEST_FRACTION) -> list[int]:
    """Indices of the lowest-scoring ``fraction`` of items (at least one when there are any).

    Ties are broken by position, so the selection is deterministic.

    Examples
    --------
    >>> lowest_fraction([0.9, 0.1, 0.5, 0.1], fraction=0.5)
    [1, 3]
    >>> lowest_fraction([], 0.05)
    []
    """
    if not 0.0 < fraction <= 1.0:
        raise ConfigError(f"fraction must be in (0, 1]; got {fraction!r}")
    if not scores:
        return []
    k = max(1, math.ceil(len(scores) * fraction))
    order = sorted(range(len(scores)), key=lambda i: (scores[i], i))
    return sorted(order[:k])
