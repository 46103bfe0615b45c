"""Export and import of the verdict log (s3kg_core.annotation.exchange): round trips in every
format, merging without duplicates, bad files refused whole, the database never overwritten."""

from __future__ import annotations

import csv
import json
import os
import shutil

import pandas as pd
import pytest
from store_helpers import build_store

from s3kg_core.annotation.exchange import (
    EXPORT_COLUMNS,
    FORMATS,
    export_bytes,
    export_frame,
    export_verdicts,
    import_verdicts,
    read_export,
)
from s3kg_core.annotation.log import Decision, adjudicate, save_decision, undo_last, withdraw
from s3kg_core.errors import InputFormatError, OutputError
from s3kg_core.normalize import normalize_triples
from s3kg_core.store.store import Store

G, A = ("aspirin", "reduce", "fever"), ("aspirin", "treat", "fever")
FORMULA = '=HYPERLINK("http://x")'


@pytest.fixture(scope="module")
def blank(tmp_path_factory):
    """A database with two runs' answers and KGs and an empty log."""
    path = tmp_path_factory.mktemp("blank") / "blank.duckdb"
    build_store(path, n_items=2, n_triples=2, seed=5)
    return path


@pytest.fixture(scope="module")
def annotated(blank, tmp_path_factory):
    """The blank database with a log of every kind of act, hostile text included."""
    path = tmp_path_factory.mktemp("annotated") / "a.duckdb"
    shutil.copy(blank, path)
    store = Store(path)
    with store.connect() as con:
        kgs = store.load_kgs(con)
    (compared,) = normalize_triples([kgs[(1, 1, "gold")].triples[0]])  # as TAU compares it
    compared = tuple(compared.to_list())
    save_decision(store, Decision("ann", 1, 1, G, A, "confirm", category="aligned"))
    save_decision(store, Decision(FORMULA, 1, 1, G, A, "reject", category="aligned"))
    save_decision(store, Decision("ann", 1, 1, G, A, "reject", category="aligned"))
    save_decision(store, Decision("'quoted", 1, 2, None, ("x", "é, \"y\"\n", "z"), "confirm",
                                  category="extra"))  # fmt: skip
    save_decision(store, Decision("ann", 1, 1, compared, None, "skip", category="missing"))
    undo_last(store, "ann")
    withdraw(store, FORMULA, 1, 1, G, A)
    adjudicate(store, "judge", 1, 1, G, A, "confirm", category="aligned")
    save_decision(store, Decision("ann", 2, 1, ("-1", "+", "@b"), A, "add"))
    return store


