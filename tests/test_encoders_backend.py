"""Tests of s3kg_core.encoders.backend: encoder specs, the backend variable, names."""

from __future__ import annotations

import pytest

from s3kg_core.encoders.backend import (
    BACKEND_ENV,
    BACKENDS,
    DEFAULT_BACKEND,
    backend_of_name,
    default_backend,
    split_spec,
    with_backend,
)
from s3kg_core.errors import ConfigError


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("minilm", ("minilm", None)),
        ("minilm+onnx", ("minilm", "onnx")),
        ("mpnet+openvino", ("mpnet", "openvino")),
        ("/models/my+model", ("/models/my+model", None)),  # not a backend: part of the path
        ("/models/my+model+torch", ("/models/my+model", "torch")),
        ("+onnx", ("+onnx", None)),  # no name before the suffix
    ],
)
def test_split_spec(spec, expected):
    assert split_spec(spec) == expected


def test_with_backend_replaces_a_suffix_and_checks_the_name():
    assert with_backend("minilm+openvino", "onnx") == "minilm+onnx"
    assert with_backend("minilm+openvino", None) == "minilm+openvino"
    with pytest.raises(ConfigError, match="unknown encoder backend 'tensorrt'"):
        with_backend("minilm", "tensorrt")


def test_the_backend_variable_is_read_at_call_time(monkeypatch):
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    assert default_backend() == DEFAULT_BACKEND in BACKENDS
    for backend in BACKENDS:
        monkeypatch.setenv(BACKEND_ENV, backend)
        assert default_backend() == backend
    monkeypatch.setenv(BACKEND_ENV, "  ")
    assert default_backend() == DEFAULT_BACKEND
    monkeypatch.setenv(BACKEND_ENV, "cuda")
    with pytest.raises(ConfigError, match=r"\$S3KG_ENCODER_BACKEND"):
        default_backend()


def test_names_without_a_suffix_are_torch():
    # every signature stored before backends existed was computed by torch
    assert backend_of_name("minilm@0.1.0") == "torch"
    assert backend_of_name("my-minilm#0123abcd+openvino") == "openvino"
    assert backend_of_name("minilm-static@0.1.0") == "torch"
