"""The SQL of the pipeline stages and the dashboard: one small function per query.

Every function takes an open DuckDB connection (from :meth:`~s3kg_core.store.store.Store.connect`
or :meth:`~s3kg_core.store.store.Store.transaction`), runs its statement with parameters and
returns plain Python values or a pandas frame. Transactions and locking stay with the caller:
nothing here opens, commits or closes anything. GraphEval's and the factuality judge's tables
have their own modules (:mod:`~s3kg_core.store.grapheval_queries`,
:mod:`~s3kg_core.store.factuality_queries`); the writes of the stages' records are methods of
:class:`~s3kg_core.store.store.Store`.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "q.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     run = db.ensure_run(con, ds, "model-a", 0.0, "none")
...     run_ids(con), dataset_ids(con)
([1], {'toy': 1})
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

__all__ = [
    "TAU_COLUMNS",
    "answer_statuses",
    "answer_texts",
    "answered_item_ids",
    "answers_for_extraction",
    "copy_answers",
    "copy_parquet_parts",
    "copy_results_to_parquet",
    "count_answers",
    "dataset_id",
    "dataset_ids",
    "dataset_item_ids",
    "dataset_items",
    "delete_item_kgs",
    "delete_item_results",
    "delete_items",
    "embeddings_of",
    "find_run_by_source",
    "item_answer_texts",
    "item_questions",
    "item_texts",
    "latest_scored_signature",
    "replace_tau_results",
    "run_extractor",
    "run_ids",
    "run_overview",
    "run_rows",
    "score_alphas",
    "score_details",
    "scored_components",
    "scoring_candidates",
    "set_run_extractor",
    "set_run_settings",
    "set_score_alpha",
    "signatures_by_recency",
    "status_counts",
    "tau_result",
    "texts_of",
]


# -- datasets and items ----------------------------------------------------------------------


def dataset_ids(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Every dataset's id by name."""
    return dict(con.execute("SELECT name, dataset_id FROM datasets").fetchall())


def dataset_id(con: duckdb.DuckDBPyConnection, name: str) -> int | None:
    """The id of dataset ``name``, or ``None`` when there is none."""
    rows = con.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchall()
    return int(rows[0][0]) if rows else None


def dataset_item_ids(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, int]:
    """``ext_id -> item_id`` of the items of dataset ``name``."""
    return dict(
        con.execute(
            "SELECT i.ext_id, i.item_id FROM items i JOIN datasets d USING (dataset_id) "
            "WHERE d.name = ?",
            [name],
        ).fetchall()
    )


def dataset_items(
    con: duckdb.DuckDBPyConnection, dataset_id: int, limit: int | None = None
) -> list[tuple[Any, ...]]:
    """``(item_id, question, context)`` of a dataset's items by id, the first ``limit`` only."""
    return con.execute(
        "SELECT item_id, question, context FROM items WHERE dataset_id = ? "
        "ORDER BY item_id" + (" LIMIT ?" if limit is not None else ""),
        [dataset_id, *([limit] if limit is not None else [])],
    ).fetchall()


def item_texts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every item: ``item_id, ext_id, question, context, gold_answer``."""
    return con.execute(
        "SELECT i.item_id, i.ext_id, i.question, i.context, i.gold_answer FROM items i"
    ).df()


def item_questions(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every item: ``item_id, ext_id, question`` (no context: a fifth of the bytes to read)."""
    return con.execute("SELECT item_id, ext_id, question FROM items").df()


# -- runs ------------------------------------------------------------------------------------


