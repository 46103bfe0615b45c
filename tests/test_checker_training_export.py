"""s3kg_core.checker_training.export: the int8 ONNX export, in the model folder, measured."""

from __future__ import annotations

import json
import math
import shutil

import pytest
from trained_checker_helpers import export_tiny, tiny_pairs

from s3kg_core.checker_training.export import export_checker, heldout_pairs
from s3kg_core.checker_training.synthetic import SyntheticPair, read_pairs, write_pairs
from s3kg_core.encoders.export import sha256_file
from s3kg_core.errors import CheckerError, InputFormatError
from s3kg_core.evaluation.splits import heldout_document
from s3kg_core.grapheval.checkers.alignment import FEATURES, HEAD_FILE
from s3kg_core.grapheval.checkers.model_format import HELDOUT_PAIRS, ONNX_FILE, read_manifest
from s3kg_core.grapheval.checkers.trained import TrainedChecker

PAIRS = [
    ("The Eiffel Tower is in Paris. It opened in 1889.", "Eiffel Tower opened in 1889"),
    ("The Eiffel Tower is in Paris. It opened in 1889.", "Eiffel Tower opened in 1899"),
    ("Marie Curie was born in Warsaw.", "Marie Curie born in Warsaw"),
    ("Marie Curie was born in Warsaw.", "Sega developed the game"),
    ("Aspirin reduces fever.", "Aspirin reduces fever"),
    ("Aspirin reduces fever.", "The river flows into the North Sea"),
    ("Sega developed the game for the PlayStation.", "Nintendo developed game"),
    ("Pierre met Marie in Paris in 1894.", "Pierre met in Lyon"),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory, one_torch_thread):
    out = tmp_path_factory.mktemp("export") / "model"
    return out, export_tiny(out)


