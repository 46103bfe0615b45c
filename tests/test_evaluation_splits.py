"""Tests of the declared dev/test split (s3kg_core.evaluation.splits)."""

from __future__ import annotations

import hashlib

import pytest

from s3kg_core.errors import FactualityError, InputFormatError
from s3kg_core.evaluation.pair_sets import PairSet, list_pair_sets, load_pair_set
from s3kg_core.evaluation.splits import (
    ARTICLE_DEV_PERCENT,
    ARTICLE_SPLIT,
    DEV_TENTHS,
    DIRECTION_DEV_PERCENT,
    DIRECTION_SPLIT,
    PAIR_SPLIT,
    article_split,
    dev_mask,
    direction_split,
    hash_bucket,
    heldout_document,
    split_groups,
    split_pair_set,
)

IDS = [f"id-{i}" for i in range(1000)]

GOLDEN = {
    "pair_dev_synthetic_ids": "54af0f656427dc18",
    "article_dev_synthetic_keys": "4351e2f197504a89",
    "heldout_synthetic_docs_10": "6b6dab02be42e194",
    "heldout_synthetic_docs_25": "4ffb70b85716e1ae",
    "groups_seed0": "d3fec40ac9df12a4",
    "groups_seed7": "2df55a6117766ed1",
    "groups_70_10_20_seed3": "249f89d3a8b0030c",
    "direction_dev_synthetic_ids": "b3e2c77cfaaa238a",
}
"""Splits of made-up names: what each rule gives, whatever data there is."""

GOLDEN_SHARED = {
    "pair_dev:mrpc_400": "0246b65204ea7eaf",
    "pair_dev:paws_wiki_400": "159d15e1640d9873",
    "pair_dev:pubmedqa_ranked_faithfulness_400": "ede5a247e1acdf5b",
    "pair_dev:semantic_kg_codex_400": "44cefea796fbe437",
    "pair_dev:semantic_kg_combined_400": "c7b63d5e2b7babbf",
    "pair_dev:semantic_kg_findkg_400": "b41566d9e2e5ca3e",
    "pair_dev:semantic_kg_globi_400": "4fda6f7657854650",
    "pair_dev:semantic_kg_oregano_400": "065a21805b7c194d",
    "pair_dev:sts12_400": "f29a819e325d1cd8",
    "summ_dev:summeval": "ae2eb858f6d5b448",
    "summ_dev:qags_c": "0b772ad661201f24",
    "summ_dev:qags_x": "9689e901ae6f6eca",
    "synthetic_sources": "9dce0a0819f35324",
    "synthetic_heldout": "ce45c3997c18bc01",
    "direction_drawn": "049954636282bf58",
    "direction_drawn_dev": "de9d142d85830cf3",
}
"""Splits of the shared data: every pair set's dev pairs, every GraphEval benchmark's dev
summaries, the checker's synthetic source documents and the held-out ones among them."""


def members(items, keep) -> str:
    """SHA-256 of the kept items, one per line."""
    return hashlib.sha256(
        "\n".join(str(x) for x, k in zip(items, keep, strict=True) if k).encode()
    ).hexdigest()[:16]


def listing(values) -> str:
    return hashlib.sha256("\n".join(str(v) for v in values).encode()).hexdigest()[:16]


def test_every_rule_keeps_its_golden_members():
    got = {
        "pair_dev_synthetic_ids": members(IDS, dev_mask("paws_wiki_400", IDS)),
        "article_dev_synthetic_keys": members(IDS, [article_split(k) == "dev" for k in IDS]),
        "heldout_synthetic_docs_10": members(IDS, [heldout_document(k) for k in IDS]),
        "heldout_synthetic_docs_25": members(IDS, [heldout_document(k, 25) for k in IDS]),
        "groups_seed0": listing(split_groups([f"g{i % 300}" for i in range(1000)], seed=0)),
        "groups_seed7": listing(split_groups([f"g{i % 300}" for i in range(1000)], seed=7)),
        "groups_70_10_20_seed3": listing(
            split_groups([f"g{i}" for i in range(500)], (0.7, 0.1, 0.2), 3)
        ),
        "direction_dev_synthetic_ids": members(IDS, [direction_split(k) == "dev" for k in IDS]),
    }
    assert got == GOLDEN
    assert PAIR_SPLIT == "sha256-name-id-30pct-v1"


@pytest.mark.shared_data
def test_the_shared_data_keeps_its_golden_members(shared_data):
    from s3kg_core.checker_training.synthetic import source_documents
    from s3kg_core.evaluation.direction import draw_facts
    from s3kg_core.evaluation.summ_sets import DATASETS, load_summ_set

    got = {}
    for name in list_pair_sets(shared_data):
        ps = load_pair_set(name, shared_data)
        got[f"pair_dev:{name}"] = members(ps.ids, dev_mask(name, ps.ids))
    for name in DATASETS:
        summ = load_summ_set(name, data_dir=shared_data)
        got[f"summ_dev:{name}"] = members(
            [e.uid for e in summ.examples], [e.split == "dev" for e in summ.examples]
        )
    docs = [d.doc_id for d in source_documents(shared_data)]
    got["synthetic_sources"] = listing(docs)
    got["synthetic_heldout"] = members(docs, [heldout_document(d) for d in docs])
    drawn = [f.id for f in draw_facts(shared_data)]
    got["direction_drawn"] = listing(drawn)
    got["direction_drawn_dev"] = members(drawn, [direction_split(d) == "dev" for d in drawn])
    assert got == GOLDEN_SHARED


