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
...     page, total = pair_question_page(con, "sig", runs[0], runs[1], 0.5, "question 1")
>>> pairs
{(1, 2): 2, (2, 1): 2}
>>> deltas[["ext_id", "d_cus"]].values.tolist()
[['q0', -0.25], ['q1', -0.25]]
>>> total, page["ext_id"].tolist()
(1, ['q1'])
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from ..errors import ComparisonError
from ..scoring.result import check_alpha
from .blend_queries import BLENDED
from .search_queries import like_pattern

__all__ = [
    "PAIR_COLUMNS",
    "comparable_pairs",
    "pair_deltas",
    "pair_question_page",
    "pair_question_position",
]

_SCORES = ("gold_sim", "ctx_sim", "cus")

PAIR_COLUMNS = (
    "item_id",
    "ext_id",
    "question",
    *(f"{s}_{side}" for s in _SCORES for side in ("a", "b")),
    *(f"d_{s}" for s in _SCORES),
)
"""The columns of :func:`pair_deltas` and :func:`pair_question_page`, in order: those of
:func:`s3kg_core.stages.compare.question_deltas`."""


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

    :func:`s3kg_core.stages.compare.question_deltas` of the blended frame (``reblend`` at
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


def pair_question_page(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_a: int,
    run_b: int,
    alpha: float | None,
    text: str = "",
    *,
    limit: int = 50,
    offset: int = 0,
) -> tuple[pd.DataFrame, int]:
    """One page of :func:`pair_deltas`' questions that match ``text``, and how many match.

    A question matches when each word of ``text`` occurs (any case, ``%`` and ``_`` literal) in
    its external id or its question; the order is :func:`pair_deltas`' (biggest regression
    first). Past the last page: no rows and the number of matches.

    Raises
    ------
    ComparisonError
        If ``run_a`` and ``run_b`` are one run.
    """
    sql, params = _pair(signature, run_a, run_b, alpha, text)
    frame = con.execute(
        f"{sql} SELECT *, count(*) OVER () AS total FROM pair ORDER BY d_cus, item_id "
        "LIMIT ? OFFSET ?",
        [*params, int(limit), int(offset)],
    ).df()
    total = int(frame["total"].iloc[0]) if len(frame) else 0
    if not len(frame) and offset > 0:  # past the last page: count the matches
        total = int(con.execute(f"{sql} SELECT count(*) FROM pair", params).fetchall()[0][0])
    return _texts(frame.drop(columns="total").loc[:, list(PAIR_COLUMNS)]), total


def pair_question_position(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    run_a: int,
    run_b: int,
    alpha: float | None,
    item_id: int,
    text: str = "",
) -> int | None:
    """Where ``item_id`` stands (from 0) in :func:`pair_question_page`'s order, or ``None``.

    ``None`` when both runs did not answer it or it does not match ``text``; the position
    gives the page a kept or linked question is on.

    Raises
    ------
    ComparisonError
        If ``run_a`` and ``run_b`` are one run.
    """
    sql, params = _pair(signature, run_a, run_b, alpha, text)
    found = con.execute(
        f"{sql} SELECT position FROM (SELECT item_id, row_number() OVER "
        "(ORDER BY d_cus, item_id) - 1 AS position FROM pair) WHERE item_id = ?",
        [*params, int(item_id)],
    ).fetchall()
    return int(found[0][0]) if found else None
