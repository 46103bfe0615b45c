"""Which items each annotator sees: every item seen by ``overlap`` people, the work balanced.

Pure and seeded: the same items, names, overlap and seed give the same assignment. Items are
shuffled once (the order every queue follows); each item then goes to the ``overlap`` annotators
with the least work so far, preferring those who have shared the fewest items with the ones
already chosen for it (so every two annotators share items, which pairwise agreement needs),
and breaking the remaining ties by a seeded order of the names. Loads differ by at most one
item. :func:`stratified_order` then deals a queue out across TAU's categories, so its first
answers hold every category there is to judge.

Examples
--------
>>> a = assign_items(range(6), ["ann", "bob", "cy"], overlap=2, seed=1)
>>> {name: len(items) for name, items in a.by_annotator.items()}
{'ann': 4, 'bob': 4, 'cy': 4}
>>> sorted(len(who) for who in a.by_item.values())
[2, 2, 2, 2, 2, 2]
>>> a == assign_items(range(6), ["ann", "bob", "cy"], overlap=2, seed=1)
True
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import AnnotationError

__all__ = ["Assignment", "assign_items", "sample_items", "stratified_order"]

T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True)
class Assignment(Generic[T]):
    """Who sees what: each annotator's queue in order, and each item's annotators."""

    order: tuple[T, ...]
    by_annotator: dict[str, tuple[T, ...]]
    by_item: dict[T, tuple[str, ...]]


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def sample_items(items: Iterable[T], n: int | None, *, seed: int = 0) -> list[T]:
    """``n`` of ``items`` drawn without replacement (all when ``n`` is ``None`` or too big).

    Seeded and independent of the order ``items`` come in (they are sorted first); the sample
    comes back sorted.

    Examples
    --------
    >>> sample_items([5, 3, 9, 1], 2, seed=0) == sample_items([1, 9, 3, 5], 2, seed=0)
    True
    >>> sample_items([2, 1], None)
    [1, 2]
    """
    pool = sorted(set(items))  # type: ignore[type-var]
    if n is not None and n < 1:
        raise AnnotationError(f"the sample must hold at least one item; got {n}")
    if n is None or n >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, n))  # type: ignore[type-var]


def assign_items(
    items: Iterable[T], annotators: Sequence[str], overlap: int, *, seed: int = 0
) -> Assignment[T]:
    """Give every item to ``overlap`` distinct annotators, balancing the work.

    Parameters
    ----------
    items
        The items (distinct, hashable, sortable).
    annotators
        The annotators' names (distinct).
    overlap
        How many annotators see each item (1 to the number of annotators).
    seed
        Seeds the shuffle of the items and the order that breaks ties.

    Returns
    -------
    Assignment
        ``order`` (the shuffled items), ``by_annotator`` (each queue, in that order) and
        ``by_item`` (each item's annotators, in the order chosen).

    Raises
    ------
    AnnotationError
        If there are no annotators or items, a name repeats, or ``overlap`` is out of range.
    """
    names = list(annotators)
    if not names:
        raise AnnotationError("name at least one annotator")
    repeated = sorted(n for n, c in Counter(names).items() if c > 1)
    if repeated:
        raise AnnotationError(f"annotators are named twice: {', '.join(repeated)}")
    if isinstance(overlap, bool) or not isinstance(overlap, int) or not 1 <= overlap <= len(names):
        raise AnnotationError(
            f"overlap must be between 1 and the number of annotators ({len(names)}); "
            f"got {overlap!r}"
        )
    order = sorted(set(items))  # type: ignore[type-var]
    if not order:
        raise AnnotationError("there are no items to assign")
    rng = random.Random(seed)
    rng.shuffle(order)
    rank = {name: i for i, name in enumerate(rng.sample(names, len(names)))}
    load = dict.fromkeys(names, 0)
    shared: Counter[tuple[str, str]] = Counter()
    by_item: dict[T, tuple[str, ...]] = {}
    for item in order:
        chosen: list[str] = []
        for _ in range(overlap):
            best = min(
                (n for n in names if n not in chosen),
                key=lambda n: (load[n], sum(shared[_pair(n, c)] for c in chosen), rank[n]),
            )
            for other in chosen:
                shared[_pair(best, other)] += 1
            chosen.append(best)
            load[best] += 1
        by_item[item] = tuple(chosen)
    by_annotator = {n: tuple(i for i in order if n in by_item[i]) for n in names}
    return Assignment(tuple(order), by_annotator, by_item)


def stratified_order(
    items: Sequence[T], strata: Mapping[T, Collection[str]], categories: Sequence[str]
) -> list[T]:
    """``items`` dealt out in rounds across their categories, so every category comes early.

    Each round gives each category present, in the order of ``categories`` (then any other
    category, by name), the first item in ``items``' order that holds it and is not dealt
    yet, unless an item dealt earlier in the same round already holds it; a category with no
    item left drops out. So the first round, at most one item a category, covers every
    category the items hold; each category takes its items in the given order. Pure: the
    same arguments give the same order (no set or hash order is used); an item without any
    category comes last, in its order.

    Parameters
    ----------
    items
        The items in their base order (a task's seeded shuffle).
    strata
        Each item's categories (an item may hold several).
    categories
        The order of the categories in each round.

    Returns
    -------
    list
        ``items`` reordered.

    Examples
    --------
    >>> strata = {1: ["extra"], 2: ["extra", "missing"], 3: ["aligned", "extra"], 4: ["missing"]}
    >>> stratified_order([1, 2, 3, 4], strata, ["aligned", "extra", "missing"])
    [3, 2, 1, 4]
    """
    order = list(items)
    held = {item: tuple(strata.get(item, ())) for item in order}
    named = [c for c in categories if any(c in cs for cs in held.values())]
    others = sorted({c for cs in held.values() for c in cs if c not in categories})
    queues = {c: [i for i in order if c in held[i]] for c in [*named, *others]}
    cursor = dict.fromkeys(queues, 0)
    live = list(queues)
    dealt: set[T] = set()
    out: list[T] = []
    while live:
        covered: set[str] = set()
        for category in list(live):
            if category in covered:
                continue
            waiting, at = queues[category], cursor[category]
            while at < len(waiting) and waiting[at] in dealt:
                at += 1
            cursor[category] = at
            if at == len(waiting):
                live.remove(category)
                continue
            item = waiting[at]
            dealt.add(item)
            out.append(item)
            covered.update(held[item])
    return out + [i for i in order if i not in dealt]