def test_a_bucket_is_the_documented_hash():
    key = "set-a:id-7"
    assert hash_bucket(key, 10) == int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 10
    assert {hash_bucket(f"k{i}", 7) for i in range(200)} == set(range(7))


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


# -- GraphEval's articles ------------------------------------------------------------------

# The published GraphEval split, pinned: which side these article keys are on today. Every
# figure of the README's GraphEval table is computed on the test side of this split, and the
# support checker was calibrated on its dev side only. A change in any of these labels is a
# change of the published split: give it a new ARTICLE_SPLIT and rerun calibration and figures,
# do not edit the labels to make the test pass.
GOLDEN_SPLIT = [
    ("8764fb95bfad8ee849274873a92fb8d6b400eee2", "test"),  # SummEval (CNN/DM) story ids
    ("02c955067d00f38b6978b805d5a8701a787f78ac", "test"),
    ("0783c68a744df6afa009d16e72709f2b4d90dea1", "dev"),
    ("0f0789390d67698283cc87b2e046b5c5cd77edb7", "dev"),
    ("130ff8f2dfb6ab67861d5924b0ff5acd63c7d8ce", "dev"),
    ("096e418a953af86df0d1560bec95bc7bfee2e34b", "test"),
    ("A b.", "test"),  # QAGS keys are the article text
    ("x", "dev"),
    ("art0", "dev"),
    ("art1", "test"),
    ("article-4", "dev"),
    ("article-6", "test"),
]


@pytest.mark.parametrize(("key", "side"), GOLDEN_SPLIT)
def test_the_published_split_is_pinned(key, side):
    assert (ARTICLE_SPLIT, ARTICLE_DEV_PERCENT) == ("grapheval-split-v1", 30)
    assert article_split(key) == side


def test_split_is_about_thirty_percent_and_pinned_on_a_run_of_keys():
    keys = [f"article-{i}" for i in range(2000)]
    dev = sum(article_split(k) == "dev" for k in keys)
    assert 0.26 < dev / 2000 < 0.34
    # article-0 .. article-39, D = dev (see GOLDEN_SPLIT: a change is a change of the split)
    shown = "".join("D" if article_split(k) == "dev" else "t" for k in keys[:40])
    assert shown == "ttttDDtttttttDttDDttDtttttDtttDDtttDttDD"


# -- the checker's synthetic documents ------------------------------------------------------


def test_heldout_is_a_stable_share_of_documents():
    ids = [f"doc:{i}" for i in range(2000)]
    share = sum(map(heldout_document, ids)) / len(ids)
    assert 0.07 < share < 0.13
    assert [heldout_document(i) for i in ids[:50]] == [heldout_document(i) for i in ids[:50]]
    assert heldout_document("toy:0", 0) is False and heldout_document("toy:0", 100) is True


# -- the factuality judge's fact groups -------------------------------------------------------


def test_split_by_group_deterministic_and_disjoint() -> None:
    groups = [f"g{i // 2}" for i in range(200)]  # two statements per fact
    split = split_groups(groups, seed=7)
    assert (split == split_groups(groups, seed=7)).all()
    assert not (split == split_groups(groups, seed=8)).all()
    by_group: dict[str, set[str]] = {}
    for g, s in zip(groups, split, strict=True):
        by_group.setdefault(g, set()).add(str(s))
    assert all(len(v) == 1 for v in by_group.values())
    counts = {s: int((split == s).sum()) for s in ("train", "val", "test")}
    assert counts == {"train": 120, "val": 40, "test": 40}
    with pytest.raises(FactualityError):
        split_groups(groups, (0.5, 0.5, 0.5))


# -- the direction suite's facts ----------------------------------------------------------------

# The packaged facts of the direction suite and the dev ones among them (by id, one per line). A
# fact's side never changes (it is a hash of its id alone); a fact added or removed changes these
# two lines, a new rule needs a new DIRECTION_SPLIT.
GOLDEN_DIRECTION_WRITTEN = ("c511755c6e30d972", "a41ef4af570968bf")


def test_the_direction_split_is_pinned():
    from s3kg_core.evaluation.direction import load_facts

    assert (DIRECTION_SPLIT, DIRECTION_DEV_PERCENT) == ("direction-facts-v1", 50)
    # sci-01 .. sci-32, D = dev
    shown = "".join("D" if direction_split(f"sci-{i:02d}") == "dev" else "t" for i in range(1, 33))
    assert shown == "ttDDttDDDtDDtDtDDDtDtDDDDDDDDtDD"
    ids = [f.id for f in load_facts()]
    got = (listing(ids), members(ids, [direction_split(i) == "dev" for i in ids]))
    assert got == GOLDEN_DIRECTION_WRITTEN


def test_the_direction_split_is_about_half_and_the_documented_hash():
    keys = [f"fact-{i}" for i in range(2000)]
    sides = [direction_split(k) for k in keys]
    assert 0.46 < sides.count("dev") / 2000 < 0.54
    assert sides == [
        "dev" if hash_bucket(f"direction-facts-v1:{k}", 100) < 50 else "test" for k in keys
    ]
