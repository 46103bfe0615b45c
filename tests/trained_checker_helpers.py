"""Shared pieces of the trained-checker tests: a few hand-made pairs and a one-step training."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from s3kg_core.checker_training.synthetic import SyntheticPair
from s3kg_core.checker_training.training import TrainConfig, train_checker

__all__ = ["TINY_CONFIG", "export_tiny", "sharpen_head", "tiny_pairs", "train_tiny"]

TINY_CONFIG = TrainConfig(
    max_length=64, batch_size=4, max_steps=1, checkpoint_every=1, heldout_percent=50
)
"""One optimiser step of four pairs: seconds on a busy CPU."""

_FACTS = [
    (
        "The Eiffel Tower is in Paris. It opened in 1889.",
        "Eiffel Tower opened in 1889",
        "Eiffel Tower opened in 1899",
        "number",
    ),
    (
        "Marie Curie was born in Warsaw.",
        "Marie Curie born in Warsaw",
        "Warsaw born in Marie Curie",
        "swap",
    ),
    ("Aspirin reduces fever.", "Aspirin reduces fever", "Aspirin not reduces fever", "negation"),
    (
        "Sega developed the game for the PlayStation.",
        "Sega developed game",
        "Nintendo developed game",
        "absent",
    ),
    (
        "The river flows into the North Sea.",
        "river flows into North Sea",
        "river rises in North Sea",
        "relation",
    ),
    ("Pierre met Marie in Paris in 1894.", "Pierre met in Paris", "Pierre met in Lyon", "absent"),
]


def tiny_pairs() -> list[SyntheticPair]:
    """Twelve pairs over six documents (a positive and a negative each)."""
    out = []
    for n, (window, good, bad, kind) in enumerate(_FACTS):
        out.append(SyntheticPair(window, good, 1, "support", f"toy:{n}"))
        out.append(SyntheticPair(window, bad, 0, kind, f"toy:{n}"))
    return out


def train_tiny(out: Path, **options: Any) -> dict[str, Any]:
    """Train the one-step checker into ``out``; returns its manifest."""
    config = options.pop("config", TINY_CONFIG)
    return train_checker(out, tiny_pairs(), config=config, data_info={"toy": True}, **options)


def sharpen_head(model_dir: Path) -> None:
    """Give a one-step model a head that reads one statistic sharply (P(supported) spread out).

    A one-step head has near-zero weights (every P about 0.51), so a backend whose hidden states
    were wrong would still agree with torch. This head reads the statement tokens' mean best
    match: ``P = sigmoid(a * (mean - median))`` with ``a`` one over its standard deviation on
    the tiny pairs, so P spreads over about 0.1-0.9 and follows the hidden states.
    """
    import torch

    from s3kg_core.grapheval.checkers.alignment import (
        FEATURES,
        alignment_features,
        load_alignment,
        save_head,
    )
    from s3kg_core.grapheval.checkers.model_format import tokenize_pairs

    tokenizer, encoder, head = load_alignment(model_dir)
    pairs = tiny_pairs()
    enc = tokenize_pairs(tokenizer, [p.window for p in pairs], [p.statement for p in pairs], 64)
    with torch.no_grad():
        hidden = encoder(**enc).last_hidden_state
        mean = alignment_features(hidden, enc["token_type_ids"], enc["attention_mask"])[
            :, FEATURES.index("mean")
        ]
        a = 1.0 / float(mean.std())
        head.weight.zero_()
        head.bias.zero_()
        head.weight[1, FEATURES.index("mean")] = a
        head.bias[1] = -a * float(mean.median())
    save_head(head, model_dir)


def export_tiny(out: Path) -> dict[str, Any]:
    """Train the one-step checker into ``out``, sharpen its head, export it; the onnx entry."""
    from s3kg_core.checker_training.export import export_checker

    train_tiny(out)
    sharpen_head(out)
    return export_checker(out, n_pairs=0)
