"""Evaluation: the labelled data, their declared splits, the metrics and the benchmark runners.

One module per job:

- :mod:`.splits`: every declared split (pair sets, GraphEval articles, the checker's synthetic
  documents, the factuality judge's facts);
- :mod:`.metrics`: max-F1, AUROC, bootstrap intervals, alpha sweeps, balanced accuracy and
  thresholds chosen on dev (scikit-learn and scipy underneath);
- :mod:`.pair_sets`, :mod:`.baselines`, :mod:`.pairs`, :mod:`.resume`, :mod:`.demo_results`:
  the labelled pair sets, the baselines S3KG is compared with, the pair-benchmark runner
  (``s3kg bench pairs``), resuming a killed run, the demo's precomputed results;
- :mod:`.variants`: which S3KG variant agrees best with the labels (chosen on dev);
- :mod:`.summ_sets`, :mod:`.grapheval`: GraphEval's summarisation benchmarks and their runner
  (``s3kg grapheval bench``), checkers compared side by side;
- :mod:`.factuality`: the factuality judge's layer sweep, training and evaluation
  (``s3kg factuality train`` / ``evaluate``);
- :mod:`.bamboo`: the BAMBOO meaning-graph (AMR) benchmark, its protocol and its runner
  (``s3kg bench bamboo``);
- :mod:`.direction`: the direction suite, facts reworded against facts changed ("who did what
  to whom"), its packaged facts and its runner (``s3kg bench direction``).
"""

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
from .pair_sets import PairSet, list_pair_sets, load_pair_set

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
