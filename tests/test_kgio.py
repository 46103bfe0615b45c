"""Tests of s3kg_core.kgio: KG cells and pair CSV files, including the raw files' defects."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonish_helpers import KG_CELLS, utf8_clean

from s3kg_core.errors import InputFormatError, KGParseError
from s3kg_core.kg import Triple
from s3kg_core.kgio import PAIR_COLUMNS, PairRow, parse_kg_cell, read_pairs_csv

A = Triple("a", "r", "b")


# -- parse_kg_cell ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "triples", "dropped"),
    [
        ('[["He", "preached_in", "Otisville"]]', [Triple("He", "preached_in", "Otisville")], 0),
        ("[('a', 'r', 'b')]", [A], 0),  # Python literal, as in the released files
        ("(('a', 'r', 'b'),)", [A], 0),  # a tuple of tuples is a list of triples too
        ('  [["a", "r", "b"], ["a", "r", "b"]]  ', [A, A], 0),  # duplicates kept (normalise later)
        ('[["Café", "naïve", "日本"]]', [Triple("Café", "naïve", "日本")], 0),
        ('[["", "r", "b"]]', [Triple("", "r", "b")], 0),  # strings, dropped later by normalisation
        ("[]", [], 0),
        ("", [], 0),
        ("   \n ", [], 0),
        (None, [], 0),
    ],
)
def test_parse_kg_cell_valid(cell, triples, dropped):
    assert parse_kg_cell(cell) == (triples, dropped, False)


@pytest.mark.parametrize(
    ("cell", "triples", "dropped"),
    [
        ("[('a', 'r', 'b'), ('only', 'two'), ['a', 'r', 'b', 'c']]", [A], 2),  # 2- and 4-part
        ('[["a", "r"]]', [], 1),
        ('[["a", "r", "b", "c"]]', [], 1),
        ("[[1, 2, 3]]", [], 1),  # numbers instead of strings
        ('[["a", "r", 3]]', [], 1),
        ('[["a", "r", null]]', [], 1),
        ('[["a", "r", "b"], "a r b", 7, null, {"head": "a"}]', [A], 4),
        ('[[["a"], "r", "b"]]', [], 1),
        ("[" * 50 + "]" * 50, [], 1),  # nested, but shallow enough to parse: one bad item
    ],
)
def test_parse_kg_cell_drops_and_counts_bad_items(cell, triples, dropped):
    assert parse_kg_cell(cell) == (triples, dropped, False)


@pytest.mark.parametrize(
    "cell",
    [
        '[["a", "r", "b"]]137',  # the next row's id glued after ]] (raw release files)
        '[["a", "r", "b"]]137,"next paragraph"',
        '[["a", "r", "b"]',
        "not a list",
        '{"a": 1}',
        '"a string"',
        "42",
        "None",
        "{('a', 'r', 'b')}",  # a set has no order
        "__import__('os').system('echo no')",  # never evaluated
        "[" * 100_000 + "]" * 100_000,  # deeper than either parser goes
        "[" * 100_000,
    ],
)
def test_parse_kg_cell_rejects_malformed_cells(cell):
    with pytest.raises(KGParseError) as info:
        parse_kg_cell(cell)
    assert len(str(info.value)) < 200  # the message quotes the cell, truncated


def test_parse_kg_cell_error_message_quotes_the_start_of_the_cell():
    with pytest.raises(
        KGParseError, match=r"not a JSON or Python list.*\[\[\"a\", \"r\", \"b\"\]\]137"
    ):
        parse_kg_cell('[["a", "r", "b"]]137')
    with pytest.raises(KGParseError, match="must hold a list of triples; got dict"):
        parse_kg_cell('{"a": 1}')


BIG = "9" * 5000  # past Python's 4300-digit limit for int <-> str conversion


def test_parse_kg_cell_integer_past_the_digit_limit_is_a_dropped_item():
    # Regression (issue 17, D1): json.loads raised ValueError ("Exceeds the limit (4300 digits)
    # for integer string conversion"), which escaped parse_kg_cell and aborted `pairs score`.
    assert parse_kg_cell(f'[[{BIG}, "r", "b"], ["a", "r", "b"]]') == ([A], 1, False)
    assert parse_kg_cell(f'[["a", "r", -{BIG}]]') == ([], 1, False)
    # A Python literal with such a number is refused by Python's own parser: a parse error.
    with pytest.raises(KGParseError, match="SyntaxError"):
        parse_kg_cell(f"[({BIG}, 'r', 'b')]")


def test_parse_kg_cell_lone_surrogate_is_replaced_and_flagged():
    # Regression (issue 17, D2): the JSON escape \ud800 became a lone surrogate in a triple,
    # which no UTF-8 text can hold: the tokenizer raised TypeError and `pairs score` died.
    fffd = Triple("\ufffd", "r", "b")
    assert parse_kg_cell(r'[["\ud800", "r", "b"]]') == ([fffd], 0, True)
    assert parse_kg_cell(r"[('\udc80', 'r', 'b')]") == ([fffd], 0, True)  # a Python literal
    assert parse_kg_cell('[["\ud800", "r", "b"]]') == ([fffd], 0, True)  # a raw surrogate
    assert parse_kg_cell(r'[["x\udfffy\ud800", "r", "b"]]')[0] == [
        Triple("x\ufffdy\ufffd", "r", "b")
    ]
    # a surrogate pair is one character, and an escaped backslash is no escape: not replaced
    assert parse_kg_cell(r'[["\ud83d\ude00", "r", "b"]]') == ([Triple("😀", "r", "b")], 0, False)
    assert parse_kg_cell(r'[["\\ud800", "r", "b"]]') == ([Triple(r"\ud800", "r", "b")], 0, False)


# -- read_pairs_csv --------------------------------------------------------------------------------


def _write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


KG_AB = '[["a", "r", "b"]]'
KG_CD = '[["c", "s", "d"], ["c", "s"]]'


def test_read_pairs_csv_reads_rows_and_ignores_other_columns(tmp_path):
    path = _write_csv(
        tmp_path / "pairs.csv",
        ["id", "paragraph_1", "kg_1", "paragraph_2", "kg_2", "label"],
        [
            ["0", "A text,\nwith a newline", KG_AB, "B", KG_CD, "1"],
            ["1", "", "", "", "[]", "0"],
            ["  ", "", KG_AB, "", "oops", "0"],
        ],
    )
    rows = list(read_pairs_csv(path))
    assert rows[0] == PairRow(id="0", kg_1=[A], kg_2=[Triple("c", "s", "d")], dropped=1)
    assert rows[1] == PairRow(id="1")
    assert rows[2].id == "row3"  # a blank id is replaced by the row number
    assert rows[2].status == "unparseable_kg_2"
    assert rows[2].kg_1 == [A]
    assert rows[2].kg_2 == []


def test_read_pairs_csv_accepts_str_path_and_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbfid,kg_1,kg_2\r\n7,\"[['a','r','b']]\",[]\r\n")
    (row,) = read_pairs_csv(str(path))
    assert (row.id, row.kg_1, row.kg_2, row.status) == ("7", [A], [], "ok")


def test_read_pairs_csv_first_unparseable_side_is_the_status(tmp_path):
    path = _write_csv(tmp_path / "p.csv", ["id", "kg_1", "kg_2"], [["0", "[[", "]]x"]])
    (row,) = read_pairs_csv(path)
    assert row.status == "unparseable_kg_1"


@pytest.mark.parametrize(
    ("header", "missing", "found"),
    [
        (["id", "kg1", "kg2"], "kg_1, kg_2", "id, kg1, kg2"),
        (["pair_id", "kg_1", "kg_2"], "id", "pair_id, kg_1, kg_2"),
        (["kg_2"], "id, kg_1", "kg_2"),
    ],
)
def test_read_pairs_csv_missing_columns_name_expected_and_found(tmp_path, header, missing, found):
    path = _write_csv(tmp_path / "bad.csv", header, [["x"] * len(header)])
    with pytest.raises(InputFormatError) as info:
        list(read_pairs_csv(path))
    message = str(info.value)
    assert f"missing column(s) {missing}" in message
    assert f"expected {', '.join(PAIR_COLUMNS)}" in message
    assert f"found {found}" in message
    assert "bad.csv" in message


def test_read_pairs_csv_empty_file_has_no_header(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(InputFormatError, match="found no header"):
        list(read_pairs_csv(path))


def test_read_pairs_csv_missing_file(tmp_path):
    with pytest.raises(InputFormatError, match="cannot read"):
        list(read_pairs_csv(tmp_path / "nope.csv"))


def test_read_pairs_csv_replaces_and_flags_non_utf8_bytes(tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes(
        b"id,kg_1,kg_2\n"
        b'0,"[[""caf\xe9"", ""r"", ""b""]]","[]"\n'  # Latin-1 e-acute: not UTF-8
        b'1,"[[""caf\xc3\xa9"", ""r"", ""b""]]","[]"\n'  # the same in UTF-8
    )
    bad, good = read_pairs_csv(path)
    assert bad.replaced is True
    assert bad.status == "ok"
    assert bad.kg_1 == [Triple("caf\ufffd", "r", "b")]
    assert good.replaced is False
    assert good.kg_1 == [Triple("café", "r", "b")]


def test_read_pairs_csv_counts_extra_fields_of_ragged_rows(tmp_path):
    path = tmp_path / "ragged.csv"
    path.write_text(
        "id,kg_1,kg_2\n"
        '0,"[[""a"", ""r"", ""b""]]",[],stray,more\n'
        "1,[],[]\n"
        "2,[]\n"  # a short row: kg_2 is absent, which is not the same as an empty KG
    )
    rows = list(read_pairs_csv(path))
    assert [r.extra_fields for r in rows] == [2, 0, 0]
    assert rows[0].kg_1 == [A]
    # Regression: a short row used to be read silently as an empty kg_2.
    assert [r.status for r in rows] == ["ok", "ok", "missing_kg_2"]
    assert rows[2].kg_2 == []


def test_read_pairs_csv_real_replacement_character_is_not_flagged(tmp_path):
    # Regression: a genuine U+FFFD in a valid UTF-8 file was reported as replaced bytes.
    path = tmp_path / "fffd.csv"
    path.write_text('id,kg_1,kg_2\n0,"[[""a\ufffd"", ""r"", ""b""]]",[]\n', encoding="utf-8")
    (row,) = read_pairs_csv(path)
    assert row.replaced is False
    assert row.kg_1 == [Triple("a\ufffd", "r", "b")]


def test_read_pairs_csv_integer_past_the_digit_limit_drops_its_triple(tmp_path):
    # Regression (issue 17, D1): the ValueError of a 5,000-digit number ended the whole read.
    rows = [["1", f'[[{BIG}, "r", "b"]]', KG_AB], ["2", KG_AB, KG_AB]]
    path = _write_csv(tmp_path / "big.csv", ["id", "kg_1", "kg_2"], rows)
    first, second = read_pairs_csv(path)
    assert (first.id, first.status, first.kg_1, first.kg_2) == ("1", "ok", [], [A])
    assert first.dropped == 1
    assert (second.status, second.kg_1, second.kg_2) == ("ok", [A], [A])


def test_read_pairs_csv_lone_surrogate_is_replaced_and_flagged(tmp_path):
    # Regression (issue 17, D2): a lone surrogate from a JSON escape reached the scorer.
    rows = [["1", r'[["\ud800", "r", "b"]]', KG_AB], ["2", KG_AB, r'[["a", "r", "\udfff"]]']]
    rows.append(["3", KG_AB, KG_AB])
    path = _write_csv(tmp_path / "s.csv", ["id", "kg_1", "kg_2"], rows)
    first, second, third = read_pairs_csv(path)
    assert (first.kg_1, first.status, first.replaced) == ([Triple("\ufffd", "r", "b")], "ok", True)
    assert (second.kg_2, second.replaced) == ([Triple("a", "r", "\ufffd")], True)
    assert third.replaced is False


def test_read_pairs_csv_glued_next_row_as_in_the_raw_release(tmp_path):
    # In four released files a row lost its line break: the next row's id follows the closing
    # quote of kg_2 ("]]"137), so the cell reads '[[...]]137' and the rest of that row spills
    # into four extra fields of this one.
    path = tmp_path / "glued.csv"
    path.write_text(
        "id,paragraph_1,kg_1,paragraph_2,kg_2\n"
        '136,"P1","[[""a"", ""r"", ""b""]]","P2","[[""c"", ""s"", ""d""]]"137,'
        '"Q1","[[""e"", ""t"", ""f""]]","Q2","[[""e"", ""t"", ""f""]]"\n'
        '138,"R1","[[""g"", ""u"", ""h""]]","R2","[]"\n'
    )
    rows = list(read_pairs_csv(path))
    assert [r.id for r in rows] == ["136", "138"]
    glued, after = rows
    assert glued.status == "unparseable_kg_2"
    assert glued.extra_fields == 4
    assert glued.kg_1 == [A]
    assert after.status == "ok"
    assert after.extra_fields == 0


# -- the released files ---------------------------------------------------------------------------


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("name", "n_rows", "bad_id", "bad_status", "bad_extra"),
    [
        ("paws_wiki_400_KGs.csv", 400, None, None, None),
        ("semantic_kg_codex_400_KGs.csv", 409, "136", "unparseable_kg_2", 4),
        ("semantic_kg_findkg_400_KGs.csv", 404, "122", "unparseable_kg_2", 4),
        ("semantic_kg_oregano_400_KGs.csv", 406, "67", "unparseable_kg_2", 4),
        ("pubmedqa_ranked_faithfulness_400_KGs.csv", 406, "97", "ok", 6),
    ],
)
def test_released_files_read_with_their_known_defects(
    benchmarks_kgs, name, n_rows, bad_id, bad_status, bad_extra
):
    rows = list(read_pairs_csv(benchmarks_kgs / name))
    assert len(rows) == n_rows
    odd = [r for r in rows if r.status != "ok" or r.extra_fields]
    assert not any(r.replaced for r in rows)
    if bad_id is None:
        assert odd == []
        assert all(r.dropped == 0 for r in rows)
        return
    assert [(r.id, r.status, r.extra_fields) for r in odd] == [(bad_id, bad_status, bad_extra)]


@pytest.mark.shared_data
def test_released_paws_pair_3_is_the_identical_griese_pair(paws_rows):
    row = paws_rows["3"]
    assert row.kg_1 == row.kg_2
    assert row.kg_1[0] == Triple("Griese", "was_injured_in", "season")


# -- property tests: any cell, any file (issue 17) ----------------------------------------------

PAIR_STATUSES = {"ok", "unparseable_kg_1", "unparseable_kg_2", "missing_kg_1", "missing_kg_2"}
PAIR_STATUSES |= {"oversized_kg_1", "oversized_kg_2"}  # a label over 1,000 characters
HOSTILE = settings(
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _clean_triples(triples: list[Triple]) -> bool:
    return all(isinstance(p, str) and utf8_clean(p) for t in triples for p in t.to_list())


@HOSTILE
@given(KG_CELLS)
def test_parse_kg_cell_takes_any_cell(cell):
    # Huge numbers, lone surrogates, NUL, NaN, dicts, 10,000 nested lists, long strings: triples
    # that any encoder and file can take, or a KGParseError, never another exception.
    try:
        triples, dropped, replaced = parse_kg_cell(cell)
    except KGParseError as exc:
        assert utf8_clean(str(exc)) and len(str(exc)) < 200
        return
    assert dropped >= 0 and isinstance(replaced, bool)
    assert _clean_triples(triples)


@settings(HOSTILE, max_examples=40)
@given(st.lists(st.tuples(KG_CELLS, KG_CELLS), min_size=1, max_size=4))
def test_read_pairs_csv_gives_every_row_a_status(tmp_path_factory, cells):
    path = tmp_path_factory.mktemp("pairs") / "hostile.csv"
    rows = [[str(i), kg_1, kg_2] for i, (kg_1, kg_2) in enumerate(cells)]
    # a lone surrogate cannot be UTF-8: "surrogatepass" writes its three (invalid) bytes
    with path.open("w", newline="", encoding="utf-8", errors="surrogatepass") as fh:
        csv.writer(fh).writerows([["id", "kg_1", "kg_2"], *rows])
    got = list(read_pairs_csv(path))
    assert [r.id for r in got] == [r[0] for r in rows]
    for row, (kg_1, kg_2) in zip(got, cells, strict=True):
        assert row.status in PAIR_STATUSES
        assert _clean_triples(row.kg_1) and _clean_triples(row.kg_2)
        if not (utf8_clean(kg_1) and utf8_clean(kg_2)):  # raw surrogates: invalid bytes
            assert row.replaced


# -- issue 28, item 11: CRLF labels, NUL ids, a spaced header; item 5: oversized KGs -------------


def test_read_pairs_csv_a_label_with_a_line_break_keeps_its_kg(tmp_path):
    """Regression: a label with CRLF made the whole KG unparseable (JSON and Python literal)."""
    rows = [
        ["1", '[["a\r\nb", "r", "c"], ["c", "s", "d"]]', KG_AB],
        ["2", "[('a\r\nb', 'r', 'c'), ('c', 's', 'd')]", "[('x\nline', 'r', 'y')]"],
    ]
    first, second = read_pairs_csv(_write_csv(tmp_path / "crlf.csv", ["id", "kg_1", "kg_2"], rows))
    assert (first.status, first.kg_1) == ("ok", [Triple("a\r\nb", "r", "c"), Triple("c", "s", "d")])
    assert second.status == "ok"
    assert second.kg_1 == [Triple("a  b", "r", "c"), Triple("c", "s", "d")]
    assert second.kg_2 == [Triple("x line", "r", "y")]


def test_read_pairs_csv_removes_control_characters_from_ids(tmp_path):
    """Regression: an id with a NUL was copied raw into the output."""
    rows = [["a\x00b", KG_AB, KG_AB], ["\x00\x1b", KG_AB, KG_AB], ["plain", KG_AB, KG_AB]]
    got = list(read_pairs_csv(_write_csv(tmp_path / "nul.csv", ["id", "kg_1", "kg_2"], rows)))
    assert [(r.id, r.id_cleaned) for r in got] == [("ab", True), ("row2", True), ("plain", False)]


def test_read_pairs_csv_trims_a_spaced_header(tmp_path):
    """Regression: a header written `id, kg_1, kg_2` was rejected as missing its columns."""
    path = tmp_path / "spaced.csv"
    path.write_text('id, kg_1 , kg_2\n7,"[[""a"",""r"",""b""]]",[]\n', encoding="utf-8")
    (row,) = read_pairs_csv(path)
    assert (row.id, row.kg_1, row.kg_2, row.status) == ("7", [A], [], "ok")


def test_read_pairs_csv_a_kg_past_the_limits_is_dropped_with_a_status(tmp_path, monkeypatch):
    import s3kg_core.limits as limits

    monkeypatch.setattr(limits, "MAX_TRIPLES", 2)
    three = json.dumps([["a", "r", f"b{i}"] for i in range(3)])
    long_label = json.dumps([["a" * (limits.MAX_LABEL_CHARS + 1), "r", "b"]])
    rows = [["1", three, KG_AB], ["2", KG_AB, long_label], ["3", KG_AB, KG_AB]]
    got = list(read_pairs_csv(_write_csv(tmp_path / "big.csv", ["id", "kg_1", "kg_2"], rows)))
    assert [r.status for r in got] == ["oversized_kg_1", "oversized_kg_2", "ok"]
    assert got[0].kg_1 == [] and got[1].kg_2 == []  # not kept in memory
    assert got[0].problem == "kg_1: 3 triples (the limit is 2)"
    assert got[1].problem == "kg_2: a label of 1,001 characters (the limit is 1,000)"
