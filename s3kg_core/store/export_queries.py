"""The SQL of the export's groups, and of the imported files' unmapped columns.

Answer and run metadata, KGs as JSON triples, TAU rows, and the columns of an imported file
that no mapping names (written at import). An export is read a block of answers at a time:
:func:`export_keys` gives every answer in the export's order, :func:`export_rows` the base
columns of a block of them, and the groups' queries take the block as ``keys`` (``None``: the
whole store).

Like :mod:`~s3kg_core.store.queries`, every function takes an open connection and leaves
transactions to the caller.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.records import ItemRecord
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "x.duckdb"))
>>> with db.transaction() as con:
...     ds = db.ensure_dataset(con, "toy")
...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
...     replace_extra_columns(con, [(0, ids["q1"])], [(0, ids["q1"], "topic", 3, "pain")])
...     extra_columns(con).to_dict("records")
[{'run_id': 0, 'item_id': 1, 'name': 'topic', 'pos': 3, 'value': 'pain'}]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb
import numpy as np
import pandas as pd

__all__ = [
    "ITEM_LEVEL",
    "answer_metadata",
    "export_keys",
    "export_rows",
    "extra_column_positions",
    "extra_columns",
    "kg_triples_json",
    "replace_extra_columns",
    "run_metadata",
    "tau_rows",
]

ITEM_LEVEL = 0
"""The ``run_id`` of extra columns that belong to an item (its file held no answers)."""

_KEYS = "_export_keys"


@contextmanager
def _keys_registered(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame) -> Iterator[None]:
    """``keys``' ``run_id, item_id`` (and ``pos``, their order) as the view ``_export_keys``."""
    frame = keys[["run_id", "item_id"]].reset_index(drop=True)
    con.register(_KEYS, frame.assign(pos=np.arange(len(frame), dtype="int64")))
    try:
        yield
    finally:
        con.unregister(_KEYS)


@contextmanager
def _among(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame | None, alias: str) -> Iterator[str]:
    """A JOIN clause keeping the rows of ``alias`` that are answers of ``keys`` (``None``: all)."""
    if keys is None:
        yield ""
        return
    with _keys_registered(con, keys):
        yield f" JOIN {_KEYS} w ON w.run_id = {alias}.run_id AND w.item_id = {alias}.item_id"


