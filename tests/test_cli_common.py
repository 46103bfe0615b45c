"""Tests of s3kg_core.cli._common: the output checks and atomic writes every command shares."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from s3kg_core.cli import _common, cli
from s3kg_core.cli._common import (
    FiniteRange,
    check_writable,
    write_csv_atomic,
    write_json_atomic,
)
from s3kg_core.errors import OutputError, S3KGError

# -- check_writable ------------------------------------------------------------------------------


def test_check_writable_accepts_new_and_existing_files_and_creates_nothing(tmp_path):
    (tmp_path / "old.csv").write_text("x", encoding="utf-8")
    for path in (tmp_path / "new.csv", tmp_path / "old.csv", tmp_path / "a" / "b" / "c.csv"):
        assert check_writable(path) == path
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]  # no probe, no folder a
    assert (tmp_path / "old.csv").read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("below", ["out.csv", "deeper/out.csv"])
def test_check_writable_refuses_a_path_below_a_file(tmp_path, below):
    # Regression (issue 17, D10): `-o some.csv/out.csv` ended in a FileExistsError traceback,
    # after all the work was done.
    (tmp_path / "some.csv").write_text("x", encoding="utf-8")
    path = tmp_path / "some.csv" / below
    with pytest.raises(OutputError) as info:
        check_writable(path)
    assert (
        str(info.value) == f"cannot write {path}: {tmp_path / 'some.csv'} is a file, not a folder"
    )
    assert isinstance(info.value, S3KGError) and isinstance(info.value, OSError)


def test_check_writable_refuses_a_folder(tmp_path):
    with pytest.raises(OutputError, match="is a folder; name a file in it"):
        check_writable(tmp_path)


def test_check_writable_reports_a_folder_it_cannot_write_in(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_common.tempfile, "mkstemp", refuse)
    with pytest.raises(OutputError, match=r"cannot write .*out\.csv: Permission denied"):
        check_writable(tmp_path / "out.csv")


# -- write_atomic: a failed write keeps the output -------------------------------------------------


def _disk_full(*args, **kwargs):
    raise OSError(28, "No space left on device")


def test_a_failed_write_saves_the_output_elsewhere_and_says_where(tmp_path, monkeypatch):
    # Regression (issue 17, D10): an error writing the output lost the finished work.
    rescue = tmp_path / "tmp"
    rescue.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(rescue))
    out = tmp_path / "out" / "scores.csv"
    real_replace = os.replace
    monkeypatch.setattr(
        _common.os, "replace", lambda a, b: _disk_full() if Path(b) == out else real_replace(a, b)
    )
    with pytest.raises(OutputError) as info:
        write_csv_atomic(out, ["id", "s3kg"], iter([["1", "0.5"], ["2", "1.0"]]))
    (saved,) = rescue.iterdir()
    assert str(info.value) == (
        f"cannot write {out}: No space left on device; the output is saved in {saved}"
    )
    assert saved.name.startswith("s3kg-scores-") and saved.suffix == ".csv"
    assert saved.read_bytes() == b"id,s3kg\r\n1,0.5\r\n2,1.0\r\n"  # as csv writes it
    assert not out.exists() and list(out.parent.iterdir()) == []  # no temporary left behind


def test_a_write_that_cannot_be_saved_anywhere_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no such folder"))
    monkeypatch.setattr(_common.os, "replace", _disk_full)
    with pytest.raises(OutputError, match="No space left on device; it could not be saved"):
        write_json_atomic(tmp_path / "t.json", {"a": 1})


def test_write_json_atomic_writes_indented_json(tmp_path):
    out = tmp_path / "new" / "t.json"
    write_json_atomic(out, [{"a": 1}])
    assert json.loads(out.read_text(encoding="utf-8")) == [{"a": 1}]
    assert out.read_text(encoding="utf-8").endswith("}\n]\n")


def test_mode_help_states_the_text_weight_in_use():
    """Issue 19: the --mode help quotes text mode's weight; it must follow the constant."""
    from click.testing import CliRunner

    from s3kg_core.cli import cli
    from s3kg_core.scoring.s3kg import TEXT_WEIGHT

    out = CliRunner().invoke(cli, ["score", "--help"], terminal_width=1000).output
    assert f"(weight {TEXT_WEIGHT:g})" in " ".join(out.split())


