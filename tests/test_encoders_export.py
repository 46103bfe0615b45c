"""Tests of s3kg_core.encoders.export: the ONNX export, once, atomically, with a manifest."""

from __future__ import annotations

import json
from importlib import metadata

import pytest

from s3kg_core.encoders.export import OPSET, export_key, export_onnx, quantize_int8, read_manifest
from s3kg_core.errors import EncoderError


def test_export_writes_a_complete_folder_once(tmp_path, exported_minilm, capfd):
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()  # as in a fresh process, where nothing disabled it yet
    folder = export_onnx(exported_minilm, "my-minilm#abc", root=tmp_path)
    # no "Loading weights" progress bar in the output of the command that exports (it broke
    # `s3kg pairs score`'s last line when the export was the process's first model load)
    assert "Loading weights" not in "".join(capfd.readouterr())
    assert folder.parent == tmp_path / "onnx"
    assert folder.name == f"my-minilm_abc-{export_key(exported_minilm)}"
    for name in ("model.onnx", "tokenizer.json", "modules.json", "manifest.json"):
        assert (folder / name).exists(), name
    manifest = read_manifest(folder)
    assert manifest["opset"] == OPSET == 17
    assert manifest["inputs"] == ["input_ids", "attention_mask", "token_type_ids"]
    assert (manifest["dim"], manifest["max_seq_length"], manifest["pooling"]) == (384, 256, "mean")
    assert manifest["normalize"] is True
    assert len(manifest["source_sha256"]) == 64
    assert manifest["backend_versions"]["torch"] == metadata.version("torch")
    assert manifest["backend_versions"]["onnxruntime"] == metadata.version("onnxruntime")
    assert not list((tmp_path / "onnx").glob(".export-*"))  # the temporary folder is gone
    # a second call finds it and exports nothing
    stamp = (folder / "model.onnx").stat().st_mtime_ns
    assert export_onnx(exported_minilm, "my-minilm#abc", root=tmp_path) == folder
    assert (folder / "model.onnx").stat().st_mtime_ns == stamp  # not written again


def test_new_weights_make_a_new_key(tmp_path, exported_minilm):
    before = export_key(exported_minilm)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "model.safetensors").write_bytes(b"x")
    assert export_key(copy) != before
    with pytest.raises(EncoderError, match=r"no model\.safetensors"):
        export_key(tmp_path)


def test_a_model_that_does_not_export_leaves_nothing_behind(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    (broken / "model.safetensors").write_bytes(b"not weights")
    with pytest.raises(EncoderError, match="could not export"):
        export_onnx(broken, "broken", root=tmp_path / "cache")
    assert not list((tmp_path / "cache" / "onnx").iterdir())


def test_a_folder_without_manifest_is_an_encoder_error(tmp_path):
    with pytest.raises(EncoderError, match=r"no readable manifest\.json"):
        read_manifest(tmp_path)


def _matmul_model(path):
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weight = np.random.default_rng(0).normal(size=(64, 32)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 32])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.save(model, str(path))
    return weight


def test_quantize_int8_stores_int8_weights_and_stays_close(tmp_path):
    import numpy as np
    import onnx
    import onnxruntime as ort

    weight = _matmul_model(tmp_path / "fp32.onnx")
    info = quantize_int8(tmp_path / "fp32.onnx", tmp_path / "int8.onnx")
    assert info["weight_type"] == "QInt8" and info["onnxruntime"] == metadata.version("onnxruntime")
    stored = {t.name: t.data_type for t in onnx.load(str(tmp_path / "int8.onnx")).graph.initializer}
    assert onnx.TensorProto.INT8 in stored.values()
    assert onnx.TensorProto.FLOAT not in {
        v for k, v in stored.items() if k.startswith("w") and "scale" not in k
    }
    x = np.random.default_rng(1).normal(size=(8, 64)).astype(np.float32)
    y = ort.InferenceSession(str(tmp_path / "int8.onnx")).run(None, {"x": x})[0]
    exact = x @ weight
    # int8 weights (127 levels per tensor) and int8 activations: about 1 % of the output's scale
    assert np.abs(y - exact).max() < 0.05 * np.abs(exact).max()
    assert (tmp_path / "int8.onnx").stat().st_size < (tmp_path / "fp32.onnx").stat().st_size / 2


def test_quantize_int8_of_a_broken_file_is_an_encoder_error(tmp_path):
    (tmp_path / "bad.onnx").write_bytes(b"not onnx")
    with pytest.raises(EncoderError, match="could not quantise"):
        quantize_int8(tmp_path / "bad.onnx", tmp_path / "out.onnx")
