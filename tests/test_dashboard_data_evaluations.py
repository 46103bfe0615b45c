"""dashboard.data.evaluations: the Benchmarks, Hallucinations and Factuality pages' reads."""

from __future__ import annotations

from dashboard.data import evaluations
from dashboard.data.database import View, db_stamp


def test_the_demo_s_grapheval_results_and_factuality_evaluations_are_read(db):
    view = View(db, db_stamp(db))
    overview = evaluations.grapheval_overview(view)
    assert not overview.empty
    first = overview.iloc[0]
    checks = evaluations.grapheval_results(
        view, int(first["run_id"]), str(first["checker"]), str(first["extractor"])
    )
    assert len(checks) == int(first["answers"])
    assert [c.item_id for c in checks] == sorted(c.item_id for c in checks)
    evals = evaluations.factuality_evals(view)
    assert list(evals.columns) == list(evaluations.EVAL_COLUMNS)


def test_a_pair_set_that_is_not_here_has_no_texts():
    assert evaluations.bench_texts("no-such-pair-set") is None
