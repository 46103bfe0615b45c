"""Tests of s3kg_core.factuality.metrics: fact and dataset scores, breakdowns, degree buckets."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from s3kg_core.errors import FactualityError
from s3kg_core.factuality.metrics import breakdown, degree_buckets, fact_scores, factuality_scores


def _table(rows: list[tuple[str, bool, str]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["group_id", "label", "llm_label"])


@pytest.mark.parametrize(
    "rows, expected",  # (truthful, informative, correct) of the single fact
    [
        ([("g", True, "TRUE"), ("g", False, "FALSE")], (1.0, 1.0, 1.0)),
        ([("g", True, "TRUE"), ("g", False, "TRUE")], (0.0, 1.0, 0.0)),
        ([("g", True, "TRUE"), ("g", False, "IDK")], (1.0, 0.0, 0.0)),
        ([("g", True, "FALSE"), ("g", False, "FALSE")], (0.0, 1.0, 0.0)),
        ([("g", True, "IDK"), ("g", False, "IDK")], (1.0, 0.0, 0.0)),
        ([("g", True, "IDK"), ("g", False, "TRUE")], (0.0, 0.0, 0.0)),
        (
            [
                ("g", True, "TRUE"),
                ("g", False, "TRUE"),
                ("g", False, "FALSE"),
                ("g", False, "IDK"),
                ("g", False, "FALSE"),
            ],
            (0.75, 0.75, 0.5),
        ),
        ([("g", True, "TRUE")], (1.0, 1.0, 1.0)),  # no negatives
    ],
)
def test_fact_scores_hand_computed(rows: list[tuple[str, bool, str]], expected: tuple) -> None:
    scores = fact_scores(_table(rows))
    got = tuple(scores.iloc[0][["truthful", "informative", "correct"]])
    assert got == pytest.approx(expected)


def test_dataset_scores_and_statement_level() -> None:
    table = _table(
        [
            ("a", True, "TRUE"),
            ("a", False, "FALSE"),  # perfect
            ("b", True, "TRUE"),
            ("b", False, "TRUE"),  # affirms a falsehood
            ("c", True, "IDK"),
            ("c", False, "FALSE"),  # unsure of the fact
            ("d", False, "FALSE"),  # no positive: skipped
            ("e", True, "UNPARSABLE"),
            ("e", False, "TRUE"),  # positive unusable: skipped
        ]
    )
    s = factuality_scores(table)
    assert s.n_facts == 3 and s.skipped_facts == 2
    assert s.correctness == pytest.approx(1 / 3)
    assert s.truthfulness == pytest.approx(2 / 3)
    assert s.informativeness == pytest.approx(2 / 3)
    # statements: 8 answered; right: a+,a-,b+,c-,d- = 5; IDK: 1; wrong: b-,e- = 2
    assert s.n_statements == 8
    assert s.statement_correctness == pytest.approx(5 / 8)
    assert s.statement_truthfulness == pytest.approx(6 / 8)
    assert s.statement_informativeness == pytest.approx(7 / 8)


def test_empty_is_nan_not_error() -> None:
    s = factuality_scores(_table([]))
    assert s.n_facts == 0 and math.isnan(s.correctness) and math.isnan(s.statement_truthfulness)


def test_breakdowns() -> None:
    table = pd.DataFrame(
        {
            "group_id": ["a", "a", "b", "b", "c", "c", "d", "d"],
            "label": [True, False] * 4,
            "relation": ["Control"] * 2 + ["Has"] * 2 + ["Control"] * 4,
            "head_degree": [1, 1, 10, 10, 100, 100, 1000, 1000],
            "tail_degree": [1, 1, 10, 10, 100, 100, 1000, 1000],
            "llm_label": ["TRUE", "FALSE", "IDK", "FALSE", "TRUE", "TRUE", "FALSE", "FALSE"],
        }
    )
    rel = breakdown(table, "relation")
    assert [r["key"] for r in rel] == ["Control", "Has"]
    assert rel[0]["n_facts"] == 3 and rel[0]["correctness"] == pytest.approx(1 / 3)
    assert rel[1]["truthfulness"] == 1.0 and rel[1]["informativeness"] == 0.0
    deg = breakdown(table, "degree", n_buckets=2)
    assert [r["key"] for r in deg] == ["q1 [1, 10]", "q2 [100, 1000]"]
    assert [r["correctness"] for r in deg] == [0.5, 0.0]
    with pytest.raises(FactualityError):
        breakdown(table, "tail")  # type: ignore[arg-type]
    with pytest.raises(FactualityError, match="relation"):
        breakdown(table.drop(columns="relation"), "relation")


def test_degree_buckets_ties_share_bucket() -> None:
    buckets = degree_buckets(pd.Series([5, 5, 5, 5, 9]), 4)
    assert buckets.iloc[0] == buckets.iloc[3]
    assert buckets.nunique() <= 2
    with pytest.raises(FactualityError):
        degree_buckets(pd.Series([1]), 0)
