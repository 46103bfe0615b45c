"""Export the trained checker's encoder to int8 ONNX inside its folder, measured against torch.

``s3kg grapheval export-checker`` runs :func:`export_checker`: the encoder of an alignment
checker (``train-checker``'s folder) goes to ONNX with the project's exporter
(:func:`~s3kg_core.encoders.export.export_hidden_states`: ``last_hidden_state`` out, opset 17)
in a temporary folder, is quantised to int8 (:func:`~s3kg_core.encoders.export.quantize_int8`,
onnxruntime's dynamic quantisation) and the fp32 file dropped. Both backends then score the
same held-out synthetic pairs (documents never trained on), batch by batch in turn, so the
timings are interleaved; the int8 file is moved into the folder as
:data:`~s3kg_core.grapheval.checkers.model_format.ONNX_FILE` and the manifest gains an ``onnx``
entry (written atomically, last): the file's name, size and sha256, those of the weights and
head it came from (so a stale file is noticed), the quantisation, and the held-out metrics and
pairs/s of torch and int8 side by side, with the largest and mean change in P(supported).

Held-out pairs, first found: ``pairs_file`` (a pairs JSONL, e.g. a training run's
``pairs.jsonl``; only its held-out documents are used), the folder's
:data:`~s3kg_core.grapheval.checkers.model_format.HELDOUT_PAIRS` (saved by training), else pairs
generated afresh from the held-out source documents (the same document split as training).

Examples
--------
>>> # export_checker("~/.cache/s3kg/checkers/trained-minilm")["heldout"]["onnx_int8"]["auroc"]
"""

from __future__ import annotations

import datetime as dt
import json
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import replacing
from ..encoders.export import (
    OPSET,
    dist_version,
    export_hidden_states,
    quantize_int8,
    sha256_file,
    weights_file,
)
from ..errors import CheckerError, CheckerExportError, EncoderError
from ..evaluation.splits import heldout_document
from ..grapheval.checkers.alignment import HEAD_FILE, HEAD_VERSION, load_alignment
from ..grapheval.checkers.model_format import (
    HELDOUT_PAIRS,
    MANIFEST,
    ONNX_FILE,
    read_manifest,
    tokenize_pairs,
    trained_checker_dir,
)
from ..grapheval.checkers.trained import TrainedChecker
from .synthetic import SyntheticPair, data_hash, generate_pairs, read_pairs, source_documents
from .training import evaluate_pairs

__all__ = ["export_checker", "heldout_pairs"]


def heldout_pairs(
    model_dir: str | Path,
    *,
    pairs_file: str | Path | None = None,
    n_pairs: int = 600,
    data_dir: str | Path | None = None,
    seed: int = 0,
) -> tuple[list[SyntheticPair], str]:
    """Held-out synthetic pairs to measure a checker on, and where they came from.

    ``pairs_file``, else the folder's :data:`HELDOUT_PAIRS`, else about ``n_pairs`` pairs
    generated from the held-out source documents (``data_dir``); from a file, only pairs of
    held-out documents are kept (the manifest's ``heldout_percent``), at most ``n_pairs`` of them
    (a seeded sample; ``n_pairs=0``: all).

    Raises
    ------
    CheckerError
        If no held-out pair is found.

    Examples
    --------
    >>> # pairs, source = heldout_pairs(trained_checker_dir(), n_pairs=200)
    """
    folder = Path(model_dir)
    percent = int(read_manifest(folder).get("config", {}).get("heldout_percent", 10))
    file = Path(pairs_file) if pairs_file is not None else folder / HELDOUT_PAIRS
    if pairs_file is not None or file.is_file():
        pairs = [p for p in read_pairs(file) if heldout_document(p.doc_id, percent)]
        if 0 < n_pairs < len(pairs):
            pairs = random.Random(seed).sample(pairs, n_pairs)
        source = str(file)
    else:
        docs = [d for d in source_documents(data_dir) if heldout_document(d.doc_id, percent)]
        pairs = generate_pairs(docs, n_pairs=max(2, n_pairs), seed=seed) if docs else []
        source = f"generated from {len(docs)} held-out documents (seed {seed})"
    if not pairs:
        raise CheckerError(f"no held-out pairs to measure the export on ({source})")
    return pairs, source


