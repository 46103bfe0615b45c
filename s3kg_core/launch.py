"""Start the dashboard from the installed package: the command line ``s3kg dashboard`` runs.

The app (``dashboard/app.py``, in a checkout a link to the repository's ``app.py``) is found
through :mod:`importlib.resources` and handed to Streamlit in a process of its own, with the
settings the repository's ``.streamlit/config.toml`` gives ``streamlit run app.py`` (that file is
not read outside the repository): 127.0.0.1 only, no usage statistics, no table export. This
module never imports Streamlit; it only checks that it is installed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .config import DB_ENV, cache_dir, default_db
from .errors import ConfigError, InstallError
from .resources import package_path

__all__ = ["DEMO_DB_NAME", "STREAMLIT_OPTIONS", "DashboardLaunch", "dashboard_launch"]

STREAMLIT_OPTIONS: dict[str, str] = {
    "server.headless": "true",
    "server.address": "127.0.0.1",
    "browser.gatherUsageStats": "false",
    "client.toolbarMode": "minimal",
    "client.disableDataExport": "true",
    "runner.postScriptGC": "false",
    "server.fileWatcherType": "none",
}
"""Streamlit's settings for ``s3kg dashboard``: those of ``.streamlit/config.toml`` (a test
keeps them equal), without its watch list."""

DEMO_DB_NAME = "demo.duckdb"
"""The demo database of ``s3kg dashboard --demo``, in the cache folder (built on first start)."""


@dataclass(frozen=True)
class DashboardLaunch:
    """How to start the dashboard: the command line and the database it opens.

    Attributes
    ----------
    argv
        The command (``python -m streamlit run APP --server.port P ...``).
    db
        The database file the dashboard opens (it builds the demo there if there is none).
    """

    argv: tuple[str, ...]
    db: Path

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The dashboard's environment: ``base`` (default: this one) with ``$S3KG_DB`` set."""
        env = dict(os.environ if base is None else base)
        env[DB_ENV] = str(self.db)
        return env


def dashboard_launch(
    db: Path | None = None, *, port: int = 8501, demo: bool = False
) -> DashboardLaunch:
    """The command that serves the installed dashboard on 127.0.0.1 at ``port``.

    Parameters
    ----------
    db
        The database to open (default: ``$S3KG_DB``, else ``data/s3kg.duckdb``). A file that does
        not exist yet gets the demo built into it on the first start.
    port
        The port on 127.0.0.1.
    demo
        Open the demo database in the cache folder (``$S3KG_CACHE_DIR/demo.duckdb``), built from
        the demo set shipped in the package on the first start. Not with ``db``.

    Raises
    ------
    InstallError
        If Streamlit (the ``dashboard`` extra) or the app's files are not installed.
    ConfigError
        If both ``db`` and ``demo`` are given.

    Examples
    --------
    >>> launch = dashboard_launch(Path("runs.duckdb"), port=8600)
    >>> launch.argv[1:4] == ("-m", "streamlit", "run"), launch.argv[4].endswith("app.py")
    (True, True)
    >>> "--server.port=8600" in launch.argv, "--server.address=127.0.0.1" in launch.argv
    (True, True)
    >>> launch.environment({})
    {'S3KG_DB': 'runs.duckdb'}
    """
    if demo and db is not None:
        raise ConfigError("give --db or --demo, not both")
    if importlib.util.find_spec("streamlit") is None:
        raise InstallError("the dashboard needs Streamlit: pip install 's3kg-workbench[dashboard]'")
    app = package_path("dashboard", "app.py")
    if not app.is_file():
        raise InstallError(f"the dashboard's app is missing ({app}): reinstall s3kg-workbench")
    target = db if db is not None else default_db()
    if demo:
        target = cache_dir() / DEMO_DB_NAME
    options = {**STREAMLIT_OPTIONS, "server.port": str(port)}
    argv = (
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app.resolve()),
        *(f"--{key}={value}" for key, value in options.items()),
    )
    return DashboardLaunch(argv=argv, db=target)
