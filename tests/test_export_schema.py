"""Tests of s3kg_core.export.schema: column groups, dtypes, names and the reader."""

from __future__ import annotations

import doctest
import json

import pandas as pd
import pytest

import s3kg_core.export.schema as schema_module
from s3kg_core.errors import ConfigError
from s3kg_core.export.schema import (
    EXPORT_COLUMNS,
    INCLUDES,
    columns_help,
    conform,
    dumps,
    extra_column_names,
    json_records,
    parse_include,
    read_export,
    tau_gold_categories,
)
from s3kg_core.kg import Triple
from s3kg_core.scoring.tau import AlignedTriple, Mismatch, TauResult


def test_the_module_doctests_pass():
    result = doctest.testmod(schema_module)
    assert result.attempted >= 8 and result.failed == 0


def test_every_column_has_a_group_a_known_dtype_and_a_meaning():
    assert {c.group for c in EXPORT_COLUMNS.values()} == {"base", *INCLUDES}
    assert {c.dtype for c in EXPORT_COLUMNS.values()} <= {
        "str", "int64", "Int64", "float64", "boolean"
    }  # fmt: skip
    assert all(c.meaning for c in EXPORT_COLUMNS.values())
    assert sum(c.group == "base" for c in EXPORT_COLUMNS.values()) == 29  # the export of old
    text = columns_help()
    assert all(f"  {name} [" in text for name in EXPORT_COLUMNS)


@pytest.mark.parametrize(
    ("spec", "fmt", "groups"),
    [
        (None, "csv", ()),
        (None, "parquet", INCLUDES),
        ("tau,metadata", "csv", ("metadata", "tau")),
        (" triples , ", "json", ("triples",)),
        ("", "json", ()),
        ("all", "csv", INCLUDES),
    ],
)
def test_parse_include(spec, fmt, groups):
    assert parse_include(spec, fmt) == groups


def test_parse_include_refuses_unknown_groups_and_formats():
    with pytest.raises(ConfigError, match=r"--include takes metadata, triples, tau .* got x, y"):
        parse_include("x,tau,y", "csv")
    with pytest.raises(ConfigError, match=r"format must be csv, parquet, json"):
        parse_include(None, "xlsx")


def test_extra_names_never_collide():
    taken = ["cus", "input_cus", "model"]
    names = extra_column_names(["cus", "kind", "model", "input_model"], taken)
    assert names == {
        "cus": "input_input_cus",
        "kind": "kind",
        "model": "input_input_model",
        "input_model": "input_model",
    }
    assert len(set(names.values()) | set(taken)) == len(names) + len(taken)


def test_tau_categories_follow_a_stored_result():
    result = TauResult(
        aligned=(AlignedTriple(Triple("a", "r", "b"), Triple("a", "r", "b"), 0.99),),
        relation_mismatch=(
            Mismatch(Triple("a", "x", "c"), Triple("a", "y", "c"), "relation", "relation", 0.8),
        ),
        entity_mismatch=(
            Mismatch(Triple("d", "r", "e"), Triple("d", "r", "f"), "entity", "tail", 0.9),
        ),
        roles_swapped=(
            Mismatch(Triple("g", "r", "h"), Triple("h", "r", "g"), "roles", "swapped", 0.97),
        ),
        extra=(Triple("p", "q", "r"),),
        missing=(Triple("m", "n", "o"),),
    )
    stored = json.loads(json.dumps(result.to_dict()))
    rows = tau_gold_categories(stored)
    assert [(r["gold"], r["category"], r["answer"]) for r in rows] == [
        (["a", "r", "b"], "aligned", ["a", "r", "b"]),
        (["a", "x", "c"], "relation_mismatch", ["a", "y", "c"]),
        (["d", "r", "e"], "entity_mismatch", ["d", "r", "f"]),
        (["g", "r", "h"], "roles_swapped", ["h", "r", "g"]),
        (["m", "n", "o"], "missing", None),
    ]
    assert json.loads(dumps(rows)) == rows


def test_conform_keeps_missing_values_missing():
    frame = conform(
        pd.DataFrame(
            {
                "ext_id": pd.Series([7, None], dtype=object),
                "seed": [1.0, float("nan")],
                "truncated": [True, None],
                "kind": [None, "x"],
                "run_id": [1, 2],
            }
        )
    )
    assert frame["ext_id"].tolist()[0] == "7" and pd.isna(frame["ext_id"][1])
    assert str(frame["seed"].dtype) == "Int64" and pd.isna(frame["seed"][1])
    assert str(frame["truncated"].dtype) == "boolean" and pd.isna(frame["truncated"][1])
    assert pd.isna(frame["kind"][0]) and str(frame["kind"].dtype) == "str"


def test_json_records_are_plain_and_exact():
    frame = conform(pd.DataFrame({"cus": [0.1 + 0.2], "seed": [None], "kind": ["é"]}))
    assert json_records(frame) == [{"cus": 0.30000000000000004, "seed": None, "kind": "é"}]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_read_export_keeps_texts_that_look_like_numbers_or_missing(tmp_path, fmt):
    path = tmp_path / f"r.{fmt}"
    frame = conform(
        pd.DataFrame({"ext_id": ["0001", "2"], "answer": ["NA", "null"], "kind": ["1e3", "nan"]})
    )
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        path.write_text(json.dumps(json_records(frame)), encoding="utf-8")
    back = read_export(path)
    pd.testing.assert_frame_equal(back, frame)


def test_read_export_refuses_other_formats(tmp_path):
    with pytest.raises(ConfigError, match="format must be"):
        read_export(tmp_path / "r.xlsx")
