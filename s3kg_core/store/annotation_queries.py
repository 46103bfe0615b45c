"""The SQL of annotation: the verdict log, tasks and their units, TAU calibrations.

The log (table ``verdicts``) is append-only. Each row is one act of one person on one *pair*
of one answer: the key is ``(annotator, role, run_id, item_id, gold_triple, answer_triple)``,
triples as TAU compared them (normalised, ``VARCHAR[]``; ``NULL`` for the missing side of an
extra or missing triple). ``verdict`` says what the act was:

- a decision: ``confirm``, ``reject``, ``skip`` or ``add`` (a pair TAU missed);
- ``withdraw``: the person takes their decision on the pair back (no verdict now);
- ``undo``: the person undoes their last act (``replaces`` names the undone row).

A decision or withdrawal names in ``replaces`` the row that was in effect on its key before it,
so the row in effect on a key is its latest row, or, when that is an ``undo``, the row the undone
one replaced. The *current verdicts* are the rows in effect that are decisions.

Every function takes an open connection; transactions stay with the caller (see
:mod:`s3kg_core.annotation.log` for the short transactions the dashboard and CLI use). Rows come
back as dicts whose triples are tuples (``gold_triple``, ``answer_triple``) and tuples of tuples
(``gold_extracted``, ``answer_extracted``).

Examples
--------
>>> import os, tempfile
>>> from datetime import datetime
>>> from s3kg_core.store.store import Store
>>> db = Store(os.path.join(tempfile.mkdtemp(), "v.duckdb"))
>>> row = dict(uid="u1", created_at=datetime(2025, 1, 1), annotator="ann", role="annotator",
...            task_id=None, run_id=1, item_id=2, category="aligned",
...            gold_triple=("a", "r", "b"), answer_triple=("a", "r", "c"), gold_extracted=(),
...            answer_extracted=(), verdict="confirm", replaces=None, source="doctest")
>>> with db.transaction() as con:
...     first = insert_verdict(con, row)
...     [(r["verdict_id"], r["verdict"], r["gold_triple"]) for r in current_verdicts(con)]
[(1, 'confirm', ('a', 'r', 'b'))]
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

__all__ = [
    "LOG_COLUMNS",
    "TASK_UNIT_COLUMNS",
    "copy_export_to_parquet",
    "current_verdicts",
    "effective_entry",
    "eligible_items",
    "insert_calibration",
    "insert_task",
    "insert_task_items",
    "insert_task_units",
    "insert_verdict",
    "insert_verdicts",
    "item_keys",
    "last_undoable",
    "latest_calibration",
    "queue_rows",
    "read_parquet_frame",
    "set_replaces",
    "task",
    "task_items",
    "task_unit",
    "task_units",
    "tasks",
    "uids_present",
    "verdict_entries",
    "verdict_log",
]

LOG_COLUMNS = (
    "verdict_id",
    "uid",
    "created_at",
    "annotator",
    "role",
    "task_id",
    "run_id",
    "item_id",
    "category",
    "gold_triple",
    "answer_triple",
    "gold_extracted",
    "answer_extracted",
    "verdict",
    "replaces",
    "source",
)
"""The columns of the verdict log, in order (``verdict_id`` is given by the store)."""

TASK_UNIT_COLUMNS = (
    "run_id",
    "item_id",
    "unit",
    "category",
    "gold_triple",
    "answer_triple",
    "gold_extracted",
    "answer_extracted",
    "similarity",
)
"""The columns of a task's units after ``task_id``, in order."""

_TRIPLES = frozenset({"gold_triple", "answer_triple"})
_EXTRACTED = frozenset({"gold_extracted", "answer_extracted"})
_SAME_PAIR = (
    "{a}.gold_triple IS NOT DISTINCT FROM {b}.gold_triple "
    "AND {a}.answer_triple IS NOT DISTINCT FROM {b}.answer_triple"
)


