"""The one CSV / JSONL reader and its policy for bytes that are not UTF-8."""

from __future__ import annotations

import csv
import io
import json
import tracemalloc
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s3kg_core.limits as limits
import s3kg_core.tables as tables
from s3kg_core.errors import InputFormatError, InputTooLargeError
from s3kg_core.tables import (
    csv_safe_cell,
    csv_safe_frame,
    csv_safe_row,
    iter_json_object,
    read_csv_rows,
    read_jsonl_records,
    replace_surrogates,
)

# -- CSV ------------------------------------------------------------------------------------------


def _csv(tmp_path: Path, data: bytes, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_csv_rows_cells_short_rows_and_extra_fields(tmp_path):
    path = _csv(tmp_path, b'id,a,b\n1,x,"y, z"\n\n2,x\n3,x,y,stray,more\n')
    table = read_csv_rows(path)
    assert table.header == ("id", "a", "b")
    assert [r.number for r in table.rows] == [1, 2, 3]  # the blank line is not a row
    assert table.rows[0].cells == {"id": "1", "a": "x", "b": "y, z"}
    assert table.rows[1].cells == {"id": "2", "a": "x", "b": None}  # the row ended before b
    assert table.rows[2].extra == ("stray", "more")
    assert table.replaced == () and not table.header_replaced


def test_csv_bom_is_dropped_and_header_can_be_stripped(tmp_path):
    path = _csv(tmp_path, b"\xef\xbb\xbfid, name\r\n1,a\r\n")
    assert read_csv_rows(path).header == ("id", " name")
    table = read_csv_rows(path, strip_header=True)
    assert table.header == ("id", "name")
    assert table.rows[0].cells == {"id": "1", "name": "a"}


def test_csv_latin1_byte_is_replaced_and_its_row_reported(tmp_path):
    path = _csv(
        tmp_path,
        b"id,text\n"
        b"1,caf\xc3\xa9\n"  # UTF-8
        b'2,"caf\xe9, au lait"\n'  # Latin-1: not UTF-8
        b"3,\xef\xbf\xbd\n",  # a genuine U+FFFD, written as UTF-8
    )
    table = read_csv_rows(path)
    assert [r.cells["text"] for r in table.rows] == ["café", "caf\ufffd, au lait", "\ufffd"]
    assert [r.replaced for r in table.rows] == [False, True, False]
    assert table.replaced == (2,)


def test_csv_header_with_undecodable_bytes_is_reported(tmp_path):
    table = read_csv_rows(_csv(tmp_path, b"id,caf\xe9\n1,x\n"))
    assert table.header == ("id", "caf\ufffd")
    assert table.header_replaced and table.replaced == ()


def test_csv_empty_file_has_no_header(tmp_path):
    table = read_csv_rows(_csv(tmp_path, b""))
    assert (table.header, table.rows) == ((), ())


def test_csv_unreadable_file_and_csv_errors_are_input_format_errors(tmp_path, monkeypatch):
    with pytest.raises(InputFormatError, match=r"cannot read pair set .*nope\.csv"):
        read_csv_rows(tmp_path / "nope.csv", what="pair set ")
    huge = _csv(tmp_path, b'id,text\n1,"' + b"x" * 10 + b'"\n')
    monkeypatch.setattr(tables, "_FIELD_SIZE_LIMIT", 5)
    try:
        with pytest.raises(InputFormatError, match=r"t\.csv: not a readable CSV file \(line 2"):
            read_csv_rows(huge)
    finally:
        csv.field_size_limit(tables._FIELD_SIZE_LIMIT)
    monkeypatch.undo()
    assert read_csv_rows(huge).rows[0].cells["text"] == "x" * 10


def _dict_reader_rows(raw: bytes) -> tuple[list[str], list[dict[str, object]]]:
    """What the readers did before s3kg_core.tables: DictReader on text decoded with replace."""
    reader = csv.DictReader(
        io.StringIO(raw.decode("utf-8-sig", errors="replace"), newline=""),
        restkey="\x00extra",
        restval=None,
    )
    rows = list(reader)
    return list(reader.fieldnames or []), rows


# CSV syntax, valid UTF-8 (é, U+FFFD, an emoji) and invalid bytes (Latin-1 é, a stray
# continuation byte, truncated sequences, an encoded surrogate).
_PIECES = [
    *(b"a", b",", b'"', b'""', b"\n", b"\r\n", b" "),
    *(b"\xc3\xa9", b"\xef\xbf\xbd", b"\xf0\x9f\x98\x80"),
    *(b"\xe9", b"\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xff"),
]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(_PIECES), max_size=30))
def test_csv_reads_what_dict_reader_read_and_flags_exactly_the_undecodable(tmp_path, pieces):
    raw = b"".join(pieces)
    path = _csv(tmp_path, raw, "fuzz.csv")
    try:
        header, expected = _dict_reader_rows(raw)
    except csv.Error:
        with pytest.raises(InputFormatError):
            read_csv_rows(path)
        return
    table = read_csv_rows(path)
    assert list(table.header) == header
    got = [{**r.cells, **({"\x00extra": list(r.extra)} if r.extra else {})} for r in table.rows]
    assert got == expected
    try:
        raw.decode("utf-8")
        valid = True
    except UnicodeDecodeError:
        valid = False
    assert valid == (not table.replaced and not table.header_replaced)
    if len(set(header)) == len(header):  # (a repeated column name hides a cell)
        for row in table.rows:  # a flagged row holds a replacement character
            cells = [*row.cells.values(), *row.extra]
            assert not row.replaced or any("\ufffd" in (c or "") for c in cells)


