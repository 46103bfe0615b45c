"""The Failure analysis's SQL (s3kg_core.store.tau_queries): DuckDB picks what pandas picks."""

from __future__ import annotations

import json

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.stages.scored import scored_frame
from s3kg_core.stages.tau import lowest_cases, tau_signature, tau_store
from s3kg_core.store.tau_queries import lowest_scored, lowest_scored_grid, stored_tau_of


@pytest.fixture(scope="module")
def scored(tmp_path_factory, scored_stores):
    return scored_stores.copy(
        tmp_path_factory.mktemp("tau") / "t.duckdb",
        models=("model-a", "model-b", "model-c"),
        n_items=9,
        seed=4,
    )


@pytest.mark.parametrize("target", ["cus", "gold_sim", "ctx_sim"])
@pytest.mark.parametrize("fraction", [0.05, 0.2, 0.5, 1.0])
@pytest.mark.parametrize("alpha", [None, 0.0, 0.3, 1.0])
def test_lowest_scored_is_lowest_cases_of_the_scored_frame(scored, target, fraction, alpha):
    store, signature = scored
    expected = lowest_cases(scored_frame(store, signature, alpha), target, fraction)
    with store.connect() as con:
        got = lowest_scored(con, signature, target, fraction, alpha)
    assert list(zip(got.run_id, got.item_id, strict=True)) == list(
        zip(expected.run_id, expected.item_id, strict=True)
    )
    # the blend in SQL is reblend() bit for bit
    assert got[target].tolist() == expected[target].tolist()
    assert got["model"].tolist() == expected["model"].tolist()


@pytest.mark.parametrize("target", ["cus", "ctx_sim"])
@pytest.mark.parametrize("fraction", [0.05, 0.5])
def test_the_grid_holds_at_each_alpha_what_lowest_scored_picks_there(scored, target, fraction):
    """Issue 60: the Failure analysis picks the lowest share at every stop of the slider in one
    scan; each stop's rows are the one-alpha query's, in its order, with the same scores."""
    store, signature = scored
    alphas = [round(k / 10, 1) for k in range(11)]
    with store.connect() as con:
        grid = lowest_scored_grid(con, signature, target, fraction, alphas)
        picked = set()
        for alpha in alphas:
            one = lowest_scored(con, signature, target, fraction, alpha)
            mine = grid[grid["alpha"] == alpha].drop(columns="alpha").reset_index(drop=True)
            assert mine.equals(one), alpha
            picked.add(tuple(zip(one.run_id, one.item_id, strict=True)))
        assert len(picked) > 1  # alpha changes the picks: the grid must tell the stops apart
        with pytest.raises(ConfigError):
            lowest_scored_grid(con, signature, target, fraction, [1.5])


@pytest.mark.parametrize(
    ("target", "fraction"), [("recall", 0.1), ("cus", 0.0), ("cus", 1.5), ("cus", -0.1)]
)
def test_lowest_scored_refuses_an_unknown_target_or_a_share_out_of_range(scored, target, fraction):
    store, signature = scored
    with store.connect() as con, pytest.raises(ConfigError):
        lowest_scored(con, signature, target, fraction, None)


def test_stored_tau_of_returns_only_results_of_the_same_signatures(scored, minilm):
    store, signature = scored
    report = tau_store(store, fraction=0.5, target="cus", signature=signature, encoder=minilm)
    with store.connect() as con:
        picked = lowest_scored(con, signature, "cus", 0.5, None)
        answers = list(zip(picked.run_id, picked.item_id, strict=True))
        found = stored_tau_of(con, signature, ["cus", "gold_sim"], report.tau_signature, answers)
        assert set(found) == {(int(r), int(i)) for r, i in answers}
        assert all(json.loads(v)["signature"] == report.tau_signature for v in found.values())
        # another threshold, another score signature, the context's target: nothing fits
        other = tau_signature(minilm.name, 0.5, 0.76, "given")
        assert stored_tau_of(con, signature, ["cus"], other, answers) == {}
        assert stored_tau_of(con, "other", ["cus"], report.tau_signature, answers) == {}
        assert stored_tau_of(con, signature, ["ctx_sim"], report.tau_signature, answers) == {}
        assert stored_tau_of(con, signature, ["cus"], report.tau_signature, []) == {}