def _compare(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.reset_index(drop=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_round_trip_through_each_format_rebuilds_the_log(annotated, blank, tmp_path, fmt):
    out = tmp_path / f"log.{fmt}"
    assert export_verdicts(annotated, out) == 9
    target = Store(tmp_path / "copy.duckdb")
    shutil.copy(blank, target.path)
    report = import_verdicts(target, out)
    assert (report.read, report.added, report.known) == (9, 9, 0)
    assert _compare(export_frame(target)).equals(_compare(export_frame(annotated)))
    again = import_verdicts(target, out)  # merging, never duplicating
    assert (again.added, again.known) == (0, 9)
    assert len(export_frame(target)) == 9
    back = read_export(out)
    assert list(back.columns) == list(EXPORT_COLUMNS)


def test_the_export_holds_both_forms_of_each_triple_and_the_adjudicated_label(annotated):
    frame = export_frame(annotated)
    assert frame["verdict"].tolist() == [
        "confirm", "reject", "reject", "confirm", "skip", "undo", "withdraw", "confirm", "add",
    ]  # fmt: skip
    skip = frame.iloc[4]
    # the log had no extracted form of the missing triple: the export finds it in the KG
    assert skip["gold_extracted"] and skip["gold_extracted"][0][0] == skip["gold_triple"][0]
    assert set(frame.loc[frame["gold_triple"] == G, "adjudicated"]) == {"confirm"}
    assert frame["adjudicated"].iloc[3] is None
    assert (frame["dataset"].iloc[0], frame["ext_id"].iloc[0]) == ("toy", "q0")
    assert frame["replaces_uid"].iloc[2] == frame["uid"].iloc[0]
    assert frame["replaces_uid"].iloc[5] == frame["uid"].iloc[4]  # the undo names what it undid
    assert frame["role"].iloc[7] == "adjudicator"


def test_csv_cells_that_a_spreadsheet_would_run_are_escaped(annotated, tmp_path):
    out = tmp_path / "log.csv"
    export_verdicts(annotated, out)
    with out.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    annotators = [r["annotator"] for r in rows]
    assert "'" + FORMULA in annotators and "''quoted" in annotators
    assert not any(c.startswith(("=", "+", "-", "@")) for r in rows for c in r.values() if c)
    assert json.loads(rows[8]["gold_triple"]) == ["-1", "+", "@b"]


def test_the_database_and_its_wal_are_never_an_output(annotated, tmp_path):
    before = annotated.path.read_bytes()
    for out in (annotated.path, annotated.path.parent / "." / annotated.path.name,
                annotated.path.parent / f"{annotated.path.name}.wal"):  # fmt: skip
        with pytest.raises(OutputError, match="it is the database"):
            export_verdicts(annotated, out, fmt="csv")
    link = tmp_path / "link.csv"
    os.symlink(annotated.path, link)
    with pytest.raises(OutputError, match="it is the database"):
        export_verdicts(annotated, link)
    assert annotated.path.read_bytes() == before


def test_a_file_with_a_bad_row_adds_nothing(annotated, blank, tmp_path):
    out = tmp_path / "log.jsonl"
    export_verdicts(annotated, out)
    lines = out.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[3])
    bad["annotator"] = "\u202eecila"
    out.write_text("\n".join([*lines[:3], json.dumps(bad), *lines[4:]]) + "\n", encoding="utf-8")
    target = Store(tmp_path / "t.duckdb")
    shutil.copy(blank, target.path)
    with pytest.raises(InputFormatError, match=r"row 4: .*U\+202E"):
        import_verdicts(target, out)
    assert export_frame(target).empty


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"verdict": "maybe"}, "row 1: verdict 'maybe'"),
        ({"role": "boss"}, "row 1: role 'boss'"),
        ({"gold_triple": ["a", "b"]}, "row 1: gold_triple must be three strings"),
        ({"run_id": 99}, "row 1: this database has no answer of run 99"),
        ({"ext_id": "elsewhere"}, "row 1: run 1 item 1 is toy/q0 here but toy/elsewhere"),
    ],
)
def test_malformed_or_foreign_rows_are_named_errors(annotated, tmp_path, change, message):
    out = tmp_path / "log.jsonl"
    export_verdicts(annotated, out)
    first = {**json.loads(out.read_text(encoding="utf-8").splitlines()[0]), **change}
    out.write_text(json.dumps(first) + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        import_verdicts(annotated, out)


def test_a_row_replacing_one_nobody_has_is_refused(annotated, blank, tmp_path):
    out = tmp_path / "log.jsonl"
    export_verdicts(annotated, out)
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text(lines[2] + "\n", encoding="utf-8")  # replaces the first row, left out
    target = Store(tmp_path / "t.duckdb")
    shutil.copy(blank, target.path)
    with pytest.raises(InputFormatError, match="neither in the file nor in the database"):
        import_verdicts(target, out)


def test_files_that_are_no_export_are_named_errors(annotated, tmp_path):
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match="lacks the column"):
        import_verdicts(annotated, wrong)
    garbage = tmp_path / "g.parquet"
    garbage.write_bytes(b"not parquet")
    with pytest.raises(InputFormatError, match="cannot read"):
        import_verdicts(annotated, garbage)
    with pytest.raises(InputFormatError, match="format must be one of"):
        import_verdicts(annotated, tmp_path / "log.xlsx")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_download_bytes_are_the_exported_file(annotated, blank, tmp_path, fmt):
    out = tmp_path / f"log.{fmt}"
    export_verdicts(annotated, out)
    data = export_bytes(annotated, fmt)
    if fmt != "parquet":
        assert data == out.read_bytes()
    downloaded = tmp_path / f"downloaded.{fmt}"
    downloaded.write_bytes(data)
    target = Store(tmp_path / "t.duckdb")
    shutil.copy(blank, target.path)
    assert import_verdicts(target, downloaded).added == 9
    assert export_frame(target).equals(export_frame(annotated))


# -- issue 44, items 5, 6 and 10: malformed and crafted imports ----------------------------------


