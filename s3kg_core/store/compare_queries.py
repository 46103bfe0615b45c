"""The SQL of the Run comparison: which runs share questions, and two runs question by question.

The pairs are counted in DuckDB (one self-join of the scores), the two runs' scores are blended
at an alpha there (:data:`~s3kg_core.store.blend_queries.BLENDED`, what ``reblend`` computes) and
joined by question, and the question picker is searched and paged there: no query reads more
than the two runs' answers, and a picker's page is one page of rows. Functions take an open
connection, as :mod:`~s3kg_core.store.queries` does.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "c.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord(f"q{i}", f"Question {i}?", "C.", "G.")
...                                     for i in range(3)])
...     runs = [db.ensure_run(con, ds, m, 0.0, "none") for m in ("a", "b")]
...     rows = [(runs[0], ids[f"q{i}"], 0.5) for i in range(3)]
...     rows += [(runs[1], ids[f"q{i}"], 0.25) for i in range(2)]  # B answers q0 and q1
...     _ = con.executemany(
...         "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
...         "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
...         "VALUES ($1, $2, 'sig', 'paper', 0.5, $3, $3, 'ok', $3, $3, 'ok')", rows)
...     pairs = comparable_pairs(con, "sig")
...     deltas = pair_deltas(con, "sig", runs[0], runs[1], 0.5)
...     page, total, _ = pair_questions(con, "sig", runs[0], runs[1], 0.5, "question 1")
>>> pairs
{(1, 2): 2, (2, 1): 2}
>>> deltas[["ext_id", "d_cus"]].values.tolist()
[['q0', -0.25], ['q1', -0.25]]
>>> total, page["ext_id"].tolist()
(1, ['q1'])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb
import pandas as pd

from ..errors import ComparisonError, ConfigError
from ..scoring.result import check_alpha
from .blend_queries import BLENDED, BLENDED_GRID, grid_alphas
from .search_queries import like_pattern

__all__ = [
    "PAIR_COLUMNS",
    "comparable_pairs",
    "pair_deltas",
    "pair_means_grid",
    "pair_questions",
]

_SCORES = ("gold_sim", "ctx_sim", "cus")

PAIR_COLUMNS = (
    "item_id",
    "ext_id",
    "question",
    *(f"{s}_{side}" for s in _SCORES for side in ("a", "b")),
    *(f"d_{s}" for s in _SCORES),
)
"""The columns of :func:`pair_deltas` and :func:`pair_questions`, in order: those of
:func:`s3kg_core.analysis.compare.question_deltas`."""


def comparable_pairs(con: duckdb.DuckDBPyConnection, signature: str) -> dict[tuple[int, int], int]:
    """Every ordered pair of runs scored under ``signature`` on the same questions -> how many.

    ``(a, b)`` and ``(b, a)`` both, by ``a`` and then ``b``; runs that share no scored question
    with another are left out. What ``dashboard.compare.comparable_pairs`` finds in the
    blended frame, counted in one self-join of the scores.
    """
    rows = con.execute(
        "SELECT x.run_id, y.run_id, count(*) FROM scores x JOIN scores y "
        "ON x.item_id = y.item_id AND x.run_id <> y.run_id "
        "WHERE x.signature = ? AND y.signature = ? GROUP BY ALL ORDER BY 1, 2",
        [signature, signature],
    ).fetchall()
    return {(int(a), int(b)): int(n) for a, b, n in rows}


def _pair(
    signature: str, run_a: int, run_b: int, alpha: float | None, text: str = ""
) -> tuple[str, list[Any]]:
    """The ``WITH ... pair AS (...)`` of the questions both runs answered, and its parameters.

    ``pair`` has :data:`PAIR_COLUMNS`; with ``text`` only the questions whose external id or
    question holds each of its words (any case).
    """
    if int(run_a) == int(run_b):
        raise ComparisonError(f"run A and run B are one run ({int(run_a)}); pick two runs")
    if alpha is not None:
        check_alpha(alpha)
    words = text.split()
    found = "".join(
        " AND (i.ext_id ILIKE ? ESCAPE '\\' OR i.question ILIKE ? ESCAPE '\\')" for _ in words
    )
    sides = ", ".join(f"x.{s} AS {s}_a, y.{s} AS {s}_b" for s in _SCORES)
    deltas = ", ".join(f"y.{s} - x.{s} AS d_{s}" for s in _SCORES)
    sql = (
        f"{BLENDED}, pair AS (SELECT CAST(x.item_id AS BIGINT) AS item_id, "
        "coalesce(i.ext_id, '') AS ext_id, coalesce(i.question, '') AS question, "
        f"{sides}, {deltas} "
        "FROM c x JOIN c y ON x.item_id = y.item_id "
        "LEFT JOIN items i ON i.item_id = x.item_id "
        f"WHERE x.run_id = ? AND y.run_id = ?{found})"
    )
    params: list[Any] = [alpha, signature, int(run_a), int(run_b)]
    for word in words:
        params += [like_pattern(word)] * 2
    return sql, params


def _texts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its texts as ``question_deltas`` types them (``astype(str)``), empty too."""
    return frame.astype({"ext_id": str, "question": str})


