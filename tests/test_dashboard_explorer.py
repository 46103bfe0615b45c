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
    WHOLE_MAX_NODES,
    case_scores,
    entity_identities,
    linked_view,
    mark_text,
    marked_by_lemmas,
    neighbourhood,
    neighbours,
    parse_link,
    partners,
    question_label,
    raw_ends,
    text_marks,
    window,
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
def test_the_drawn_keys_are_the_keys_of_the_stored_alignment_maps(minilm, mode: str) -> None:
    scorer = KGScorer(minilm, mode=mode)
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    result = scorer.score(ANSWER, GOLD)
    answer_entities = {p for t in case.triples["answer"] for p in (t.key.head, t.key.tail)}
    gold_entities = {p for t in case.triples["gold"] for p in (t.key.head, t.key.tail)}
    assert set(result.entity_map) == answer_entities
    assert {v for v in result.entity_map.values() if v} <= gold_entities


def test_identities_depend_on_the_answer_alone(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    ids = entity_identities(case.triples["answer"])
    assert [i.badge for i in ids.values()] == [f"E{n}" for n in range(1, 7)]
    assert [i.colour for i in ids.values()] == list(PALETTE[:6])
    assert ids["marie curie"].label == "Marie Curie"
    many = [Triple(f"e{i}", "r", f"e{i + 1}") for i in range(len(PALETTE) + 2)]
    keyed = case_scores(scorer, many, [], []).triples["answer"]
    colours = [i.colour for i in entity_identities(keyed).values()]
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


@pytest.mark.parametrize("mode", ["ot", "wwl"])
@pytest.mark.parametrize("tau", [0.25, 0.65, 0.9])
def test_each_flow_of_the_transport_plan_has_its_labels_cosine_against_tau(
    minilm, mode: str, tau: float
) -> None:  # type: ignore[no-untyped-def]
    """Issue 58 (item 5): the transport plan's table showed no cosine per flow, so a flow the
    plan forces ("bible -> charter 100 %": every entity's mass must go somewhere) looked like
    a real match. Each flow carries the cosine of its two labels, from the vectors the scorer
    used, and is marked below the scorer's own tau (read from its config, not a constant)."""
    answer = [Triple("The Bible", "was translated by", "monks")]
    gold = [Triple("Magna Carta", "was sealed by", "King John")]
    scorer = KGScorer(minilm, mode=mode, tau=tau)
    case = case_scores(scorer, answer, gold, [])
    rows = explorer_module.transport_rows(case)
    assert rows and {r["comparison"] for r in rows} == {"GoldSim"}  # the context KG is empty
    for row in rows:
        a, b = scorer.cache.vectors([row["entity"], row["partner"]])
        assert row["cosine"] == pytest.approx(float(a @ b), abs=1e-6)
        assert row["below_tau"] is (row["cosine"] < scorer.config.tau)
    forced = [r for r in rows if r["entity"] == "the bible"]
    assert [r["partner"] for r in forced] == ["magna carta"]  # all its mass: "100 %"
    assert forced[0]["share"] == pytest.approx(1.0) and 0.25 < forced[0]["cosine"] < 0.5
    assert forced[0]["below_tau"] is (tau > 0.5)  # marked at 0.65 and 0.9, not at 0.25


def test_a_flow_between_the_same_label_has_cosine_one(minilm) -> None:  # type: ignore[no-untyped-def]
    case = case_scores(KGScorer(minilm, mode="ot", tau=0.99), ANSWER, GOLD, CONTEXT)
    same = [r for r in explorer_module.transport_rows(case) if r["entity"] == r["partner"]]
    assert same and all(r["cosine"] == 1.0 and not r["below_tau"] for r in same)
    assert len(case.flow_cosines["gold"]) == len(case.gold.transport)
    assert len(case.flow_cosines["context"]) == len(case.context.transport)


def test_a_node_of_two_answer_entities_is_written_alike_in_tooltip_badge_and_text(
    minilm,
) -> None:  # type: ignore[no-untyped-def]
    """Issue 58 (item 5): one notation for a node that stands for several answer entities
    (the picture said "E1+1", the table "E1+E5"): the node's tooltip, the badge the page draws
    and the marked gold text all write badge_text's "E1+E5"."""
    from dashboard.graphs import badge_text, linked_graphs_html

    answer = [
        Triple("Marie Curie", "discovered", "radium"),
        Triple("Madame Curie", "won", "Nobel Prize"),
    ]
    case = case_scores(KGScorer(minilm, mode="hybrid", tau=0.6), answer, GOLD[:1], [])
    panels, rows = linked_view(case)
    (curie,) = [n for n in panels[0].nodes if n.id == "curie"]
    assert curie.badges == ("E1", "E3") and badge_text(curie.badges) == "E1+E3"
    assert curie.title.startswith("E1+E3 · Curie\n")
    assert text_marks(case, "gold")["Curie"] == ("E1+E3", curie.colour)
    page = linked_graphs_html(panels, rows, tau=case.tau).html
    assert '"badgeText":"E1+E3"' in page


def test_kgx_mode_keys_rows_and_maps_alike(minilm) -> None:  # type: ignore[no-untyped-def]
    scorer = KGScorer(minilm, mode="kgx", tau=0.5)
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    assert case.gold.mode == "kgx" and case.triples["answer"][0].key.relation == "discovered"
    assert case.gold.s_wl == scorer.score(ANSWER, GOLD).s_wl
    panels, rows = linked_view(case)
    answer = {n.id for n in panels[1].nodes}
    assert "marie curie" in answer and set(case.entity_map("gold")) == answer
    assert len(rows) == len(ANSWER) and all(r.matches["gold"] for r in rows)


def test_kgx_rows_and_nodes_are_the_scorers_duplicates_and_empty_parts_included(minilm) -> None:  # type: ignore[no-untyped-def]
    """Regression (issue 27): the explorer keyed kgx answers as the other modes do and dropped
    the duplicate and empty-part triples the kgx scorer keeps: rows and pictures were not the
    triples S_WL and S_SBERT were computed on."""
    answer = [*ANSWER, ANSWER[0], Triple("Marie Curie", "", "Warsaw")]
    scorer = KGScorer(minilm, mode="kgx", tau=0.5)
    case = case_scores(scorer, answer, GOLD, CONTEXT)
    assert len(case.triples["answer"]) == len(answer) == case.gold.result.n_triples_1
    assert [r.answer for r in case.rows["gold"]] == list(range(len(answer)))
    assert case.rows["gold"][4].other == case.rows["gold"][0].other  # the duplicate's pick
    panels, rows = linked_view(case)
    drawn = panels[1]
    assert len(rows) == len(answer) and [r.number for r in rows] == list(range(1, 7))
    assert [e.label for e in drawn.edges if e.source == "marie curie"].count("discovered") == 2
    assert ("marie curie", "", "warsaw") in {(e.source, e.label, e.target) for e in drawn.edges}
    paper = case_scores(KGScorer(minilm, mode="paper", tau=0.5), answer, GOLD, CONTEXT)
    assert len(paper.triples["answer"]) == len(ANSWER)  # the other modes drop both


def test_every_answer_triple_is_lined_up_with_its_best_match(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    for source in ("gold", "context"):
        rows = case.rows[source]
        assert [r.answer for r in rows] == list(range(len(ANSWER)))
        sent_o = [t.sentence for t in case.triples[source]]
        for row, t in zip(rows, case.triples["answer"], strict=True):
            sims = scorer.cache.vectors(sent_o) @ scorer.cache.vectors([t.sentence])[0]
            assert row.other == int(np.argmax(sims))
            assert row.cosine == pytest.approx(float(sims.max()), abs=1e-5)
            matched = case.triples[source][row.other].key
            ex = case.explanation(source)
            emap, rmap = ex.entity_map, ex.relation_map
            assert row.aligned == (
                emap.get(t.key.head) == matched.head,
                rmap.get(t.key.relation) == matched.relation,
                emap.get(t.key.tail) == matched.tail,
            )
            assert row.partners == (
                emap.get(t.key.head),
                rmap.get(t.key.relation),
                emap.get(t.key.tail),
            )
            head = ex.entity(t.key.head)
            assert head is not None and row.parts is not None and row.parts[0] == head.cosine
            assert row.passed == all(row.aligned)
    identical = case.rows["gold"][3]  # the XSS triple occurs verbatim in both
    assert identical.other == 3 and identical.cosine == 1.0 and identical.passed
    assert identical.exact and not case.rows["gold"][0].exact


def test_a_high_tau_aligns_fewer_parts(scorer: KGScorer) -> None:
    low = case_scores(at_tau(scorer, 0.3), ANSWER, GOLD, CONTEXT)
    high = case_scores(at_tau(scorer, 0.95), ANSWER, GOLD, CONTEXT)
    count = [sum(sum(r.aligned) for r in c.rows["gold"]) for c in (low, high)]
    assert count[0] > count[1]
    assert [r.other for r in low.rows["gold"]] == [r.other for r in high.rows["gold"]]


def test_empty_kgs_give_empty_rows_and_statuses(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, [], CONTEXT)
    assert case.gold.status == "empty_kg_2"  # the pair scorer's words
    assert case.status("gold") == "gold_kg_empty"  # the page's
    assert all(r.other is None and r.cosine is None for r in case.rows["gold"])
    none = case_scores(scorer, [], GOLD, CONTEXT)
    assert none.rows == {"gold": [], "context": []}
    panels, rows = linked_view(none, {"answer": "failed: timeout"})
    assert rows == [] and panels[1].nodes == () and "failed: timeout" in panels[1].subtitle


def test_stored_vectors_are_enough_at_any_tau(scorer: KGScorer, counting_minilm) -> None:  # type: ignore[no-untyped-def]
    case_scores(scorer, ANSWER, GOLD, CONTEXT)  # every needed string is in scorer.cache now
    texts = scorer.strings_needed([(ANSWER, GOLD), (ANSWER, CONTEXT)])
    stored = EmbeddingCache(counting_minilm)
    stored.update((t, v) for t, v in scorer.cache.items() if t in texts)
    for tau in (0.2, 0.65, 0.9):
        s = KGScorer(counting_minilm, mode="hybrid", tau=tau, cache=stored)
        assert case_scores(s, ANSWER, GOLD, CONTEXT).encoded == 0
    assert counting_minilm.batches == []


def test_text_mode_cases_are_explained_with_their_texts(minilm) -> None:  # type: ignore[no-untyped-def]
    """Regression (issue 27): the explorer scored without the texts, so a text-mode signature
    raised ConfigError instead of showing the case."""
    scorer = KGScorer(minilm, mode="text", tau=0.65)
    texts = ("Marie Curie discovered radium.", "Curie discovered radium.", "Curie studied.")
    case = case_scores(scorer, ANSWER, GOLD, [], texts=texts)
    assert case.gold.text_cosine is not None and case.gold.text_cosine > 0.5
    assert case.gold.result == scorer.score(ANSWER, GOLD, texts=texts[:2])
    # the texts' cosine, and the reason kept
    assert case.status("context") == "context_kg_empty" and case.context.score > 0


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
    hub_triples = [Triple(f"topic {i}", "relates to", f"detail {i}") for i in range(40)]
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
    keys = case.triples["context"]
    for t in matched:
        assert {keys[t].key.head, keys[t].key.tail} <= shown
    assert {n.id for n in views[0.9].nodes} == shown  # what is drawn does not depend on tau
    everything = linked_view(case, show_all=True)[0][2]
    assert len(everything.nodes) == all_nodes and everything.note == ""


def test_a_large_answer_kg_is_drawn_as_the_others_are(scorer: KGScorer) -> None:
    """Issue 28.5: the answer KG was laid out whole (4,000 triples: 71 s a panel; 8,000 never
    drew). Now it shows its best-matched triples' nodes under the same cap, the table only
    its drawn triples, and no panel carries the triples it neither draws nor names."""
    chain = [Triple(f"step {i}", "leads to", f"step {i + 1}") for i in range(300)]
    answer = [*ANSWER, *chain]
    case = case_scores(scorer, answer, GOLD, [*CONTEXT, *chain[:80]])
    _, drawn, ctx = linked_view(case)[0]
    assert len(drawn.nodes) <= MAX_NODES and drawn.note.startswith("showing ")
    assert "best-matched answer triples" in drawn.note and len(ctx.nodes) <= MAX_NODES
    panels, rows = linked_view(case)
    shown = {n.id for n in panels[1].nodes}
    assert 0 < len(rows) < len(answer)
    for row in rows:
        t = case.triples["answer"][row.number - 1]  # the row's own number: its answer triple
        assert {t.key.head, t.key.tail} <= shown
        assert panels[1].triples[row.links["answer"]][:3] == (
            t.key.head, t.raw.relation, t.key.tail,
        )  # fmt: skip
        for key, panel in (("gold", panels[0]), ("context", panels[2])):
            match, link = row.matches[key], row.links[key]
            other = case.rows[key][row.number - 1].other
            assert match is not None and match["other"] == link
            assert panel.triples[link][0] == case.triples[key][other].key.head
    assert len(panels[1].triples) < len(answer)  # only what it draws or the table names
    picks = sorted(case.rows["gold"], key=lambda m: -(m.cosine or 0))
    best = case.triples["answer"][picks[0].answer].key
    assert {best.head, best.tail} <= shown  # the best-matched triple is drawn
    for tau in (0.3, 0.9):  # and what is drawn does not move with tau
        again = linked_view(case_scores(at_tau(scorer, tau), answer, GOLD, [*CONTEXT, *chain[:80]]))
        assert {n.id for n in again[0][1].nodes} == shown
    whole = linked_view(case, show_all=True)[0]
    assert all(len(p.nodes) <= WHOLE_MAX_NODES for p in whole)
    assert len(whole[1].nodes) == WHOLE_MAX_NODES and "too many to draw whole" in whole[1].note
    assert {n.id for n in whole[1].nodes} >= shown  # the capped view, then the others


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
    assert [answer.triples[e.triple][:3] for e in answer.edges if e.marked] == [
        ("marie curie", "discovered", "radium")
    ]
    assert [ctx.triples[e.triple][3:] for e in ctx.edges if e.marked] == [
        ("topic 59", "detail 59")
    ]  # its nodes are drawn
    assert {"topic 59", "detail 59"} <= {n.label for n in ctx.nodes}
    assert len(ctx.nodes) <= MAX_NODES


def test_tau_named_triples_are_found_among_the_drawn_ones(scorer: KGScorer) -> None:
    case = case_scores(scorer, ANSWER, GOLD, CONTEXT)
    named = marked_by_lemmas(
        case.triples, {"gold": [("curie", "discover", "radium")], "answer": []}
    )
    assert named == {"gold": {0}, "answer": set()}


@pytest.mark.parametrize(
    ("seeds", "cap", "expected"),
    [
        (["c"], 3, ({"b", "c", "d"}, 1, False)),
        (["c"], 10, ({"a", "b", "c", "d", "e"}, 2, False)),
        (["a", "e"], 2, ({"a", "e"}, 0, False)),
        (["e", "d", "c", "b"], 3, ({"e", "d", "c"}, 0, True)),
        ([], 3, (set(), 2, False)),
    ],
)
def test_window(seeds, cap, expected) -> None:  # type: ignore[no-untyped-def]
    chain = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
    assert window(chain, seeds, cap) == expected


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


# The demo's T=0 answer to demo-01 and its gold: the passive is keyed in its canonical
# direction by the ot mode, ("alexander fleming", "discover", "penicillin").
FLEMING_ANSWER = [
    Triple("Penicillin", "discovered by", "Alexander Fleming"),
    Triple("Penicillin", "discovered in", "1928"),
]
FLEMING_GOLD = [
    Triple("Alexander Fleming", "discovered", "penicillin"),
    Triple("Alexander Fleming", "discovered penicillin in", "1928"),
]


def test_a_triple_read_turned_round_is_drawn_and_tabled_as_written(minilm) -> None:  # type: ignore[no-untyped-def]
    """Regression: ot mode keys a passive turned round, and the explorer paired the key's head
    with the raw head. The demo's "Penicillin discovered by Alexander Fleming" was drawn as a
    node "Penicillin" with the badge of gold's "Alexander Fleming" (E1), the node of the key
    "penicillin" was labelled "Alexander Fleming" (so "Alexander Fleming discovered in 1928"),
    "Penicillin" had E1 in one row and E2 in the next, and the answer text marked it E1."""
    case = case_scores(KGScorer(minilm, mode="ot"), FLEMING_ANSWER, FLEMING_GOLD, FLEMING_GOLD)
    passive = case.triples["answer"][0]
    assert passive.key == Triple("alexander fleming", "discover", "penicillin")
    assert raw_ends(passive) == ("penicillin", "alexander fleming")
    assert raw_ends(case.triples["answer"][1]) == ("penicillin", "1928")

    panels, rows = linked_view(case)
    answer = next(p for p in panels if p.key == "answer")
    labels = {n.id: n.label for n in answer.nodes}
    assert labels["penicillin"] == "Penicillin"
    assert labels["alexander fleming"] == "Alexander Fleming"
    drawn = {(e.source, e.label, e.target) for e in answer.edges}
    assert ("penicillin", "discovered by", "alexander fleming") in drawn  # as written
    assert ("penicillin", "discovered in", "1928") in drawn
    head, _, tail, head_label, tail_label = answer.triples[rows[0].links["answer"]]
    assert (head, head_label, tail, tail_label) == (
        "penicillin", "Penicillin", "alexander fleming", "Alexander Fleming"
    )  # fmt: skip
    ids = entity_identities(case.triples["answer"])
    assert ids["penicillin"].label == "Penicillin" and ids["alexander fleming"].label == (
        "Alexander Fleming"
    )
    assert text_marks(case, "answer")["Penicillin"][0] == ids["penicillin"].badge
    gold = next(p for p in panels if p.key == "gold")
    badges = {n.id: n.badges for n in gold.nodes}
    assert badges["penicillin"] == (ids["penicillin"].badge,)

    # the pick is aligned part by part; the table's h, r, t follow the triple as shown
    assert case.rows["gold"][0].passed
    m = rows[0].matches["gold"]
    assert m is not None and m["aligned"] == [True, True, True]
    assert m["reading"] == "alexander fleming discover penicillin"
    assert m["partners"] == ["penicillin", "discover", "alexander fleming"]
    assert "reading" not in (rows[1].matches["gold"] or {})


@pytest.mark.parametrize(
    ("params", "values", "problems"),
    [
        (
            {"run": "3", "item": "12", "threshold": "0.7"},
            {"run": 3, "item": 12, "threshold": 0.7},
            0,
        ),
        ({"threshold": "0.123"}, {"threshold": 0.12}, 0),
        ({"run": "", "item": ""}, {}, 0),
        ({"run": "1.5", "item": "<x>", "threshold": "-0.1"}, {}, 3),
        ({"threshold": "nan"}, {}, 1),
        # issue 42: the old name of the threshold, still read; the new name wins over it
        ({"run": "3", "item": "12", "tau": "0.7"}, {"run": 3, "item": 12, "threshold": 0.7}, 0),
        ({"tau": "0.4", "threshold": "0.8"}, {"threshold": 0.8}, 0),
        ({"tau": "nan"}, {}, 1),
        # issue 59: an id past its INTEGER column is refused, never handed to DuckDB
        ({"run": "3", "item": str(2**127)}, {"run": 3}, 1),
        ({"run": "9" * 400, "item": "9" * 5000}, {}, 2),
        ({"run": "-1", "item": str(2**31 - 1)}, {"item": 2**31 - 1}, 1),
        ({"run": str(2**31), "item": "0"}, {"item": 0}, 1),
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