# -- JSONL ----------------------------------------------------------------------------------------


def test_jsonl_records_blank_lines_bom_and_line_numbers(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\n  \n{"b": "x\xe2\x80\xa8y", "a": 2}\n')
    table = read_jsonl_records(path)
    assert [(r.number, r.cells) for r in table.rows] == [
        (1, {"a": 1}),
        (4, {"b": "x\u2028y", "a": 2}),  # U+2028 inside a string does not split the line
    ]
    assert table.header == ("a", "b")
    assert table.replaced == ()


def test_jsonl_latin1_byte_is_replaced_and_its_line_reported(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"q": "caf\xc3\xa9"}\n{"q": "caf\xe9"}\n{"q": "\\ufffd"}\n')
    table = read_jsonl_records(path)
    assert [r.cells["q"] for r in table.rows] == ["café", "caf\ufffd", "\ufffd"]
    assert table.replaced == (2,)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ('{"a": 1}\nnot json\n', r"t\.jsonl: line 2 is not JSON"),
        ('{"a": 1}\n[1, 2]\n', r"t\.jsonl: line 2 is not a JSON object"),
    ],
)
def test_jsonl_bad_lines_are_named(tmp_path, text, match):
    path = tmp_path / "t.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=match):
        read_jsonl_records(path)


def test_jsonl_integer_past_the_digit_limit_is_read_exactly(tmp_path):
    # Regression (issue 17, D1): json.loads raised ValueError ("Exceeds the limit (4300 digits)
    # for integer string conversion"), which escaped the reader.
    big = "9" * 5000
    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"n": {big}, "m": [-{big}], "k": 12}}\n', encoding="utf-8")
    (row,) = read_jsonl_records(path).rows
    assert row.cells["n"] == Decimal(big) and str(row.cells["n"]) == big
    assert str(row.cells["m"][0]) == f"-{big}"
    assert row.cells["k"] == 12 and type(row.cells["k"]) is int  # small integers stay int