def _export_lines(annotated, tmp_path) -> list[dict]:
    out = tmp_path / "full.jsonl"
    export_verdicts(annotated, out)
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def _write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _fresh(blank, tmp_path) -> Store:
    target = Store(tmp_path / "t.duckdb")
    shutil.copy(blank, target.path)
    return target


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gold_triple": "not json"}, r"row 1: gold_triple is not JSON"),
        ({"gold_triple": 5}, r"row 1: gold_triple must be three strings; got 5"),
        ({"gold_triple": [1, 2, 3]}, r"row 1: gold_triple must be three strings"),
        ({"gold_extracted": [["a", "b"]]}, r"row 1: gold_extracted must be a list of triples"),
        ({"run_id": 10**30}, r"row 1: run_id 1000000000000000000000000000000 is not an id"),
        ({"run_id": -1}, r"row 1: run_id -1 is not an id"),
        ({"created_at": "soon"}, r"row 1: created_at soon is not a time"),
        ({"uid": None}, r"row 1: uid is needed"),
        ({"uid": ""}, r"row 1: uid is needed"),
        ({"annotator": 7}, r"row 1: annotator 7 is not a text"),
        ({"gold_triple": ["a" * 1001, "r", "b"]}, r"row 1: gold_triple holds a label of 1,001"),
    ],
)
def test_malformed_cells_are_one_line_errors(annotated, tmp_path, change, message):
    # regression: JSONDecodeError, TypeError and ConversionException tracebacks
    first = {**_export_lines(annotated, tmp_path)[0], **change}
    out = tmp_path / "log.jsonl"
    _write_jsonl(out, [first])
    with pytest.raises(InputFormatError, match=message):
        import_verdicts(annotated, out)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("[1, 2, 3]", "line 1 is not a JSON object"),
        ("null", "line 1 is not a JSON object"),
        ('{"a": ' * 100_000, "line 1 is nested too deeply"),
        ("{nope", "line 1 is not JSON"),
    ],
    ids=["list", "null", "deep", "broken"],
)
def test_lines_that_are_no_json_object_are_named(annotated, tmp_path, line, message):
    # regression: TypeError / RecursionError tracebacks
    out = tmp_path / "log.jsonl"
    out.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        import_verdicts(annotated, out)


def test_a_deeply_nested_triple_in_csv_is_named(annotated, tmp_path):
    out = tmp_path / "log.csv"
    export_verdicts(annotated, out)
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame.loc[0, "gold_triple"] = "[" * 100_000
    frame.to_csv(out, index=False)
    with pytest.raises(InputFormatError, match="row 1: gold_triple is nested too deeply"):
        import_verdicts(annotated, out)


def test_a_parquet_triple_of_text_is_named(annotated, tmp_path):
    # regression: a Parquet file whose triple column is a string (not a list)
    from s3kg_core.store.connection import open_duckdb

    out = tmp_path / "log.parquet"
    export_verdicts(annotated, out)
    con = open_duckdb()
    target = str(tmp_path / "strings.parquet")
    con.execute(
        f"COPY (SELECT * REPLACE ('abc' AS gold_triple) FROM read_parquet('{out}')) "
        f"TO '{target}' (FORMAT parquet)"
    )
    con.close()
    with pytest.raises(InputFormatError, match="row 1: gold_triple is not JSON"):
        import_verdicts(annotated, target)


def test_a_file_past_the_import_limit_is_refused_before_it_is_read(
    annotated, tmp_path, monkeypatch
):
    import s3kg_core.limits as limits

    out = tmp_path / "log.jsonl"
    export_verdicts(annotated, out)
    monkeypatch.setattr(limits, "MAX_IMPORT_BYTES", out.stat().st_size - 1)
    with pytest.raises(InputFormatError, match="an annotation import takes at most"):
        import_verdicts(annotated, out)


def test_a_parquet_import_is_capped_by_its_columns_decompressed(
    annotated, blank, tmp_path, monkeypatch
):
    """Issue 59: a small compressed Parquet import was read whole, whatever it held once
    decompressed; its footer's sizes are checked first, and nothing is written."""
    from s3kg_core.limits import MAX_INPUT_ENV
    from s3kg_core.store.connection import open_duckdb

    out = tmp_path / "log.parquet"
    export_verdicts(annotated, out)
    con = open_duckdb()
    target_file = tmp_path / "padded.parquet"
    con.execute(
        f"COPY (SELECT *, repeat('a', 1000000) || uid AS note FROM read_parquet('{out}')) "
        f"TO '{target_file}' (FORMAT parquet, COMPRESSION zstd)"
    )
    con.close()
    assert target_file.stat().st_size < 500_000
    target = _fresh(blank, tmp_path)
    before = target.path.read_bytes()
    monkeypatch.setenv(MAX_INPUT_ENV, "1")
    with pytest.raises(InputFormatError, match=r"padded\.parquet holds .* MB once decompressed"):
        import_verdicts(target, target_file)
    assert target.path.read_bytes() == before


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"uid": "u\x00id"}, "row 3: uid 'u\\x00id' holds U+0000 (a control character)"),
        ({"uid": "\u202edi"}, "holds U+202E (a bidirectional control)"),
        (
            {"created_at": "9999-12-31T00:00:00"},
            "row 3: created_at 9999-12-31 00:00 is in the future",
        ),
    ],
)
def test_a_uid_with_a_control_character_or_a_future_time_is_refused(
    annotated, blank, tmp_path, change, message
):
    """Regression (issue 59, item 13): a uid holding NUL and created_at 9999-12-31 were
    imported; the row is named, and nothing is written."""
    rows = _export_lines(annotated, tmp_path)
    rows[2] = {**rows[2], **change}
    out = tmp_path / "log.jsonl"
    _write_jsonl(out, rows)
    target = _fresh(blank, tmp_path)
    before = target.path.read_bytes()
    with pytest.raises(InputFormatError) as info:
        import_verdicts(target, out)
    assert message in str(info.value) and "\n" not in str(info.value)
    assert export_frame(target).empty and target.path.read_bytes() == before


