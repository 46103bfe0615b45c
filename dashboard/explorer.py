"""The sample explorer's logic, without streamlit: what the scorer did, drawn and tabled.

One question has an answer KG (T1, which drives every match), a gold KG and a context KG. The
scorer explains both comparisons (:meth:`~s3kg_core.scoring.s3kg.KGScorer.explain_pairs`); this
module only reads those :class:`~s3kg_core.scoring.explain.Explanation` objects, it never works
out again what the scorer keys, picks or aligns:

* every answer entity gets a stable identity, badge ``E<n>`` and colour, by its order of first
  appearance among the keyed answer triples, so that moving tau never renumbers or recolours an
  entity (:func:`entity_identities`);
* a triple is drawn and tabled as it was written, its two entities carrying the badges of the
  keys the scorer gave them, also where the scorer read it turned round (``ot`` mode: a
  passive, an inverse or a symmetric relation in its canonical direction, :func:`raw_ends`);
* each answer triple is lined up with the gold and context triple the scorer picked for it,
  with the pick's cosine and, per part, the label alignment the WL kernel saw at that tau
  (:attr:`CaseScores.rows`);
* a large KG is drawn as the part worth drawing: the best-matched triples' nodes plus as many
  hops as stay under a node cap (:func:`linked_view`);
* the words of aligned entities are marked in a text, escaped (:func:`mark_text`).

Pages get a :class:`CaseScores` through :func:`dashboard.data.explain.explorer_case`, which fills
the scorer's cache from the database with exactly the strings the scorer needs
(:meth:`~s3kg_core.scoring.s3kg.KGScorer.strings_needed`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from dashboard.graphs import (
    PALETTE,
    UNMATCHED_COLOUR,
    GraphPanel,
    LinkedRow,
    PanelEdge,
    PanelNode,
    badge_text,
)
from dashboard.url_state import parse_id
from s3kg_core.kg import SOURCES, Triple
from s3kg_core.normalize import normalize_label, normalize_triples
from s3kg_core.scoring.cus import harmonic_mean
from s3kg_core.scoring.explain import Explanation, KeyedTriple
from s3kg_core.statuses import Reference, role_status

if TYPE_CHECKING:
    from s3kg_core.encoders.cache import EmbeddingCache
    from s3kg_core.scoring.s3kg import KGScorer

__all__ = [
    "LINK_PARAMS",
    "MAX_NODES",
    "SOURCES",
    "TABLE_COLUMNS",
    "TITLES",
    "WHOLE_MAX_NODES",
    "CaseScores",
    "Identity",
    "TripleMatch",
    "case_scores",
    "entity_identities",
    "linked_view",
    "mark_text",
    "marked_by_lemmas",
    "neighbourhood",
    "neighbours",
    "parse_link",
    "partners",
    "question_label",
    "raw_ends",
    "text_marks",
    "transport_rows",
    "window",
]

_OTHERS = ("gold", "context")

#: Picture titles.
TITLES = {"gold": "Gold KG", "answer": "Answer KG", "context": "Context KG"}

#: A KG with more nodes than this is drawn as a neighbourhood of its best-matched triples unless
#: the page asks for the whole KG.
MAX_NODES = 40

#: The most nodes a picture ever draws, "Whole KGs" or not: beyond it the layout's time grows
#: past what a page can wait for, and labels are too small to read anyway
#: (bench/speed/bench_layout.py).
WHOLE_MAX_NODES = 100

#: The triple table's columns: (header, tooltip).
TABLE_COLUMNS = (
    ("#", "answer triple"),
    ("Answer triple", "T1: every answer triple picks its most similar triple in each KG"),
    ("Gold match", "the gold triple S3KG matched this answer triple to"),
    ("cos", "cosine of the two triple sentences (the match takes the best, whatever tau)"),
    ("at tau", "head, relation and tail aligned to the matched triple's at this tau"),
    ("Context match", "the context triple S3KG matched this answer triple to"),
    ("cos", "cosine of the two triple sentences (the match takes the best, whatever tau)"),
    ("at tau", "head, relation and tail aligned to the matched triple's at this tau"),
)


@dataclass(frozen=True)
class Identity:
    """An answer entity's identity on the page: its badge, colour and label."""

    badge: str
    colour: str
    label: str


def _spellings(label: str) -> set[str]:
    """The keys the scorer may give ``label``: lowercased (``kgx``), normalised, lemmatised."""
    return {
        label.lower(),
        normalize_label(label),
        normalize_label(label, lemmatize=False),
    }