# -- check_output: never the database (issue 28, item 1) -----------------------------------------


def _database(folder: Path) -> tuple[Path, bytes]:
    import duckdb

    db = folder / "runs.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT 42 AS x")
    con.close()
    return db, db.read_bytes()


def _with_db(db: Path, *paths: Path, folder: bool = False) -> None:
    import click

    with click.Context(click.Command("x")) as ctx:
        ctx.params["db_path"] = db
        _common.check_output(*paths, option="--out", folder=folder)


@pytest.mark.parametrize(
    "spell",
    [
        lambda db: db,  # the database itself
        lambda db: db.parent / "sub" / ".." / db.name,  # another spelling of the same path
        lambda db: db.parent / db.name.upper(),  # its name in another case
        lambda db: Path(f"{db}.wal"),  # its write-ahead log (not there yet)
        lambda db: db.parent / f"{db.name}.WAL",
        lambda db: db.parent / "link.csv",  # a symlink to it
        lambda db: db.parent / "hard.csv",  # a hard link to it
    ],
)
def test_check_output_refuses_every_spelling_of_the_database(tmp_path, spell):
    db, before = _database(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.csv").symlink_to(db.name)
    os.link(db, tmp_path / "hard.csv")
    path = spell(db)
    with pytest.raises(_common.OutputIsDatabaseError) as info:
        _with_db(db, path)
    assert info.value.exit_code == 2
    assert str(info.value).startswith(f"--out {path} is the database")
    assert str(info.value).endswith("writing it would destroy the database: name another file")
    assert db.read_bytes() == before


def test_check_output_from_another_folder_and_relative_paths(tmp_path, monkeypatch):
    db, _ = _database(tmp_path)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    with pytest.raises(_common.OutputIsDatabaseError):
        _with_db(Path("..") / "runs.duckdb", Path("../runs.duckdb"))
    with pytest.raises(_common.OutputIsDatabaseError):
        _with_db(db, Path("../runs.duckdb.wal"))
    _with_db(db, Path("../runs.csv"), Path("runs.duckdb"))  # other files are fine


def test_check_output_protects_the_default_database_without_db_option(tmp_path, monkeypatch):
    db, _ = _database(tmp_path)
    monkeypatch.setenv("S3KG_DB", str(db))
    with pytest.raises(_common.OutputIsDatabaseError):
        _common.check_output(tmp_path / "runs.duckdb")  # no click context: $S3KG_DB still holds
    with pytest.raises(_common.OutputIsDatabaseError, match="name another folder"):
        _common.check_output(db, folder=True)
    _common.check_output(None, tmp_path / "out.json")


def test_check_output_still_checks_writability(tmp_path):
    db, _ = _database(tmp_path)
    with pytest.raises(OutputError, match="is a folder"):
        _with_db(db, tmp_path)
    _with_db(db, tmp_path, folder=True)  # a folder output is only kept off the database


# -- any DuckDB database, whatever its name, is refused by every output option (issue 59, item 1) --


def _victim(folder: Path) -> tuple[Path, bytes]:
    """A database of the project's schema with a stored answer, under a name no check knows."""
    from s3kg_core.store.records import ItemRecord
    from s3kg_core.store.store import Store

    path = folder / "victim.duckdb"
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "toy", source="test")
        store.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
    return path, path.read_bytes()


def _outputs(tmp: Path, victim: str) -> list[list[str]]:
    """One command line per output option, each naming ``victim`` (no --db names it)."""
    none = str(tmp / "none.duckdb")
    amr = str(tmp / "g.amr")
    pairs = str(tmp / "pairs.csv")
    return [
        ["pairs", "score", amr, amr, "-o", victim],
        ["pairs", "score", amr, amr, "--output", victim],
        ["export", "--db", none, "--format", "csv", "--out", victim],
        ["export", "--db", none, "--format", "parquet", "--out", victim],
        ["report", "--db", none, "--run", "1", "--out", victim],
        ["cus", "--db", none, "--json", victim],
        ["check", "--pairs", pairs, "--junit", victim],
        ["check", "--pairs", pairs, "--markdown", victim],
        ["tau", "--db", none, "calibrate", "--curve", victim],
        ["annotate", "agreement", "--db", none, "--json", victim],
        ["annotations", "export", "--db", none, "--out", victim],
        ["bench", "pairs", "--dataset", "all", "--data-dir", str(tmp), "--json", victim],
        ["bench", "bamboo", "--data-dir", str(tmp), "--json", victim],
        ["bench", "bamboo", "--data-dir", str(tmp), "--evidence", victim],
        ["bench", "direction", "--no-drawn", "--json", victim],
        ["bench", "direction", "--no-drawn", "--evidence", victim],
        ["grapheval", "bench", "--data-dir", str(tmp), "--json", victim],
    ]


