"""The sample explorer's logic, without streamlit: identities, the triple table, scores at tau.

One question has an answer KG (T1, which drives every match), a gold KG and a context KG. This
module

* keys labels exactly as the scorer does (:class:`NodeKeys`: lemmatised or lowercased, by mode),
* gives every answer entity a stable identity, badge ``E<n>`` and colour, by its order of first
  appearance in the answer KG, so that moving tau never renumbers or recolours an entity
  (:func:`entity_identities`),
* scores the answer against the gold and the context KG at any tau from an embedding cache that
  holds the stored vectors, and lines every answer triple up with its matched gold and context
  triple, with the cosines and whether each part was aligned at that tau (:func:`case_scores`),
* picks the part of a large KG worth drawing: the matched triples' nodes plus k hops
  (:func:`neighbourhood`),
* marks the words of aligned entities in a text, escaped (:func:`mark_text`).

Pages get these through :func:`dashboard.data.explorer_case`, which fills the cache from the
database.
"""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dashboard.graphs import (
    PALETTE,
    UNMATCHED_COLOUR,
    GraphPanel,
    LinkedRow,
    PanelEdge,
    PanelNode,
)
from s3kg_core.kg import SOURCES, Triple
from s3kg_core.normalize import normalize_label, normalize_triples
from s3kg_core.scoring.align import best_matches
from s3kg_core.scoring.cus import harmonic_mean
from s3kg_core.scoring.result import ScoreResult

if TYPE_CHECKING:
    from s3kg_core.scoring.s3kg import KGScorer

__all__ = [
    "MAX_NODES",
    "SOURCES",
    "TABLE_COLUMNS",
    "TITLES",
    "CaseScores",
    "Identity",
    "NodeKeys",
    "TripleMatch",
    "case_scores",
    "entity_identities",
    "linked_view",
    "mark_text",
    "marked_by_lemmas",
    "needed_texts",
    "neighbourhood",
    "neighbours",
    "parse_link",
    "partners",
    "question_label",
    "text_marks",
]

#: Picture titles.
TITLES = {"gold": "Gold KG", "answer": "Answer KG", "context": "Context KG"}

#: A gold or context KG with more nodes than this is drawn as a neighbourhood of its matched
#: triples unless the page asks for the whole KG.
MAX_NODES = 40

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
class NodeKeys:
    """How the scorer keys labels under a signature's mode and normalisation.

    ``kgx`` mode lowercases labels (and embeds the raw triple sentence); the other modes
    normalise (:func:`s3kg_core.normalize.normalize_label`, lemmatised unless ``lemmatize`` is
    false) and embed the normalised sentence. The alignment maps a score stores are keyed the
    same way, so the page can find a map's labels among the drawn nodes.

    Examples
    --------
    >>> NodeKeys("hybrid").entity("Cats"), NodeKeys("kgx").entity("Cats")
    ('cat', 'cats')
    >>> [n for _, n in NodeKeys("paper").triples([Triple("A", "is", "B"), Triple("a", "is", "b")])]
    [Triple(head='a', relation='be', tail='b')]
    """

    mode: str = "hybrid"
    lemmatize: bool = True

    def entity(self, label: str) -> str:
        """The key of an entity label."""
        if self.mode == "kgx":
            return label.lower()
        return normalize_label(label, lemmatize=self.lemmatize, role="entity")

    def relation(self, label: str) -> str:
        """The key of a relation label."""
        if self.mode == "kgx":
            return label.lower()
        return normalize_label(label, lemmatize=self.lemmatize, role="relation")

    def triples(self, triples: Iterable[Triple]) -> list[tuple[Triple, Triple]]:
        """``(raw, keyed)`` per distinct keyed triple, first raw kept, empty parts dropped."""
        out: dict[Triple, Triple] = {}
        for item in triples:
            raw = Triple.from_any(item)
            key = Triple(self.entity(raw.head), self.relation(raw.relation), self.entity(raw.tail))
            if key.head and key.relation and key.tail and key not in out:
                out[key] = raw
        return [(raw, key) for key, raw in out.items()]

    def sentence(self, raw: Triple, key: Triple) -> str:
        """The text the scorer embeds for a triple."""
        return " ".join(raw.to_list()) if self.mode == "kgx" else key.sentence()


@dataclass(frozen=True)
class Identity:
    """An answer entity's identity on the page: its badge, colour and label."""

    badge: str
    colour: str
    label: str