def raw_ends(t: KeyedTriple) -> tuple[str, str]:
    """The keys of ``t.raw``'s head and tail: exchanged where the scorer read it turned round.

    In ``ot`` mode the key is the triple in its canonical direction
    (:func:`s3kg_core.scoring.roles.read_triple`): ``(Penicillin, discovered by, Alexander
    Fleming)`` is keyed ``(alexander fleming, discover, penicillin)``. A page that shows the
    triple as written must give "Penicillin" the badge of the key ``penicillin``, not of the
    key's head.

    Examples
    --------
    >>> turned = KeyedTriple(Triple("Penicillin", "discovered by", "Alexander Fleming"),
    ...     Triple("alexander fleming", "discover", "penicillin"), "")
    >>> raw_ends(turned)
    ('penicillin', 'alexander fleming')
    >>> raw_ends(KeyedTriple(Triple("Cats", "chase", "mice"), Triple("cat", "chase", "mouse"),
    ...     "cat chase mouse"))
    ('cat', 'mouse')
    """
    key, raw = t.key, t.raw
    if key.head == key.tail or raw.head.lower() == key.head or raw.tail.lower() == key.tail:
        return key.head, key.tail  # the common case, without normalising anything
    head, tail = _spellings(raw.head), _spellings(raw.tail)
    if key.head not in head and key.tail not in tail and (key.tail in head or key.head in tail):
        return key.tail, key.head
    return key.head, key.tail


def _turned(t: KeyedTriple) -> bool:
    return raw_ends(t)[0] != t.key.head


def entity_identities(answer: Sequence[KeyedTriple]) -> dict[str, Identity]:
    """Badge ``E1, E2, ...`` and colour for every answer entity, by first appearance.

    ``answer`` is the answer KG as the scorer keyed it (:attr:`Explanation.triples_1`). Heads
    come before tails. The numbering depends on the answer KG alone, never on tau, so an entity
    keeps its badge and colour when the alignment changes; the page shows them only for
    entities that are aligned.

    Examples
    --------
    >>> answer = [KeyedTriple(Triple("Curie", "found", "radium"), Triple("curie", "find",
    ...     "radium"), "curie find radium"), KeyedTriple(Triple("radium", "is", "metal"),
    ...     Triple("radium", "be", "metal"), "radium be metal")]
    >>> ids = entity_identities(answer)
    >>> [(k, i.badge, i.label) for k, i in ids.items()]
    [('curie', 'E1', 'Curie'), ('radium', 'E2', 'radium'), ('metal', 'E3', 'metal')]
    >>> ids["curie"].colour == PALETTE[0]
    True
    """
    out: dict[str, Identity] = {}
    for t in answer:
        head, tail = raw_ends(t)
        for label, raw_label in ((head, t.raw.head), (tail, t.raw.tail)):
            if label not in out:
                n = len(out)
                out[label] = Identity(f"E{n + 1}", PALETTE[n % len(PALETTE)], raw_label)
    return out


def partners(entity_map: Mapping[str, str | None]) -> dict[str, list[str]]:
    """Invert an alignment map: partner label -> the answer labels aligned to it, in order.

    Examples
    --------
    >>> partners({"paris": "paris", "lutetia": "paris", "rome": None})
    {'paris': ['paris', 'lutetia']}
    """
    out: dict[str, list[str]] = {}
    for answer_label, other in entity_map.items():
        if other:
            out.setdefault(other, []).append(answer_label)
    return out


@dataclass(frozen=True)
class TripleMatch:
    """One answer triple and the triple of the other KG that S3KG picked for it.

    Read off an :class:`Explanation`: its :class:`~s3kg_core.scoring.explain.Pick` and the
    :class:`~s3kg_core.scoring.explain.LabelMatch` of each part.

    Attributes
    ----------
    answer
        Index of the answer triple in :attr:`Explanation.triples_1`.
    other
        Index of the picked triple in the other KG's ``triples_2``, or ``None`` (the pair was
        not scored, or compared without alignment).
    cosine
        Cosine of the two triple sentences (the pick never uses tau: it takes the best).
    exact
        Picked because the same sentence occurs in the other KG.
    parts
        Head, relation and tail: each label's best cosine to a label of the picked triples.
    partners
        Head, relation and tail: the label each was aligned to at tau, or ``None``.
    aligned
        Whether head, relation and tail were each aligned to exactly that part of the picked
        triple at this tau, as the WL kernel sees them.
    """

    answer: int
    other: int | None
    cosine: float | None
    exact: bool
    parts: tuple[float | None, float | None, float | None] | None
    partners: tuple[str | None, str | None, str | None] | None
    aligned: tuple[bool, bool, bool]

    @property
    def passed(self) -> bool:
        """All three parts aligned at tau."""
        return all(self.aligned)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for the page's script)."""
        return {
            "answer": self.answer,
            "other": self.other,
            "cosine": self.cosine,
            "exact": self.exact,
            "parts": list(self.parts) if self.parts is not None else None,
            "partners": list(self.partners) if self.partners is not None else None,
            "aligned": list(self.aligned),
        }


