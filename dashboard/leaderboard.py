"""The Overview's leaderboard as the reader sees it: one table per dataset, and its notes.

Pure functions on :func:`s3kg_core.analysis.leaderboard.rank_summaries`' frame and
:func:`dashboard.data.reads.load_runs`'s: the table shown is the table downloaded (same rows, same
order), and the note of which runs swapped places says what a move of alpha did.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import pandas as pd

from dashboard.escape import md
from dashboard.run_names import run_label_map
from s3kg_core.analysis.leaderboard import REFERENCE_ALPHA, rank_change_text, swaps

__all__ = ["TABLE_COLUMNS", "run_url", "swap_note", "table"]

TABLE_COLUMNS = (
    "dataset",
    "rank",
    "change",
    "run",
    "name",
    "mean",
    "low",
    "high",
    "tied",
    "temperature",
    "run_id",
    "model",
    "extractor",
    "n",
    "gold_sim",
    "ctx_sim",
    "cus",
    "scoring",
    "run_page",
)
"""The columns of :func:`table`, in the order shown: ``mean``/``low``/``high`` are the ranked
score's."""


def run_url(run_id: int, alpha: float | None = None) -> str:
    """The Run page of one run (with alpha, so the link keeps the view).

    Examples
    --------
    >>> run_url(3, 0.9)
    '/Run?run=3&alpha=0.9'
    """
    params = {"run": str(int(run_id))}
    if alpha is not None:
        params["alpha"] = f"{alpha:g}"
    return f"/Run?{urlencode(params)}"


def table(
    board: pd.DataFrame,
    runs: pd.DataFrame,
    partial: Mapping[int, tuple[int, int]],
    metric: str,
    alpha: float,
) -> pd.DataFrame:
    """The leaderboard's rows as shown and downloaded (:data:`TABLE_COLUMNS`, board order).

    ``run`` is the run's label (``runs["label"]``: the display name and what tells runs of
    one name apart, :mod:`dashboard.run_names`), ``name`` its display name and ``model`` the
    model as the run names it;
    ``change`` the rank change against alpha 0.5 (``▲2``); ``tied`` says ``tied with #1``
    where the run's interval overlaps its dataset leader's.

    Examples
    --------
    >>> board = pd.DataFrame({"dataset": ["d", "d"], "rank": [1, 2], "run_id": [2, 1],
    ...     "model": ["m", "m"], "temperature": [0.7, 0.0], "extractor": ["x", "x"],
    ...     "n": [30, 30], "gold_sim": [.5, .4], "ctx_sim": [.5, .4], "cus": [.5, .4],
    ...     "low": [.45, .35], "high": [.55, .46], "tied": [False, True], "rank_change": [1, -1],
    ...     "reference_rank": [2, 1]})
    >>> runs = pd.DataFrame({"run_id": [1, 2], "model_id": ["org/m", "org/m"],
    ...     "label": ["m · T=0", "m · T=0.7"]})
    >>> t = table(board, runs, {}, "cus", 0.9)
    >>> t[["rank", "change", "run", "name", "model", "run_id"]].values.tolist()
    [[1, '▲1', 'm · T=0.7', 'm', 'org/m', 2], [2, '▼1', 'm · T=0', 'm', 'org/m', 1]]
    >>> t["tied"].tolist()
    ['', 'tied with #1']
    """
    model_ids = dict(zip(runs["run_id"].astype(int), runs["model_id"].astype(str), strict=True))
    if "label" in runs:
        labels = dict(zip(runs["run_id"].astype(int), runs["label"].astype(str), strict=True))
    else:  # a frame without labels: the board's own runs, told apart
        labels = run_label_map(board)
    out = pd.DataFrame(
        {
            "dataset": board["dataset"].astype(str),
            "rank": board["rank"].astype(int),
            "change": [rank_change_text(int(c)) for c in board["rank_change"]],
            "run": [labels[int(r)] for r in board["run_id"]],
            "name": board["model"].astype(str),
            "model": [model_ids.get(int(r), "") for r in board["run_id"]],
            "temperature": board["temperature"].astype(float),
            "extractor": board["extractor"].astype(str),
            "run_id": board["run_id"].astype(int),
            "n": board["n"].astype(int),
            "mean": board[metric].astype(float),
            "low": board["low"].astype(float),
            "high": board["high"].astype(float),
            "tied": ["tied with #1" if t else "" for t in board["tied"]],
            "gold_sim": board["gold_sim"].astype(float),
            "ctx_sim": board["ctx_sim"].astype(float),
            "cus": board["cus"].astype(float),
            "scoring": [
                f"partial: {partial[int(r)][0]} of {partial[int(r)][1]} scored"
                if int(r) in partial
                else "complete"
                for r in board["run_id"]
            ],
            "run_page": [run_url(int(r), alpha) for r in board["run_id"]],
        }
    )
    return out.reset_index(drop=True).loc[:, list(TABLE_COLUMNS)]


def swap_note(board: pd.DataFrame, alpha: float) -> str | None:
    r"""One Markdown line: the runs that changed places against alpha 0.5, or that none did.

    ``None`` at alpha 0.5 itself. Names are escaped (:func:`dashboard.escape.md`); at most
    five swaps are named.

    Examples
    --------
    >>> b = pd.DataFrame({"dataset": ["d", "d"], "run_id": [2, 1], "model": ["b*", "a"],
    ...     "temperature": [0.0, 0.7], "rank": [1, 2], "reference_rank": [2, 1]})
    >>> swap_note(b, 0.9)
    'At alpha 0.9 against 0.5: in d, b\\* T=0 (run 2) moved above a T=0.7 (run 1).'
    >>> swap_note(b.assign(reference_rank=[1, 2]), 0.9)
    'At alpha 0.9 against 0.5: no run changed places.'
    """
    found = swaps(board)
    if alpha == REFERENCE_ALPHA:
        return None
    if not found:
        return f"At alpha {alpha:g} against {REFERENCE_ALPHA:g}: no run changed places."
    names = {
        int(r.run_id): f"{md(r.model)} T={float(r.temperature):g} (run {int(r.run_id)})"
        for r in board.itertuples()
    }
    parts = [f"in {md(d)}, {names[a]} moved above {names[b]}" for d, a, b in found[:5]]
    more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
    return f"At alpha {alpha:g} against {REFERENCE_ALPHA:g}: " + "; ".join(parts) + more + "."
