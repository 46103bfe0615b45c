"""The Run comparison's triple-level diff as tables and one summary line.

Pure functions on :class:`s3kg_core.analysis.question_diff.QuestionDiff` and the pair counts of
:func:`dashboard.data.comparison.pair_gold_changes`. Tables hold plain text for ``st.dataframe``;
the summary line is Markdown with nothing user-provided in it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from s3kg_core.analysis.question_diff import QuestionDiff

__all__ = ["CATEGORY_NAMES", "answer_table", "gold_table", "pair_summary"]

CATEGORY_NAMES = {
    "aligned": "aligned",
    "relation_mismatch": "relation mismatch",
    "entity_mismatch": "entity mismatch",
    "roles_swapped": "roles swapped",
    "missing": "missing",
    "absent": "not in this run's gold KG",
}
"""TAU's category names as the page shows them."""


def answer_table(diff: QuestionDiff) -> pd.DataFrame:
    """The answer triples of both runs: ``in, head, relation, tail`` (both, only A, only B).

    Examples
    --------
    >>> from s3kg_core.kg import Triple
    >>> d = QuestionDiff((Triple("a", "r", "b"),), (), (Triple("c", "s", "d"),), ())
    >>> answer_table(d).values.tolist()
    [['both', 'a', 'r', 'b'], ['only B', 'c', 's', 'd']]
    """
    rows = [
        (side, t.head, t.relation, t.tail)
        for side, triples in (("both", diff.both), ("only A", diff.only_a), ("only B", diff.only_b))
        for t in triples
    ]
    return pd.DataFrame(rows, columns=["in", "head", "relation", "tail"])


def gold_table(diff: QuestionDiff) -> pd.DataFrame:
    """Every gold triple with TAU's category in A and in B; changed ones first.

    Columns ``gold triple, in A, in B, changed``.

    Examples
    --------
    >>> from s3kg_core.kg import Triple
    >>> from s3kg_core.analysis.question_diff import GoldFate
    >>> g = Triple("a", "r", "b")
    >>> d = QuestionDiff((), (), (), (GoldFate(g, "missing", "missing"),
    ...                               GoldFate(Triple("x", "y", "z"), "aligned", "missing")))
    >>> gold_table(d).values.tolist()
    [['x y z', 'aligned', 'missing', True], ['a r b', 'missing', 'missing', False]]
    """
    rows = [
        (
            f"{f.gold.head} {f.gold.relation} {f.gold.tail}",
            CATEGORY_NAMES.get(f.a, f.a),
            CATEGORY_NAMES.get(f.b, f.b),
            f.changed,
        )
        for f in diff.gold
    ]
    frame = pd.DataFrame(rows, columns=["gold triple", "in A", "in B", "changed"])
    return frame.sort_values("changed", ascending=False, kind="stable").reset_index(drop=True)


def pair_summary(changes: Mapping[tuple[str, str], int], questions: int) -> str:
    """One line on how TAU's categories of the gold triples moved from run A to run B.

    Examples
    --------
    >>> pair_summary({("aligned", "missing"): 30, ("aligned", "relation_mismatch"): 11,
    ...               ("missing", "aligned"): 7}, 30)
    'Over 30 shared questions, B lost 41 gold triples that A aligned (11 of them now relation mismatches, 0 entity mismatches, 0 roles swapped, 30 missing) and gained 7 that A did not align.'
    """  # noqa: E501
    lost = {b: n for (a, b), n in changes.items() if a == "aligned" and b != "absent"}
    gained = sum(n for (a, b), n in changes.items() if b == "aligned" and a != "absent")
    total = sum(lost.values())
    return (
        f"Over {questions} shared questions, B lost {total} gold triples that A aligned "
        f"({lost.get('relation_mismatch', 0)} of them now relation mismatches, "
        f"{lost.get('entity_mismatch', 0)} entity mismatches, "
        f"{lost.get('roles_swapped', 0)} roles swapped, {lost.get('missing', 0)} "
        f"missing) and gained {gained} that A did not align."
    )