def pair_deltas(
    con: duckdb.DuckDBPyConnection, signature: str, run_a: int, run_b: int, alpha: float | None
) -> pd.DataFrame:
    """Each question both runs answered: GoldSim, CtxSim and CUS of A and B at ``alpha``, B - A.

    :func:`s3kg_core.analysis.compare.question_deltas` of the blended frame (``reblend`` at
    ``alpha``; ``None`` keeps each score's stored alpha), computed in DuckDB from the two runs'
    scores only: the same rows, values (bit for bit) and order, biggest regression first.
    Columns :data:`PAIR_COLUMNS`.

    Raises
    ------
    ComparisonError
        If ``run_a`` and ``run_b`` are one run.
    ConfigError
        If ``alpha`` is outside [0, 1].
    """
    sql, params = _pair(signature, run_a, run_b, alpha)
    return _texts(con.execute(f"{sql} SELECT * FROM pair ORDER BY d_cus, item_id", params).df())


def pair_means_grid(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_a: int,
    run_b: int,
    alphas: Sequence[float],
) -> pd.DataFrame:
    """The Run comparison's figures at every alpha of ``alphas``, in one scan.

    Per alpha (``alpha``): the questions both runs answered (``shared``), the mean CUS of A and
    of B (``cus_a``, ``cus_b``), the mean of B minus A (``d_cus``) and how many questions got
    worse and better in B (``worse``, ``better``): :func:`pair_deltas`' frame summed, with the
    same blend (the counts are equal; the means within 1e-12, the order of a sum). Ordered by
    alpha.

    Raises
    ------
    ComparisonError
        If ``run_a`` and ``run_b`` are one run.
    ConfigError
        If an alpha is outside [0, 1], or ``alphas`` is empty.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "g.duckdb"))
    >>> with db.connect() as con:
    ...     pair_means_grid(con, "sig", 1, 2, [0.5]).columns.tolist()
    ['alpha', 'shared', 'cus_a', 'cus_b', 'd_cus', 'worse', 'better']
    """
    if int(run_a) == int(run_b):
        raise ComparisonError(f"run A and run B are one run ({int(run_a)}); pick two runs")
    return con.execute(
        f"{BLENDED_GRID}, pair AS (SELECT x.a AS alpha, x.cus AS cus_a, y.cus AS cus_b, "
        "y.cus - x.cus AS d_cus FROM c x JOIN c y ON x.item_id = y.item_id AND x.a = y.a "
        "WHERE x.run_id = ? AND y.run_id = ?) "
        "SELECT alpha, count(*) AS shared, avg(cus_a) AS cus_a, avg(cus_b) AS cus_b, "
        "avg(d_cus) AS d_cus, count(*) FILTER (WHERE d_cus < 0) AS worse, "
        "count(*) FILTER (WHERE d_cus > 0) AS better FROM pair GROUP BY alpha ORDER BY alpha",
        [grid_alphas(alphas), signature, int(run_a), int(run_b)],
    ).df()


def pair_questions(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_a: int,
    run_b: int,
    alpha: float | None,
    text: str = "",
    *,
    page: int = 0,
    size: int = 50,
    keep: int | None = None,
) -> tuple[pd.DataFrame, int, int]:
    """One page of :func:`pair_deltas`' questions for a picker: ``(rows, matches, page)``.

    A question matches when each word of ``text`` occurs (any case, ``%`` and ``_`` literal) in
    its external id or its question; the order is :func:`pair_deltas`' (biggest regression
    first). ``keep``: an item id whose page is returned instead of ``page`` when it matches (a
    linked question, or the one kept while alpha moves). The page is clamped to the last one.
    What ``dashboard.compare.question_choices`` returns for the pair's frame, in one query that
    sends one page of rows.

    Raises
    ------
    ComparisonError
        If ``run_a`` and ``run_b`` are one run.
    ConfigError
        If ``size`` is not positive.
    """
    if int(size) < 1:
        raise ConfigError(f"a page holds at least one question; got size {size!r}")
    sql, params = _pair(signature, run_a, run_b, alpha, text)
    frame = con.execute(
        f"{sql}, ranked AS (SELECT *, row_number() OVER (ORDER BY d_cus, item_id) - 1 AS position, "
        "count(*) OVER () AS total FROM pair), "
        "chosen AS (SELECT least(greatest(coalesce("
        "(SELECT position FROM ranked WHERE item_id = CAST(? AS BIGINT)) // $size, "
        "CAST(? AS BIGINT)), 0), greatest(coalesce(max(total), 0) - 1, 0) // $size) AS page "
        "FROM ranked) "
        "SELECT r.*, c.page FROM chosen c LEFT JOIN ranked r "
        "ON r.position >= c.page * $size AND r.position < (c.page + 1) * $size "
        "ORDER BY r.position".replace("$size", f"CAST({int(size)} AS BIGINT)"),
        [*params, keep, int(page)],
    ).df()
    chosen = int(frame["page"].iloc[0])
    rows = frame.dropna(subset=["item_id"])
    total = int(rows["total"].iloc[0]) if len(rows) else 0
    rows = rows.loc[:, list(PAIR_COLUMNS)].astype({"item_id": "int64"}).reset_index(drop=True)
    return _texts(rows), total, chosen
