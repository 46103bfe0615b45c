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
        ({"gold_triple": ["a", "b"]}, "row 1: gold_triple is not three strings"),
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
