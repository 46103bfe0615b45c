"""The trained checker's alignment head: a cross-encoder read by its token alignment, not its [CLS].

The window and the statement are encoded together (one ``[CLS] window [SEP] statement [SEP]``
input, as a cross-encoder does); for every statement token the head takes its best cosine
similarity to a window token in the last hidden layer, and a linear layer reads a few statistics
of those similarities (:data:`FEATURES`): a hallucinated word is a statement token that no
window token matches.

Why not the usual ``[CLS]`` classifier: the packaged MiniLM is a sentence-embedding model
trained with mean pooling; its ``[CLS]`` state and its (untrained: bias zero, weights of
standard deviation 0.009) pooler carry nothing about whether the statement is supported. A
logistic regression on the frozen ``[CLS]`` states of 600 synthetic pairs is at chance on held-out
documents (AUROC 0.51), one on these six alignment statistics reaches AUROC 0.81; fine-tuning
the ``[CLS]`` route did not leave loss 0.69 within the hundreds of steps a CPU allows.

Saved beside the encoder (a standard Hugging Face folder) as :data:`HEAD_FILE`.

Examples
--------
>>> FEATURES[:2]
('min', 'mean')
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import CheckerError

__all__ = [
    "FEATURES",
    "HEAD_FILE",
    "HEAD_VERSION",
    "alignment_features",
    "alignment_logits",
    "load_alignment",
    "new_head",
    "save_head",
]

HEAD_VERSION = "alignment-1"
"""Recorded in the manifest as ``head``; the checker reads a model of this kind with this module."""

HEAD_FILE = "alignment_head.json"
"""The head's weights (a 2 x len(FEATURES) matrix and a bias), JSON."""

_THRESHOLDS = (0.5, 0.6, 0.7, 0.8)
_SOFTNESS = 0.05

FEATURES = ("min", "mean", *(f"share_below_{t}" for t in _THRESHOLDS))
"""Statistics of the statement tokens' best window similarity that the linear head reads."""


def alignment_features(hidden: Any, token_type_ids: Any, attention_mask: Any) -> Any:
    """The ``(batch, len(FEATURES))`` statistics of each statement token's best window match.

    ``hidden``: the encoder's last hidden states ``(batch, tokens, dim)`` of
    ``[CLS] window [SEP] statement [SEP]`` inputs; window tokens are those of segment 0 (without
    ``[CLS]`` and its ``[SEP]``), statement tokens those of segment 1 (without the final ``[SEP]``).
    The shares below a threshold are soft (a sigmoid), so the encoder can be trained through them.

    Examples
    --------
    >>> import torch
    >>> h = torch.eye(4).unsqueeze(0)          # four orthogonal tokens
    >>> types = torch.tensor([[0, 0, 1, 1]])   # [CLS] w | s [SEP]
    >>> alignment_features(h, types, torch.ones(1, 4)).shape
    torch.Size([1, 6])
    """
    import torch

    mask = attention_mask.bool()
    types = token_type_ids.bool()
    last = mask.long().sum(1) - 1  # the final [SEP]
    pos = torch.arange(hidden.shape[1], device=hidden.device).unsqueeze(0)
    window = mask & ~types & (pos > 0)
    # the [SEP] closing the window is its last segment-0 token
    window_end = (window.long() * pos).max(1).values
    window = window & (pos < window_end.unsqueeze(1))
    statement = mask & types & (pos < last.unsqueeze(1))
    unit = torch.nn.functional.normalize(hidden, dim=-1)
    sim = unit @ unit.transpose(1, 2)
    sim = sim.masked_fill(~window.unsqueeze(1), -1.0)
    best = sim.max(-1).values  # (batch, tokens): each token's best window match
    weight = statement.float()
    count = weight.sum(1).clamp(min=1.0)
    mean = (best * weight).sum(1) / count
    low = best.masked_fill(~statement, 1.0).min(1).values
    shares = [(torch.sigmoid((t - best) / _SOFTNESS) * weight).sum(1) / count for t in _THRESHOLDS]
    return torch.stack([low, mean, *shares], dim=1)


def new_head() -> Any:
    """A fresh linear head (zero weights: P(supported) 0.5 before training).

    Examples
    --------
    >>> new_head().weight.shape
    torch.Size([2, 6])
    """
    import torch

    head = torch.nn.Linear(len(FEATURES), 2)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    return head


def alignment_logits(encoder: Any, head: Any, enc: Any) -> Any:
    """Two logits (unsupported, supported) per pair of a tokenizer batch ``enc``.

    Examples
    --------
    >>> # alignment_logits(encoder, head, tokenizer(windows, statements, return_tensors="pt"))
    """
    hidden = encoder(
        input_ids=enc["input_ids"],
        attention_mask=enc["attention_mask"],
        token_type_ids=enc["token_type_ids"],
    ).last_hidden_state
    return head(alignment_features(hidden, enc["token_type_ids"], enc["attention_mask"]))


def save_head(head: Any, folder: str | Path) -> None:
    """Write the head's weights to ``folder/``:data:`HEAD_FILE`.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_head(new_head(), d)
    ...     sorted(json.loads((Path(d) / HEAD_FILE).read_text()))
    ['bias', 'features', 'version', 'weight']
    """
    data = {
        "version": HEAD_VERSION,
        "features": list(FEATURES),
        "weight": head.weight.detach().cpu().tolist(),
        "bias": head.bias.detach().cpu().tolist(),
    }
    (Path(folder) / HEAD_FILE).write_text(json.dumps(data) + "\n", encoding="utf-8")


def load_alignment(path: str | Path, device: str = "cpu") -> tuple[Any, Any, Any]:
    """``(tokenizer, encoder, head)`` of a saved alignment checker, in eval mode (no download).

    Raises
    ------
    CheckerError
        If the folder does not load or its head is of another version.

    Examples
    --------
    >>> load_alignment("/no/such/model")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.CheckerError: cannot load the trained checker from /no/such/model: ...
    """
    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    folder = Path(path)
    try:
        data = json.loads((folder / HEAD_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckerError(f"cannot load the trained checker from {folder}: {exc}") from exc
    if data.get("version") != HEAD_VERSION or tuple(data.get("features", ())) != FEATURES:
        raise CheckerError(
            f"{folder / HEAD_FILE} is a head of version {data.get('version')!r}; this code reads "
            f"{HEAD_VERSION!r}: train the checker again"
        )
    try:
        from transformers import AutoModel, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        encoder = AutoModel.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise CheckerError(f"cannot load the trained checker from {folder}: {exc}") from exc
    head = new_head()
    with torch.no_grad():
        head.weight.copy_(torch.tensor(data["weight"], dtype=torch.float32))
        head.bias.copy_(torch.tensor(data["bias"], dtype=torch.float32))
    encoder.eval().to(device)
    head.eval().to(device)
    return tokenizer, encoder, head
