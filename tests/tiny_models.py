"""Tiny randomly initialised causal LMs (two-layer Llamas, hidden size 32) that load in seconds.

Two tokenizers, for two kinds of test:

- :func:`make_tiny_model`: word-level (whitespace and punctuation split) over the words of the
  labelling prompt and a small toy KG (tests/factuality_helpers.py), for the factuality tests
  and the ``s3kg llm serve`` start and stop;
- :func:`make_char_model`: one token per printable character, so that constrained decoding can
  spell any JSON value (the server tests: tests/test_llm_chat_server.py,
  tests/test_llm_constrained.py); the word-level model cannot.

tests/conftest.py builds each once per session (the ``tiny_model`` and ``char_model``
fixtures); tests read the folders and copy them to change them.
"""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

__all__ = ["CHAR_CHAT_TEMPLATE", "WORD_CHAT_TEMPLATE", "make_char_model", "make_tiny_model"]

SPECIALS = ["<pad>", "<eos>", "<unk>", "<|im_start|>", "<|im_end|>"]

WORD_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
    "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)
"""The word-level model's chat template (its words are split on whitespace)."""

CHAR_CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
"""The character-level model's chat template."""


def _save_llama(
    folder: Path, tokenizer: Any, vocab: dict[str, int], *, positions: int, seed: int
) -> Path:
    """Save a random two-layer Llama over ``vocab`` (seeded) and ``tokenizer`` in ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=len(vocab),
        max_position_embeddings=positions,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["<eos>"],
        bos_token_id=vocab["<eos>"],
    )
    model = LlamaForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def make_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Save the word-level model and its tokenizer in ``folder``; return it."""
    from factuality_helpers import TOY_FACTS
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from s3kg_core.factuality.prompts import (
        ANSWER_OPTIONS,
        LABEL_SYSTEM_PROMPT,
        LABEL_USER_PROMPT,
    )
    from s3kg_core.factuality.statements import RELATION_TEMPLATES

    words: list[str] = ["system", "user", "assistant", "N", "/", "A"]
    for text in [LABEL_SYSTEM_PROMPT, LABEL_USER_PROMPT, *ANSWER_OPTIONS.values()]:
        words += _words(text)
    for template in RELATION_TEMPLATES.values():
        words += _words(template)
    for fact in TOY_FACTS:
        for part in fact[:3]:
            words += _words(part.replace("_", " "))
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys([*SPECIALS, *words]))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    tokenizer.chat_template = WORD_CHAT_TEMPLATE
    return _save_llama(folder, tokenizer, vocab, positions=512, seed=seed)


def make_char_model(folder: Path, *, positions: int = 8192, seed: int = 0) -> Path:
    """Save the character-level model and its tokenizer in ``folder``; return it."""
    from tokenizers import Tokenizer, decoders, models
    from transformers import PreTrainedTokenizerFast

    chars = [c for c in string.printable if c not in "\x0b\x0c\r"]
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys([*SPECIALS, *chars]))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], unk_token="<unk>"))
    tok.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        additional_special_tokens=["<|im_start|>", "<|im_end|>"],
    )
    tokenizer.chat_template = CHAR_CHAT_TEMPLATE
    return _save_llama(folder, tokenizer, vocab, positions=positions, seed=seed)
