"""Train, choose and evaluate the judge: labelled statements + hidden states -> a report.

The steps the CLI and the benchmark share:

1. :func:`load_labelled` reads the labelled statements and keeps those with a label
   (``label_status == "ok"``), in the order of the hidden-state file;
2. :func:`split_table` splits them by fact group
   (:func:`~s3kg_core.evaluation.splits.split_groups`);
3. :func:`sweep_layers` trains one judge per layer and reports validation accuracy;
   the layer is chosen on validation only;
4. :func:`train_judge` trains the judge on the chosen layer;
5. :func:`evaluate_judge` compares it on the test split with the majority class
   (:func:`majority_baseline`) and a logistic regression on standardised features
   (:func:`logreg_baseline`), on the same features and splits, and scores the factuality
   metrics (:mod:`s3kg_core.factuality.metrics`) from the judge's predictions (the GraphEval
   estimate: no text generated) and from the LLM's own labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import FactualityError
from ..factuality.hidden import hidden_layers, read_hidden
from ..factuality.judge import Judge, JudgeConfig, encode_labels
from ..factuality.labels import LABELS
from ..factuality.metrics import breakdown, factuality_scores
from ..factuality.statements import STATEMENT_COLUMNS, read_statements
from ..progress import Progress
from .splits import split_groups

__all__ = [
    "EvaluationReport",
    "evaluate_judge",
    "layer_features",
    "load_labelled",
    "logreg_baseline",
    "majority_baseline",
    "pick_layer",
    "split_table",
    "sweep_layers",
    "train_judge",
    "train_on_best_layer",
]


def majority_baseline(y_train: np.ndarray, y_test: np.ndarray) -> tuple[int, float]:
    """The training split's most frequent class and its accuracy on the test labels.

    Examples
    --------
    >>> majority_baseline(np.array([1, 1, 0]), np.array([1, 0]))
    (1, 0.5)
    """
    if len(y_train) == 0:
        raise FactualityError("no training labels for the majority baseline")
    majority = int(np.bincount(y_train, minlength=len(LABELS)).argmax())
    accuracy = float(np.mean(y_test == majority)) if len(y_test) else float("nan")
    return majority, accuracy


def logreg_baseline(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    *,
    seed: int = 0,
    c: float = 1.0,
) -> float:
    """Accuracy on the test labels of a logistic regression on standardised features.

    With a single class in the training labels it predicts that class (what any classifier
    would).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(40, 3)); y = (x[:, 0] > 0).astype(int)
    >>> logreg_baseline(x[:30], y[:30], x[30:], y[30:]) >= 0.9
    True
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if len(np.unique(y_train)) < 2:
        return majority_baseline(y_train, y_test)[1]
    model = make_pipeline(
        StandardScaler(), LogisticRegression(C=c, max_iter=2000, random_state=seed)
    )
    model.fit(x_train, y_train)
    return float(np.mean(model.predict(x_test) == y_test)) if len(y_test) else float("nan")


def load_labelled(statements: str | Path, hidden: str | Path | None = None) -> pd.DataFrame:
    """Labelled statements with a usable label, ordered like the hidden states when given.

    Raises
    ------
    InputFormatError
        If the file lacks the statement or label columns.
    FactualityError
        If no statement has a usable label.
    """
    table = read_statements(statements, (*STATEMENT_COLUMNS, "llm_label", "label_status"))
    table = table[table["label_status"] == "ok"].reset_index(drop=True)
    if hidden is not None:
        layers = hidden_layers(hidden)
        if not layers:
            raise FactualityError(f"{hidden} holds no last-token hidden states")
        ids, _ = read_hidden(hidden, layers[0])
        position = {sid: i for i, sid in enumerate(ids)}
        table = table[table["statement_id"].isin(position)]
        table = table.assign(_order=table["statement_id"].map(position)).sort_values("_order")
        table = table.drop(columns="_order").reset_index(drop=True)
    if table.empty:
        raise FactualityError(
            "no statement has a usable label (and hidden states); label them with "
            "`s3kg factuality label` first"
        )
    return table