def _finite(value: float | None) -> float | None:
    return value if value is None or abs(value) != float("inf") else None


def _match(ex: Explanation, i: int) -> TripleMatch:
    """The :class:`TripleMatch` of answer triple ``i``, from the explanation's pick and labels."""
    pick = ex.pick_of(i)
    if pick is None:  # not scored, or compared without alignment
        return TripleMatch(i, None, None, False, None, None, (False, False, False))
    a, m = ex.triples_1[i].key, ex.triples_2[pick.two].key
    labels = (ex.entity(a.head), ex.relation(a.relation), ex.entity(a.tail))
    others = (m.head, m.relation, m.tail)
    parts = tuple(_finite(x.cosine) if x is not None else None for x in labels)
    partners = tuple(x.partner if x is not None else None for x in labels)
    aligned = tuple(x is not None and x.partner == o for x, o in zip(labels, others, strict=True))
    return TripleMatch(
        i,
        pick.two,
        pick.cosine,
        pick.exact,
        (parts[0], parts[1], parts[2]),
        (partners[0], partners[1], partners[2]),
        (aligned[0], aligned[1], aligned[2]),
    )


@dataclass(frozen=True)
class CaseScores:
    """One question at one tau: the scorer's explanations of both comparisons.

    Attributes
    ----------
    tau
        The threshold used.
    gold, context
        The :class:`~s3kg_core.scoring.explain.Explanation` of the answer against the gold KG
        and against the context KG.
    encoded
        Strings the encoder had to embed (0 when every vector came from the database).
    flow_cosines
        ``"gold"`` / ``"context"`` -> the cosine of the two entity labels of each flow of that
        explanation's :attr:`~s3kg_core.scoring.explain.Explanation.transport`, in its order
        (1.0 for the same label, as the alignment counts it); empty where there is no plan.
    """

    tau: float
    gold: Explanation
    context: Explanation
    encoded: int = 0
    flow_cosines: Mapping[str, tuple[float, ...]] = field(default_factory=dict)

    @property
    def triples(self) -> dict[str, tuple[KeyedTriple, ...]]:
        """Source -> its triples as the scorer keyed them, in the scorer's order."""
        return {
            "gold": self.gold.triples_2,
            "answer": self.gold.triples_1,
            "context": self.context.triples_2,
        }

    @cached_property
    def rows(self) -> dict[str, list[TripleMatch]]:
        """``"gold"`` / ``"context"`` -> one :class:`TripleMatch` per answer triple."""
        n = len(self.gold.triples_1)
        return {key: [_match(self.explanation(key), i) for i in range(n)] for key in _OTHERS}

    def explanation(self, source: str) -> Explanation:
        """The comparison of the answer with ``source`` (``"gold"`` or ``"context"``)."""
        return self.gold if source == "gold" else self.context

    def status(self, source: Reference) -> str:
        """Why the answer against ``source`` scored 0, by KG (``gold_kg_empty``), or ``ok``."""
        return role_status(self.explanation(source).status, source)

    def entity_map(self, source: str) -> dict[str, str | None]:
        """The answer -> ``source`` entity alignment at this tau."""
        return dict(self.explanation(source).entity_map)

    def scores(self, alpha: float) -> dict[str, float]:
        """GoldSim, CtxSim, CUS and the four components at ``alpha``."""
        gold_sim, ctx_sim = self.gold.blend(alpha), self.context.blend(alpha)
        return {
            "gold_sim": gold_sim,
            "ctx_sim": ctx_sim,
            "cus": float(harmonic_mean(gold_sim, ctx_sim)),
            "gold_s_wl": self.gold.s_wl,
            "gold_s_sbert": self.gold.s_sbert,
            "ctx_s_wl": self.context.s_wl,
            "ctx_s_sbert": self.context.s_sbert,
        }


