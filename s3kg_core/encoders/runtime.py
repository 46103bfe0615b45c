"""An exported encoder run by onnxruntime or OpenVINO (fp32), with sentence-transformers' pipeline.

The pipeline is the one of the sentence-transformers models it was exported from (their
``modules.json``: Transformer, mean Pooling, Normalize): tokenise with the model's own
``tokenizer.json`` (truncated at its ``max_seq_length``), run the texts in batches sorted by
token length (each padded to its longest), average the token vectors under the attention mask,
L2-normalise. Vectors agree with torch's to within 1e-4 cosine (tested).

Both runtimes run in this process with their own intra-op threads; there is no worker pool (the
torch encoder has one because torch's small matrices gain little from threads; onnxruntime and
OpenVINO use their threads well, and a pool would load the model once per process).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EncoderError
from .export import read_manifest

__all__ = ["RUNTIME_BACKENDS", "RuntimeEncoder", "onnx_runner", "runtime_threads"]

RUNTIME_BACKENDS = ("onnx", "openvino")

Runner = Callable[[dict[str, np.ndarray]], np.ndarray]


def runtime_threads(threads: int | None = None) -> int | None:
    """Intra-op threads for a runtime: ``threads``, else ``$OMP_NUM_THREADS`` where set, else None.

    ``None`` leaves the runtime's default (one thread per core); torch reads the same variable.

    Examples
    --------
    >>> runtime_threads(2)
    2
    """
    if threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "").strip()
        threads = int(env) if env.isdigit() and int(env) > 0 else None
    return threads


def onnx_runner(path: Path, threads: int | None) -> Runner:
    """An onnxruntime CPU session of ``path`` as a function: a feed of arrays -> last_hidden_state.

    ``threads``: intra-op threads (one inter-op thread); ``None``: onnxruntime's default.

    Examples
    --------
    >>> # onnx_runner(Path("model.onnx"), 1)({"input_ids": ids, "attention_mask": mask})
    """
    import onnxruntime as ort  # type: ignore[import-untyped]

    options = ort.SessionOptions()
    options.log_severity_level = 3
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def run(feed: dict[str, np.ndarray]) -> np.ndarray:
        out: np.ndarray = session.run(["last_hidden_state"], feed)[0]
        return out

    return run


def _openvino_runner(path: Path, threads: int | None) -> Runner:
    import openvino as ov  # type: ignore[import-untyped]

    core = ov.Core()
    config: dict[str, Any] = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY"}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    compiled = core.compile_model(core.read_model(str(path)), "CPU", config)
    request = compiled.create_infer_request()
    lock = threading.Lock()  # one infer request: one call at a time

    def run(feed: dict[str, np.ndarray]) -> np.ndarray:
        with lock:
            result = request.infer(feed)
            return np.array(result[compiled.output(0)])

    return run


_RUNNERS: dict[str, Callable[[Path, int | None], Runner]] = {
    "onnx": onnx_runner,
    "openvino": _openvino_runner,
}


class RuntimeEncoder:
    """A sentence encoder exported to ONNX, run by onnxruntime (``onnx``) or OpenVINO.

    Parameters
    ----------
    folder
        An export folder (:func:`~s3kg_core.encoders.export.export_onnx`): ``model.onnx``,
        ``tokenizer.json`` and ``manifest.json``.
    name
        Name recorded in signatures and cache keys (``minilm@0.1.0+onnx``).
    backend
        ``onnx`` or ``openvino``.
    batch_size
        Texts per forward pass.
    threads
        Intra-op threads (``None``: ``$OMP_NUM_THREADS`` where set, as torch reads it, else the
        runtime's default, one per core).

    Examples
    --------
    >>> from s3kg_core.encoders.registry import load_encoder
    >>> enc = load_encoder("minilm+onnx")
    >>> enc.name.endswith("+onnx"), enc.encode(["a cat", "a dog"]).shape
    (True, (2, 384))
    """

    def __init__(
        self,
        folder: Path,
        name: str,
        backend: str,
        *,
        batch_size: int = 128,
        threads: int | None = None,
    ) -> None:
        if backend not in _RUNNERS:
            raise EncoderError(f"unknown runtime backend {backend!r}: use onnx or openvino")
        self.folder = Path(folder)
        self.name = name
        self.backend = backend
        self.batch_size = max(1, batch_size)
        self.threads = runtime_threads(threads)
        self.manifest = read_manifest(self.folder)
        self._inputs: list[str] = list(self.manifest["inputs"])
        self._run: Runner | None = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        return int(self.manifest["dim"])

    def load(self) -> RuntimeEncoder:
        """Load the tokenizer and the runtime session now (else on the first encode).

        Returns this encoder.

        Raises
        ------
        EncoderError
            If the runtime is not installed or the model does not load.
        """
        with self._lock:
            if self._run is None:
                try:
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
                    tokenizer.no_padding()
                    tokenizer.enable_truncation(max_length=int(self.manifest["max_seq_length"]))
                    run = _RUNNERS[self.backend](self.folder / "model.onnx", self.threads)
                except Exception as exc:  # ImportError, the runtimes' own errors
                    raise EncoderError(
                        f"the {self.backend} backend could not load {self.folder}: {exc}"
                    ) from exc
                self._tokenizer, self._run = tokenizer, run
        return self

    def _runner(self) -> Runner:
        run = self._run or self.load()._run
        if run is None:  # closed by another thread meanwhile
            raise EncoderError(f"{self.name}: the session was closed while encoding")
        return run

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts into unit-norm float32 rows (shape ``(n, dim)``)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        run = self._runner()
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        order = np.argsort(-lengths, kind="stable")
        for lo in range(0, len(order), self.batch_size):
            idx = order[lo : lo + self.batch_size]
            width = int(lengths[idx].max())
            feed = {n: np.zeros((len(idx), width), dtype=np.int64) for n in self._inputs}
            for row, i in enumerate(idx):
                enc = encodings[i]
                k = len(enc.ids)
                feed["input_ids"][row, :k] = enc.ids
                feed["attention_mask"][row, :k] = enc.attention_mask
                if "token_type_ids" in feed:
                    feed["token_type_ids"][row, :k] = enc.type_ids
            hidden = run(feed)
            mask = feed["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out

    def close(self) -> None:
        """Release the session (a later encode loads it again)."""
        with self._lock:
            self._run = None

    def __repr__(self) -> str:
        return f"RuntimeEncoder({self.name!r}, {self.backend!r}, {str(self.folder)!r})"