def entity_identities(answer: Sequence[Triple], keys: NodeKeys) -> dict[str, Identity]:
    """Badge ``E1, E2, ...`` and colour for every answer entity, by first appearance.

    Heads come before tails. The numbering depends on the answer KG alone, never on tau, so an
    entity keeps its badge and colour when the alignment changes; the page shows them only for
    entities that are aligned.

    Examples
    --------
    >>> answer = [Triple("Curie", "found", "radium"), Triple("radium", "is", "metal")]
    >>> ids = entity_identities(answer, NodeKeys())
    >>> [(k, i.badge) for k, i in ids.items()]
    [('curie', 'E1'), ('radium', 'E2'), ('metal', 'E3')]
    >>> ids["curie"].colour == PALETTE[0]
    True
    """
    out: dict[str, Identity] = {}
    for raw, key in keys.triples(answer):
        for label, raw_label in ((key.head, raw.head), (key.tail, raw.tail)):
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
    """One answer triple and the triple of the other KG that S3KG matched it to.

    Attributes
    ----------
    answer
        Index of the answer triple in :attr:`CaseScores.triples` ``["answer"]``.
    other
        Index of the matched triple in the other KG's list, or ``None`` (the other KG is empty).
    cosine
        Cosine of the two triple sentences (the matching never uses tau: it takes the best).
    parts
        Cosines of head, relation and tail with the matched triple's head, relation and tail.
    aligned
        Whether head, relation and tail were each aligned to exactly that part at this tau, as
        the WL kernel sees them (the soft alignment's maps).
    """

    answer: int
    other: int | None
    cosine: float | None
    parts: tuple[float, float, float] | None
    aligned: tuple[bool, bool, bool]

    @property
    def passed(self) -> bool:
        """All three parts aligned at tau."""
        return all(self.aligned)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "answer": self.answer,
            "other": self.other,
            "cosine": self.cosine,
            "parts": list(self.parts) if self.parts is not None else None,
            "aligned": list(self.aligned),
        }


@dataclass(frozen=True)
class CaseScores:
    """One question recomputed at one tau: both S3KG results and the triple table.

    Attributes
    ----------
    tau
        The threshold used.
    gold, context
        S3KG of the answer against the gold KG and against the context KG.
    triples
        Source -> ``(raw, keyed)`` triples as drawn (see :meth:`NodeKeys.triples`).
    rows
        ``"gold"`` / ``"context"`` -> one :class:`TripleMatch` per answer triple.
    encoded
        Strings the encoder had to embed (0 when every vector came from the database).
    keys
        How labels were keyed (the signature's mode and normalisation).
    """

    tau: float
    gold: ScoreResult
    context: ScoreResult
    triples: dict[str, list[tuple[Triple, Triple]]]
    rows: dict[str, list[TripleMatch]] = field(default_factory=dict)
    encoded: int = 0
    keys: NodeKeys = field(default_factory=NodeKeys)

    def entity_map(self, source: str) -> dict[str, str | None]:
        """The answer -> ``source`` entity alignment at this tau."""
        return dict(self.gold.entity_map if source == "gold" else self.context.entity_map)

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
) -> CaseScores:
    """Score one question at ``scorer``'s tau and line up its triples.

    Parameters
    ----------
    scorer
        A :class:`~s3kg_core.scoring.s3kg.KGScorer` with the signature's mode and tau; give it
        an embedding cache filled with the stored vectors and nothing is encoded.
    answer, gold, context
        The three KGs, raw triples.

    Returns
    -------
    CaseScores
        The scorer's own results (so the page shows exactly the library's numbers) and, per
        answer triple, its best gold and context match with cosines and per-part alignment.

    Examples
    --------
    >>> from s3kg_core.scoring.s3kg import KGScorer
    >>> scorer = KGScorer("minilm", tau=0.65)
    >>> case = case_scores(scorer, [Triple("Curie", "discovered", "radium")],
    ...                    [Triple("Marie Curie", "discovered", "radium")], [])
    >>> case.rows["gold"][0].aligned, case.rows["context"][0].other
    ((True, True, True), None)
    >>> case.context.status
    'empty_kg_2'
    """
    config = scorer.config
    keys = NodeKeys(config.mode, config.lemmatize)
    before = scorer.cache.stats.encoded
    triples = {
        "answer": keys.triples(answer),
        "gold": keys.triples(gold),
        "context": keys.triples(context),
    }
    gold_result, ctx_result = scorer.score_pairs(
        [(list(answer), list(gold)), (list(answer), list(context))]
    )
    rows = {
        "gold": _match_rows(scorer, keys, triples["answer"], triples["gold"], gold_result),
        "context": _match_rows(scorer, keys, triples["answer"], triples["context"], ctx_result),
    }
    return CaseScores(
        tau=float(config.tau),
        gold=gold_result,
        context=ctx_result,
        triples=triples,
        rows=rows,
        encoded=scorer.cache.stats.encoded - before,
        keys=keys,
    )