def case_scores(
    scorer: KGScorer,
    answer: Sequence[Triple],
    gold: Sequence[Triple],
    context: Sequence[Triple],
    *,
    texts: tuple[str | None, str | None, str | None] | None = None,
) -> CaseScores:
    """Explain one question at ``scorer``'s tau: the answer against the gold and the context KG.

    Parameters
    ----------
    scorer
        A :class:`~s3kg_core.scoring.s3kg.KGScorer` with the signature's mode and tau; give it
        an embedding cache holding :meth:`~s3kg_core.scoring.s3kg.KGScorer.strings_needed` and
        nothing is encoded.
    answer, gold, context
        The three KGs, raw triples.
    texts
        ``(answer, gold answer, context)``: needed in ``text`` mode, ignored otherwise.

    Returns
    -------
    CaseScores
        The scorer's own explanations, so the page shows exactly the library's numbers.

    Examples
    --------
    >>> from s3kg_core.scoring.s3kg import KGScorer
    >>> scorer = KGScorer("minilm", tau=0.65)
    >>> case = case_scores(scorer, [Triple("Curie", "discovered", "radium")],
    ...                    [Triple("Marie Curie", "discovered", "radium")], [])
    >>> case.rows["gold"][0].aligned, case.rows["context"][0].other
    ((True, True, True), None)
    >>> case.status("context")
    'context_kg_empty'
    """
    before = scorer.cache.stats.encoded
    pair_texts = None
    if texts is not None:
        text_answer, text_gold, text_context = texts
        pair_texts = [(text_answer, text_gold), (text_answer, text_context)]
    gold_ex, ctx_ex = scorer.explain_pairs(
        [(list(answer), list(gold)), (list(answer), list(context))], texts=pair_texts
    )
    flows = {
        "gold": _flow_cosines(scorer.cache, gold_ex),
        "context": _flow_cosines(scorer.cache, ctx_ex),
    }
    return CaseScores(
        tau=float(scorer.config.tau),
        gold=gold_ex,
        context=ctx_ex,
        encoded=scorer.cache.stats.encoded - before,
        flow_cosines=flows,
    )


def _flow_cosines(cache: EmbeddingCache, ex: Explanation) -> tuple[float, ...]:
    """The cosine of each flow's two entity labels in ``ex``'s transport plan.

    From the vectors the scorer embedded the labels with (unit-norm rows of ``cache``); the
    same label is 1.0, as the alignment counts it.
    """
    if not ex.transport:
        return ()
    ones = cache.vectors([a for a, _, _ in ex.transport])
    twos = cache.vectors([b for _, b, _ in ex.transport])
    dots = np.clip(np.einsum("ij,ij->i", ones, twos), -1.0, 1.0)
    return tuple(
        1.0 if a == b else float(d) for (a, b, _), d in zip(ex.transport, dots, strict=True)
    )


def transport_rows(case: CaseScores) -> list[dict[str, Any]]:
    """The entity transport plan of both comparisons (``wwl``, ``ot``), one row per flow.

    Each answer entity carries ``1 / n`` of the answer graph's mass; ``share`` is the part of
    that mass the transport plan sends to ``partner`` (the shares of one entity add up to 1).
    ``cosine`` is the two labels' cosine and ``below_tau`` says it is under the case's tau
    (the scorer's threshold): the transport must send every entity's mass somewhere, so such
    a flow is forced by the plan, not a match of meaning. Empty in the other modes, whose
    alignment is one partner per label.

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> ex = NS(transport=(("cat", "cat", 0.5), ("dog", "hound", 0.25), ("dog", "cat", 0.25)),
    ...         entities=("cat", "dog"))
    >>> case = NS(gold=ex, context=NS(transport=(), entities=()), tau=0.65,
    ...           flow_cosines={"gold": (1.0, 0.81, 0.42), "context": ()})
    >>> [(r["entity"], r["partner"], r["share"], r["below_tau"]) for r in transport_rows(case)]
    [('cat', 'cat', 1.0, False), ('dog', 'hound', 0.5, False), ('dog', 'cat', 0.5, True)]
    """
    rows: list[dict[str, Any]] = []
    for key, name, ex in (("gold", "GoldSim", case.gold), ("context", "CtxSim", case.context)):
        n = len(ex.entities)
        cosines = case.flow_cosines.get(key, ())
        for i, (entity, partner, mass) in enumerate(ex.transport):
            cosine = cosines[i] if i < len(cosines) else None
            rows.append(
                {
                    "comparison": name,
                    "entity": entity,
                    "partner": partner,
                    "cosine": cosine,
                    "below_tau": cosine is not None and cosine < case.tau,
                    "share": mass * n,
                }
            )
    return rows


