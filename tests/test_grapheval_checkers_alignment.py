"""s3kg_core.grapheval.checkers.alignment: the statistics the head reads, saving, loading."""

from __future__ import annotations

import json

import pytest
import torch

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.alignment import (
    BIGRAM_GAP,
    FEATURES,
    HEAD_FILE,
    HEAD_VERSION,
    alignment_features,
    feature_table,
    new_head,
    save_head,
)


def _features(hidden, types):
    h = torch.tensor([hidden], dtype=torch.float32)
    t = torch.tensor([types])
    values = alignment_features(h, t, torch.ones_like(t)).squeeze(0).tolist()
    return dict(zip(FEATURES, values, strict=True))


# tokens: [CLS] w1 w2 [SEP] | s1 s2 [SEP]; unit vectors, so similarity is the dot product
CLS, A, B, SEP, C = [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0.6, 0, 0, 0.8]
TYPES = [0, 0, 0, 0, 1, 1, 1]


def test_a_statement_whose_tokens_are_all_in_the_window_is_fully_matched():
    f = _features([CLS, A, B, SEP, B, A, SEP], TYPES)
    assert f["min"] == pytest.approx(1.0) and f["mean"] == pytest.approx(1.0)
    assert f["share_below_0.5"] < 0.01


def test_an_unmatched_token_lowers_min_and_raises_the_shares():
    # C matches only [CLS] and [SEP], which are not window tokens: its best match is 0
    f = _features([CLS, A, B, SEP, A, C, SEP], TYPES)
    assert f["min"] == pytest.approx(0.0, abs=1e-6) and f["mean"] == pytest.approx(0.5)
    assert f["share_below_0.5"] == pytest.approx(0.5, abs=0.01)


def test_padding_is_ignored():
    h = torch.tensor([[CLS, A, B, SEP, B, SEP, C]], dtype=torch.float32)
    t = torch.tensor([[0, 0, 0, 0, 1, 1, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    f = alignment_features(h, t, mask).squeeze(0).tolist()
    assert f[0] == pytest.approx(1.0)


def test_the_head_round_trips_and_another_version_is_refused(tmp_path):
    from s3kg_core.grapheval.checkers.alignment import load_alignment

    head = new_head()
    assert torch.softmax(head(torch.rand(3, len(FEATURES))), -1)[:, 1].tolist() == [0.5] * 3
    with torch.no_grad():
        head.weight.fill_(0.25)
    save_head(head, tmp_path)
    data = json.loads((tmp_path / HEAD_FILE).read_text())
    assert data["weight"] == [[0.25] * len(FEATURES)] * 2 and data["features"] == list(FEATURES)
    with pytest.raises(CheckerError, match="cannot load"):
        load_alignment(tmp_path)  # a head without an encoder beside it
    data["version"] = "alignment-0"
    (tmp_path / HEAD_FILE).write_text(json.dumps(data))
    with pytest.raises(CheckerError, match="version 'alignment-0'"):
        load_alignment(tmp_path)


def _one_hot(i: int, dim: int = 16) -> list[float]:
    v = [0.0] * dim
    v[i] = 1.0
    return v


def _order_table(window: list[int], statement: list[int]) -> dict[str, float]:
    """Features of ``[CLS] window [SEP] statement [SEP]``, token i a one-hot vector (0 = [CLS])."""
    sep = 15
    ids = [0, *window, sep, *statement, sep]
    h = torch.tensor([[_one_hot(i) for i in ids]], dtype=torch.float32)
    t = torch.tensor([[0] * (len(window) + 2) + [1] * (len(statement) + 1)])
    table = feature_table(h, t, torch.ones_like(t))
    return {k: float(v) for k, v in table.items()}


def test_a_swapped_statement_is_told_from_the_original_by_the_order_features():
    # window "1 2 3 4 5" (head 1, relation 2 3, tail 4); statement "1 2 3 4" against "4 2 3 1"
    original = _order_table([1, 2, 3, 4, 5], [1, 2, 3, 4])
    swapped = _order_table([1, 2, 3, 4, 5], [4, 2, 3, 1])
    # the match statistics cannot tell them apart (the blind spot of head alignment-1)
    for name in ("min", "mean", "share_below_0.5"):
        assert original[name] == pytest.approx(swapped[name])
    assert original["bigram_min"] == pytest.approx(1.0) and original["bigram_mean"] == 1.0
    assert swapped["bigram_min"] == pytest.approx(0.0)  # "4 -> 2": 2 is not after 4
    assert swapped["bigram_mean"] == pytest.approx(1 / 3)  # only "2 -> 3" is in order
    assert original["bigram_back_mean"] == 0.0 and swapped["bigram_back_mean"] > 0.6
    assert original["concordance"] > 0.4 > -0.4 > swapped["concordance"] * 3


def test_an_entity_of_the_window_in_the_wrong_place_breaks_locality():
    # "1 2 3 4" is a sentence; 9 is an entity of the window far after it (beyond BIGRAM_GAP)
    filler = [10, 11, 12, 13, 14, 10, 11, 12, 13, 14][:BIGRAM_GAP]
    window = [1, 2, 3, 4, *filler, 9]
    original = _order_table(window, [1, 2, 3, 4])
    replaced = _order_table(window, [1, 2, 3, 9])
    assert original["min"] == replaced["min"] == pytest.approx(1.0)
    assert original["bigram_min"] == pytest.approx(1.0)
    assert replaced["bigram_min"] == pytest.approx(0.0)
    assert replaced["spread"] > 2 * original["spread"] > 0.0


def test_the_features_have_one_row_per_pair_and_gradients_reach_the_states():
    h = torch.randn(3, 12, 8, requires_grad=True)
    types = torch.tensor([[0] * 7 + [1] * 5, [0] * 5 + [1] * 4 + [0] * 3, [0] * 3 + [1] * 9])
    mask = torch.tensor([[1] * 12, [1] * 9 + [0] * 3, [1] * 12])
    x = alignment_features(h, types, mask)
    assert x.shape == (3, len(FEATURES)) and torch.isfinite(x).all()
    x.sum().backward()
    assert h.grad is not None and h.grad.abs().sum() > 0
    assert set(FEATURES) <= set(feature_table(h, types, mask))


def test_a_statement_of_one_token_has_finite_order_features():
    f = _order_table([1, 2, 3], [2])
    assert f["bigram_min"] == pytest.approx(1.0) and f["spread"] == 0.0
    assert all(v == v for v in f.values())  # no NaN


def test_a_model_saved_with_the_first_head_must_be_retrained(tmp_path):
    from s3kg_core.grapheval.checkers.alignment import load_alignment

    assert HEAD_VERSION == "alignment-2" and len(FEATURES) == 10
    old = {
        "version": "alignment-1",
        "features": list(FEATURES[:6]),
        "weight": [[0.0] * 6] * 2,
        "bias": [0.0, 0.0],
    }
    (tmp_path / HEAD_FILE).write_text(json.dumps(old))
    with pytest.raises(CheckerError, match=r"version 'alignment-1'.*train the checker again"):
        load_alignment(tmp_path)
