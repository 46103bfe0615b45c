"""dashboard/live_tau.py: the Failure analysis's counts per run at every stop (issue 60)."""

from __future__ import annotations

import doctest

import pandas as pd
import pytest

from dashboard import live_tau
from dashboard.live_alpha import GRID
from s3kg_core.errors import ConfigError

CATEGORIES = ["relation_mismatch", "entity_mismatch", "roles_swapped", "extra", "missing"]


def counts(run_id: int, extra: int, model: str = "m", dataset: str = "d") -> dict:
    return {
        "run_id": run_id, "dataset": dataset, "model": model, "temperature": 0.0,
        "extractor": "x", "aligned": 1, "relation_mismatch": 0, "entity_mismatch": 0,
        "roles_swapped": 0, "extra": extra, "missing": 1, "cases": 2,
    }  # fmt: skip


def test_the_doctests_pass():
    assert doctest.testmod(live_tau).failed == 0


def test_each_stop_orders_its_runs_by_their_residual_triples_and_a_stop_not_ready_waits():
    low = pd.DataFrame([counts(1, 1, "a"), counts(2, 5, "b")])  # run 2 has more
    high = pd.DataFrame([counts(1, 9, "a"), counts(2, 0, "b")])  # run 1 has more
    frames = [low] * 5 + [None] + [high] * 5
    block = live_tau.table(frames, CATEGORIES)
    rows = {r["id"]: r for r in block["rows"]}
    assert rows[2]["order"][0] == 0 and rows[1]["order"][0] == 1
    assert rows[1]["order"][10] == 0 and rows[2]["order"][10] == 1
    assert rows[1]["cells"]["extra"]["v"][0] == 1 and rows[1]["cells"]["extra"]["v"][10] == 9
    assert rows[1]["cells"]["extra"]["wait"] == [False] * 5 + [True] + [False] * 5
    assert [c["key"] for c in block["columns"]] == ["run", "cases", *CATEGORIES]  # one dataset


def test_a_run_without_cases_at_a_ready_stop_counts_zero_there():
    both = pd.DataFrame([counts(1, 2), counts(2, 3, "b")])
    one = pd.DataFrame([counts(1, 2)])
    block = live_tau.table([both] + [one] * (len(GRID) - 1), CATEGORIES)
    run_2 = next(r for r in block["rows"] if r["id"] == 2)
    assert run_2["cells"]["cases"]["v"][0] == 2 and run_2["cells"]["cases"]["v"][1] == 0


def test_datasets_are_kept_apart_and_names_are_text():
    hostile = "<img src=x onerror=alert(1)>"
    frame = pd.DataFrame([counts(1, 9, hostile, "b-set"), counts(2, 1, "m", "a-set")])
    block = live_tau.table([frame] * len(GRID), CATEGORIES)
    assert [c["key"] for c in block["columns"]][:2] == ["run", "dataset"]  # two: named
    first = min(block["rows"], key=lambda r: r["order"][0])
    assert first["cells"]["dataset"]["t"] == "a-set"  # by dataset before the counts
    named = next(r for r in block["rows"] if r["id"] == 1)
    assert named["cells"]["run"]["t"].startswith(hostile)  # set as text by the browser


def test_nothing_ready_is_an_empty_table_and_the_stops_are_checked():
    assert live_tau.table([None] * len(GRID), CATEGORIES)["rows"] == []
    with pytest.raises(ConfigError, match="one entry per alpha stop"):
        live_tau.table([None], CATEGORIES)
