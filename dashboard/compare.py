"""Two runs side by side: which runs can be compared, and the per-question change in scores.

Pure functions on the frames of :mod:`dashboard.data` (the blended per-answer scores and the
item texts), for the Run comparison page. The per-question change itself is the library's
(:func:`s3kg_core.stages.compare.question_deltas`, shared with ``s3kg check``).
"""

from __future__ import annotations

import math

import pandas as pd

from s3kg_core.stages.compare import DELTA_COLUMNS, PairedDifference, question_deltas

__all__ = [
    "DELTA_COLUMNS",
    "LIVE_CHANGES_MAX",
    "TABLE_MAX",
    "default_pair",
    "ends",
    "interval_text",
    "partners",
    "question_deltas",
    "verdict",
]


LIVE_CHANGES_MAX = 250
"""Shared questions up to which the page counts the gold triples B lost and gained as it opens.

The count explains every answer of both runs with TAU where the stored TAU table does not
hold it (2.6 s for two runs of 1,000 answers on two cores, which was over the 2 s a first visit
may take at 20,000 answers with the earlier limit of 1,000): past this many shared questions it
waits for the reader to ask (about 15 s for two runs of 5,000 answers)."""


TABLE_MAX = 200
"""Rows of the page's table of shared questions: past this many, the biggest regressions and
the biggest improvements, half each (the download and the picker hold every question; the
table is resent on every alpha step, 1,000 rows made it a fifth slower at 100,000 answers)."""


def ends(frame: pd.DataFrame, limit: int | None = None) -> pd.DataFrame:
    """The first and last ``limit`` rows of ``frame`` together (all of it when it is shorter).

    ``limit`` defaults to :data:`TABLE_MAX`.

    Examples
    --------
    >>> ends(pd.DataFrame({"d": range(10)}), 4)["d"].tolist()
    [0, 1, 8, 9]
    >>> len(ends(pd.DataFrame({"d": range(3)}), 4))
    3
    """
    limit = TABLE_MAX if limit is None else limit
    if len(frame) <= limit:
        return frame
    return pd.concat([frame.head(limit // 2), frame.tail(limit - limit // 2)])


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


def interval_text(difference: PairedDifference) -> str:
    """A paired difference's interval as a metric shows it: ``-0.09 … +0.01``.

    Examples
    --------
    >>> from s3kg_core.stages.compare import paired_bootstrap
    >>> interval_text(paired_bootstrap([0.5, 0.6], [0.6, 0.7]))
    '-0.100 … -0.100'
    """
    if math.isnan(difference.low):
        return "—"
    return f"{difference.low:+.3f} … {difference.high:+.3f}"


def verdict(difference: PairedDifference) -> str:
    """One line on whether B differs from A: the mean change and its paired 95% interval.

    Examples
    --------
    >>> from s3kg_core.stages.compare import paired_bootstrap
    >>> verdict(paired_bootstrap([0.5, 0.6, 0.4], [0.5, 0.5, 0.5], resamples=999))
    'Mean CUS B − A = +0.000 over 3 questions, 95% interval -0.100 … +0.100 (paired bootstrap, as `s3kg check`): it holds 0, no clear difference.'
    >>> many = paired_bootstrap([0.6, 0.5] * 600, [0.5, 0.5] * 600, normal_from=1000)
    >>> print(verdict(many))
    Mean CUS B − A = +0.050 over 1200 questions, 95% interval +0.047 … +0.053 (paired; the bootstrap's normal approximation at this size, as the leaderboard's): it excludes 0, B is clearly higher.
    """  # noqa: E501
    head = f"Mean CUS B − A = {difference.difference:+.3f} over {difference.n} questions"
    if math.isnan(difference.low):
        return head + "; too few questions for an interval."
    how = (
        "paired; the bootstrap's normal approximation at this size, as the leaderboard's"
        if difference.method == "normal"
        else "paired bootstrap, as `s3kg check`"
    )
    head += f", 95% interval {interval_text(difference)} ({how}): "
    if difference.low <= 0.0 <= difference.high:
        return head + "it holds 0, no clear difference."
    side = "lower" if difference.high < 0 else "higher"
    return head + f"it excludes 0, B is clearly {side}."
