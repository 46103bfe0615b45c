"""Tests of s3kg_core/analysis/question_diff.py on a hand-made pair of runs, real MiniLM TAU.

Run A's answer restates two of the three gold triples; run B's keeps the first, drops the
Louvre and adds a false claim. So the diff must say: one triple in both, the Louvre only in A,
the false claim only in B; the Louvre gold triple went from aligned (A) to missing (B), the
Seine one is missing in both (unchanged), and the pair count says so.
"""

from __future__ import annotations

import pytest

from s3kg_core.analysis.question_diff import gold_categories, pair_changes, question_diff
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import KGScorer
from s3kg_core.scoring.tau import TripletAnalyzer

GOLD = [
    ("Paris", "is the capital of", "France"),
    ("Paris", "has", "the Louvre"),
    ("the Seine", "flows through", "Paris"),
]
ANSWER_A = [("Paris", "is capital of", "France"), ("Paris", "has", "Louvre")]
ANSWER_B = [("Paris", "is capital of", "France"), ("the Eiffel Tower", "stands in", "Berlin")]


@pytest.fixture(scope="module")
def diff(minilm):
    scorer = KGScorer(minilm, mode="paper")
    analyzer = TripletAnalyzer(minilm)
    keys = [[t.key for t in scorer.explain(a, GOLD).triples_1] for a in (ANSWER_A, ANSWER_B)]
    taus = [analyzer.analyse(GOLD, a) for a in (ANSWER_A, ANSWER_B)]
    return question_diff(keys[0], keys[1], taus[0], taus[1]), taus


def test_the_answer_triples_both_runs_have_and_those_only_one_has(diff):
    d, _ = diff
    assert d.both == (Triple("paris", "be capital of", "france"),)
    assert [t.tail for t in d.only_a] == ["louvre"]
    assert d.only_b == (Triple("the eiffel tower", "stand in", "berlin"),)


def test_each_gold_triples_tau_category_in_a_and_in_b(diff):
    d, (tau_a, tau_b) = diff
    fates = {f.gold.relation: (f.a, f.b) for f in d.gold}
    assert fates["be the capital of"] == ("aligned", "aligned")
    assert fates["have"] == ("aligned", "missing")  # B lost the Louvre
    assert fates["flow through"] == ("missing", "missing")  # neither says it: unchanged
    assert dict(d.changes()) == {("aligned", "missing"): 1}
    # the categories are TAU's own, read back from its result
    assert set(gold_categories(tau_a).values()) == {"aligned", "missing"}
    assert dict(pair_changes({7: tau_a}, {7: tau_b}, [7, 8])) == {("aligned", "missing"): 1}
    assert d.to_dict()["gold"][1] == {"gold": ["paris", "have", "the louvre"], "a": "aligned",
                                       "b": "missing"}  # fmt: skip


def test_a_swapped_gold_triple_is_roles_swapped():
    from s3kg_core.scoring.tau import Mismatch, TauResult

    gold = Triple("brutus", "kill", "caesar")
    swap = Mismatch(gold, Triple("caesar", "kill", "brutus"), "roles", "swapped", 0.97)
    assert gold_categories(TauResult(roles_swapped=(swap,))) == {gold: "roles_swapped"}
