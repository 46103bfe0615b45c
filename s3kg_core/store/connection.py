"""The one way the project opens DuckDB: offline, extensions never installed or loaded.

DuckDB installs and loads a known extension by itself when a file or a function needs one (a
SQLite file given as a database asks for ``sqlite_scanner``), which means a download from the
internet. Every connection the project opens goes through :func:`open_duckdb`, which turns both
off, so nothing reaches the network and such a file fails at once with DuckDB's own message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb

__all__ = ["OFFLINE_CONFIG", "open_duckdb"]

OFFLINE_CONFIG: dict[str, Any] = {
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
"""DuckDB settings of every connection: no extension is installed or loaded behind our back."""


def open_duckdb(
    database: str = ":memory:",
    *,
    read_only: bool = False,
    config: Mapping[str, Any] | None = None,
) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` with :data:`OFFLINE_CONFIG` (and ``config`` on top of it).

    Examples
    --------
    >>> con = open_duckdb()
    >>> con.execute("SELECT current_setting('autoload_known_extensions')").fetchone()
    (False,)
    >>> con.close()
    """
    return duckdb.connect(
        database, read_only=read_only, config={**OFFLINE_CONFIG, **(config or {})}
    )
