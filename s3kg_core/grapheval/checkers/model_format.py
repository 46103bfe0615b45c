"""The trained checker's model folder: what the checker at run time and its training both need.

A trained checker is a standard Hugging Face model folder (the fine-tuned encoder and its
tokenizer) with, beside it:

=========================  =======================================================================
file                       what
=========================  =======================================================================
:data:`MANIFEST`           ``format`` (:data:`MANIFEST_FORMAT`), base model, seed, data hash,
                           settings, held-out metrics; ``onnx`` once the int8 export is made
``alignment_head.json``    the alignment head (:mod:`~s3kg_core.grapheval.checkers.alignment`)
:data:`HELDOUT_PAIRS`      the held-out synthetic pairs (what the export is measured on)
:data:`ONNX_FILE`          the int8 ONNX export of the encoder (``s3kg grapheval export-checker``)
=========================  =======================================================================

Both sides read a claim against the same *windows* of a text (:func:`text_windows`) and feed
the encoder the same ``[CLS] window [SEP] statement [SEP]`` batches (:func:`tokenize_pairs`);
the classes are :data:`LABELS` (index 1 is "supported"). The training lives in
:mod:`s3kg_core.checker_training`, the checker in :mod:`.trained`.

Examples
--------
>>> text_windows("A b. C d. E f. G h.", size=2, stride=2)
['A b. C d.', 'E f. G h.']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...config import cache_dir
from ...errors import CheckerError
from ...text import split_sentences

__all__ = [
    "HELDOUT_PAIRS",
    "LABELS",
    "MANIFEST",
    "MANIFEST_FORMAT",
    "ONNX_FILE",
    "WINDOW_WORDS",
    "read_manifest",
    "text_windows",
    "tokenize_pairs",
    "trained_checker_dir",
]

MANIFEST = "manifest.json"
"""The manifest's file name in the model folder."""

MANIFEST_FORMAT = "s3kg-trained-checker-1"
"""The manifest's ``format``: a folder with another is not a trained checker of this code."""

ONNX_FILE = "model.int8.onnx"
"""The int8 ONNX export of the encoder, in the model folder; the manifest's ``onnx`` entry."""

HELDOUT_PAIRS = "heldout_pairs.jsonl"
"""The held-out synthetic pairs, saved beside the model by training (the export measures them)."""

LABELS = {0: "unsupported", 1: "supported"}
"""The two classes (index 1 is read as "supported" by the checker)."""

WINDOW_WORDS = 110
"""Most words of a window: it stays well inside 256 tokens with its statement."""


def trained_checker_dir() -> Path:
    """Where ``train-checker`` saves its model by default: ``<cache dir>/checkers/trained-minilm``.

    Examples
    --------
    >>> trained_checker_dir().name
    'trained-minilm'
    """
    return cache_dir() / "checkers" / "trained-minilm"


def read_manifest(model_dir: str | Path | None = None) -> dict[str, Any]:
    """The manifest of a trained checker (data hash, base model, seed, held-out metrics).

    Raises
    ------
    CheckerError
        If the folder has no valid manifest (the checker has not been trained there).

    Examples
    --------
    >>> read_manifest("/no/such/folder")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.CheckerError: no trained checker in /no/such/folder ...
    """
    path = Path(model_dir) if model_dir is not None else trained_checker_dir()
    file = path / MANIFEST
    if not file.is_file():
        raise CheckerError(
            f"no trained checker in {path} (no {MANIFEST}); train one with "
            "`s3kg grapheval train-checker`"
        )
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CheckerError(f"{file} is not JSON: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != MANIFEST_FORMAT:
        raise CheckerError(f"{file} is not a {MANIFEST_FORMAT} manifest")
    return data


def text_windows(text: str, size: int = 3, stride: int = 2) -> list[str]:
    """Windows of ``size`` consecutive sentences every ``stride`` sentences, each <= 110 words.

    A window that would pass :data:`WINDOW_WORDS` words ends early (a longer sentence is a
    window of its own, cut at 110 words), and the next window starts at the first sentence it
    left out: every sentence is in a window. The synthetic training pairs and the checker both
    take their windows from here.

    Examples
    --------
    >>> text_windows("A b. C d. E f.", size=3), text_windows("")
    (['A b. C d. E f.'], [])
    """
    sentences = split_sentences(text) or ([text.strip()] if text.strip() else [])
    out: list[str] = []
    lo = 0
    while lo < len(sentences):
        words: list[str] = []
        taken = 0
        for sentence in sentences[lo : lo + size]:
            more = sentence.split()
            if words and len(words) + len(more) > WINDOW_WORDS:
                break
            words.extend(more)
            taken += 1
        out.append(" ".join(words[:WINDOW_WORDS]))
        if lo + taken >= len(sentences):
            break
        # a window cut short by a long sentence moves on to the first sentence it left out,
        # so that no sentence is skipped by the stride
        lo += max(1, min(stride, taken))
    return out


def tokenize_pairs(
    tokenizer: Any, windows: Sequence[str], statements: Sequence[str], max_length: int
) -> Any:
    """A padded PyTorch batch of ``[CLS] window [SEP] statement [SEP]`` inputs.

    Long pairs are cut from the longer side first (``truncation="longest_first"``), so neither
    the window nor the statement is dropped. Training, evaluation and the checker all call this.

    Examples
    --------
    >>> # tokenize_pairs(tokenizer, ["Aspirin treats pain."], ["aspirin treats pain"], 160)
    """
    return tokenizer(
        list(windows),
        list(statements),
        truncation="longest_first",
        max_length=max_length,
        padding=True,
        return_tensors="pt",
    )
