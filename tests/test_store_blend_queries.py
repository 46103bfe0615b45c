"""The blend and CUS in SQL (s3kg_core.store.blend_queries) are the Python ones.

``blend_sql`` and ``harmonic_mean_sql`` equal :func:`~s3kg_core.scoring.result.blend` and
:func:`~s3kg_core.scoring.cus.harmonic_mean` on random values and edge cases (0, 1, missing, both
0), at several alphas, in every mode; ``BLENDED`` is ``reblend`` bit for bit on a scored store.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest

from s3kg_core.scoring.cus import harmonic_mean
from s3kg_core.scoring.result import MODES, blend
from s3kg_core.stages.scored import reblend
from s3kg_core.store import queries
from s3kg_core.store.blend_queries import BLENDED, blend_sql, harmonic_mean_sql
from s3kg_core.store.records import ItemRecord
from s3kg_core.store.store import Store


@pytest.fixture(scope="module")
def scored(tmp_path_factory, scored_stores):
    """Two scored runs; run 2's scores are marked ``kgx`` (alpha weights its WL side)."""
    path = tmp_path_factory.mktemp("blend") / "b.duckdb"
    store, signature = scored_stores.copy(path, n_items=6, seed=3)
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


# -- the SQL expressions are the Python functions, on random values and edge cases (issue 42) ----

EDGES = (0.0, 1.0, math.nan)
"""Component values every pair of which is tried: 0, 1 and a missing value (NaN; NULL in SQL)."""

ALPHAS = (0.0, 0.25, 0.5, 0.8, 1.0)


def _values(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of :data:`EDGES`, then 300 random pairs in [0, 1] (some equal, some tiny)."""
    rng = np.random.default_rng(seed)
    edge = np.array([(a, b) for a in EDGES for b in EDGES])
    noise = rng.uniform(0, 1, (300, 2))
    noise[:20, 1] = noise[:20, 0]
    noise[20:40] *= 1e-300
    both = np.vstack([edge, noise])
    return both[:, 0], both[:, 1]


def _sql_column(con: duckdb.DuckDBPyConnection, expression: str, table: pd.DataFrame):
    """``expression`` over ``table``'s rows (in order) in DuckDB: NaN inserted as NULL and NaN."""
    con.execute("CREATE OR REPLACE TABLE v (i INTEGER, x DOUBLE, y DOUBLE, a DOUBLE, m VARCHAR)")
    rows = [
        [i, *(None if null and math.isnan(v) else v for v in (x, y)), a, m]
        for null in (True, False)
        for i, (x, y, a, m) in enumerate(table[["x", "y", "a", "m"]].itertuples(index=False))
    ]
    con.executemany("INSERT INTO v VALUES (?, ?, ?, ?, ?)", rows)
    got = con.execute(f"SELECT {expression} FROM v ORDER BY rowid").fetchall()
    half = len(table)
    return [r[0] for r in got[:half]], [r[0] for r in got[half:]]  # as NULL, as NaN


def _same(sql: list, python: np.ndarray) -> None:
    """Equal to 1e-12; a missing value (NaN in Python) is NULL or NaN in SQL."""
    assert len(sql) == len(python)
    for got, want in zip(sql, python, strict=True):
        if math.isnan(want):
            assert got is None or math.isnan(got), (got, want)
        else:
            assert got is not None and abs(got - want) <= 1e-12, (got, want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("alpha", ALPHAS)
def test_the_sql_blend_is_the_python_blend(mode, alpha):
    """blend_sql == blend at each alpha in every mode (kgx weights the WL side, the others the
    embedding side), on random components, 0, 1 and missing ones."""
    x, y = _values(seed=int(alpha * 100))
    table = pd.DataFrame({"x": x, "y": y, "a": alpha, "m": mode})
    with duckdb.connect() as con:
        as_null, as_nan = _sql_column(
            con, blend_sql("x", "y", f"CAST('{alpha!r}' AS DOUBLE)", f"'{mode}'"), table
        )
    want = blend(x, y, alpha, mode)
    _same(as_null, want)
    _same(as_nan, want)
    if mode == "kgx" and alpha not in (0.5,):  # the two conventions differ: both are checked
        assert not np.allclose(want[-300:], blend(x, y, alpha, "paper")[-300:])


def test_the_sql_blend_is_the_python_blend_per_row_of_mode_and_alpha():
    """A column of modes and one of alphas (stored scores: each its own), as BLENDED reads them."""
    x, y = _values(seed=5)
    rng = np.random.default_rng(6)
    table = pd.DataFrame(
        {"x": x, "y": y, "a": rng.choice(ALPHAS, len(x)), "m": rng.choice(MODES, len(x))}
    )
    with duckdb.connect() as con:
        as_null, as_nan = _sql_column(con, blend_sql("x", "y", "a", "m"), table)
    want = blend(x, y, table["a"].to_numpy(), table["m"].to_numpy())
    _same(as_null, want)
    _same(as_nan, want)


def test_the_sql_harmonic_mean_is_the_python_one():
    """harmonic_mean_sql == harmonic_mean: 0 where both are 0 or one is missing (NULL or NaN:
    DuckDB holds NaN above every number, so ``NaN > 0`` would pass its test)."""
    x, y = _values(seed=8)
    table = pd.DataFrame({"x": x, "y": y, "a": 0.5, "m": "ot"})
    with duckdb.connect() as con:
        as_null, as_nan = _sql_column(con, harmonic_mean_sql("x", "y"), table)
    want = harmonic_mean(x, y)
    assert want[0] == 0.0 and not np.isnan(want).any()  # (0, 0) first; missing -> 0
    _same(as_null, want)
    _same(as_nan, want)


def test_a_stored_nan_component_has_cus_0_in_sql_as_in_reblend(tmp_path):
    """Regression: BLENDED's CUS of a score with a NaN component was NaN (DuckDB's NaN > 0 is
    true) where reblend's, and harmonic_mean's, is 0."""
    store = Store(tmp_path / "nan.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        ids = store.upsert_items(con, ds, [ItemRecord("q1"), ItemRecord("q2")])
        run = store.ensure_run(con, ds, "m", 0.0, "none")
        con.executemany(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
            "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "VALUES (?, ?, 'sig', 'ot', 0.5, ?, 0.5, 'ok', 0.5, 0.5, 'ok')",
            [(run, ids["q1"], math.nan), (run, ids["q2"], 0.25)],
        )
    with store.connect() as con:
        got = con.execute(f"{BLENDED} SELECT cus FROM c ORDER BY item_id", [0.5, "sig"]).fetchall()
        want = reblend(queries.scored_components(con, "sig"), 0.5)["cus"].tolist()
    assert want[0] == 0.0
    assert [r[0] for r in got] == want
