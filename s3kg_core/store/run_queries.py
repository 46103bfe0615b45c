"""The SQL of one run's page: what its answers cost and how its stages went, aggregated here.

Every figure is a ``GROUP BY`` in DuckDB (no answer's row leaves the database), so a run of
any size costs one small result. Functions take an open connection, as
:mod:`~s3kg_core.store.queries` does.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import AnswerRecord, ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Why?", "C.", "G."),
...                                     ItemRecord("q2", "How?", "C.", "G.")])
...     run = db.ensure_run(con, ds, "org/m", 0.7, "offline", settings={"max_tokens": 64})
...     _ = db.put_answers(con, run, [
...         AnswerRecord(ids["q1"], "Yes.", latency_s=1.5, prompt_tokens=10, completion_tokens=4),
...         AnswerRecord(ids["q2"], None, error="HTTP 500")])
...     info, usage = run_info(con, run), answer_usage(con, run)
...     statuses = answer_status_counts(con, run)
>>> info["name"], info["model"], info["settings"]
('m', 'org/m', {'max_tokens': 64})
>>> usage["answers"], usage["with_latency"], usage["latency_mean"], usage["completion_tokens"]
(2, 1, 1.5, 4)
>>> statuses
{'error': 1, 'ok': 1}
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
import pandas as pd

from ..errors import RunSelectionError
from ..names import MAX_NAME_CHARS, clean_name
from . import queries

__all__ = [
    "MAX_RUN_NAME",
    "answer_status_counts",
    "answer_usage",
    "finish_reasons",
    "kg_status_counts",
    "rename_run",
    "run_info",
    "scored_per_signature",
]

MAX_RUN_NAME = MAX_NAME_CHARS
"""The longest display name kept (:data:`s3kg_core.names.MAX_NAME_CHARS`)."""


def rename_run(con: duckdb.DuckDBPyConnection, run_id: int, name: str) -> str:
    r"""Give run ``run_id`` the display name ``name`` (as ``--name`` does); return it as stored.

    Spaces around the name are dropped and any run of whitespace (a line break, a tab) becomes
    one space. The run id does not change, so links (``/Run?run=3``) keep working.

    Raises
    ------
    ConfigError
        The name is empty, longer than :data:`MAX_RUN_NAME` characters, or holds a control
        or formatting character (:func:`s3kg_core.names.clean_name`, the rule of every name).
    RunSelectionError
        There is no run ``run_id``.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "n.duckdb"))
    >>> with db.transaction() as con:
    ...     run = db.ensure_run(con, db.ensure_dataset(con, "d"), "org/m", 0.7, "x")
    ...     rename_run(con, run, "  baseline\n(T 0.7) ")
    ...     run_info(con, run)["name"]
    'baseline (T 0.7)'
    'baseline (T 0.7)'
    """
    cleaned = clean_name(str(name), "a run's name", limit=MAX_RUN_NAME)
    if run_info(con, run_id) is None:
        raise RunSelectionError(f"there is no run {run_id} in this database")
    queries.set_run_name(con, run_id, cleaned)
    return cleaned


def run_info(con: duckdb.DuckDBPyConnection, run_id: int) -> dict[str, Any] | None:
    """Run ``run_id`` as a dict, or ``None`` when there is no such run.

    Keys ``run_id, dataset, name, model, temperature, extractor, source, settings`` (a dict),
    ``created_at``.
    """
    row = con.execute(
        "SELECT r.run_id, d.name, coalesce(r.name, r.model), r.model, r.temperature, "
        "r.extractor, r.source, CAST(r.settings AS VARCHAR), r.created_at "
        "FROM runs r JOIN datasets d USING (dataset_id) WHERE r.run_id = ?",
        [run_id],
    ).fetchone()
    if row is None:
        return None
    keys = ("run_id", "dataset", "name", "model", "temperature", "extractor", "source")
    info = dict(zip(keys, row[:7], strict=True))
    try:
        settings = json.loads(row[7]) if row[7] else {}
    except json.JSONDecodeError:
        settings = {"settings": row[7]}
    info["settings"] = settings if isinstance(settings, dict) else {"settings": settings}
    info["created_at"] = row[8]
    return info


def answer_usage(con: duckdb.DuckDBPyConnection, run_id: int) -> dict[str, Any]:
    """What a run's answers cost, as ``collect`` recorded it (``None`` where nothing was).

    Keys ``answers``, ``with_latency`` (answers with a latency), ``latency_mean``,
    ``latency_median``, ``latency_p95``, ``latency_max`` (seconds), ``prompt_tokens`` and
    ``completion_tokens`` (sums), ``with_tokens`` (answers with token counts).
    """
    row = (
        con.execute(
            "SELECT count(*), count(latency_s), avg(latency_s), median(latency_s), "
            "quantile_cont(latency_s, 0.95), max(latency_s), sum(prompt_tokens), "
            "sum(completion_tokens), count(completion_tokens) FROM answers WHERE run_id = ?",
            [run_id],
        ).fetchone()
        or (0,) + (None,) * 8
    )  # an aggregate always returns one row
    keys = (
        "answers",
        "with_latency",
        "latency_mean",
        "latency_median",
        "latency_p95",
        "latency_max",
        "prompt_tokens",
        "completion_tokens",
        "with_tokens",
    )
    out = dict(zip(keys, row, strict=True))
    for key in ("answers", "with_latency", "prompt_tokens", "completion_tokens", "with_tokens"):
        out[key] = None if out[key] is None else int(out[key])
    return out


def answer_status_counts(con: duckdb.DuckDBPyConnection, run_id: int) -> dict[str, int]:
    """How many of a run's answers have each status (``ok``, ``error``...), by status."""
    rows = con.execute(
        "SELECT coalesce(status, 'unknown') AS s, count(*) FROM answers WHERE run_id = ? "
        "GROUP BY s ORDER BY s",
        [run_id],
    ).fetchall()
    return {str(s): int(n) for s, n in rows}


def finish_reasons(con: duckdb.DuckDBPyConnection, run_id: int) -> dict[str, int]:
    """Why generation stopped (``stop``, ``length``: cut at max_tokens), answers per reason."""
    rows = con.execute(
        "SELECT finish_reason, count(*) FROM answers WHERE run_id = ? "
        "AND finish_reason IS NOT NULL GROUP BY 1 ORDER BY 1",
        [run_id],
    ).fetchall()
    return {str(s): int(n) for s, n in rows}


def kg_status_counts(con: duckdb.DuckDBPyConnection, run_id: int) -> pd.DataFrame:
    """KGs of a run per source and status: columns ``source, status, kgs``.

    The status is as stored (``ok``, ``empty``, ``failed: ...`` cut to its first word).
    """
    return con.execute(
        "SELECT source, split_part(status, ':', 1) AS status, count(*) AS kgs FROM kgs "
        "WHERE run_id = ? GROUP BY ALL ORDER BY source, status",
        [run_id],
    ).df()


def scored_per_signature(con: duckdb.DuckDBPyConnection, run_id: int) -> pd.DataFrame:
    """Answers of a run scored under each signature, the latest first.

    Columns ``signature, scored, not_ok`` (``not_ok``: a comparison with an empty or
    unparseable KG).
    """
    return con.execute(
        "SELECT signature, count(*) AS scored, "
        "count(*) FILTER (WHERE gold_status <> 'ok' OR ctx_status <> 'ok') AS not_ok "
        "FROM scores WHERE run_id = ? GROUP BY signature ORDER BY max(scored_at) DESC",
        [run_id],
    ).df()
