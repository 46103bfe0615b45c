"""The results tables' content version (s3kg_core.store.version_queries)."""

from __future__ import annotations

from store_helpers import build_store

from s3kg_core.annotation.log import Decision, save_decision
from s3kg_core.store import queries
from s3kg_core.store.version_queries import results_version


def test_the_version_changes_with_the_results_and_not_with_an_annotation(tmp_path):
    store = build_store(tmp_path / "v.duckdb", n_items=2)
    with store.connect() as con:
        first = results_version(con)
    with store.connect() as con:
        assert results_version(con) == first  # read again: the same
    save_decision(store, Decision("ann", 1, 1, ("g", "r", "t"), ("g", "r", "t"), "confirm"))
    with store.connect() as con:
        assert results_version(con) == first  # an annotation is not a result
    with store.transaction() as con:
        queries.set_run_name(con, 1, "renamed")  # an update in place, same row count
    with store.connect() as con:
        renamed = results_version(con)
    assert renamed != first and renamed < 0
    with store.transaction() as con:
        con.execute("DELETE FROM triples WHERE pos = 0 AND run_id = 1 AND item_id = 1")
    with store.connect() as con:
        assert results_version(con) != renamed