def _match_rows(
    scorer: KGScorer,
    keys: NodeKeys,
    answer: list[tuple[Triple, Triple]],
    other: list[tuple[Triple, Triple]],
    result: ScoreResult,
) -> list[TripleMatch]:
    if not answer:
        return []
    if not other or not result.ok:
        return [TripleMatch(i, None, None, None, (False, False, False)) for i in range(len(answer))]
    cache = scorer.cache
    sent_a = [keys.sentence(r, k) for r, k in answer]
    sent_o = [keys.sentence(r, k) for r, k in other]
    idx, sim = best_matches(cache.vectors(sent_a), cache.vectors(sent_o))
    exact: dict[str, int] = {}
    if keys.mode != "kgx":  # as the scorer: a verbatim sentence picks its twin
        for j, s in enumerate(sent_o):
            exact.setdefault(s, j)
    entity_map, relation_map = result.entity_map, result.relation_map
    rows = []
    for i, ((_, a), s) in enumerate(zip(answer, sent_a, strict=True)):
        j = exact.get(s, int(idx[i]))
        cosine = 1.0 if s in exact else float(sim[i])
        m = other[j][1]
        labels_a = [a.head, a.relation, a.tail]
        labels_m = [m.head, m.relation, m.tail]
        vectors = cache.vectors(labels_a + labels_m)
        parts = tuple(float(np.clip(vectors[p] @ vectors[p + 3], -1.0, 1.0)) for p in range(3))
        aligned = (
            entity_map.get(a.head) == m.head,
            relation_map.get(a.relation) == m.relation,
            entity_map.get(a.tail) == m.tail,
        )
        rows.append(TripleMatch(i, j, cosine, (parts[0], parts[1], parts[2]), aligned))
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


def needed_texts(keys: NodeKeys, triples: Iterable[Triple]) -> set[str]:
    """Every string the scorer embeds for these triples: sentences and keyed labels.

    Examples
    --------
    >>> sorted(needed_texts(NodeKeys(), [Triple("Cats", "chase", "mice")]))
    ['cat', 'cat chase mouse', 'chase', 'mouse']
    """
    texts: set[str] = set()
    for raw, key in keys.triples(triples):
        texts.update((keys.sentence(raw, key), key.head, key.relation, key.tail))
    return texts


def _identities_of(case: CaseScores) -> tuple[NodeKeys, dict[str, Identity]]:
    answer = [raw for raw, _ in case.triples["answer"]]
    return case.keys, entity_identities(answer, case.keys)


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
    _, identities = _identities_of(case)
    badges = _node_badges(case, identities)[source]
    marks: dict[str, tuple[str, str]] = {}
    for raw, key in case.triples[source]:
        for label, node in ((raw.head, key.head), (raw.tail, key.tail)):
            ids = badges.get(node)
            if ids:
                marks.setdefault(label, ("+".join(i.badge for i in ids), ids[0].colour))
    return marks


