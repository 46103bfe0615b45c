"""Annotator agreement and TAU quality (s3kg_core.scoring.agreement)."""

from __future__ import annotations

import math

import pytest

from s3kg_core.errors import InputFormatError
from s3kg_core.scoring.agreement import (
    decided,
    pairwise_agreement,
    percent_agreement,
    tau_quality,
)


def row(who, gold, answer, verdict, item=1, run=1):
    return {"run_id": run, "item_id": item, "annotator": who, "gold_triple": gold,
            "answer_triple": answer, "verdict": verdict}  # fmt: skip


def test_percent_agreement_counts_pairs_judged_by_two_annotators():
    rows = [
        row("ann", "g1", "a1", "confirm"),
        row("bob", "g1", "a1", "confirm"),
        row("ann", "g2", "a2", "confirm"),
        row("bob", "g2", "a2", "reject"),
        row("ann", "g3", "a3", "reject"),  # judged once: not compared
    ]
    assert percent_agreement(rows) == (0.5, 2)
    share, n = percent_agreement(rows[:1])
    assert math.isnan(share) and n == 0


def test_the_latest_verdict_of_an_annotator_wins():
    rows = [row("ann", "g1", "a1", "reject"), row("bob", "g1", "a1", "confirm"),
            row("ann", "g1", "a1", "confirm")]  # fmt: skip
    assert percent_agreement(rows) == (1.0, 1)


def test_pairwise_f1_and_jaccard_on_shared_items():
    rows = [
        row("ann", "g1", "a1", "confirm"),
        row("ann", "g2", "a2", "add"),
        row("bob", "g1", "a1", "confirm"),
        row("bob", "g3", "a3", "add"),
        row("bob", "g9", "a9", "add", item=2),  # ann never saw item 2: ignored
    ]
    [pair] = pairwise_agreement(rows)
    assert (pair.annotator_a, pair.annotator_b, pair.items) == ("ann", "bob", 1)
    assert pair.f1 == pytest.approx(2 * 1 / 4)
    assert pair.jaccard == pytest.approx(1 / 3)


def test_tau_precision_recall_f1():
    rows = [
        row("ann", "g1", "a1", "confirm"),
        row("ann", "g2", "a2", "confirm"),
        row("ann", "g3", "a3", "reject"),
        row("ann", "g4", "a4", "add"),
    ]
    q = tau_quality(rows)
    assert q["precision"] == pytest.approx(2 / 3)
    assert q["recall"] == pytest.approx(2 / 3)
    assert q["f1"] == pytest.approx(2 / 3)
    assert (q["confirm"], q["reject"], q["add"]) == (2, 1, 1)
    empty = tau_quality([])
    assert all(math.isnan(empty[k]) for k in ("precision", "recall", "f1"))
    only_rejects = tau_quality([row("ann", "g", "a", "reject"), row("ann", "h", "b", "add")])
    assert only_rejects["precision"] == 0.0 and only_rejects["f1"] == 0.0


def test_bad_rows_are_named_errors():
    with pytest.raises(InputFormatError, match="missing"):
        percent_agreement([{"annotator": "x"}])
    with pytest.raises(InputFormatError, match="verdict"):
        tau_quality([row("ann", "g", "a", "maybe")])


def test_undecided_rows_count_nowhere():
    # Regression (issue 16): a pair nobody decided must not count as confirmed. Before, every
    # proposal was saved as "confirm", so an annotator who touched nothing moved agreement
    # and precision; undecided rows (verdict None or "") are now left out of every measure.
    decided_rows = [row("ann", "g1", "a1", "reject"), row("ann", "g2", "a2", "confirm")]
    untouched = [row("bob", g, a, v) for g, a in (("g1", "a1"), ("g2", "a2")) for v in (None, "")]
    rows = decided_rows + untouched
    share, compared = percent_agreement(rows)
    assert math.isnan(share) and compared == 0  # bob's untouched pairs are no judgements
    quality = tau_quality(rows)
    assert quality["precision"] == 0.5 and quality["decided"] == 2.0
    assert quality["undecided"] == 4.0
    assert pairwise_agreement(rows) == []  # bob decided nothing: no items to compare
    assert [r["verdict"] for r in decided(rows)] == ["reject", "confirm"]


@pytest.mark.parametrize("verdict", ["maybe", "CONFIRM", 1])
def test_an_unknown_verdict_is_refused_but_undecided_is_not(verdict):
    with pytest.raises(InputFormatError, match="verdict must be one of"):
        decided([row("ann", "g", "a", verdict)])
    assert decided([row("ann", "g", "a", float("nan"))]) == []  # a missing cell of a frame
