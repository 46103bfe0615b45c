"""The trained checker's alignment head: a cross-encoder read by its token alignment, not its [CLS].

The window and the statement are encoded together (one ``[CLS] window [SEP] statement [SEP]``
input, as a cross-encoder does); for every statement token the head takes its best cosine
similarity to a window token in the last hidden layer, and a linear layer reads a few statistics
of those similarities (:data:`FEATURES`): a hallucinated word is a statement token that no
window token matches. Matches alone are blind to order and locality (a swapped head and tail,
an entity of the window put in another's place match every token), so the head also reads
whether consecutive statement tokens are matched by window tokens in the same order and near
each other (ordered "bigrams" with a gap, see :func:`feature_table`), and how far apart in the
window the matches lie.

Why not the usual ``[CLS]`` classifier: the packaged MiniLM is a sentence-embedding model
trained with mean pooling; its ``[CLS]`` state and its (untrained: bias zero, weights of
standard deviation 0.009) pooler carry nothing about whether the statement is supported. A
logistic regression on the frozen ``[CLS]`` states of 600 synthetic pairs is at chance on held-out
documents (AUROC 0.51), one on the six match statistics reaches AUROC 0.81; fine-tuning
the ``[CLS]`` route did not leave loss 0.69 within the hundreds of steps a CPU allows. On
frozen MiniLM states of 2,400 synthetic pairs (``bench/experiments/bench_order_features.py``,
documents split 50/50), the order and locality statistics raise the held-out AUROC from 0.835 to
0.900;
against swapped statements from 0.67 to 0.88, against same-type entities from 0.63 to 0.78.
Two more candidates (the order concordance of expected positions, the mean jump between them)
are computed but not read: they added nothing beside these.

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

from ...errors import CheckerError

__all__ = [
    "BIGRAM_GAP",
    "FEATURES",
    "HEAD_FILE",
    "HEAD_VERSION",
    "TEMPERATURE",
    "alignment_features",
    "alignment_logits",
    "feature_table",
    "load_alignment",
    "new_head",
    "save_head",
]

HEAD_VERSION = "alignment-2"
"""Recorded in the manifest as ``head``; the checker reads a model of this kind with this module."""

HEAD_FILE = "alignment_head.json"
"""The head's weights (a 2 x len(FEATURES) matrix, a bias, the version and feature names), JSON."""

_THRESHOLDS = (0.5, 0.6, 0.7, 0.8)
_SOFTNESS = 0.05

BIGRAM_GAP = 8
"""Most tokens between the window matches of two consecutive statement tokens (bigram features)."""

TEMPERATURE = 0.05
"""Softmax temperature of a statement token's expected window position (cosine units)."""

FEATURES = (
    "min",
    "mean",
    *(f"share_below_{t}" for t in _THRESHOLDS),
    "bigram_min",
    "bigram_mean",
    "bigram_back_mean",
    "spread",
)
"""The statistics the linear head reads (:func:`feature_table`): six of the statement tokens'
best window match (head ``alignment-1``), four of order and locality (``alignment-2``)."""