def run_ids(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Every run's id, in order."""
    return [int(r[0]) for r in con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]


def run_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """Every run as ``(run_id, dataset_id, model, temperature, extractor, source, settings)``."""
    return con.execute(
        "SELECT run_id, dataset_id, model, temperature, extractor, source, settings FROM runs "
        "ORDER BY run_id"
    ).fetchall()


def run_extractor(con: duckdb.DuckDBPyConnection, run_id: int) -> str | None:
    """The extractor of run ``run_id``, or ``None`` when there is no such run."""
    row = con.execute("SELECT extractor FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return None if row is None else str(row[0])


def find_run_by_source(
    con: duckdb.DuckDBPyConnection, dataset_id: int, model: str, temperature: float, source: str
) -> int | None:
    """The first run of ``(dataset, model, temperature)`` that ``source`` made, or ``None``.

    ``source`` is ``collect`` for ``s3kg collect``, ``table/FILE`` for an imported table. The
    first such run is the one its extractor was set on; later ones are copies made to extract
    it again with another extractor.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
    >>> with db.transaction() as con:
    ...     ds = db.ensure_dataset(con, "toy")
    ...     run = db.ensure_run(con, ds, "m", 0.0, "offline", source="table/t.csv")
    ...     find_run_by_source(con, ds, "m", 0.0, "table/t.csv"), find_run_by_source(
    ...         con, ds, "m", 0.0, "collect")
    (1, None)
    """
    rows = con.execute(
        "SELECT run_id FROM runs WHERE dataset_id = ? AND model = ? AND temperature = ? "
        "AND source = ? ORDER BY run_id LIMIT 1",
        [dataset_id, model, float(temperature), source],
    ).fetchall()
    return int(rows[0][0]) if rows else None


def set_run_settings(con: duckdb.DuckDBPyConnection, run_id: int, settings: str | None) -> None:
    """Replace a run's settings (JSON text)."""
    con.execute("UPDATE runs SET settings = ? WHERE run_id = ?", [settings, run_id])


def set_run_name(con: duckdb.DuckDBPyConnection, run_id: int, name: str) -> None:
    """Give run ``run_id`` the display name ``name``."""
    con.execute("UPDATE runs SET name = ? WHERE run_id = ?", [name, run_id])


def run_name(con: duckdb.DuckDBPyConnection, run_id: int) -> str | None:
    """The display name of run ``run_id`` (``None``: no such run, or no name)."""
    row = con.execute("SELECT name FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def set_run_extractor(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[int], extractor: str, *, current: str
) -> None:
    """Set the extractor of those of ``run_ids`` whose extractor is still ``current``."""
    con.executemany(
        "UPDATE runs SET extractor = ? WHERE run_id = ? AND extractor = ?",
        [[extractor, run, current] for run in run_ids],
    )


def run_overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """One row per run with how many answers it has, with KGs, and scored.

    Columns ``run_id, dataset, model, temperature, extractor, source, answers, with_kgs,
    scored, model_id, settings, created_at``, ordered by dataset, model, temperature,
    extractor and run id; ``model`` is the run's display name (``runs.name``, the model's short
    name unless ``--name`` gave another; two runs may share one), ``model_id`` the model as
    the run names it (an id, or a local model's folder), ``settings`` its JSON text.
    """
    return con.execute(
        "SELECT r.run_id, d.name AS dataset, coalesce(r.name, r.model) AS model, "
        "r.temperature, r.extractor, r.source, "
        "(SELECT count(*) FROM answers a WHERE a.run_id = r.run_id) AS answers, "
        "(SELECT count(DISTINCT item_id) FROM kgs k WHERE k.run_id = r.run_id) AS with_kgs, "
        "(SELECT count(DISTINCT item_id) FROM scores s WHERE s.run_id = r.run_id) AS scored, "
        "r.model AS model_id, CAST(r.settings AS VARCHAR) AS settings, r.created_at "
        "FROM runs r JOIN datasets d USING (dataset_id) ORDER BY d.name, model, "
        "r.temperature, r.extractor, r.run_id"
    ).df()


# -- answers ---------------------------------------------------------------------------------


def answered_item_ids(con: duckdb.DuckDBPyConnection, run_id: int) -> set[int]:
    """The items of a run with an answer that did not fail (status other than ``error``)."""
    return {
        int(r[0])
        for r in con.execute(
            "SELECT item_id FROM answers WHERE run_id = ? AND status <> 'error'",
            [run_id],
        ).fetchall()
    }


def copy_answers(con: duckdb.DuckDBPyConnection, from_run: int, to_run: int) -> None:
    """Copy the answers of ``from_run`` into ``to_run`` (answers ``to_run`` has are kept)."""
    con.execute(
        "INSERT OR IGNORE INTO answers SELECT ? AS run_id, * EXCLUDE (run_id) FROM answers "
        "WHERE run_id = ?",
        [to_run, from_run],
    )


def answer_texts(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every answer: ``run_id, item_id, answer``."""
    return con.execute("SELECT run_id, item_id, answer FROM answers").df()


def texts_of(
    con: duckdb.DuckDBPyConnection, answers: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str | None, str | None, str | None]]:
    """``(run_id, item_id, answer, gold_answer, context)`` of these answers (``(run, item)``)."""
    frame = pd.DataFrame(list(answers), columns=["run_id", "item_id"], dtype="int64")
    con.register("_wanted_texts_of", frame)
    try:
        return con.execute(
            "SELECT a.run_id, a.item_id, a.answer, i.gold_answer, i.context FROM answers a "
            "JOIN _wanted_texts_of w ON a.run_id = w.run_id AND a.item_id = w.item_id "
            "JOIN items i ON i.item_id = a.item_id"
        ).fetchall()
    finally:
        con.unregister("_wanted_texts_of")


_KG_JOINS = (
    "LEFT JOIN kgs g ON g.run_id = a.run_id AND g.item_id = a.item_id AND g.source = 'gold' "
    "LEFT JOIN kgs k ON k.run_id = a.run_id AND k.item_id = a.item_id AND k.source = 'answer' "
    "LEFT JOIN kgs c ON c.run_id = a.run_id AND c.item_id = a.item_id AND c.source = 'context'"
)
"""Each answer's (``a``) gold, answer and context KG rows: ``g``, ``k`` and ``c``."""


def answer_statuses(con: duckdb.DuckDBPyConnection, signature: str | None) -> pd.DataFrame:
    """Every answer with how its collection and extraction went, and whether it is scored.

    Columns ``dataset, model, temperature, extractor, run_id, item_id, answer_status,
    answer_error, gold_kg_status, answer_kg_status, context_kg_status, scored``: the answer's
    status and error, each KG's status (``None`` where it is not stored) and whether the answer
    has a score under ``signature`` (never, for ``None``); ordered as :func:`scored_components`.
    ``model`` is the run's display name, as in :func:`run_overview`.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import AnswerRecord, ItemRecord
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "s.duckdb"))
    >>> with db.transaction() as con:
    ...     ds = db.ensure_dataset(con, "toy")
    ...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
    ...     run = db.ensure_run(con, ds, "m", 0.0, "none")
    ...     _ = db.put_answers(con, run, [AnswerRecord(ids["q1"], None, error="HTTP 500")])
    ...     row = answer_statuses(con, None).iloc[0]
    >>> row["answer_status"], row["answer_error"], bool(row["scored"]), row["answer_kg_status"]
    ('error', 'HTTP 500', False, None)
    """
    return con.execute(
        "SELECT d.name AS dataset, coalesce(r.name, r.model) AS model, r.temperature, "
        "r.extractor, a.run_id, a.item_id, "
        "a.status AS answer_status, a.error AS answer_error, g.status AS gold_kg_status, "
        "k.status AS answer_kg_status, c.status AS context_kg_status, "
        "EXISTS (SELECT 1 FROM scores s WHERE s.run_id = a.run_id AND s.item_id = a.item_id "
        "AND s.signature = ?) AS scored "
        "FROM answers a JOIN runs r USING (run_id) JOIN datasets d USING (dataset_id) "
        f"{_KG_JOINS} "
        "ORDER BY dataset, model, r.temperature, r.extractor, a.item_id",
        [signature],
    ).df()


def status_counts(con: duckdb.DuckDBPyConnection, signature: str | None) -> pd.DataFrame:
    """:func:`answer_statuses` counted in DuckDB: one row per run and combination of statuses.

    Columns ``run_id, answer_status, gold_kg_status, answer_kg_status, context_kg_status,
    scored, n``; a KG status that starts with ``failed`` reads ``failed`` (its message dropped,
    so the combinations stay few). What ``unscored_reasons`` needs, a few rows per run where
    :func:`answer_statuses` returns one per answer.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import AnswerRecord, ItemRecord
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "s.duckdb"))
    >>> with db.transaction() as con:
    ...     ds = db.ensure_dataset(con, "toy")
    ...     ids = db.upsert_items(con, ds, [ItemRecord(f"q{i}", "Why?", "C.", "G.")
    ...                                     for i in range(3)])
    ...     run = db.ensure_run(con, ds, "m", 0.0, "none")
    ...     _ = db.put_answers(con, run, [AnswerRecord(ids[f"q{i}"], None, error="HTTP 500")
    ...                                   for i in range(3)])
    ...     counts = status_counts(con, None)
    >>> counts[["answer_status", "scored", "n"]].values.tolist()
    [['error', False, 3]]
    """
    failed = "CASE WHEN starts_with({0}.status, 'failed') THEN 'failed' ELSE {0}.status END"
    return con.execute(
        "SELECT a.run_id, a.status AS answer_status, "
        f"{failed.format('g')} AS gold_kg_status, {failed.format('k')} AS answer_kg_status, "
        f"{failed.format('c')} AS context_kg_status, "
        "s.run_id IS NOT NULL AS scored, count(*) AS n "
        "FROM answers a "
        f"{_KG_JOINS} "
        "LEFT JOIN (SELECT DISTINCT run_id, item_id FROM scores WHERE signature = ?) s "
        "ON s.run_id = a.run_id AND s.item_id = a.item_id "
        "GROUP BY ALL ORDER BY ALL",
        [signature],
    ).df()


def item_answer_texts(
    con: duckdb.DuckDBPyConnection, run_id: int, item_id: int
) -> tuple[Any, ...] | None:
    """``(ext_id, question, context, gold_answer, answer, status)`` of one answer, or ``None``."""
    rows = con.execute(
        "SELECT i.ext_id, i.question, i.context, i.gold_answer, a.answer, a.status "
        "FROM answers a JOIN items i USING (item_id) WHERE a.run_id = ? AND a.item_id = ?",
        [run_id, item_id],
    ).fetchall()
    return rows[0] if rows else None


# -- KGs (extraction) ------------------------------------------------------------------------


def answers_for_extraction(con: duckdb.DuckDBPyConnection, run_id: int) -> list[tuple[Any, ...]]:
    """A run's answers with their texts and how many of their KGs did not fail, by item.

    Each row is ``(item_id, answer, status, gold_answer, context, n_kgs)``.
    """
    return con.execute(
        "SELECT a.item_id, a.answer, a.status, i.gold_answer, i.context, "
        "(SELECT count(*) FROM kgs k WHERE k.run_id = a.run_id AND k.item_id = a.item_id "
        "AND k.status NOT LIKE 'failed%') "
        "FROM answers a JOIN items i USING (item_id) WHERE a.run_id = ? ORDER BY a.item_id",
        [run_id],
    ).fetchall()


def delete_items(
    con: duckdb.DuckDBPyConnection, tables: Sequence[str], keys: Sequence[tuple[int, int]]
) -> None:
    """Remove the rows of these ``(run_id, item_id)`` from each of ``tables``.

    One statement per table: one per key took 27 s for 6,000 keys, inside an import's
    transaction.
    """
    if not keys:
        return
    frame = pd.DataFrame(
        [(int(r), int(i)) for r, i in keys], columns=["run_id", "item_id"], dtype="int64"
    )
    con.register("_delete_keys", frame)
    try:
        for table in tables:
            con.execute(
                f"DELETE FROM {table} WHERE (run_id, item_id) IN "
                "(SELECT (run_id, item_id) FROM _delete_keys)"
            )
    finally:
        con.unregister("_delete_keys")


def delete_item_kgs(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[int, int]]) -> None:
    """Remove the KGs and triples of these ``(run_id, item_id)`` (their answer changed)."""
    delete_items(con, ("triples", "kgs"), keys)


def delete_item_results(con: duckdb.DuckDBPyConnection, keys: Sequence[tuple[int, int]]) -> None:
    """Remove the scores and TAU results of these ``(run_id, item_id)`` (their KGs changed)."""
    delete_items(con, ("scores", "tau_results"), keys)


# -- scores ----------------------------------------------------------------------------------


def _runs_filter(run_ids: Sequence[int] | None) -> tuple[str, list[Any]]:
    """The ``AND a.run_id IN (...)`` clause (empty for all runs) and its parameters."""
    if run_ids is None:
        return "", []
    return f" AND a.run_id IN ({', '.join('?' for _ in run_ids) or 'NULL'})", list(run_ids)


def scoring_candidates(
    con: duckdb.DuckDBPyConnection, signature: str, run_ids: Sequence[int] | None = None
) -> list[tuple[Any, ...]]:
    """``(run_id, item_id, done)`` of every answer ready to score, by run and item.

    Ready: the answer's KG is stored and no KG of the item failed to extract. ``done``: it has
    a score under ``signature``. ``run_ids`` restricts to those runs (default: all).
    """
    runs_filter, params = _runs_filter(run_ids)
    return con.execute(
        "SELECT a.run_id, a.item_id, EXISTS (SELECT 1 FROM scores s WHERE s.run_id = a.run_id "
        "AND s.item_id = a.item_id AND s.signature = ?) AS done FROM answers a WHERE "
        # ready: the answer's KG is stored and no KG of the item failed to extract
        "EXISTS (SELECT 1 FROM kgs k WHERE k.run_id = a.run_id AND k.item_id = a.item_id "
        "AND k.source = 'answer') AND NOT EXISTS (SELECT 1 FROM kgs k WHERE k.run_id = "
        "a.run_id AND k.item_id = a.item_id AND k.status LIKE 'failed%')"
        + runs_filter
        + " ORDER BY a.run_id, a.item_id",
        [signature, *params],
    ).fetchall()


def failed_extractions(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[int] | None = None
) -> list[tuple[int, str, int]]:
    """``(run_id, extractor, answers)``: per run, the answers of which a KG failed to extract."""
    runs_filter, params = _runs_filter(run_ids)
    rows = con.execute(
        "SELECT a.run_id, r.extractor, count(*) FROM answers a JOIN runs r ON r.run_id = "
        "a.run_id WHERE EXISTS (SELECT 1 FROM kgs k WHERE k.run_id = a.run_id AND k.item_id = "
        "a.item_id AND k.status LIKE 'failed%')" + runs_filter + " GROUP BY a.run_id, "
        "r.extractor ORDER BY a.run_id",
        params,
    ).fetchall()
    return [(int(run), str(extractor), int(n)) for run, extractor, n in rows]


def failed_kg_counts(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[int, int]]:
    """``{run_id: (failed KGs, stored KGs)}`` of the runs with a KG that failed to extract."""
    rows = con.execute(
        "SELECT run_id, count(*) FILTER (WHERE status LIKE 'failed%'), count(*) FROM kgs "
        "GROUP BY run_id HAVING count(*) FILTER (WHERE status LIKE 'failed%') > 0 "
        "ORDER BY run_id"
    ).fetchall()
    return {int(run): (int(failed), int(total)) for run, failed, total in rows}


def count_answers(con: duckdb.DuckDBPyConnection, run_ids: Sequence[int] | None = None) -> int:
    """How many answers are stored (in ``run_ids`` only, when given)."""
    runs_filter, params = _runs_filter(run_ids)
    total = con.execute(
        "SELECT count(*) FROM answers a WHERE true" + runs_filter, params
    ).fetchall()
    return int(total[0][0])


def set_score_alpha(con: duckdb.DuckDBPyConnection, signature: str, alpha: float) -> None:
    """Record ``alpha`` on every score of ``signature`` (a re-blend: nothing is recomputed)."""
    con.execute(
        "UPDATE scores SET alpha = ? WHERE signature = ? AND alpha <> ?",
        [alpha, signature, alpha],
    )


def score_alphas(con: duckdb.DuckDBPyConnection, signature: str) -> list[float]:
    """The distinct alphas the scores of ``signature`` are stored with, smallest first.

    One, normally (``s3kg score --alpha`` re-blends all of a signature's scores at once);
    none when nothing is scored under ``signature``.
    """
    rows = con.execute(
        "SELECT DISTINCT alpha FROM scores WHERE signature = ? ORDER BY alpha", [signature]
    ).fetchall()
    return [float(r[0]) for r in rows]


def latest_scored_signature(con: duckdb.DuckDBPyConnection) -> str | None:
    """The signature with the most recent score, or ``None`` when nothing is scored."""
    rows = con.execute(
        "SELECT signature FROM scores GROUP BY signature ORDER BY max(scored_at) DESC LIMIT 1"
    ).fetchall()
    return str(rows[0][0]) if rows else None


def signatures_by_recency(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every score signature, the most recently scored first."""
    rows = con.execute(
        "SELECT signature, max(scored_at) AS t FROM scores GROUP BY 1 ORDER BY t DESC"
    ).fetchall()
    return [r[0] for r in rows]


def scored_components(
    con: duckdb.DuckDBPyConnection, signature: str, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every score of ``signature`` with its run: the stored components, unblended.

    Columns ``dataset, model, temperature, extractor, run_id, item_id, mode, alpha, gold_s_wl,
    gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status``, ordered by dataset, model,
    temperature, extractor and item; ``model`` is the run's display name, as in
    :func:`run_overview`. ``run_ids``: those runs' scores only (DuckDB filters the scan).
    """
    among = "" if run_ids is None else " AND list_contains(?, s.run_id)"
    params: list[Any] = [signature, *([] if run_ids is None else [[int(r) for r in run_ids]])]
    return con.execute(
        "SELECT d.name AS dataset, coalesce(r.name, r.model) AS model, r.temperature, "
        "r.extractor, s.run_id, s.item_id, "
        "s.mode, s.alpha, s.gold_s_wl, s.gold_s_sbert, s.gold_status, s.ctx_s_wl, "
        "s.ctx_s_sbert, s.ctx_status FROM scores s JOIN runs r USING (run_id) "
        f"JOIN datasets d USING (dataset_id) WHERE s.signature = ?{among} "
        "ORDER BY dataset, model, r.temperature, r.extractor, s.item_id",
        params,
    ).df()


def score_details(
    con: duckdb.DuckDBPyConnection, run_id: int, item_id: int, signature: str
) -> tuple[str | None, str | None] | None:
    """``(gold_detail, ctx_detail)`` JSON of one score, or ``None`` when it is not scored."""
    found = con.execute(
        "SELECT gold_detail, ctx_detail FROM scores WHERE run_id = ? AND item_id = ? "
        "AND signature = ?",
        [run_id, item_id, signature],
    ).fetchall()
    return (found[0][0], found[0][1]) if found else None


def copy_results_to_parquet(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Write the relation registered as ``results`` on ``con`` to a Parquet file at ``path``."""
    con.execute(f"COPY results TO '{_sql_path(path)}' (FORMAT parquet)")


def copy_parquet_parts(
    con: duckdb.DuckDBPyConnection, parts: Sequence[Path], path: Path, *, row_group: int
) -> None:
    """Write the rows of the Parquet files ``parts``, in their order, to one Parquet file.

    Row groups of about ``row_group`` rows (the writer holds one in memory).
    """
    con.execute(
        f"COPY (SELECT * FROM read_parquet(?)) TO '{_sql_path(path)}' "
        f"(FORMAT parquet, ROW_GROUP_SIZE {int(row_group)})",
        [[str(p) for p in parts]],
    )


def _sql_path(path: Path) -> str:
    """A path as a single-quoted SQL literal body (COPY TO takes no parameters)."""
    return str(path).replace("'", "''")


# -- TAU -------------------------------------------------------------------------------------


TAU_COLUMNS = (
    "run_id",
    "item_id",
    "signature",
    "target",
    "fraction",
    "alpha",
    "target_score",
    "n_aligned",
    "n_relation_mismatch",
    "n_entity_mismatch",
    "n_roles_swapped",
    "n_extra",
    "n_missing",
    "result",
)
"""The columns of a ``tau_results`` row as :func:`replace_tau_results` takes them, in order
(``n_roles_swapped``, added by migration 9, is the table's last column but comes here with the
other counts)."""


def replace_tau_results(
    con: duckdb.DuckDBPyConnection,
    signature: str,
    target: str,
    rows: Sequence[Sequence[Any]],
) -> None:
    """Replace every TAU result of ``(signature, target)`` by ``rows``.

    Each row holds the ``tau_results`` columns in order: ``run_id, item_id, signature, target,
    fraction, alpha, target_score, n_aligned, n_relation_mismatch, n_entity_mismatch,
    n_roles_swapped, n_extra, n_missing, result``.
    """
    con.execute("DELETE FROM tau_results WHERE signature = ? AND target = ?", [signature, target])
    con.executemany(f"INSERT INTO tau_results ({', '.join(TAU_COLUMNS)}) VALUES "
                    f"({', '.join('?' * len(TAU_COLUMNS))})", rows)  # fmt: skip


def tau_result(
    con: duckdb.DuckDBPyConnection, run_id: int, item_id: int, signature: str
) -> str | None:
    """The TAU result JSON of one answer under ``signature`` (first target by name), or ``None``."""
    taus = con.execute(
        "SELECT result FROM tau_results WHERE run_id = ? AND item_id = ? AND "
        "signature = ? ORDER BY target",
        [run_id, item_id, signature],
    ).fetchall()
    return str(taus[0][0]) if taus else None


# -- embeddings ------------------------------------------------------------------------------


def embeddings_of(
    con: duckdb.DuckDBPyConnection, encoder: str, texts: Iterable[str]
) -> list[tuple[str, np.ndarray]]:
    """The stored ``(text, vector)`` of ``encoder`` for those ``texts`` that have one.

    The one reader of stored vectors by text (the scorer's batches, TAU, the dashboard, the
    report, the calibration): each text once however often it is asked for, others skipped;
    read as NumPy arrays (ten times faster for 20,000 vectors than lists of floats).

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.store import Store
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "e.duckdb"))
    >>> with db.transaction() as con:
    ...     _ = db.put_embeddings(con, "enc", [("a", np.ones(2)), ("b", np.zeros(2))])
    ...     [(text, vec.tolist()) for text, vec in embeddings_of(con, "enc", {"a", "z"})]
    [('a', [1.0, 1.0])]
    """
    wanted = pd.DataFrame({"text": sorted(set(texts))}, dtype="object")
    if wanted.empty:
        return []
    con.register("_wanted", wanted)
    try:
        got = con.execute(
            "SELECT e.text, e.vector FROM embeddings e JOIN _wanted w USING (text) "
            "WHERE e.encoder = ?",
            [encoder],
        ).fetchnumpy()
    finally:
        con.unregister("_wanted")
    return [
        (str(text), np.asarray(vec, dtype=np.float32))
        for text, vec in zip(got["text"], got["vector"], strict=True)
    ]
