"""Tests of s3kg_core.scoring.explain and KGScorer.explain / strings_needed (issue 27).

The explanation is what the scorer computed: on every demo answer and on a sample of the
released runs, in every mode and at two taus, its S_WL, S_SBERT and S3KG are ``score()``'s bit
for bit, and what it says (picks, T2^, alignment, WL labels, kernels, cosines) is consistent with
the result it explains.
"""

from __future__ import annotations

import dataclasses
import doctest
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import SCORING_MODES, CountingEncoder

import s3kg_core.scoring.explain as explain_module
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.kg import Triple
from s3kg_core.scoring.explain import Explanation, KeyedTriple, LabelMatch, Pick
from s3kg_core.scoring.ot_mode import BEST_MATCH_WEIGHT, KERNEL_WEIGHT, TRIPLE_TRANSPORT_WEIGHT
from s3kg_core.scoring.s3kg import TEXT_WEIGHT, KGScorer
from s3kg_core.store import queries
from s3kg_core.store.store import Store

TAUS = (0.65, 0.8)

Case = tuple[tuple[Triple, ...], tuple[Triple, ...], tuple[Triple, ...], tuple[Any, Any, Any]]


def test_the_module_doctests_pass() -> None:
    result = doctest.testmod(explain_module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def stored_cases(path: Path) -> list[Case]:
    """Every stored answer: ``(answer KG, gold KG, context KG, (answer, gold, context) texts)``."""
    store = Store(path, read_only=True)
    with store.connect() as con:
        runs = [int(r) for (r,) in con.execute("SELECT run_id FROM runs").fetchall()]
        kgs = store.load_kgs(con, runs)
        items = queries.item_texts(con).set_index("item_id")
        answers = queries.answer_texts(con)
    cases = []
    for run, item, answer in answers.itertuples(index=False):

        def triples(source: str, run: int = int(run), item: int = int(item)) -> tuple[Triple, ...]:
            rec = kgs.get((run, item, source))
            return rec.triples if rec is not None else ()

        row = items.loc[item]
        texts = (answer or None, row["gold_answer"] or None, row["context"] or None)
        cases.append((triples("answer"), triples("gold"), triples("context"), texts))
    return cases


def stored_cache(path: Path, encoder: Any) -> EmbeddingCache:
    """An embedding cache holding every vector the database stored."""
    cache = EmbeddingCache(encoder)
    store = Store(path, read_only=True)
    with store.connect() as con:
        cache.update(store.load_embeddings(con, encoder.name))
    return cache


def check_consistent(ex: Explanation, scorer: KGScorer) -> None:
    """What the explanation says agrees with the result it explains."""
    r = ex.result
    assert len(ex.triples_1) == r.n_triples_1 and len(ex.triples_2) == r.n_triples_2
    assert ex.tau == scorer.config.tau and ex.signature == scorer.signature
    assert all(t.key == scorer.config.key(t.raw) for t in (*ex.triples_1, *ex.triples_2))
    if not ex.ok:
        assert ex.picks == () and ex.matched == () and ex.entities == ()
        if scorer.config.mode == "text":
            assert ex.s_wl == ex.s_sbert == ex.text_cosine
        return
    if scorer.config.mode == "wwl":  # whole graphs, no T2^: both transports, the plan aligns
        assert ex.picks == () and ex.matched == tuple(range(len(ex.triples_2)))
        assert r.matched == tuple(t.key for t in ex.triples_2)
        assert ex.kernels == {"wwl": ex.s_wl, "labels": ex.s_sbert}
        assert {m.label: m.partner for m in ex.entities} == r.entity_map
        check_plan(ex)
        return
    assert [p.one for p in ex.picks] == list(range(len(ex.triples_1)))
    assert ex.matched == tuple(dict.fromkeys(p.two for p in ex.picks))
    assert tuple(ex.triples_2[i].key for i in ex.matched) == r.matched
    assert {m.label: m.partner for m in ex.entities} == r.entity_map
    assert {m.label: m.partner for m in ex.relations} == r.relation_map
    for m in (*ex.entities, *ex.relations):
        assert (m.partner is not None) == (m.cosine is not None and m.cosine >= ex.tau)
        assert m.partner is None or m.partner == m.nearest
    for p in ex.picks:
        a, b = ex.triples_1[p.one].sentence, ex.triples_2[p.two].sentence
        assert p.exact == (a == b and scorer.config.mode != "kgx")
        if not p.exact:  # the pick's cosine is the sentences' cosine (the rows' dot product)
            va, vb = scorer.cache.vectors([a, b])
            assert p.cosine == pytest.approx(float(va @ vb), abs=1e-5)
    assert set(ex.wl_labels_1) == {m.label for m in ex.entities}
    assert set(ex.wl_labels_2) == set(ex.entity_ids_2)
    kernels, mode = ex.kernels, scorer.config.mode
    if mode == "kgx":
        assert kernels == {"kgx": ex.s_wl}
    else:
        assert ex.wl_labels_1 == {m.label: m.id for m in ex.entities}
        if mode == "paper":
            assert kernels == {"paper": ex.s_wl}
        elif mode == "ot":  # S_WL: the triple transport, the best match and hybrid's kernel
            assert kernels["wl"] == 0.5 * (kernels["paper"] + kernels["struct"])
            parts = (kernels["triple_transport"], kernels["best_match"], kernels["wl"])
            weights = (TRIPLE_TRANSPORT_WEIGHT, BEST_MATCH_WEIGHT, KERNEL_WEIGHT)
            s_wl = sum(w * v for w, v in zip(weights, parts, strict=True))
            assert ex.s_wl == pytest.approx(min(1.0, max(0.0, s_wl)), abs=1e-15)
        else:
            assert 0.5 * (kernels["paper"] + kernels["struct"]) == ex.s_wl
    if mode == "text":
        assert ex.text_cosine is not None and ex.triples_cosine is not None
        assert (1.0 - TEXT_WEIGHT) * ex.triples_cosine + TEXT_WEIGHT * ex.text_cosine == ex.s_sbert
    elif mode == "ot":  # S_SBERT: the entity labels' transport, the plan the explorer draws
        assert kernels["labels"] == ex.s_sbert and ex.text_cosine is None
        check_plan(ex)
    else:
        assert ex.triples_cosine == ex.s_sbert and ex.text_cosine is None


def check_plan(ex: Explanation) -> None:
    """The transport plan moves every G1 entity's mass (1 / n1 each) onto G2's entities."""
    assert ex.transport, "an explained ot or wwl pair carries its plan"
    labels_1 = {t.key.head for t in ex.triples_1} | {t.key.tail for t in ex.triples_1}
    labels_2 = {t.key.head for t in ex.triples_2} | {t.key.tail for t in ex.triples_2}
    sent: dict[str, float] = {}
    for one, two, mass in ex.transport:
        assert mass > 0 and two in labels_2
        sent[one] = sent.get(one, 0.0) + mass
    assert set(sent) == labels_1
    assert all(v == pytest.approx(1.0 / len(labels_1), abs=1e-9) for v in sent.values())


def explain_equals_score(cases: list[Case], scorer: KGScorer) -> int:
    """Explain every answer against its gold and its context KG; each equals ``score()``."""
    pairs = [(a, g) for a, g, _, _ in cases] + [(a, c) for a, _, c, _ in cases]
    texts = [(ta, tg) for _, _, _, (ta, tg, _) in cases]
    texts += [(ta, tc) for _, _, _, (ta, _, tc) in cases]
    explained = scorer.explain_pairs(pairs, texts=texts)
    scored = scorer.score_pairs(pairs, texts=texts)
    for i, (ex, result) in enumerate(zip(explained, scored, strict=True)):
        assert ex.result == result  # every field, floats bit for bit
        assert (ex.s_wl, ex.s_sbert, ex.score) == (result.s_wl, result.s_sbert, result.score)
        assert ex.blend(0.3) == result.blend(0.3)
        if i % 4 == 0:  # score() is score_pairs() of one pair: checked on a quarter of them
            assert scorer.score(*pairs[i], texts=texts[i]) == result
        check_consistent(ex, scorer)
    return sum(e.ok for e in explained)


@pytest.fixture(scope="module")
def demo_cache(demo_every_mode, minilm) -> EmbeddingCache:  # type: ignore[no-untyped-def]
    return stored_cache(demo_every_mode[0], CountingEncoder(minilm))


@pytest.mark.parametrize("tau", TAUS)
@pytest.mark.parametrize("mode", SCORING_MODES)
def test_every_demo_answer_is_explained_as_scored(demo_every_mode, demo_cache, mode, tau) -> None:  # type: ignore[no-untyped-def]
    cases = stored_cases(demo_every_mode[0])
    assert len(cases) == 60
    scorer = KGScorer(demo_cache.encoder, mode=mode, tau=tau, cache=demo_cache)
    assert explain_equals_score(cases, scorer) > 60  # most pairs have both KGs
    assert demo_cache.encoder.batches == []  # every vector was stored by `score`


@pytest.fixture(scope="module")
def released_cache(released_every_mode, minilm) -> EmbeddingCache:  # type: ignore[no-untyped-def]
    return stored_cache(released_every_mode[0], CountingEncoder(minilm))


@pytest.mark.shared_data
@pytest.mark.parametrize("tau", TAUS)
@pytest.mark.parametrize("mode", SCORING_MODES)
def test_released_answers_are_explained_as_scored(  # type: ignore[no-untyped-def]
    released_every_mode, released_cache, mode, tau
) -> None:
    cases = stored_cases(released_every_mode[0])
    assert len(cases) == 20
    scorer = KGScorer(released_cache.encoder, mode=mode, tau=tau, cache=released_cache)
    assert explain_equals_score(cases, scorer) >= 30
    assert released_cache.encoder.batches == []


# -- what the scorer keeps, picks and embeds ---------------------------------------------------


def test_kgx_keeps_duplicates_and_empty_parts_and_the_others_drop_them(minilm) -> None:  # type: ignore[no-untyped-def]
    """Regression (issue 27): the dashboard keyed kgx triples as the other modes do, dropping
    duplicates and empty-part triples the kgx scorer keeps, so its rows and nodes were not the
    scorer's."""
    answer = [("A", "won", "B"), ("A", "won", "B"), ("a", "", "C"), ("A", "Won", "b")]
    gold = [("a", "won", "b")]
    kgx = KGScorer(minilm, mode="kgx").explain(answer, gold)
    assert [t.key.to_list() for t in kgx.triples_1] == [
        ["a", "won", "b"], ["a", "won", "b"], ["a", "", "c"], ["a", "won", "b"],
    ]  # fmt: skip
    assert [t.sentence for t in kgx.triples_1] == ["A won B", "A won B", "a  C", "A Won b"]
    assert len(kgx.picks) == 4 and kgx.result.n_triples_1 == 4
    paper = KGScorer(minilm, mode="paper").explain(answer, gold)
    assert [(t.raw, t.key) for t in paper.triples_1] == [
        (Triple("A", "won", "B"), Triple("a", "win", "b"))
    ]
    assert paper.picks == (Pick(0, 0, 1.0, True),)  # the same sentence: picked exactly


def test_a_verbatim_sentence_picks_its_twin_except_in_kgx(minilm) -> None:  # type: ignore[no-untyped-def]
    answer = [("José", "plays", "chess")]
    gold = [("Jose", "plays", "chess"), ("José", "plays", "chess")]
    paper = KGScorer(minilm, mode="paper").explain(answer, gold)
    assert paper.picks[0].two == 1 and paper.picks[0].exact and paper.picks[0].cosine == 1.0
    kgx = KGScorer(minilm, mode="kgx").explain(answer, gold)
    assert not kgx.picks[0].exact


def test_label_alignment_says_partner_nearest_and_cosine(minilm) -> None:  # type: ignore[no-untyped-def]
    ex = KGScorer(minilm, mode="paper", tau=0.9).explain(
        [("Marie Curie", "discovered", "radium")], [("Curie", "discovered", "radium")]
    )
    curie, radium = ex.entity("marie curie"), ex.entity("radium")
    assert curie is not None and radium is not None
    assert curie.partner is None and curie.nearest == "curie" and 0.5 < (curie.cosine or 0) < 0.9
    assert curie.id == "marie curie" == ex.wl_labels_1["marie curie"]
    assert radium == LabelMatch("radium", "node_1", "radium", "radium", 1.0, True)
    assert ex.entity("nobody") is None and ex.relation("discover") is not None
    assert ex.entity_ids_2 == {"curie": "node_0", "radium": "node_1"}


def test_empty_sides_and_no_alignment_are_explained_too(minilm) -> None:  # type: ignore[no-untyped-def]
    scorer = KGScorer(minilm, mode="hybrid")
    ex = scorer.explain([], [("a", "r", "b")])
    assert ex.status == "empty_kg_1" and ex.triples_2[0].key == Triple("a", "r", "b")
    assert ex.score == 0.0 and ex.picks == () and ex.wl_labels_1 == {}
    pure = KGScorer(minilm, mode="kgx", align=False)
    ex = pure.explain([("a", "r", "b")], [("a", "r", "b"), ("c", "r", "d")])
    assert ex.picks == () and ex.matched == (0, 1)  # T2^ is all of T2
    assert ex.entity("a") == LabelMatch("a", "a", "a", None, None, False)
    assert ex.result == pure.score([("a", "r", "b")], [("a", "r", "b"), ("c", "r", "d")])


def test_an_explanation_survives_json(minilm) -> None:  # type: ignore[no-untyped-def]
    scorer = KGScorer(minilm, mode="text")
    ex = scorer.explain(
        [("Curie", "found", "radium"), ("x", "is", "y")],
        [("Curie", "discovered", "radium")],
        texts=("Curie found radium.", "Curie discovered radium."),
    )
    again = Explanation.from_dict(json.loads(json.dumps(ex.to_dict())))
    assert again == ex and again.text_cosine == ex.text_cosine and again.kernels == ex.kernels
    assert KeyedTriple.from_dict(ex.triples_1[0].to_dict()) == ex.triples_1[0]
    assert ex.to_dict()["result"]["s_wl"] == ex.s_wl


@pytest.mark.parametrize("mode", SCORING_MODES)
def test_strings_needed_are_all_the_scorer_embeds(make_counting_minilm, mode) -> None:  # type: ignore[no-untyped-def]
    """Regression (issue 27): the dashboard worked out the strings to read from the database
    itself and ignored the mode (kgx's lowercased labels and raw sentences, text mode's texts
    were missing), so moving tau encoded them again."""
    pairs = [
        ([("Marie Curie", "Discovered", "Radium"), ("Radium", "is", "metal")],
         [("Curie", "found", "radium"), ("Paris", "is in", "France"), ("a", "", "b")]),
        ([], [("x", "r", "y")]),
    ]  # fmt: skip
    texts = [("Curie found radium.", "Marie Curie discovered radium."), ("", "Nothing.")]
    fresh = make_counting_minilm()
    scorer = KGScorer(fresh, mode=mode)
    needed = scorer.strings_needed(pairs, texts=texts)
    scorer.score_pairs(pairs, texts=texts)
    assert set(fresh.texts) <= needed  # it never embeds anything else
    sentences = {" ".join(t) for t in pairs[0][0] + pairs[0][1]}
    if mode == "kgx":
        assert sentences <= needed and "marie curie" in needed
    elif mode == "wwl":  # the labels alone, never a triple's sentence
        assert {"marie curie", "discover", "radium"} <= needed
        assert not sentences & needed and "marie curie discover radium" not in needed
    else:
        assert not sentences & needed and "marie curie discover radium" in needed
    assert ("Curie found radium." in needed) == (mode == "text")
    assert "x" not in needed  # a pair with an empty side embeds no triple
    stored = make_counting_minilm()
    cache = EmbeddingCache(stored)
    cache.update(zip(sorted(needed), fresh.inner.encode(sorted(needed)), strict=True))
    again = KGScorer(stored, mode=mode, cache=cache)
    for tau in (0.3, 0.9):
        again = KGScorer(stored, dataclasses.replace(again.config, tau=tau), cache=cache)
        again.explain_pairs(pairs, texts=texts)
    assert stored.batches == []
