r"""Every declared split of the project's evaluation data, each a hash of a name: one home.

Anything tuned (S3KG's alpha, a scoring variant, a checker's threshold or calibration, a
judge's layer) is chosen on one side of a split and reported on the other, so reported figures
are not optimistic by the choice. A member's side depends only on its name (and the split's
version string), never on its label, its scores or the order it comes in, and never changes
between runs or machines. Every rule hashes with SHA-256 (:func:`hash_bucket`):

=====================  ====================================  =====================================
split                  who is on the held-out side           rule
=====================  ====================================  =====================================
pair sets              a pair of a labelled pair set is      ``bucket(f"{set}:{pair id}", 10) <
(:func:`dev_mask`)     **dev** (about 30 %)                  3`` (:data:`PAIR_SPLIT`)
GraphEval articles     an article (all its summaries) is     ``bucket(f"grapheval-split-v1:{key}",
(:func:`article_      **dev** (about 30 %)                  100) < 30`` (:data:`ARTICLE_SPLIT`)
split`)
synthetic documents    a source document's pairs are         ``bucket(f"synthetic-heldout:{doc}",
(:func:`heldout_      **held out** from the checker's       100) < percent`` (10 by default)
document`)             training
factuality facts       a fact group goes to ``train``,       groups ordered by
(:func:`split_        ``val`` or ``test``                   ``sha256(f"{seed}\x1f{group}")``, cut
groups`)                                                     at the fractions (60/20/20)
direction facts        a fact of the direction suite, and    ``bucket(f"direction-facts-v1:{id}",
(:func:`direction_    all its variants, is **dev** (about   100) < 50`` (:data:`DIRECTION_SPLIT`)
split`)                50 %)
=====================  ====================================  =====================================

The golden member lists of every split are pinned by ``tests/test_evaluation_splits.py``: a
change to any rule here is a change of a published split, and needs a new version string.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..errors import FactualityError, InputFormatError

if TYPE_CHECKING:
    from .pair_sets import PairSet

__all__ = [
    "ARTICLE_DEV_PERCENT",
    "ARTICLE_SPLIT",
    "DEV_TENTHS",
    "DIRECTION_DEV_PERCENT",
    "DIRECTION_SPLIT",
    "GROUP_SPLITS",
    "HELDOUT_PERCENT",
    "PAIR_SPLIT",
    "article_split",
    "checked_dev_mask",
    "dev_mask",
    "direction_split",
    "hash_bucket",
    "heldout_document",
    "split_groups",
    "split_pair_set",
]

PAIR_SPLIT = "sha256-name-id-30pct-v1"
"""The pair sets' split, stored with every result computed on it."""

DEV_TENTHS = 3
"""Pair-set dev share in tenths: a pair is dev when its bucket of 10 is below this."""

ARTICLE_SPLIT = "grapheval-split-v1"
"""The GraphEval articles' split (its version string is part of the hashed key)."""

ARTICLE_DEV_PERCENT = 30
"""GraphEval articles: the dev share in percent."""

HELDOUT_PERCENT = 10
"""Synthetic source documents held out from the checker's training, in percent (the default)."""

GROUP_SPLITS = ("train", "val", "test")
"""The factuality judge's splits, in the order of their fractions."""

DIRECTION_SPLIT = "direction-facts-v1"
"""The direction suite's fact split (its version string is part of the hashed key)."""

DIRECTION_DEV_PERCENT = 50
"""Direction suite facts: the dev share in percent."""


def hash_bucket(key: str, buckets: int) -> int:
    """The bucket of ``key`` in ``0 .. buckets - 1``: its SHA-256's first 32 bits modulo that.

    Examples
    --------
    >>> hash_bucket("paws_wiki_400:2", 10), hash_bucket("grapheval-split-v1:x", 100)
    (2, 21)
    """
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % buckets


# -- labelled pair sets ---------------------------------------------------------------------------


