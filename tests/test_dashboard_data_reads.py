"""dashboard.data.reads: runs, components, answers and the leaderboard's means, from DuckDB."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

import dashboard.data.reads as reads_module
from dashboard.data import reads, tau_cases
from s3kg_core.stages.scored import reblend
from s3kg_core.store.records import KGRecord
from s3kg_core.store.store import Store


def test_the_module_doctests_pass():
    assert doctest.testmod(reads_module).failed == 0


def test_runs_components_and_the_means_at_an_alpha(two_runs_view):
    view = two_runs_view
    signatures, latest = reads.signatures(view)
    assert signatures == [latest]
    runs = reads.load_runs(view)
    assert list(runs["scored"]) == [3, 3]
    assert reads.scored_runs(view) == [1, 2]
    frame = pd.concat([reblend(reads.run_components(view, r), 0.25) for r in (1, 2)])
    # the oracle: each run's plain means of its reblended answers, grouped by run id
    want = frame.groupby("run_id")[["gold_sim", "ctx_sim", "cus"]].mean()
    got = reads.run_summaries(view, 0.25).set_index("run_id")
    assert set(got["model"]) == {"model-a", "model-b"} and got["n"].tolist() == [3, 3]
    for column in ("gold_sim", "ctx_sim", "cus"):
        assert got[column].to_numpy() == pytest.approx(want[column].to_numpy(), abs=1e-12)
    board = reads.ranked(view, 0.25, "cus")
    assert sorted(board["run_id"]) == [1, 2]


def test_item_view_reads_only_its_answer_s_kgs(two_runs_view, monkeypatch):
    """Regression (issue 33): item_view loaded every KG of the run to show one answer."""

    def refuse(*args, **kwargs):
        raise AssertionError("loaded a whole run's KGs")

    monkeypatch.setattr(Store, "load_kgs", staticmethod(refuse))
    view = reads.item_view(two_runs_view, 1, 2)
    assert set(view.kgs) == {"gold", "answer", "context"}
    assert all(kg.item_id == 2 and kg.run_id == 1 for kg in view.kgs.values())
    assert tau_cases.tau_item(two_runs_view, 1, 2)["aligned"] is not None


def test_kg_statuses_name_every_source_and_the_missing_ones():
    view = reads.ItemView(
        1, 2, "q", "?", "ctx", "gold", "answer", "ok",
        kgs={"gold": KGRecord(1, 2, "gold", (), "failed: timeout")}, details={}, tau=None,
    )  # fmt: skip
    assert view.kg_statuses == {
        "gold": "failed: timeout",
        "answer": "not extracted",
        "context": "not extracted",
    }


def test_mark_partial_keeps_two_runs_that_share_a_name_apart():
    # Regression: the board grouped by (dataset, display name, temperature, extractor), so two
    # runs named alike merged into one row, and mark_partial matched by name.
    board = pd.DataFrame({"run_id": [1, 2], "model": ["m", "m"], "cus": [0.3, 0.7]})
    runs = pd.DataFrame({"run_id": [1, 2]})
    marked = reads.mark_partial(board, runs, {2: (2, 4)})
    assert marked["scoring"].tolist() == ["complete", "partial: 2 of 4 scored"]
