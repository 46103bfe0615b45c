"""Tests of dashboard.explorer: identities, the triple table, scores at tau, marked texts."""

from __future__ import annotations

import doctest
import html
import re

import numpy as np
import pytest

import dashboard.explorer as explorer_module
from dashboard.explorer import (
    MAX_NODES,
    NodeKeys,
    case_scores,
    entity_identities,
    linked_view,
    mark_text,
    needed_texts,
    neighbourhood,
    neighbours,
    parse_link,
    partners,
    question_label,
    text_marks,
)
from dashboard.graphs import PALETTE, UNMATCHED_COLOUR
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import KGScorer

XSS = "<img src=x onerror=alert(1)>"

ANSWER = [
    Triple("Marie Curie", "discovered", "radium"),
    Triple("Marie Curie", "won", "Nobel Prize"),
    Triple("radium", "is", "radioactive metal"),
    Triple(XSS, "reduces", "fever"),
]
GOLD = [
    Triple("Curie", "discovered", "radium"),
    Triple("Curie", "was awarded", "the Nobel Prize in Physics"),
    Triple("polonium", "was named after", "Poland"),
    Triple(XSS, "reduces", "fever"),
]
CONTEXT = [
    Triple("Marie Sklodowska Curie", "studied", "radioactivity"),
    Triple("radium", "glows", "blue"),
    Triple("Pierre Curie", "married", "Marie Sklodowska Curie"),
]


@pytest.fixture(scope="module")
def scorer(minilm) -> KGScorer:  # type: ignore[no-untyped-def]
    return KGScorer(minilm, mode="hybrid", tau=0.65)


def at_tau(scorer: KGScorer, tau: float) -> KGScorer:
    """The same encoder and cache at another tau."""
    return KGScorer(scorer.encoder, mode=scorer.config.mode, tau=tau, cache=scorer.cache)


