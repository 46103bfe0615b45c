"""s3kg_core.checker_training.training: a one-step run, its manifest, checkpoint and resuming."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from trained_checker_helpers import TINY_CONFIG, tiny_pairs, train_tiny

from s3kg_core.checker_training.synthetic import SyntheticPair, data_hash
from s3kg_core.checker_training.training import (
    CHECKPOINT,
    TrainConfig,
    evaluate_pairs,
    run_key,
    train_checker,
)
from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.alignment import FEATURES, HEAD_VERSION
from s3kg_core.grapheval.checkers.trained import TrainedChecker, trained_checker_available


class Stop(Exception):
    pass


def test_a_one_step_run_writes_a_model_with_its_manifest_and_it_loads(tmp_path, one_torch_thread):
    out = tmp_path / "model"
    manifest = train_tiny(out)
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk == manifest
    assert manifest["base_model"].startswith("minilm@") and manifest["seed"] == 0
    assert manifest["data_hash"] == data_hash(tiny_pairs())
    assert manifest["steps"] == 1 and manifest["resumed_at_step"] == 0
    assert manifest["train_pairs"] + manifest["heldout_pairs"] == 12
    assert 0 < manifest["heldout_pairs"] < 12  # held-out documents exist and were not trained on
    held = manifest["heldout"]
    assert held["n"] == manifest["heldout_pairs"] and 0.0 <= held["accuracy"] <= 1.0
    assert trained_checker_available(out)
    # the run folder (checkpoint, pairs) is gone once the model is in place
    assert [p.name for p in tmp_path.iterdir()] == ["model"]
    probs = TrainedChecker(out).check([("Eiffel Tower", "opened in", "1889")], "It opened in 1889.")
    assert len(probs) == 1 and 0.0 <= probs[0] <= 1.0


def test_a_killed_run_resumes_from_its_checkpoint_and_ends_as_an_unbroken_run(
    tmp_path, one_torch_thread
):
    config = replace(TINY_CONFIG, max_steps=2, batch_size=2)
    unbroken = train_tiny(tmp_path / "a", config=config)

    def kill_after_first_step(done: int, total: int) -> None:
        if done == 1:
            raise Stop

    with pytest.raises(Stop):
        train_tiny(tmp_path / "b", config=config, progress=kill_after_first_step)
    assert not (tmp_path / "b").exists()  # nothing half-written at the output path
    runs = [p for p in tmp_path.iterdir() if p.name.startswith(".b.run-")]
    assert len(runs) == 1 and (runs[0] / CHECKPOINT / "optimizer.bin").is_file()
    resumed = train_tiny(tmp_path / "b", config=config)
    assert resumed["resumed_at_step"] == 1 and resumed["steps"] == 2
    assert resumed["final_loss"] == pytest.approx(unbroken["final_loss"], abs=1e-4)
    from safetensors.torch import load_file

    wa = load_file(str(tmp_path / "a" / "model.safetensors"))
    wb = load_file(str(tmp_path / "b" / "model.safetensors"))
    key = next(k for k in wa if "layer.5.attention.self.query.weight" in k)
    assert (wa[key] - wb[key]).abs().max().item() < 1e-5
    ha = json.loads((tmp_path / "a" / "alignment_head.json").read_text())
    hb = json.loads((tmp_path / "b" / "alignment_head.json").read_text())
    assert ha["weight"][1] == pytest.approx(hb["weight"][1], abs=1e-5)
    assert ha["weight"] != [[0.0] * len(FEATURES)] * 2  # the head was trained


def test_fresh_discards_the_checkpoint(tmp_path, one_torch_thread):
    def stop(done: int, total: int) -> None:
        if done == 1:
            raise Stop

    config = replace(TINY_CONFIG, max_steps=2, batch_size=2)
    with pytest.raises(Stop):
        train_tiny(tmp_path / "m", config=config, progress=stop)
    manifest = train_tiny(tmp_path / "m", config=config, fresh=True)
    assert manifest["resumed_at_step"] == 0


def test_no_training_pairs_is_an_error(tmp_path):
    with pytest.raises(CheckerError, match="no training pairs"):
        train_checker(tmp_path / "m", [], config=TINY_CONFIG)


def test_run_key_follows_settings_and_data_but_not_the_step_budget():
    assert run_key(TrainConfig(), {"n": 1}) != run_key(TrainConfig(seed=1), {"n": 1})
    assert run_key(TrainConfig(), {"n": 1}) != run_key(TrainConfig(), {"n": 2})
    budget = TrainConfig(max_steps=7, checkpoint_every=3)
    assert run_key(TrainConfig(), {"n": 1}) == run_key(budget, {"n": 1})


def test_a_run_continued_with_a_smaller_budget_stops_with_the_steps_it_has(
    tmp_path, one_torch_thread
):
    def stop(done: int, total: int) -> None:
        if done == 2:
            raise Stop

    with pytest.raises(Stop):
        train_tiny(
            tmp_path / "m", config=replace(TINY_CONFIG, max_steps=3, batch_size=1), progress=stop
        )
    manifest = train_tiny(tmp_path / "m", config=replace(TINY_CONFIG, max_steps=2, batch_size=1))
    assert manifest["resumed_at_step"] == 2 and manifest["steps"] == 2
    assert manifest["config"]["max_steps"] == 2


def test_evaluate_pairs_counts_per_kind():
    pairs = [
        SyntheticPair("w", "a", 1, "support", "d"),
        SyntheticPair("w", "b", 0, "swap", "d"),
        SyntheticPair("w", "c", 0, "number", "d"),
    ]
    result = evaluate_pairs([0.9, 0.8, 0.1], pairs)
    assert result["accuracy"] == pytest.approx(2 / 3, abs=1e-3)
    assert result["accuracy_by_kind"] == {"number": 1.0, "support": 1.0, "swap": 0.0}
    assert result["balanced_accuracy"] == 0.75 and result["auroc"] == 1.0  # 0.9 ranks above both


def test_frozen_layers_keep_the_base_weights(tmp_path, one_torch_thread):
    from safetensors.torch import load_file

    from s3kg_core.encoders.registry import resolve_encoder

    out = tmp_path / "m"
    # two steps: transformers' warm-up starts at learning rate 0, so a first step moves nothing
    train_tiny(out, config=replace(TINY_CONFIG, freeze_layers=2, max_steps=2, batch_size=2))
    trained = load_file(str(out / "model.safetensors"))
    base = load_file(str(resolve_encoder("minilm")[1] / "model.safetensors"))

    def pick(weights, part):
        return next(v for k, v in weights.items() if part in k)

    for frozen in ("word_embeddings.weight", "layer.0.attention.self.query.weight"):
        assert (pick(trained, frozen) - pick(base, frozen)).abs().max().item() == 0.0
    moved = "layer.5.attention.self.query.weight"
    assert (pick(trained, moved) - pick(base, moved)).abs().max().item() > 0.0
    with pytest.raises(CheckerError, match="freeze_layers=9"):
        train_tiny(tmp_path / "n", config=replace(TINY_CONFIG, freeze_layers=9))


def _separable_pairs() -> list[SyntheticPair]:
    """Forty short documents; negatives name a city the window does not contain."""
    names = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy"]
    cities = ["Paris", "Berlin", "Madrid", "Rome", "Vienna", "Oslo", "Lisbon", "Prague"]
    out = []
    for d in range(40):
        n, c, other = names[d % 10], cities[d % 8], cities[(d * 3 + 1) % 8]
        other = other if other != c else cities[(d + 4) % 8]
        w = f"{n} lives in {c}. {n} works as a teacher there."
        out.append(SyntheticPair(w, f"{n} lives in {c}", 1, "support", f"toy:{d}"))
        out.append(SyntheticPair(w, f"{n} lives in {other}", 0, "absent", f"toy:{d}"))
    return out


def test_a_short_run_learns_a_separable_set_above_chance(tmp_path, one_torch_thread):
    # regression: the [CLS] classifier on MiniLM (a mean-pooled embedding model, untrained pooler)
    # stayed at chance (held-out balanced accuracy 0.500, loss 0.69); the alignment head learns
    config = TrainConfig(
        max_length=32, batch_size=8, max_steps=20, freeze_layers=6, heldout_percent=25, epochs=4
    )
    manifest = train_checker(tmp_path / "m", _separable_pairs(), config=config)
    assert manifest["head"] == HEAD_VERSION == "alignment-2"
    # the head ranks every held-out positive above every negative (the [CLS] route: AUROC 0.51);
    # at the 0.5 threshold a 20-step head is not calibrated yet: balanced accuracy 0.944 with
    # the old hand-written warm-up, 0.722 with transformers' (which starts at learning rate 0),
    # 0.56-1.0 at 16-40 steps: above chance, not a stable figure to pin
    assert manifest["heldout"]["auroc"] >= 0.95, manifest["heldout"]
    assert manifest["heldout"]["balanced_accuracy"] > 0.5, manifest["heldout"]