def layer_features(
    hidden: str | Path, layer: int, ids: Sequence[str], pooling: str = "last"
) -> np.ndarray:
    """The features of ``ids`` (in that order) at ``layer``.

    Raises
    ------
    FactualityError
        If an id has no hidden state.
    """
    stored, x = read_hidden(hidden, layer, pooling)
    position = {sid: i for i, sid in enumerate(stored)}
    missing = [sid for sid in ids if sid not in position]
    if missing:
        raise FactualityError(f"{len(missing)} statements have no hidden state in {hidden}")
    return x[[position[sid] for sid in ids]]


def split_table(
    table: pd.DataFrame, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2), seed: int = 0
) -> np.ndarray:
    """``train``/``val``/``test`` per row, by fact group (see :func:`.splits.split_groups`)."""
    return split_groups(table["group_id"].astype(str).tolist(), fractions, seed)


def _parts(
    table: pd.DataFrame, x: np.ndarray, split: np.ndarray
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    y = encode_labels(table["llm_label"].tolist())
    return {name: (x[split == name], y[split == name]) for name in ("train", "val", "test")}


def train_judge(
    table: pd.DataFrame,
    hidden: str | Path,
    layer: int,
    config: JudgeConfig | None = None,
    *,
    pooling: str = "last",
) -> Judge:
    """Train a judge on ``layer`` with the train split, early-stopped on the validation split.

    ``config`` gives the training settings (its ``input_dim`` and ``layer`` are set here).
    """
    x = layer_features(hidden, layer, table["statement_id"].tolist(), pooling)
    base = config or JudgeConfig(input_dim=x.shape[1])
    cfg = replace(base, input_dim=int(x.shape[1]), layer=layer, pooling=pooling)
    parts = _parts(table, x, split_table(table, cfg.split_fractions, cfg.split_seed))
    judge = Judge(cfg)
    judge.fit(*parts["train"], *parts["val"])
    return judge


def sweep_layers(
    table: pd.DataFrame,
    hidden: str | Path,
    layers: Sequence[int] | None = None,
    config: JudgeConfig | None = None,
    *,
    pooling: str = "last",
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Train one judge per layer; report train and validation accuracy (never test).

    Returns
    -------
    list of dict
        ``layer``, ``val_accuracy``, ``train_accuracy``, ``best_epoch`` per layer, in layer
        order; :func:`pick_layer` chooses from it.
    """
    chosen = list(layers) if layers is not None else hidden_layers(hidden, pooling)
    rows = []
    for i, layer in enumerate(chosen):
        judge = train_judge(table, hidden, layer, config, pooling=pooling)
        x = layer_features(hidden, layer, table["statement_id"].tolist(), pooling)
        parts = _parts(
            table, x, split_table(table, judge.config.split_fractions, judge.config.split_seed)
        )
        xt, yt = parts["train"]
        history = judge.history
        rows.append(
            {
                "layer": layer,
                "val_accuracy": history.best_val_accuracy if history else float("nan"),
                "train_accuracy": float(np.mean(judge.predict(xt) == yt)) if len(yt) else 0.0,
                "best_epoch": history.best_epoch if history else 0,
            }
        )
        if progress is not None:
            progress(i + 1, len(chosen))
    return rows


def train_on_best_layer(
    table: pd.DataFrame,
    hidden: str | Path,
    config: JudgeConfig | None = None,
    *,
    pooling: str = "last",
    progress: Progress | None = None,
) -> tuple[Judge, list[dict[str, Any]]]:
    """Sweep the layers, pick the best on validation, train the judge there: ``(judge, sweep)``.

    :func:`sweep_layers`, :func:`pick_layer` and :func:`train_judge` in a row; the sweep is
    kept in the judge's config (``extra["layer_sweep"]``), as ``s3kg factuality train
    --layer-sweep`` keeps it. The test split is never used.
    """
    sweep = sweep_layers(table, hidden, config=config, pooling=pooling, progress=progress)
    base = config or JudgeConfig(input_dim=1)
    judge = train_judge(
        table,
        hidden,
        pick_layer(sweep),
        replace(base, extra={**base.extra, "layer_sweep": sweep}),
        pooling=pooling,
    )
    return judge, sweep


def pick_layer(sweep: Sequence[dict[str, Any]]) -> int:
    """The layer with the best validation accuracy (ties: the lowest layer).

    Examples
    --------
    >>> pick_layer([{"layer": 1, "val_accuracy": 0.5}, {"layer": 2, "val_accuracy": 0.7},
    ...             {"layer": 3, "val_accuracy": 0.7}])
    2
    """
    if not sweep:
        raise FactualityError("the layer sweep is empty")
    best = max(sweep, key=lambda r: (r["val_accuracy"], -r["layer"]))
    return int(best["layer"])


@dataclass
class EvaluationReport:
    """A judge's test-split evaluation (see :meth:`to_dict` for the keys)."""

    n_test: int
    judge_accuracy: float
    majority_accuracy: float
    logreg_accuracy: float
    layer: int
    scores_judge: dict[str, Any]
    scores_llm: dict[str, Any]
    breakdown: dict[str, Any]
    test_label_counts: dict[str, int]
    majority_label: str
    sweep: list[dict[str, Any]] = field(default_factory=list)
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``s3kg factuality evaluate --json``.

        The first eight keys are the headline: test-split sizes and accuracies (judge,
        majority class, logistic regression, all against the LLM's own labels), and the
        three metrics estimated from the judge's predictions on the test statements, with the
        layer. ``llm_*`` are the same metrics from the LLM's own labels.
        """
        return {
            "n_test": self.n_test,
            "judge_accuracy": self.judge_accuracy,
            "majority_accuracy": self.majority_accuracy,
            "logreg_accuracy": self.logreg_accuracy,
            "correctness": self.scores_judge["correctness"],
            "truthfulness": self.scores_judge["truthfulness"],
            "informativeness": self.scores_judge["informativeness"],
            "layer": self.layer,
            "llm_correctness": self.scores_llm["correctness"],
            "llm_truthfulness": self.scores_llm["truthfulness"],
            "llm_informativeness": self.scores_llm["informativeness"],
            "majority_label": self.majority_label,
            "test_label_counts": self.test_label_counts,
            "scores_judge": self.scores_judge,
            "scores_llm": self.scores_llm,
            "breakdown": self.breakdown,
            "layer_sweep": self.sweep,
            "model": self.model,
        }


def evaluate_judge(
    table: pd.DataFrame,
    hidden: str | Path,
    judge: Judge,
    *,
    n_buckets: int = 4,
    sweep: Sequence[dict[str, Any]] = (),
) -> EvaluationReport:
    """Evaluate ``judge`` on the test split it was trained beside.

    The split is recomputed from the judge's config (same seed and fractions as training);
    the baselines are fitted on the same train split and features.

    Raises
    ------
    FactualityError
        If the judge has no layer, or the test split is empty.
    """
    cfg = judge.config
    if cfg.layer is None:
        raise FactualityError("the judge does not say which layer it reads")
    x = layer_features(hidden, cfg.layer, table["statement_id"].tolist(), cfg.pooling)
    split = split_table(table, cfg.split_fractions, cfg.split_seed)
    parts = _parts(table, x, split)
    (xt, yt), (xs, ys) = parts["train"], parts["test"]
    if len(ys) == 0:
        raise FactualityError("the test split is empty: label more statements")
    predicted = judge.predict(xs)
    majority, majority_acc = majority_baseline(yt, ys)
    test = table[split == "test"].copy()
    test["judge_label"] = [LABELS[i] for i in predicted]
    scores_judge = factuality_scores(test, "judge_label").to_dict()
    scores_llm = factuality_scores(test, "llm_label").to_dict()
    parts_breakdown = {
        f"{source}_{by}": breakdown(test, by, column, n_buckets)
        for source, column in (("judge", "judge_label"), ("llm", "llm_label"))
        for by in ("relation", "degree")
    }
    return EvaluationReport(
        n_test=len(ys),
        judge_accuracy=float(np.mean(predicted == ys)),
        majority_accuracy=majority_acc,
        logreg_accuracy=logreg_baseline(xt, yt, xs, ys, seed=cfg.seed),
        layer=cfg.layer,
        scores_judge=scores_judge,
        scores_llm=scores_llm,
        breakdown=parts_breakdown,
        test_label_counts={label: int((test["llm_label"] == label).sum()) for label in LABELS},
        majority_label=LABELS[majority],
        sweep=list(sweep),
        model=cfg.model,
    )
