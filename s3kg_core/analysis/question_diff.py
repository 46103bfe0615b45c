"""One question in two runs, triple by triple: what each answer KG has, and each gold triple's fate.

Nothing here re-derives a score: the answer triples come as the scorer keyed them
(:attr:`Explanation.triples_1 <s3kg_core.scoring.explain.Explanation.triples_1>` keys) and
each gold triple's category is TAU's (:class:`~s3kg_core.scoring.tau.TauResult`, against the
gold KG). :func:`question_diff` lines up one question's two answers; :func:`pair_changes`
counts, over every question two runs share, the gold triples whose TAU category changed from
run A to run B ("B lost 41 gold triples that A aligned; 12 of them now relation mismatches").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..kg import Triple
from ..scoring.tau import TauResult

__all__ = [
    "CATEGORIES",
    "GoldFate",
    "QuestionDiff",
    "gold_categories",
    "pair_changes",
    "question_diff",
]

CATEGORIES = (
    "aligned",
    "relation_mismatch",
    "entity_mismatch",
    "roles_swapped",
    "missing",
    "absent",
)
"""A gold triple's TAU category in one run; ``absent``: not in that run's gold KG."""


def gold_categories(result: TauResult) -> dict[Triple, str]:
    """Each gold triple of a TAU result -> its category (aligned, a mismatch, missing).

    Examples
    --------
    >>> r = TauResult(missing=(Triple("a", "r", "b"),))
    >>> gold_categories(r)
    {Triple(head='a', relation='r', tail='b'): 'missing'}
    """
    out: dict[Triple, str] = {}
    for pair in result.aligned:
        out.setdefault(pair.gold, "aligned")
    for m in result.relation_mismatch:
        out.setdefault(m.gold, "relation_mismatch")
    for m in result.entity_mismatch:
        out.setdefault(m.gold, "entity_mismatch")
    for m in result.roles_swapped:
        out.setdefault(m.gold, "roles_swapped")
    for t in result.missing:
        out.setdefault(t, "missing")
    return out


@dataclass(frozen=True)
class GoldFate:
    """One gold triple and its TAU category in run A and in run B."""

    gold: Triple
    a: str
    b: str

    @property
    def changed(self) -> bool:
        """Whether the category differs between the runs."""
        return self.a != self.b


@dataclass(frozen=True)
class QuestionDiff:
    """One question's two answer KGs side by side, and every gold triple's fate in each.

    Attributes
    ----------
    both, only_a, only_b
        Answer triples (as the scorer keys them) both answers have, only A's, only B's; each
        in the order its answer lists them.
    gold
        Every gold triple of either run's TAU result with its category in A and in B (in
        A's order, then B's own).
    """

    both: tuple[Triple, ...]
    only_a: tuple[Triple, ...]
    only_b: tuple[Triple, ...]
    gold: tuple[GoldFate, ...]

    def changes(self) -> Counter[tuple[str, str]]:
        """``(category in A, category in B) -> gold triples`` over the changed ones."""
        return Counter((f.a, f.b) for f in self.gold if f.changed)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (triples as lists)."""
        return {
            "both": [t.to_list() for t in self.both],
            "only_a": [t.to_list() for t in self.only_a],
            "only_b": [t.to_list() for t in self.only_b],
            "gold": [{"gold": f.gold.to_list(), "a": f.a, "b": f.b} for f in self.gold],
        }


def _fates(tau_a: TauResult, tau_b: TauResult) -> tuple[GoldFate, ...]:
    in_a, in_b = gold_categories(tau_a), gold_categories(tau_b)
    order = list(dict.fromkeys([*in_a, *in_b]))
    return tuple(GoldFate(g, in_a.get(g, "absent"), in_b.get(g, "absent")) for g in order)


def question_diff(
    answer_a: Sequence[Triple],
    answer_b: Sequence[Triple],
    tau_a: TauResult,
    tau_b: TauResult,
) -> QuestionDiff:
    """Line up one question's answers in runs A and B.

    ``answer_a`` and ``answer_b`` are the answer triples as the scorer keyed them (the keys
    of ``Explanation.triples_1``); ``tau_a`` and ``tau_b`` TAU's results of each answer
    against its gold KG.

    Examples
    --------
    >>> from s3kg_core.scoring.tau import AlignedTriple
    >>> g1, g2 = Triple("paris", "be capital of", "france"), Triple("paris", "have", "louvre")
    >>> a = [Triple("paris", "be capital of", "france"), Triple("paris", "have", "louvre")]
    >>> b = [Triple("paris", "be capital of", "france"), Triple("paris", "be in", "texas")]
    >>> ta = TauResult(aligned=(AlignedTriple(g1, a[0], 1.0), AlignedTriple(g2, a[1], 1.0)))
    >>> tb = TauResult(aligned=(AlignedTriple(g1, b[0], 1.0),), missing=(g2,))
    >>> d = question_diff(a, b, ta, tb)
    >>> len(d.both), [t.tail for t in d.only_a], [t.tail for t in d.only_b]
    (1, ['louvre'], ['texas'])
    >>> dict(d.changes())
    {('aligned', 'missing'): 1}
    """
    keys_b = set(answer_b)
    keys_a = set(answer_a)
    return QuestionDiff(
        both=tuple(dict.fromkeys(t for t in answer_a if t in keys_b)),
        only_a=tuple(dict.fromkeys(t for t in answer_a if t not in keys_b)),
        only_b=tuple(dict.fromkeys(t for t in answer_b if t not in keys_a)),
        gold=_fates(tau_a, tau_b),
    )


def pair_changes(
    taus_a: Mapping[int, TauResult], taus_b: Mapping[int, TauResult], items: Iterable[int]
) -> Counter[tuple[str, str]]:
    """Over ``items`` (questions both runs answered): ``(A's category, B's) -> gold triples``.

    Only gold triples whose category changed are counted; a question either run lacks a TAU
    result for is left out.

    Examples
    --------
    >>> g = Triple("a", "r", "b")
    >>> from s3kg_core.scoring.tau import AlignedTriple
    >>> ta = {1: TauResult(aligned=(AlignedTriple(g, g, 1.0),)), 2: TauResult(missing=(g,))}
    >>> tb = {1: TauResult(missing=(g,)), 2: TauResult(missing=(g,))}
    >>> dict(pair_changes(ta, tb, [1, 2, 3]))
    {('aligned', 'missing'): 1}
    """
    total: Counter[tuple[str, str]] = Counter()
    for item in items:
        if item in taus_a and item in taus_b:
            total.update((f.a, f.b) for f in _fates(taus_a[item], taus_b[item]) if f.changed)
    return total