def neighbourhood(edges: Sequence[tuple[str, str]], seeds: Iterable[str], hops: int) -> set[str]:
    """The seed nodes and every node within ``hops`` edges of one (direction ignored).

    Examples
    --------
    >>> chain = [("a", "b"), ("b", "c"), ("c", "d")]
    >>> sorted(neighbourhood(chain, {"a"}, 1)), sorted(neighbourhood(chain, {"a"}, 2))
    (['a', 'b'], ['a', 'b', 'c'])
    >>> sorted(neighbourhood(chain, {"a"}, 0))
    ['a']
    """
    adjacency: dict[str, set[str]] = {}
    for a, b in edges:
        adjacency.setdefault(a, set()).add(b)
        adjacency.setdefault(b, set()).add(a)
    reached = {s for s in seeds}
    frontier = set(reached)
    for _ in range(max(hops, 0)):
        frontier = {m for n in frontier for m in adjacency.get(n, ())} - reached
        if not frontier:
            break
        reached |= frontier
    return reached


def window(
    edges: Sequence[tuple[str, str]], seeds: Sequence[str], max_nodes: int
) -> tuple[set[str], int, bool]:
    """The nodes to draw of a KG too large to draw whole.

    Parameters
    ----------
    edges
        ``(head, tail)`` of every triple.
    seeds
        Nodes worth drawing, most important first.
    max_nodes
        The most nodes to draw.

    Returns
    -------
    tuple
        The nodes, the hops added around the seeds (2, 1 or 0: as many as stay within
        ``max_nodes``), and whether the seeds themselves were cut to the first ``max_nodes``.

    Examples
    --------
    >>> chain = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    >>> nodes, hops, cut = window(chain, ["c"], 3)
    >>> sorted(nodes), hops, cut
    (['b', 'c', 'd'], 1, False)
    >>> nodes, hops, cut = window(chain, ["e", "d", "c"], 2)  # more seeds than room: cut
    >>> sorted(nodes), hops, cut
    (['d', 'e'], 0, True)
    """
    distinct = list(dict.fromkeys(seeds))
    if len(distinct) > max_nodes:
        return set(distinct[:max_nodes]), 0, True
    for hops in (2, 1):
        reached = neighbourhood(edges, distinct, hops)
        if len(reached) <= max_nodes:
            return reached, hops, False
    return set(distinct), 0, False


def mark_text(text: str, marks: Mapping[str, tuple[str, str]]) -> str:
    """The text as escaped HTML, each mention of a marked label wrapped in a coloured mark.

    Parameters
    ----------
    text
        Plain text (a question, an answer, a context).
    marks
        Label as written in a KG -> ``(badge, colour)``. Mentions are found case-insensitively
        at word boundaries, longest label first, never overlapping.

    Returns
    -------
    str
        HTML in which every character of ``text`` and of each badge is ``html.escape``-d;
        colours must be hex colours (others are dropped).

    Examples
    --------
    >>> mark_text("Curie found <radium>.", {"radium": ("E2", "#0072b2")})  # doctest: +ELLIPSIS
    'Curie found &lt;<mark ...>radium<sup ...>E2</sup></mark>&gt;.'
    """
    labels = sorted((lb for lb in marks if lb.strip()), key=lambda lb: (-len(lb), lb))
    spans: list[tuple[int, int, str]] = []
    taken = [False] * len(text)
    for label in labels:
        pattern = re.compile(rf"(?<!\w){re.escape(label)}(?!\w)", re.IGNORECASE)
        for m in pattern.finditer(text):
            if any(taken[m.start() : m.end()]):
                continue
            for k in range(m.start(), m.end()):
                taken[k] = True
            spans.append((m.start(), m.end(), label))
    spans.sort()
    out, at = [], 0
    for start, end, label in spans:
        badge, colour = marks[label]
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", colour):
            continue
        out.append(html.escape(text[at:start]))
        out.append(
            f'<mark style="background:{colour}26;border-bottom:3px solid {colour};'
            f'padding:0 2px;border-radius:2px">{html.escape(text[start:end])}'
            f'<sup style="font-weight:600;color:#333">{html.escape(badge)}</sup></mark>'
        )
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def _node_badges(
    case: CaseScores, identities: Mapping[str, Identity]
) -> dict[str, dict[str, list[Identity]]]:
    """Source -> node key -> the identities it carries (empty list: unmatched)."""
    gold_map, ctx_map = case.entity_map("gold"), case.entity_map("context")
    out: dict[str, dict[str, list[Identity]]] = {s: {} for s in SOURCES}
    for key, identity in identities.items():
        if gold_map.get(key) or ctx_map.get(key):
            out["answer"][key] = [identity]
    for source, mapping in (("gold", gold_map), ("context", ctx_map)):
        for other, answer_keys in partners(mapping).items():
            out[source][other] = [identities[a] for a in answer_keys if a in identities]
    return out