def test_jsonl_line_nested_too_deeply_is_named(tmp_path):
    # Regression (issue 17): json.loads' RecursionError on 10,000 nested lists escaped the reader.
    path = tmp_path / "t.jsonl"
    path.write_text('{"a": 1}\n{"q": ' + "[" * 10_000 + "]" * 10_000 + "}\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"t\.jsonl: line 2 .*nest"):
        read_jsonl_records(path)


def test_jsonl_lone_surrogate_is_replaced_and_its_line_reported(tmp_path):
    # Regression (issue 17, D2): {"q": "Is \ud800 ok?"} gave a string no UTF-8 text can hold,
    # and the importer died on it (pyarrow / DuckDB UnicodeEncodeError).
    path = tmp_path / "t.jsonl"
    path.write_text(
        r'{"q": "Is \ud800 ok?"}'
        "\n"
        r'{"\udfff": ["a", {"b": "\udc80"}]}'
        "\n"
        r'{"q": "\ud83d\ude00"}'
        "\n"  # a surrogate pair: one character, valid
        r'{"q": "\\ud800"}'
        "\n",  # an escaped backslash: the text \ud800, no escape
        encoding="utf-8",
    )
    table = read_jsonl_records(path)
    assert [r.cells for r in table.rows] == [
        {"q": "Is \ufffd ok?"},
        {"\ufffd": ["a", {"b": "\ufffd"}]},
        {"q": "😀"},
        {"q": r"\ud800"},
    ]
    assert table.replaced == (1, 2)
    assert table.header == ("q", "\ufffd")


@pytest.mark.parametrize(
    ("value", "expected", "replaced"),
    [
        ("plain", "plain", False),
        ("a\ud800b\udfff", "a\ufffdb\ufffd", True),
        ("\ufffd", "\ufffd", False),  # a real U+FFFD is text like any other
        ([1, "\udc80", [{"\ud800": None}]], [1, "\ufffd", [{"\ufffd": None}]], True),
        ({"k": [None, 2.5, True]}, {"k": [None, 2.5, True]}, False),
        (7, 7, False),
    ],
)
def test_replace_surrogates(value, expected, replaced):
    assert replace_surrogates(value) == (expected, replaced)


def test_jsonl_unreadable_file(tmp_path):
    with pytest.raises(InputFormatError, match="cannot read"):
        read_jsonl_records(tmp_path / "none.jsonl")


def test_jsonl_round_trips_json_dumps(tmp_path):
    records = [{"q": "Who, then?", "n": None}, {"q": "é\u2028", "n": [1, 2]}]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert [r.cells for r in read_jsonl_records(path).rows] == records


# -- input cap and streaming (issue 59: one cap before any input file is read; readers stream) ----


@pytest.mark.parametrize(
    ("name", "read", "kind"),
    [
        ("t.csv", read_csv_rows, "a CSV file"),
        ("t.jsonl", read_jsonl_records, "a JSONL file"),
        ("t.json", lambda p: list(iter_json_object(p)), "a JSON file"),
    ],
)
def test_a_file_past_the_input_cap_is_refused_before_it_is_read(
    tmp_path, monkeypatch, name, read, kind
):
    """Regression: a CSV or JSONL file of any size was read whole (no cap but PENMAN's)."""
    monkeypatch.delenv(limits.MAX_INPUT_ENV, raising=False)
    path = tmp_path / name
    path.write_bytes(b'"unclosed\n{not json\n')  # malformed: an error if it were read
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", path.stat().st_size - 1)
    with pytest.raises(InputTooLargeError) as info:
        read(path)
    assert str(info.value) == (
        f"{name} holds 0 MB; {kind} takes at most 0 MB: split it into files of whole rows, "
        "or raise the cap with S3KG_MAX_INPUT_MB=<megabytes>"
    )
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", path.stat().st_size)
    try:  # at the cap: read (the JSON files found malformed, the CSV file taken)
        read(path)
    except InputFormatError as exc:
        assert not isinstance(exc, InputTooLargeError)


@pytest.mark.parametrize(
    ("name", "read"),
    [
        ("blank.csv", read_csv_rows),
        ("blank.jsonl", read_jsonl_records),
        ("blank.json", lambda p: list(iter_json_object(p))),
    ],
)
def test_reading_holds_the_rows_not_the_file(tmp_path, name, read):
    """Regression: blank lines (no row) took twice their size to read and more (the bytes,
    their text, a copy for the csv module: 1 MB of a CSV 6 MB, 8 MB of JSON lines 16 MB); read
    as a stream they take the buffers, a few MB whatever the file's size."""
    path = tmp_path / name
    if name.endswith(".csv"):  # a blank line is no row of a CSV file (1 MB: 1M lines to read)
        path.write_bytes(b"id\n" + b"\n" * 1_000_000)
        most = 3_000_000
    else:
        path.write_bytes((b" " * 999 + b"\n") * 8_000 + b"{}\n")
        most = 6_000_000
    tracemalloc.start()
    try:
        read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < most, f"{peak / 1e6:.1f} MB to read {path.stat().st_size / 1e6:.0f} MB"


def test_csv_read_in_chunks_flags_the_same_rows_across_chunk_edges(tmp_path):
    """A byte sequence cut by the reader's chunks is decoded as a whole file decodes it."""
    row = "café,\u00e9t\u00e9\n".encode() + b"caf\xe9,x\n"
    data = b"a,b\n" + row * 40_000  # 600 kB: 8 kB chunks, sequences across their edges
    table = read_csv_rows(_csv(tmp_path, data))
    assert len(table.rows) == 80_000
    assert table.replaced == tuple(range(2, 80_001, 2))
    assert {r.cells["a"] for r in table.rows} == {"café", "caf\ufffd"}


def test_json_object_entries_in_order_and_early_stop_reads_no_further(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('\ufeff {"b": [1, {"x": null}], "a": 1e3, "c": "\\u00e9"} \n', "utf-8")
    assert list(iter_json_object(path)) == [("b", [1, {"x": None}]), ("a", 1000.0), ("c", "é")]
    broken = tmp_path / "broken.json"
    broken.write_text('{"1": 1, "2": 2, "3": {not json', encoding="utf-8")
    entries = iter_json_object(broken)
    assert [next(entries), next(entries)] == [("1", 1), ("2", 2)]
    entries.close()
    with pytest.raises(InputFormatError, match=r"^cannot read .*broken\.json as JSON: not JSON"):
        list(iter_json_object(broken))


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", r"cannot read .* as JSON: not JSON \(expecting an object at character 0, found the"),
        ("[1]", r"^x\.json: expected a JSON object$"),
        ('"s"', r"^x\.json: expected a JSON object$"),
        ("{1: 2}", r"not JSON \(expecting a key at character 1, found '1'\)"),
        ('{"a" 2}', r"not JSON \(expecting ':' at character 5, found '2'\)"),
        ('{"a": 2', r"not JSON \(expecting ',' or '}' at character 7, found the end of the file\)"),
        ('{"a": 2} x', r"not JSON \(extra data at character 9\)"),
        ('{"a": tru}', r"not JSON \(Expecting value at character 6\)"),
        ('{"a": ' + "[" * 100_000, r"nested too deeply"),
        (b'{"a": "\xe9"}', r"not UTF-8"),
    ],
)
def test_json_object_that_is_not_one_is_named(tmp_path, text, match):
    path = tmp_path / "x.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(InputFormatError, match=match):
        list(iter_json_object(path))


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=6),
    st.integers(1, 9),
    st.sampled_from(["", " ", "\n\t "]),
)
def test_json_object_read_in_small_chunks_is_json_loads(record, chunk, space):
    """Chunks of 1-9 characters cut every number, word, string and escape somewhere."""
    import tempfile
    from unittest import mock

    text = json.dumps(record, separators=(space + "," + space, space + ":" + space))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.json"
        path.write_text(space + text + space, encoding="utf-8")
        with mock.patch.object(tables, "_JSON_CHUNK", chunk):
            assert dict(iter_json_object(path)) == json.loads(text)


