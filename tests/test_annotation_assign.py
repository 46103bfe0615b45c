"""Balanced, seeded assignment of items to annotators (s3kg_core.annotation.assign)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.annotation.assign import assign_items, sample_items, stratified_order
from s3kg_core.errors import AnnotationError
from s3kg_core.scoring.tau import TAU_CATEGORIES as CATEGORIES

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


# -- the queue dealt out across TAU's categories (issue 58) -------------------------------------


# The queue: the first ten answers hold only extra and missing triples; an aligned
# pair comes at the eleventh, a relation mismatch at the twelfth, an entity mismatch last.
HAND_MADE = {
    **{(1, i): ("extra", "missing") if i % 3 else ("extra",) for i in range(10)},
    (1, 10): ("aligned", "extra"),
    (2, 0): ("missing", "relation_mismatch"),
    (2, 1): ("aligned",),
    (2, 2): ("extra",),
    (2, 3): ("entity_mismatch", "missing"),
}


def _covers(order, strata):
    present = {c for cs in strata.values() for c in cs}
    k = len(present)
    return {c for item in order[:k] for c in strata[item]} == present


def test_the_first_answers_cover_every_category_the_queue_holds():
    order = stratified_order(list(HAND_MADE), HAND_MADE, CATEGORIES)
    assert sorted(order) == sorted(HAND_MADE)
    # round one: aligned, then each category no answer of the round holds yet; round two
    assert order[:5] == [(1, 10), (2, 0), (2, 3), (2, 1), (1, 0)]
    assert _covers(order, HAND_MADE)
    assert {c for item in order[:3] for c in HAND_MADE[item]} == {
        "aligned", "extra", "missing", "relation_mismatch", "entity_mismatch"
    }  # fmt: skip
    assert order == stratified_order(list(HAND_MADE), HAND_MADE, CATEGORIES)  # the same twice


def test_each_category_takes_its_answers_in_the_given_order_and_a_bare_one_comes_last():
    strata = {"a": ("extra",), "b": (), "c": ("extra",), "d": ("missing",), "e": ("extra",)}
    assert stratified_order(list(strata), strata, CATEGORIES) == ["a", "d", "c", "e", "b"]
    assert stratified_order(["e", "c", "a"], strata, CATEGORIES) == ["e", "c", "a"]
    assert stratified_order([], {}, CATEGORIES) == []
    # a category TAU does not name still takes its turn, after TAU's, by name
    odd = {1: ("zeta",), 2: ("extra",), 3: ("beta",)}
    assert stratified_order([1, 2, 3], odd, CATEGORIES) == [2, 3, 1]


@settings(max_examples=80, deadline=None)
@given(
    strata=st.dictionaries(
        st.integers(0, 200),
        st.lists(st.sampled_from(CATEGORIES), min_size=1, max_size=4, unique=True),
        max_size=40,
    )
)
def test_any_queue_is_a_permutation_whose_first_k_answers_cover_its_k_categories(strata):
    items = list(strata)
    order = stratified_order(items, strata, CATEGORIES)
    assert sorted(order) == sorted(items) and len(order) == len(items)
    assert _covers(order, strata)
    assert order == stratified_order(items, {k: list(v) for k, v in strata.items()}, CATEGORIES)


_PROGRAM = """
import json, sys
from s3kg_core.annotation.assign import stratified_order
strata = {tuple(k): tuple(v) for k, v in json.loads(sys.argv[1])}
print(json.dumps(stratified_order(list(strata), strata, json.loads(sys.argv[2]))))
"""


def test_the_order_is_the_same_under_any_hash_seed():
    """String items and categories: no set or dict-of-hash order may leak into the queue."""
    strata = [[[f"run{r}", f"q{i}"], list(cs)] for (r, i), cs in HAND_MADE.items()]
    strata += [[["run9", "odd"], ["zeta", "beta", "extra"]]]
    orders = set()
    for seed in ("0", "1", "2", "12345"):
        found = subprocess.run(
            [sys.executable, "-c", _PROGRAM, json.dumps(strata), json.dumps(CATEGORIES)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        )
        orders.add(found.stdout)
    assert len(orders) == 1
    assert json.loads(orders.pop())[0] == ["run1", "q10"]
