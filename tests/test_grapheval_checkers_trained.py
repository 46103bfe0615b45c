"""s3kg_core.grapheval.checkers.trained: loading, windows, verdicts, the dashboard's helpers."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from trained_checker_helpers import TINY_CONFIG, export_tiny, train_tiny

from s3kg_core.errors import CheckerError, CheckerExportError
from s3kg_core.grapheval.checkers.alignment import HEAD_FILE, HEAD_VERSION
from s3kg_core.grapheval.checkers.model_format import (
    ONNX_FILE,
    read_manifest,
    trained_checker_dir,
)
from s3kg_core.grapheval.checkers.trained import (
    TrainedChecker,
    load_trained_checker,
    manifest_summary,
    onnx_problem,
    resolve_backend,
    trained_checker_available,
)
from s3kg_core.grapheval.detect import GraphEval
from s3kg_core.kg import Triple


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("trained") / "model"
    # two steps of two pairs: transformers' warm-up runs the first at learning rate 0, and a
    # head still at zero judges every window alike (0.5)
    train_tiny(out, config=replace(TINY_CONFIG, max_steps=2, batch_size=2))
    torch.set_num_threads(before)
    return out


@pytest.fixture(scope="module")
def checker(model_dir):
    return TrainedChecker(model_dir, top_windows=2)


LONG = (
    "Alpha Corp was founded in Oslo in 1901. It makes ships. Its chief is Ann Berg. "
    "The firm moved to Bergen in 1950. Bergen is on the west coast. Sales rose in 1999. "
    "The Eiffel Tower is in Paris. It opened in 1889. Tourists visit it every day."
)


def test_the_default_folder_is_under_the_cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path))
    assert trained_checker_dir() == tmp_path / "checkers" / "trained-minilm"
    assert not trained_checker_available()
    assert load_trained_checker() is None
    with pytest.raises(CheckerError, match="train-checker"):
        TrainedChecker()


def test_a_folder_without_a_valid_manifest_is_not_a_checker(tmp_path, model_dir):
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "other"}))
    assert not trained_checker_available(tmp_path)
    with pytest.raises(CheckerError, match="not a s3kg-trained-checker-1"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{")
    with pytest.raises(CheckerError, match="not JSON"):
        read_manifest(tmp_path)
    assert trained_checker_available(model_dir)


def test_a_checker_below_the_held_out_bar_is_not_offered(model_dir):
    held = read_manifest(model_dir)["heldout"]["balanced_accuracy"]
    assert trained_checker_available(model_dir, min_heldout=held)
    assert not trained_checker_available(model_dir, min_heldout=held + 0.01)
    assert load_trained_checker(model_dir, min_heldout=held + 0.01) is None
    loaded = load_trained_checker(model_dir, min_heldout=0.0, top_windows=1)
    assert isinstance(loaded, TrainedChecker) and loaded.top_windows == 1


def test_a_model_with_the_first_alignment_head_is_not_offered_and_must_be_retrained(
    tmp_path, model_dir
):
    # regression: after head alignment-2, a cached alignment-1 model (the dashboard's folder)
    # must not be offered by load_trained_checker (it would raise on load), and --checker
    # trained must say to train it again
    import shutil

    old = tmp_path / "old"
    shutil.copytree(model_dir, old)
    manifest = read_manifest(old)
    manifest["head"] = "alignment-1"
    (old / "manifest.json").write_text(json.dumps(manifest))
    head = json.loads((old / "alignment_head.json").read_text())
    head.update(version="alignment-1", features=head["features"][:6])
    head["weight"] = [row[:6] for row in head["weight"]]
    (old / "alignment_head.json").write_text(json.dumps(head))
    assert trained_checker_available(model_dir) and HEAD_VERSION != "alignment-1"
    assert not trained_checker_available(old)
    assert load_trained_checker(old, min_heldout=0.0) is None
    with pytest.raises(CheckerError, match="train the checker again"):
        TrainedChecker(old)


def test_verdicts_are_probabilities_with_the_window_they_came_from(checker):
    triples = [
        Triple("Eiffel Tower", "opened in", "1889"),
        Triple("Alpha Corp", "moved to", "Bergen"),
    ]
    verdicts = checker.judge(triples, LONG)
    windows = checker._context_windows(LONG)[0]
    assert len(windows) > 2  # the context is windowed, and each claim sees only its best two
    for v in verdicts:
        assert 0.0 <= v.probability <= 1.0
        assert v.probability == pytest.approx(1 - v.detail["support"], abs=1e-6)
        assert 0 <= v.detail["window"] < len(windows)
    assert "Eiffel" in windows[verdicts[0].detail["window"]]
    assert "Bergen" in windows[verdicts[1].detail["window"]]


def test_the_probability_is_one_minus_the_best_window_support(checker):
    claim = "Eiffel Tower opened in 1889"
    windows = checker._context_windows(LONG)[0]
    picked = checker._pick(claim, windows, checker._context_windows(LONG)[1])
    best = max(checker.support_many([(windows[i], claim) for i in picked]))
    assert checker.check([Triple("Eiffel Tower", "opened in", "1889")], LONG)[0] == pytest.approx(
        1 - best, abs=1e-5
    )


def test_all_windows_when_top_windows_is_zero(model_dir):
    every = TrainedChecker(model_dir, top_windows=0)
    windows, stems = every._context_windows(LONG)
    assert every._pick("anything", windows, stems) == list(range(len(windows)))


def test_repeated_claims_give_the_same_verdict_and_blank_contexts_need_no_model(checker):
    t = Triple("Alpha Corp", "founded in", "Oslo")
    first = checker.check([t, t], LONG)
    assert first[0] == first[1] == checker.check([t], LONG)[0]
    assert checker.judge([t], "  ")[0].probability == 1.0


def test_signature_names_the_base_the_data_and_the_seed(checker, model_dir):
    manifest = read_manifest(model_dir)
    sig = checker.signature
    assert sig.startswith("checker:trained|base:minilm@") and manifest["data_hash"][:12] in sig
    assert "seed:0" in sig and "top:2" in sig and f"head:{HEAD_VERSION}" in sig
    assert "held-out balanced accuracy" in manifest_summary(manifest)


def test_graph_eval_runs_with_it_in_raw_and_kg_mode(checker):
    ge = GraphEval(checker)
    d = ge.detect("The Eiffel Tower opened in 1889.", LONG, raw=True)
    assert d.status == "ok" and d.raw_probability is not None
    assert d.checker == checker.signature


def test_bad_options_are_errors(model_dir):
    with pytest.raises(CheckerError, match="top_windows"):
        TrainedChecker(model_dir, top_windows=-1)


def test_a_classifier_head_model_still_loads(tmp_path, one_torch_thread):
    from dataclasses import replace

    from trained_checker_helpers import TINY_CONFIG

    out = tmp_path / "m"
    manifest = train_tiny(out, config=replace(TINY_CONFIG, head="classifier"))
    assert manifest["head"] == "classifier"
    checker = TrainedChecker(out)
    assert checker.head is None and checker.supported == 1 and checker.backend == "torch"
    (p,) = checker.check([Triple("Eiffel Tower", "opened in", "1889")], "It opened in 1889.")
    assert 0.0 <= p <= 1.0 and "head:classifier" in checker.signature
    with pytest.raises(CheckerExportError, match="classifier-head checker has no ONNX"):
        TrainedChecker(out, backend="onnx")


@pytest.fixture(scope="module")
def exported_dir(tmp_path_factory, one_torch_thread):
    out = tmp_path_factory.mktemp("exported") / "model"
    export_tiny(out)
    return out


def _copy(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


def test_auto_runs_the_int8_export_when_it_matches_and_torch_without_one(exported_dir, model_dir):
    assert onnx_problem(exported_dir) is None
    assert resolve_backend("auto", exported_dir) == "onnx"
    assert TrainedChecker(exported_dir).backend == "onnx"
    assert TrainedChecker(exported_dir, backend="torch").backend == "torch"
    # a model never exported: auto is torch, and asking for onnx says what to run
    assert "export-checker" in str(onnx_problem(model_dir))
    assert TrainedChecker(model_dir).backend == "torch"
    with pytest.raises(CheckerExportError, match=r"no int8 ONNX export .*export-checker"):
        TrainedChecker(model_dir, backend="onnx")
    with pytest.raises(CheckerError, match="unknown checker backend 'tensorrt'"):
        TrainedChecker(exported_dir, backend="tensorrt")


def test_the_dashboard_s_loader_takes_the_export_unchanged(exported_dir):
    # dashboard.data calls load_trained_checker() without options: auto
    loaded = load_trained_checker(exported_dir, min_heldout=0.0)
    assert loaded is not None and loaded.backend == "onnx"
    (p,) = loaded.check([Triple("Eiffel Tower", "opened in", "1889")], LONG)
    assert 0.0 <= p <= 1.0


def test_the_int8_backend_has_its_own_signature_and_torch_keeps_the_old_one(exported_dir):
    torch_sig = TrainedChecker(exported_dir, backend="torch").signature
    int8 = TrainedChecker(exported_dir, backend="onnx")
    sha = read_manifest(exported_dir)["onnx"]["sha256"]
    assert int8.signature == f"{torch_sig}|backend:onnx-int8:{sha[:12]}"
    # results stored before backends existed keep matching the torch checker
    assert torch_sig.endswith(f"|version:{TrainedChecker.version}")


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        (lambda d: (d / ONNX_FILE).unlink(), "is missing"),
        (lambda d: (d / ONNX_FILE).write_bytes(b"other"), "the ONNX file changed"),
        (
            lambda d: (d / HEAD_FILE).write_text((d / HEAD_FILE).read_text() + " "),
            "the model's head changed",
        ),
        (
            lambda d: (d / "model.safetensors").write_bytes(
                (d / "model.safetensors").read_bytes()[:-1] + b" "
            ),
            "the model's weights changed",
        ),
    ],
    ids=["missing", "file", "head", "weights"],
)
def test_a_stale_or_missing_export_falls_back_to_torch_or_errors_clearly(
    exported_dir, tmp_path, spoil, message
):
    copy = _copy(exported_dir, tmp_path)
    spoil(copy)
    assert message in str(onnx_problem(copy))
    assert TrainedChecker(copy, backend="auto").backend == "torch"
    with pytest.raises(CheckerExportError, match=message):
        TrainedChecker(copy, backend="onnx")


def test_an_onnx_file_that_does_not_load_is_a_checker_export_error(exported_dir, tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"not onnx")
    with pytest.raises(CheckerExportError, match="cannot load the ONNX export"):
        TrainedChecker(exported_dir, onnx_file=tmp_path / "bad.onnx")
    with pytest.raises(CheckerExportError, match="no ONNX file"):
        TrainedChecker(exported_dir, onnx_file=tmp_path / "none.onnx")
