"""The :class:`Encoder` protocol: anything that turns texts into L2-normalised vectors."""

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