def test_every_output_option_refuses_a_duckdb_database_before_any_work(tmp_path, monkeypatch):
    """Regression: ``pairs score a.amr b.amr -o victim.duckdb`` and ``bench bamboo --json
    victim.duckdb`` exited 0 and left a CSV (a JSON) where the database was; only a path equal
    to $S3KG_DB was refused."""
    monkeypatch.setenv("S3KG_DB", str(tmp_path / "default.duckdb"))
    victim, before = _victim(tmp_path)
    (tmp_path / "g.amr").write_text("(d / dog)\n", encoding="utf-8")
    (tmp_path / "pairs.csv").write_text("id,s_wl,s_sbert,s3kg,status\n", encoding="utf-8")
    for args in _outputs(tmp_path, str(victim)):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, (args, result.output)
        assert result.output == (
            f"Error: cannot write {victim}: {victim} is a DuckDB database; writing it would "
            "destroy the database: name another file\n"
        ), args
        assert victim.read_bytes() == before, args
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "g.amr", "pairs.csv", "victim.duckdb"
    ]  # fmt: skip


def test_a_folder_output_is_refused_over_a_database_file(tmp_path):
    victim, before = _victim(tmp_path)
    with pytest.raises(_common.OutputIsDatabaseError, match="is a DuckDB database"):
        _common.check_output(victim, folder=True)
    assert victim.read_bytes() == before


def _release_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "pairs.csv").write_text('id,kg_1,kg_2\n1,"[[""a"",""r"",""b""]]","[]"\n')
    (folder / "st.parquet").write_bytes(b"")
    (folder / "judge").mkdir()
    return folder


# Every command that writes a file, with the option that names it; {db} is the database, {in} a
# folder of small inputs. The output is spelled as another path to the database each time.
WRITERS = [
    ["export", "--db", "{db}", "--format", "csv", "--out", "{out}"],
    ["cus", "--db", "{db}", "--json", "{out}"],
    ["pairs", "score", "{in}/pairs.csv", "--output", "{out}"],
    ["bench", "pairs", "--dataset", "paws_wiki_400", "--json", "{out}", "--db", "{db}"],
    ["grapheval", "bench", "--dataset", "qags_x", "--json", "{out}", "--db", "{db}"],
    ["grapheval", "train-checker", "--out", "{out}"],
    ["factuality", "build", "--kg", "findkg", "--out", "{out}"],
    ["factuality", "label", "{in}/st.parquet", "--db", "{db}", "--out", "{out}"],
    ["factuality", "hidden", "{in}/st.parquet", "--out", "{out}"],
    ["factuality", "train", "{in}/st.parquet", "{in}/st.parquet", "--layer", "1", "--out", "{out}"],
    ["factuality", "evaluate", "{in}/st.parquet", "{in}/st.parquet", "{in}/judge", "--json",
     "{out}", "--db", "{db}"],
    ["annotate", "agreement", "--db", "{db}", "--json", "{out}"],
    ["annotations", "export", "--db", "{db}", "--format", "csv", "--out", "{out}"],
    ["tau", "calibrate", "--db", "{db}", "--curve", "{out}"],
    ["tau", "--db", "{db}", "calibrate", "--curve", "{out}"],  # the parent's --db
    ["check", "--db", "{db}", "--run", "1", "--baseline", "2", "--junit", "{out}"],
    ["check", "--db", "{db}", "--run", "1", "--baseline", "2", "--markdown", "{out}"],
]  # fmt: skip