def text_marks(case: CaseScores, source: str) -> dict[str, tuple[str, str]]:
    """Raw labels of ``source``'s aligned entities -> ``(badge, colour)``, for :func:`mark_text`."""
    badges = _node_badges(case, entity_identities(case.triples["answer"]))[source]
    marks: dict[str, tuple[str, str]] = {}
    for t in case.triples[source]:
        head, tail = raw_ends(t)
        for label, node in ((t.raw.head, head), (t.raw.tail, tail)):
            ids = badges.get(node)
            if ids:
                marks.setdefault(label, (badge_text([i.badge for i in ids]), ids[0].colour))
    return marks


def marked_by_lemmas(
    drawn: Mapping[str, Sequence[KeyedTriple]],
    lemmas: Mapping[str, Iterable[Sequence[str]]],
) -> dict[str, set[int]]:
    """Which drawn triples TAU named: source -> indices into ``drawn[source]``.

    TAU reports triples normalised (lemmas: ``"publish in"``); a drawn triple (as
    :attr:`CaseScores.triples`) is named when its raw form normalises to one of
    ``lemmas[source]``. For :func:`linked_view`'s ``marked``.

    Examples
    --------
    >>> t = Triple("The paper", "published_in", "Nature")
    >>> other = Triple("x", "y", "z")
    >>> drawn = {"gold": [KeyedTriple(other, other, "x y z"), KeyedTriple(t, t, "")]}
    >>> marked_by_lemmas(drawn, {"gold": [("the paper", "publish in", "nature")], "answer": []})
    {'gold': {1}, 'answer': set()}
    """
    out: dict[str, set[int]] = {}
    for source, named in lemmas.items():
        wanted = {tuple(t) for t in named}
        out[source] = {
            i
            for i, t in enumerate(drawn.get(source, ()))
            if any(tuple(n.to_list()) in wanted for n in normalize_triples([t.raw]))
        }
    return out


def _priority(case: CaseScores, source: str, marked: Collection[int]) -> list[int]:
    """Triples of ``source`` worth drawing first, as indices into ``case.triples[source]``.

    The marked ones, then the picked ones by the pick's cosine, best first (an answer triple:
    by the better of its two picks). Picks never depend on tau, so neither does what a large
    KG shows.
    """
    best: dict[int, float] = {}
    for key in _OTHERS:
        if source not in ("answer", key):
            continue
        for p in case.explanation(key).picks:
            at = p.one if source == "answer" else p.two
            best[at] = max(best.get(at, -2.0), p.cosine)
    picked = sorted(best, key=lambda t: (-best[t], t))
    return list(dict.fromkeys([*sorted(marked), *picked]))


@dataclass(frozen=True)
class _Drawn:
    """What a panel draws: its nodes (key -> raw label), the nodes shown and the note."""

    labels: dict[str, str]
    shown: set[str]
    note: str


def _draw(
    case: CaseScores,
    source: str,
    *,
    show_all: bool,
    max_nodes: int,
    marked: Collection[int],
) -> _Drawn:
    triples = case.triples[source]
    labels: dict[str, str] = {}
    for t in triples:
        head, tail = raw_ends(t)
        labels.setdefault(head, t.raw.head)
        labels.setdefault(tail, t.raw.tail)
    cap = WHOLE_MAX_NODES if show_all else min(max_nodes, WHOLE_MAX_NODES)
    if len(labels) <= cap:
        return _Drawn(labels, set(labels), "")
    order = _priority(case, source, marked)
    seeds = [p for t in order for p in (triples[t].key.head, triples[t].key.tail)]
    shown, hops, cut = window([(t.key.head, t.key.tail) for t in triples], seeds, cap)
    what = "the best-matched triples'" if cut else "the matched triples'"
    if source == "answer":
        what = "the best-matched answer triples'"
    how = f"{what} nodes" + (f" + {hops} hop{'s' * (hops > 1)}" if hops else "")
    if show_all and len(shown) < cap:  # "Whole KGs": as much of the rest as the cap allows
        for t in triples:
            ends = {t.key.head, t.key.tail} - shown
            if len(shown) + len(ends) > cap:
                break
            shown |= ends
        how += ", then the others in order"
    why = "too many to draw whole" if show_all else "switch on 'Whole KGs'"
    return _Drawn(labels, shown, f"showing {len(shown)} of {len(labels)} nodes: {how} ({why})")


