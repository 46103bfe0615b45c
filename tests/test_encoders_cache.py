"""Tests of s3kg_core.encoders.cache: EmbeddingCache (each distinct string encoded once)."""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.errors import EncoderError

# -- EmbeddingCache --------------------------------------------------------------------------------


def test_cache_encodes_each_distinct_string_once(counting_minilm):
    cache = EmbeddingCache(counting_minilm)
    assert cache.rows(["red", "blue", "red"]).tolist() == [0, 1, 0]
    assert (cache.stats.encoded, cache.stats.calls) == (2, 1)
    assert counting_minilm.batches == [["red", "blue"]]

    assert cache.rows(["blue", "green", "red", "green"]).tolist() == [1, 2, 0, 2]
    assert (cache.stats.encoded, cache.stats.calls) == (3, 2)
    assert counting_minilm.batches[-1] == ["green"]

    # everything cached: no encoder call at all
    cache.vectors(["red", "green"])
    assert cache.add(["blue"]) == 0
    assert (cache.stats.encoded, cache.stats.calls) == (3, 2)
    assert len(counting_minilm.batches) == 2
    assert len(cache) == 3
    assert "green" in cache
    assert "purple" not in cache
    assert cache.stats.seconds > 0


def test_cache_vectors_are_the_encoder_vectors(minilm):
    cache = EmbeddingCache(minilm)
    texts = ["red", "a red car", "red"]
    got = cache.vectors(texts)
    assert got.shape == (3, 384)
    np.testing.assert_allclose(got, minilm.encode(texts), atol=1e-5)
    assert cache.matrix.shape == (2, 384)


def test_cache_empty_lookup(minilm):
    cache = EmbeddingCache(minilm)
    assert cache.rows([]).tolist() == []
    assert cache.stats.calls == 0
    assert len(cache) == 0


def test_cache_grows_past_its_initial_capacity_without_losing_rows(minilm):
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((2500, 384)).astype(np.float32)
    cache = EmbeddingCache(minilm)
    cache.update((f"t{i}", vecs[i]) for i in range(1000))
    cache.update((f"t{i}", vecs[i]) for i in range(900, 2500))  # overlap is skipped
    assert len(cache) == 2500
    np.testing.assert_array_equal(
        cache.vectors(["t0", "t999", "t1000", "t2499"]), vecs[[0, 999, 1000, 2499]]
    )
    assert cache.stats.calls == 0  # update never encodes


def test_cache_items_round_trip_through_update(minilm):
    cache = EmbeddingCache(minilm)
    cache.rows(["alpha", "beta"])
    copy = EmbeddingCache(minilm)
    copy.update(cache.items())
    assert [t for t, _ in copy.items()] == ["alpha", "beta"]
    np.testing.assert_array_equal(copy.matrix, cache.matrix)


# Regression (fixed): EmbeddingCache.update does not de-duplicate texts within one call: a repeated
# text gets two rows, len() counts it twice and save() then writes fewer texts than vectors, so
# loading the file raises ValueError (zip strict).
def test_cache_update_with_a_repeated_text_keeps_one_row(minilm, tmp_path):
    eye = np.eye(384, dtype=np.float32)
    cache = EmbeddingCache(minilm)
    cache.update([("a", eye[0]), ("b", eye[1]), ("a", eye[2])])
    assert len(cache) == 2
    assert cache.matrix.shape == (2, 384)
    path = cache.save(tmp_path / "dup.npz")
    assert len(EmbeddingCache(minilm, path)) == 2


def test_cache_save_and_load_round_trip(counting_minilm, tmp_path):
    path = tmp_path / "sub" / "cache.npz"
    cache = EmbeddingCache(counting_minilm, path)
    assert len(cache) == 0  # nothing there yet
    cache.rows(["Marie Curie discovered radium", "radium", "Marie Curie"])
    assert cache.save() == path
    assert path.exists()
    assert not [p for p in path.parent.iterdir() if p != path]  # atomic: no temporary left

    again = EmbeddingCache(counting_minilm, path)
    assert len(again) == 3
    assert [t for t, _ in again.items()] == [t for t, _ in cache.items()]
    np.testing.assert_array_equal(again.matrix, cache.matrix)
    calls = len(counting_minilm.batches)
    np.testing.assert_array_equal(again.vectors(["radium"]), cache.vectors(["radium"]))
    assert again.stats.calls == 0
    assert len(counting_minilm.batches) == calls


def test_cache_save_to_an_explicit_path_and_empty_cache(minilm, tmp_path):
    empty = EmbeddingCache(minilm)
    path = empty.save(tmp_path / "empty.npz")
    assert len(EmbeddingCache(minilm, path)) == 0


def test_cache_save_without_any_path_raises(minilm):
    with pytest.raises(EncoderError, match="needs a path"):
        EmbeddingCache(minilm).save()


def test_cache_file_from_another_encoder_is_ignored(minilm, exported_minilm, tmp_path):
    path = tmp_path / "cache.npz"
    cache = EmbeddingCache(minilm)
    cache.rows(["red", "blue"])
    cache.save(path)
    other = load_encoder(str(exported_minilm))
    assert len(EmbeddingCache(other, path)) == 0  # same weights, but another name: not reused
    assert len(EmbeddingCache(minilm, path)) == 2


class _BrokenEncoder:
    """An encoder that misbehaves in a chosen way (error paths only)."""

    name = "broken"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def encode(self, texts):
        if self.mode == "short":
            return np.ones((len(texts) - 1, 4), np.float32)
        out = np.ones((len(texts), 4), np.float32)
        out[0, 0] = np.nan
        return out


@pytest.mark.parametrize("mode", ["short", "nan"])
def test_cache_rejects_a_misbehaving_encoder(mode):
    cache = EmbeddingCache(_BrokenEncoder(mode))
    with pytest.raises(EncoderError, match="finite rows for 2 texts"):
        cache.add(["a", "b"])
    assert len(cache) == 0
    assert "a" not in cache