def dev_mask(name: str, ids: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Which pairs of the pair set ``name`` are on the dev side (about 30 %).

    Examples
    --------
    >>> dev_mask("paws_wiki_400", ["0", "1", "2", "3"]).tolist()
    [False, False, True, False]
    """
    return np.array([hash_bucket(f"{name}:{pid}", 10) < DEV_TENTHS for pid in ids], dtype=bool)


def checked_dev_mask(pair_set: PairSet) -> npt.NDArray[np.bool_]:
    """:func:`dev_mask` of ``pair_set``, checked to leave both classes on both sides.

    The split is not stratified: with 400 pairs both classes occur on both sides in every
    shared set.

    Raises
    ------
    InputFormatError
        If either side lacks one of the two classes (the set is too small to split).
    """
    mask = dev_mask(pair_set.name, pair_set.ids)
    for side, idx in (("dev", np.flatnonzero(mask)), ("test", np.flatnonzero(~mask))):
        classes = set(pair_set.labels[idx].tolist())
        if classes != {0, 1}:
            raise InputFormatError(
                f"pair set {pair_set.name!r} has {len(idx)} {side} pairs with labels "
                f"{sorted(classes)}; the dev/test split needs both classes on both sides "
                "(use protocol 'same' for tiny sets)"
            )
    return mask


def split_pair_set(pair_set: PairSet) -> tuple[PairSet, PairSet]:
    """``(dev, test)`` halves of ``pair_set`` by :func:`dev_mask`, in the original order.

    Raises
    ------
    InputFormatError
        If either side lacks one of the two classes (the set is too small to split).

    Examples
    --------
    >>> from s3kg_core.evaluation.pair_sets import PairSet
    >>> ps = PairSet.from_rows("toy", [
    ...     {"id": str(i), "paragraph_1": "", "paragraph_2": "", "label": str(i % 2),
    ...      "kg_1": "[]", "kg_2": "[]"} for i in range(40)])
    >>> dev, test = split_pair_set(ps)
    >>> len(dev) + len(test), len(dev) < len(test)
    (40, True)
    """
    mask = checked_dev_mask(pair_set)
    return pair_set.subset(np.flatnonzero(mask)), pair_set.subset(np.flatnonzero(~mask))


# -- GraphEval's summarisation benchmarks -------------------------------------------------------


def article_split(key: str) -> str:
    """``"dev"`` or ``"test"`` for a GraphEval article key (its id, or its text when it has none).

    Every summary of one article is on the same side.

    Examples
    --------
    >>> article_split("8764fb95bfad8ee849274873a92fb8d6b400eee2")  # a SummEval (CNN/DM) story id
    'test'
    >>> article_split("0783c68a744df6afa009d16e72709f2b4d90dea1")
    'dev'
    """
    return "dev" if hash_bucket(f"{ARTICLE_SPLIT}:{key}", 100) < ARTICLE_DEV_PERCENT else "test"


# -- the trained checker's synthetic pairs ------------------------------------------------------


def heldout_document(doc_id: str, percent: int = HELDOUT_PERCENT) -> bool:
    """Whether a source document's synthetic pairs are held out from the checker's training.

    Examples
    --------
    >>> heldout_document("toy:0"), heldout_document("toy:0", percent=100)
    (False, True)
    """
    return hash_bucket(f"synthetic-heldout:{doc_id}", 100) < percent


# -- the factuality judge's facts ---------------------------------------------------------------


def split_groups(
    groups: Sequence[str], fractions: tuple[float, float, float] = (0.6, 0.2, 0.2), seed: int = 0
) -> npt.NDArray[np.object_]:
    r"""``train``, ``val`` or ``test`` for every row, by its group (a fact and its corruptions).

    Distinct groups are ordered by ``sha256(f"{seed}\x1f{group}")`` and cut at the cumulative
    fractions (each rounded to whole groups); every row of a group gets the group's split, so
    no test statement's source fact is seen in training.

    Raises
    ------
    FactualityError
        If the fractions are negative or do not sum to 1.

    Examples
    --------
    >>> s = split_groups([f"g{i}" for i in range(10)], (0.6, 0.2, 0.2))
    >>> sorted((str(k), int(v)) for k, v in zip(*np.unique(s, return_counts=True)))
    [('test', 2), ('train', 6), ('val', 2)]
    """
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise FactualityError(f"split fractions must be >= 0 and sum to 1; got {fractions}")
    unique = list(dict.fromkeys(str(g) for g in groups))
    order = sorted(unique, key=lambda g: hashlib.sha256(f"{seed}\x1f{g}".encode()).hexdigest())
    cut_train = round(fractions[0] * len(order))
    cut_val = cut_train + round(fractions[1] * len(order))
    where = {
        g: GROUP_SPLITS[0] if i < cut_train else GROUP_SPLITS[1] if i < cut_val else GROUP_SPLITS[2]
        for i, g in enumerate(order)
    }
    return np.array([where[str(g)] for g in groups], dtype=object)


# -- the direction suite's facts --------------------------------------------------------------


def direction_split(fact_id: str) -> str:
    """``"dev"`` or ``"test"`` for a fact of the direction suite, by its id (about half each).

    Every variant of a fact is on the fact's side; written and drawn facts follow the same rule
    (:mod:`s3kg_core.evaluation.direction`).

    Examples
    --------
    >>> [direction_split(f"sci-{i:02d}") for i in range(1, 5)]
    ['test', 'test', 'dev', 'dev']
    """
    bucket = hash_bucket(f"{DIRECTION_SPLIT}:{fact_id}", 100)
    return "dev" if bucket < DIRECTION_DEV_PERCENT else "test"
