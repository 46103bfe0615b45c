"""Tests of s3kg_core.factuality.kg: reading FinDKG and user KGs (CSV, Parquet)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from factuality_helpers import TOY_FACTS, toy_kg_csv

from s3kg_core.errors import InputFormatError
from s3kg_core.factuality.kg import FactKG, load_findkg, load_kg, load_user_kg


def _write_findkg(folder: Path) -> Path:
    folder.mkdir()
    (folder / "entity2id.txt").write_text(
        "Apple\t0\tCOMP\t2\nBeats\t1\tCOMP\t2\nChina\t2\tGPE\t1\n", encoding="utf-8"
    )
    (folder / "relation2id.txt").write_text("Control\t0\nOperate_In\t1\n", encoding="utf-8")
    (folder / "train.txt").write_text("0\t0\t1\t0\t0\n0\t1\t2\t3\t0\n", encoding="utf-8")
    (folder / "valid.txt").write_text("0\t0\t1\t5\t0\n", encoding="utf-8")  # same fact, new week
    (folder / "test.txt").write_text("1\t1\t2\t7\t0\n", encoding="utf-8")
    return folder


def test_findkg_format_time_dropped_and_types(tmp_path: Path) -> None:
    kg = load_findkg(_write_findkg(tmp_path / "findkg"))
    assert len(kg) == 3  # the repeated (Apple, Control, Beats) counts once
    assert kg.known() == {
        ("Apple", "Control", "Beats"),
        ("Apple", "Operate_In", "China"),
        ("Beats", "Operate_In", "China"),
    }
    assert kg.entity_types == {"Apple": "COMP", "Beats": "COMP", "China": "GPE"}
    assert kg.degrees() == {"Apple": 2, "Beats": 2, "China": 2}
    # the data folder (parent) works too
    assert len(load_kg("findkg", tmp_path)) == 3


def test_findkg_unknown_id_is_an_input_error(tmp_path: Path) -> None:
    folder = _write_findkg(tmp_path / "findkg")
    (folder / "test.txt").write_text("9\t1\t2\t7\t0\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"test\.txt:1"):
        load_findkg(folder)


def test_findkg_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(InputFormatError, match=r"entity2id\.txt"):
        load_findkg(tmp_path)


def test_user_kg_csv_and_parquet(tmp_path: Path) -> None:
    csv = toy_kg_csv(tmp_path)
    kg = load_user_kg(csv)
    assert len(kg) == len(TOY_FACTS)
    assert kg.entity_types["Pixel"] == "PRODUCT"
    parquet = tmp_path / "kg.parquet"
    pd.read_csv(csv)[["head", "relation", "tail"]].to_parquet(parquet)
    kg2 = load_kg(parquet)
    assert kg2.name == "kg" and set(kg2.entity_types.values()) == {""}


@pytest.mark.parametrize(
    "header, needle",
    [
        ("subject,predicate,object", "found subject, predicate, object"),
        ("head,relation,tail,weight", "found head, relation, tail, weight"),
    ],
)
def test_user_kg_unknown_columns_named(tmp_path: Path, header: str, needle: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(header + "\n" + ",".join("x" * 1 for _ in header.split(",")) + "\n")
    with pytest.raises(InputFormatError, match=needle):
        load_user_kg(path)


def test_user_kg_unsupported_suffix(tmp_path: Path) -> None:
    path = tmp_path / "kg.json"
    path.write_text("[]")
    with pytest.raises(InputFormatError, match="unsupported"):
        load_user_kg(path)


def test_blank_rows_dropped() -> None:
    kg = FactKG.from_frame(
        "t",
        pd.DataFrame(
            {"head": ["a", " ", "a"], "relation": ["r", "r", "r"], "tail": ["b", "c", "b"]}
        ),
    )
    assert len(kg) == 1


@pytest.mark.shared_data
def test_real_findkg(shared_data: Path) -> None:
    if not (shared_data / "findkg").is_dir():
        pytest.skip("findkg not in the shared data")
    kg = load_findkg(shared_data)
    assert len(kg) > 90_000
    assert len(kg.relations()) == 15


def test_findkg_files_are_capped_before_they_are_read(tmp_path: Path, monkeypatch) -> None:
    """Issue 59: every input has one size cap (s3kg_core.limits); FinDKG's files were read
    whole with no bound."""
    from s3kg_core.errors import InputTooLargeError
    from s3kg_core.limits import MAX_INPUT_ENV

    folder = _write_findkg(tmp_path / "findkg")
    (folder / "train.txt").write_text("0\t0\t1\t0\t0\n" * 450, encoding="utf-8")  # 4,500 bytes
    monkeypatch.setenv(MAX_INPUT_ENV, "0.004")  # 4,000 bytes
    with pytest.raises(InputTooLargeError, match=r"train\.txt holds .*a FinDKG file takes at"):
        load_findkg(folder)
    monkeypatch.setenv(MAX_INPUT_ENV, "0.005")
    assert len(load_findkg(folder)) == 2  # under the cap: read as before (train: one fact)


def test_findkg_text_that_is_not_utf8_is_one_input_error(tmp_path: Path) -> None:
    folder = _write_findkg(tmp_path / "findkg")
    (folder / "relation2id.txt").write_bytes(b"Control\t0\n\xff\xfe\t1\n")
    with pytest.raises(InputFormatError, match=r"relation2id\.txt: not UTF-8 text"):
        load_findkg(folder)


def test_a_parquet_kg_is_capped_by_its_columns_decompressed(tmp_path: Path, monkeypatch) -> None:
    """Issue 59: a user's Parquet KG was read whole by pd.read_parquet whatever it held once
    decompressed; its footer's sizes are checked first."""
    from s3kg_core.errors import InputTooLargeError
    from s3kg_core.limits import MAX_INPUT_ENV

    path = tmp_path / "kg.parquet"
    n = 2_000
    pd.DataFrame(
        {"head": [f"{'x' * 1_000}{i}" for i in range(n)], "relation": ["r"] * n, "tail": ["t"] * n}
    ).to_parquet(path, compression="zstd")
    monkeypatch.setenv(MAX_INPUT_ENV, "1")
    with pytest.raises(InputTooLargeError, match=r"kg\.parquet holds .* MB once decompressed"):
        load_user_kg(path)
    monkeypatch.setenv(MAX_INPUT_ENV, "5")
    assert len(load_user_kg(path)) == n
