"""The leaderboard's SQL: per-run means and spreads at an alpha, one ``GROUP BY`` in DuckDB.

:func:`run_summaries` computes each run's means where the scores are stored
(:data:`~s3kg_core.store.blend_queries.BLENDED` blends them at the alpha), so ranking 100,000
answers reads one row per run, for the Overview's leaderboard and ``s3kg cus`` alike;
:func:`run_values` reads the values of the few runs too small for the normal interval (their
bootstrap needs them), :func:`paired_summaries` the count, mean and spread of two large runs'
per-question differences (their paired test's normal interval). All three feed
:func:`s3kg_core.analysis.leaderboard.rank_summaries`. :func:`score_histograms` counts each run's
answers in bins of a score for the Overview's Distributions chart (a few hundred numbers,
never a row per answer). Functions take an open connection, as
:mod:`~s3kg_core.store.queries` does.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "l.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord(f"q{i}", f"Q{i}?", "C.", "G.")
...                                     for i in range(2)])
...     run = db.ensure_run(con, ds, "m", 0.0, "none")
...     _ = con.executemany(
...         "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
...         "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
...         "VALUES ($1, $2, 'sig', 'paper', 0.5, $3, $3, 'ok', 1.0, 1.0, 'ok')",
...         [(run, ids["q0"], 0.25), (run, ids["q1"], 0.75)])
...     summary = run_summaries(con, "sig", 0.5)
...     values = run_values(con, "sig", 0.5, "gold_sim", [run])
>>> summary[["n", "gold_sim", "ctx_sim"]].values.tolist()
[[2.0, 0.5, 1.0]]
>>> values[run].tolist(), values[run].index.tolist() == [ids["q0"], ids["q1"]]
([0.25, 0.75], True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb
import pandas as pd

from ..errors import ConfigError
from ..scoring.result import check_alpha
from .blend_queries import BLENDED, BLENDED_GRID, grid_alphas

__all__ = [
    "PAIRED_COLUMNS",
    "paired_summaries",
    "run_means_grid",
    "run_summaries",
    "run_values",
    "score_histograms",
]

_SCORES = ("gold_sim", "ctx_sim", "cus")

PAIRED_COLUMNS = ("run_id", "baseline_id", "shared", "difference", "difference_std")
"""The columns of :func:`paired_summaries`."""


def _check_score(metric: str, alpha: float | None) -> None:
    """Refuse a ``metric`` that is not a score and an ``alpha`` outside [0, 1]."""
    if metric not in _SCORES:
        raise ConfigError(f"a score is one of {', '.join(_SCORES)}; got {metric!r}")
    if alpha is not None:
        check_alpha(alpha)


def run_summaries(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    alpha: float | None,
    *,
    drop_empty: bool = False,
) -> pd.DataFrame:
    """One row per run scored under ``signature``: answers, each score's mean and spread.

    The columns of :data:`s3kg_core.analysis.leaderboard.SUMMARY_COLUMNS` (``n``, the mean
    ``gold_sim``, ``ctx_sim``, ``cus`` at ``alpha`` and their sample standard deviations
    ``*_std``), by run id. The one per-run mean of the project: the Overview's leaderboard and
    ``s3kg cus`` (:func:`s3kg_core.analysis.cus_table.cus_report`) both read it. ``alpha=None``:
    each score's stored alpha. ``drop_empty`` leaves out the scores whose gold or context
    comparison is not ``ok`` (a KG empty or unparseable: ``s3kg cus --empty drop``); a run
    left with none has no row.

    Raises
    ------
    ConfigError
        If ``alpha`` is outside [0, 1].
    """
    if alpha is not None:
        check_alpha(alpha)
    means = ", ".join(f"avg({s}) AS {s}, stddev_samp({s}) AS {s}_std" for s in _SCORES)
    kept = "WHERE gold_status = 'ok' AND ctx_status = 'ok' " if drop_empty else ""
    frame = con.execute(
        f"{BLENDED} SELECT run_id, any_value(dataset) AS dataset, any_value(model) AS model, "
        "any_value(temperature) AS temperature, any_value(extractor) AS extractor, "
        f"count(*) AS n, {means} FROM c {kept}GROUP BY run_id ORDER BY run_id",
        [alpha, signature],
    ).df()
    order = ["run_id", "dataset", "model", "temperature", "extractor", "n"]
    return frame.loc[:, [*order, *_SCORES, *(f"{s}_std" for s in _SCORES)]]


def run_means_grid(
    con: duckdb.DuckDBPyConnection, signature: str, alphas: Sequence[float]
) -> pd.DataFrame:
    """Each run's mean ``gold_sim``, ``ctx_sim`` and ``cus`` at every alpha of ``alphas``.

    One scan of the scores (:data:`~s3kg_core.store.blend_queries.BLENDED_GRID`), the same
    blend and mean as :func:`run_summaries` at each alpha (equal to it but for the order of a
    sum: within 1e-12). Columns ``run_id, alpha, n, gold_sim, ctx_sim, cus``, by run id, then
    alpha. The Overview's live leaderboard ships it to the browser, which ranks the runs at
    any step of the slider without asking the server.

    Raises
    ------
    ConfigError
        If an alpha is outside [0, 1], or ``alphas`` is empty.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "g.duckdb"))
    >>> with db.connect() as con:
    ...     run_means_grid(con, "sig", [0.0, 1.0]).columns.tolist()
    ['run_id', 'alpha', 'n', 'gold_sim', 'ctx_sim', 'cus']
    """
    means = ", ".join(f"avg({s}) AS {s}" for s in _SCORES)
    return con.execute(
        f"{BLENDED_GRID} SELECT run_id, a AS alpha, count(*) AS n, {means} FROM c "
        "GROUP BY run_id, a ORDER BY run_id, a",
        [grid_alphas(alphas), signature],
    ).df()


def run_values(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    alpha: float | None,
    metric: str,
    run_ids: Sequence[int],
    *,
    drop_empty: bool = False,
) -> dict[int, pd.Series]:
    """Each of ``run_ids``' values of ``metric`` at ``alpha``, indexed by item id, in item order.

    For a bootstrap (which draws by position: item order is part of its result) and a paired
    test (the item ids say whether two runs answered the same questions). ``drop_empty`` leaves
    out the scores :func:`run_summaries` leaves out with it.

    Raises
    ------
    ConfigError
        If ``metric`` is not a score or ``alpha`` is outside [0, 1].
    """
    _check_score(metric, alpha)
    if not run_ids:
        return {}
    kept = " AND gold_status = 'ok' AND ctx_status = 'ok'" if drop_empty else ""
    frame = con.execute(
        f"{BLENDED} SELECT run_id, item_id, {metric} AS v FROM c "
        f"WHERE list_contains(?, run_id){kept} ORDER BY run_id, item_id",
        [alpha, signature, [int(r) for r in run_ids]],
    ).df()
    return {
        int(run): pd.Series(
            group["v"].to_numpy(dtype=float),
            index=pd.Index(group["item_id"].astype(int).to_numpy(), name="item_id"),
            name=metric,
        )
        for run, group in frame.groupby("run_id", sort=True)
    }


def paired_summaries(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    alpha: float | None,
    metric: str,
    pairs: Mapping[int, int],
    *,
    drop_empty: bool = False,
) -> pd.DataFrame:
    """Each pair ``run -> baseline``: the questions both scored, and ``metric``'s difference.

    Columns :data:`PAIRED_COLUMNS`: ``shared`` the questions both runs have a score for (with
    ``drop_empty``, one that :func:`run_summaries` keeps), ``difference`` the mean of run minus
    baseline over them and ``difference_std`` its sample standard deviation (NaN for one
    question), at ``alpha``; a pair sharing no question has no row. What the normal
    approximation of the pair's paired bootstrap needs, summed where the scores are stored:
    the Overview's verdict of a large run against its dataset's #1 reads no answer.

    Raises
    ------
    ConfigError
        If ``metric`` is not a score or ``alpha`` is outside [0, 1].
    """
    _check_score(metric, alpha)
    if not pairs:
        return pd.DataFrame(columns=list(PAIRED_COLUMNS))
    kept = "WHERE gold_status = 'ok' AND ctx_status = 'ok'" if drop_empty else ""
    runs = [int(r) for r in pairs]
    frame = con.execute(
        f"{BLENDED}, k AS (SELECT run_id, item_id, {metric} AS v FROM c {kept}), "
        "p AS (SELECT unnest(?) AS run_id, unnest(?) AS baseline_id) "
        "SELECT p.run_id, p.baseline_id, count(*) AS shared, avg(a.v - b.v) AS difference, "
        "stddev_samp(a.v - b.v) AS difference_std "
        "FROM p JOIN k a ON a.run_id = p.run_id "
        "JOIN k b ON b.run_id = p.baseline_id AND b.item_id = a.item_id "
        "GROUP BY p.run_id, p.baseline_id ORDER BY p.run_id",
        [alpha, signature, runs, [int(pairs[r]) for r in runs]],
    ).df()
    return frame.loc[:, list(PAIRED_COLUMNS)]


def score_histograms(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    alpha: float | None,
    metric: str,
    *,
    bins: int = 20,
    dataset: str | None = None,
) -> pd.DataFrame:
    """Per run, how many answers fall in each of ``bins`` equal bins of ``metric`` on [0, 1].

    What ``dashboard.charts.score_histograms`` counts in the blended frame, counted in DuckDB:
    columns ``run_id, dataset, model, temperature, extractor, bin`` (its lower edge),
    ``answers`` and ``share`` (of the run's answers), every bin of every run (empty ones with
    0), runs in dataset, model, temperature, extractor order. A value of 1 falls in the last
    bin. ``dataset``: that dataset's runs only.

    Raises
    ------
    ConfigError
        If ``metric`` is not a score, ``bins`` is below 1 or ``alpha`` is outside [0, 1].
    """
    if metric not in _SCORES:
        raise ConfigError(f"a score is one of {', '.join(_SCORES)}; got {metric!r}")
    if bins < 1:
        raise ConfigError(f"bins must be 1 or more; got {bins}")
    if alpha is not None:
        check_alpha(alpha)
    where = "" if dataset is None else "WHERE dataset = ?"
    sql = (
        f"{BLENDED}, v AS (SELECT * FROM c {where}), "
        "k AS (SELECT run_id, any_value(dataset) AS dataset, any_value(model) AS model, "
        "any_value(temperature) AS temperature, any_value(extractor) AS extractor, "
        "count(*) AS total FROM v GROUP BY run_id), "
        f"h AS (SELECT run_id, CAST(least(greatest(floor({metric} * ?), 0), ? - 1) "
        "AS BIGINT) AS b, count(*) AS answers FROM v GROUP BY ALL) "
        "SELECT k.run_id, k.dataset, k.model, k.temperature, k.extractor, "
        "CAST(g.range AS DOUBLE) / ? AS bin, "
        "CAST(coalesce(h.answers, 0) AS DOUBLE) AS answers, "
        "coalesce(h.answers, 0) / k.total AS share "
        "FROM k CROSS JOIN range(?) g LEFT JOIN h ON h.run_id = k.run_id AND h.b = g.range "
        "ORDER BY k.dataset, k.model, k.temperature, k.extractor, k.run_id, g.range"
    )
    params: list[object] = [alpha, signature, *([] if dataset is None else [dataset])]
    return con.execute(sql, [*params, bins, bins, bins, bins]).df()
