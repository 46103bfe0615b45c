"""The blend in SQL (s3kg_core.store.blend_queries.BLENDED) is ``reblend`` bit for bit."""

from __future__ import annotations

import pytest
from store_helpers import build_store

from s3kg_core.stages.results import reblend
from s3kg_core.store import queries
from s3kg_core.store.blend_queries import BLENDED


@pytest.fixture(scope="module")
def scored(tmp_path_factory, minilm):
    """Two scored runs; run 2's scores are marked ``kgx`` (alpha weights its WL side)."""
    from s3kg_core.stages.score import score_store

    store = build_store(tmp_path_factory.mktemp("blend") / "b.duckdb", n_items=6, seed=3)
    signature = score_store(store, encoder=minilm).signature
    with store.transaction() as con:
        con.execute("UPDATE scores SET mode = 'kgx', alpha = 0.8 WHERE run_id = 2")
    return store, signature


@pytest.mark.parametrize("alpha", [None, 0.0, 0.3, 0.5, 1.0])
def test_the_sql_blend_is_reblend_of_the_stored_components(scored, alpha):
    store, signature = scored
    with store.connect() as con:
        got = con.execute(
            f"{BLENDED} SELECT run_id, item_id, model, gold_sim, ctx_sim, cus FROM c "
            "ORDER BY run_id, item_id",
            [alpha, signature],
        ).df()
        components = queries.scored_components(con, signature)
    want = reblend(components, alpha).sort_values(["run_id", "item_id"]).reset_index(drop=True)
    assert set(components["mode"]) == {"ot", "kgx"} and len(got) == 12
    assert got["model"].tolist() == want["model"].tolist()
    for score in ("gold_sim", "ctx_sim", "cus"):
        assert got[score].tolist() == want[score].tolist()  # exact, not approximately
    # the kgx run's blend differs from what the other mode's weights would give
    if alpha not in (None, 0.5):
        other = reblend(components.assign(mode="hybrid"), alpha)
        assert other.loc[other["run_id"] == 2, "gold_sim"].tolist() != (
            want.loc[want["run_id"] == 2, "gold_sim"].tolist()
        )
