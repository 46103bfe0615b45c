"""dashboard.data.search: answers by words, and the pickers' pages of a run's questions."""

from __future__ import annotations

import pandas as pd

from dashboard.data import reads, search
from s3kg_core.stages.scored import reblend


def test_a_run_s_question_pages_list_its_questions_lowest_cus_first(two_runs_view):
    view = two_runs_view
    want = reblend(reads.run_components(view, 1), 0.5).sort_values("cus", kind="stable")
    rows, total = search.question_page(view, 1, 0.5, "", 0.0, 1.0, 0, page_size=2)
    assert total == 3 and len(rows) == 2
    rest, _ = search.question_page(view, 1, 0.5, "", 0.0, 1.0, 1, page_size=2)
    listed = pd.concat([rows, rest])["item_id"].tolist()
    assert sorted(listed) == sorted(want["item_id"].tolist())
    assert listed[0] == int(want["item_id"].iloc[0])  # the lowest CUS first
    for position, item in enumerate(listed):
        assert search.question_position(view, 1, 0.5, item, "", 0.0, 1.0) == position
    none, total = search.question_page(view, 1, 0.5, "no such words", 0.0, 1.0, 0)
    assert none.empty and total == 0


def test_search_finds_the_answers_of_a_question_by_its_words(two_runs_view):
    hits, total = search.search(two_runs_view, "question 1", None, None, None, 0)
    assert total >= 2 and set(hits["run_id"]) == {1, 2}
    only_b, _ = search.search(two_runs_view, "question 1", (2,), None, None, 0)
    assert set(only_b["run_id"]) == {2}
