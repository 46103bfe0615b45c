"""The one home of the project's defaults: the database, the shared data folder, the cache folder.

Each default can be overridden by an environment variable, read at call time (so a test or a
shell can change it without re-importing anything):

- ``$S3KG_DB``: the DuckDB file of the CLI and the dashboard (default ``data/s3kg.duckdb``);
- ``$S3KG_DATA_DIR``: the shared public datasets (default ``../shared/data``);
- ``$S3KG_CACHE_DIR``: joined models, exported encoders, trained checkers (default
  ``~/.cache/s3kg``);
- ``$S3KG_IMPORT_ROOT``: the only folder (with its subfolders) the dashboard's sidebar imports
  from (default: the data folder).

Relative defaults are relative to the current directory, never to the source tree, so an
installed (non-editable) package behaves as a checkout does when run from the project folder.

Other libraries' settings for the processes s3kg starts itself (the CLI, the dashboard) are
:data:`PROCESS_ENV`, applied by :func:`set_process_env` at their start.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "CACHE_DIR_ENV",
    "DATA_DIR_ENV",
    "DB_ENV",
    "DEFAULT_DB",
    "IMPORT_ROOT_ENV",
    "PROCESS_ENV",
    "cache_dir",
    "default_data_dir",
    "default_db",
    "import_root",
    "set_process_env",
]

DB_ENV = "S3KG_DB"
DATA_DIR_ENV = "S3KG_DATA_DIR"
CACHE_DIR_ENV = "S3KG_CACHE_DIR"
IMPORT_ROOT_ENV = "S3KG_IMPORT_ROOT"

DEFAULT_DB = Path("data") / "s3kg.duckdb"
"""The database file when ``$S3KG_DB`` is not set (relative to the current directory)."""

PROCESS_ENV: dict[str, str] = {"POT_BACKEND_DISABLE_PYTORCH": "1"}
"""Other libraries' settings for the CLI's and the dashboard's processes.

POT (optimal transport, the ``ot`` and ``wwl`` modes) imports torch when it is installed, to
offer a torch backend: 1.4 s of CPU at a process's first transport. s3kg gives POT NumPy arrays
only, so its own processes turn that backend off. A program that imports the library keeps
POT as it is (its own code may give POT torch tensors).
"""


def default_db() -> Path:
    """The database the CLI and the dashboard use: ``$S3KG_DB``, else ``data/s3kg.duckdb``.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"S3KG_DB": "/tmp/runs.duckdb"}):
    ...     str(default_db())
    '/tmp/runs.duckdb'
    >>> with mock.patch.dict(os.environ):  # the variable unset, then as it was
    ...     _ = os.environ.pop("S3KG_DB", None)
    ...     str(default_db())
    'data/s3kg.duckdb'
    """
    env = os.environ.get(DB_ENV)
    return Path(env) if env else DEFAULT_DB


def default_data_dir() -> Path:
    """The shared data folder: ``$S3KG_DATA_DIR``, else ``../shared/data`` (from the cwd).

    The folder need not exist; the loaders say so when it does not.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"S3KG_DATA_DIR": "/data/public"}):
    ...     str(default_data_dir())
    '/data/public'
    >>> with mock.patch.dict(os.environ):  # the variable unset, then as it was
    ...     _ = os.environ.pop("S3KG_DATA_DIR", None)
    ...     default_data_dir() == Path.cwd().parent / "shared" / "data"
    True
    """
    env = os.environ.get(DATA_DIR_ENV)
    return Path(env) if env else Path.cwd().parent / "shared" / "data"


def cache_dir() -> Path:
    """The folder for joined models and persisted caches: ``$S3KG_CACHE_DIR``, else ~/.cache/s3kg.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"S3KG_CACHE_DIR": "/tmp/s3kg-cache"}):
    ...     str(cache_dir())
    '/tmp/s3kg-cache'
    >>> with mock.patch.dict(os.environ):  # the variable unset, then as it was
    ...     _ = os.environ.pop("S3KG_CACHE_DIR", None)
    ...     cache_dir() == Path.home() / ".cache" / "s3kg"
    True
    """
    env = os.environ.get(CACHE_DIR_ENV)
    return Path(env) if env else Path.home() / ".cache" / "s3kg"


def import_root() -> Path:
    """The folder the dashboard may import from: ``$S3KG_IMPORT_ROOT``, else the data folder.

    A visitor of the dashboard types a folder to import; only this folder and those below it
    are read (a visitor must not read the server's other files).

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"S3KG_IMPORT_ROOT": "/srv/runs"}):
    ...     str(import_root())
    '/srv/runs'
    >>> with mock.patch.dict(os.environ):  # the variable unset, then as it was
    ...     _ = os.environ.pop("S3KG_IMPORT_ROOT", None)
    ...     import_root() == default_data_dir()
    True
    """
    env = os.environ.get(IMPORT_ROOT_ENV)
    return Path(env) if env else default_data_dir()


def set_process_env() -> None:
    """Set each variable of :data:`PROCESS_ENV` that is not set in this process.

    Called at the start of the ``s3kg`` command and of the dashboard (``app.py``); a value a
    user set is kept. Processes they start (workers, servers) inherit the settings.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"POT_BACKEND_DISABLE_PYTORCH": "mine"}):
    ...     set_process_env()
    ...     os.environ["POT_BACKEND_DISABLE_PYTORCH"]
    'mine'
    """
    for name, value in PROCESS_ENV.items():
        os.environ.setdefault(name, value)
