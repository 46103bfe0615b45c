"""Shared pieces of the GraphEval tests: a scripted LLM for the fake server, a tiny NLI model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from fake_openai import Reply, last_user_message

__all__ = ["CONTEXT", "make_tiny_nli", "scripted_llm"]

CONTEXT = "The Eiffel Tower is in Paris. It opened in 1889."


def _statements(user: str) -> list[str]:
    block = user.split("Statements:\n", 1)[1].split("\n\nVerdicts", 1)[0]
    return [re.sub(r"^\d+\.\s*", "", line) for line in block.splitlines() if line.strip()]


def scripted_llm(body: dict[str, Any], n: int) -> Reply:
    """Checker: a statement is supported iff its last word occurs in the context. Correction:
    1899 -> 1889. Markers: SERVERERROR (500), GARBLED (not JSON), HALF (only verdict 1)."""
    user = last_user_message(body)
    system = body["messages"][0]["content"]
    if "SERVERERROR" in user:
        return Reply(status=500)
    if "Statements:" in user:
        context = user.split("Context:\n", 1)[1].split("\n\nStatements:", 1)[0]
        claims = _statements(user)
        if "GARBLED" in user:
            return Reply(text="Sure, all statements look fine to me!")
        verdicts = [
            {"id": i, "supported": c.split()[-1].lower() in context.lower(), "confidence": 0.9}
            for i, c in enumerate(claims, 1)
        ]
        if "HALF" in user:
            verdicts = verdicts[:1]
        return Reply(text="```json\n" + json.dumps({"verdicts": verdicts}) + "\n```")
    if "Corrected triple (JSON)" in user:
        triple = json.loads(user.split("Triple: ", 1)[1].split("\n", 1)[0])
        if "BADTRIPLE" in user:
            return Reply(text="no idea")
        return Reply(text=json.dumps({"triple": [p.replace("1899", "1889") for p in triple]}))
    if "Edited text" in user or "Corrected text" in user:
        text = user.split("Text:\n", 1)[1].split("\n\n", 1)[0]
        return Reply(text=json.dumps({"answer": text.replace("1899", "1889")}))
    return Reply(text=f"unexpected prompt: {system[:40]}")


def make_tiny_nli(
    path: Path, labels: dict[int, str] | None = None, max_positions: int = 64
) -> Path:
    """A randomly initialised 2-layer BERT NLI model with its tokenizer, saved to ``path``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    text = (
        "the eiffel tower is in paris it opened 1889 1899 a of and was built by gustave to for "
        "on at city france london river iron"
    )
    words = text.split()
    vocab = [
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
        *words,
        *"abcdefghijklmnopqrstuvwxyz0123456789.,",
    ]
    path.mkdir(parents=True, exist_ok=True)
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(
        vocab_file=str(path / "vocab.txt"), model_max_length=max_positions
    )
    id2label = labels or {0: "entailment", 1: "neutral", 2: "contradiction"}
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=max_positions,
        num_labels=len(id2label),
        id2label=id2label,
        label2id={v: k for k, v in id2label.items()},
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
