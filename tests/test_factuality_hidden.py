"""Tests of s3kg_core.factuality.hidden: hidden states per layer, padding, prefix cache, Parquet."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from s3kg_core.errors import FactualityError, InputFormatError
from s3kg_core.factuality.hidden import (
    HiddenStateExtractor,
    hidden_layers,
    hidden_table,
    read_hidden,
    write_hidden,
)

TEXTS = [
    "Apple controls Beats.",
    "Google produces Pixel and Xbox and Galaxy in China and Germany.",
    "Samsung operates in Germany.",
]


def test_shapes_all_layers(tiny_model: Path) -> None:
    ex = HiddenStateExtractor(tiny_model, pooling=("last", "mean"), batch_size=2)
    out = ex.extract(TEXTS)
    assert ex.layers == [0, 1, 2]  # embeddings + 2 blocks
    for pooling in ("last", "mean"):
        assert out[pooling].shape == (3, 3, 32)
        assert out[pooling].dtype == np.float32
        assert np.isfinite(out[pooling]).all()


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("input_format", ["prompt", "statement"])
def test_padding_never_changes_a_vector(tiny_model: Path, side: str, input_format: str) -> None:
    ex = HiddenStateExtractor(
        tiny_model,
        pooling=("last", "mean"),
        batch_size=3,
        padding_side=side,
        input_format=input_format,
    )
    batched = ex.extract(TEXTS)
    for i, text in enumerate(TEXTS):
        alone = ex.extract([text])
        for pooling in ("last", "mean"):
            np.testing.assert_allclose(alone[pooling][0], batched[pooling][i], atol=1e-5)


def test_prefix_cache_matches_full_forward(tiny_model: Path) -> None:
    import torch

    from s3kg_core.factuality.prompts import label_prompt_text

    ex = HiddenStateExtractor(tiny_model, layers=[2])
    runner = ex.runner
    got = ex.extract([TEXTS[0]])["last"][0, 0]
    ids = runner.tokenizer(label_prompt_text(runner.tokenizer, TEXTS[0]), add_special_tokens=False)
    with torch.no_grad():
        out = runner.model(input_ids=torch.tensor([ids["input_ids"]]), output_hidden_states=True)
    np.testing.assert_allclose(got, out.hidden_states[2][0, -1].numpy(), atol=1e-5)


def test_bad_layers_and_pooling(tiny_model: Path) -> None:
    with pytest.raises(FactualityError, match="layers"):
        HiddenStateExtractor(tiny_model, layers=[5])
    with pytest.raises(FactualityError, match="pooling"):
        HiddenStateExtractor(tiny_model, pooling=("max",))


def test_parquet_roundtrip(tmp_path: Path) -> None:
    feats = {"last": np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)}
    path = write_hidden(hidden_table(["a", "b"], feats, [0, 7]), tmp_path / "h.parquet")
    assert hidden_layers(path) == [0, 7]
    ids, x = read_hidden(path, 7)
    assert ids == ["a", "b"]
    np.testing.assert_array_equal(x, feats["last"][:, 1])
    with pytest.raises(InputFormatError, match="has last layers \\[0, 7\\]"):
        read_hidden(path, 3)
    with pytest.raises(InputFormatError, match="not found"):
        read_hidden(tmp_path / "none.parquet", 0)
