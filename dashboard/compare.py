"""Two runs side by side: which runs can be compared, and the per-question change in scores.

Pure functions on the frames of :mod:`dashboard.data` (the blended per-answer scores and the
item texts), for the Run comparison page.
"""

from __future__ import annotations

import pandas as pd

__all__ = ["DELTA_COLUMNS", "comparable_pairs", "default_pair", "partners", "question_deltas"]

_SCORES = ("gold_sim", "ctx_sim", "cus")
DELTA_COLUMNS = (
    "item_id",
    "ext_id",
    "question",
    *(f"{s}_{side}" for s in _SCORES for side in ("a", "b")),
    *(f"d_{s}" for s in _SCORES),
)
"""The columns of :func:`question_deltas`."""


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


def partners(pairs: dict[tuple[int, int], int], run_a: int) -> list[int]:
    """The runs that share questions with ``run_a``, in id order."""
    return [b for a, b in pairs if a == run_a]


def default_pair(runs: pd.DataFrame, pairs: dict[tuple[int, int], int]) -> tuple[int, int] | None:
    """The pair to open with: one model at two temperatures if any, else the most shared.

    Two runs of the same model and extractor at two temperatures (the lower one as A) come
    first, else the pair sharing the most questions; ``None`` when no pair shares any.

    ``runs`` is :func:`dashboard.data.load_runs`'s frame.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": [1, 2, 3], "dataset": ["d"] * 3,
    ...                      "model": ["m", "m", "n"], "temperature": [0.7, 0.0, 0.0],
    ...                      "extractor": ["x"] * 3})
    >>> default_pair(runs, {(1, 2): 5, (2, 1): 5, (1, 3): 5, (3, 1): 5})
    (2, 1)
    """
    if not pairs:
        return None
    info = runs.set_index("run_id")
    same_model = [
        (a, b)
        for a, b in pairs
        if a in info.index
        and b in info.index
        and info.at[a, "model"] == info.at[b, "model"]
        and info.at[a, "extractor"] == info.at[b, "extractor"]
        and float(info.at[a, "temperature"]) < float(info.at[b, "temperature"])
    ]
    if same_model:
        return min(same_model, key=lambda p: (-pairs[p], p))
    return min(pairs, key=lambda p: (-pairs[p], p))


def question_deltas(
    frame: pd.DataFrame, run_a: int, run_b: int, questions: pd.DataFrame
) -> pd.DataFrame:
    """GoldSim, CtxSim and CUS of each question both runs answered, and B minus A.

    Biggest regression first: sorted by ``d_cus`` ascending (then by item). ``frame`` is the
    blended per-answer frame (``reblend``), ``questions`` has ``item_id, ext_id, question``.
    Columns: :data:`DELTA_COLUMNS`.

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 2, 2], "item_id": [1, 2, 1, 2],
    ...                   "gold_sim": [.5, .5, .4, .7], "ctx_sim": [.5, .5, .5, .5],
    ...                   "cus": [.5, .5, .45, .6]})
    >>> q = pd.DataFrame({"item_id": [1, 2], "ext_id": ["q1", "q2"], "question": ["a?", "b?"]})
    >>> question_deltas(f, 1, 2, q)[["item_id", "d_cus"]].round(2).to_dict("records")
    [{'item_id': 1, 'd_cus': -0.05}, {'item_id': 2, 'd_cus': 0.1}]
    """
    cols = ["item_id", *_SCORES]
    a = frame.loc[frame["run_id"] == run_a, cols]
    b = frame.loc[frame["run_id"] == run_b, cols]
    both = a.merge(b, on="item_id", suffixes=("_a", "_b"))
    for s in _SCORES:
        both[f"d_{s}"] = both[f"{s}_b"] - both[f"{s}_a"]
    texts = questions[["item_id", "ext_id", "question"]]
    both = both.merge(texts, on="item_id", how="left")
    both["ext_id"] = both["ext_id"].fillna("").astype(str)
    both["question"] = both["question"].fillna("").astype(str)
    both["item_id"] = both["item_id"].astype(int)
    return (
        both.sort_values(["d_cus", "item_id"], kind="stable")
        .reset_index(drop=True)
        .loc[:, list(DELTA_COLUMNS)]
    )
