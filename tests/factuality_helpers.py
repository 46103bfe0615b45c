"""A small toy KG for the factuality tests (its words are the vocabulary of the tiny word-level
model of tests/tiny_models.py, built once per session by conftest's ``tiny_model``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["TOY_FACTS", "toy_kg_csv"]

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


def toy_kg_csv(folder: Path) -> Path:
    """Write the toy KG (with types) as CSV in ``folder``."""
    path = folder / "toy_kg.csv"
    pd.DataFrame(TOY_FACTS, columns=["head", "relation", "tail", "head_type", "tail_type"]).to_csv(
        path, index=False
    )
    return path
