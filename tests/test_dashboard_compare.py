"""Tests of dashboard/compare.py: which runs compare, and the per-question changes."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest
from compare_helpers import comparable_pairs

import dashboard.compare as compare_module
from dashboard.compare import (
    DELTA_COLUMNS,
    default_pair,
    partners,
    question_deltas,
)


def frame() -> pd.DataFrame:
    """Runs 1 and 2 answer items 1-3; run 3 answers item 3 and 9; run 4 item 10 only."""
    rows = [
        (1, 1, 0.6, 0.6, 0.6), (1, 2, 0.5, 0.5, 0.5), (1, 3, 0.4, 0.4, 0.4),
        (2, 1, 0.1, 0.2, 0.15), (2, 2, 0.5, 0.5, 0.5), (2, 3, 0.8, 0.6, 0.7),
        (3, 3, 0.5, 0.5, 0.5), (3, 9, 0.5, 0.5, 0.5), (4, 10, 0.5, 0.5, 0.5),
    ]  # fmt: skip
    return pd.DataFrame(rows, columns=["run_id", "item_id", "gold_sim", "ctx_sim", "cus"])


def runs() -> pd.DataFrame:
    return pd.DataFrame(
        {"run_id": [1, 2, 3, 4], "dataset": ["d"] * 4, "model": ["m", "m", "n", "m"],
         "temperature": [0.7, 0.0, 0.0, 0.0], "extractor": ["x"] * 4}
    )  # fmt: skip


def test_the_module_doctests_pass():
    assert doctest.testmod(compare_module).failed == 0


def test_pairs_are_runs_sharing_questions():
    pairs = comparable_pairs(frame())
    assert pairs == {(1, 2): 3, (2, 1): 3, (1, 3): 1, (3, 1): 1, (2, 3): 1, (3, 2): 1}
    assert partners(pairs, 3) == [1, 2]
    assert partners(pairs, 4) == []


def test_the_default_pair_is_one_model_at_two_temperatures_lower_first():
    assert default_pair(runs(), comparable_pairs(frame())) == (2, 1)
    other_models = runs().assign(model=["a", "b", "c", "d"])
    assert default_pair(other_models, comparable_pairs(frame())) == (1, 2)  # the most shared
    assert default_pair(runs(), {}) is None


def test_deltas_are_b_minus_a_biggest_regression_first():
    questions = pd.DataFrame(
        {"item_id": [1, 2, 3], "ext_id": ["q1", "q2", "q3"], "question": ["a?", "b?", "c?"],
         "context": ["", "", ""]}
    )  # fmt: skip
    deltas = question_deltas(frame(), 1, 2, questions)
    assert tuple(deltas.columns) == DELTA_COLUMNS
    assert deltas["item_id"].tolist() == [1, 2, 3]
    assert deltas["d_cus"].tolist() == pytest.approx([-0.45, 0.0, 0.3])
    assert deltas["d_gold_sim"].tolist() == pytest.approx([-0.5, 0.0, 0.4])
    assert deltas["d_ctx_sim"].tolist() == pytest.approx([-0.4, 0.0, 0.2])
    assert deltas.loc[0, ["cus_a", "cus_b", "question", "ext_id"]].tolist() == [
        0.6, 0.15, "a?", "q1",
    ]  # fmt: skip
    reverse = question_deltas(frame(), 2, 1, questions)
    assert reverse["item_id"].tolist() == [3, 2, 1]


def test_deltas_cover_shared_questions_only_and_survive_missing_texts():
    deltas = question_deltas(frame(), 1, 3, pd.DataFrame(columns=["item_id", "ext_id", "question"]))
    assert deltas["item_id"].tolist() == [3]
    assert deltas.loc[0, "question"] == "" and deltas.loc[0, "ext_id"] == ""


def test_the_question_picker_pages_searches_and_opens_a_kept_questions_page():
    """Issue 33: two runs of 5,000 answers put 5,000 questions in one select box."""
    from compare_helpers import question_choices

    deltas = pd.DataFrame(
        {"item_id": range(120), "ext_id": [f"q{i:03d}" for i in range(120)],
         "question": [f"Question {i} about {'cats' if i % 2 else 'dogs'}?" for i in range(120)]}
    )  # fmt: skip
    pages = [question_choices(deltas, "", p, 50) for p in range(3)]
    assert [len(rows) for rows, _, _ in pages] == [50, 50, 20]
    listed = [i for rows, _, _ in pages for i in rows["item_id"]]
    assert listed == list(range(120))  # each once, in the deltas' order
    rows, total, page = question_choices(deltas, "CATS", 9, 50)
    assert total == 60 and page == 1 and set(rows["item_id"] % 2) == {1}  # clamped to the last
    rows, total, page = question_choices(deltas, "", 0, 50, keep=77)
    assert page == 1 and 77 in set(rows["item_id"])