def _columns(names: Sequence[str], alias: str = "") -> str:
    """A select list of ``names``, list columns as JSON text (Python reads it much faster)."""
    return ", ".join(
        f"to_json({alias}{n}) AS {n}" if n in _TRIPLES or n in _EXTRACTED else f"{alias}{n}"
        for n in names
    )


def _records(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """The rows of a query as dicts, triples as tuples (from lists or their JSON text)."""
    names = [d[0] for d in cur.description]
    triples = [n for n in names if n in _TRIPLES]
    extracted = [n for n in names if n in _EXTRACTED]
    out = []
    for row in cur.fetchall():
        record = dict(zip(names, row, strict=True))
        for n in triples:
            value = record[n]
            if value is not None:
                record[n] = tuple(json.loads(value) if isinstance(value, str) else value)
        for n in extracted:
            value = record[n]
            if value is not None:
                value = json.loads(value) if isinstance(value, str) else value
                record[n] = tuple(map(tuple, value))
        if record.get("annotators") is not None:
            record["annotators"] = tuple(record["annotators"])
        out.append(record)
    return out


def _lists(name: str, value: Any) -> Any:
    """The parameter form of a triple column (lists; an empty extracted list stays empty)."""
    if value is None:
        return None
    if name in _TRIPLES:
        return [str(x) for x in value]
    if name in _EXTRACTED:
        return [[str(x) for x in t] for t in value]
    return value


def _where(filters: Mapping[str, Any], alias: str = "") -> tuple[str, list[Any]]:
    """``WHERE a = ? AND ...`` for the filters that are not ``None`` (empty when none)."""
    parts = [(f"{alias}{k} = ?", v) for k, v in filters.items() if v is not None]
    if not parts:
        return "", []
    return " WHERE " + " AND ".join(p for p, _ in parts), [v for _, v in parts]


# -- the log ---------------------------------------------------------------------------------


def insert_verdict(con: duckdb.DuckDBPyConnection, row: Mapping[str, Any]) -> int:
    """Append one row (every column of :data:`LOG_COLUMNS` but ``verdict_id``); return its id."""
    names = LOG_COLUMNS[1:]
    found = con.execute(
        f"INSERT INTO verdicts ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)}) "
        "RETURNING verdict_id",
        [_lists(n, row[n]) for n in names],
    ).fetchall()
    return int(found[0][0])


def _json_lists(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with its triple columns as JSON text (``from_json`` reads them back typed)."""
    out = frame.copy()
    for name in (*_TRIPLES, *_EXTRACTED):
        if name in out.columns:
            out[name] = [None if v is None else json.dumps(_lists(name, v)) for v in out[name]]
    return out


_TYPED = {
    "gold_triple": "from_json(gold_triple, '[\"VARCHAR\"]')",
    "answer_triple": "from_json(answer_triple, '[\"VARCHAR\"]')",
    "gold_extracted": "from_json(gold_extracted, '[[\"VARCHAR\"]]')",
    "answer_extracted": "from_json(answer_extracted, '[[\"VARCHAR\"]]')",
}


def insert_verdicts(con: duckdb.DuckDBPyConnection, rows: Sequence[Mapping[str, Any]]) -> int:
    """Append many rows in one statement, in order (ids follow the order); return how many."""
    if not rows:
        return 0
    names = LOG_COLUMNS[1:]
    frame = _json_lists(pd.DataFrame([[r[n] for n in names] for r in rows], columns=list(names)))
    frame = frame.astype(object).where(frame.notna(), None)
    frame.insert(0, "_order", range(len(frame)))
    typed = {
        **_TYPED,
        "created_at": "created_at::TIMESTAMP",
        "task_id": "task_id::INTEGER",
        "run_id": "run_id::INTEGER",
        "item_id": "item_id::INTEGER",
        "replaces": "replaces::BIGINT",
    }
    select = ", ".join(typed.get(n, f"{n}::VARCHAR") for n in names)
    con.register("_new_verdicts", frame)
    try:
        con.execute(
            f"INSERT INTO verdicts ({', '.join(names)}) SELECT {select} "
            "FROM _new_verdicts ORDER BY _order"
        )
    finally:
        con.unregister("_new_verdicts")
    return len(rows)


def set_replaces(con: duckdb.DuckDBPyConnection, pairs: Sequence[tuple[int, int]]) -> None:
    """Record ``(replaced_id, row_id)``: row ``row_id`` replaces row ``replaced_id``."""
    if not pairs:
        return
    con.executemany(
        "UPDATE verdicts SET replaces = ? WHERE verdict_id = ?", [list(p) for p in pairs]
    )


def copy_export_to_parquet(con: duckdb.DuckDBPyConnection, frame: pd.DataFrame, path: Path) -> None:
    """Write an export frame (triples as tuples, ``None`` for nulls) to a Parquet file.

    Triples become Parquet lists, ``created_at`` a timestamp, ids integers, the rest text.
    """
    typed = {
        **_TYPED,
        "created_at": "created_at::TIMESTAMP",
        **{n: f"{n}::INTEGER" for n in ("task_id", "run_id", "item_id")},
    }
    select = ", ".join(f"{typed.get(n, f'{n}::VARCHAR')} AS {n}" for n in frame.columns)
    target = str(path).replace("'", "''")  # COPY TO takes no parameters
    con.register("_export", _json_lists(frame))
    try:
        con.execute(f"COPY (SELECT {select} FROM _export) TO '{target}' (FORMAT parquet)")
    finally:
        con.unregister("_export")


def read_parquet_frame(con: duckdb.DuckDBPyConnection, path: Path) -> pd.DataFrame:
    """Every row of a Parquet file (lists as Python lists)."""
    cur = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
    names = [d[0] for d in cur.description]
    return pd.DataFrame(cur.fetchall(), columns=names)


_EFFECTIVE = f"""
    WITH latest AS (
        SELECT verdict_id, verdict, replaces, row_number() OVER (
            PARTITION BY annotator, role, run_id, item_id, gold_triple, answer_triple
            ORDER BY verdict_id DESC) AS rn
        FROM verdicts {{where}}
    ), effective AS (
        SELECT CASE WHEN l.verdict = 'undo' THEN u.replaces ELSE l.verdict_id END AS id
        FROM latest l LEFT JOIN verdicts u ON l.verdict = 'undo' AND u.verdict_id = l.replaces
        WHERE l.rn = 1
    )
    SELECT {_columns(LOG_COLUMNS, "v.")}
    FROM verdicts v JOIN effective e ON v.verdict_id = e.id
"""


def current_verdicts(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: int | None = None,
    annotator: str | None = None,
    role: str | None = None,
) -> list[dict[str, Any]]:
    """The decision in effect on every key (withdrawn and never-decided pairs have none).

    Optionally of one run, annotator or role; ordered by ``verdict_id`` (the order they were
    made). Each dict holds :data:`LOG_COLUMNS`.
    """
    where, params = _where({"run_id": run_id, "annotator": annotator, "role": role})
    cur = con.execute(
        _EFFECTIVE.format(where=where)
        + " WHERE v.verdict NOT IN ('withdraw', 'undo') ORDER BY v.verdict_id",
        params,
    )
    return _records(cur)


def effective_entry(
    con: duckdb.DuckDBPyConnection,
    annotator: str,
    role: str,
    run_id: int,
    item_id: int,
    gold: Sequence[str] | None,
    answer: Sequence[str] | None,
) -> dict[str, Any] | None:
    """The row in effect on one key (a decision or a withdrawal), or ``None``."""
    cur = con.execute(
        _EFFECTIVE.format(
            where="WHERE annotator = ? AND role = ? AND run_id = ? AND item_id = ? "
            "AND gold_triple IS NOT DISTINCT FROM ?::VARCHAR[] "
            "AND answer_triple IS NOT DISTINCT FROM ?::VARCHAR[]"
        ),
        [
            annotator,
            role,
            run_id,
            item_id,
            _lists("gold_triple", gold),
            _lists("answer_triple", answer),
        ],
    )
    found = _records(cur)
    return found[0] if found else None


def last_undoable(
    con: duckdb.DuckDBPyConnection, annotator: str, role: str
) -> dict[str, Any] | None:
    """The person's latest decision or withdrawal that no ``undo`` row names, or ``None``."""
    cur = con.execute(
        f"SELECT {_columns(LOG_COLUMNS)} FROM verdicts d WHERE annotator = ? AND role = ? "
        "AND verdict <> 'undo' AND NOT EXISTS (SELECT 1 FROM verdicts u WHERE "
        "u.verdict = 'undo' AND u.replaces = d.verdict_id) ORDER BY verdict_id DESC LIMIT 1",
        [annotator, role],
    )
    found = _records(cur)
    return found[0] if found else None


def verdict_entries(
    con: duckdb.DuckDBPyConnection, ids: Iterable[int]
) -> dict[int, dict[str, Any]]:
    """The log rows of these ids, by id (ids not in the log are left out)."""
    wanted = sorted({int(i) for i in ids})
    if not wanted:
        return {}
    cur = con.execute(
        f"SELECT {_columns(LOG_COLUMNS)} FROM verdicts WHERE verdict_id IN "
        f"({', '.join('?' for _ in wanted)})",
        wanted,
    )
    return {int(r["verdict_id"]): r for r in _records(cur)}


def verdict_log(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: int | None = None,
    annotator: str | None = None,
    task_id: int | None = None,
) -> list[dict[str, Any]]:
    """Every row of the log (optionally of one run, annotator or task), in the order made."""
    where, params = _where({"run_id": run_id, "annotator": annotator, "task_id": task_id})
    cur = con.execute(
        f"SELECT {_columns(LOG_COLUMNS)} FROM verdicts{where} ORDER BY verdict_id", params
    )
    return _records(cur)


def uids_present(con: duckdb.DuckDBPyConnection, uids: Iterable[str]) -> dict[str, int]:
    """``uid -> verdict_id`` of those ``uids`` the log already holds."""
    frame = pd.DataFrame({"uid": sorted(set(uids))}, dtype=object)
    if frame.empty:
        return {}
    con.register("_wanted_uids", frame)
    try:
        rows = con.execute(
            "SELECT v.uid, v.verdict_id FROM verdicts v JOIN _wanted_uids w USING (uid)"
        ).fetchall()
    finally:
        con.unregister("_wanted_uids")
    return {str(u): int(i) for u, i in rows}


def item_keys(
    con: duckdb.DuckDBPyConnection, keys: Iterable[tuple[int, int]]
) -> dict[tuple[int, int], tuple[str, str]]:
    """``(run_id, item_id) -> (dataset, ext_id)`` of those answers the store holds."""
    frame = pd.DataFrame(sorted(set(keys)), columns=["run_id", "item_id"], dtype=object)
    if frame.empty:
        return {}
    con.register("_wanted_items", frame)
    try:
        rows = con.execute(
            "SELECT w.run_id, w.item_id, d.name, i.ext_id FROM _wanted_items w "
            "JOIN runs r ON r.run_id = w.run_id::INTEGER "
            "JOIN items i ON i.item_id = w.item_id::INTEGER AND i.dataset_id = r.dataset_id "
            "JOIN datasets d ON d.dataset_id = r.dataset_id"
        ).fetchall()
    finally:
        con.unregister("_wanted_items")
    return {(int(r), int(i)): (str(d), str(e)) for r, i, d, e in rows}


# -- tasks -----------------------------------------------------------------------------------


def eligible_items(
    con: duckdb.DuckDBPyConnection, run_ids: Sequence[int] | None = None
) -> list[tuple[int, int]]:
    """``(run_id, item_id)`` of the answers worth annotating, in order.

    Worth annotating: the gold and answer KGs are stored and did not fail, and together they
    hold at least one triple (TAU then has at least one thing to say).
    """
    runs = ""
    params: list[Any] = []
    if run_ids is not None:
        runs = f" AND g.run_id IN ({', '.join('?' for _ in run_ids) or 'NULL'})"
        params = list(run_ids)
    rows = con.execute(
        "SELECT g.run_id, g.item_id FROM kgs g JOIN kgs a ON a.run_id = g.run_id "
        "AND a.item_id = g.item_id AND a.source = 'answer' WHERE g.source = 'gold' "
        "AND g.status NOT LIKE 'failed%' AND a.status NOT LIKE 'failed%' "
        "AND g.n_triples + a.n_triples > 0" + runs + " ORDER BY g.run_id, g.item_id",
        params,
    ).fetchall()
    return [(int(r), int(i)) for r, i in rows]


def insert_task(
    con: duckdb.DuckDBPyConnection,
    *,
    name: str | None,
    created_at: Any,
    annotators: Sequence[str],
    overlap: int,
    settings: str,
) -> int:
    """Create a task (settings as JSON text); return its id."""
    found = con.execute(
        "INSERT INTO annotation_tasks (name, created_at, annotators, overlap, settings) "
        "VALUES (?, ?, ?, ?, ?) RETURNING task_id",
        [name, created_at, list(annotators), overlap, settings],
    ).fetchall()
    return int(found[0][0])


def insert_task_items(
    con: duckdb.DuckDBPyConnection, task_id: int, rows: Sequence[tuple[str, int, int, int]]
) -> None:
    """Store which items each annotator sees: ``(annotator, position, run_id, item_id)``."""
    if not rows:
        return
    con.executemany(
        "INSERT INTO task_items (task_id, annotator, position, run_id, item_id) "
        "VALUES (?, ?, ?, ?, ?)",
        [[task_id, *row] for row in rows],
    )


def insert_task_units(
    con: duckdb.DuckDBPyConnection, task_id: int, rows: Sequence[Mapping[str, Any]]
) -> None:
    """Store the units judged on a task's items (each holds :data:`TASK_UNIT_COLUMNS`)."""
    if not rows:
        return
    con.executemany(
        f"INSERT INTO task_units (task_id, {', '.join(TASK_UNIT_COLUMNS)}) "
        f"VALUES (?, {', '.join('?' for _ in TASK_UNIT_COLUMNS)})",
        [[task_id, *(_lists(n, r[n]) for n in TASK_UNIT_COLUMNS)] for r in rows],
    )


def tasks(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every task (``task_id, name, created_at, annotators, overlap, settings``), newest last."""
    return _records(
        con.execute(
            "SELECT task_id, name, created_at, annotators, overlap, settings "
            "FROM annotation_tasks ORDER BY task_id"
        )
    )


def task(con: duckdb.DuckDBPyConnection, task_id: int) -> dict[str, Any] | None:
    """One task (as :func:`tasks` gives it), or ``None``."""
    found = _records(
        con.execute(
            "SELECT task_id, name, created_at, annotators, overlap, settings "
            "FROM annotation_tasks WHERE task_id = ?",
            [task_id],
        )
    )
    return found[0] if found else None


def task_items(
    con: duckdb.DuckDBPyConnection, task_id: int, annotator: str | None = None
) -> list[dict[str, Any]]:
    """``annotator, position, run_id, item_id`` of a task (one annotator's, when given)."""
    where, params = _where({"task_id": task_id, "annotator": annotator})
    return _records(
        con.execute(
            f"SELECT annotator, position, run_id, item_id FROM task_items{where} "
            "ORDER BY annotator, position",
            params,
        )
    )


def task_units(
    con: duckdb.DuckDBPyConnection,
    task_id: int,
    run_id: int | None = None,
    item_id: int | None = None,
) -> list[dict[str, Any]]:
    """A task's units (all, or of one run or answer), by run, item and unit number."""
    where, params = _where({"task_id": task_id, "run_id": run_id, "item_id": item_id})
    return _records(
        con.execute(
            f"SELECT {_columns(TASK_UNIT_COLUMNS)} FROM task_units{where} "
            "ORDER BY run_id, item_id, unit",
            params,
        )
    )


def task_unit(
    con: duckdb.DuckDBPyConnection,
    task_id: int,
    run_id: int,
    item_id: int,
    gold: Sequence[str] | None,
    answer: Sequence[str] | None,
) -> dict[str, Any] | None:
    """The unit of a task that is this pair of this answer, or ``None``."""
    found = _records(
        con.execute(
            f"SELECT {_columns(TASK_UNIT_COLUMNS)} FROM task_units WHERE task_id = ? "
            "AND run_id = ? AND item_id = ? AND gold_triple IS NOT DISTINCT FROM ?::VARCHAR[] "
            "AND answer_triple IS NOT DISTINCT FROM ?::VARCHAR[] LIMIT 1",
            [
                task_id,
                run_id,
                item_id,
                _lists("gold_triple", gold),
                _lists("answer_triple", answer),
            ],
        )
    )
    return found[0] if found else None


def queue_rows(
    con: duckdb.DuckDBPyConnection, task_id: int, annotator: str
) -> list[dict[str, Any]]:
    """One annotator's queue: ``position, run_id, item_id, units, decided, categories``.

    In the order of ``position`` (the task's seeded shuffle). ``decided`` counts the item's
    units on which the annotator has a decision in effect (``skip`` included), whichever task
    it was made in; ``categories`` lists the TAU categories of its units (sorted by name).
    """
    mine = _EFFECTIVE.format(where="WHERE annotator = ? AND role = 'annotator'")
    return _records(
        con.execute(
            f"WITH mine AS ({mine} WHERE v.verdict NOT IN ('withdraw', 'undo')) "
            "SELECT t.position, t.run_id, t.item_id, count(u.unit) AS units, "
            "count(m.verdict_id) AS decided, "
            "list_sort(list(DISTINCT u.category)) AS categories FROM task_items t "
            "JOIN task_units u ON u.task_id = t.task_id AND u.run_id = t.run_id "
            "AND u.item_id = t.item_id "
            "LEFT JOIN mine m ON m.run_id = u.run_id AND m.item_id = u.item_id AND "
            + _SAME_PAIR.format(a="m", b="u")
            + " WHERE t.task_id = ? AND t.annotator = ? "
            "GROUP BY t.position, t.run_id, t.item_id ORDER BY t.position",
            [annotator, task_id, annotator],
        )
    )


# -- TAU calibrations ------------------------------------------------------------------------


def insert_calibration(con: duckdb.DuckDBPyConnection, row: Mapping[str, Any]) -> int:
    """Store a fitted TAU threshold; return its id.

    ``row`` holds ``created_at, encoder, threshold, f1, precision, recall, positives,
    negatives, curve`` (JSON text) and ``detail`` (JSON text).
    """
    names = (
        "created_at",
        "encoder",
        "threshold",
        "f1",
        "precision",
        "recall",
        "positives",
        "negatives",
        "curve",
        "detail",
    )
    found = con.execute(
        f"INSERT INTO tau_calibrations ({', '.join(names)}) "
        f"VALUES ({', '.join('?' for _ in names)}) RETURNING calibration_id",
        [row[n] for n in names],
    ).fetchall()
    return int(found[0][0])


def latest_calibration(
    con: duckdb.DuckDBPyConnection, encoder: str | None = None
) -> dict[str, Any] | None:
    """The newest calibration (of ``encoder``, when given), or ``None``."""
    where, params = _where({"encoder": encoder})
    found = _records(
        con.execute(
            "SELECT calibration_id, created_at, encoder, threshold, f1, precision, recall, "
            f"positives, negatives, curve, detail FROM tau_calibrations{where} "
            "ORDER BY calibration_id DESC LIMIT 1",
            params,
        )
    )
    return found[0] if found else None
