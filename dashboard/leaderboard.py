"""The Overview's leaderboard as the reader sees it: one table per dataset, and its notes.

Pure functions on :func:`s3kg_core.analysis.leaderboard.rank_summaries`' frame and
:func:`dashboard.data.reads.load_runs`'s: the table shown is the table downloaded (same rows, same
order), the note of which runs swapped places says what a move of alpha did, and the note of
tests names the test behind each run's verdict against #1.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

import pandas as pd

from dashboard.escape import md
from dashboard.run_names import run_label_map
from s3kg_core.analysis.compare import Verdict
from s3kg_core.analysis.leaderboard import REFERENCE_ALPHA, rank_change_text, swaps

__all__ = ["TABLE_COLUMNS", "run_url", "swap_note", "table", "test_note"]

TABLE_COLUMNS = (
    "dataset",
    "rank",
    "change",
    "run",
    "name",
    "mean",
    "low",
    "high",
    "verdict",
    "test",
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
    ``change`` the rank change against alpha 0.5 (``▲2``); ``verdict`` the run against its
    dataset's #1 (:meth:`~s3kg_core.analysis.compare.Verdict.words`: ``clearly lower``, ``no
    clear difference``; empty for the #1) and ``test`` the test that decided
    (:meth:`~s3kg_core.analysis.compare.Verdict.test`).

    Examples
    --------
    >>> from s3kg_core.analysis.compare import Verdict
    >>> board = pd.DataFrame({"dataset": ["d", "d"], "rank": [1, 2], "run_id": [2, 1],
    ...     "model": ["m", "m"], "temperature": [0.7, 0.0], "extractor": ["x", "x"],
    ...     "n": [30, 30], "gold_sim": [.5, .4], "ctx_sim": [.5, .4], "cus": [.5, .4],
    ...     "low": [.45, .35], "high": [.55, .46], "verdict": [None, Verdict(None, True, 30)],
    ...     "rank_change": [1, -1], "reference_rank": [2, 1]})
    >>> runs = pd.DataFrame({"run_id": [1, 2], "model_id": ["org/m", "org/m"],
    ...     "label": ["m · T=0", "m · T=0.7"]})
    >>> t = table(board, runs, {}, "cus", 0.9)
    >>> t[["rank", "change", "run", "name", "model", "run_id"]].values.tolist()
    [[1, '▲1', 'm · T=0.7', 'm', 'org/m', 2], [2, '▼1', 'm · T=0', 'm', 'org/m', 1]]
    >>> t[["verdict", "test"]].values.tolist()
    [['', ''], ['no clear difference', 'paired bootstrap over 30 shared questions']]
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
            "verdict": [v.words() if v is not None else "" for v in board["verdict"]],
            "test": [v.test() if v is not None else "" for v in board["verdict"]],
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


def test_note(shown: pd.DataFrame) -> str | None:
    r"""One Markdown line under a dataset's table: the test behind each verdict against #1.

    ``shown`` is one dataset's rows of :func:`table`. Every run compared with #1 by one test
    gives one clause; where runs answered other questions than #1 (the overlap of intervals,
    not the paired test) they are named, and the line says so. ``None`` with no run below #1.

    Examples
    --------
    >>> rows = pd.DataFrame({"run": ["a", "b*", "c"], "rank": [1, 2, 3],
    ...     "test": ["", "paired bootstrap over 30 shared questions",
    ...              "intervals of different question sets"]})
    >>> print(test_note(rows))
    **vs #1**, each run's mean against the dataset's #1: b\* by the paired bootstrap over 30 shared questions; c by the intervals of different question sets: it and #1 answered different sets of questions, so only the two 95% intervals compare (overlapping: no clear difference).
    >>> print(test_note(rows.iloc[:2]))
    **vs #1**, each run's mean against the dataset's #1: by the paired bootstrap over 30 shared questions, as the Run comparison and `s3kg check` compare two runs.
    """  # noqa: E501
    below = shown[shown["test"] != ""]
    if below.empty:
        return None
    head = "**vs #1**, each run's mean against the dataset's #1: "
    unpaired = Verdict(None, paired=False).test()  # last: the clause its note follows
    tests = sorted(dict.fromkeys(below["test"]), key=lambda t: t == unpaired)
    if tests == [unpaired] or len(tests) > 1:
        clauses = [
            f"{', '.join(md(r) for r in below.loc[below['test'] == t, 'run'])} by the {t}"
            for t in tests
        ]
        text = head + "; ".join(clauses)
        if unpaired in tests:
            who = "it" if int((below["test"] == unpaired).sum()) == 1 else "they"
            text += (
                f": {who} and #1 answered different sets of questions, so only the two 95% "
                "intervals compare (overlapping: no clear difference)"
            )
        return text + "."
    return f"{head}by the {tests[0]}, as the Run comparison and `s3kg check` compare two runs."


def swap_note(board: pd.DataFrame, alpha: float, *, markdown: bool = True) -> str | None:
    r"""One Markdown line: the runs that changed places against alpha 0.5, or that none did.

    ``None`` at alpha 0.5 itself. Names are escaped (:func:`dashboard.escape.md`); at most
    five swaps are named. ``markdown=False``: the same line as plain text (names as typed),
    for a sink that sets text, never markup (the Overview's live leaderboard).

    Examples
    --------
    >>> b = pd.DataFrame({"dataset": ["d", "d"], "run_id": [2, 1], "model": ["b*", "a"],
    ...     "temperature": [0.0, 0.7], "rank": [1, 2], "reference_rank": [2, 1]})
    >>> swap_note(b, 0.9)
    'At alpha 0.9 against 0.5: in d, b\\* T=0 (run 2) moved above a T=0.7 (run 1).'
    >>> swap_note(b.assign(reference_rank=[1, 2]), 0.9)
    'At alpha 0.9 against 0.5: no run changed places.'
    >>> swap_note(b, 0.9, markdown=False)
    'At alpha 0.9 against 0.5: in d, b* T=0 (run 2) moved above a T=0.7 (run 1).'
    """
    esc = md if markdown else str
    found = swaps(board)
    if alpha == REFERENCE_ALPHA:
        return None
    if not found:
        return f"At alpha {alpha:g} against {REFERENCE_ALPHA:g}: no run changed places."
    names = {
        int(r.run_id): f"{esc(r.model)} T={float(r.temperature):g} (run {int(r.run_id)})"
        for r in board.itertuples()
    }
    parts = [f"in {esc(d)}, {names[a]} moved above {names[b]}" for d, a, b in found[:5]]
    more = f"; and {len(found) - 5} more" if len(found) > 5 else ""
    return f"At alpha {alpha:g} against {REFERENCE_ALPHA:g}: " + "; ".join(parts) + more + "."
