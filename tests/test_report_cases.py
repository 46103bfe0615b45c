"""Tests of s3kg_core.report.cases: the triple tables and the gold diff read the scorer's
explanations (MiniLM, small KGs made here)."""

from __future__ import annotations

import pytest

from s3kg_core.kg import Triple
from s3kg_core.report.cases import (
    CaseSide,
    ReportCase,
    answer_rows,
    entity_badges,
    gold_diff,
)
from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig

GOLD = [
    ("Marie Curie", "discovered", "radium"),
    ("radium", "is", "a metal"),
    ("Pierre Curie", "married", "Marie Curie"),
]
CONTEXT = [*GOLD, ("Curie", "worked in", "Paris")]
OLD = [("Marie Curie", "discovered", "radium"), ("Pierre Curie", "married", "Marie Curie")]
NEW = [("Curie", "discovered", "radium"), ("radium", "is", "a metal"), ("Paris", "is", "big")]


@pytest.fixture(scope="module")
def scorer(minilm):
    return KGScorer(minilm, S3KGConfig(tau=0.65))


@pytest.fixture(scope="module")
def explained(scorer):
    g_new, c_new, g_old, c_old = scorer.explain_pairs(
        [(NEW, GOLD), (NEW, CONTEXT), (OLD, GOLD), (OLD, CONTEXT)]
    )
    scores = {"gold_sim": 0.5, "ctx_sim": 0.5, "cus": 0.5}
    case = ReportCase(
        1,
        "q1",
        "Who discovered radium?",
        "ctx",
        "gold",
        CaseSide(2, "new", "ok", scores, g_new, c_new),
        CaseSide(1, "old", "ok", dict(scores, cus=0.7), g_old, c_old),
    )
    return case


def test_every_answer_triple_gets_its_picks(explained):
    rows = answer_rows(explained.new.gold, explained.new.context)
    assert [r.answer for r in rows] == [t.key for t in explained.new.gold.triples_1]
    first = rows[0]
    assert first.gold == Triple("marie curie", "discover", "radium")
    # MiniLM aligns "curie" with "pierre curie" (0.78), not "marie curie": the row says so
    assert first.gold_aligned == (False, True, True) and first.gold_cosine > 0.8
    assert explained.new.gold.entity("curie").partner == "pierre curie"
    assert rows[1].gold_aligned == (True, True, True)
    # each pick is the explanation's own
    for i, row in enumerate(rows):
        pick = explained.new.gold.pick_of(i)
        assert row.gold_cosine == pick.cosine
        assert row.gold == explained.new.gold.triples_2[pick.two].key


def test_an_empty_side_has_no_picks(scorer):
    gold, context = scorer.explain_pairs([(NEW, GOLD), (NEW, [])])
    rows = answer_rows(gold, context)
    assert all(r.context is None and r.context_cosine is None for r in rows)
    assert all(r.context_aligned == (False, False, False) for r in rows)
    assert answer_rows(*scorer.explain_pairs([([], GOLD), ([], CONTEXT)])) == []


def test_the_gold_diff_says_what_each_answer_matched(explained):
    diff = {r.gold.head + " " + r.gold.relation: r for r in gold_diff(
        explained.baseline.gold, explained.new.gold)}  # fmt: skip
    # picked by both, but the new answer's head is not aligned to it at tau: lost
    assert diff["marie curie discover"].change == "lost"
    assert diff["marie curie discover"].new > 0.8 and not diff["marie curie discover"].new_aligned
    assert diff["radium be"].change == "gained"
    assert diff["pierre curie married"].change == "lost"
    assert diff["pierre curie married"].new < 0.3  # only "paris is big" picked it
    assert len(diff) == 3
    # without a baseline nothing is lost or kept
    assert {r.change for r in gold_diff(None, explained.new.gold)} <= {"gained", "unmatched"}


def test_badges_follow_the_alignment(explained):
    badges = entity_badges(explained)
    answer = badges["answer"]
    assert list(answer.values()) == [f"E{i}" for i in range(1, len(answer) + 1)]
    assert badges["gold"]["pierre curie"] == answer["curie"]  # aligned partners share one
    assert badges["baseline"]["radium"] == answer["radium"]
    assert badges["baseline"]["pierre curie"] not in answer.values()  # new to the baseline
