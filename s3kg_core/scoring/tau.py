"""Triplet Analysis Unit (TAU): explain a low score triple by triple.

Every gold and answer triple is normalised (as in S3KG's paper mode) and embedded as the sentence
``"head relation tail"``. Pairs with cosine >= ``triple_threshold`` (0.76) are aligned one-to-one,
best first. The rest are compared part by part, each part matching when equal or when its label
embeddings have cosine >= ``component_threshold`` (by default the same 0.76):

- relation mismatch: head and tail match, the relation differs;
- entity mismatch: the relation matches and an entity differs (or head and tail are swapped);
- a residual pair whose three parts all match is aligned too (``via="components"``);
- extra: an answer triple with no counterpart (a possible hallucination);
- missing: a gold triple the answer does not cover.

Residual pairs are also taken one-to-one, best sentence cosine first.

Sentence embeddings barely see argument order or opposite verbs: "renzo win against thomas" and
"thomas win against renzo" have cosine 0.97 with MiniLM, "aspirin reduce fever" and "aspirin cause
fever" 0.90. So by default (``verify_components=True``) a sentence-aligned pair is also compared
part by part, and reported as a relation or entity mismatch when exactly that is what differs
(its ``similarity`` then is >= 0.76). ``verify_components=False`` gives the literal reading:
every sentence-aligned pair counts as aligned.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple, TriplesLike, as_triples
from ..normalize import normalize_triples

__all__ = [
    "AlignedTriple",
    "Mismatch",
    "TauResult",
    "TripletAnalyzer",
    "lowest_fraction",
    "tau_analyse",
]

_CHUNK = 2048


@dataclass(frozen=True)
class AlignedTriple:
    """A gold triple and the answer triple that covers it."""

    gold: Triple
    answer: Triple
    similarity: float
    via: Literal["sentence", "components"] = "sentence"


@dataclass(frozen=True)
class Mismatch:
    """A gold triple and an answer triple that agree on all but one thing.

    ``kind`` is ``"relation"`` or ``"entity"``; ``parts`` names what differs
    (``"relation"``, ``"head"``, ``"tail"`` or ``"swapped"``).
    """

    gold: Triple
    answer: Triple
    kind: Literal["relation", "entity"]
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
    """

    aligned: tuple[AlignedTriple, ...] = ()
    relation_mismatch: tuple[Mismatch, ...] = ()
    entity_mismatch: tuple[Mismatch, ...] = ()
    extra: tuple[Triple, ...] = ()
    missing: tuple[Triple, ...] = ()
    triple_threshold: float = 0.76
    component_threshold: float = 0.76
    encoder: str = ""

    def counts(self) -> dict[str, int]:
        """Number of triples (or pairs) in each category."""
        return {
            "aligned": len(self.aligned),
            "relation_mismatch": len(self.relation_mismatch),
            "entity_mismatch": len(self.entity_mismatch),
            "extra": len(self.extra),
            "missing": len(self.missing),
        }

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

        return {
            "aligned": [
                {
                    "gold": a.gold.to_list(),
                    "answer": a.answer.to_list(),
                    "similarity": a.similarity,
                    "via": a.via,
                }
                for a in self.aligned
            ],
            "relation_mismatch": [mismatch(m) for m in self.relation_mismatch],
            "entity_mismatch": [mismatch(m) for m in self.entity_mismatch],
            "extra": [t.to_list() for t in self.extra],
            "missing": [t.to_list() for t in self.missing],
            "triple_threshold": self.triple_threshold,
            "component_threshold": self.component_threshold,
            "encoder": self.encoder,
            "counts": self.counts(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TauResult:
        """Inverse of :meth:`to_dict`."""

        def mismatch(d: Mapping[str, Any]) -> Mismatch:
            return Mismatch(
                Triple.from_any(d["gold"]),
                Triple.from_any(d["answer"]),
                d["kind"],
                d["parts"],
                float(d["similarity"]),
            )

        return cls(
            aligned=tuple(
                AlignedTriple(
                    Triple.from_any(a["gold"]),
                    Triple.from_any(a["answer"]),
                    float(a["similarity"]),
                    a.get("via", "sentence"),
                )
                for a in data.get("aligned", ())
            ),
            relation_mismatch=tuple(mismatch(m) for m in data.get("relation_mismatch", ())),
            entity_mismatch=tuple(mismatch(m) for m in data.get("entity_mismatch", ())),
            extra=tuple(Triple.from_any(t) for t in data.get("extra", ())),
            missing=tuple(Triple.from_any(t) for t in data.get("missing", ())),
            triple_threshold=float(data.get("triple_threshold", 0.76)),
            component_threshold=float(data.get("component_threshold", 0.76)),
            encoder=str(data.get("encoder", "")),
        )


def _greedy_pairs(sim: np.ndarray, threshold: float) -> list[tuple[int, int, float]]:
    """One-to-one pairs ``(row, col, sim)`` with ``sim >= threshold``, best first."""
    rows, cols = np.nonzero(sim >= threshold)
    if rows.size == 0:
        return []
    values = sim[rows, cols]
    order = np.lexsort((cols, rows, -values))
    used_r: set[int] = set()
    used_c: set[int] = set()
    out = []
    for k in order:
        r, c = int(rows[k]), int(cols[k])
        if r not in used_r and c not in used_c:
            used_r.add(r)
            used_c.add(c)
            out.append((r, c, float(values[k])))
    return out


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
        triple_threshold: float = 0.76,
        component_threshold: float = 0.76,
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

    def _sim(self, a: Sequence[str], b: Sequence[str]) -> np.ndarray:
        m = self.cache.matrix
        va, vb = m[self.cache.rows(a)], m[self.cache.rows(b)]
        return np.vstack([va[i : i + _CHUNK] @ vb.T for i in range(0, len(va), _CHUNK)])

    def _match(self, x: str, y: str) -> bool:
        if x == y:
            return True
        m = self.cache.matrix
        rx, ry = self.cache.rows([x, y])
        return float(m[rx] @ m[ry]) >= self.component_threshold

    def _classify(self, g: Triple, a: Triple) -> tuple[str, str] | None:
        """``(kind, parts)`` with kind aligned, relation or entity; ``None`` if unrelated."""
        head, rel, tail = (
            self._match(a.head, g.head),
            self._match(a.relation, g.relation),
            self._match(a.tail, g.tail),
        )
        if head and tail:
            return ("aligned", "") if rel else ("relation", "relation")
        if not rel:
            return None
        if head or tail:
            return "entity", "tail" if head else "head"
        if self._match(a.head, g.tail) and self._match(a.tail, g.head):
            return "entity", "swapped"
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
        {'aligned': 1, 'relation_mismatch': 0, 'entity_mismatch': 1, 'extra': 1, 'missing': 1}
        >>> r.entity_mismatch[0].parts
        'swapped'
        """
        return self.analyse_many([(gold, answer)])[0]

    def _normalized(
        self, items: Iterable[tuple[TriplesLike, TriplesLike]]
    ) -> list[tuple[tuple[Triple, ...], tuple[Triple, ...]]]:
        return [
            (
                normalize_triples(as_triples(g), lemmatize=self.lemmatize),
                normalize_triples(as_triples(a), lemmatize=self.lemmatize),
            )
            for g, a in items
        ]

    @staticmethod
    def _strings(norm: Iterable[tuple[Sequence[Triple], Sequence[Triple]]]) -> Iterable[str]:
        return (
            s for g, a in norm for t in (*g, *a) for s in (t.sentence(), t.head, t.relation, t.tail)
        )

    def strings_needed(self, items: Iterable[tuple[TriplesLike, TriplesLike]]) -> set[str]:
        """Every string :meth:`analyse_many` embeds for these ``(gold, answer)`` pairs.

        An :class:`EmbeddingCache` that holds them analyses the pairs without encoding anything.

        Examples
        --------
        >>> sorted(TripletAnalyzer().strings_needed([([["Cats", "chase", "mice"]], [])]))
        ['cat', 'cat chase mouse', 'chase', 'mouse']
        """
        return set(self._strings(self._normalized(items)))

    def analyse_many(self, items: Iterable[tuple[TriplesLike, TriplesLike]]) -> list[TauResult]:
        """Run :meth:`analyse` on ``(gold, answer)`` pairs, encoding all strings in one batch."""
        norm = self._normalized(items)
        self.cache.add(self._strings(norm))
        return [self._analyse(g, a) for g, a in norm]

    def _analyse(self, gold: Sequence[Triple], answer: Sequence[Triple]) -> TauResult:
        aligned: list[AlignedTriple] = []
        mismatches: dict[str, list[Mismatch]] = {"relation": [], "entity": []}
        left_g, left_a = set(range(len(gold))), set(range(len(answer)))

        def record(i: int, j: int, s: float, kind: tuple[str, str] | None, via: str) -> None:
            if kind is None or kind[0] == "aligned":
                aligned.append(AlignedTriple(gold[i], answer[j], s, via=via))  # type: ignore[arg-type]
            else:
                category = "relation" if kind[0] == "relation" else "entity"
                mismatches[category].append(
                    Mismatch(gold[i], answer[j], category, kind[1], s)  # type: ignore[arg-type]
                )
            left_g.discard(i)
            left_a.discard(j)

        if gold and answer:
            sim = self._sim([t.sentence() for t in gold], [t.sentence() for t in answer])
            for i, j, s in _greedy_pairs(sim, self.triple_threshold):
                kind = self._classify(gold[i], answer[j]) if self.verify_components else None
                record(i, j, s, kind, "sentence")
            candidates = sorted(
                ((float(sim[i, j]), i, j) for i in left_g for j in left_a),
                key=lambda c: (-c[0], c[1], c[2]),
            )
            for s, i, j in candidates:
                if i in left_g and j in left_a:
                    kind = self._classify(gold[i], answer[j])
                    if kind is not None:
                        record(i, j, s, kind, "components")
        return TauResult(
            aligned=tuple(aligned),
            relation_mismatch=tuple(mismatches["relation"]),
            entity_mismatch=tuple(mismatches["entity"]),
            extra=tuple(answer[j] for j in sorted(left_a)),
            missing=tuple(gold[i] for i in sorted(left_g)),
            triple_threshold=self.triple_threshold,
            component_threshold=self.component_threshold,
            encoder=self.encoder.name,
        )


def tau_analyse(
    gold: TriplesLike,
    answer: TriplesLike,
    *,
    encoder: str | Encoder = "minilm",
    triple_threshold: float = 0.76,
    component_threshold: float = 0.76,
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


def lowest_fraction(scores: Sequence[float], fraction: float = 0.05) -> list[int]:
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
