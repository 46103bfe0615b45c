"""Tests of s3kg_core.cli.store, the database commands: import, score, tau, cus, export.

Includes the kill -9 test: a real ``python -m s3kg_core score`` killed mid-run and resumed gives
the same tables as an uninterrupted run.
"""

from __future__ import annotations

import errno
import io
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner
from store_helpers import (
    REPO,
    build_store,
    release_rows,
    start_lock_holder,
    write_release_csv,
)

from s3kg_core.cli import cli
from s3kg_core.errors import DatabaseLockedError
from s3kg_core.store.records import KGRecord
from s3kg_core.store.schema import SCHEMA_VERSION
from s3kg_core.store.store import Store

JSON_KEYS = {
    "dataset", "model", "temperature", "extractor", "run_id", "n", "unscored", "gold_sim",
    "ctx_sim", "cus", "cus_low", "cus_high", "signature",
}  # fmt: skip


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _invoke(*args: str | Path):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _one_line_error(result) -> str:
    """The single ``Error: ...`` line of a failed command (exit status 1, no traceback)."""
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ")
    assert "Traceback" not in result.output
    return lines[0]


# -- help ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "options"),
    [
        (["import"], ["s3kg-release", "pubmedqa", "csv"]),
        (["import", "s3kg-release"], ["DIRECTORY", "--db", "mesaqa_gemma-7b-it.csv"]),
        (["import", "pubmedqa"], ["PATH", "--db", "--dataset", "--limit", "the first N"]),
        (["import", "csv"], ["PATH", "--db", "--map", "--dataset", "--model", "--temperature"]),
        (
            ["score"],
            ["--db", "--encoder", "--mode", "--alpha", "--tau", "--wl-iterations", "--batch-items"],
        ),
        (["tau"], ["--db", "--fraction", "--target", "--signature", "--encoder", "--threshold"]),
        (["tau", "calibrate"], ["--db", "--task", "--encoder", "--curve"]),
        (["cus"], ["--db", "--signature", "--alpha", "--json"]),
        (
            ["export"],
            [
                "--db",
                "--format",
                "--out",
                "--signature",
                "csv|parquet|json",
                "--include",
                "  ext_id [str]: ",
                "  prompt_tokens [Int64]: ",
                "  tau_gold [str]: ",
            ],
        ),
    ],
)
def test_every_database_command_has_help(command, options):
    result = _invoke(*command, "--help")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: cli {' '.join(command)}") or result.output.startswith(
        f"Usage: s3kg {' '.join(command)}"
    )
    for option in options:
        assert option in result.output, (command, option)