def marked_by_lemmas(
    drawn: Mapping[str, Sequence[tuple[Triple, Triple]]],
    lemmas: Mapping[str, Iterable[Sequence[str]]],
) -> dict[str, set[int]]:
    """Which drawn triples TAU named: source -> indices into ``drawn[source]``.

    TAU reports triples normalised (lemmas: ``"publish in"``); a drawn triple (``(raw, keyed)``,
    as :attr:`CaseScores.triples`) is named when its extracted form normalises to one of
    ``lemmas[source]``. For :func:`linked_view`'s ``marked``.

    Examples
    --------
    >>> t = Triple("The paper", "published_in", "Nature")
    >>> drawn = {"gold": [(Triple("x", "y", "z"), t), (t, t)]}
    >>> marked_by_lemmas(drawn, {"gold": [("the paper", "publish in", "nature")], "answer": []})
    {'gold': {1}, 'answer': set()}
    """
    out: dict[str, set[int]] = {}
    for source, named in lemmas.items():
        wanted = {tuple(t) for t in named}
        out[source] = {
            i
            for i, (raw, _) in enumerate(drawn.get(source, ()))
            if any(tuple(n.to_list()) in wanted for n in normalize_triples([raw]))
        }
    return out


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
        Draw whole KGs. Otherwise a gold or context KG of more than ``max_nodes`` nodes shows the
        nodes of its matched triples plus as many hops (2, 1 or 0) as stay within ``max_nodes``.
        The matched triples do not depend on tau, so neither does what is drawn.
    max_nodes
        See ``show_all``.
    marked
        Source -> indices into ``case.triples[source]`` to draw as marked edges
        (:class:`~dashboard.graphs.PanelEdge`); their nodes are always drawn.

    Returns
    -------
    tuple
        :class:`~dashboard.graphs.GraphPanel` for gold, answer and context, and one
        :class:`~dashboard.graphs.LinkedRow` per answer triple.
    """
    statuses = statuses or {}
    marked = marked or {}
    _, identities = _identities_of(case)
    badges = _node_badges(case, identities)
    matched = {
        source: {m.other for m in case.rows.get(source, []) if m.other is not None}
        for source in ("gold", "context")
    }
    panels = []
    for source in SOURCES:
        triples = case.triples[source]
        labels: dict[str, str] = {}
        for raw, key in triples:
            labels.setdefault(key.head, raw.head)
            labels.setdefault(key.tail, raw.tail)
        edges = [(key.head, key.tail) for _, key in triples]
        shown = set(labels)
        note = ""
        if source != "answer" and not show_all and len(labels) > max_nodes:
            keep = set(matched[source]) | set(marked.get(source, ()))
            seeds = {p for t in keep for p in (triples[t][1].head, triples[t][1].tail)}
            hops = 0
            for h in (2, 1):
                if len(neighbourhood(edges, seeds, h)) <= max_nodes:
                    hops = h
                    break
            shown = neighbourhood(edges, seeds, hops)
            ways = {0: "the matched triples' nodes", 1: "matched triples + 1 hop"}
            note = (
                f"showing {len(shown)} of {len(labels)} nodes: "
                f"{ways.get(hops, f'matched triples + {hops} hops')} (switch on 'Whole KGs')"
            )
        nodes = []
        for node_id, label in labels.items():
            if node_id not in shown:
                continue
            ids = badges[source].get(node_id, [])
            title = label
            if ids:
                title = f"{' + '.join(i.badge for i in ids)} · {label}\n" + "\n".join(
                    f"{i.badge}: the answer's \u201c{i.label}\u201d" for i in ids
                )
            nodes.append(
                PanelNode(
                    node_id,
                    label,
                    ids[0].colour if ids else UNMATCHED_COLOUR,
                    tuple(i.badge for i in ids),
                    title,
                )
            )
        panel_edges = tuple(
            PanelEdge(key.head, key.tail, raw.relation, t, marked=t in marked.get(source, ()))
            for t, (raw, key) in enumerate(triples)
            if key.head in shown and key.tail in shown
        )
        status = statuses.get(source, "ok")
        subtitle = f"{len(triples)} triple{'s' * (len(triples) != 1)}"
        if triples:  # an empty picture is narrow: "0 triples" says it all
            subtitle += f" · {len(labels)} nodes"
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
                    (key.head, raw.relation, key.tail, raw.head, raw.tail) for raw, key in triples
                ),
                note=note,
                empty="no triples" if status == "ok" else f"no triples ({status})",
            )
        )
    rows = []
    for i in range(len(case.triples["answer"])):
        gold = case.rows["gold"][i] if i < len(case.rows.get("gold", [])) else None
        ctx = case.rows["context"][i] if i < len(case.rows.get("context", [])) else None
        rows.append(
            LinkedRow(
                links={
                    "answer": i,
                    "gold": gold.other if gold else None,
                    "context": ctx.other if ctx else None,
                },
                matches={
                    "gold": gold.to_dict() if gold else None,
                    "context": ctx.to_dict() if ctx else None,
                },
            )
        )
    return panels, rows


def parse_link(params: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
    """Read a case link ``?run=<run_id>&item=<item_id>&tau=<t>``.

    Returns
    -------
    tuple
        The values that parse (``run`` and ``item`` as int, ``tau`` as a float in [0, 1]
        rounded to 0.01) and one message per value that does not. A message names the
        parameter but never repeats its text (a link is anyone's text; the page shows the
        messages as Markdown).

    Examples
    --------
    >>> parse_link({"run": "2", "item": "7", "tau": "0.8"})
    ({'run': 2, 'item': 7, 'tau': 0.8}, [])
    >>> parse_link({"run": "x", "tau": "3"})
    ({}, ['run is not a run id', 'tau is not a number in [0, 1]'])
    """
    values: dict[str, Any] = {}
    problems = []
    for name in ("run", "item"):
        text = params.get(name)
        if text is None or text == "":
            continue
        try:
            values[name] = int(text)
        except ValueError:
            problems.append(f"{name} is not a{'n' * (name == 'item')} {name} id")
    text = params.get("tau")
    if text not in (None, ""):
        try:
            tau = float(str(text))
        except ValueError:
            tau = float("nan")
        if 0.0 <= tau <= 1.0:
            values["tau"] = round(tau, 2)
        else:
            problems.append("tau is not a number in [0, 1]")
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