def feature_table(hidden: Any, token_type_ids: Any, attention_mask: Any) -> dict[str, Any]:
    """Every statistic the head can read, by name: ``(batch,)`` tensors (a superset of FEATURES).

    ``hidden``: the encoder's last hidden states ``(batch, tokens, dim)`` of
    ``[CLS] window [SEP] statement [SEP]`` inputs; window tokens are those of segment 0 (without
    ``[CLS]`` and its ``[SEP]``), statement tokens those of segment 1 (without the final ``[SEP]``).

    Match statistics (each statement token's best cosine to a window token): ``min``, ``mean``
    and the soft shares ``share_below_t`` (a sigmoid, so the encoder trains through them).

    Order and locality statistics (blind spots of the match statistics: a swapped head and tail,
    an entity of the window put in the wrong place):

    ``bigram_min``, ``bigram_mean``
        For each pair of consecutive statement tokens ``(s, s')``, the best window pair
        ``(w, w')`` with ``w'`` at most :data:`BIGRAM_GAP` tokens after ``w``, scored by the
        smaller of the two cosines; the minimum and mean over the pairs. A swap or a misplaced
        entity leaves a statement pair whose tokens occur in the window, but not in this order
        or not near each other.
    ``bigram_back_mean``
        The same with ``w'`` *before* ``w`` (high for a reversed statement).
    ``concordance``
        Each statement token's expected window position (a softmax of its cosines at
        temperature :data:`TEMPERATURE`); the mean over consecutive pairs of
        ``tanh(step / 2 tokens)``: 1 when the statement follows the window's order, -1 reversed.
    ``jump``
        The mean of ``log(1 + |step|)`` over consecutive pairs (tokens): far-apart matches.
    ``spread``
        The range of the expected positions over the window's length.

    Examples
    --------
    >>> import torch
    >>> h = torch.eye(4).unsqueeze(0)          # four orthogonal tokens
    >>> types = torch.tensor([[0, 0, 1, 1]])   # [CLS] w | s [SEP]
    >>> sorted(feature_table(h, types, torch.ones(1, 4)))[:3]
    ['bigram_back_mean', 'bigram_mean', 'bigram_min']
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
    raw = unit @ unit.transpose(1, 2)
    sim = raw.masked_fill(~window.unsqueeze(1), -1.0)
    best = sim.max(-1).values  # (batch, tokens): each token's best window match
    weight = statement.float()
    count = weight.sum(1).clamp(min=1.0)
    out: dict[str, Any] = {
        "min": best.masked_fill(~statement, 1.0).min(1).values,
        "mean": (best * weight).sum(1) / count,
    }
    for t in _THRESHOLDS:
        out[f"share_below_{t}"] = (torch.sigmoid((t - best) / _SOFTNESS) * weight).sum(1) / count

    # consecutive statement tokens (i, i + 1)
    pair = statement[:, :-1] & statement[:, 1:]
    pair_w = pair.float()
    n_pairs = pair_w.sum(1).clamp(min=1.0)
    nxt = sim[:, 1:, :]  # row i + 1 beside row i
    gaps = range(1, min(BIGRAM_GAP, hidden.shape[1] - 1) + 1)
    pad = torch.nn.functional.pad
    # best match of token i + 1 at most BIGRAM_GAP tokens after (before) each window token
    ahead = torch.stack([pad(nxt[..., g:], (0, g), value=-1.0) for g in gaps]).max(0).values
    behind = torch.stack([pad(nxt[..., :-g], (g, 0), value=-1.0) for g in gaps]).max(0).values
    here = sim[:, :-1, :]
    forward = torch.minimum(here, ahead).max(-1).values  # (batch, tokens - 1)
    backward = torch.minimum(here, behind).max(-1).values
    has_pairs = pair.any(1)
    out["bigram_min"] = torch.where(
        has_pairs, forward.masked_fill(~pair, 1.0).min(1).values, out["min"]
    )
    out["bigram_mean"] = torch.where(has_pairs, (forward * pair_w).sum(1) / n_pairs, out["mean"])
    out["bigram_back_mean"] = (backward * pair_w).sum(1) / n_pairs

    logits = (raw / TEMPERATURE).masked_fill(~window.unsqueeze(1), -1e4)
    expected = torch.softmax(logits, -1) @ pos.squeeze(0).to(hidden.dtype)  # (batch, tokens)
    step = expected[:, 1:] - expected[:, :-1]
    out["concordance"] = (torch.tanh(step / 2.0) * pair_w).sum(1) / n_pairs
    out["jump"] = (torch.log1p(step.abs()) * pair_w).sum(1) / n_pairs
    n_window = window.float().sum(1).clamp(min=1.0)
    top = expected.masked_fill(~statement, -1e9).max(1).values
    bottom = expected.masked_fill(~statement, 1e9).min(1).values
    out["spread"] = torch.where(
        statement.any(1), (top - bottom) / n_window, torch.zeros_like(n_window)
    )
    return out


def alignment_features(hidden: Any, token_type_ids: Any, attention_mask: Any) -> Any:
    """The ``(batch, len(FEATURES))`` statistics the head reads (see :func:`feature_table`).

    Examples
    --------
    >>> import torch
    >>> h = torch.eye(4).unsqueeze(0)          # four orthogonal tokens
    >>> types = torch.tensor([[0, 0, 1, 1]])   # [CLS] w | s [SEP]
    >>> alignment_features(h, types, torch.ones(1, 4)).shape == (1, len(FEATURES))
    True
    """
    import torch

    table = feature_table(hidden, token_type_ids, attention_mask)
    return torch.stack([table[name] for name in FEATURES], dim=1)


def new_head() -> Any:
    """A fresh linear head (zero weights: P(supported) 0.5 before training).

    Examples
    --------
    >>> new_head().weight.shape
    torch.Size([2, 10])
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


def load_alignment(
    path: str | Path, device: str = "cpu", *, encoder: bool = True
) -> tuple[Any, Any, Any]:
    """``(tokenizer, encoder, head)`` of a saved alignment checker, in eval mode (no download).

    With ``encoder=False`` the torch encoder is not loaded (``None`` in its place): another
    runtime computes the hidden states (the checker's int8 ONNX backend).

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
        model = AutoModel.from_pretrained(str(folder), local_files_only=True) if encoder else None
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise CheckerError(f"cannot load the trained checker from {folder}: {exc}") from exc
    head = new_head()
    with torch.no_grad():
        head.weight.copy_(torch.tensor(data["weight"], dtype=torch.float32))
        head.bias.copy_(torch.tensor(data["bias"], dtype=torch.float32))
    if model is not None:
        model.eval().to(device)
    head.eval().to(device)
    return tokenizer, model, head