def linked_view(
    case: CaseScores,
    statuses: Mapping[str, str] | None = None,
    *,
    show_all: bool = False,
    max_nodes: int = MAX_NODES,
    marked: Mapping[str, Collection[int]] | None = None,
) -> tuple[list[GraphPanel], list[LinkedRow]]:
    """The three pictures and the triple table of a question, ready for the linked document.

    Parameters
    ----------
    case
        The question at some tau (:func:`case_scores`).
    statuses
        Source -> the stored KG's status (``"ok"``, ``"failed: ..."``); shown when not ok.
    show_all
        Draw whole KGs, up to :data:`WHOLE_MAX_NODES` nodes. Otherwise a KG of more than
        ``max_nodes`` nodes (the answer KG as the others) shows the nodes of its marked and
        best-matched triples plus as many hops (2, 1 or 0) as stay within ``max_nodes``. The
        picks do not depend on tau, so neither does what is drawn.
    max_nodes
        See ``show_all``.
    marked
        Source -> indices into ``case.triples[source]`` to draw as marked edges
        (:class:`~dashboard.graphs.PanelEdge`); their nodes are drawn first.

    Returns
    -------
    tuple
        :class:`~dashboard.graphs.GraphPanel` for gold, answer and context, and one
        :class:`~dashboard.graphs.LinkedRow` per drawn answer triple (every one, unless the
        answer KG is drawn in part). A panel lists only the triples its edges and the table
        name (``LinkedRow.number`` keeps the answer triple's own number).
    """
    statuses = statuses or {}
    marked = marked or {}
    identities = entity_identities(case.triples["answer"])
    badges = _node_badges(case, identities)
    drawn = {
        source: _draw(
            case, source, show_all=show_all, max_nodes=max_nodes, marked=marked.get(source, ())
        )
        for source in SOURCES
    }

    def visible(source: str, t: KeyedTriple) -> bool:
        shown = drawn[source].shown
        return t.key.head in shown and t.key.tail in shown

    answer = case.triples["answer"]
    row_ids = [i for i, t in enumerate(answer) if visible("answer", t)]
    named: dict[str, dict[int, None]] = {s: {} for s in SOURCES}
    for source in SOURCES:
        for i, t in enumerate(case.triples[source]):
            if visible(source, t):
                named[source][i] = None
    matches = {key: {i: _match(case.explanation(key), i) for i in row_ids} for key in _OTHERS}
    for i in row_ids:
        named["answer"][i] = None
        for key in _OTHERS:
            other = matches[key][i].other
            if other is not None:
                named[key][other] = None
    index = {s: {t: n for n, t in enumerate(sorted(named[s]))} for s in SOURCES}

    panels = []
    for source in SOURCES:
        triples, d = case.triples[source], drawn[source]
        nodes = []
        for node_id, label in d.labels.items():
            if node_id not in d.shown:
                continue
            ids = badges[source].get(node_id, [])
            shown_label = label if label.strip() else "(empty)"
            title = shown_label
            if ids:
                title = f"{badge_text([i.badge for i in ids])} · {shown_label}\n" + "\n".join(
                    f"{i.badge}: the answer's \u201c{i.label}\u201d" for i in ids
                )
            nodes.append(
                PanelNode(
                    node_id,
                    shown_label,
                    ids[0].colour if ids else UNMATCHED_COLOUR,
                    tuple(i.badge for i in ids),
                    title,
                )
            )
        marks = marked.get(source, ())
        panel_edges = tuple(
            PanelEdge(*raw_ends(t), t.raw.relation, index[source][i], marked=i in marks)
            for i, t in enumerate(triples)
            if visible(source, t)
        )
        status = statuses.get(source, "ok")
        subtitle = f"{len(triples)} triple{'s' * (len(triples) != 1)}"
        if triples:  # an empty picture is narrow: "0 triples" says it all
            subtitle += f" · {len(d.labels)} nodes"
        if status != "ok":
            subtitle += f" · {status}"
        panels.append(
            GraphPanel(
                key=source,
                title=TITLES[source],
                subtitle=subtitle,
                nodes=tuple(nodes),
                edges=panel_edges,
                triples=tuple(
                    (
                        raw_ends(triples[i])[0],
                        triples[i].raw.relation,
                        raw_ends(triples[i])[1],
                        triples[i].raw.head,
                        triples[i].raw.tail,
                    )
                    for i in index[source]
                ),
                note=d.note,
                empty="no triples" if status == "ok" else f"no triples ({status})",
            )
        )
    rows = []
    for i in row_ids:
        links: dict[str, int | None] = {"answer": index["answer"][i]}
        found: dict[str, dict[str, Any] | None] = {}
        for key in _OTHERS:
            m = matches[key][i]
            other = None if m.other is None else index[key][m.other]
            links[key] = other
            match = {**m.to_dict(), "other": other}
            if _turned(answer[i]):  # head, relation, tail as the triple is shown, and how read
                for part in ("parts", "partners", "aligned"):
                    if match[part] is not None:
                        match[part] = match[part][::-1]
                match["reading"] = " ".join(answer[i].key.to_list())
            found[key] = match
        rows.append(LinkedRow(links=links, matches=found, number=i + 1))
    return panels, rows


