"""dashboard.data.database: the view key, the cache keys (results version, stamp), the lock."""

from __future__ import annotations

import doctest
from dataclasses import replace

import pytest

import dashboard.data.database as database_module
from dashboard.data import reads, writes
from dashboard.data.database import View, db_stamp, reader, results_version, writer
from s3kg_core.annotation.log import Decision
from s3kg_core.errors import ConfigError
from s3kg_core.store import queries


def test_the_module_doctests_pass():
    assert doctest.testmod(database_module).failed == 0


def test_a_view_without_a_signature_says_nothing_is_scored(tmp_path):
    with pytest.raises(ConfigError, match="nothing is scored"):
        _ = View(tmp_path / "x.duckdb", 1).scored


def test_equal_views_are_one_cache_entry_and_a_signature_free_read_ignores_it(
    two_runs_view, monkeypatch
):
    """Streamlit hashes the frozen View by its fields: an equal view is a cache hit."""
    calls: list[int] = []
    real = queries.run_overview
    monkeypatch.setattr(queries, "run_overview", lambda con: calls.append(1) or real(con))
    view = two_runs_view
    first = reads.load_runs(view)
    again = reads.load_runs(View(view.path, view.stamp, view.signature))
    other_signature = reads.load_runs(replace(view, signature="another"))
    assert calls == [1]  # load_runs does not depend on the signature
    assert first.equals(again) and first.equals(other_signature)


def test_an_annotation_saved_keeps_the_score_and_kg_caches(two_runs_view, monkeypatch):
    """Regression (issue 33): every cache was keyed by the file's stamp, so one decision saved
    threw away the components (and every KG read) of the whole database."""
    calls: list[str] = []
    real = queries.scored_components

    def counting(*args, **kwargs):
        calls.append("components")
        return real(*args, **kwargs)

    monkeypatch.setattr(queries, "scored_components", counting)
    view = two_runs_view
    reads.run_components(view, 1)
    assert calls == ["components"]
    triple = ("g", "r", "t")
    writes.record_decision(view.path, Decision("ann", 1, 1, triple, triple, "confirm"))
    after = replace(view, stamp=db_stamp(view.path))
    assert after.stamp != view.stamp  # the file changed: annotation caches (by stamp) refill
    assert results_version(after) == results_version(view)
    reads.run_components(after, 1)
    assert calls == ["components"]  # ... the components did not
    with writer(view.path) as store, store.transaction() as con:
        con.execute("UPDATE scores SET gold_s_wl = gold_s_wl / 2 WHERE item_id = 1")
    reads.run_components(replace(view, stamp=db_stamp(view.path)), 1)
    assert calls == ["components", "components"]  # a score changed: read again


def test_a_read_waits_for_the_lock_timeout_set_here(two_runs_view, monkeypatch):
    monkeypatch.setattr(database_module, "LOCK_TIMEOUT", 1.0)
    with reader(two_runs_view.path) as con:
        assert con.execute("SELECT 1").fetchone() == (1,)