def _measure(
    torch_checker: TrainedChecker,
    int8_checker: TrainedChecker,
    pairs: Sequence[SyntheticPair],
    batch: int = 32,
) -> dict[str, Any]:
    probs: dict[str, list[float]] = {"torch": [], "onnx_int8": []}
    seconds = dict.fromkeys(probs, 0.0)
    for lo in range(0, len(pairs), batch):
        chunk = [(p.window, p.statement) for p in pairs[lo : lo + batch]]
        for name, checker in (("torch", torch_checker), ("onnx_int8", int8_checker)):
            started = time.perf_counter()
            probs[name].extend(checker.support_many(chunk))
            seconds[name] += time.perf_counter() - started
    diff = np.abs(np.asarray(probs["onnx_int8"]) - np.asarray(probs["torch"]))
    out: dict[str, Any] = {"n": len(pairs), "data_hash": data_hash(pairs)}
    for name in probs:
        metrics = evaluate_pairs(probs[name], pairs)
        metrics["seconds"] = round(seconds[name], 2)
        metrics["pairs_per_s"] = round(len(pairs) / max(seconds[name], 1e-9), 1)
        out[name] = metrics
    out["max_abs_diff"] = round(float(diff.max()), 4)
    out["mean_abs_diff"] = round(float(diff.mean()), 4)
    out["speedup"] = round(seconds["torch"] / max(seconds["onnx_int8"], 1e-9), 2)
    return out


def export_checker(
    model_dir: str | Path | None = None,
    *,
    pairs_file: str | Path | None = None,
    n_pairs: int = 600,
    data_dir: str | Path | None = None,
    threads: int | None = 1,
) -> dict[str, Any]:
    """Export a trained checker's encoder to int8 ONNX in its folder; return the manifest entry.

    Parameters
    ----------
    model_dir
        The trained checker's folder (default
        :func:`~s3kg_core.grapheval.checkers.model_format.trained_checker_dir`); it gains
        :data:`ONNX_FILE` and the manifest's ``onnx`` entry (both replaced when they exist).
    pairs_file, n_pairs, data_dir
        The held-out pairs the two backends are measured on (:func:`heldout_pairs`).
    threads
        Threads of both backends while measuring (torch's are set back afterwards).

    Raises
    ------
    CheckerError
        If the folder holds no trained alignment checker, or no held-out pairs are found.
    CheckerExportError
        If the export or the quantisation fails.

    Examples
    --------
    >>> # export_checker(pairs_file="run/pairs.jsonl")["heldout"]["speedup"]
    """
    import torch

    folder = Path(model_dir) if model_dir is not None else trained_checker_dir()
    manifest = read_manifest(folder)
    if manifest.get("head") != HEAD_VERSION:
        raise CheckerError(
            f"{folder}: only a checker with the {HEAD_VERSION!r} head can be exported to ONNX "
            f"(this one has {manifest.get('head', 'classifier')!r})"
        )
    pairs, source = heldout_pairs(folder, pairs_file=pairs_file, n_pairs=n_pairs, data_dir=data_dir)
    try:
        weights = weights_file(folder)
    except EncoderError as exc:
        raise CheckerError(str(exc)) from exc
    head = folder / HEAD_FILE
    source_sha, head_sha = sha256_file(weights), sha256_file(head)
    tokenizer, encoder, _ = load_alignment(folder)
    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        with tempfile.TemporaryDirectory(dir=folder, prefix=".export-") as tmp:
            fp32, int8 = Path(tmp) / "model.onnx", Path(tmp) / ONNX_FILE
            example = tokenize_pairs(
                tokenizer, ["a longer window sentence here", "short"], ["a statement", "s"], 64
            )
            started = time.perf_counter()
            try:
                inputs = export_hidden_states(encoder, example, fp32)
                quantisation = quantize_int8(fp32, int8)
            except EncoderError as exc:
                raise CheckerExportError(str(exc)) from exc
            except Exception as exc:  # torch's exporter raises many kinds; name the model
                raise CheckerExportError(f"could not export {folder} to ONNX: {exc}") from exc
            export_seconds = time.perf_counter() - started
            fp32_bytes = fp32.stat().st_size
            fp32.unlink()
            del encoder
            measured = _measure(
                TrainedChecker(folder, backend="torch"),
                TrainedChecker(folder, onnx_file=int8, threads=threads),
                pairs,
            )
            measured["source"] = source
            entry = {
                "file": ONNX_FILE,
                "bytes": int8.stat().st_size,
                "sha256": sha256_file(int8),
                "fp32_bytes": fp32_bytes,
                "inputs": inputs,
                "opset": OPSET,
                "exporter": "torch.onnx (TorchScript)",
                "quantisation": quantisation,
                "head": manifest.get("head"),
                "source_weights": weights.name,
                "source_sha256": source_sha,
                "head_sha256": head_sha,
                "export_seconds": round(export_seconds, 1),
                "threads": threads,
                "heldout": measured,
                "versions": {d: dist_version(d) for d in ("torch", "onnx", "onnxruntime")},
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            }
            int8.replace(folder / ONNX_FILE)
    finally:
        torch.set_num_threads(before)
    manifest["onnx"] = entry
    with replacing(folder / MANIFEST) as out:
        out.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return entry
