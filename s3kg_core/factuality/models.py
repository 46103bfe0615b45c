"""Loading the target causal LM from a local folder (no hub downloads), and running prompts.

``"smollm2"`` names the packaged SmolLM2-135M-Instruct, converted once to a plain folder by
:func:`s3kg_core.llm.local_models.smollm2_model_dir`; anything else is a local model folder that
``AutoModelForCausalLM.from_pretrained`` reads with ``local_files_only=True``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError, FactualityError
from .prompts import label_prompt_text

__all__ = ["PACKAGED_MODELS", "PromptRunner", "RunOutput", "load_causal_lm", "resolve_model_dir"]

PACKAGED_MODELS = ("smollm2",)
"""Names that resolve to a packaged model instead of a folder."""


def resolve_model_dir(model: str | Path) -> Path:
    """The folder of ``model``: a packaged name (``"smollm2"``) or a local model folder.

    Raises
    ------
    FactualityError
        If the folder does not exist or has no ``config.json``, or the packaged model is not
        installed.

    Examples
    --------
    >>> resolve_model_dir("smollm2").name  # doctest: +SKIP
    'smollm2-135m-instruct'
    """
    if str(model).lower() == "smollm2":
        from ..llm.local_models import smollm2_model_dir

        try:
            return smollm2_model_dir()
        except ConfigError as exc:
            raise FactualityError(str(exc)) from exc
    path = Path(model)
    if not (path / "config.json").is_file():
        raise FactualityError(
            f"{path} is not a local model folder (no config.json); pass a folder saved with "
            f"save_pretrained, or one of {', '.join(PACKAGED_MODELS)}"
        )
    return path


def load_causal_lm(model: str | Path, *, padding_side: str = "left") -> tuple[Any, Any]:
    """The model (float32, eval mode, CPU) and its tokenizer, with a pad token set.

    A tokenizer without a pad token pads with its end-of-sequence token (padding never reaches
    the model's outputs: the attention mask and explicit position ids hide it).

    Raises
    ------
    FactualityError
        If the folder is not a loadable causal LM, or the tokenizer has neither a pad nor an
        end-of-sequence token.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = resolve_model_dir(model)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
        lm: Any = AutoModelForCausalLM.from_pretrained(
            folder, local_files_only=True, dtype=torch.float32
        )
    except (OSError, ValueError, KeyError) as exc:
        raise FactualityError(f"cannot load a causal LM from {folder}: {exc}") from exc
    if tokenizer.pad_token_id is None:
        if tokenizer.eos_token_id is None:
            raise FactualityError(f"the tokenizer in {folder} has neither a pad nor an eos token")
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = padding_side
    lm.eval()
    return lm, tokenizer


@dataclass
class RunOutput:
    """One forward pass over a batch of statements (suffix positions only).

    Attributes
    ----------
    next_logprobs
        Log-probabilities of the next token after each prompt, shape (n, vocab).
    hidden_states
        One tensor per layer (embeddings first), each (n, T, hidden), over the statement part
        of the prompt (the shared prefix is cached, not returned).
    mask
        1 on real tokens, 0 on padding, shape (n, T).
    last
        Index of each row's last real token, shape (n,).
    """

    next_logprobs: Any
    hidden_states: tuple[Any, ...]
    mask: Any
    last: Any


class PromptRunner:
    """Runs the labelling prompt of many statements through a causal LM, efficiently.

    The prompt text before the statement (system prompt, chat markup, ``"Statement:"``) is the
    same for every statement: its key/value cache is computed once and reused, so each
    statement costs only its own tokens (about a quarter of the prompt for SmolLM2). The
    statement part is padded on ``padding_side``; the attention mask hides the padding and
    explicit position ids continue after the prefix, so a statement gives the same outputs
    alone and in a padded batch, with either padding side.

    Parameters
    ----------
    model
        ``"smollm2"`` or a local model folder.
    input_format
        ``"prompt"``: the labelling prompt with the chat template (default); ``"statement"``:
        the bare statement (no prefix, no cache).
    padding_side
        ``"right"`` or ``"left"``.
    max_length
        Longest statement part in tokens (longer ones are cut from the left: the end of the
        prompt, where the answer starts, is kept).

    Examples
    --------
    >>> runner = PromptRunner("smollm2")  # doctest: +SKIP
    >>> out = runner.run(["Paris is in France."])  # doctest: +SKIP
    >>> len(out.hidden_states)  # doctest: +SKIP
    31
    """

    def __init__(
        self,
        model: str | Path = "smollm2",
        *,
        input_format: str = "prompt",
        padding_side: str = "right",
        max_length: int = 256,
    ) -> None:
        import torch

        if input_format not in ("prompt", "statement"):
            raise FactualityError(
                f"input_format must be 'prompt' or 'statement'; got {input_format!r}"
            )
        if padding_side not in ("left", "right"):
            raise FactualityError(f"padding_side must be 'left' or 'right'; got {padding_side!r}")
        if max_length < 1:
            raise FactualityError(f"max_length must be >= 1; got {max_length}")
        self.model, self.tokenizer = load_causal_lm(model, padding_side=padding_side)
        self.folder = resolve_model_dir(model)
        self.input_format = input_format
        self.padding_side = padding_side
        self.max_length = max_length
        self.n_layers = int(self.model.config.num_hidden_layers) + 1
        self.hidden_size = int(self.model.config.hidden_size)
        prefix = self._prefix_text()
        self._prefix_ids = (
            list(self.tokenizer(prefix, add_special_tokens=False)["input_ids"]) if prefix else []
        )
        self._prefix_cache: Any = None
        if self._prefix_ids:
            with torch.no_grad():
                out = self.model(
                    input_ids=torch.tensor([self._prefix_ids]),
                    use_cache=True,
                )
            cache = getattr(out, "cache", None)
            self._prefix_cache = cache if cache is not None else out.past_key_values
        # transformers 5 renamed ``past_key_values`` to ``cache``; older models keep the old name.
        params = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in params else "past_key_values"
        # Models that accept ``logits_to_keep`` project only the last real tokens onto the
        # vocabulary (a fifth of SmolLM2's compute otherwise).
        self._keeps_indices = "logits_to_keep" in params

    def _prefix_text(self) -> str:
        if self.input_format == "statement":
            return ""
        sentinel = "\x00STATEMENT\x00"
        text = label_prompt_text(self.tokenizer, sentinel)
        head = text.split(sentinel)[0]
        # Cut before the last space so the statement's first word keeps its leading space
        # (BPE tokenizers attach it to the word): the split is then token-exact.
        return head.rstrip(" ")

    def text_suffix(self, statement: str) -> str:
        """The part of the prompt after the cached prefix."""
        if self.input_format == "statement":
            return statement
        full = label_prompt_text(self.tokenizer, statement)
        prefix = self._prefix_text()
        if not full.startswith(prefix):
            raise FactualityError("the prompt does not start with its prefix; check the template")
        return full[len(prefix) :]

    def run(self, statements: Sequence[str]) -> RunOutput:
        """One forward pass over ``statements`` (a batch): next-token log-probs, hidden states.

        Raises
        ------
        FactualityError
            If ``statements`` is empty.
        """
        import copy

        import torch

        if not statements:
            raise FactualityError("no statements to run")
        pieces = [
            list(self.tokenizer(self.text_suffix(s), add_special_tokens=False)["input_ids"])[
                -self.max_length :
            ]
            for s in statements
        ]
        if any(not p for p in pieces):
            raise FactualityError("a statement turned into no tokens")
        n, width = len(pieces), max(len(p) for p in pieces)
        pad = int(self.tokenizer.pad_token_id)
        ids = torch.full((n, width), pad, dtype=torch.long)
        mask = torch.zeros((n, width), dtype=torch.long)
        for row, piece in enumerate(pieces):
            cols = (
                slice(0, len(piece))
                if self.padding_side == "right"
                else slice(width - len(piece), width)
            )
            ids[row, cols] = torch.tensor(piece)
            mask[row, cols] = 1
        offset = len(self._prefix_ids)
        positions = (mask.cumsum(-1) - 1).clamp(min=0) + offset
        kwargs: dict[str, Any] = {}
        full_mask = mask
        if self._prefix_cache is not None:
            cache = copy.deepcopy(self._prefix_cache)
            cache.batch_repeat_interleave(n)
            kwargs[self._cache_arg] = cache
            full_mask = torch.cat([torch.ones((n, offset), dtype=torch.long), mask], dim=1)
        # The last real token: the last column holding a 1 in the mask.
        last = width - 1 - torch.argmax(mask.flip(-1), dim=-1)
        keep = torch.unique(last)  # sorted; the vocabulary projection only runs there
        if self._keeps_indices:
            kwargs["logits_to_keep"] = keep
        with torch.no_grad():
            out = self.model(
                input_ids=ids,
                attention_mask=full_mask,
                position_ids=positions,
                output_hidden_states=True,
                use_cache=self._prefix_cache is not None,
                **kwargs,
            )
        rows = torch.arange(n)
        columns = torch.searchsorted(keep, last) if self._keeps_indices else last
        logits = out.logits[rows, columns].float()
        return RunOutput(
            next_logprobs=torch.log_softmax(logits, dim=-1),
            hidden_states=tuple(h.float() for h in out.hidden_states),
            mask=mask,
            last=last,
        )
