"""The sentence-transformers encoder, with its pool of worker processes and their watchdog.

Large encoding jobs on a CPU run in one single-threaded worker process per core; a pool that
does not start in time, or dies, is dropped and the job continues in this process. Each worker
exits on its own soon after this process dies, however it dies (``kill -9`` included).
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import multiprocessing.util
import os
import shutil
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EncoderError

__all__ = ["SentenceTransformerEncoder"]


_log = logging.getLogger(__name__)


_POOL_START_TIMEOUT = 180.0  # seconds for the worker pool to start before we do without it


_POOL_MIN_CALL = 256  # smaller calls skip the pool even when it runs


_PARENT_POLL = 0.5  # seconds between a pool worker's checks that its parent is still alive


class _ParentWatch:
    """Carried into each pool worker with the model; unpickled there, it starts a parent watch.

    sentence-transformers starts the pool itself: spawn processes that run its own worker loop,
    blocked on a queue that every worker also holds open, so they never see their parent go.
    The model, which every worker unpickles, is where code of ours can run in a worker: a
    daemon thread that ends the worker with ``os._exit`` once ``parent_pid`` is no longer its
    parent. With the last worker gone, the multiprocessing resource tracker (every worker holds
    its pipe) reads end-of-file, unlinks the pool's semaphores (``/dev/shm/sem.loky-*``:
    importing joblib renames the stdlib's) and exits.

    Notes
    -----
    ``prctl(PR_SET_PDEATHSIG)`` does not fit: its signal fires when the *thread* that started
    the child ends, and the pool starts in a short-lived watchdog thread (:meth:`prepare`), so
    it would kill every worker just after start. ``os.getppid()`` names the parent process,
    whichever thread started the worker, and changes when the parent dies (the worker is
    re-parented), however it dies; a check every ``_PARENT_POLL`` seconds costs nothing.
    """

    def __init__(self, parent_pid: int) -> None:
        self.parent_pid = parent_pid

    def __reduce__(self) -> tuple[Any, tuple[int]]:
        return _watch_parent, (self.parent_pid,)


def _watch_parent(parent_pid: int) -> _ParentWatch:
    """Unpickle a :class:`_ParentWatch`, starting its watch in a pool worker only.

    The watch starts in a spawn child that is reading its start-up arguments, the stdlib's own
    test (``_inheriting``, as in ``multiprocessing.spawn``); a copy in the parent or a later
    pickle in another process watches nothing. A worker whose parent died while the worker was
    still importing exits at once.
    """
    inheriting = getattr(multiprocessing.current_process(), "_inheriting", False)
    if inheriting and os.getpid() != parent_pid:

        def watch() -> None:
            while os.getppid() == parent_pid:
                time.sleep(_PARENT_POLL)
            # The parent is gone: nobody will send work or read results. Exit without the
            # exit handlers (they wait on queue threads that cannot finish), removing what
            # they would have: this process's temp dir (the listener that passes result
            # tensors' file descriptors to the parent).
            shutil.rmtree(multiprocessing.util.get_temp_dir(), ignore_errors=True)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="s3kg-parent-watch").start()
    return _ParentWatch(parent_pid)


def _start_pool(model: Any, processes: int) -> dict[str, Any]:
    """Start sentence-transformers' CPU worker pool; each worker exits when this process dies."""
    model._s3kg_parent_watch = _ParentWatch(os.getpid())  # pickled into every worker
    try:
        pool: dict[str, Any] = model.start_multi_process_pool(["cpu"] * processes)
    finally:  # nothing else that pickles the model (a copy, a Ray task) may carry it
        del model._s3kg_parent_watch
    return pool


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

    def load_model(self) -> Any:
        """The ``SentenceTransformer`` behind this encoder, loaded on the first call.

        Raises
        ------
        EncoderError
            If the model folder does not load.
        """
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
        model = self.load_model()
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        return int(getter())

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts into unit-norm float32 rows (shape ``(n, dim)``)."""
        model = self.load_model()
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
        model = self.load_model()
        if str(model.device) != "cpu":
            return
        with self._lock:
            if self._pool is None:
                saved = {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
                os.environ.update({k: "1" for k in saved})  # one thread per worker process
                started: dict[str, Any] = {}

                def start() -> None:
                    try:
                        started["pool"] = _start_pool(model, self.processes)
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
