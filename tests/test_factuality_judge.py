"""Tests of s3kg_core.factuality.judge: training, early stopping, save/load, labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from s3kg_core.errors import FactualityError, InputFormatError
from s3kg_core.factuality.judge import Judge, JudgeConfig, encode_labels


def _blobs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.choice(3, size=n, p=[0.6, 0.25, 0.15])
    centres = rng.normal(scale=4.0, size=(3, 16))
    x = centres[y] + rng.normal(size=(n, 16))
    return x.astype(np.float32), y


def test_learns_separable_problem_and_beats_majority() -> None:
    x, y = _blobs(400)
    judge = Judge(JudgeConfig(input_dim=16, hidden_dim=32, seed=1))
    history = judge.fit(x[:240], y[:240], x[240:320], y[240:320])
    accuracy = float(np.mean(judge.predict(x[320:]) == y[320:]))
    majority = float(np.mean(y[320:] == np.bincount(y[:240]).argmax()))
    assert accuracy >= 0.97
    assert accuracy > majority + 0.2
    assert history.best_val_accuracy >= 0.95
    assert judge.predict_proba(x[:3]).sum(1) == pytest.approx([1, 1, 1])


def test_seeded_training_is_deterministic() -> None:
    x, y = _blobs(120, seed=2)
    preds = []
    for _ in range(2):
        judge = Judge(JudgeConfig(input_dim=16, hidden_dim=8, seed=5, max_epochs=20))
        judge.fit(x[:80], y[:80], x[80:100], y[80:100])
        preds.append(judge.predict_proba(x[100:]))
    np.testing.assert_array_equal(preds[0], preds[1])


def test_early_stopping_keeps_best_epoch() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(160, 16)).astype(np.float32)
    y = rng.integers(0, 3, size=160)  # noise: validation loss soon rises, training stops
    judge = Judge(JudgeConfig(input_dim=16, hidden_dim=64, lr=1e-2, patience=3, max_epochs=500))
    history = judge.fit(x[:120], y[:120], x[120:], y[120:])
    assert len(history.val_loss) < 100
    assert history.val_loss[history.best_epoch] == min(history.val_loss)


def test_save_load_roundtrip(tmp_path: Path) -> None:
    x, y = _blobs(100)
    judge = Judge(JudgeConfig(input_dim=16, hidden_dim=8, layer=4, max_epochs=10))
    judge.fit(x[:60], y[:60], x[60:80], y[60:80])
    judge.save(tmp_path / "j")
    loaded = Judge.load(tmp_path / "j")
    assert loaded.config == judge.config
    np.testing.assert_array_equal(loaded.predict_proba(x), judge.predict_proba(x))
    assert loaded.history is not None
    with pytest.raises(InputFormatError):
        Judge.load(tmp_path / "nothing")


def test_architecture_layernorm_relu() -> None:
    judge = Judge(JudgeConfig(input_dim=5, hidden_dim=7))
    kinds = [type(m).__name__ for m in judge.net.layers]
    assert kinds == ["LayerNorm", "Linear", "ReLU", "Linear"]


def test_input_checks() -> None:
    judge = Judge(JudgeConfig(input_dim=4))
    with pytest.raises(FactualityError, match="shape"):
        judge.predict(np.zeros((2, 5)))
    with pytest.raises(FactualityError, match="validation"):
        judge.fit(np.zeros((2, 4)), np.zeros(2, int), np.zeros((0, 4)), np.zeros(0, int))
    with pytest.raises(FactualityError):
        JudgeConfig(input_dim=0)
    with pytest.raises(FactualityError, match="unknown label"):
        encode_labels(["TRUE", "MAYBE"])
