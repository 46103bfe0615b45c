"""Tests of s3kg_core.store.connection: every DuckDB connection is offline (issue 44, item 9).

DuckDB installs and loads known extensions by itself; a SQLite file given as ``--db`` made it
try to download ``sqlite_scanner``. No connection the project opens may do that.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from s3kg_core.cli import cli
from s3kg_core.errors import CorruptDatabaseError
from s3kg_core.store.connection import OFFLINE_CONFIG, open_duckdb
from s3kg_core.store.store import Store

PACKAGE = Path(__file__).resolve().parent.parent / "s3kg_core"


def _settings(con) -> tuple[bool, bool]:  # type: ignore[no-untyped-def]
    row = con.execute(
        "SELECT current_setting('autoinstall_known_extensions'), "
        "current_setting('autoload_known_extensions')"
    ).fetchone()
    return bool(row[0]), bool(row[1])


def test_a_connection_neither_installs_nor_loads_extensions(tmp_path: Path) -> None:
    assert _settings(open_duckdb()) == (False, False)
    with Store(tmp_path / "s.duckdb").connect() as con:
        assert _settings(con) == (False, False)
    mem = open_duckdb(config={"memory_limit": "256MB"})  # a caller's settings come on top
    assert _settings(mem) == (False, False)
    assert mem.execute("SELECT current_setting('memory_limit')").fetchone()[0].startswith("244")
    assert not any(OFFLINE_CONFIG.values())


def _sqlite_file(path: Path) -> Path:
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    return path


def test_a_sqlite_file_is_not_a_database_and_nothing_is_downloaded(tmp_path: Path) -> None:
    """Regression: DuckDB tried http://extensions.duckdb.org for sqlite_scanner."""
    path = _sqlite_file(tmp_path / "runs.db")
    store = Store(path, read_only=True)
    with pytest.raises(CorruptDatabaseError, match="is not a DuckDB database file") as info:
        store.connect().__enter__()
    assert "download" not in str(info.value.__cause__).lower()
    result = CliRunner().invoke(cli, ["cus", "--db", str(path)])
    assert result.exit_code != 0
    assert "is not a DuckDB database file" in result.output and "Traceback" not in result.output


def test_no_module_opens_duckdb_but_through_open_duckdb() -> None:
    """One home: a plain ``duckdb.connect(`` elsewhere would autoload extensions again."""
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if p.name != "connection.py" and re.search(r"duckdb\.connect\(", p.read_text("utf-8"))
    ]
    assert offenders == []