# -- CSV output: OWASP's formula-injection rule (issue 28, item 8) -------------------------------

HOSTILE = [
    "=2+5",
    "=cmd|' /C calc'!A0",
    "@SUM(1)",
    "+SUM(1)",
    "-2+3",
    "\t=1",
    "\r=1",
    "=HYPERLINK(x)",
]


@pytest.mark.parametrize("cell", HOSTILE)
def test_csv_safe_cell_escapes_what_a_spreadsheet_would_run(cell):
    assert csv_safe_cell(cell) == "'" + cell


@pytest.mark.parametrize(
    "cell", ["", "plain", "a=b", "0.5", "-0.5", "+3", "-1e-09", "1E5", " =1", "'=1", 0.5, -2, None]
)
def test_csv_safe_cell_leaves_numbers_and_other_text(cell):
    assert csv_safe_cell(cell) == cell


def test_csv_safe_row_and_frame_read_back_as_text(tmp_path):
    import pandas as pd

    path = tmp_path / "out.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows([csv_safe_row(["=h", "n"]), csv_safe_row([HOSTILE[1], -0.5])])
    assert path.read_bytes().decode() == "'=h,n\r\n'=cmd|' /C calc'!A0,-0.5\r\n"
    frame = pd.DataFrame({"q": HOSTILE, "s": range(len(HOSTILE))}).astype({"q": "string"})
    safe = csv_safe_frame(frame)
    assert safe["q"].tolist() == ["'" + c for c in HOSTILE] and frame["q"].tolist() == HOSTILE
    assert safe["s"].tolist() == list(range(len(HOSTILE)))  # numbers stay numbers
    assert list(csv_safe_frame(pd.DataFrame({"@x": [1]})).columns) == ["'@x"]
