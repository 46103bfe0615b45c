"""Tests of s3kg_core.evaluation.pair_sets: loading labelled pair sets in the released formats."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from s3kg_core.errors import InputFormatError
from s3kg_core.evaluation import PairSet, list_pair_sets, load_pair_set
from s3kg_core.evaluation.pair_sets import BENCHMARKS_SUBDIR, REQUIRED_COLUMNS
from s3kg_core.kg import Triple

STANDARD = ["id", "paragraph_1", "kg_1", "paragraph_2", "kg_2", "label", "perturbation_type"]
PUBMEDQA = [*STANDARD, "faithfulness_level"]


def kg(*triples: tuple[str, str, str]) -> str:
    """A KG cell as the released files write it (JSON list of lists)."""
    return json.dumps([list(t) for t in triples])


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    """Write rows the way the released files are written (minimal quoting, CRLF)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


STANDARD_ROWS = [
    ["0", "A cat sat.", kg(("cat", "sat_on", "mat")), "A cat sat down.",
     kg(("cat", "sat_on", "mat"), ("cat", "is", "animal")), "1", "paraphrase"],
    ["1", "Rain, then sun.", kg(("rain", "before", "sun")), "Sun, then rain.",
     kg(("sun", "before", "rain")), "0", "non_paraphrase"],
    ["2", "Nothing here.", "[]", "Still nothing.", "[]", "0", "non_paraphrase"],
]  # fmt: skip

