"""Pandas reference versions of the Run comparison's DuckDB queries, for the tests.

The dashboard finds comparable pairs and pages its question picker in DuckDB
(:mod:`s3kg_core.store.compare_queries`); these are the plain-pandas answers the tests hold
those queries to.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["comparable_pairs", "question_choices"]


def comparable_pairs(frame: pd.DataFrame) -> dict[tuple[int, int], int]:
    """Every ordered pair of scored runs with answers to the same questions -> how many.

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 2, 2, 3], "item_id": [1, 2, 1, 2, 9]})
    >>> comparable_pairs(f)
    {(1, 2): 2, (2, 1): 2}
    """
    items = {int(r): set(g["item_id"].astype(int)) for r, g in frame.groupby("run_id")}
    return {
        (a, b): len(items[a] & items[b])
        for a in sorted(items)
        for b in sorted(items)
        if a != b and items[a] & items[b]
    }


def question_choices(
    deltas: pd.DataFrame, text: str, page: int, size: int = 50, keep: int | None = None
) -> tuple[pd.DataFrame, int, int]:
    """One page of the shared questions for a picker: ``(rows, matches, page)``.

    A question matches when each word of ``text`` occurs (any case) in its external id or its
    question; the order is ``deltas``' (biggest regression first). ``keep``: an item id whose
    page is returned instead of ``page`` when it matches (the question a link opened). The page
    is clamped to the last one.

    Examples
    --------
    >>> d = pd.DataFrame({"item_id": [1, 2, 3], "ext_id": ["a", "b", "c"],
    ...                   "question": ["Who?", "Why?", "Who else?"]})
    >>> rows, total, page = question_choices(d, "who", 0, size=1)
    >>> rows["item_id"].tolist(), total, page
    ([1], 2, 0)
    >>> question_choices(d, "", 0, size=2, keep=3)[0]["item_id"].tolist()
    [3]
    """
    found = deltas
    for word in text.lower().split():
        hit = found["ext_id"].astype(str).str.lower().str.contains(word, regex=False) | found[
            "question"
        ].astype(str).str.lower().str.contains(word, regex=False)
        found = found[hit]
    total = len(found)
    last = max(0, -(-total // size) - 1)
    if keep is not None:
        where = (found["item_id"] == keep).to_numpy().nonzero()[0]
        if len(where):
            page = int(where[0]) // size
    page = min(max(0, page), last)
    return found.iloc[page * size : (page + 1) * size], total, page
