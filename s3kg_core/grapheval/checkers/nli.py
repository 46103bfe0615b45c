"""An NLI cross-encoder checker from a local Hugging Face model directory.

Premise: the context; hypothesis: the triple as a sentence. A context longer than the model's
input is cut into overlapping token windows (the tokenizer's own overflow with a stride) and the
claim takes its best entailment over the windows. ``p_unsupported = 1 - P(entailment)``, with
the entailment label found in ``config.id2label``: a label containing "entail" (MNLI-style
three-way models), or, for a two-label model, the label that reads as the positive class
("consistent", "supported", "faithful", "factual"). Nothing is downloaded.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import CheckerError
from ...scoring.signature import CheckerSignature
from .base import Checker, Claim, Verdict

__all__ = ["NLIChecker", "entailment_index", "load_classifier"]

_POSITIVE_2WAY = ("consistent", "support", "faithful", "factual", "entail")
_NEGATIVE_MARK = re.compile(r"\b(in|un|non|not|no)[-_ ]?|contradict|hallucin", re.IGNORECASE)


def entailment_index(id2label: Mapping[int, str]) -> int:
    """The class index whose probability means "the premise supports the hypothesis".

    Raises
    ------
    CheckerError
        If no label reads as entailment (the message lists the labels).

    Examples
    --------
    >>> entailment_index({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"})
    2
    >>> entailment_index({0: "inconsistent", 1: "consistent"})
    1
    """
    labels = {int(k): str(v) for k, v in id2label.items()}
    entail = [i for i, v in labels.items() if "entail" in v.lower() and not _NEGATIVE_MARK.match(v)]
    if len(entail) == 1:
        return entail[0]
    if len(labels) == 2:
        positive = [
            i
            for i, v in labels.items()
            if any(w in v.lower() for w in _POSITIVE_2WAY) and not _NEGATIVE_MARK.search(v)
        ]
        if len(positive) == 1:
            return positive[0]
    raise CheckerError(
        f"cannot tell which label means entailment among {sorted(labels.values())}; the model's "
        "config.json id2label needs an 'entailment' label (or, for two labels, one named "
        "'consistent'/'supported')"
    )


def load_classifier(path: Path, device: str = "cpu", what: str = "the model") -> tuple[Any, Any]:
    """A local sequence classifier and its tokenizer, in eval mode on ``device`` (no download).

    Raises
    ------
    CheckerError
        If the folder does not load (the message names ``what`` and the folder).

    Examples
    --------
    >>> load_classifier(Path("/no/such/model"))
    Traceback (most recent call last):
    ...
    s3kg_core.errors.CheckerError: cannot load the model from /no/such/model: ...
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError, KeyError, ImportError) as exc:
        raise CheckerError(f"cannot load {what} from {path}: {exc}") from exc
    model.eval()
    model.to(device)
    return tokenizer, model


class NLIChecker(Checker):
    """Triple checker on a local sequence-classification NLI model.

    Parameters
    ----------
    model_dir
        A local folder with ``config.json``, weights and tokenizer files (e.g. a DeBERTa MNLI
        model or HHEM saved with ``save_pretrained``).
    max_length
        Tokens per (window, hypothesis) pair; default: the tokenizer's and model's limit,
        at most 512.
    stride
        Tokens shared by consecutive context windows (default: a quarter of ``max_length``).
    batch_size
        Claims per job (see :class:`Checker`); forward passes run ``forward_batch`` pairs at once.
    device
        A torch device string (default ``"cpu"``).

    Raises
    ------
    CheckerError
        If the folder is missing, does not load, or has no entailment label.

    Examples
    --------
    >>> NLIChecker("/no/such/model")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.CheckerError: NLI model directory /no/such/model does not exist ...
    """

    version = "nli-1"

    def __init__(
        self,
        model_dir: str | Path,
        *,
        max_length: int | None = None,
        stride: int | None = None,
        batch_size: int = 16,
        forward_batch: int = 16,
        device: str = "cpu",
    ) -> None:
        super().__init__(batch_size)
        path = Path(model_dir).expanduser()
        if not path.is_dir() or not (path / "config.json").is_file():
            raise CheckerError(
                f"NLI model directory {model_dir} does not exist or has no config.json; pass "
                "a local folder saved with save_pretrained (nothing is downloaded)"
            )
        self.tokenizer, self.model = load_classifier(path, device, "the NLI model")
        self.device = device
        self.entail = entailment_index(self.model.config.id2label)
        limits = [int(self.tokenizer.model_max_length), 512]
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions:
            limits.append(int(positions))
        self.max_length = max_length or min(limits)
        if self.max_length < 16:
            raise CheckerError(f"max_length must be at least 16 tokens; got {self.max_length}")
        self.stride = stride if stride is not None else self.max_length // 4
        self.forward_batch = max(1, forward_batch)
        self.model_dir = path
        self.name = f"nli:{path.name}"

    @property
    def signature(self) -> str:
        """Checker, model folder, entailment label, window size, version."""
        label = self.model.config.id2label[self.entail]
        settings = (
            ("model", self.model_dir.name),
            ("entail", label),
            ("max_length", self.max_length),
            ("stride", self.stride),
        )
        return CheckerSignature("nli", self.version, settings).format()

    def _entailment(self, premises: list[str], hypotheses: list[str]) -> list[float]:
        """Best entailment probability over the context windows of each pair."""
        import torch

        best = [0.0] * len(premises)
        for lo in range(0, len(premises), self.forward_batch):
            prem = premises[lo : lo + self.forward_batch]
            hyp = hypotheses[lo : lo + self.forward_batch]
            hyp_len = max(len(self.tokenizer.tokenize(h)) for h in hyp)
            # windows must leave room for the hypothesis and the special tokens
            room = self.max_length - hyp_len - 4
            if room < 8:
                hyp = [
                    self.tokenizer.convert_tokens_to_string(
                        self.tokenizer.tokenize(h)[: self.max_length // 2]
                    )
                    for h in hyp
                ]
                room = self.max_length - self.max_length // 2 - 4
            enc = self.tokenizer(
                prem,
                hyp,
                truncation="only_first",
                max_length=self.max_length,
                stride=min(self.stride, max(0, room // 2)),
                return_overflowing_tokens=True,
                padding=True,
                return_tensors="pt",
            )
            owners = enc.pop("overflow_to_sample_mapping").tolist()
            inputs = {k: v.to(self.device) for k, v in enc.items()}
            with torch.inference_mode():
                logits = self.model(**inputs).logits
            probs = torch.softmax(logits.float(), dim=-1)[:, self.entail].tolist()
            for owner, p in zip(owners, probs, strict=True):
                best[lo + owner] = max(best[lo + owner], float(p))
        return best

    def _check(self, jobs: Sequence[tuple[Sequence[Claim], str]], raw: bool) -> list[list[Verdict]]:
        premises = [ctx for claims, ctx in jobs for _ in claims]
        hypotheses = [c.text for claims, _ in jobs for c in claims]
        entail = self._entailment(premises, hypotheses) if hypotheses else []
        out: list[list[Verdict]] = []
        k = 0
        for claims, _ in jobs:
            verdicts = []
            for _ in claims:
                p = min(1.0, max(0.0, 1.0 - entail[k]))
                verdicts.append(Verdict(p, detail={"entailment": round(entail[k], 6)}))
                k += 1
            out.append(verdicts)
        return out
