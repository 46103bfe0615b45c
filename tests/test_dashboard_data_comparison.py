"""dashboard.data.comparison: the Run comparison's pairs, scores, picker pages and gates."""

from __future__ import annotations

import compare_helpers
import pandas as pd
import pytest

from dashboard import compare
from dashboard.data import comparison, reads
from s3kg_core.analysis import compare as analysis_compare
from s3kg_core.analysis.check import check_runs
from s3kg_core.analysis.compare import paired_difference
from s3kg_core.stages.scored import reblend
from s3kg_core.store import compare_queries
from s3kg_core.store.store import Store


def test_the_run_comparison_reads_its_pairs_scores_and_picker_pages_from_duckdb(two_runs_view):
    """Issue 33: the comparison page reads the pairs, the chosen pair's scores at alpha and one
    page of the picker from DuckDB; each agrees exactly with the pandas path it replaced
    (every component reblended, ``dashboard.compare``)."""
    view = two_runs_view
    frame = pd.concat([reblend(reads.run_components(view, r), 0.3) for r in (1, 2)])
    frame = frame.reset_index(drop=True)
    pairs = comparison.comparable_pairs(view)
    assert pairs == compare_helpers.comparable_pairs(frame) == {(1, 2): 3, (2, 1): 3}
    for run_a, run_b in pairs:
        deltas = comparison.pair_deltas(view, run_a, run_b, 0.3)
        want = compare.question_deltas(frame, run_a, run_b, reads.item_questions(view))
        pd.testing.assert_frame_equal(deltas, want, check_exact=True)
        gates = comparison.pair_check(view, run_a, run_b, 0.3)
        assert gates.comparison is not None
        by_item = want.set_index("item_id")  # the test pairs in item order (issue 58)
        assert gates.comparison.differences["cus"].to_dict() == (
            paired_difference(by_item["cus_b"], by_item["cus_a"], resamples=9999).to_dict()
        )
        for page in range(4):
            for keep in (None, int(want["item_id"].iloc[-1])):
                rows, total, shown = comparison.pair_questions(
                    view, run_a, run_b, 0.3, "QUESTION", page, 1, keep
                )
                listed, matches, at = compare_helpers.question_choices(
                    want, "question", page, 1, keep
                )
                assert rows["item_id"].tolist() == listed["item_id"].tolist()
                assert (total, shown) == (matches, at) and total == 3
    other = comparison.pair_deltas(view, 1, 2, 0.9)  # another alpha, other scores
    assert other["cus_a"].tolist() != comparison.pair_deltas(view, 1, 2, 0.3)["cus_a"].tolist()


def test_the_comparisons_gates_are_s3kg_checks_own(two_runs_view):
    """Issue 43 (item 4): the Run comparison ran a bootstrap of its own (1,999 resamples, no
    gates); its gates are now ``check_runs``' result, as ``s3kg check`` computes it."""
    view = two_runs_view
    shown = comparison.pair_check(view, 1, 2, 0.3)
    want = check_runs(Store(view.path, read_only=True), 2, 1, signature=view.scored, alpha=0.3)
    assert [(g.name, g.passed, g.measured, g.detail) for g in shown.gates] == [
        (g.name, g.passed, g.measured, g.detail) for g in want.gates
    ]
    assert shown.facts == want.facts and shown.verdict() == want.verdict()


def test_warm_pair_fills_the_comparison_at_every_alpha_of_the_slider(two_runs_view, monkeypatch):
    """Issue 33: a Run comparison alpha step queried and resampled its pair again (~0.4 s)."""
    view = two_runs_view
    comparison.warm_pair(view, 1, 2, 0.5).join(timeout=120)

    def refuse(*args, **kwargs):
        raise AssertionError("computed again")

    monkeypatch.setattr(compare_queries, "pair_deltas", refuse)
    monkeypatch.setattr(analysis_compare, "paired_bootstrap", refuse)
    for alpha in (0.0, 0.3, 0.5, 0.6, 1.0):  # on the slider's grid: cached
        assert len(comparison.pair_deltas(view, 1, 2, alpha)) == 3
        comparison.pair_check(view, 1, 2, alpha)
    with pytest.raises(AssertionError, match="computed again"):
        comparison.pair_deltas(view, 1, 2, 0.52)


def test_question_across_and_the_pair_s_gold_changes_agree(two_runs_view):
    view = two_runs_view
    changes = comparison.pair_gold_changes(view, 1, 2)
    per_question = [comparison.question_across(view, 1, 2, item) for item in (1, 2, 3)]
    assert all(diff is not None for diff in per_question)
    assert all(a != b for a, b in changes)  # only changed categories are counted