def test_import_pubmedqa_limit_takes_the_first_questions_issue_58(tmp_path):
    """Issue 58: `s3kg import pubmedqa` had no --limit (1000 items for a 40-question try)."""
    path = tmp_path / "ori_pqal.json"
    records = {
        str(pmid): {"QUESTION": f"Q{pmid}?", "CONTEXTS": ["C."], "LONG_ANSWER": "A."}
        for pmid in (5, 3, 9, 1)
    }
    path.write_text(json.dumps(records), encoding="utf-8")
    db = tmp_path / "db.duckdb"
    result = _invoke("import", "pubmedqa", path, "--limit", "3", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "ori_pqal.json: pubmedqa_pqal: 3 items, 0 answers, 0 KGs"
    with duckdb.connect(str(db), read_only=True) as con:
        ids = con.execute("SELECT ext_id FROM items ORDER BY item_id").fetchall()
    assert ids == [("5",), ("3",), ("9",)]
    refused = _invoke("import", "pubmedqa", path, "--limit", "0", "--db", db)
    assert refused.exit_code == 2 and "--limit" in refused.output


def test_top_level_help_lists_the_database_commands():
    result = _invoke("--help")
    assert result.exit_code == 0
    for name in ("import", "score", "tau", "cus", "export", "pairs"):
        assert name in result.output


# -- happy path ----------------------------------------------------------------------------------


def test_import_score_tau_cus_export(tmp_path, minilm):
    qa = tmp_path / "qa"
    write_release_csv(qa / "mesaqa_gemma-7b-it.csv", "released-small", release_rows(3))
    rows = release_rows(3, start=10)
    rows[1]["kg_answer"] = "not a list"
    write_release_csv(qa / "pubmedqa_llama-2-7b-chat.csv", "released", rows)
    db = tmp_path / "db" / "s3kg.duckdb"

    result = _invoke("import", "s3kg-release", qa, "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "mesaqa_gemma-7b-it.csv: mesaqa / gemma-7b-it: 3 items, 3 answers, 9 KGs"
    assert lines[1] == (
        "pubmedqa_llama-2-7b-chat.csv: pubmedqa / llama-2-7b-chat: 3 items, 3 answers, 9 KGs; "
        "1 problems"
    )
    assert lines[2].startswith("  row 11: answer KG unparseable (")

    result = _invoke("score", "--db", db)
    assert result.exit_code == 0, result.output
    out = result.output.strip()
    assert out.startswith("scored 6 answers (0 already done; comparisons not scorable: ")
    assert "2 answer_kg_unparseable" in out
    assert "strings encoded; signature mode:ot|enc:minilm@" in out
    assert out.endswith("|alpha:0.5")

    result = _invoke("score", "--db", db, "--alpha", "0.25")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("scored 0 answers (6 already done) in ")
    assert ", 0 strings encoded;" in result.output and result.output.strip().endswith("|alpha:0.25")

    out_json = tmp_path / "tables" / "cus.json"
    result = _invoke("cus", "--db", db, "--json", out_json)
    assert result.exit_code == 0, result.output
    header, *body, zero, sig = result.output.strip().splitlines()
    assert header.split() == [
        "dataset",
        "model",
        "temperature",
        "extractor",
        "run_id",
        "n",
        "unscored",
        "gold_sim",
        "ctx_sim",
        "cus",
        "cus_low",
        "cus_high",
    ]
    assert zero.startswith("1 of the 6 scored answers have CUS 0: a KG is empty or unparseable")
    assert len(body) == 2 and body[0].split()[:4] == [
        "mesaqa",
        "gemma-7b-it",
        "0.0000",
        "released-small",
    ]
    assert sig.startswith("signature mode:ot|") and sig.endswith("|alpha:0.25")  # the stored
    records = json.loads(out_json.read_text(encoding="utf-8"))
    assert isinstance(records, list) and len(records) == 2
    for rec in records:
        assert set(rec) == JSON_KEYS
        assert isinstance(rec["n"], int) and rec["n"] == 3
        assert rec["temperature"] == 0.0
        assert all(0.0 <= rec[k] <= 1.0 for k in ("gold_sim", "ctx_sim", "cus"))
    assert [(r["dataset"], r["model"], r["extractor"]) for r in records] == [
        ("mesaqa", "gemma-7b-it", "released-small"),
        ("pubmedqa", "llama-2-7b-chat", "released"),
    ]

    reblended = _invoke("cus", "--db", db, "--alpha", "0", "--json", tmp_path / "cus0.json")
    assert reblended.exit_code == 0, reblended.output
    assert reblended.output.strip().endswith("|alpha:0")
    records_0 = json.loads((tmp_path / "cus0.json").read_text(encoding="utf-8"))
    assert records_0 != records

    result = _invoke("tau", "--db", db, "--fraction", "0.5")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("TAU on 4 answers (lowest 0.5 by cus): ")
    assert " roles swapped, " in result.output  # its own category, beside the entity mismatches
    with Store(db, read_only=True).connect() as con:
        assert con.execute("SELECT count(*) FROM tau_results").fetchall() == [(4,)]

    included = {"csv": "", "parquet": " (metadata, triples, tau included)"}
    included["json"] = included["parquet"]
    for fmt in ("csv", "parquet", "json"):
        target = tmp_path / "exports" / f"r.{fmt}"
        result = _invoke("export", "--db", db, "--format", fmt, "--out", target)
        assert result.exit_code == 0, result.output
        assert result.output == f"wrote 6 rows to {target}{included[fmt]}\n"
    target = tmp_path / "exports" / "bare.json"
    result = _invoke("export", "--db", db, "--format", "json", "--out", target, "--include", "none")
    assert result.output == f"wrote 6 rows to {target}\n"
    assert (
        _one_line_error(
            _invoke("export", "--db", db, "--format", "csv", "--out", target, "--include", "kgs")
        )
        == "Error: --include takes metadata, triples, tau (comma-separated), all or none; got kgs"
    )
    con = duckdb.connect()
    parquet = con.execute(
        "SELECT count(*), min(cus), max(cus) FROM read_parquet(?)",
        [str(tmp_path / "exports" / "r.parquet")],
    ).fetchall()[0]
    con.close()
    assert parquet[0] == 6 and 0.0 <= parquet[1] <= parquet[2] <= 1.0

    result = _invoke("export", "--db", db, "--format", "xlsx", "--out", tmp_path / "r.xlsx")
    assert result.exit_code == 2 and "--format" in result.output


def test_reimported_corrected_kg_is_scored_again_not_left_at_its_stale_zero_d3(tmp_path, minilm):
    """Issue 17 (D3): after re-importing a run whose unparseable KG was corrected (same file
    name), ``score`` said "scored 0 answers (3 already done)" and ``cus`` kept the stale 0."""
    qa = tmp_path / "qa"
    rows = release_rows(3)
    rows[1]["kg_answer"] = "not a list"
    write_release_csv(qa / "toy_m.csv", "released", rows)
    db = tmp_path / "s3kg.duckdb"
    assert _invoke("import", "s3kg-release", qa, "--db", db).exit_code == 0
    assert _invoke("score", "--db", db).output.startswith("scored 3 answers (0 already done")
    rows[1]["kg_answer"] = rows[0]["kg_answer"]
    write_release_csv(qa / "toy_m.csv", "released", rows)
    assert _invoke("import", "s3kg-release", qa, "--db", db).exit_code == 0
    result = _invoke("score", "--db", db)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("scored 1 answers (2 already done) in "), result.output
    with Store(db, read_only=True).connect() as con:
        statuses = con.execute("SELECT DISTINCT gold_status FROM scores").fetchall()
    assert statuses == [("ok",)]


def test_import_csv_names_the_row_whose_bytes_were_not_utf8(tmp_path):
    table = tmp_path / "latin1.csv"
    table.write_bytes(b"Q,C,G\nwhy?,ctx,gold\ncaf\xe9?,ctx2,gold2\n")
    db = tmp_path / "db.duckdb"
    result = _invoke("import", "csv", table, "--db", db, "--map", "question=Q,context=C,gold=G")
    assert result.exit_code == 0, result.output
    assert result.output == (
        "latin1.csv: latin1: 2 items, 0 answers, 0 KGs; 1 problems\n"
        "  row 2 (data row 2): non-UTF-8 text replaced with U+FFFD\n"
    )


def test_imports_take_a_5000_digit_number(tmp_path):
    # Regression (issue 17, D1): `import csv` (JSONL) and `import s3kg-release` ended in a
    # ValueError traceback ("Exceeds the limit (4300 digits) for integer string conversion").
    big = "9" * 5000
    db = tmp_path / "db.duckdb"
    table = tmp_path / "t.jsonl"
    table.write_text(f'{{"q": "why?", "c": "ctx", "g": {big}}}\n', encoding="utf-8")
    result = _invoke("import", "csv", table, "--db", db, "--map", "question=q,context=c,gold=g")
    assert result.exit_code == 0, result.output
    assert result.output == "t.jsonl: t: 1 items, 0 answers, 0 KGs\n"
    rows = release_rows(1)
    rows[0]["kg_gold"] = f'[[{big}, "r", "b"]]'
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    result = _invoke("import", "s3kg-release", tmp_path / "qa", "--db", db)
    assert result.exit_code == 0, result.output
    assert "row 0: gold KG: 1 malformed triples dropped" in result.output


def test_imports_replace_and_report_a_lone_surrogate(tmp_path):
    # Regression (issue 17, D2): `import csv` (JSONL), `import s3kg-release` and `import pubmedqa`
    # died encoding "\ud800" (UnicodeEncodeError / DuckDB "Python Conversion Failure").
    db = tmp_path / "db.duckdb"
    table = tmp_path / "t.jsonl"
    table.write_text(r'{"q": "Is \ud800 ok?", "c": "ctx", "g": "gold"}' "\n", encoding="utf-8")
    result = _invoke("import", "csv", table, "--db", db, "--map", "question=q,context=c,gold=g")
    assert result.exit_code == 0, result.output
    assert result.output == (
        "t.jsonl: t: 1 items, 0 answers, 0 KGs; 1 problems\n"
        "  row 1 (line 1): non-UTF-8 text replaced with U+FFFD\n"
    )
    rows = release_rows(1)
    rows[0]["kg_context"] = r'[["\ud800", "r", "b"]]'
    write_release_csv(tmp_path / "qa" / "toy_m.csv", "released", rows)
    result = _invoke("import", "s3kg-release", tmp_path / "qa", "--db", db)
    assert result.exit_code == 0, result.output
    assert "  row 0: context KG: non-UTF-8 text replaced with U+FFFD\n" in result.output
    pqal = tmp_path / "ori_pqal.json"
    pqal.write_text(
        r'{"7": {"QUESTION": "\ud800", "CONTEXTS": [], "LONG_ANSWER": "a"}}', encoding="utf-8"
    )
    result = _invoke("import", "pubmedqa", pqal, "--db", db)
    assert result.exit_code == 0, result.output
    assert result.output == (
        "ori_pqal.json: pubmedqa_pqal: 1 items, 0 answers, 0 KGs; 1 problems\n"
        "  record 7: non-UTF-8 text replaced with U+FFFD\n"
    )


def test_import_pubmedqa_and_mapped_csv(tmp_path):
    db = tmp_path / "db.duckdb"
    pqal = tmp_path / "ori_pqal.json"
    pqal.write_text(
        json.dumps({"1": {"QUESTION": "q?", "CONTEXTS": ["a.", "b."], "LONG_ANSWER": "yes."}}),
        encoding="utf-8",
    )
    result = _invoke("import", "pubmedqa", pqal, "--db", db)
    assert result.exit_code == 0, result.output
    assert result.output == "ori_pqal.json: pubmedqa_pqal: 1 items, 0 answers, 0 KGs\n"

    table = tmp_path / "mine.csv"
    table.write_text("Q,C,G,A\nwhy?,ctx,gold,ans\nhow?,ctx2,gold2,ans2\n", encoding="utf-8")
    result = _invoke(
        "import", "csv", table, "--db", db, "--map", "question=Q,context=C,gold=G,answer=A",
        "--model", "smol", "--temperature", "0.7", "--dataset", "custom",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output == "mine.csv: custom / smol: 2 items, 2 answers, 0 KGs\n"
    with Store(db, read_only=True).connect() as con:
        assert con.execute("SELECT model, temperature, extractor FROM runs").fetchall() == [
            ("smol", 0.7, "none")
        ]

    no_model = _invoke(
        "import", "csv", table, "--db", db, "--map", "question=Q,context=C,gold=G,answer=A"
    )
    assert _one_line_error(no_model) == (
        "Error: an answer column is mapped: name its model with --model NAME"
    )
    bad_field = _invoke("import", "csv", table, "--db", db, "--map", "question=Q,context=C,label=G")
    assert "unknown field 'label'" in _one_line_error(bad_field)
    absent = _invoke("import", "csv", table, "--db", db, "--map", "question=Q,context=C,gold=gold")
    assert _one_line_error(absent) == (
        "Error: mine.csv: mapped column(s) not found: gold=gold; columns in the file: Q, C, G, A"
    )
    missing_map = _invoke("import", "csv", table, "--db", db)
    assert missing_map.exit_code == 2 and "--map" in missing_map.output


def test_import_release_errors_are_one_line(tmp_path):
    qa = tmp_path / "qa"
    qa.mkdir()
    (qa / "toy_m.csv").write_text("id,question\n1,q\n", encoding="utf-8")
    line = _one_line_error(_invoke("import", "s3kg-release", qa, "--db", tmp_path / "db.duckdb"))
    assert line.startswith("Error: toy_m.csv: not a released QA run; expected columns (")
    assert line.endswith("found id, question")
    (qa / "toy_m.csv").unlink()
    write_release_csv(qa / "toy.csv", "released", release_rows(1))
    line = _one_line_error(_invoke("import", "s3kg-release", qa, "--db", tmp_path / "db.duckdb"))
    assert "file name must be DATASET_MODEL.csv" in line
    assert not (tmp_path / "db.duckdb").exists()


class _DiskFullAfter:
    """A text file that takes ``limit`` characters, writes them through, then fails (ENOSPC)."""

    def __init__(self, inner, limit: int) -> None:
        self._inner, self._left = inner, limit

    def write(self, text: str) -> int:
        if len(text) > self._left:
            self._inner.write(text[: self._left])
            self._inner.flush()
            raise OSError(28, "No space left on device")
        self._left -= len(text)
        return self._inner.write(text)

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self._inner.close()


def test_cus_json_is_written_atomically(tmp_path, minilm, monkeypatch):
    # Regression: `s3kg cus --json` wrote its file in place, so a failure midway (disk full,
    # a kill) left a truncated JSON where the previous table had been.
    db = tmp_path / "db.duckdb"
    build_store(db, models=("model-a",), n_items=1, n_triples=2)
    assert _invoke("score", "--db", db).exit_code == 0
    tables = tmp_path / "tables"
    out = tables / "cus.json"
    assert _invoke("cus", "--db", db, "--json", out).exit_code == 0
    before = out.read_text(encoding="utf-8")
    assert json.loads(before)[0]["model"] == "model-a"

    real_open = io.open

    def disk_full_open(file, mode="r", *args, **kwargs):
        handle = real_open(file, mode, *args, **kwargs)
        # Files of the output folder (os.fdopen opens a temporary file by descriptor).
        target = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else str(file)
        if "w" in mode and target.startswith(str(tables)):
            return _DiskFullAfter(handle, limit=10)
        return handle

    monkeypatch.setattr(io, "open", disk_full_open)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where the output is saved instead
    result = _invoke("cus", "--db", db, "--alpha", "0", "--json", out)
    monkeypatch.undo()
    # the table is printed, then one error line names where the JSON was saved (issue 17, D10)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith(f"Error: cannot write {out}: No space left on device; the output is ")
    saved = Path(last.rsplit(" ", 1)[1])
    assert saved.parent == tmp_path and json.loads(saved.read_text(encoding="utf-8"))
    assert out.read_text(encoding="utf-8") == before  # the old table, whole
    assert sorted(p.name for p in tables.iterdir()) == ["cus.json"]  # no temporary left behind


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_export_that_fails_midway_leaves_the_previous_file_whole(tmp_path, minilm, fmt):
    # Regression: `s3kg export` wrote in place: a full disk or a kill midway left half a file
    # where the previous export had been.
    db = tmp_path / "db.duckdb"
    build_store(db, models=("model-a",), n_items=2, n_triples=2)
    assert _invoke("score", "--db", db).exit_code == 0
    out = tmp_path / "exports" / f"results.{fmt}"
    assert _invoke("export", "--db", db, "--format", fmt, "--out", out).exit_code == 0
    before = out.read_bytes()
    # the writers: pandas' to_csv, the json module (it writes floats exactly)
    owner, name = (pd.DataFrame, "to_csv") if fmt == "csv" else (json, "dump")
    real = getattr(owner, name)

    def half_then_disk_full(self_or_data, path_or_file, *args, **kwargs):
        if hasattr(path_or_file, "write"):
            path_or_file.write(before[: len(before) // 2].decode("utf-8", "ignore"))
        else:
            Path(path_or_file).write_bytes(before[: len(before) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(owner, name, half_then_disk_full)
        result = _invoke("export", "--db", db, "--format", fmt, "--out", out)
    assert getattr(owner, name) is real
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert _one_line_error(result) == (
        f"Error: cannot write {out}: the disk is full (No space left on device); a file that "
        "was there is unchanged: free space on its disk (or write to another), then rerun"
    )
    assert out.read_bytes() == before
    assert sorted(p.name for p in out.parent.iterdir()) == [out.name]  # no temporary left


def test_a_parquet_export_on_a_full_disk_is_one_line(tmp_path, minilm, monkeypatch):
    # Regression (issue 44, item 5): DuckDB's own IOException reached the user as a traceback
    import duckdb

    from s3kg_core.store import queries

    db = tmp_path / "db.duckdb"
    build_store(db, models=("model-a",), n_items=2, n_triples=2)
    assert _invoke("score", "--db", db).exit_code == 0
    out = tmp_path / "results.parquet"

    def disk_full(con, path):
        raise duckdb.IOException(
            f'IO Error: Could not write file "{path}": No space left on device'
        )

    monkeypatch.setattr(queries, "copy_results_to_parquet", disk_full)
    result = _invoke("export", "--db", db, "--format", "parquet", "--out", out)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert _one_line_error(result) == (
        f"Error: cannot write {out}: the disk is full (No space left on device); a file that "
        "was there is unchanged: free space on its disk (or write to another), then rerun"
    )
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["db.duckdb"]


@pytest.mark.parametrize(
    ("command", "name"),
    [(("cus", "--json"), "t.json"), (("export", "--format", "csv", "--out"), "t.csv")],
    ids=["cus", "export"],
)
def test_an_output_below_a_file_is_a_one_line_error_before_any_work(tmp_path, command, name):
    # Regression (issue 17, D10): `cus --json some.csv/t.json` and `export --out ...` ended in a
    # FileExistsError traceback after the work.
    db = tmp_path / "db.duckdb"
    build_store(db, n_items=1)  # not scored: the output is checked before the scores are read
    (tmp_path / "some.csv").write_text("not a folder\n", encoding="utf-8")
    out = tmp_path / "some.csv" / name
    line = _one_line_error(_invoke(command[0], "--db", db, *command[1:], out))
    assert line == f"Error: cannot write {out}: {tmp_path / 'some.csv'} is a file, not a folder"


# -- errors on the database file -----------------------------------------------------------------


def test_cus_on_a_missing_database_says_to_import(tmp_path):
    db = tmp_path / "none.duckdb"
    line = _one_line_error(_invoke("cus", "--db", db))
    assert (
        line == f"Error: database {db} does not exist; create it with `s3kg import ... --db {db}`"
    )
    assert not db.exists()
    line = _one_line_error(
        _invoke("export", "--db", db, "--format", "csv", "--out", tmp_path / "o.csv")
    )
    assert "does not exist" in line


def test_commands_on_a_corrupt_file_name_it(tmp_path):
    db = tmp_path / "corrupt.duckdb"
    db.write_text("id,question\n1,q\n" * 100, encoding="utf-8")
    expected = (
        f"Error: {db} is not a DuckDB database file; move it aside and re-import into a new file"
    )
    assert _one_line_error(_invoke("cus", "--db", db)) == expected
    assert _one_line_error(_invoke("tau", "--db", db)) == expected
    assert _one_line_error(_invoke("score", "--db", db)) == expected
    qa = tmp_path / "qa"
    write_release_csv(qa / "toy_m.csv", "released", release_rows(1))
    assert _one_line_error(_invoke("import", "s3kg-release", qa, "--db", db)) == expected


def test_commands_on_a_truncated_file_name_it(tmp_path):
    # Regression (issue 17, D10b): `cus` and `score` on a database cut to half its size ended in
    # a _duckdb.IOException traceback ("Could not read enough bytes from file").
    db = tmp_path / "cut.duckdb"
    build_store(db, n_items=2)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    expected = (
        f"Error: {db} is not a readable DuckDB database (truncated or damaged); restore it from "
        "a backup, or move it aside and re-import into a new file"
    )
    for command in ("cus", "score", "tau"):
        assert _one_line_error(_invoke(command, "--db", db)) == expected, command
    out = tmp_path / "r.csv"
    assert _one_line_error(_invoke("export", "--db", db, "--format", "csv", "--out", out)) == (
        expected
    )


def test_newer_schema_and_unscored_database_are_one_line_errors(tmp_path):
    db = tmp_path / "db.duckdb"
    build_store(db, n_items=1)
    assert _one_line_error(_invoke("cus", "--db", db)) == (
        f"Error: no scores in {db}: run `s3kg score --db {db}`"
    )
    assert _one_line_error(_invoke("tau", "--db", db)) == (
        "Error: nothing is scored yet: run `s3kg score` first"
    )
    con = duckdb.connect(str(db))
    con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION + 1)])
    con.close()
    line = _one_line_error(_invoke("cus", "--db", db))
    assert str(db) in line and "newer than this s3kg" in line and "upgrade" in line


def test_cus_on_a_locked_database_names_it_and_says_what_to_do(tmp_path):
    db = tmp_path / "locked.duckdb"
    build_store(db, n_items=1)
    holder = start_lock_holder(db, n_rows=5, hold=14.0)  # longer than the CLI's 10 s of retries
    try:
        started = time.monotonic()
        line = _one_line_error(_invoke("cus", "--db", db))
        waited = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert line.startswith(f"Error: database {db} is locked by another process (")
    assert "wait for it to finish" in line and "then retry" in line
    assert 9.0 <= waited < 14.0  # it retried for its lock timeout, then gave up


# -- kill -9 in the middle of `s3kg score` -------------------------------------------------------


def _scored_rows(db: Path) -> list[tuple] | None:
    """Committed score rows, or None while the writer holds the file."""
    try:
        with Store(db, read_only=True, lock_timeout=1.0).connect() as con:
            return con.execute(
                "SELECT run_id, item_id, scored_at FROM scores ORDER BY run_id, item_id"
            ).fetchall()
    except DatabaseLockedError:
        return None


def _components(db: Path) -> dict[tuple[int, int], tuple]:
    with Store(db, read_only=True).connect() as con:
        rows = con.execute(
            "SELECT run_id, item_id, gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, "
            "ctx_status FROM scores"
        ).fetchall()
    return {(r[0], r[1]): tuple(r[2:]) for r in rows}


def test_kill_9_mid_score_then_rerun_equals_an_uninterrupted_run(tmp_path, minilm):
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    build_store(a, n_items=80, n_triples=2, seed=3, distinct_per_item=True)
    shutil.copy(a, b)
    total = 160  # large enough that a fast encoder (onnx) is still scoring at the kill
    command = [sys.executable, "-m", "s3kg_core", "score", "--db", str(a), "--batch-items", "2"]
    env = {
        **os.environ,
        "S3KG_ENCODE_PROCESSES": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONPATH": str(REPO),
    }

    proc = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    seen: list[tuple] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            rows = _scored_rows(a)
            if rows:
                seen = rows
                break
            time.sleep(0.1)
        assert proc.poll() is None, (
            "scoring finished before it could be interrupted: make the data larger\n"
            + (proc.stdout.read() if proc.stdout else "")
        )
        assert seen, "no batch was committed in time"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    committed = _scored_rows(a)
    assert committed is not None
    assert set(seen) <= set(committed)  # what a reader saw is still there after the kill
    k = len(committed)
    assert 2 <= k < total and k % 2 == 0  # whole batches only

    # The rerun (a real process) and the uninterrupted run (in this process) side by side.
    rerun = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        straight = _invoke("score", "--db", b, "--batch-items", "2")
        out, err = rerun.communicate(timeout=300)
    finally:
        if rerun.poll() is None:
            rerun.kill()
            rerun.wait(timeout=30)
    assert straight.exit_code == 0, straight.output
    assert straight.output.startswith(f"scored {total} answers (0 already done)")
    assert rerun.returncode == 0, err
    assert out.startswith(f"scored {total - k} answers ({k} already done)"), out

    resumed_rows = _scored_rows(a)
    assert resumed_rows is not None and len(resumed_rows) == total
    assert set(committed) <= set(resumed_rows)  # committed items kept their scored_at: not redone

    tables = {}
    for name, db in (("resumed", a), ("straight", b)):
        path = tmp_path / f"{name}.json"
        result = _invoke("cus", "--db", db, "--json", path)
        assert result.exit_code == 0, result.output
        tables[name] = json.loads(path.read_text(encoding="utf-8"))
    assert len(tables["resumed"]) == len(tables["straight"]) == 2
    for got, want in zip(tables["resumed"], tables["straight"], strict=True):
        assert {k: got[k] for k in ("dataset", "model", "temperature", "extractor", "n")} == {
            k: want[k] for k in ("dataset", "model", "temperature", "extractor", "n")
        }
        for key in ("gold_sim", "ctx_sim", "cus"):
            assert got[key] == pytest.approx(want[key], abs=1e-6), key

    resumed, straight_c = _components(a), _components(b)
    assert set(resumed) == set(straight_c) and len(resumed) == total
    for key, comps in resumed.items():
        other = straight_c[key]
        assert (comps[2], comps[5]) == (other[2], other[5]), key
        assert comps[:2] + comps[3:5] == pytest.approx(other[:2] + other[3:5], abs=1e-6), key


# -- the released runs (opt-in) ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.shared_data
def test_released_small_runs_import_score_and_cus(tmp_path, shared_data, minilm):
    small = shared_data / "s3kg_release" / "qa" / "small"
    if not small.is_dir():
        pytest.skip(f"{small} is missing")
    files = sorted(small.glob("*.csv"))
    db = tmp_path / "release.duckdb"
    result = _invoke("import", "s3kg-release", small, "--db", db)
    assert result.exit_code == 0, result.output
    result = _invoke("score", "--db", db)
    assert result.exit_code == 0, result.output
    out_json = tmp_path / "cus.json"
    result = _invoke("cus", "--db", db, "--json", out_json)
    assert result.exit_code == 0, result.output
    records = json.loads(out_json.read_text(encoding="utf-8"))
    expected = {tuple(f.stem.split("_", 1)) for f in files}
    assert {(r["dataset"], r["model"]) for r in records} == expected
    assert (
        len(records)
        == len(files)
        == len({(r["dataset"], r["model"], r["extractor"]) for r in records})
    )
    with Store(db, read_only=True).connect() as con:
        answers = dict(
            con.execute(
                "SELECT d.name || '_' || r.model, count(*) FROM answers a "
                "JOIN runs r USING (run_id) JOIN datasets d USING (dataset_id) GROUP BY 1"
            ).fetchall()
        )
    for rec in records:
        assert set(rec) == JSON_KEYS
        assert rec["extractor"] == "released-small" and rec["temperature"] == 0.0
        assert rec["n"] == answers[f"{rec['dataset']}_{rec['model']}"] > 0
        for key in ("gold_sim", "ctx_sim", "cus"):
            assert 0.0 <= rec[key] <= 1.0, (rec, key)


def test_score_on_a_missing_database_says_to_import_first(tmp_path):
    # Regression: `score` on a missing file created an empty database and "scored 0 answers".
    missing = tmp_path / "nothing.duckdb"
    result = CliRunner().invoke(cli, ["score", "--db", str(missing)])
    assert result.exit_code == 1
    assert "does not exist; import data first" in result.output
    assert not missing.exists()


# -- signatures, unscored answers, a scoring run in progress (issue 17) --------------------------


def test_an_unknown_signature_is_named_with_the_stored_ones_d11b(tmp_path, minilm):
    """Issue 17 (D11b): `cus --signature nope` on a fully scored database said "no scores ...
    run s3kg score"; `tau` and `export` did not name the signatures either."""
    db = tmp_path / "db.duckdb"
    build_store(db, models=("model-a",), n_items=2, n_triples=2)
    assert _invoke("score", "--db", db).exit_code == 0
    assert _invoke("score", "--db", db, "--tau", "0.9").exit_code == 0
    with Store(db, read_only=True).connect() as con:
        stored = [
            r[0]
            for r in con.execute(
                "SELECT signature FROM scores GROUP BY 1 ORDER BY max(scored_at) DESC"
            ).fetchall()
        ]
    assert len(stored) == 2 and "tau:0.9|" in stored[0]
    expected = "Error: unknown signature 'nope'; the stored signatures, latest first: " + ", ".join(
        stored
    )
    for command in (
        ["cus"],
        ["tau"],
        ["export", "--format", "csv", "--out", tmp_path / "o.csv"],
    ):
        line = _one_line_error(_invoke(*command, "--db", db, "--signature", "nope"))
        assert line == expected, command
    assert not (tmp_path / "o.csv").exists()
    # a signature as printed, with the alpha it was blended at: say how to pass it
    printed = stored[1] + "|alpha:0.5"
    line = _one_line_error(_invoke("cus", "--db", db, "--signature", printed))
    assert line.startswith(f"Error: unknown signature {printed!r}; ")
    assert f"--signature '{stored[1]}' --alpha 0.5" in line
    ok = _invoke("cus", "--db", db, "--signature", stored[1])
    assert ok.exit_code == 0 and ok.output.strip().endswith(f"signature {printed}")


def _store_with_unscorable_answers(path: Path) -> Store:
    """Two runs of four answers; in run 1 one answer failed to collect (no KGs), one has a
    failed KG and one has no KGs yet: 8 answers, 5 of them scorable."""
    store = build_store(path, n_items=4, n_triples=2, seed=2)
    with store.transaction() as con:
        con.execute(
            "UPDATE answers SET status = 'error', error = 'HTTP 500: boom', answer = NULL "
            "WHERE run_id = 1 AND item_id = 1"
        )
        con.execute("DELETE FROM kgs WHERE run_id = 1 AND item_id IN (1, 3)")
        con.execute("DELETE FROM triples WHERE run_id = 1 AND item_id IN (1, 3)")
        con.execute(
            "UPDATE kgs SET status = 'failed: not JSON', n_triples = 0 "
            "WHERE run_id = 1 AND item_id = 2 AND source = 'context'"
        )
    return store


def test_cus_and_export_report_the_answers_they_do_not_score(tmp_path, minilm):
    """Issue 17: `cus` and `export` dropped unscored answers silently (11 answers showed as
    n=8), and the collect status and error were not exported."""
    db = tmp_path / "db.duckdb"
    _store_with_unscorable_answers(db)
    scored = _invoke("score", "--db", db)
    assert scored.exit_code == 0, scored.output
    out_json = tmp_path / "cus.json"
    result = _invoke("cus", "--db", db, "--json", out_json)
    assert result.exit_code == 0, result.output
    header, row_a, row_b, note, sig = result.output.strip().splitlines()
    assert header.split() == [
        "dataset", "model", "temperature", "extractor", "run_id", "n", "unscored", "gold_sim",
        "ctx_sim", "cus", "cus_low", "cus_high",
    ]  # fmt: skip
    assert row_a.split()[:7] == ["toy", "model-a", "0.0000", "test", "1", "1", "3"]
    assert row_b.split()[:7] == ["toy", "model-b", "0.0000", "test", "2", "4", "0"]
    assert note == "3 answers not scored: 1 collect error, 1 KG extraction failed, 1 no KGs yet"
    assert sig.startswith("signature mode:ot|")
    records = json.loads(out_json.read_text(encoding="utf-8"))
    assert [(r["model"], r["n"], r["unscored"]) for r in records] == [
        ("model-a", 1, 3),
        ("model-b", 4, 0),
    ]

    target = tmp_path / "r.csv"
    result = _invoke("export", "--db", db, "--format", "csv", "--out", target)
    assert result.exit_code == 0, result.output
    assert result.output == f"wrote 8 rows to {target}\n"
    frame = pd.read_csv(target)
    for column in (
        "answer_status",
        "answer_error",
        "gold_kg_status",
        "answer_kg_status",
        "context_kg_status",
        "unscored_reason",
    ):
        assert column in frame.columns, column
    by_key = {(r.run_id, r.item_id): r for r in frame.itertuples()}
    failed = by_key[(1, 1)]
    assert (failed.answer_status, failed.answer_error) == ("error", "HTTP 500: boom")
    assert failed.unscored_reason == "collect_error" and pd.isna(failed.cus)
    assert by_key[(1, 2)].context_kg_status == "failed: not JSON"
    assert by_key[(1, 2)].unscored_reason == "kg_extraction_failed"
    assert by_key[(1, 3)].unscored_reason == "not_extracted" and pd.isna(by_key[(1, 3)].gold_sim)
    assert by_key[(1, 4)].answer_kg_status == "ok" and pd.isna(by_key[(1, 4)].unscored_reason)
    assert frame["cus"].notna().sum() == 5 and frame["cus"].dropna().between(0, 1).all()


def test_cus_empty_drop_leaves_empty_kgs_out_and_says_so(tmp_path, minilm):
    """Issue 19: `s3kg cus --empty drop` (the authors' QA scripts' reading); zero is the default."""
    db = tmp_path / "db.duckdb"
    store = build_store(db, models=("model-a",), n_items=3)
    with store.transaction() as con:
        store.put_kgs(con, [KGRecord(1, 2, "context", (), status="empty")])
    assert _invoke("score", "--db", db).exit_code == 0
    zero, drop = _invoke("cus", "--db", db), _invoke("cus", "--db", db, "--empty", "drop")
    assert zero.exit_code == 0 and drop.exit_code == 0, zero.output + drop.output
    assert zero.output == _invoke("cus", "--db", db, "--empty", "zero").output
    assert zero.output.splitlines()[1].split()[5] == "3"  # n, after run_id
    assert drop.output.splitlines()[1].split()[5] == "2"
    assert "1 of the 3 scored answers have CUS 0" in zero.output
    assert "1 of the 3 scored answers are left out of the means (--empty drop)" in drop.output
    bad = _invoke("cus", "--db", db, "--empty", "none")
    assert bad.exit_code == 2 and "'none' is not one of 'zero', 'drop'" in bad.output


def test_cus_during_a_scoring_run_says_it_is_partial(tmp_path, minilm):
    """Issue 17: a reader running `cus` while `score` writes got a partial table with no sign
    that it was partial. The state between two of score's batches: 2 of 8 answers scored."""
    from s3kg_core.stages.score import score_store

    db = tmp_path / "db.duckdb"
    store = build_store(db, n_items=4, n_triples=2, seed=6)

    class Stop(Exception):
        pass

    def stop_after_the_first_batch(stage, done, total):
        raise Stop

    with pytest.raises(Stop):
        score_store(store, encoder=minilm, batch_items=2, progress=stop_after_the_first_batch)
    result = _invoke("cus", "--db", db)
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert "6 answers not scored: 6 not yet scored" in lines
    assert (
        "run in progress (or stopped): 2 of 8 scorable answers scored under this signature; "
        "`s3kg score` with the same settings finishes it"
    ) in lines
    assert lines[-1].startswith("signature ")
    score_store(store, encoder=minilm, batch_items=2)
    done = _invoke("cus", "--db", db)
    assert "in progress" not in done.output and "not scored" not in done.output


def test_export_csv_escapes_cells_a_spreadsheet_would_run(tmp_path):
    """Regression (issue 28, item 8): `s3kg export` wrote `=2+5`, `=cmd|' /C calc'!A0`,
    `@SUM(1)` and `+SUM(1)` as they are, formulas for any spreadsheet that opens the file."""
    import csv

    db = tmp_path / "db.duckdb"
    table = tmp_path / "hostile.csv"
    with table.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(
            [["Q", "C", "G", "A"], ["=2+5", "@SUM(1)", "+SUM(1)", "=cmd|' /C calc'!A0"]]
        )
    args = ("--map", "question=Q,context=C,gold=G,answer=A", "--model", "-2+3")
    assert _invoke("import", "csv", table, "--db", db, *args).exit_code == 0
    out = tmp_path / "results.csv"
    assert _invoke("export", "--db", db, "--format", "csv", "--out", out).exit_code == 0
    with out.open(newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["question"], row["context"], row["gold_answer"], row["answer"], row["model"]) == (
        "'=2+5", "'@SUM(1)", "'+SUM(1)", "'=cmd|' /C calc'!A0", "'-2+3"
    )  # fmt: skip
    assert row["temperature"] == "0.0"  # numbers stay numbers
    cells = [c for line in csv.reader(out.open(newline="", encoding="utf-8")) for c in line]
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or c.startswith("-2")]


# -- TAU calibrated by people (issue 30) ---------------------------------------------------------


def test_tau_calibrate_then_tau_with_the_calibrated_threshold(tmp_path, minilm):
    from s3kg_core.annotation.log import Decision, save_decision

    db = tmp_path / "db.duckdb"
    store = build_store(db, n_items=3, n_triples=2, seed=4)
    assert _invoke("score", "--db", db).exit_code == 0
    error = _one_line_error(_invoke("tau", "--db", db, "--threshold", "calibrated"))
    assert "no TAU threshold is calibrated" in error and "s3kg tau calibrate" in error
    labelled = [
        (("aspirin", "reduce", "fever"), ("aspirin", "lower", "fever"), "confirm", "aligned"),
        (("aspirin", "reduce", "fever"), ("aspirin", "cause", "fever"), "reject", "aligned"),
        (("cat", "chase", "mouse"), ("mouse", "chase", "cat"), "confirm", "entity_mismatch"),
        (("river", "flow into", "sea"), ("river", "empty into", "sea"), "add", None),
    ]
    for gold, answer, verdict, category in labelled:
        save_decision(store, Decision("ann", 1, 1, gold, answer, verdict, category=category))
    curve = tmp_path / "curve.json"
    result = _invoke("tau", "calibrate", "--db", db, "--curve", curve)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("calibration 1: threshold ")
    assert "from 2 aligned and 2 not aligned labelled pairs" in lines[0]
    # 2 and 2 labels are too few to move the threshold (issue 43, item 3): said, default kept
    assert lines[1].startswith("too few labels to move the threshold (at least 10 of each kind)")
    assert lines[2] == "threshold  precision  recall  F1"
    assert len(lines) == 3 + 70 and sum("<- chosen" in line for line in lines) == 1
    assert any(line.startswith("     0.76") and "<- chosen (default)" in line for line in lines)
    assert any(line.startswith("     0.76") and "(default)" in line for line in lines)
    fitted = json.loads(curve.read_text())
    result = _invoke("tau", "--db", db, "--fraction", "1", "--threshold", "calibrated")
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith(
        f"|triple:{fitted['threshold']:g}|component:0.76|threshold:calibrated#1"
    )
    # `s3kg tau --db X calibrate` calibrates X, not the default database
    again = _invoke("tau", "--db", db, "calibrate")
    assert again.exit_code == 0 and again.output.startswith("calibration 2: ")


def test_tau_threshold_must_be_a_number_or_calibrated(tmp_path):
    result = _invoke("tau", "--db", tmp_path / "x.duckdb", "--threshold", "1.5")
    assert result.exit_code == 2 and "a number in [0, 1] or 'calibrated'" in result.output


def test_tau_calibrate_never_writes_its_curve_over_the_database(tmp_path):
    db = tmp_path / "db.duckdb"
    build_store(db, n_items=1)
    before = db.read_bytes()
    result = _invoke("tau", "calibrate", "--db", db, "--curve", db)
    assert result.exit_code == 2  # a usage error, as every output that is the database (issue 28)
    assert result.output == (
        f"Error: --curve {db} is the database {db}; writing it would destroy the database: "
        "name another file\n"
    )
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--model", "m\x1b]0;owned\x07", "a model's name cannot hold control or formatting"),
        ("--model", "x" * 10_000, "a model's name is at most 1000 characters"),
        ("--dataset", "d\u202e", "a dataset's name cannot hold control or formatting"),
        ("--dataset", "d\u200b", "U+200B (an invisible formatting character)"),
    ],
    ids=["osc-title", "long-model", "bidi-dataset", "zero-width-dataset"],
)
def test_import_csv_applies_the_rule_of_every_name(tmp_path, option, value, message):
    # regression (issue 44, item 7): ESC/OSC sequences, U+202E and 10,000 characters were stored
    # and `s3kg cus` then wrote them raw to the terminal
    table = tmp_path / "t.csv"
    table.write_text("q,c,g,a\nwhy?,ctx,gold,ans\n", encoding="utf-8")
    db = tmp_path / "db.duckdb"
    mapping = "question=q,context=c,gold=g,answer=a"
    args = ["import", "csv", table, "--db", db, "--map", mapping, option, value]
    if option == "--dataset":
        args += ["--model", "m"]
    line = _one_line_error(_invoke(*args))
    assert message in line and "\x1b" not in line


