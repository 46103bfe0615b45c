"""The declared dev/test split of every labelled pair set.

Anything tuned on a pair set (S3KG's alpha, the choice of a scoring variant) is chosen on its
*dev* pairs and reported on its *test* pairs, so reported figures are not optimistic by the
choice. A pair's side depends only on the set's name and the pair's id (a hash), never on its
label or its scores, and never changes between runs or machines:

    dev  <=>  int(sha256(f"{set name}:{pair id}")[:8], 16) % 10 < 3

About 30 % of each set is dev. The split is not stratified: with 400 pairs both classes occur on
both sides in every shared set (:func:`split_pair_set` checks it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..errors import InputFormatError
from .datasets import PairSet

__all__ = ["DEV_TENTHS", "SPLIT_NAME", "checked_dev_mask", "dev_mask", "split_pair_set"]

SPLIT_NAME = "sha256-name-id-30pct-v1"
"""The split's name, stored with every result computed on it."""

DEV_TENTHS = 3
"""Dev share in tenths: a pair is dev when its hash modulo 10 is below this."""


def dev_mask(name: str, ids: Sequence[str]) -> npt.NDArray[np.bool_]:
    """Which pairs of set ``name`` are on the dev side.

    Examples
    --------
    >>> dev_mask("paws_wiki_400", ["0", "1", "2", "3"]).tolist()
    [False, False, True, False]
    """
    return np.array(
        [
            int(hashlib.sha256(f"{name}:{pid}".encode()).hexdigest()[:8], 16) % 10 < DEV_TENTHS
            for pid in ids
        ],
        dtype=bool,
    )


def checked_dev_mask(pair_set: PairSet) -> npt.NDArray[np.bool_]:
    """:func:`dev_mask` of ``pair_set``, checked to leave both classes on both sides.

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
    >>> ps = PairSet.from_rows("toy", [
    ...     {"id": str(i), "paragraph_1": "", "paragraph_2": "", "label": str(i % 2),
    ...      "kg_1": "[]", "kg_2": "[]"} for i in range(40)])
    >>> dev, test = split_pair_set(ps)
    >>> len(dev) + len(test), len(dev) < len(test)
    (40, True)
    """
    mask = checked_dev_mask(pair_set)
    return pair_set.subset(np.flatnonzero(mask)), pair_set.subset(np.flatnonzero(~mask))
