"""Tests of s3kg_core.encoders.runtime: onnxruntime and OpenVINO against torch on real strings."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.encoders.runtime import RUNTIME_BACKENDS, RuntimeEncoder
from s3kg_core.errors import EncoderError
from s3kg_core.scoring.s3kg import KGScorer

TEXTS = [
    "Renzo Furlan won against Thomas Johansson",
    "He preached in Otisville",
    "aspirin reduces fever",
    "x",
    "",
    "😀 💧",
    "Zürich liegt am Zürichsee, café crème",
    "the " * 400,  # beyond max_seq_length (256 tokens): truncated as torch truncates it
]


@pytest.fixture(scope="module")
def torch_minilm():
    return load_encoder("minilm", backend="torch")


@pytest.fixture(scope="module", params=RUNTIME_BACKENDS)
def runtime_minilm(request):
    enc = load_encoder("minilm", backend=request.param)
    assert isinstance(enc, RuntimeEncoder)  # loaded, not fallen back to torch
    return enc


def test_vectors_agree_with_torch_within_1e4_cosine(runtime_minilm, torch_minilm):
    assert isinstance(runtime_minilm, Encoder)
    assert runtime_minilm.name == f"{torch_minilm.name}+{runtime_minilm.backend}"
    got, ref = runtime_minilm.encode(TEXTS), torch_minilm.encode(TEXTS)
    assert got.shape == ref.shape == (len(TEXTS), 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(got * ref, axis=1)
    assert cosine.min() > 1 - 1e-4, cosine


def test_batches_and_order_do_not_change_a_vector(runtime_minilm):
    # length-sorted batches of 3 with padding inside each: every row must be its own text's
    small = RuntimeEncoder(runtime_minilm.folder, "small", runtime_minilm.backend, batch_size=3)
    alone = np.vstack([runtime_minilm.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(small.encode(TEXTS), alone, atol=1e-5)
    np.testing.assert_allclose(small.encode(TEXTS[::-1])[::-1], alone, atol=1e-5)
    assert small.encode([]).shape == (0, 384)


@pytest.mark.shared_data
def test_hybrid_scores_agree_with_torch_on_paws(runtime_minilm, torch_minilm, paws_rows):
    pairs = [(r.kg_1, r.kg_2) for r in list(paws_rows.values())[:40] if r.status == "ok"]
    ref = KGScorer(torch_minilm, mode="hybrid").score_pairs(pairs)
    got = KGScorer(runtime_minilm, mode="hybrid").score_pairs(pairs)
    for a, b in zip(got, ref, strict=True):
        assert abs(a.score - b.score) < 1e-3
        assert abs(a.s_sbert - b.s_sbert) < 1e-3
        assert abs(a.s_wl - b.s_wl) < 1e-3
    assert KGScorer(runtime_minilm).signature.split("|")[1] == f"enc:{runtime_minilm.name}"


def test_concurrent_calls_give_the_same_vectors(runtime_minilm):
    expected = runtime_minilm.encode(TEXTS)
    out: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: out.append(runtime_minilm.encode(TEXTS))) for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 4
    for got in out:
        np.testing.assert_allclose(got, expected, atol=1e-6)


def test_a_missing_model_file_is_an_encoder_error(tmp_path, runtime_minilm):
    for f in runtime_minilm.folder.iterdir():
        if f.name != "model.onnx":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    enc = RuntimeEncoder(tmp_path, "no-model", runtime_minilm.backend)
    with pytest.raises(EncoderError, match=f"the {runtime_minilm.backend} backend could not load"):
        enc.encode(["x"])
    with pytest.raises(EncoderError, match="unknown runtime backend"):
        RuntimeEncoder(tmp_path, "x", "tensorrt")


def test_threads_follow_omp_num_threads(monkeypatch, runtime_minilm):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert RuntimeEncoder(runtime_minilm.folder, "a", "onnx").threads == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert RuntimeEncoder(runtime_minilm.folder, "a", "onnx").threads is None
    assert RuntimeEncoder(runtime_minilm.folder, "a", "onnx", threads=2).threads == 2


@pytest.mark.slow
@pytest.mark.parametrize("backend", RUNTIME_BACKENDS)
def test_mpnet_vectors_agree_with_torch_within_1e4_cosine(backend):
    # mpnet has no token_type_ids and a max_seq_length of 384; the export must follow its model
    enc = load_encoder("mpnet", backend=backend)
    assert isinstance(enc, RuntimeEncoder)
    assert enc.manifest["inputs"] == ["input_ids", "attention_mask"]
    assert enc.manifest["max_seq_length"] == 384
    got, ref = enc.encode(TEXTS), load_encoder("mpnet", backend="torch").encode(TEXTS)
    assert got.shape == (len(TEXTS), 768)
    assert np.sum(got * ref, axis=1).min() > 1 - 1e-4


def test_runtime_threads_reads_omp_num_threads_only_when_it_is_a_positive_number(monkeypatch):
    from s3kg_core.encoders.runtime import runtime_threads

    for value, expected in (("3", 3), ("0", None), ("many", None), ("", None)):
        monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert runtime_threads() == expected, value
    assert runtime_threads(2) == 2