# -- `s3kg cus` prints the Overview leaderboard's means: one implementation (issue 42) ----------

FIVE_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)


def _cus_json(db: Path, alpha: float, folder: Path) -> dict[int, dict]:
    """``s3kg cus --alpha ALPHA --json``'s rows, by run id."""
    out = folder / f"cus-{alpha}.json"
    result = _invoke("cus", "--db", db, "--alpha", alpha, "--json", out)
    assert result.exit_code == 0, result.output
    return {int(row["run_id"]): row for row in json.loads(out.read_text(encoding="utf-8"))}


def _assert_cus_is_the_leaderboard(db: Path, folder: Path) -> None:
    """At each of five alphas, every run's n, means and interval of the mean CUS in ``s3kg cus
    --json`` are the numbers the Overview's leaderboard reads (``dashboard.data.reads.ranked``,
    what pages/0_Overview.py shows). Issue 58: `s3kg cus` showed no interval."""
    from dashboard.data.database import View, db_stamp
    from dashboard.data.reads import ranked, signatures

    stamp = db_stamp(db)
    signature = signatures(View(db, stamp))[1]
    assert signature is not None
    for alpha in FIVE_ALPHAS:
        cli_rows = _cus_json(db, alpha, folder)
        board = ranked(View(db, stamp, signature), alpha, "cus").set_index("run_id")
        assert sorted(cli_rows) == sorted(int(r) for r in board.index)
        for run, row in cli_rows.items():
            assert row["n"] == int(board.loc[run, "n"])
            for score in ("gold_sim", "ctx_sim", "cus"):
                assert abs(row[score] - float(board.loc[run, score])) <= 1e-12, (alpha, run, score)
            low, high = float(board.loc[run, "low"]), float(board.loc[run, "high"])
            if math.isnan(low):  # one answer: no interval, null in the JSON
                assert (row["cus_low"], row["cus_high"]) == (None, None), (alpha, run)
            else:
                assert (row["cus_low"], row["cus_high"]) == (low, high), (alpha, run)
                assert low <= row["cus"] <= high, (alpha, run)