def test_the_export_is_recorded_in_the_manifest_with_both_backends_metrics(exported):
    folder, entry = exported
    assert read_manifest(folder)["onnx"] == entry
    assert entry["file"] == ONNX_FILE and (folder / ONNX_FILE).is_file()
    assert entry["sha256"] == sha256_file(folder / ONNX_FILE)
    assert entry["bytes"] == (folder / ONNX_FILE).stat().st_size < entry["fp32_bytes"] / 2
    assert entry["source_sha256"] == sha256_file(folder / "model.safetensors")
    assert entry["quantisation"]["weight_type"] == "QInt8"
    assert entry["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    held = entry["heldout"]
    # measured on the held-out pairs training saved beside the model: half the tiny documents
    assert held["source"] == str(folder / HELDOUT_PAIRS)
    assert held["n"] == read_manifest(folder)["heldout_pairs"] > 0
    for name in ("torch", "onnx_int8"):
        assert held[name]["n"] == held["n"] and held[name]["pairs_per_s"] > 0
        assert 0.0 <= held[name]["accuracy"] <= 1.0
    # the recorded change is what the two backends give on those pairs (one batch, as measured)
    pairs = [(p.window, p.statement) for p in read_pairs(folder / HELDOUT_PAIRS)]
    torch_p = TrainedChecker(folder, backend="torch").support_many(pairs)
    int8_p = TrainedChecker(folder, backend="onnx").support_many(pairs)
    diffs = [abs(a - b) for a, b in zip(torch_p, int8_p, strict=True)]
    assert held["max_abs_diff"] == pytest.approx(max(diffs), abs=1e-4) and max(diffs) > 0
    assert held["mean_abs_diff"] == pytest.approx(sum(diffs) / len(diffs), abs=1e-4)
    # nothing left behind: no fp32 model, no temporary folder
    assert not (folder / "model.onnx").exists()
    assert not [p for p in folder.iterdir() if p.name.startswith(".")]


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def test_int8_probabilities_are_close_to_torchs(exported):
    folder, _ = exported
    torch_p = TrainedChecker(folder, backend="torch").support_many(PAIRS)
    int8 = TrainedChecker(folder, backend="onnx")
    assert int8.backend == "onnx" and int8.model is None  # no torch encoder loaded
    int8_p = int8.support_many(PAIRS)
    # the sharpened head spreads P out, so hidden states that were wrong would show
    assert max(torch_p) - min(torch_p) > 0.3
    # The head is P = sigmoid(a * (m - c)), m the statement tokens' mean best cosine to the
    # window: the change in logit over a is the change int8 makes to m. Tolerance 0.03 cosine:
    # int8 weights lower a token's best match by 0.003-0.02 on these pairs (a slight lean to
    # "unsupported", as on the real model's test articles: bench/README.md, +6 to +9 flagged
    # triples of 500-1,489); wrong inputs or a wrong graph move it by 0.1 and more.
    a = json.loads((folder / HEAD_FILE).read_text())["weight"][1][FEATURES.index("mean")]
    shifts = [
        (_logit(q) - _logit(p)) / a for p, q in zip(torch_p, int8_p, strict=True) if 1e-6 < p < 1
    ]
    assert len(shifts) == len(PAIRS) and max(abs(d) for d in shifts) < 0.03
    # in P that is at most a / 4 * 0.03 (the sigmoid's steepest slope is a quarter)
    diffs = [abs(p - q) for p, q in zip(torch_p, int8_p, strict=True)]
    assert max(diffs) < a / 4 * 0.03


def test_exporting_again_replaces_the_file_and_the_entry(exported, tmp_path):
    folder, entry = exported
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    again = export_checker(copy, n_pairs=3)
    assert again["heldout"]["n"] == 3 and read_manifest(copy)["onnx"] == again
    assert again["source_sha256"] == entry["source_sha256"]
    assert TrainedChecker(copy).backend == "onnx"


def test_held_out_pairs_come_from_a_file_s_held_out_documents_only(exported, tmp_path):
    folder, _ = exported
    pairs = [SyntheticPair("w", f"s{i}", i % 2, "support", f"doc:{i}") for i in range(200)]
    write_pairs(pairs, tmp_path / "pairs.jsonl")
    got, source = heldout_pairs(folder, pairs_file=tmp_path / "pairs.jsonl", n_pairs=0)
    percent = read_manifest(folder)["config"]["heldout_percent"]
    assert source == str(tmp_path / "pairs.jsonl")
    assert got == [p for p in pairs if heldout_document(p.doc_id, percent)] and got
    sample, _ = heldout_pairs(folder, pairs_file=tmp_path / "pairs.jsonl", n_pairs=5)
    assert len(sample) == 5 and set(sample) <= set(got)
    assert sample == heldout_pairs(folder, pairs_file=tmp_path / "pairs.jsonl", n_pairs=5)[0]


def test_without_held_out_pairs_the_export_says_so(exported, tmp_path):
    folder, _ = exported
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    (copy / HELDOUT_PAIRS).unlink()
    # no pairs file and a data folder without sources: pairs cannot be generated
    with pytest.raises(InputFormatError, match="no source text found"):
        export_checker(copy, data_dir=tmp_path / "empty")
    # a pairs file whose documents were all trained on: nothing held out to measure on
    percent = read_manifest(folder)["config"]["heldout_percent"]
    trained = [f"doc:{i}" for i in range(50) if not heldout_document(f"doc:{i}", percent)]
    write_pairs([SyntheticPair("w", "s", 1, "support", d) for d in trained], tmp_path / "p.jsonl")
    with pytest.raises(CheckerError, match="no held-out pairs"):
        export_checker(copy, pairs_file=tmp_path / "p.jsonl")
    assert read_manifest(copy)["onnx"] == read_manifest(folder)["onnx"]  # left as it was


def test_only_a_current_alignment_head_is_exported(tmp_path):
    manifest = {"format": "s3kg-trained-checker-1", "head": "classifier"}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CheckerError, match="only a checker with the 'alignment-2' head"):
        export_checker(tmp_path)
    assert len(tiny_pairs()) == 12  # the helper's pairs are what the fixture trained on
