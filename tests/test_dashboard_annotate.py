"""The Annotate page's helpers (dashboard.annotate): no invented verdicts, progress, the URL."""

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


def frame(*rows: tuple[int, str, str, str]) -> pd.DataFrame:
    """Annotations ``(item_id, gold_json, answer_json, verdict)`` of one annotator."""
    return pd.DataFrame(
        [
            {"annotation_id": n, "item_id": i, "gold_triple": g, "answer_triple": a, "verdict": v}
            for n, (i, g, a, v) in enumerate(rows, 1)
        ],
        columns=["annotation_id", "item_id", "gold_triple", "answer_triple", "verdict"],
    )


def test_every_proposed_pair_starts_undecided():
    table = annotate.pair_rows(RESULT, {}, {}, {})
    assert table["verdict"].tolist() == [None, None]
    assert list(table.columns[:6]) == list(annotate.PAIR_COLUMNS)  # the verdict comes first
    assert annotate.decisions(table) == []  # so Save has nothing to store


def test_a_saved_verdict_is_shown_and_an_add_is_not_a_verdict_on_a_proposal():
    key = annotate.pair_key('["paper","publish in","nature"]', '["paper","appear in","nature"]')
    other = annotate.pair_key('["curie", "win", "prize"]', '["curie", "receive", "prize"]')
    table = annotate.pair_rows(RESULT, {key: "reject", other: "add"}, {}, {})
    assert table["verdict"].tolist() == ["reject", None]


def test_only_decided_rows_are_saved():
    table = annotate.pair_rows(RESULT, {}, {}, {})
    table.loc[1, "verdict"] = "confirm"
    assert annotate.decisions(table) == [
        ('["curie", "win", "prize"]', '["curie", "receive", "prize"]', "confirm")
    ]


def test_the_extracted_labels_stand_beside_the_lemmas():
    raw = annotate.raw_labels([Triple("The paper", "published_in", "Nature")])
    raw_answer = annotate.raw_labels([Triple("paper", "appeared in", "Nature")])
    first = annotate.pair_rows({"aligned": RESULT["aligned"][:1]}, {}, raw, raw_answer).iloc[0]
    assert first["gold"] == "paper | publish in | nature" or first["gold"].endswith("nature")
    assert first["answer as extracted"] == "paper | appeared in | Nature"
    assert first["cosine"] == 0.812


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


def test_item_labels_carry_the_pair_count_not_a_score():
    labels = annotate.item_labels([7, 8], {7: RESULT, 8: {"aligned": []}})
    assert labels == {"item 7 · 2 pairs": 7, "item 8 · no pairs": 8}


def test_progress_counts_decided_proposals_only():
    tau = {1: RESULT, 2: {"aligned": RESULT["aligned"][:1]}, 3: {"aligned": []}}
    g0, a0 = (annotate.triple_key(RESULT["aligned"][0][k]) for k in ("gold", "answer"))
    g1, a1 = (annotate.triple_key(RESULT["aligned"][1][k]) for k in ("gold", "answer"))
    mine = frame((1, g0, a0, "confirm"), (1, g1, a1, "add"), (2, g0, a0, "reject"))
    p = annotate.progress(tau, mine, 1)
    assert (p.item_decided, p.item_pairs) == (1, 2)  # the add is not a verdict on a proposal
    assert (p.run_decided, p.run_pairs, p.run_items_done, p.run_items_with_pairs) == (2, 3, 1, 2)
    assert p.line("ann").startswith("ann: decided 1 of 2 proposed pairs of this answer")


def test_added_pairs_and_saved_verdicts_of_one_answer():
    mine = frame((1, '["g"]', '["a"]', "add"), (1, '["g"]', '["b"]', "confirm"),
                 (1, '["g"]', '["b"]', "reject"))  # fmt: skip
    assert annotate.added_pairs(mine) == [('["g"]', '["a"]')]
    assert annotate.saved_verdicts(mine)[(("g",), ("b",))] == "reject"  # the latest


def test_the_case_and_the_name_come_from_the_url_once():
    state: dict = {}
    annotate.from_query({"run": "2", "item": "14", "annotator": " ann "}, state)
    assert (state["annotate.run_id"], state["annotate.item_id"]) == (2, 14)
    assert state["annotate.name"] == "ann"
    state.pop("annotate.run_id")
    annotate.from_query({"run": "3"}, state)  # read once per session
    assert "annotate.run_id" not in state
    fresh: dict = {}
    annotate.from_query({"run": "x", "item": ""}, fresh)
    assert "annotate.run_id" not in fresh and "annotate.item_id" not in fresh
