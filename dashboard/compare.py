"""Two runs side by side: which runs can be compared, and the per-question change in scores.

Pure functions on the frames of :mod:`dashboard.data.comparison` (the blended per-answer scores and
the item texts), for the Run comparison page. The per-question change itself is the library's
(:func:`s3kg_core.analysis.compare.question_deltas`, shared with ``s3kg check``).
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.live_alpha import GRID, cell, metrics
from s3kg_core.analysis.check import CheckResult, Gate
from s3kg_core.analysis.compare import DELTA_COLUMNS, question_deltas
from s3kg_core.escape import code, md
from s3kg_core.stats import PairedDifference

__all__ = [
    "CHECK_LIVE_MAX",
    "DELTA_COLUMNS",
    "LIVE_CHANGES_MAX",
    "PENDING",
    "TABLE_MAX",
    "check_command",
    "default_pair",
    "ends",
    "figures",
    "gate_mark",
    "gates_markdown",
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


CHECK_LIVE_MAX = 1000
"""Shared questions up to which the page runs ``s3kg check``'s gates as it opens.

The gates are :func:`s3kg_core.analysis.check.check_runs` itself: a paired BCa bootstrap of
9,999 resamples for each of CUS, GoldSim and CtxSim (0.4 s for the demo's 30 questions and for
999 questions on two cores), from :data:`~s3kg_core.stats.NORMAL_FROM` questions its normal
approximation (0.3 s for the whole check at 5,000, most of it reading the answers' statuses);
past this many the page waits for the reader to ask."""


PENDING = (
    "alpha {alpha} in your browser: the figures above follow the slider; the check, the "
    "questions and the chart below follow when you release it."
)
"""The line under the live figures while the server has not caught up with the slider."""


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

    ``runs`` is :func:`dashboard.data.reads.load_runs`'s frame.

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
    >>> from s3kg_core.stats import paired_bootstrap
    >>> interval_text(paired_bootstrap([0.5, 0.6], [0.6, 0.7]))
    '-0.100 … -0.100'
    """
    if math.isnan(difference.low):
        return "—"
    return f"{difference.low:+.3f} … {difference.high:+.3f}"


def check_command(
    path: Path | str, new: int, baseline: int, alpha: float, signature: str | None = None
) -> str:
    """The ``s3kg check`` command line whose gates the page shows.

    ``signature``: only when it is not the file's latest, which the command reads by default.

    Examples
    --------
    >>> check_command("my db.duckdb", 2, 1, 0.5)
    "s3kg check --db 'my db.duckdb' --run 2 --baseline 1 --alpha 0.5"
    """
    words = ["s3kg", "check", "--db", str(path), "--run", str(new), "--baseline", str(baseline)]
    words += ["--alpha", f"{alpha:g}"]
    if signature is not None:
        words += ["--signature", signature]
    return shlex.join(words)


def gate_mark(gate: Gate) -> str:
    """``PASS``, ``PASS (inconclusive)`` or ``FAIL``: a gate's result as the page shows it.

    Examples
    --------
    >>> gate_mark(Gate("min_cus", "Mean CUS", False, "0.41 over 9", "the mean is below 0.5"))
    'FAIL'
    """
    if not gate.passed:
        return "FAIL"
    return "PASS (inconclusive)" if gate.inconclusive else "PASS"


def gates_markdown(result: CheckResult) -> str:
    r"""Every gate of ``result`` as a Markdown table: gate, result, measured, when it fails.

    The figures are the check's own text (``s3kg check`` prints the same on its gate lines);
    a gate's detail (the questions concerned) follows its figure, but for the "inconclusive"
    note the result column already gives.
    Every text is escaped.

    Examples
    --------
    >>> gate = Gate("new_unscorable", "Answers that became unscorable", False, "1 of 30 shared",
    ...             "more than 0 become unscorable", "q_2: answer_kg_empty", 1.0)
    >>> print(gates_markdown(CheckResult("t", (gate,), ())))
    | Gate | Result | Measured | Fails when |
    |---|---|---|---|
    | `new_unscorable` | :red[**FAIL**] | 1 of 30 shared: q\_2\: answer\_kg\_empty | more than 0 become unscorable |
    """  # noqa: E501
    colour = {"FAIL": ":red[**FAIL**]", "PASS": ":green[PASS]"}
    lines = ["| Gate | Result | Measured | Fails when |", "|---|---|---|---|"]
    for gate in result.gates:
        mark = gate_mark(gate)
        # an inconclusive gate's detail repeats its result ("PASS (inconclusive)")
        detail = "" if gate.inconclusive and gate.detail.startswith("inconclusive") else gate.detail
        measured = md(gate.measured) + (f": {md(detail)}" if detail else "")
        lines.append(
            f"| {code(gate.name)} | {colour.get(mark, ':orange[' + mark + ']')} | {measured} "
            f"| {md(gate.rule)} |"
        )
    return "\n".join(lines)


def verdict(result: CheckResult) -> str:
    """One line: the check's verdict, the gates that fail, the mean CUS change and its verdict.

    The interval is the ``cus_drop`` gate's (:attr:`CheckResult.comparison`: the check's
    paired bootstrap, its resamples and seed), and the words on it are
    :meth:`~s3kg_core.analysis.compare.RunComparison.verdict`'s, so the page, ``s3kg check``,
    the report, ``s3kg compare`` and the Overview say the same of the two runs.

    Examples
    --------
    >>> fail = Gate("new_unscorable", "Lost", False, "1 of 3 shared", "more than 0")
    >>> print(verdict(CheckResult("t", (fail,), ())))
    **s3kg check FAILED: 1 of 1 gates** (`new_unscorable`).
    """
    failed = ", ".join(code(g.name) for g in result.failed)
    head = f"**s3kg check {result.verdict()}**" + (f" ({failed})" if failed else "")
    if result.comparison is None:
        return head + "."
    difference = result.comparison.differences["cus"]
    said = f"B against A: {result.comparison.verdict().text()}."
    text = f"Mean CUS B − A = {difference.difference:+.3f} over {difference.n} questions"
    if math.isnan(difference.low):
        return f"{head}. {text}; too few questions for an interval. {said}"
    text += (
        f", {difference.confidence:.0%} interval {interval_text(difference)} "
        f"({result.comparison.resamples:,} resamples, the `cus_drop` gate's)."
    )
    return f"{head}. {text} {said}"


def figures(grid: pd.DataFrame, deltas: pd.DataFrame, at: int) -> dict[str, Any]:
    """The five figures above the comparison at every stop of the alpha slider (a live block).

    ``grid`` is :func:`s3kg_core.store.compare_queries.pair_means_grid` at :data:`GRID`,
    ``deltas`` the pair's questions at the server's stop ``at`` (its numbers there, as they
    are): shared questions, mean CUS of A and of B with B minus A under it, and how many
    questions got worse and better in B.

    Examples
    --------
    >>> grid = pd.DataFrame({"alpha": GRID, "shared": 2, "cus_a": 0.5, "cus_b": 0.4,
    ...     "d_cus": -0.1, "worse": 2, "better": 0})
    >>> deltas = pd.DataFrame({"cus_a": [0.6, 0.4], "cus_b": [0.7, 0.5], "d_cus": [0.1, 0.1]})
    >>> block = figures(grid, deltas, 5)
    >>> b = block["items"][2]
    >>> b["cell"]["v"][5], b["delta"]["t"][5], b["tone"][5], b["tone"][0]
    (0.6, '+0.100', 'up', 'down')
    """
    at_server = {
        "cus_a": deltas["cus_a"].mean(),
        "cus_b": deltas["cus_b"].mean(),
        "d_cus": deltas["d_cus"].mean(),
        "worse": (deltas["d_cus"] < 0).sum(),
        "better": (deltas["d_cus"] > 0).sum(),
    }
    by_stop = {round(float(r["alpha"]), 2): r for r in grid.to_dict("records")}
    per_stop = [
        (float(r["cus_a"]), float(r["cus_b"]), float(r["d_cus"]), int(r["worse"]), int(r["better"]))
        for r in (at_server if k == at else by_stop[stop] for k, stop in enumerate(GRID))
    ]
    a, b, d, worse, better = (list(x) for x in zip(*per_stop, strict=True))
    return metrics(
        [
            {"label": "Shared questions", "cell": {"t": f"{len(deltas):,}"}},
            {"label": "Mean CUS · A", "cell": cell(a, decimals=3)},
            {
                "label": "Mean CUS · B",
                "cell": cell(b, decimals=3),
                "delta": {"t": [f"{x:+.3f}" for x in d]},
                "tone": ["up" if x > 0 else "down" if x < 0 else "off" for x in d],
                "help": "Under it: B minus A.",
            },
            {
                "label": "Worse in B",
                "cell": {"t": [f"{x:,}" for x in worse]},
                "help": "Questions whose CUS dropped from A to B.",
            },
            {
                "label": "Better in B",
                "cell": {"t": [f"{x:,}" for x in better]},
                "help": "Questions whose CUS rose from A to B.",
            },
        ]
    )