def export_keys(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every answer (of ``run_ids``; ``None``: all) as ``run_id, item_id``, in the export's order.

    By dataset, run display name, temperature, extractor and item (as
    :func:`~s3kg_core.store.queries.answer_statuses`), then run: two runs that share all of
    those keep one order.
    """
    where, params = (
        ("", [])
        if run_ids is None
        else (" WHERE list_contains(?, a.run_id)", [[int(r) for r in run_ids]])
    )
    return con.execute(
        "SELECT a.run_id, a.item_id FROM answers a JOIN runs r ON r.run_id = a.run_id "
        f"JOIN datasets d ON d.dataset_id = r.dataset_id{where} ORDER BY d.name, "
        "coalesce(r.name, r.model), r.temperature, r.extractor, a.item_id, a.run_id",
        params,
    ).df()


def export_rows(
    con: duckdb.DuckDBPyConnection, signature: str | None, keys: pd.DataFrame
) -> pd.DataFrame:
    """The base columns of the answers ``keys`` (``run_id, item_id``), in their order.

    Columns ``dataset, model, temperature, extractor, run_id, item_id``, the answer's statuses
    (``answer_status, answer_error, gold_kg_status, answer_kg_status, context_kg_status``),
    ``scored`` (whether it has a score under ``signature``: never for ``None``), the score's
    stored components (``mode, alpha, gold_s_wl, gold_s_sbert, gold_status, ctx_s_wl,
    ctx_s_sbert, ctx_status``; missing where not scored), the item's ``ext_id, question,
    context, gold_answer`` and the ``answer``. ``model`` is the run's display name.
    """
    kg = "LEFT JOIN kgs {0} ON {0}.run_id = a.run_id AND {0}.item_id = a.item_id AND {0}.source"
    with _keys_registered(con, keys):
        return con.execute(
            "SELECT d.name AS dataset, coalesce(r.name, r.model) AS model, r.temperature, "
            "r.extractor, a.run_id, a.item_id, a.status AS answer_status, "
            "a.error AS answer_error, g.status AS gold_kg_status, "
            "k.status AS answer_kg_status, c.status AS context_kg_status, "
            "s.run_id IS NOT NULL AS scored, s.mode, s.alpha, s.gold_s_wl, s.gold_s_sbert, "
            "s.gold_status, s.ctx_s_wl, s.ctx_s_sbert, s.ctx_status, i.ext_id, i.question, "
            f"i.context, i.gold_answer, a.answer FROM {_KEYS} w JOIN answers a "
            "ON a.run_id = w.run_id AND a.item_id = w.item_id "
            "JOIN runs r ON r.run_id = a.run_id JOIN datasets d ON d.dataset_id = r.dataset_id "
            "LEFT JOIN items i ON i.item_id = a.item_id LEFT JOIN scores s "
            "ON s.run_id = a.run_id AND s.item_id = a.item_id AND s.signature = ? "
            f"{kg.format('g')} = 'gold' {kg.format('k')} = 'answer' "
            f"{kg.format('c')} = 'context' ORDER BY w.pos",
            [signature],
        ).df()


def replace_extra_columns(
    con: duckdb.DuckDBPyConnection,
    keys: Sequence[tuple[int, int]],
    rows: Sequence[tuple[int, int, str, int, str | None]],
) -> None:
    """Replace the extra columns of these ``(run_id, item_id)`` keys by ``rows``.

    Each row is ``(run_id, item_id, name, pos, value)``; a key's columns that ``rows`` no
    longer name are removed (a re-imported file that lost a column loses it here too).
    """
    if keys:
        con.register("_extra_keys", pd.DataFrame(list(keys), columns=["run_id", "item_id"]))
        try:
            con.execute(
                "DELETE FROM extra_columns WHERE (run_id, item_id) IN "
                "(SELECT (run_id, item_id) FROM _extra_keys)"
            )
        finally:
            con.unregister("_extra_keys")
    if rows:
        frame = pd.DataFrame(
            list(rows), columns=["run_id", "item_id", "name", "pos", "value"]
        ).astype(object)
        con.register("_extra_rows", frame)
        try:
            con.execute(
                "INSERT OR REPLACE INTO extra_columns (run_id, item_id, name, pos, value) "
                "SELECT run_id, item_id, name, pos, value FROM _extra_rows"
            )
        finally:
            con.unregister("_extra_rows")


def extra_columns(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every stored extra column value: ``run_id, item_id, name, pos, value``.

    ``run_id`` is :data:`ITEM_LEVEL` for a value that belongs to the item. ``keys`` (``run_id,
    item_id``) keeps the values of those answers and of their items.
    """
    if keys is None:
        return con.execute(
            "SELECT run_id, item_id, name, pos, value FROM extra_columns "
            "ORDER BY run_id, item_id, pos, name"
        ).df()
    with _keys_registered(con, keys):
        return con.execute(
            "SELECT run_id, item_id, name, pos, value FROM extra_columns WHERE "
            f"(run_id, item_id) IN (SELECT (run_id, item_id) FROM {_KEYS}) OR "
            f"(run_id = {ITEM_LEVEL} AND item_id IN (SELECT item_id FROM {_KEYS})) "
            "ORDER BY run_id, item_id, pos, name"
        ).df()


def extra_column_positions(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame) -> pd.DataFrame:
    """The extra columns the answers ``keys`` have, each with its first position.

    Columns ``name, pos``. An answer's own value of a column hides its item's: the item's
    position counts only for answers without their own.
    """
    with _keys_registered(con, keys):
        return con.execute(
            "SELECT name, min(pos) AS pos FROM (SELECT e.name, e.pos FROM "
            f"{_KEYS} w JOIN extra_columns e ON e.item_id = w.item_id "
            f"AND (e.run_id = w.run_id OR e.run_id = {ITEM_LEVEL}) "
            "QUALIFY row_number() OVER (PARTITION BY w.run_id, w.item_id, e.name "
            f"ORDER BY e.run_id = {ITEM_LEVEL}) = 1) GROUP BY name"
        ).df()


def answer_metadata(
    con: duckdb.DuckDBPyConnection, keys: pd.DataFrame | None = None
) -> pd.DataFrame:
    """What collect stored of every answer (of ``keys``: ``run_id, item_id``; ``None``: all).

    Columns ``run_id, item_id, seed, latency_s, prompt_tokens, completion_tokens, model_id,
    finish_reason, truncated`` (``None`` where not stored: imported answers have none).
    """
    with _among(con, keys, "a") as among:
        return con.execute(
            "SELECT a.run_id, a.item_id, a.seed, a.latency_s, a.prompt_tokens, "
            "a.completion_tokens, a.model_id, a.finish_reason, a.truncated "
            f"FROM answers a{among}"
        ).df()


def run_metadata(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Every run's display name, model as given, source and settings (JSON text).

    Columns ``run_id, run_name, run_model, run_source, run_settings``.
    """
    return con.execute(
        "SELECT run_id, coalesce(name, model) AS run_name, model AS run_model, "
        "source AS run_source, CAST(settings AS VARCHAR) AS run_settings FROM runs"
    ).df()


def kg_triples_json(
    con: duckdb.DuckDBPyConnection, keys: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every stored KG as a JSON list of ``[head, relation, tail]`` lists, in stored order.

    Columns ``run_id, item_id, source, triples``; an empty or unparseable KG is ``[]`` (its
    status says which), a KG that is not stored has no row. ``keys`` (``run_id, item_id``)
    keeps those answers' KGs.
    """
    with _among(con, keys, "k") as among:
        return con.execute(
            "SELECT k.run_id, k.item_id, k.source, coalesce(CAST(to_json(list([t.head, "
            "t.relation, t.tail] ORDER BY t.pos) FILTER (WHERE t.pos IS NOT NULL)) AS VARCHAR), "
            f"'[]') AS triples FROM kgs k{among} LEFT JOIN triples t ON t.run_id = k.run_id "
            "AND t.item_id = k.item_id AND t.source = k.source "
            "GROUP BY k.run_id, k.item_id, k.source"
        ).df()


def tau_rows(
    con: duckdb.DuckDBPyConnection, signature: str, keys: pd.DataFrame | None = None
) -> list[tuple[Any, ...]]:
    """The TAU results of ``signature``: ``(run_id, item_id, target, result_json)``.

    ``keys`` (``run_id, item_id``) keeps those answers' results.
    """
    with _among(con, keys, "t") as among:
        return con.execute(
            "SELECT t.run_id, t.item_id, t.target, CAST(t.result AS VARCHAR) FROM tau_results t"
            f"{among} WHERE t.signature = ? ORDER BY t.run_id, t.item_id, t.target",
            [signature],
        ).fetchall()