PUBMEDQA_ROWS = [
    ["0", "Context.", kg(("drug", "treats", "pain")), "Answer.", kg(("drug", "treats", "pain")),
     "1", "faithful_paraphrase", "4"],
    ["1", "Context.", kg(("drug", "treats", "pain")), "Answer.", kg(("pain", "treats", "drug")),
     "0", "relation_inversion", "2"],
    ["2", "Context.", kg(("drug", "treats", "pain")), "Answer.", kg(("drug", "causes", "pain")),
     "0", "context_ignoring", "1"],
]  # fmt: skip


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A data folder with the two released layouts under s3kg_release/benchmarks."""
    bench = tmp_path / BENCHMARKS_SUBDIR
    write_csv(bench / "toy_pairs.csv", STANDARD, STANDARD_ROWS)
    write_csv(bench / "toy_pubmedqa.csv", PUBMEDQA, PUBMEDQA_ROWS)
    return tmp_path


# -- the released layouts ----------------------------------------------------------------------


def test_standard_layout(data_dir: Path):
    ps = load_pair_set("toy_pairs", data_dir=data_dir)
    assert ps.name == "toy_pairs"
    assert len(ps) == 3
    assert ps.ids == ("0", "1", "2")
    assert ps.text_1[1] == "Rain, then sun."
    assert ps.text_2[0] == "A cat sat down."
    assert ps.kg_1[0] == (Triple("cat", "sat_on", "mat"),)
    assert ps.kg_2[0] == (Triple("cat", "sat_on", "mat"), Triple("cat", "is", "animal"))
    assert ps.kg_1[2] == ps.kg_2[2] == ()
    assert ps.labels.dtype == np.int64
    assert ps.labels.tolist() == [1, 0, 0]
    assert ps.n_positive == 1
    assert ps.status_1 == ("ok", "ok", "empty")
    assert ps.status_2 == ("ok", "ok", "empty")
    assert ps.perturbation_type == ("paraphrase", "non_paraphrase", "non_paraphrase")
    assert dict(ps.extra) == {}
    assert ps.unparseable == 0
    assert ps.empty == 2
    assert ps.dropped == 0
    assert Path(ps.source).name == "toy_pairs.csv"


def test_pubmedqa_layout_keeps_faithfulness_level(data_dir: Path):
    ps = load_pair_set("toy_pubmedqa", data_dir=data_dir)
    assert ps.labels.tolist() == [1, 0, 0]
    assert ps.extra["faithfulness_level"] == ("4", "2", "1")
    assert ps.perturbation_type[1] == "relation_inversion"
    # the three levels share both texts: only the KGs tell them apart
    assert ps.text_ties() == 3


def test_load_by_path_forms(data_dir: Path):
    path = data_dir / BENCHMARKS_SUBDIR / "toy_pairs.csv"
    by_name = load_pair_set("toy_pairs", data_dir=data_dir).to_dict()
    assert load_pair_set(path).to_dict() == by_name
    assert load_pair_set(str(path)).to_dict() == by_name
    assert load_pair_set("toy_pairs.csv", data_dir=data_dir).to_dict() == by_name


def test_list_pair_sets(data_dir: Path, tmp_path: Path):
    (data_dir / BENCHMARKS_SUBDIR / "notes.txt").write_text("not a set")
    assert list_pair_sets(data_dir) == ["toy_pairs", "toy_pubmedqa"]
    assert list_pair_sets(str(data_dir)) == ["toy_pairs", "toy_pubmedqa"]
    assert list_pair_sets(tmp_path / "nowhere") == []


def test_loaders_default_to_the_data_dir_of_the_environment(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("S3KG_DATA_DIR", str(data_dir))
    assert list_pair_sets() == ["toy_pairs", "toy_pubmedqa"]
    assert len(load_pair_set("toy_pairs")) == 3


def test_bom_and_header_spaces(tmp_path: Path):
    path = tmp_path / "bom.csv"
    header = ", ".join(STANDARD)  # spaces after the commas
    text = header + "\r\n" + '0,a,"[[""a"", ""r"", ""b""]]",b,[],1,x\r\n'
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    ps = load_pair_set(path)
    assert ps.ids == ("0",)
    assert ps.labels.tolist() == [1]
    assert ps.kg_1 == ((Triple("a", "r", "b"),),)
    assert ps.perturbation_type == ("x",)


# -- errors ------------------------------------------------------------------------------------


def test_unknown_name_lists_available_sets(data_dir: Path):
    with pytest.raises(InputFormatError) as info:
        load_pair_set("paws_wiki", data_dir=data_dir)
    message = str(info.value)
    assert "'paws_wiki'" in message
    assert "toy_pairs" in message and "toy_pubmedqa" in message


def test_unknown_name_without_any_sets(tmp_path: Path):
    with pytest.raises(InputFormatError, match=r"no pair sets under .*S3KG_DATA_DIR"):
        load_pair_set("paws_wiki_400", data_dir=tmp_path)


def test_missing_file(tmp_path: Path):
    with pytest.raises(InputFormatError, match="cannot read pair set"):
        load_pair_set(tmp_path / "absent.csv")


def test_missing_columns_named(tmp_path: Path):
    # the raw benchmarks_kgs layout: texts and KGs but no label
    path = write_csv(
        tmp_path / "raw_KGs.csv",
        ["id", "paragraph_1", "kg_1", "paragraph_2", "kg_2"],
        [["0", "a", "[]", "b", "[]"]],
    )
    with pytest.raises(InputFormatError) as info:
        load_pair_set(path)
    message = str(info.value)
    assert "missing column(s) label;" in message
    assert "expected " + ", ".join(REQUIRED_COLUMNS) in message
    assert "found id, paragraph_1, kg_1, paragraph_2, kg_2" in message


def test_missing_columns_empty_file(tmp_path: Path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(InputFormatError, match="found no header"):
        load_pair_set(path)


@pytest.mark.parametrize("label", ["", "2", "yes", "0.5"])
def test_bad_label_names_row(tmp_path: Path, label: str):
    rows = [list(STANDARD_ROWS[0]), list(STANDARD_ROWS[1])]
    rows[1][5] = label
    path = write_csv(tmp_path / "bad.csv", STANDARD, rows)
    with pytest.raises(InputFormatError, match="row id 1: label must be 0 or 1"):
        load_pair_set(path)


def test_not_utf8_bytes_are_replaced_and_their_rows_listed(tmp_path: Path):
    # Regression: a pair set with one Latin-1 byte used to fail to load as a whole; the one
    # policy of s3kg_core.tables replaces the byte and reports its row.
    path = tmp_path / "latin1.csv"
    text = ",".join(STANDARD) + "\n0,cafe,[],b,[],1,x\n1,caf\xe9,[],b,[],0,x\n"
    path.write_bytes(text.encode("latin-1"))
    ps = load_pair_set(path)
    assert ps.text_1 == ("cafe", "caf\ufffd")
    assert ps.replaced_rows == (2,)
    assert ps.subset([0]).replaced_rows == (2,)  # about the file, like `dropped`
    assert PairSet.from_dict(ps.to_dict()).replaced_rows == (2,)
    assert load_pair_set(write_csv(tmp_path / "ok.csv", STANDARD, [])).replaced_rows == ()


def test_lone_surrogates_in_kg_cells_are_replaced_and_their_rows_listed(tmp_path: Path):
    # Regression (issue 17, D2): the JSON escape \ud800 gave a triple no UTF-8 text can hold.
    rows = [
        ["0", "a", kg(("a", "r", "b")), "b", "[]", "1", "x"],
        ["1", "a", r'[["\ud800", "r", "b"]]', "b", "[]", "0", "x"],
    ]
    ps = load_pair_set(write_csv(tmp_path / "s.csv", STANDARD, rows))
    assert ps.kg_1[1] == (Triple("\ufffd", "r", "b"),)
    assert ps.replaced_rows == (2,)


# -- unparseable cells are kept and counted ----------------------------------------------------


def test_unparseable_kg_cells_are_counted_not_fatal(tmp_path: Path):
    rows = [
        # the raw release's defect: the next row's id glued after the closing ]]
        ["0", "a", kg(("a", "r", "b")) + "137", "b", kg(("b", "r", "c")), "1", "p"],
        ["1", "c", kg(("c", "r", "d")), "d", "{'not': 'a list'}", "0", "n"],
        ["2", "e", "[[oops", "f", "no triples here", "1", "p"],
        # items that are not three strings are dropped and counted, the rest is kept
        ["3", "g", '[["g", "r", "h"], ["only", "two"]]', "h", kg(("h", "r", "g")), "0", "n"],
    ]
    ps = load_pair_set(write_csv(tmp_path / "broken.csv", STANDARD, rows))
    assert len(ps) == 4
    assert ps.status_1 == ("unparseable", "ok", "unparseable", "ok")
    assert ps.status_2 == ("ok", "unparseable", "unparseable", "ok")
    assert ps.kg_1[0] == () and ps.kg_2[1] == () and ps.kg_1[2] == ps.kg_2[2] == ()
    assert ps.kg_2[0] == (Triple("b", "r", "c"),)
    assert ps.kg_1[3] == (Triple("g", "r", "h"),)
    assert ps.unparseable == 4
    assert ps.dropped == 1
    assert ps.status_counts() == {"ok": 4, "empty": 0, "unparseable": 4, "missing": 0}
    assert ps.parsed.tolist() == [False, False, False, True]
    assert ps.labels.tolist() == [1, 0, 1, 0]


def test_short_row_kg_missing(tmp_path: Path):
    # label first, so a row that ends early still has its label but not its KGs
    header = ["label", "id", "paragraph_1", "kg_1", "paragraph_2", "kg_2"]
    path = tmp_path / "short.csv"
    path.write_text(",".join(header) + "\n1,0,a,[]\n0,1,b,[],c,[]\n")
    ps = load_pair_set(path)
    assert ps.status_2 == ("missing", "empty")
    assert ps.unparseable == 1
    assert ps.perturbation_type == ("", "")


# -- the PairSet value -------------------------------------------------------------------------


def test_pair_set_is_immutable(data_dir: Path):
    ps = load_pair_set("toy_pairs", data_dir=data_dir)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ps.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="read-only"):
        ps.labels[0] = 0
    with pytest.raises(TypeError):
        ps.extra["x"] = ("1", "2", "3")  # type: ignore[index]


def test_round_trip_dict_and_json(data_dir: Path):
    ps = load_pair_set("toy_pubmedqa", data_dir=data_dir)
    data = json.loads(json.dumps(ps.to_dict()))
    back = PairSet.from_dict(data)
    assert back.to_dict() == ps.to_dict()
    assert back.kg_2[1] == (Triple("pain", "treats", "drug"),)


def test_fields_must_have_equal_lengths():
    with pytest.raises(InputFormatError, match="one value per pair"):
        PairSet(
            name="x",
            ids=("0", "1"),
            text_1=("a", "b"),
            text_2=("a",),
            kg_1=((), ()),
            kg_2=((), ()),
            labels=np.array([0, 1]),
            status_1=("empty", "empty"),
            status_2=("empty", "empty"),
        )


def test_subset_and_stratified_sample(tmp_path: Path):
    rows = [
        [str(i), f"t{i}", kg(("x", "r", str(i))), f"u{i}", "[]", str(int(i % 4 == 0)), "p"]
        for i in range(40)
    ]
    ps = load_pair_set(write_csv(tmp_path / "big.csv", STANDARD, rows))
    assert ps.n_positive == 10
    sub = ps.subset([5, 4])
    assert sub.ids == ("5", "4")
    assert sub.labels.tolist() == [0, 1]
    assert sub.kg_1[1] == (Triple("x", "r", "4"),)
    small = ps.sample(8, seed=3)
    assert len(small) == 8
    assert small.n_positive == 2  # a quarter, like the whole set
    assert list(small.ids) == sorted(small.ids, key=int)  # file order kept
    assert small.to_dict() == ps.sample(8, seed=3).to_dict()
    assert ps.sample(100) is ps
    tiny = ps.sample(2)
    assert sorted(tiny.labels.tolist()) == [0, 1]  # both classes even when rounding says 0


# -- the shared data -----------------------------------------------------------------------------


@pytest.mark.shared_data
def test_shared_paws_wiki_400(shared_data: Path):
    assert "paws_wiki_400" in list_pair_sets(shared_data)
    ps = load_pair_set("paws_wiki_400", data_dir=shared_data)
    assert len(ps) == 400
    assert set(ps.labels.tolist()) == {0, 1}
    assert ps.n_positive == 200
    assert ps.unparseable == 0
    assert len(set(ps.ids)) == 400
    assert all(isinstance(t, Triple) for kg_ in ps.kg_1 for t in kg_)
