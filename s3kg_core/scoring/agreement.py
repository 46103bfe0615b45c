"""Agreement between annotators of triple alignments, and TAU's quality against them.

An annotation is a verdict on one (gold triple, answer triple) pair of one answer: ``confirm``
or ``reject`` a pair TAU proposed, or ``add`` a pair TAU missed. Annotations are rows with the
keys ``run_id``, ``item_id``, ``annotator``, ``gold_triple``, ``answer_triple`` and ``verdict``
(triples in any hashable form, e.g. their JSON text). A row whose verdict is ``None`` or ``""``
is undecided: every measure here counts decided rows only (:func:`decided`), never a verdict
nobody gave.

Examples
--------
>>> rows = [
...     {"run_id": 1, "item_id": 1, "annotator": "ann", "gold_triple": "g1",
...      "answer_triple": "a1", "verdict": "confirm"},
...     {"run_id": 1, "item_id": 1, "annotator": "bob", "gold_triple": "g1",
...      "answer_triple": "a1", "verdict": "reject"},
...     {"run_id": 1, "item_id": 1, "annotator": "bob", "gold_triple": "g2",
...      "answer_triple": "a2", "verdict": "add"},
... ]
>>> percent_agreement(rows)
(0.0, 1)
>>> tau_quality(rows)["precision"]
0.5
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InputFormatError

__all__ = [
    "VERDICTS",
    "PairAgreement",
    "decided",
    "pairwise_agreement",
    "percent_agreement",
    "tau_quality",
]

VERDICTS = ("confirm", "reject", "add")
_KEYS = ("run_id", "item_id", "annotator", "gold_triple", "answer_triple", "verdict")


def decided(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows with a verdict (``confirm``, ``reject`` or ``add``); undecided rows dropped.

    Raises
    ------
    InputFormatError
        If a row lacks a key, or its verdict is neither undecided nor one of :data:`VERDICTS`.

    Examples
    --------
    >>> rows = [{"run_id": 1, "item_id": 1, "annotator": "ann", "gold_triple": "g",
    ...          "answer_triple": "a", "verdict": v} for v in ("confirm", None, "")]
    >>> [r["verdict"] for r in decided(rows)]
    ['confirm']
    """
    out = []
    for row in rows:
        missing = [k for k in _KEYS if k not in row]
        if missing:
            raise InputFormatError(f"an annotation needs keys {list(_KEYS)}; missing {missing}")
        verdict = row["verdict"]
        if verdict is None or verdict == "" or verdict != verdict:  # None, "" or NaN: undecided
            continue
        if verdict not in VERDICTS:
            raise InputFormatError(f"verdict must be one of {VERDICTS}; got {verdict!r}")
        out.append(row)
    return out


def _latest(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, ...], str]:
    """``(annotator, run, item, gold, answer) -> verdict`` of decided rows, the last winning."""
    return {
        (r["annotator"], r["run_id"], r["item_id"], r["gold_triple"], r["answer_triple"]): str(
            r["verdict"]
        )
        for r in decided(rows)
    }


def percent_agreement(rows: Iterable[Mapping[str, Any]]) -> tuple[float, int]:
    """Share of (pair, two annotators) judgements that agree, and how many were compared.

    Only pairs judged by at least two annotators count; ``add`` counts as accepting the pair.
    Returns ``(nan, 0)`` when no pair has two judgements.
    """
    by_pair: dict[tuple[Any, ...], dict[str, bool]] = {}
    for (who, *pair), verdict in _latest(rows).items():
        by_pair.setdefault(tuple(pair), {})[who] = verdict != "reject"
    agree = total = 0
    for verdicts in by_pair.values():
        for a, b in itertools.combinations(sorted(verdicts), 2):
            total += 1
            agree += verdicts[a] == verdicts[b]
    return (agree / total if total else float("nan")), total


@dataclass(frozen=True)
class PairAgreement:
    """Two annotators' accepted alignments compared on the answers both annotated."""

    annotator_a: str
    annotator_b: str
    items: int
    f1: float
    jaccard: float


def pairwise_agreement(rows: Iterable[Mapping[str, Any]]) -> list[PairAgreement]:
    """F1 and Jaccard between every two annotators' sets of accepted pairs (confirm or add).

    Compared on the answers (run, item) that both annotated; an empty union counts as full
    agreement (both accepted nothing).
    """
    accepted: dict[str, dict[tuple[Any, Any], set[tuple[Any, Any]]]] = {}
    for (who, run, item, gold, answer), verdict in _latest(rows).items():
        per_item = accepted.setdefault(who, {}).setdefault((run, item), set())
        if verdict != "reject":
            per_item.add((gold, answer))
    out = []
    for a, b in itertools.combinations(sorted(accepted), 2):
        shared = sorted(set(accepted[a]) & set(accepted[b]), key=str)
        if not shared:
            continue
        inter = union = size = 0
        for key in shared:
            sa, sb = accepted[a][key], accepted[b][key]
            inter += len(sa & sb)
            union += len(sa | sb)
            size += len(sa) + len(sb)
        f1 = 2 * inter / size if size else 1.0
        jaccard = inter / union if union else 1.0
        out.append(PairAgreement(a, b, len(shared), f1, jaccard))
    return out


def tau_quality(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """TAU's precision, recall and F1 against the annotations (every annotator's verdicts).

    Precision = confirmed / (confirmed + rejected) of TAU's proposed pairs; recall =
    confirmed / (confirmed + added); F1 their harmonic mean. ``nan`` where undefined. Only
    decided verdicts count (the latest per annotator and pair): ``decided`` says how many,
    ``undecided`` how many rows had none.
    """
    rows = list(rows)
    counts = dict.fromkeys(VERDICTS, 0)
    latest = _latest(rows)
    for verdict in latest.values():
        counts[verdict] += 1
    judged = counts["confirm"] + counts["reject"]
    relevant = counts["confirm"] + counts["add"]
    precision = counts["confirm"] / judged if judged else float("nan")
    recall = counts["confirm"] / relevant if relevant else float("nan")
    if precision + recall > 0:
        f1 = 2 * precision * recall / (precision + recall)
    else:
        f1 = float("nan") if judged == 0 or relevant == 0 else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        **{k: float(v) for k, v in counts.items()},
        "decided": float(len(latest)),
        "undecided": float(len(rows) - len(decided(rows))),
    }
