"""``s3kg dashboard``: serve the installed dashboard (Streamlit) on 127.0.0.1.

Thin over :func:`s3kg_core.launch.dashboard_launch`: the command becomes the Streamlit server
(the process is replaced, so Ctrl-C and signals reach Streamlit itself).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

__all__ = ["COMMANDS"]


@click.command("dashboard")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The DuckDB file to open (default: $S3KG_DB, else data/s3kg.duckdb). A file that does "
    "not exist yet gets the demo built into it on the first start.",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=8501,
    show_default=True,
    help="Port on 127.0.0.1.",
)
@click.option(
    "--demo",
    is_flag=True,
    help="Open the demo database in the cache folder ($S3KG_CACHE_DIR, default ~/.cache/s3kg), "
    "built from the demo set inside the package on the first start.",
)
def dashboard_cmd(db_path: Path | None, port: int, demo: bool) -> None:
    """Serve the dashboard on http://127.0.0.1:PORT until Ctrl-C.

    Needs the dashboard extra: pip install "s3kg-workbench[dashboard]". In the repository,
    `streamlit run app.py` serves the same app.
    """
    from ..launch import dashboard_launch

    launch = dashboard_launch(db_path, port=port, demo=demo)
    _check_folder(launch.db, demo)
    click.echo(f"S3KG Workbench on http://127.0.0.1:{port} (database {launch.db})", err=True)
    os.execve(launch.argv[0], list(launch.argv), launch.environment())


def _check_folder(db: Path, demo: bool) -> None:
    """Make the database's folder; one line (exit status 1) where a first start cannot write.

    A database that exists is opened as it is (read-only folders included); one that does not
    gets the demo built into it on the first start, so its folder must be writable.
    """
    where = "$S3KG_CACHE_DIR" if demo else "--db or $S3KG_DB"
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(
            f"cannot make the database folder {db.parent}: {exc.strerror or exc}; name a "
            f"database in a folder you can write ({where})"
        ) from exc
    if not db.exists() and not os.access(db.parent, os.W_OK):
        raise click.ClickException(
            f"cannot build the database {db} on the first start: its folder {db.parent} is not "
            f"writable; name a database in a folder you can write ({where})"
        )


COMMANDS = (dashboard_cmd,)
