"""Tests of s3kg_core.evaluation.factuality: load, split, sweep layers, train and evaluate a judge.

Real Parquet files in a temporary folder: a labelled statements table, and hidden states where
layer 3 encodes the LLM's label (plus noise) and layer 0 is noise, so a judge can only learn on
layer 3. The command-line path over a real tiny model is in tests/test_cli_factuality.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from s3kg_core.errors import FactualityError, InputFormatError
from s3kg_core.evaluation.factuality import (
    EvaluationReport,
    evaluate_judge,
    layer_features,
    load_labelled,
    logreg_baseline,
    majority_baseline,
    pick_layer,
    split_table,
    sweep_layers,
    train_judge,
    train_on_best_layer,
)
from s3kg_core.evaluation.splits import split_groups
from s3kg_core.factuality.hidden import hidden_table, write_hidden
from s3kg_core.factuality.judge import Judge, JudgeConfig
from s3kg_core.factuality.labels import LABELS
from s3kg_core.factuality.metrics import factuality_scores
from s3kg_core.factuality.statements import STATEMENT_COLUMNS

N_GROUPS = 40
DIM = 6
CONFIG = JudgeConfig(input_dim=DIM, hidden_dim=16, max_epochs=60, patience=10)
HEADLINE = [
    "n_test",
    "judge_accuracy",
    "majority_accuracy",
    "logreg_accuracy",
    "correctness",
    "truthfulness",
    "informativeness",
    "layer",
]


def _statements() -> pd.DataFrame:
    rows = []
    for g in range(N_GROUPS):
        for kind, true in (("positive", True), ("tail-corrupted", False)):
            i = len(rows)
            label = ["TRUE", "FALSE", "IDK"][i % 3]
            rows.append(
                {
                    "statement_id": f"s{i:03d}",
                    "group_id": f"g{g:02d}",
                    "statement": f"Company{g} controls thing{i}.",
                    "head": f"Company{g}",
                    "relation": ["Control", "Produce"][g % 2],
                    "tail": f"thing{i}",
                    "head_type": "COMP",
                    "tail_type": "COMP",
                    "label": true,
                    "kind": kind,
                    "head_degree": g % 5 + 1,
                    "tail_degree": 1,
                    "llm_label": None if i % 10 == 9 else label,
                    "label_status": "unparseable" if i % 10 == 9 else "ok",
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, pd.DataFrame]:
    """The statements file and a hidden-state file (reversed order, two statements missing)."""
    folder = tmp_path_factory.mktemp("experiment")
    table = _statements()
    statements = folder / "labelled.parquet"
    table.to_parquet(statements, index=False)
    rng = np.random.default_rng(0)
    kept = table.iloc[::-1]
    kept = kept[~kept["statement_id"].isin(["s000", "s001"])]
    n = len(kept)
    noise = rng.normal(scale=0.3, size=(n, 2, DIM)).astype(np.float32)
    codes = kept["llm_label"].map({label: i for i, label in enumerate(LABELS)}).fillna(0)
    noise[np.arange(n), 1, codes.astype(int).to_numpy()] += 3.0
    hidden = write_hidden(
        hidden_table(kept["statement_id"].tolist(), {"last": noise}, [0, 3]),
        folder / "hidden.parquet",
    )
    return statements, hidden, table


# -- load_labelled, layer_features, split_table ---------------------------------------------------


def test_load_labelled_keeps_the_usable_labels_in_file_order(files):
    statements, _, table = files
    got = load_labelled(statements)
    expected = table[table["label_status"] == "ok"]["statement_id"].tolist()
    assert got["statement_id"].tolist() == expected
    assert set(got["llm_label"]) <= set(LABELS)
    assert got.index.tolist() == list(range(len(got)))
    assert set(STATEMENT_COLUMNS) <= set(got.columns)


def test_load_labelled_with_hidden_states_follows_their_order_and_drops_the_rest(files):
    statements, hidden, table = files
    got = load_labelled(statements, hidden)
    ok = table[table["label_status"] == "ok"]
    expected = [s for s in ok["statement_id"][::-1] if s not in ("s000", "s001")]
    assert got["statement_id"].tolist() == expected
    assert got.index.tolist() == list(range(len(got)))


def test_load_labelled_refuses_a_file_with_no_usable_label(files, tmp_path):
    table = files[2].assign(label_status="error")
    path = tmp_path / "none.parquet"
    table.to_parquet(path, index=False)
    with pytest.raises(FactualityError, match="no statement has a usable label"):
        load_labelled(path)


def test_load_labelled_refuses_an_unlabelled_file(files, tmp_path):
    path = tmp_path / "unlabelled.parquet"
    files[2].drop(columns=["llm_label", "label_status"]).to_parquet(path, index=False)
    with pytest.raises(InputFormatError, match="llm_label"):
        load_labelled(path)


def test_load_labelled_refuses_hidden_states_with_no_last_pooling(files, tmp_path):
    path = write_hidden(
        hidden_table(["s002"], {"mean": np.ones((1, 1, 2), np.float32)}, [0]),
        tmp_path / "mean.parquet",
    )
    with pytest.raises(FactualityError, match="no last-token hidden states"):
        load_labelled(files[0], path)


def test_layer_features_follow_the_ids_asked_for(files):
    _, hidden, _ = files
    both = layer_features(hidden, 3, ["s005", "s002"])
    assert both.shape == (2, DIM)
    np.testing.assert_array_equal(layer_features(hidden, 3, ["s002"])[0], both[1])
    with pytest.raises(FactualityError, match="1 statements have no hidden state"):
        layer_features(hidden, 3, ["s002", "s000"])


def test_split_table_splits_by_group_like_split_groups(files):
    table = load_labelled(files[0], files[1])
    split = split_table(table, (0.5, 0.25, 0.25), seed=3)
    np.testing.assert_array_equal(
        split, split_groups(table["group_id"].tolist(), (0.5, 0.25, 0.25), 3)
    )
    per_group = pd.Series(split).groupby(table["group_id"].to_numpy()).nunique()
    assert (per_group == 1).all()  # no fact group straddles two splits
    assert set(split) == {"train", "val", "test"}


# -- sweep, pick, train, evaluate -----------------------------------------------------------------


def test_sweep_reports_every_layer_in_order_and_finds_the_informative_one(files):
    table = load_labelled(files[0], files[1])
    calls: list[tuple[int, int]] = []
    sweep = sweep_layers(table, files[1], config=CONFIG, progress=lambda i, n: calls.append((i, n)))
    assert [row["layer"] for row in sweep] == [0, 3]
    assert set(sweep[0]) == {"layer", "val_accuracy", "train_accuracy", "best_epoch"}
    assert calls == [(1, 2), (2, 2)]
    assert sweep[1]["val_accuracy"] >= 0.9
    assert sweep[0]["val_accuracy"] < 0.7
    assert pick_layer(sweep) == 3
    assert [r["layer"] for r in sweep_layers(table, files[1], [3], CONFIG)] == [3]


def test_training_on_the_best_layer_is_the_sweep_then_the_pick(files):
    table = load_labelled(files[0], files[1])
    judge, sweep = train_on_best_layer(table, files[1], CONFIG)
    assert sweep == sweep_layers(table, files[1], config=CONFIG)  # seeded: the same sweep
    assert judge.config.layer == pick_layer(sweep) == 3
    assert judge.config.extra["layer_sweep"] == sweep
    alone = train_judge(table, files[1], 3, CONFIG)
    assert (
        judge.predict_proba(np.zeros((2, DIM))) == alone.predict_proba(np.zeros((2, DIM)))
    ).all()


def test_pick_layer_prefers_the_lowest_of_tied_layers_and_refuses_an_empty_sweep():
    sweep = [{"layer": 5, "val_accuracy": 0.8}, {"layer": 2, "val_accuracy": 0.8}]
    assert pick_layer(sweep) == 2
    with pytest.raises(FactualityError, match="empty"):
        pick_layer([])


def test_train_judge_sets_the_layer_pooling_and_input_size(files):
    table = load_labelled(files[0], files[1])
    judge = train_judge(table, files[1], 3, JudgeConfig(input_dim=1, hidden_dim=16, max_epochs=60))
    assert (judge.config.layer, judge.config.pooling, judge.config.input_dim) == (3, "last", DIM)
    assert judge.config.hidden_dim == 16
    assert judge.history is not None and judge.history.best_val_accuracy >= 0.9


def test_evaluate_judge_on_the_test_split(files):
    table = load_labelled(files[0], files[1])
    judge = train_judge(table, files[1], 3, CONFIG)
    sweep = [{"layer": 3, "val_accuracy": 1.0}]
    report = evaluate_judge(table, files[1], judge, n_buckets=2, sweep=sweep)
    assert isinstance(report, EvaluationReport)
    test = table[split_table(table) == "test"]
    assert report.n_test == len(test) > 0
    assert report.judge_accuracy >= 0.9 > report.majority_accuracy
    assert report.logreg_accuracy >= 0.9
    assert report.layer == 3 and report.sweep == sweep
    assert report.test_label_counts == {
        label: int((test["llm_label"] == label).sum()) for label in LABELS
    }
    assert report.majority_label in LABELS
    assert report.scores_llm == factuality_scores(test, "llm_label").to_dict()
    assert set(report.breakdown) == {"judge_relation", "judge_degree", "llm_relation", "llm_degree"}
    data = report.to_dict()
    assert list(data)[: len(HEADLINE)] == HEADLINE
    assert data["correctness"] == report.scores_judge["correctness"]
    assert data["llm_truthfulness"] == report.scores_llm["truthfulness"]
    assert data["layer_sweep"] == sweep


def test_evaluate_judge_refuses_a_judge_without_a_layer_or_an_empty_test_split(files):
    table = load_labelled(files[0], files[1])
    with pytest.raises(FactualityError, match="which layer"):
        evaluate_judge(table, files[1], Judge(JudgeConfig(input_dim=DIM)))
    no_test = JudgeConfig(
        input_dim=DIM, layer=3, hidden_dim=16, max_epochs=5, split_fractions=(0.8, 0.2, 0.0)
    )
    with pytest.raises(FactualityError, match="test split is empty"):
        evaluate_judge(table, files[1], Judge(no_test))


def test_baselines() -> None:
    rng = np.random.default_rng(0)
    y = rng.choice(3, size=200, p=[0.6, 0.25, 0.15])
    x = (rng.normal(scale=4.0, size=(3, 16))[y] + rng.normal(size=(200, 16))).astype(np.float32)
    assert majority_baseline(np.array([2, 2, 1]), np.array([2, 1, 2, 2])) == (2, 0.75)
    assert logreg_baseline(x[:150], y[:150], x[150:], y[150:]) >= 0.95
    # one class only: predicts it
    assert logreg_baseline(x[:10], np.zeros(10, int), x[10:20], np.zeros(10, int)) == 1.0