@pytest.mark.parametrize(
    "args", WRITERS, ids=lambda a: " ".join(a[:2] if a[1][0] != "-" else a[::3])
)
@pytest.mark.parametrize("target", ["db", "symlink", "wal"])
def test_no_command_writes_over_the_database(tmp_path, monkeypatch, args, target):
    """Regression (issue 28, item 1): `s3kg export --db e.duckdb --format csv --out e.duckdb`
    printed `wrote 9 rows` and left a 4.6 KB CSV where the database was."""
    from click.testing import CliRunner

    from s3kg_core.cli import cli

    if args[1] == "train-checker" and target != "wal":
        pytest.skip("click itself refuses an existing file for this folder option (exit 2)")
    db, before = _database(tmp_path)
    folder = _release_dir(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("S3KG_DB", str(db))  # the commands without --db protect the default one
    (tmp_path / "link").symlink_to(db)
    out = {"db": "./RUNS.duckdb", "symlink": "link", "wal": "runs.duckdb.wal"}[target]
    argv = [a.format(db=db, out=out, **{"in": folder}) for a in args]
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: --") and "is the database" in lines[0]
    assert db.read_bytes() == before
    assert not Path(f"{db}.wal").exists()
    assert (tmp_path / "link").is_symlink()


# -- numbers: NaN is not a number in any range (issue 44, item 4) -------------------------------


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        out.append((f"{prefix}{name}", command))
        if isinstance(command, click.Group):
            out.extend(_commands(command, f"{prefix}{name} "))
    return out


def test_every_float_range_of_the_command_line_refuses_nan():
    ranges = [
        (name, p.name)
        for name, command in _commands(cli)
        for p in command.params
        if isinstance(p.type, click.FloatRange)
    ]
    assert len(ranges) > 10  # alpha, tau, gates, thresholds, ...
    plain = [
        (name, p.name)
        for name, command in _commands(cli)
        for p in command.params
        if isinstance(p.type, click.FloatRange) and not isinstance(p.type, FiniteRange)
    ]
    assert plain == []


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--run", "1", "--alpha", "nan"],
        ["cus", "--alpha", "nan"],
        ["report", "--run", "1", "--alpha", "nan", "--out", "r.html"],
        ["score", "--alpha", "nan"],
    ],
    ids=lambda a: a[0],
)
def test_alpha_nan_is_a_usage_error(args, tmp_path):
    """Regression: ``s3kg check --alpha nan`` printed ``passed: 4 gates`` with ``+nan`` drops."""
    result = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 2, result.output
    assert "'nan' is not a number" in result.output


def test_alpha_minus_zero_signs_as_alpha_zero(tmp_path):
    """Regression (issue 59, item 12): ``--alpha -0.0`` printed and wrote the signature
    ``alpha:-0``, a second string for the scores of ``alpha:0``."""
    kg = tmp_path / "g.amr"
    kg.write_text("(d / dance-01 :ARG0 (m / man))\n", encoding="utf-8")
    outputs = []
    for alpha in ("-0.0", "0", "-0"):
        out = tmp_path / f"{alpha}.csv"
        result = CliRunner().invoke(
            cli, ["pairs", "score", str(kg), str(kg), "-o", str(out), "--alpha", alpha]
        )
        assert result.exit_code == 0, result.output
        assert result.stdout.rstrip().endswith("|alpha:0"), result.stdout
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert FiniteRange(0.0, 1.0).convert("-0.0", None, None) == 0.0
    assert str(FiniteRange(0.0, 1.0).convert("-0.0", None, None)) == "0.0"


@pytest.mark.parametrize("target", ["fifo", "device", "link"])
def test_an_output_that_is_not_a_regular_file_is_refused_before_any_work(tmp_path, target):
    """Regression (issue 44, item 3): report --out /dev/null made /dev/null a file; export onto
    a FIFO replaced it; --out /dev/stdout replaced the symlink."""
    path = tmp_path / "out"
    if target == "fifo":
        os.mkfifo(path)
    elif target == "link":
        path.symlink_to("/dev/null")
    else:
        path = Path("/dev/null")
    with pytest.raises(OutputError, match="not a regular file; name a regular file"):
        check_writable(path)
    result = CliRunner().invoke(
        cli,
        ["export", "--db", str(tmp_path / "none.duckdb"), "--out", str(path), "--format", "csv"],
    )
    assert result.exit_code == 1 and "not a regular file" in result.output