def test_cus_prints_the_leaderboards_means_on_the_demo(db, tmp_path):
    _assert_cus_is_the_leaderboard(db, tmp_path)


def test_cus_prints_the_leaderboards_means_on_2000_answers(tmp_path):
    from leaderboard_helpers import RUN_SIZES, build_scored_store

    from dashboard.data.database import clear_caches

    store, _ = build_scored_store(tmp_path / "big.duckdb")
    assert sum(RUN_SIZES.values()) == 2000
    clear_caches()
    _assert_cus_is_the_leaderboard(Path(store.path), tmp_path)


def test_cus_its_json_and_the_export_name_the_alpha_issue_58(check_store, tmp_path):
    """Issue 58: `s3kg cus` ended its signature at ``version:N`` and the export's signature
    column had no alpha: each names the alpha the scores are blended at (the stored one, 0.3
    here, or --alpha's)."""
    from store_helpers import reblended_copy

    db = reblended_copy(check_store, tmp_path / "check.duckdb", 0.3)
    for given, named in (((), "0.3"), (("--alpha", "0.7"), "0.7")):
        out = tmp_path / f"cus-{named}.json"
        result = _invoke("cus", "--db", db, "--json", out, *given)
        assert result.exit_code == 0, result.output
        assert result.output.strip().splitlines()[-1].endswith(f"|alpha:{named}")
        records = json.loads(out.read_text(encoding="utf-8"))
        assert records and all(r["signature"].endswith(f"|alpha:{named}") for r in records)
    export = tmp_path / "export.csv"
    assert _invoke("export", "--db", db, "--format", "csv", "--out", export).exit_code == 0
    frame = pd.read_csv(export)
    assert frame["unscored_reason"].notna().any()  # unscored rows name the stored alpha too
    assert frame["signature"].str.endswith("|alpha:0.3").all(), frame["signature"].unique()