def test_an_undo_of_another_persons_decision_is_refused(annotated, blank, tmp_path):
    # regression (item 6): an `undo` by mallory replacing bob's row left bob two verdicts
    rows = _export_lines(annotated, tmp_path)
    victim = next(r for r in rows if r["annotator"] == "ann" and r["verdict"] == "confirm")
    forged = {**victim, "uid": "forged", "annotator": "mallory", "verdict": "undo",
              "replaces_uid": victim["uid"], "created_at": victim["created_at"]}  # fmt: skip
    out = tmp_path / "log.jsonl"
    _write_jsonl(out, [*rows, forged])
    target = _fresh(blank, tmp_path)
    with pytest.raises(InputFormatError, match="another person's decision or another pair's"):
        import_verdicts(target, out)
    assert export_frame(target).empty  # nothing written


def test_an_undo_against_a_row_only_in_the_database_is_refused_too(annotated, tmp_path):
    rows = _export_lines(annotated, tmp_path)
    victim = next(r for r in rows if r["annotator"] == "ann" and r["verdict"] == "confirm")
    forged = {**victim, "uid": "forged2", "annotator": "mallory", "verdict": "undo",
              "replaces_uid": victim["uid"]}  # fmt: skip
    out = tmp_path / "one.jsonl"
    _write_jsonl(out, [forged])
    with pytest.raises(InputFormatError, match="another person's decision or another pair's"):
        import_verdicts(annotated, out)


def test_a_row_replacing_one_only_in_the_database_is_imported(annotated, blank, tmp_path):
    # regression (item 6): refused with the false "neither in the file nor in the database"
    rows = _export_lines(annotated, tmp_path)
    target = _fresh(blank, tmp_path)
    head = tmp_path / "head.jsonl"
    _write_jsonl(head, rows[:2])
    assert import_verdicts(target, head).added == 2
    tail = tmp_path / "tail.jsonl"
    _write_jsonl(tail, rows[2:])  # row 3 replaces row 1, which only the database holds now
    assert rows[2]["replaces_uid"] == rows[0]["uid"]
    report = import_verdicts(target, tail)
    assert (report.added, report.known) == (len(rows) - 2, 0)
    assert _compare(export_frame(target)).equals(_compare(export_frame(annotated)))


def test_rows_without_a_uid_or_sharing_one_are_refused(annotated, blank, tmp_path):
    # regression (item 6): two null uids read "1 added, 1 already there" and lost a decision
    rows = _export_lines(annotated, tmp_path)
    first, other = rows[0], {**rows[3], "uid": rows[0]["uid"]}
    out = tmp_path / "twice.jsonl"
    _write_jsonl(out, [first, other])
    target = _fresh(blank, tmp_path)
    with pytest.raises(InputFormatError, match=r"row 2: uid .* is also row 1's"):
        import_verdicts(target, out)
    _write_jsonl(out, [{**first, "uid": None}, {**rows[3], "uid": None}])
    with pytest.raises(InputFormatError, match="row 1: uid is needed"):
        import_verdicts(target, out)
    assert export_frame(target).empty


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"role": "adjudicator", "verdict": "skip"}, "an adjudicator gives a label"),
        ({"verdict": "undo", "replaces_uid": None}, "an undo names the row it undoes"),
        ({"annotator": "ann\u202e"}, "U\\+202E"),
    ],
)
def test_rows_follow_the_pages_rules(annotated, blank, tmp_path, change, message):
    # regression (item 6): role adjudicator with skip was accepted; the API refuses it
    first = {**_export_lines(annotated, tmp_path)[0], "replaces_uid": None, **change}
    out = tmp_path / "log.jsonl"
    _write_jsonl(out, [first])
    with pytest.raises(InputFormatError, match=message):
        import_verdicts(_fresh(blank, tmp_path), out)


def test_a_parquet_export_on_a_full_disk_is_one_line(annotated, tmp_path, monkeypatch):
    # regression (issue 44, item 5): DuckDB's IOException, not the project's one line
    import duckdb

    from s3kg_core.store import annotation_queries

    def disk_full(con, frame, path):
        raise duckdb.IOException(
            f'IO Error: Could not write file "{path}": No space left on device'
        )

    monkeypatch.setattr(annotation_queries, "copy_export_to_parquet", disk_full)
    out = tmp_path / "log.parquet"
    with pytest.raises(OutputError, match=r"the disk is full \(No space left on device\); a file"):
        export_verdicts(annotated, out)
    assert not out.exists()
