"""Stored score components blended at an alpha in SQL: the blend and CUS, written once.

:func:`blend_sql` and :func:`harmonic_mean_sql` give the SQL text of
:func:`s3kg_core.scoring.result.blend` and :func:`s3kg_core.scoring.cus.harmonic_mean` for
given column expressions: the same operations in the same order, so DuckDB's doubles are
Python's (tests/test_store_blend_queries.py checks it on random values and edge cases). Every
query that blends uses them: :data:`BLENDED`, the ``WITH`` clause that the leaderboard, the
Failure analysis's lowest share and the Run comparison's pair of runs begin with, and the
search's score filter and question pages (:mod:`~s3kg_core.store.search_queries`).
:data:`BLENDED`'s ``c`` holds every score of a signature with ``gold_sim``, ``ctx_sim`` and
``cus`` at the alpha; a query filters it (by run: DuckDB pushes the filter down to the scan)
and selects from it.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "b.duckdb"))
>>> with db.connect() as con:
...     con.execute(f"{BLENDED} SELECT count(*) FROM c", [0.5, "sig"]).fetchall()
[(0,)]
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ConfigError
from ..scoring.result import WL_MODES, check_alpha

__all__ = ["BLENDED", "BLENDED_GRID", "blend_sql", "grid_alphas", "harmonic_mean_sql"]


def blend_sql(s_wl: str, s_sbert: str, alpha: str, mode: str) -> str:
    """SQL of :func:`~s3kg_core.scoring.result.blend` of the given SQL expressions.

    ``mode`` is an expression of a mode's name: the modes of
    :data:`~s3kg_core.scoring.result.WL_MODES` (``kgx``) weight the WL side by alpha, every
    other mode the embedding side. The arguments are SQL written by the caller (column names,
    a parameter's ``CAST(? AS DOUBLE)``), never user text.

    Examples
    --------
    >>> blend_sql("wl", "sb", "a", "m")
    "(CASE WHEN m IN ('kgx') THEN a * wl + (1 - a) * sb ELSE (1 - a) * wl + a * sb END)"
    """
    modes = ", ".join(f"'{m}'" for m in WL_MODES)
    return (
        f"(CASE WHEN {mode} IN ({modes}) THEN {alpha} * {s_wl} + (1 - {alpha}) * {s_sbert} "
        f"ELSE (1 - {alpha}) * {s_wl} + {alpha} * {s_sbert} END)"
    )


def harmonic_mean_sql(a: str, b: str) -> str:
    """SQL of :func:`~s3kg_core.scoring.cus.harmonic_mean` of two SQL expressions (CUS).

    0 where their sum is not positive (both 0), NULL or NaN, as in NumPy, where ``NaN > 0`` is
    false (in DuckDB NaN is above every number). The arguments are SQL written by the caller.

    Examples
    --------
    >>> harmonic_mean_sql("g", "c")
    '(CASE WHEN g + c > 0 AND NOT isnan(g + c) THEN 2 * g * c / (g + c) ELSE 0.0 END)'
    """
    total = f"{a} + {b}"
    return (
        f"(CASE WHEN {total} > 0 AND NOT isnan({total}) THEN 2 * {a} * {b} / ({total}) "
        "ELSE 0.0 END)"
    )


def _blended(alpha: str, grid: str = "") -> str:
    """The ``WITH s, b, c`` clause with the alpha ``alpha`` (SQL) and an optional join."""
    return f"""
WITH s AS (
    SELECT s.run_id, s.item_id, d.name AS dataset, coalesce(r.name, r.model) AS model,
           r.temperature, r.extractor, s.mode, {alpha} AS a,
           s.gold_s_wl, s.gold_s_sbert, s.gold_status, s.ctx_s_wl, s.ctx_s_sbert, s.ctx_status
    FROM scores s JOIN runs r USING (run_id) JOIN datasets d USING (dataset_id){grid}
    WHERE s.signature = ?),
b AS (
    SELECT *, {blend_sql("gold_s_wl", "gold_s_sbert", "a", "mode")} AS gold_sim,
        {blend_sql("ctx_s_wl", "ctx_s_sbert", "a", "mode")} AS ctx_sim
    FROM s),
c AS (SELECT *, {harmonic_mean_sql("gold_sim", "ctx_sim")} AS cus FROM b)
"""


BLENDED = _blended("coalesce(CAST(? AS DOUBLE), s.alpha)")
"""The ``WITH s, b, c`` clause; ``c``: ``run_id, item_id, dataset, model, temperature,
extractor, gold_sim, ctx_sim, cus``, the components, ``mode``, the alpha ``a`` and the
statuses (``gold_status``, ``ctx_status``) of every score of a signature.

Its two parameters come first: the alpha (``None``: each score's stored alpha), then the
signature. ``model`` is the run's display name."""

BLENDED_GRID = _blended("g.a", "\n    CROSS JOIN (SELECT unnest(CAST(? AS DOUBLE[])) AS a) g")
""":data:`BLENDED` at each alpha of a list: every score once per alpha, ``a`` telling them apart.

Its two parameters: the list of alphas, then the signature. The Overview's live leaderboard
reads each run's means at every step of the alpha slider from it in one scan
(:func:`~s3kg_core.store.leaderboard_queries.run_means_grid`)."""


def grid_alphas(alphas: Sequence[float]) -> list[float]:
    """``alphas`` as :data:`BLENDED_GRID`'s first parameter: checked, as floats.

    Raises
    ------
    ConfigError
        If ``alphas`` is empty or an alpha is outside [0, 1].

    Examples
    --------
    >>> grid_alphas([0, 0.5])
    [0.0, 0.5]
    """
    if not len(alphas):
        raise ConfigError("give at least one alpha")
    for a in alphas:
        check_alpha(a)
    return [float(a) for a in alphas]