LINK_PARAMS = ("run", "item", "threshold", "tau")
"""The query parameters of a case link; ``tau`` is the old name of ``threshold`` (still read)."""


def parse_link(params: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Read a case link ``?run=<run_id>&item=<item_id>&threshold=<t>``.

    ``threshold`` is S3KG's alignment threshold (tau in the paper); a link written before it
    had its own name says ``tau=<t>``, read when there is no ``threshold``.

    Returns
    -------
    tuple
        The values that parse (``run`` and ``item`` as int from 0 to
        :data:`dashboard.url_state.MAX_ID`, the range of their columns; ``threshold`` as a float
        in [0, 1] rounded to 0.01) and one message per value that does not. A message names the
        parameter but never repeats its text (a link is anyone's text; the page shows the
        messages as Markdown).

    Examples
    --------
    >>> parse_link({"run": "2", "item": "7", "threshold": "0.8"})
    ({'run': 2, 'item': 7, 'threshold': 0.8}, [])
    >>> parse_link({"run": "2", "tau": "0.7"})
    ({'run': 2, 'threshold': 0.7}, [])
    >>> parse_link({"run": "x", "threshold": "3"})
    ({}, ['run is not a run id', 'threshold is not a number in [0, 1]'])
    >>> parse_link({"run": "3", "item": str(2**127)})
    ({'run': 3}, ['item is not an item id'])
    """
    values: dict[str, Any] = {}
    problems = []
    for name in ("run", "item"):
        text = params.get(name)
        if text is None or text == "":
            continue
        try:  # an id the column cannot hold (2**127) is never handed to DuckDB
            values[name] = int(parse_id(str(text)))
        except ValueError:
            problems.append(f"{name} is not a{'n' * (name == 'item')} {name} id")
    name = "threshold" if params.get("threshold") not in (None, "") else "tau"
    text = params.get(name)
    if text not in (None, ""):
        try:
            threshold = float(str(text))
        except ValueError:
            threshold = float("nan")
        if 0.0 <= threshold <= 1.0:
            values["threshold"] = round(threshold, 2)
        else:
            problems.append(f"{name} is not a number in [0, 1]")
    return values, problems


def neighbours(order: Sequence[int], current: int) -> tuple[int | None, int | None]:
    """The items before and after ``current`` in ``order`` (``None`` at either end).

    Examples
    --------
    >>> neighbours([5, 3, 9], 3), neighbours([5, 3, 9], 5), neighbours([5], 7)
    ((5, 9), (None, 3), (None, None))
    """
    if current not in order:
        return None, None
    i = list(order).index(current)
    return (order[i - 1] if i > 0 else None), (order[i + 1] if i + 1 < len(order) else None)


def question_label(ext_id: str, question: str, cus: float, width: int = 110) -> str:
    """A question picker's line: id, CUS and the question, cut to ``width`` characters.

    Examples
    --------
    >>> question_label("demo-06", "What did the gold foil experiment reveal?", 0.16)
    'CUS 0.160 · demo-06 · What did the gold foil experiment reveal?'
    """
    text = " ".join(str(question).split())
    line = f"CUS {cus:.3f} · {ext_id} · {text}"
    return line if len(line) <= width else line[: width - 1].rstrip() + "\u2026"