def test_the_module_doctests_pass() -> None:
    result = doctest.testmod(explorer_module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


# --- keys and identities ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["hybrid", "paper", "kgx"])
def test_node_keys_are_the_keys_of_the_stored_alignment_maps(minilm, mode: str) -> None:
    result = KGScorer(minilm, mode=mode).score(ANSWER, GOLD)
    keys = NodeKeys(mode)
    answer_entities = {p for _, k in keys.triples(ANSWER) for p in (k.head, k.tail)}
    gold_entities = {p for _, k in keys.triples(GOLD) for p in (k.head, k.tail)}
    assert set(result.entity_map) == answer_entities
    assert {v for v in result.entity_map.values() if v} <= gold_entities


def test_identities_depend_on_the_answer_alone() -> None:
    ids = entity_identities(ANSWER, NodeKeys())
    assert [i.badge for i in ids.values()] == [f"E{n}" for n in range(1, 7)]
    assert [i.colour for i in ids.values()] == list(PALETTE[:6])
    assert ids["marie curie"].label == "Marie Curie"
    many = [Triple(f"e{i}", "r", f"e{i + 1}") for i in range(len(PALETTE) + 2)]
    colours = [i.colour for i in entity_identities(many, NodeKeys()).values()]
    assert colours[len(PALETTE)] == PALETTE[0]  # the palette cycles; badges stay unique


def test_partners_inverts_a_map_keeping_order() -> None:
    assert partners({"a": "x", "b": None, "c": "x", "d": "y", "e": ""}) == {
        "x": ["a", "c"],
        "y": ["d"],
    }


# --- scores and the triple table ----------------------------------------------------------------


@pytest.mark.parametrize("tau", [0.0, 0.5, 0.65, 0.8, 1.0])
def test_case_scores_are_the_scorers_own(scorer: KGScorer, tau: float) -> None:
    s = at_tau(scorer, tau)
    case = case_scores(s, ANSWER, GOLD, CONTEXT)
    gold, ctx = s.score(ANSWER, GOLD), s.score(ANSWER, CONTEXT)
    assert case.tau == tau
    assert (case.gold.s_wl, case.gold.s_sbert) == (gold.s_wl, gold.s_sbert)
    assert (case.context.s_wl, case.context.s_sbert) == (ctx.s_wl, ctx.s_sbert)
    assert case.gold.entity_map == gold.entity_map
    scores = case.scores(0.3)
    assert scores["gold_sim"] == pytest.approx(gold.blend(0.3))
    h = 2 * gold.blend(0.3) * ctx.blend(0.3) / (gold.blend(0.3) + ctx.blend(0.3))
    assert scores["cus"] == pytest.approx(h)


def test_kgx_mode_keys_rows_and_maps_alike(minilm) -> None:  # type: ignore[no-untyped-def]
    scorer = KGScorer(minilm, mode="kgx", tau=0.5)
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    assert case.keys == NodeKeys("kgx", True)
    assert case.gold.s_wl == scorer.score(ANSWER, GOLD).s_wl
    panels, rows = linked_view(case)
    answer = {n.id for n in panels[1].nodes}
    assert "marie curie" in answer and set(case.entity_map("gold")) == answer
    assert len(rows) == len(ANSWER) and all(r.matches["gold"] for r in rows)


def test_every_answer_triple_is_lined_up_with_its_best_match(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    keys = case.keys
    for source, other in (("gold", GOLD), ("context", CONTEXT)):
        rows = case.rows[source]
        assert [r.answer for r in rows] == list(range(len(ANSWER)))
        sent_o = [keys.sentence(r, k) for r, k in keys.triples(other)]
        for row, (raw, key) in zip(rows, case.triples["answer"], strict=True):
            sims = scorer.cache.vectors(sent_o) @ scorer.cache.vectors([keys.sentence(raw, key)])[0]
            assert row.other == int(np.argmax(sims))
            assert row.cosine == pytest.approx(float(sims.max()), abs=1e-5)
            matched = case.triples[source][row.other][1]
            emap, rmap = case.entity_map(source), case.context.relation_map
            if source == "gold":
                rmap = case.gold.relation_map
            assert row.aligned == (
                emap.get(key.head) == matched.head,
                rmap.get(key.relation) == matched.relation,
                emap.get(key.tail) == matched.tail,
            )
            assert row.passed == all(row.aligned)
    identical = case.rows["gold"][3]  # the XSS triple occurs verbatim in both
    assert identical.other == 3 and identical.cosine == 1.0 and identical.passed


def test_a_high_tau_aligns_fewer_parts(scorer: KGScorer) -> None:
    low = case_scores(at_tau(scorer, 0.3), ANSWER, GOLD, CONTEXT)
    high = case_scores(at_tau(scorer, 0.95), ANSWER, GOLD, CONTEXT)
    count = [sum(sum(r.aligned) for r in c.rows["gold"]) for c in (low, high)]
    assert count[0] > count[1]
    assert [r.other for r in low.rows["gold"]] == [r.other for r in high.rows["gold"]]


def test_empty_kgs_give_empty_rows_and_statuses(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, [], CONTEXT)
    assert case.gold.status == "empty_kg_2"
    assert all(r.other is None and r.cosine is None for r in case.rows["gold"])
    none = case_scores(scorer, [], GOLD, CONTEXT)
    assert none.rows == {"gold": [], "context": []}
    panels, rows = linked_view(none, {"answer": "failed: timeout"})
    assert rows == [] and panels[1].nodes == () and "failed: timeout" in panels[1].subtitle


def test_stored_vectors_are_enough_at_any_tau(scorer: KGScorer, counting_minilm) -> None:
    case_scores(scorer, ANSWER, GOLD, CONTEXT)  # every needed string is in scorer.cache now
    texts = needed_texts(NodeKeys(), [*ANSWER, *GOLD, *CONTEXT])
    stored = EmbeddingCache(counting_minilm)
    stored.update((t, v) for t, v in scorer.cache.items() if t in texts)
    for tau in (0.2, 0.65, 0.9):
        s = KGScorer(counting_minilm, mode="hybrid", tau=tau, cache=stored)
        assert case_scores(s, ANSWER, GOLD, CONTEXT).encoded == 0
    assert counting_minilm.batches == []


# --- the linked view ----------------------------------------------------------------------------


def test_partners_share_badge_and_colour_across_the_three_pictures(scorer: KGScorer) -> None:
    case = case_scores(at_tau(scorer, 0.5), ANSWER, GOLD, CONTEXT)
    panels, rows = linked_view(case)
    by = {p.key: {n.id: n for n in p.nodes} for p in panels}
    assert [p.key for p in panels] == ["gold", "answer", "context"]
    curie = by["answer"]["marie curie"]
    assert curie.badges == ("E1",) and curie.colour == PALETTE[0]
    gold_partner = case.entity_map("gold")["marie curie"]
    assert gold_partner is not None and "E1" in by["gold"][gold_partner].badges
    assert by["gold"][gold_partner].colour == PALETTE[0]
    for p in panels:
        for n in p.nodes:
            assert (n.colour == UNMATCHED_COLOUR) == (not n.badges)
    assert by["gold"]["poland"].badges == ()  # nothing of the answer aligned to it
    assert len(rows) == len(ANSWER)
    assert rows[0].links == {
        "answer": 0,
        "gold": case.rows["gold"][0].other,
        "context": case.rows["context"][0].other,
    }


def test_badges_and_colours_do_not_move_with_tau(scorer: KGScorer) -> None:
    seen: dict[str, tuple[str, str]] = {}
    for tau in (0.2, 0.5, 0.65, 0.8, 0.95):
        panels, _ = linked_view(case_scores(at_tau(scorer, tau), ANSWER, GOLD, CONTEXT))
        answer = next(p for p in panels if p.key == "answer")
        for n in answer.nodes:
            if n.badges:
                assert seen.setdefault(n.id, (n.badges[0], n.colour)) == (n.badges[0], n.colour)
    assert len(seen) >= 3


def test_a_large_kg_shows_the_matched_neighbourhood(scorer: KGScorer) -> None:
    hub_triples = [Triple(f"topic {i}", "relates to", f"detail {i}") for i in range(60)]
    context = [*CONTEXT, *hub_triples]
    views = {}
    for tau in (0.4, 0.9):
        case = case_scores(at_tau(scorer, tau), ANSWER, GOLD, context)
        views[tau] = linked_view(case)[0][2]
    small, all_nodes = views[0.4], len({p for t in context for p in (t.head, t.tail)})
    assert all_nodes > MAX_NODES >= len(small.nodes)
    assert small.note.startswith(f"showing {len(small.nodes)} of {all_nodes} nodes")
    matched = {m.other for m in case.rows["context"]}
    shown = {n.id for n in small.nodes}
    for t in matched:
        head, _, tail, _, _ = small.triples[t]
        assert {head, tail} <= shown
    assert {n.id for n in views[0.9].nodes} == shown  # what is drawn does not depend on tau
    everything = linked_view(case, show_all=True)[0][2]
    assert len(everything.nodes) == all_nodes and everything.note == ""


def test_marked_triples_are_drawn_marked_and_kept_in_a_large_kg(scorer: KGScorer) -> None:
    hub_triples = [Triple(f"topic {i}", "relates to", f"detail {i}") for i in range(60)]
    context = [*CONTEXT, *hub_triples]
    case = case_scores(scorer, ANSWER, GOLD, context)
    far = len(context) - 1  # "topic 59 relates to detail 59": matched by nothing
    assert far not in {m.other for m in case.rows["context"]}
    plain = linked_view(case)[0][2]
    panels, _ = linked_view(case, marked={"context": {far}, "answer": {0}})
    gold, answer, ctx = panels
    assert not any(e.marked for e in plain.edges) and not any(e.marked for e in gold.edges)
    assert [e.triple for e in answer.edges if e.marked] == [0]
    assert [e.triple for e in ctx.edges if e.marked] == [far]  # its nodes are drawn
    assert {"topic 59", "detail 59"} <= {n.label for n in ctx.nodes}
    assert len(ctx.nodes) <= MAX_NODES


@pytest.mark.parametrize(
    ("edges", "seeds", "hops", "reached"),
    [
        ([("a", "b"), ("b", "c")], {"c"}, 1, {"b", "c"}),
        ([("a", "b"), ("b", "c")], {"c"}, 5, {"a", "b", "c"}),
        ([("a", "b")], {"z"}, 2, {"z"}),
        ([], set(), 3, set()),
    ],
)
def test_neighbourhood(edges, seeds, hops, reached) -> None:  # type: ignore[no-untyped-def]
    assert neighbourhood(edges, seeds, hops) == reached


# --- texts, links, picker -------------------------------------------------------------------------


def test_mark_text_escapes_everything_and_marks_longest_first() -> None:
    text = f"Marie Curie met {XSS}; curie's radium & Marie."
    out = mark_text(
        text,
        {
            "Marie Curie": ("E1", PALETTE[0]),
            "Curie": ("E2", PALETTE[1]),
            XSS: ("E3<b>", PALETTE[2]),
            "radium": ("E4", "red"),  # not a hex colour: left unmarked
        },
    )
    assert "<img" not in out and "<b>" not in out
    assert html.escape(XSS) in out and "E3&lt;b&gt;" in out
    assert out.count("<mark") == 3  # Marie Curie, the payload, curie (not inside Marie Curie)
    assert re.search(r">Marie Curie<sup[^>]*>E1</sup>", out)
    assert re.search(r">curie<sup[^>]*>E2</sup>", out)
    assert "radium &amp; Marie." in out


def test_text_marks_carry_the_badges_of_each_picture(scorer: KGScorer) -> None:
    case = case_scores(at_tau(scorer, 0.5), ANSWER, GOLD, CONTEXT)
    assert text_marks(case, "answer")["Marie Curie"] == ("E1", PALETTE[0])
    gold = text_marks(case, "gold")
    assert gold["Curie"][1] == PALETTE[0] and "E1" in gold["Curie"][0]
    assert "Poland" not in gold


@pytest.mark.parametrize(
    ("params", "values", "problems"),
    [
        ({"run": "3", "item": "12", "tau": "0.7"}, {"run": 3, "item": 12, "tau": 0.7}, 0),
        ({"tau": "0.123"}, {"tau": 0.12}, 0),
        ({"run": "", "item": ""}, {}, 0),
        ({"run": "1.5", "item": "<x>", "tau": "-0.1"}, {}, 3),
        ({"tau": "nan"}, {}, 1),
    ],
)
def test_parse_link(params, values, problems) -> None:  # type: ignore[no-untyped-def]
    got, found = parse_link(params)
    assert got == values and len(found) == problems


def test_neighbours_and_question_labels() -> None:
    assert neighbours([4, 8, 15], 8) == (4, 15)
    assert neighbours([], 1) == (None, None)
    long = question_label("q1", "word " * 60, 0.5)
    assert len(long) == 110 and long.endswith("\u2026") and long.startswith("CUS 0.500 · q1 · ")
