"""The Annotate page's rules (dashboard.annotate): no invented verdicts, progress, the URL."""

from __future__ import annotations

import pandas as pd
import pytest

from dashboard import annotate
from s3kg_core.kg import Triple

RESULT = {
    "aligned": [
        {"gold": ["paper", "publish in", "nature"], "answer": ["paper", "appear in", "nature"],
         "similarity": 0.8123},
        {"gold": ["curie", "win", "prize"], "answer": ["curie", "receive", "prize"],
         "similarity": 0.7712},
    ]
}  # fmt: skip
G0, A0 = '["paper", "publish in", "nature"]', '["paper", "appear in", "nature"]'
G1, A1 = '["curie", "win", "prize"]', '["curie", "receive", "prize"]'


def frame(*rows: tuple[int, str, str, str]) -> pd.DataFrame:
    """Annotations ``(item_id, gold_json, answer_json, verdict)`` of one annotator."""
    return pd.DataFrame(
        [
            {"annotation_id": n, "item_id": i, "gold_triple": g, "answer_triple": a, "verdict": v}
            for n, (i, g, a, v) in enumerate(rows, 1)
        ],
        columns=["annotation_id", "item_id", "gold_triple", "answer_triple", "verdict"],
    )


def test_every_proposed_pair_starts_undecided_and_untouched_pairs_save_nothing():
    # regression (issue 16): every proposal started as "confirm" and Save stored them all
    pairs = annotate.proposed_pairs(RESULT, {}, {}, {})
    assert [p.saved for p in pairs] == [None, None]
    assert len(annotate.changes(pairs, [None, None], [])) == 0


def test_only_decided_pairs_are_saved_and_a_cleared_verdict_is_withdrawn():
    saved = {annotate.pair_key(G0, A0): "reject"}
    pairs = annotate.proposed_pairs(RESULT, saved, {}, {})
    assert [p.saved for p in pairs] == ["reject", None]
    assert annotate.changes(pairs, ["reject", "confirm"], []).save == [(G1, A1, "confirm")]
    cleared = annotate.changes(pairs, [None, None], [])
    assert cleared.save == [] and cleared.withdraw == [(G0, A0)]
    flipped = annotate.changes(pairs, ["confirm", None], [('["x"]', '["y"]')])
    assert flipped.save == [(G0, A0, "confirm"), ('["x"]', '["y"]', "add")]


def test_an_add_on_a_proposed_pair_is_no_verdict_on_it():
    saved = {annotate.pair_key(G1, A1): "add"}
    assert [p.saved for p in annotate.proposed_pairs(RESULT, saved, {}, {})] == [None, None]


def test_the_stored_json_spacing_does_not_matter():
    saved = annotate.saved_verdicts(frame((1, '["paper","publish in","nature"]', A0, "confirm")))
    assert annotate.proposed_pairs(RESULT, saved, {}, {})[0].saved == "confirm"


def test_the_extracted_labels_stand_beside_the_lemmas():
    raw_gold = annotate.raw_labels([Triple("The paper", "published_in", "Nature")])
    assert list(raw_gold) == [("the paper", "publish in", "nature")]
    raw = annotate.raw_labels([Triple("paper", "appeared in", "Nature")])
    result = {"aligned": [{**RESULT["aligned"][0], "gold": ["the paper", "publish in", "nature"]}]}
    pair = annotate.proposed_pairs(result, {}, raw_gold, raw)[0]
    assert pair.raw_text("gold") == "The paper | published_in | Nature"
    assert pair.raw_text("answer") == "paper | appeared in | Nature"
    assert annotate.show(pair.gold) == "the paper | publish in | nature"
    assert pair.cosine == pytest.approx(0.8123)
    # a pair whose extracted triple is not known shows its lemmas
    assert annotate.proposed_pairs(RESULT, {}, {}, {})[1].raw_text("gold") == "curie | win | prize"


@pytest.mark.parametrize(
    "order, tau, current, first, after",
    [
        ([1, 2, 3], {1: {"aligned": []}, 2: {"aligned": [{}]}, 3: {"aligned": [{}]}}, 2, 2, 3),
        ([1, 2, 3], {1: {"aligned": [{}]}, 2: {"aligned": []}, 3: {"aligned": [{}]}}, 3, 1, 1),
        ([1, 2], {1: {"aligned": []}, 2: {"aligned": []}}, 1, None, None),
        ([4, 5], {4: {"aligned": [{}]}}, 9, 4, 4),  # current not in the list: the first
    ],
)
def test_first_and_next_answer_with_pairs(order, tau, current, first, after):
    assert annotate.first_with_pairs(order, tau) == first
    assert annotate.next_with_pairs(order, tau, current) == after


def test_item_labels_carry_the_pair_count_score_and_question():
    assert annotate.item_label(7, 1, 0.25, "Who?") == "item 7 · 1 pair · CUS 0.250 · Who?"
    assert annotate.item_label(8, 0, 1.0, "Why?").startswith("item 8 · no pairs · ")


def test_progress_counts_decided_proposals_only():
    tau = {1: RESULT, 2: {"aligned": RESULT["aligned"][:1]}, 3: {"aligned": []}}
    mine = frame((1, G0, A0, "confirm"), (1, G1, A1, "add"), (2, G0, A0, "reject"))
    p = annotate.progress(tau, mine, 1)
    assert (p.item_decided, p.item_pairs) == (1, 2)  # the add is not a verdict on a proposal
    assert (p.run_decided, p.run_pairs, p.run_items_done, p.run_items_with_pairs) == (2, 3, 1, 2)
    assert p.line("ann").startswith("Decided 1 of 2 by you (ann) on this answer")
    assert annotate.progress(tau, frame(), 3).item_pairs == 0


def test_added_pairs_and_saved_verdicts_of_one_answer():
    mine = frame((1, '["g"]', '["a"]', "add"), (1, '["g"]', '["b"]', "confirm"),
                 (1, '["g"]', '["b"]', "reject"))  # fmt: skip
    assert annotate.added_pairs(mine) == [('["g"]', '["a"]')]
    assert annotate.saved_verdicts(mine)[(("g",), ("b",))] == "reject"  # the latest
    assert annotate.added_pairs(frame()) == [] and annotate.saved_verdicts(frame()) == {}


def test_a_case_in_the_url_opens_once_and_a_new_link_opens_again():
    state: dict = {}
    assert annotate.case_from_query({"run": "2", "item": "14"}, state) == (2, 14)
    assert annotate.case_from_query({"run": "2", "item": "14"}, state) == (None, None)
    annotate.note_case(state, 2, 15)  # the page moved on and wrote its case into the URL
    assert annotate.case_from_query({"run": "2", "item": "15"}, state) == (None, None)
    assert annotate.case_from_query({"run": "2", "item": "14"}, state) == (2, 14)  # a link
    for bad in ({"run": "x", "item": "1"}, {"run": "1"}, {}):
        assert annotate.case_from_query(bad, {}) == (None, None)
