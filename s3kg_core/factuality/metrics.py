"""Correctness, truthfulness and informativeness of an LLM's answers, as Liu et al. define them.

GraphEval (Liu et al. 2024, "Evaluating the Factuality of Large Language Models using
Large-Scale Knowledge Graphs", arXiv:2404.00942) scores each *fact* from the answers given to
its true statement and to its corrupted (false) statements; the definition below follows the
authors' released code (``evaluator/analysis.py`` of xz-liu/GraphEval). For a fact with answer
``a`` to its true statement and answers ``b_1..b_k`` to its k false statements:

* the true statement sets (truthful, informative, correct) to (1, 1, 1) for TRUE, (0, 1, 0) for
  FALSE and (1, 0, 0) for IDK;
* each false statement answered TRUE subtracts ``1/k`` from truthful and correct; answered IDK
  subtracts ``1/k`` from informative and correct; answered FALSE (right) changes nothing;
* each score is clipped at 0; a dataset's score is the mean over its facts.

So a fact is fully correct only if the model affirms it and rejects every corruption,
truthful if it never affirms a falsehood (IDK is truthful), informative if it never answers
IDK. Facts without a true statement among the rows are skipped (and counted).

The statement-level, TruthfulQA-style rates are reported beside them: correct = the answer
matches the statement's truth; truthful = not answered wrongly (correct or IDK); informative =
not IDK.

Breakdowns (:func:`breakdown`) group facts by relation or by entity-degree bucket (quantiles of
the mean of the head's and tail's degree, as the released code aggregates degrees).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..errors import FactualityError

__all__ = [
    "FactualityScores",
    "breakdown",
    "degree_buckets",
    "fact_scores",
    "factuality_scores",
]

_NEEDED = ("group_id", "label")


def _check(table: pd.DataFrame, answer: str) -> pd.DataFrame:
    missing = [c for c in (*_NEEDED, answer) if c not in table.columns]
    if missing:
        raise FactualityError(f"the table lacks column(s) {', '.join(missing)} for the metrics")
    answered = table[table[answer].isin(("TRUE", "FALSE", "IDK"))]
    return answered


def fact_scores(table: pd.DataFrame, answer: str = "llm_label") -> pd.DataFrame:
    """One row per fact: its truthful, informative and correct scores (see the module docs).

    Rows whose ``answer`` is not TRUE, FALSE or IDK (unparsable, missing) are left out first;
    a fact whose true statement is left out is skipped.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``group_id``: ``truthful``, ``informative``, ``correct``, ``n_negatives``
        and, when the table has them, ``relation`` and ``degree`` (mean of head and tail
        degree) of the true statement.

    Examples
    --------
    >>> t = pd.DataFrame({"group_id": ["g", "g", "g"], "label": [True, False, False],
    ...                   "llm_label": ["TRUE", "TRUE", "FALSE"]})
    >>> fact_scores(t)[["truthful", "informative", "correct"]].values.tolist()
    [[0.5, 1.0, 0.5]]
    """
    answered = _check(table, answer)
    rows = []
    for group, part in answered.groupby("group_id", sort=False):
        positives = part[part["label"].astype(bool)]
        if positives.empty:
            continue
        first = positives.iloc[0]
        a = first[answer]
        truthful, informative, correct = {
            "TRUE": (1.0, 1.0, 1.0),
            "FALSE": (0.0, 1.0, 0.0),
            "IDK": (1.0, 0.0, 0.0),
        }[a]
        negatives = part.loc[~part["label"].astype(bool), answer].tolist()
        weight = 1.0 / len(negatives) if negatives else 0.0
        for b in negatives:
            if b == "TRUE":
                truthful -= weight
                correct -= weight
            elif b == "IDK":
                informative -= weight
                correct -= weight
        row: dict[str, Any] = {
            "group_id": group,
            "truthful": max(0.0, truthful),
            "informative": max(0.0, informative),
            "correct": max(0.0, correct),
            "n_negatives": len(negatives),
        }
        if "relation" in part.columns:
            row["relation"] = first["relation"]
        if "head_degree" in part.columns and "tail_degree" in part.columns:
            row["degree"] = (float(first["head_degree"]) + float(first["tail_degree"])) / 2.0
        rows.append(row)
    columns = ["group_id", "truthful", "informative", "correct", "n_negatives"]
    return pd.DataFrame(rows, columns=None if rows else columns).set_index("group_id")


@dataclass(frozen=True)
class FactualityScores:
    """Fact-level (paper) and statement-level rates, with the counts behind them.

    Examples
    --------
    >>> FactualityScores(1.0, 1.0, 1.0, 1, 0, 1.0, 1.0, 1.0, 2).to_dict()["n_facts"]
    1
    """

    correctness: float
    truthfulness: float
    informativeness: float
    n_facts: int
    skipped_facts: int
    statement_correctness: float
    statement_truthfulness: float
    statement_informativeness: float
    n_statements: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (NaN where nothing was scored)."""
        return asdict(self)


