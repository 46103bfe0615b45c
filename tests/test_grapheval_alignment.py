"""s3kg_core.grapheval.alignment: the statistics the head reads, saving and loading the head."""

from __future__ import annotations

import json

import pytest
import torch

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.alignment import (
    FEATURES,
    HEAD_FILE,
    alignment_features,
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
    from s3kg_core.grapheval.alignment import load_alignment

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
