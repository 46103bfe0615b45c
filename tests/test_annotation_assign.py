"""Balanced, seeded assignment of items to annotators (s3kg_core.annotation.assign)."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.annotation.assign import assign_items, sample_items
from s3kg_core.errors import AnnotationError

NAMES = ["ann", "bob", "cy", "dee", "eve", "fay"]


@settings(max_examples=60, deadline=None)
@given(
    n_items=st.integers(1, 60),
    n_names=st.integers(1, 6),
    data=st.data(),
    seed=st.integers(0, 2**16),
)
def test_every_item_has_overlap_distinct_annotators_and_loads_differ_by_one_at_most(
    n_items, n_names, data, seed
):
    names = NAMES[:n_names]
    overlap = data.draw(st.integers(1, n_names))
    a = assign_items(range(n_items), names, overlap, seed=seed)
    assert sorted(a.order) == list(range(n_items))
    for item, who in a.by_item.items():
        assert len(who) == len(set(who)) == overlap
        assert all(item in a.by_annotator[w] for w in who)
    loads = [len(q) for q in a.by_annotator.values()]
    assert sum(loads) == n_items * overlap
    assert max(loads) - min(loads) <= 1
    for queue in a.by_annotator.values():  # each queue follows the one shuffled order
        positions = [a.order.index(i) for i in queue]
        assert positions == sorted(positions)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_the_same_seed_gives_the_same_assignment_whatever_the_input_order(seed):
    items = [(r, i) for r in (1, 2) for i in range(9)]
    one = assign_items(items, NAMES[:4], 2, seed=seed)
    two = assign_items(list(reversed(items)), NAMES[:4], 2, seed=seed)
    assert one == two


def test_different_seeds_give_different_queues():
    queues = {tuple(assign_items(range(30), NAMES[:3], 2, seed=s).order) for s in range(5)}
    assert len(queues) == 5


def test_every_two_annotators_share_items_when_the_overlap_allows():
    # four annotators, overlap 2: a round-robin would pair (ann, bob) and (cy, dee) only
    a = assign_items(range(24), NAMES[:4], 2, seed=0)
    shared = Counter(tuple(sorted(w)) for w in a.by_item.values())
    assert set(shared) == set(itertools.combinations(sorted(NAMES[:4]), 2))
    assert max(shared.values()) - min(shared.values()) <= 1


@pytest.mark.parametrize(
    ("names", "overlap", "message"),
    [
        ([], 1, "at least one annotator"),
        (["ann", "ann"], 1, "named twice: ann"),
        (["ann", "bob"], 3, "between 1 and the number of annotators \\(2\\)"),
        (["ann", "bob"], 0, "between 1"),
        (["ann", "bob"], True, "between 1"),
    ],
)
def test_bad_requests_are_named_errors(names, overlap, message):
    with pytest.raises(AnnotationError, match=message):
        assign_items(range(3), names, overlap)


def test_no_items_is_an_error():
    with pytest.raises(AnnotationError, match="no items"):
        assign_items([], ["ann"], 1)


def test_a_sample_is_seeded_sorted_and_capped():
    pool = list(range(100))
    one = sample_items(pool, 10, seed=4)
    assert one == sorted(one) and len(set(one)) == 10
    assert one == sample_items(reversed(pool), 10, seed=4)
    assert one != sample_items(pool, 10, seed=5)
    assert sample_items(pool[:5], 10) == pool[:5]
    with pytest.raises(AnnotationError, match="at least one"):
        sample_items(pool, 0)