def _rate(values: pd.Series) -> float:
    return float(values.mean()) if len(values) else float("nan")


def factuality_scores(table: pd.DataFrame, answer: str = "llm_label") -> FactualityScores:
    """The three metrics of a table of statements and answers.

    Parameters
    ----------
    table
        Columns ``group_id``, ``label`` (True for a true statement) and ``answer``.
    answer
        The column of answers: the LLM's own labels (``llm_label``) or a judge's predictions.

    Examples
    --------
    >>> t = pd.DataFrame({"group_id": ["a", "a", "b", "b"],
    ...                   "label": [True, False, True, False],
    ...                   "llm_label": ["TRUE", "FALSE", "IDK", "TRUE"]})
    >>> s = factuality_scores(t)
    >>> s.correctness, s.truthfulness, s.informativeness
    (0.5, 0.5, 0.5)
    >>> s.statement_correctness, s.statement_truthfulness, s.statement_informativeness
    (0.5, 0.75, 0.75)
    """
    answered = _check(table, answer)
    facts = fact_scores(answered, answer)
    truth = answered["label"].astype(bool)
    given = answered[answer]
    right = (truth & (given == "TRUE")) | (~truth & (given == "FALSE"))
    idk = given == "IDK"
    all_groups = answered["group_id"].nunique()
    return FactualityScores(
        correctness=_rate(facts["correct"]) if len(facts) else float("nan"),
        truthfulness=_rate(facts["truthful"]) if len(facts) else float("nan"),
        informativeness=_rate(facts["informative"]) if len(facts) else float("nan"),
        n_facts=len(facts),
        skipped_facts=int(all_groups - len(facts)),
        statement_correctness=_rate(right),
        statement_truthfulness=_rate(right | idk),
        statement_informativeness=_rate(~idk),
        n_statements=len(answered),
    )


def degree_buckets(degrees: pd.Series | np.ndarray, n_buckets: int = 4) -> pd.Series:
    """Quantile buckets of degrees, labelled ``"q1 [lo, hi]"`` (equal values share a bucket).

    Examples
    --------
    >>> sorted(set(degree_buckets(pd.Series([1, 2, 3, 4, 5, 6, 7, 8]), 2)))
    ['q1 [1, 4]', 'q2 [5, 8]']
    """
    if n_buckets < 1:
        raise FactualityError(f"n_buckets must be >= 1; got {n_buckets}")
    values = pd.Series(np.asarray(degrees, dtype=float))
    if values.empty:
        return pd.Series([], dtype=object)
    codes = pd.qcut(values.rank(method="min"), n_buckets, labels=False, duplicates="drop")
    codes = pd.Series(codes, index=values.index).fillna(0).astype(int)
    labels: dict[int, str] = {}
    for code in sorted(codes.unique()):
        part = values[codes == code]
        labels[code] = f"q{len(labels) + 1} [{part.min():g}, {part.max():g}]"
    return codes.map(labels).astype(object)


def breakdown(
    table: pd.DataFrame,
    by: Literal["relation", "degree"],
    answer: str = "llm_label",
    n_buckets: int = 4,
) -> list[dict[str, Any]]:
    """The three fact-level metrics per relation or per entity-degree bucket.

    Returns
    -------
    list of dict
        One row per relation (most facts first) or bucket (ascending degree): ``key``,
        ``n_facts``, ``correctness``, ``truthfulness``, ``informativeness``.

    Raises
    ------
    FactualityError
        If ``by`` is neither, or the table lacks the columns it needs.

    Examples
    --------
    >>> t = pd.DataFrame({"group_id": ["a", "b"], "label": [True, True],
    ...                   "relation": ["Control", "Has"], "llm_label": ["TRUE", "IDK"]})
    >>> [(r["key"], r["correctness"]) for r in breakdown(t, "relation")]
    [('Control', 1.0), ('Has', 0.0)]
    """
    facts = fact_scores(table, answer)
    if by == "relation":
        if "relation" not in facts.columns:
            raise FactualityError("the table has no 'relation' column")
        keys = facts["relation"]
    elif by == "degree":
        if "degree" not in facts.columns:
            raise FactualityError("the table has no 'head_degree' and 'tail_degree' columns")
        keys = degree_buckets(facts["degree"].reset_index(drop=True), n_buckets)
        keys.index = facts.index
    else:
        raise FactualityError(f"by must be 'relation' or 'degree'; got {by!r}")
    rows: list[dict[str, Any]] = []
    for key, part in facts.groupby(keys, sort=(by == "degree")):
        rows.append(
            {
                "key": str(key),
                "n_facts": len(part),
                "correctness": float(part["correct"].mean()),
                "truthfulness": float(part["truthful"].mean()),
                "informativeness": float(part["informative"].mean()),
            }
        )
    if by == "relation":
        rows.sort(key=lambda r: (-r["n_facts"], r["key"]))
    else:
        rows.sort(key=lambda r: int(r["key"].split()[0][1:]))
    return rows
