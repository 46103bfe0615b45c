"""The SQL of the Failure analysis: each run's lowest-scoring answers and their stored TAU results.

The lowest share of each run is picked in DuckDB (the components blended at an alpha, ranked per
run with ``QUALIFY``), so no answer's row leaves the database unless it is picked. Functions
take an open connection, as :mod:`~s3kg_core.store.queries` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import duckdb
import pandas as pd

from ..errors import ConfigError
from .blend_queries import BLENDED, BLENDED_GRID, grid_alphas

__all__ = [
    "LOWEST_COLUMNS",
    "TAU_TARGETS",
    "kg_items",
    "lowest_scored",
    "lowest_scored_grid",
    "stored_tau_of",
]

TAU_TARGETS = ("cus", "gold_sim", "ctx_sim")
"""The scores that can rank answers for TAU (``ctx_sim`` explains against the context KG)."""

LOWEST_COLUMNS = (
    "run_id",
    "item_id",
    "dataset",
    "model",
    "temperature",
    "extractor",
    "gold_sim",
    "ctx_sim",
    "cus",
)
"""The columns of :func:`lowest_scored`, in order."""


def lowest_scored(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    target: str,
    fraction: float,
    alpha: float | None,
) -> pd.DataFrame:
    """The lowest ``fraction`` of each run's answers by ``target`` at ``alpha``, in DuckDB.

    What :func:`s3kg_core.stages.tau.lowest_cases` picks from
    :func:`s3kg_core.stages.scored.scored_frame`: per run, ``ceil(n * fraction)`` answers
    (at least one), ties broken by item; ``alpha=None`` keeps each answer's stored alpha.
    Columns :data:`LOWEST_COLUMNS`, ordered by run and item.

    Raises
    ------
    ConfigError
        If ``target`` is not one of :data:`TAU_TARGETS` or ``fraction`` is not in (0, 1].

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "t.duckdb"))
    >>> with db.connect() as con:
    ...     lowest_scored(con, "sig", "recall", 0.05, None)
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: target must be one of cus, gold_sim, ctx_sim; got 'recall'
    """
    return con.execute(_lowest_sql(BLENDED, target, fraction), [alpha, signature, fraction]).df()


def lowest_scored_grid(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    target: str,
    fraction: float,
    alphas: Sequence[float],
) -> pd.DataFrame:
    """:func:`lowest_scored` at each of ``alphas``, in one scan.

    Columns ``alpha`` and :data:`LOWEST_COLUMNS`; the rows of one alpha are exactly
    :func:`lowest_scored`'s at that alpha (the same blend, ranks and ties), ordered by alpha,
    run and item. For a page that shows TAU's picks at every stop of its alpha slider.

    Raises
    ------
    ConfigError
        As :func:`lowest_scored`, or on an alpha outside [0, 1].

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "g.duckdb"))
    >>> with db.connect() as con:
    ...     len(lowest_scored_grid(con, "sig", "cus", 0.05, [0.0, 0.5]))
    0
    """
    sql = _lowest_sql(BLENDED_GRID, target, fraction, by="a")
    return con.execute(sql, [grid_alphas(alphas), signature, fraction]).df()


def _lowest_sql(blended: str, target: str, fraction: float, by: str = "") -> str:
    """The lowest ``fraction`` of each run (of each ``by``, with its value as ``alpha``)."""
    if target not in TAU_TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TAU_TARGETS)}; got {target!r}")
    if not 0.0 < fraction <= 1.0:
        raise ConfigError(f"fraction must be in (0, 1]; got {fraction!r}")
    # ``target`` is one of three fixed names (checked above): safe to place in the statement
    keys = f"{by}, run_id" if by else "run_id"
    picked = f"{by} AS alpha, " if by else ""
    return (
        f"{blended} SELECT {picked}{', '.join(LOWEST_COLUMNS)} FROM c "
        f"QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY {target}, item_id) "
        f"<= ceil(count(*) OVER (PARTITION BY {keys}) * CAST(? AS DOUBLE)) "
        f"ORDER BY {keys}, item_id"
    )


def stored_tau_of(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    targets: Sequence[str],
    tau_signature: str,
    answers: Iterable[tuple[int, int]],
) -> dict[tuple[int, int], str]:
    """Stored TAU results (JSON) of these ``(run_id, item_id)`` answers, where they fit.

    A stored result fits when it was written for the score ``signature`` with one of
    ``targets`` (``cus`` and ``gold_sim`` explain against the gold KG, ``ctx_sim`` against the
    context KG) and its own TAU signature (``result.signature``, see
    :func:`s3kg_core.stages.tau.tau_signature`) is ``tau_signature``: the same encoder and
    thresholds. Answers without one are left out.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "t.duckdb"))
    >>> with db.connect() as con:
    ...     stored_tau_of(con, "sig", ["cus"], "tau|enc:e", [(1, 1)])
    {}
    """
    wanted = pd.DataFrame(list(answers), columns=["run_id", "item_id"], dtype="int64")
    if wanted.empty or not targets:
        return {}
    con.register("_wanted_tau", wanted)
    try:
        rows = con.execute(
            "SELECT t.run_id, t.item_id, t.result FROM tau_results t JOIN _wanted_tau w "
            "ON t.run_id = w.run_id AND t.item_id = w.item_id "
            f"WHERE t.signature = ? AND t.target IN ({', '.join('?' for _ in targets)}) "
            "AND json_extract_string(t.result, '$.signature') = ? ORDER BY t.target",
            [signature, *targets, tau_signature],
        ).fetchall()
    finally:
        con.unregister("_wanted_tau")
    found: dict[tuple[int, int], str] = {}
    for run, item, result in rows:
        found.setdefault((int(run), int(item)), str(result))
    return found


def kg_items(con: duckdb.DuckDBPyConnection, run_id: int) -> list[int]:
    """The items of run ``run_id`` with at least one stored KG, in order (what TAU can explain).

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "t.duckdb"))
    >>> with db.connect() as con:
    ...     kg_items(con, 1)
    []
    """
    rows = con.execute(
        "SELECT DISTINCT item_id FROM kgs WHERE run_id = ? ORDER BY item_id", [run_id]
    ).fetchall()
    return [int(r[0]) for r in rows]
