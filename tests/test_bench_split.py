"""Tests of the declared dev/test split (s3kg_core.bench.split)."""

from __future__ import annotations

import hashlib

import pytest

from s3kg_core.bench.datasets import PairSet
from s3kg_core.bench.split import DEV_TENTHS, dev_mask, split_pair_set
from s3kg_core.errors import InputFormatError


def _rows(n: int, label=lambda i: i % 2) -> list[dict[str, str]]:
    return [
        {"id": f"q{i}", "paragraph_1": f"t{i}", "paragraph_2": f"u{i}", "label": str(label(i)),
         "kg_1": "[]", "kg_2": "[]"}
        for i in range(n)
    ]  # fmt: skip


def test_the_mask_is_the_documented_hash_rule():
    ids = [str(i) for i in range(200)]
    expected = [
        int(hashlib.sha256(f"paws_wiki_400:{i}".encode()).hexdigest()[:8], 16) % 10 < DEV_TENTHS
        for i in ids
    ]
    assert dev_mask("paws_wiki_400", ids).tolist() == expected


def test_the_mask_depends_on_name_and_id_only_and_is_about_thirty_percent():
    ids = [f"id-{i}" for i in range(2000)]
    one = dev_mask("set-a", ids)
    # pinned: the dev ids among the first 40 today (a change is a change of the declared split)
    assert [i for i in range(40) if one[i]] == [3, 9, 12, 16, 21, 22, 26, 29, 37, 39]
    assert dev_mask("set-a", ids[::-1]).tolist() == one[::-1].tolist()  # order does not matter
    assert one.tolist() != dev_mask("set-b", ids).tolist()
    assert 0.27 < one.mean() < 0.33


def test_split_partitions_the_pairs_in_order():
    ps = PairSet.from_rows("toy", _rows(60))
    dev, test = split_pair_set(ps)
    assert len(dev) + len(test) == 60
    assert set(dev.ids).isdisjoint(test.ids)
    assert list(dev.ids) == [i for i, d in zip(ps.ids, dev_mask("toy", ps.ids), strict=True) if d]
    assert list(test.ids) == sorted(test.ids, key=list(ps.ids).index)


def test_a_side_without_both_classes_is_a_clear_error():
    ps = PairSet.from_rows("tiny", _rows(3))
    with pytest.raises(InputFormatError, match="both classes on both sides"):
        split_pair_set(ps)