# -- one input cap before any file is read (issue 59) ------------------------------------------


def _file_hash(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _row_counts(db: Path) -> dict[str, int]:
    with Store(db, read_only=True).connect() as con:
        return {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("datasets", "items", "runs", "answers", "kgs")
        }


def test_every_import_past_the_input_cap_is_one_line_and_changes_nothing(tmp_path):
    """Regression: CSV, JSONL and JSON imports were read whole, of any size; past the cap
    (S3KG_MAX_INPUT_MB) each is one line naming the file, its size, the cap and the variable,
    exit status 1, and the database's rows and bytes are as they were."""
    db = tmp_path / "db.duckdb"
    qa = tmp_path / "qa"
    qa.mkdir()
    write_release_csv(qa / "toy_m.csv", "released", release_rows(3))
    assert _invoke("import", "s3kg-release", qa, "--db", db).exit_code == 0
    counts, digest = _row_counts(db), _file_hash(db)
    big = "x" * 1_500_000
    table = tmp_path / "mine.csv"
    table.write_text(f"Q,C,G\nwhy?,{big},gold\n", encoding="utf-8")
    jsonl = tmp_path / "mine.jsonl"
    jsonl.write_text(json.dumps({"Q": "why?", "C": big, "G": "gold"}) + "\n", encoding="utf-8")
    pqal = tmp_path / "ori_pqal.json"
    pqal.write_text(
        json.dumps({"1": {"QUESTION": "q?", "CONTEXTS": [big], "LONG_ANSWER": "yes."}}),
        encoding="utf-8",
    )
    write_release_csv(qa / "toy_big.csv", "released", release_rows(1))
    with (qa / "toy_big.csv").open("a", encoding="utf-8") as fh:
        fh.write(" " * 1_500_000 + "\n")
    mapping = "question=Q,context=C,gold=G"
    commands = {
        "mine.csv": ["import", "csv", table, "--map", mapping, "--dataset", "d"],
        "mine.jsonl": ["import", "csv", jsonl, "--map", mapping, "--dataset", "d"],
        "ori_pqal.json": ["import", "pubmedqa", pqal],
        "toy_big.csv": ["import", "s3kg-release", qa],
    }
    for name, args in commands.items():
        result = CliRunner().invoke(
            cli, [str(a) for a in [*args, "--db", db]], env={"S3KG_MAX_INPUT_MB": "1"}
        )
        line = _one_line_error(result)
        assert line.startswith(f"Error: {name} holds 2 MB; a "), line
        assert "takes at most 1 MB: " in line
        assert line.endswith(", or raise the cap with S3KG_MAX_INPUT_MB=<megabytes>"), line
        assert (_row_counts(db), _file_hash(db)) == (counts, digest), name
    result = CliRunner().invoke(
        cli,
        ["import", "csv", str(table), "--db", str(db), "--map", mapping, "--dataset", "d"],
        env={"S3KG_MAX_INPUT_MB": "2"},
    )
    assert result.exit_code == 0, result.output  # the cap raised: imported
    assert _row_counts(db)["items"] == counts["items"] + 1
