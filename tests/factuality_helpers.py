"""A tiny randomly initialised causal LM and tokenizer for the factuality tests.

The tokenizer is word-level (whitespace and punctuation split) over the words of the labelling
prompt and a small toy KG, with pad, eos and unk tokens and a minimal chat template; the model
is a 2-layer Llama with hidden size 32. Each test module builds it once in a temporary folder.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from s3kg_core.factuality.prompts import ANSWER_OPTIONS, LABEL_SYSTEM_PROMPT, LABEL_USER_PROMPT

__all__ = ["TOY_FACTS", "make_tiny_model", "toy_kg_csv"]

TOY_FACTS = [
    ("Apple", "Control", "Beats", "COMP", "COMP"),
    ("Google", "Control", "YouTube", "COMP", "COMP"),
    ("Microsoft", "Control", "GitHub", "COMP", "COMP"),
    ("Apple", "Produce", "iPhone", "COMP", "PRODUCT"),
    ("Google", "Produce", "Pixel", "COMP", "PRODUCT"),
    ("Microsoft", "Produce", "Xbox", "COMP", "PRODUCT"),
    ("Samsung", "Produce", "Galaxy", "COMP", "PRODUCT"),
    ("China", "Impact", "Inflation", "GPE", "ECON_INDICATOR"),
    ("Germany", "Impact", "Unemployment", "GPE", "ECON_INDICATOR"),
    ("France", "Impact", "Inflation", "GPE", "ECON_INDICATOR"),
    ("Apple", "Operate_In", "China", "COMP", "GPE"),
    ("Samsung", "Operate_In", "Germany", "COMP", "GPE"),
]

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> "
    "{% endfor %}{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def make_tiny_model(folder: Path, seed: int = 0) -> Path:
    """Build and save the tiny model and tokenizer in ``folder``; return it."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from s3kg_core.factuality.statements import RELATION_TEMPLATES

    specials = ["<pad>", "<eos>", "<unk>", "<|im_start|>", "<|im_end|>"]
    words: list[str] = ["system", "user", "assistant", "N", "/", "A"]
    for text in [LABEL_SYSTEM_PROMPT, LABEL_USER_PROMPT, *ANSWER_OPTIONS.values()]:
        words += _words(text)
    for template in RELATION_TEMPLATES.values():
        words += _words(template)
    for fact in TOY_FACTS:
        for part in fact[:3]:
            words += _words(part.replace("_", " "))
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys([*specials, *words]))}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = LlamaConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        intermediate_size=64,
        vocab_size=len(vocab),
        max_position_embeddings=512,
        pad_token_id=vocab["<pad>"],
        eos_token_id=vocab["<eos>"],
        bos_token_id=vocab["<eos>"],
    )
    model = LlamaForCausalLM(config)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def toy_kg_csv(folder: Path) -> Path:
    """Write the toy KG (with types) as CSV in ``folder``."""
    path = folder / "toy_kg.csv"
    pd.DataFrame(TOY_FACTS, columns=["head", "relation", "tail", "head_type", "tail_type"]).to_csv(
        path, index=False
    )
    return path
