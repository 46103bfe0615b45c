"""Benchmark harness: labelled pair sets and the metrics that compare scores with their labels.

:mod:`.datasets` loads the S3KG authors' labelled pair sets (texts, LLM-extracted KGs, binary
labels); :mod:`.metrics` gives max-F1, AUROC, bootstrap intervals and alpha sweeps over stored
S3KG components.
"""

from .datasets import PairSet, list_pair_sets, load_pair_set
from .metrics import (
    AlphaPoint,
    ConfidenceInterval,
    ThresholdF1,
    alpha_sweep,
    auroc,
    best_alpha,
    bootstrap_ci,
    max_f1,
)

__all__ = [
    "AlphaPoint",
    "ConfidenceInterval",
    "PairSet",
    "ThresholdF1",
    "alpha_sweep",
    "auroc",
    "best_alpha",
    "bootstrap_ci",
    "list_pair_sets",
    "load_pair_set",
    "max_f1",
]
