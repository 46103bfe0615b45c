"""Tests of s3kg_core.encoders.static: minilm-static, distilled once from the packaged MiniLM."""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.encoders.registry import load_encoder, resolve_encoder
from s3kg_core.encoders.static import STATIC_DIM, StaticEncoder, distill_static


@pytest.fixture(scope="module")
def static():
    return load_encoder("minilm-static")


def test_the_distilled_folder_has_vectors_tokenizer_and_manifest(static):
    folder = distill_static(resolve_encoder("minilm")[1])  # found, not distilled again
    assert folder == static.folder
    assert {p.name for p in folder.iterdir()} == {"vectors.npy", "tokenizer.json", "manifest.json"}
    assert static.manifest["dim"] == STATIC_DIM == static.dim == 256
    assert static.manifest["vocab_size"] == 30522
    assert len(static.manifest["source_sha256"]) == 64
    assert not list(folder.parent.glob(".distill-*"))


def test_static_vectors_are_unit_norm_and_mean_something(static):
    out = static.encode(["a cat", "a kitten", "stock market crash", "", "😀"])
    assert out.shape == (5, 256)
    assert out.dtype == np.float32
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert out[0] @ out[1] > out[0] @ out[2]  # near-synonyms closer than unrelated phrases
    assert static.encode([]).shape == (0, 256)


def test_a_text_is_the_mean_of_its_tokens(static):
    one, two = static.encode(["aspirin", "fever"]), static.encode(["aspirin fever"])
    # "aspirin" may be several tokens; compare with the token-weighted mean instead
    ids = [static._tokenizer.encode(t, add_special_tokens=False).ids for t in ("aspirin", "fever")]
    raw = np.vstack([static._vectors[i] for i in ids]).mean(axis=0)
    np.testing.assert_allclose(two[0], raw / np.linalg.norm(raw), atol=1e-5)
    assert one.shape == (2, 256)


def test_static_is_another_encoder_than_minilm(static):
    assert isinstance(static, StaticEncoder)
    assert static.name.startswith("minilm-static@")
    assert static.name != load_encoder("minilm").name
