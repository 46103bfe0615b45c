""":class:`EmbeddingCache`: every distinct string encoded once per run, optionally kept on disk."""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import EncoderError
from ..progress import Progress
from .base import Encoder

__all__ = ["CacheStats", "EmbeddingCache"]


_ADD_CHUNK = 8192  # texts per encoder call in EmbeddingCache.add (progress granularity)


@dataclass
class CacheStats:
    """Counters of an :class:`EmbeddingCache`."""

    encoded: int = 0
    hits: int = 0  # lookups served without encoding
    calls: int = 0
    seconds: float = 0.0


class EmbeddingCache:
    """Encode each distinct string once, keep its unit-norm vector, look rows up by text.

    Parameters
    ----------
    encoder
        The encoder to call for strings not seen yet.
    path
        Optional ``.npz`` file: loaded if it exists and was written by the same encoder,
        written by :meth:`save`.

    Examples
    --------
    >>> from s3kg_core.encoders.registry import load_encoder
    >>> cache = EmbeddingCache(load_encoder("minilm"))
    >>> rows = cache.rows(["red", "blue", "red"])
    >>> rows.tolist(), cache.stats.encoded
    ([0, 1, 0], 2)
    >>> cache.rows(["blue", "green"]).tolist(), cache.stats.encoded  # only "green" is new
    ([1, 2], 3)
    >>> cache.vectors(["red", "green"]).shape
    (2, 384)
    """

    def __init__(self, encoder: Encoder, path: str | Path | None = None) -> None:
        self.encoder = encoder
        self.path = Path(path) if path is not None else None
        self._index: dict[str, int] = {}
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._n = 0
        self.stats = CacheStats()
        if self.path is not None and self.path.exists():
            self._load_file(self.path)

    def __len__(self) -> int:
        return self._n

    def __contains__(self, text: object) -> bool:
        return text in self._index

    @property
    def matrix(self) -> np.ndarray:
        """All cached vectors, row ``i`` for the ``i``-th distinct text (a view)."""
        return self._matrix[: self._n]

    def _append(self, vectors: np.ndarray) -> None:
        n_new = vectors.shape[0]
        if self._matrix.shape[1] != vectors.shape[1] or self._n + n_new > self._matrix.shape[0]:
            cap = max(1024, 2 * (self._n + n_new))
            grown = np.zeros((cap, vectors.shape[1]), dtype=np.float32)
            if self._n:
                grown[: self._n] = self._matrix[: self._n]
            self._matrix = grown
        self._matrix[self._n : self._n + n_new] = vectors
        self._n += n_new

    def add(self, texts: Iterable[str], progress: Progress | None = None) -> int:
        """Encode every text not cached yet, in large batches; return how many were new.

        Parameters
        ----------
        texts
            Texts to make sure of (repeats and cached ones cost nothing).
        progress
            Called as ``progress(done, total)`` after each chunk of 8,192 new texts.
        """
        missing = [t for t in dict.fromkeys(texts) if t not in self._index]
        if not missing:
            return 0
        prepare = getattr(self.encoder, "prepare", None)
        if prepare is not None:
            prepare(len(missing))
        for lo in range(0, len(missing), _ADD_CHUNK):
            chunk = missing[lo : lo + _ADD_CHUNK]
            start = time.perf_counter()
            vectors = self.encoder.encode(chunk)
            self.stats.seconds += time.perf_counter() - start
            self.stats.calls += 1
            if vectors.shape[0] != len(chunk) or not np.all(np.isfinite(vectors)):
                raise EncoderError(
                    f"encoder {self.encoder.name} returned {vectors.shape[0]} finite rows for "
                    f"{len(chunk)} texts"
                )
            for i, text in enumerate(chunk, start=self._n):
                self._index[text] = i
            self._append(vectors.astype(np.float32, copy=False))
            self.stats.encoded += len(chunk)
            if progress is not None:
                progress(lo + len(chunk), len(missing))
        return len(missing)

    def rows(self, texts: Sequence[str]) -> np.ndarray:
        """Row numbers of ``texts`` in :attr:`matrix`, encoding the missing ones first."""
        new = self.add(texts)
        self.stats.hits += max(0, len(texts) - new)
        return np.fromiter((self._index[t] for t in texts), dtype=np.int64, count=len(texts))

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` (encoding the missing ones), shape ``(len(texts), dim)``."""
        rows = self.rows(texts)
        out: np.ndarray = self.matrix[rows]
        return out

    def items(self, since: int = 0) -> Iterable[tuple[str, np.ndarray]]:
        """Every cached ``(text, vector)``, or those added after the first ``since`` rows."""
        mat = self.matrix
        return ((t, mat[i]) for t, i in self._index.items() if i >= since)

    def update(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Add precomputed vectors (for example read back from a database)."""
        fresh: dict[str, np.ndarray] = {}
        for text, vec in items:
            if text not in self._index and text not in fresh:
                fresh[text] = np.asarray(vec, dtype=np.float32)
        texts, vecs = list(fresh), list(fresh.values())
        if texts:
            for i, text in enumerate(texts, start=self._n):
                self._index[text] = i
            self._append(np.vstack(vecs))

    def save(self, path: str | Path | None = None) -> Path:
        """Write the cache to an ``.npz`` file (atomically) and return its path."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise EncoderError("EmbeddingCache.save needs a path (none was given at creation)")
        target.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._index)
        meta = json.dumps({"encoder": self.encoder.name, "texts": texts})
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".npz", delete=False) as fh:
            np.savez(fh, meta=np.array(meta), vectors=self.matrix)
        os.replace(fh.name, target)
        return target

    def _load_file(self, path: Path) -> None:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            if meta.get("encoder") != self.encoder.name:
                return  # written by another model: its vectors are not ours to reuse
            self.update(zip(meta["texts"], data["vectors"], strict=True))
