"""Tests of s3kg_core.factuality.statements: templates, negative sampling, Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from factuality_helpers import toy_kg_csv
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.errors import FactualityError, InputFormatError
from s3kg_core.factuality.kg import FactKG, load_user_kg
from s3kg_core.factuality.statements import (
    RELATION_TEMPLATES,
    STATEMENT_COLUMNS,
    build_statements,
    read_statements,
    render_statement,
    write_statements,
)


@pytest.mark.parametrize(
    "h, r, t, expected",
    [
        ("Apple", "Control", "Beats", "Apple controls Beats."),
        ("Fed", "Negative_Impact_On", "Stocks", "Fed has a negative impact on Stocks."),
        ("Curie", "born_in", "Warsaw", "Curie born in Warsaw."),
        ("X", "isPartOf", "Y", "X is part of Y."),
    ],
)
def test_render(h: str, r: str, t: str, expected: str) -> None:
    assert render_statement(h, r, t) == expected


def test_all_findkg_relations_have_templates() -> None:
    assert len(RELATION_TEMPLATES) == 15


def test_build_columns_ratio_and_seed(tmp_path: Path) -> None:
    kg = load_user_kg(toy_kg_csv(tmp_path))
    table, report = build_statements(kg, 6, negatives_per_positive=2, seed=3)
    assert list(table.columns) == list(STATEMENT_COLUMNS)
    assert report.positives == 6 and report.negatives + report.unfilled == 12
    assert table["statement_id"].is_unique
    assert set(table["kind"]) <= {"positive", "tail-corrupted", "head-corrupted"}
    assert table["label"].sum() == 6
    again, _ = build_statements(kg, 6, negatives_per_positive=2, seed=3)
    pd.testing.assert_frame_equal(table, again)
    other, _ = build_statements(kg, 6, negatives_per_positive=2, seed=4)
    assert not table.equals(other)
    # every group has exactly one positive, and negatives keep its relation
    for _, part in table.groupby("group_id"):
        assert part["label"].sum() == 1
        assert part["relation"].nunique() == 1


def test_degrees_recorded(tmp_path: Path) -> None:
    kg = load_user_kg(toy_kg_csv(tmp_path))
    table, _ = build_statements(kg, None, negatives_per_positive=0)
    degrees = kg.degrees()
    assert (table["head_degree"] == table["head"].map(degrees)).all()
    assert len(table) == len(kg)


def test_bad_arguments(tmp_path: Path) -> None:
    kg = load_user_kg(toy_kg_csv(tmp_path))
    with pytest.raises(FactualityError):
        build_statements(kg, -1)
    with pytest.raises(FactualityError):
        build_statements(kg, 1, negatives_per_positive=-1)
    with pytest.raises(FactualityError):
        build_statements(kg, 1, corrupt=("relation",))  # type: ignore[arg-type]


def test_parquet_roundtrip_and_column_check(tmp_path: Path) -> None:
    kg = load_user_kg(toy_kg_csv(tmp_path))
    table, _ = build_statements(kg, 3)
    path = write_statements(table, tmp_path / "out" / "s.parquet")
    pd.testing.assert_frame_equal(read_statements(path), table)
    table.drop(columns="label").to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InputFormatError, match="label"):
        read_statements(tmp_path / "bad.parquet")
    with pytest.raises(InputFormatError, match="not found"):
        read_statements(tmp_path / "missing.parquet")


_entity = st.integers(0, 7)
_fact = st.tuples(_entity, st.sampled_from(["r", "s"]), _entity)


@settings(max_examples=60, deadline=None)
@given(
    facts=st.lists(_fact, min_size=1, max_size=25),
    n_types=st.integers(1, 3),
    ratio=st.integers(0, 3),
    seed=st.integers(0, 1000),
)
def test_negatives_never_known_and_type_compatible(
    facts: list[tuple[int, str, int]], n_types: int, ratio: int, seed: int
) -> None:
    rows = [(f"e{h}", r, f"e{t}", f"T{h % n_types}", f"T{t % n_types}") for h, r, t in facts]
    kg = FactKG.from_frame(
        "random", pd.DataFrame(rows, columns=["head", "relation", "tail", "head_type", "tail_type"])
    )
    table, report = build_statements(kg, None, negatives_per_positive=ratio, seed=seed)
    known = kg.known()
    negatives = table[~table["label"]]
    assert report.negatives == len(negatives)
    assert report.negatives + report.unfilled == ratio * report.positives
    for row in negatives.itertuples():
        assert (row.head, row.relation, row.tail) not in known
        assert row.head != row.tail
        if row.kind == "tail-corrupted":
            assert kg.entity_types[row.tail] == row.tail_type
        else:
            assert kg.entity_types[row.head] == row.head_type
    positives = table[table["label"]]
    assert all((r.head, r.relation, r.tail) in known for r in positives.itertuples())
    assert not table.duplicated(["head", "relation", "tail"]).any()
