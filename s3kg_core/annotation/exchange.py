"""Export and import of the verdict log: CSV, Parquet or JSON lines, merged without duplicates.

One row per row of the log (decisions, withdrawals and undos), with the answer (run, item, and
its dataset and id, to check an import against), both triples as TAU compared them and as they
were extracted, the verdict, who and when, the task, and the pair's adjudicated label at export
time. Every log row has a ``uid``; an import skips the uids already in the database, so
importing a file twice, or a colleague's export of the same database, duplicates nothing. The
row a row replaces is named by its uid (``replaces_uid``), so the history survives the move.

In CSV, triples are JSON text, and a text cell that a spreadsheet would run as a formula
(starting with ``= + - @``, a tab or a carriage return) gets a leading ``'``, which the import
takes off again (OWASP's rule; a cell that starts with ``'`` gets one more, so nothing is lost).
JSON lines and Parquet keep triples as lists.

Examples
--------
>>> csv_cell("=HYPERLINK(1)"), csv_cell("ann"), uncsv_cell(csv_cell("'=x")) == "'=x"
("'=HYPERLINK(1)", 'ann', True)
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ..atomic import replacing
from ..errors import InputFormatError, OutputError, S3KGError
from ..store import annotation_queries as aq
from ..store.connection import open_duckdb
from ..store.store import Store
from ..tables import FORMULA_STARTS
from .log import CATEGORIES, ROLES, VERDICTS, Triple3
from .names import normalize_annotator
from .tasks import extracted_forms

__all__ = [
    "EXPORT_COLUMNS",
    "FORMATS",
    "ImportReport",
    "csv_cell",
    "export_bytes",
    "export_frame",
    "export_verdicts",
    "import_verdicts",
    "read_export",
    "refuse_the_database",
    "uncsv_cell",
]

FORMATS = ("csv", "parquet", "jsonl")
"""The file formats of :func:`export_verdicts` and :func:`import_verdicts`."""

EXPORT_COLUMNS = (
    *(c for c in aq.LOG_COLUMNS if c not in ("verdict_id", "replaces")),
    "replaces_uid",
    "dataset",
    "ext_id",
    "adjudicated",
)
"""The columns of an export, in order."""

_REQUIRED = ("uid", "created_at", "annotator", "role", "run_id", "item_id", "verdict")
_JSON_COLUMNS = ("gold_triple", "answer_triple", "gold_extracted", "answer_extracted")
_FORMULA = FORMULA_STARTS  # the project's one rule (s3kg_core.tables), made reversible here
_ACTS = (*VERDICTS, "withdraw", "undo")


def csv_cell(value: Any) -> Any:
    """A text cell made safe for a spreadsheet (see the module docstring); others unchanged."""
    if isinstance(value, str) and value.startswith((*_FORMULA, "'")):
        return "'" + value
    return value


def uncsv_cell(value: Any) -> Any:
    """The inverse of :func:`csv_cell`."""
    if isinstance(value, str) and value.startswith("'") and value[1:].startswith((*_FORMULA, "'")):
        return value[1:]
    return value


def _format_of(path: Path, fmt: str | None) -> str:
    if fmt is None:
        suffix = path.suffix.lower().lstrip(".")
        fmt = {"ndjson": "jsonl", "pq": "parquet"}.get(suffix, suffix)
    if fmt not in FORMATS:
        raise InputFormatError(f"format must be one of {', '.join(FORMATS)}; got {fmt!r}")
    return fmt


def refuse_the_database(out: str | Path, db: str | Path) -> None:
    """Refuse an output path that is the database file or its write-ahead log.

    The same file by another spelling (a relative path, ``..``, a symbolic or hard link)
    counts as the same.

    Raises
    ------
    OutputError
        If ``out`` is ``db`` or ``db``'s ``.wal``.

    Examples
    --------
    >>> refuse_the_database("out.csv", "runs.duckdb")
    >>> refuse_the_database("sub/../runs.duckdb.wal", "runs.duckdb")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.OutputError: cannot write sub/../runs.duckdb.wal: it is the database runs.duckdb (or its write-ahead log); name another file
    """  # noqa: E501
    out, db = Path(out), Path(db)
    for protected in (db, Path(f"{db}.wal")):
        same = out.resolve() == protected.resolve()
        if not same and out.exists() and protected.exists():
            same = os.path.samefile(out, protected)
        if same:
            raise OutputError(
                f"cannot write {out}: it is the database {db} (or its write-ahead log); "
                "name another file"
            )


def _filled(
    rows: list[dict[str, Any]], kgs: Mapping[tuple[int, int, str], Any]
) -> list[dict[str, Any]]:
    """Rows with their extracted triples looked up in the KGs where the log lacks them."""
    forms: dict[tuple[int, int, str], dict[Triple3, tuple[Triple3, ...]]] = {}

    def lookup(run: int, item: int, source: str, triple: Triple3 | None) -> tuple[Triple3, ...]:
        if triple is None:
            return ()
        key = (run, item, source)
        if key not in forms:
            rec = kgs.get(key)
            forms[key] = extracted_forms(rec.triples if rec is not None else ())
        return forms[key].get(triple, ())

    for row in rows:
        for side in ("gold", "answer"):
            if not row[f"{side}_extracted"]:
                row[f"{side}_extracted"] = lookup(
                    row["run_id"], row["item_id"], side, row[f"{side}_triple"]
                )
    return rows


def export_frame(store: Store) -> pd.DataFrame:
    """The whole log as a frame of :data:`EXPORT_COLUMNS`, in the order it was written.

    Triples are tuples, missing values ``None``; ``created_at`` is a naive UTC ``datetime``.
    """
    with store.connect() as con:
        log = aq.verdict_log(con)
        adjudicated = {
            (r["run_id"], r["item_id"], r["gold_triple"], r["answer_triple"]): r["verdict"]
            for r in aq.current_verdicts(con, role="adjudicator")
        }
        items = aq.item_keys(con, {(r["run_id"], r["item_id"]) for r in log})
        kgs = Store.load_kgs(con, sorted({r["run_id"] for r in log})) if log else {}
    uid_of = {r["verdict_id"]: r["uid"] for r in log}
    rows = _filled([dict(r) for r in log], kgs)
    for row in rows:
        dataset, ext_id = items.get((row["run_id"], row["item_id"]), (None, None))
        row["dataset"], row["ext_id"] = dataset, ext_id
        row["replaces_uid"] = uid_of.get(row["replaces"])
        row["adjudicated"] = adjudicated.get(
            (row["run_id"], row["item_id"], row["gold_triple"], row["answer_triple"])
        )
    frame = pd.DataFrame(rows, columns=list(EXPORT_COLUMNS)).astype(object)
    return frame.where(frame.notna(), None)


def _as_json(value: Any) -> str | None:
    if value is None:
        return None
    return json.dumps([list(t) if isinstance(t, tuple) else t for t in value], ensure_ascii=False)


def _write(frame: pd.DataFrame, path: Path, fmt: str) -> None:
    """Write an export frame to ``path`` in ``fmt`` (not atomically: the callers are)."""
    if fmt == "csv":
        flat = frame.copy()
        for name in _JSON_COLUMNS:
            flat[name] = [_as_json(v) for v in flat[name]]
        flat["created_at"] = [v.isoformat() for v in flat["created_at"]]
        flat.map(csv_cell).to_csv(path, index=False)
    elif fmt == "jsonl":
        with path.open("w", encoding="utf-8") as fh:
            for record in frame.to_dict("records"):
                record["created_at"] = record["created_at"].isoformat()
                for name in _JSON_COLUMNS:
                    value = record[name]
                    record[name] = None if value is None else json.loads(_as_json(value) or "null")
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    else:
        mem = open_duckdb()
        try:
            aq.copy_export_to_parquet(mem, frame, path)
        finally:
            mem.close()


def export_verdicts(store: Store, out: str | Path, *, fmt: str | None = None) -> int:
    """Write the whole log to ``out`` (csv, parquet or jsonl; default: by its suffix).

    Returns the number of rows. The file is written whole or not at all.

    Raises
    ------
    InputFormatError
        If the format is not one of :data:`FORMATS`.
    OutputError
        If ``out`` is the database (or its write-ahead log), or cannot be written.
    """
    path = Path(out)
    fmt = _format_of(path, fmt)
    refuse_the_database(path, store.path)
    frame = export_frame(store)
    try:
        with replacing(path) as tmp:
            _write(frame, tmp, fmt)
    except OSError as exc:
        raise OutputError(
            f"cannot write {out}: {exc.strerror or exc}; a file that was there is unchanged"
        ) from exc
    return len(frame)


def export_bytes(store: Store, fmt: str) -> bytes:
    """The whole log as the bytes of a ``fmt`` file (for a download button).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "x.duckdb"))
    >>> export_bytes(store, "csv").decode().split(",")[:3]
    ['uid', 'created_at', 'annotator']
    """
    fmt = _format_of(Path(f"log.{fmt}"), fmt)
    frame = export_frame(store)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"log.{fmt}"
        _write(frame, path, fmt)
        return path.read_bytes()


def read_export(path: str | Path, *, fmt: str | None = None) -> pd.DataFrame:
    """Read an export back as a frame of its columns (triples as tuples, times as datetimes).

    Raises
    ------
    InputFormatError
        If the file cannot be read or lacks a required column.
    """
    path = Path(path)
    fmt = _format_of(path, fmt)
    try:
        if fmt == "csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
            frame = frame.map(uncsv_cell)
        elif fmt == "jsonl":
            with path.open(encoding="utf-8") as fh:
                frame = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
        else:
            mem = open_duckdb()
            try:
                frame = aq.read_parquet_frame(mem, path)
            finally:
                mem.close()
    except (OSError, ValueError, duckdb.Error) as exc:
        raise InputFormatError(f"cannot read {path} as {fmt}: {exc}") from exc
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InputFormatError(
            f"{path} is not an annotation export: it lacks the column(s) {', '.join(missing)}"
        )
    frame = frame.astype(object).where(frame.notna(), None)
    for name in _JSON_COLUMNS:
        if name in frame.columns:
            frame[name] = [_triples(name, v) for v in frame[name]]
    return frame


def _triples(name: str, value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None if name.endswith("_triple") else ()
    if isinstance(value, str):
        value = json.loads(value)
    if name.endswith("_triple"):
        return tuple(str(x) for x in value)
    return tuple(tuple(str(x) for x in t) for t in value)


def _int(value: Any) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    return int(value)


def _time(value: Any) -> datetime:
    """A time as the log keeps it: naive UTC (a time with a zone is converted)."""
    stamp = pd.Timestamp(value)
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    result: datetime = stamp.to_pydatetime()
    return result


class ImportReport:
    """What :func:`import_verdicts` did."""

    def __init__(self, read: int, added: int, known: int, tasks_dropped: int) -> None:
        self.read = read
        self.added = added
        self.known = known
        self.tasks_dropped = tasks_dropped

    def summary(self) -> str:
        """One line for the command line."""
        line = f"{self.read} rows read: {self.added} added, {self.known} already there"
        if self.tasks_dropped:
            line += (
                f"; {self.tasks_dropped} rows name a task this database does not have "
                "(kept without it)"
            )
        return line


def _checked_row(n: int, record: Mapping[str, Any]) -> dict[str, Any]:
    """A file row as a log row, or a one-line error naming the row."""
    try:
        row = {
            "uid": str(record["uid"]),
            "created_at": _time(record["created_at"]),
            "annotator": normalize_annotator(record["annotator"]),
            "role": record["role"],
            "task_id": _int(record.get("task_id")),
            "run_id": _int(record["run_id"]),
            "item_id": _int(record["item_id"]),
            "category": record.get("category"),
            "gold_triple": record.get("gold_triple"),
            "answer_triple": record.get("answer_triple"),
            "gold_extracted": record.get("gold_extracted") or (),
            "answer_extracted": record.get("answer_extracted") or (),
            "verdict": record["verdict"],
            "replaces_uid": record.get("replaces_uid"),
            "source": record.get("source"),
        }
    except (S3KGError, ValueError, TypeError) as exc:
        raise InputFormatError(f"row {n}: {exc}") from exc
    problems = []
    if row["role"] not in ROLES:
        problems.append(f"role {row['role']!r} is not one of {', '.join(ROLES)}")
    if row["verdict"] not in _ACTS:
        problems.append(f"verdict {row['verdict']!r} is not one of {', '.join(_ACTS)}")
    if row["category"] is not None and row["category"] not in CATEGORIES:
        problems.append(f"category {row['category']!r} is not one of {', '.join(CATEGORIES)}")
    if row["run_id"] is None or row["item_id"] is None:
        problems.append("run_id and item_id are needed")
    for side in ("gold_triple", "answer_triple"):
        if row[side] is not None and len(row[side]) != 3:
            problems.append(f"{side} is not three strings")
    if row["gold_triple"] is None and row["answer_triple"] is None:
        problems.append("it names neither a gold nor an answer triple")
    if problems:
        raise InputFormatError(f"row {n}: {'; '.join(problems)}")
    return row


def import_verdicts(store: Store, path: str | Path, *, fmt: str | None = None) -> ImportReport:
    """Merge an export into the log: rows whose uid is new are added, in their time order.

    Rows are counted from 1, the header not counted. Each row is checked first (names,
    verdicts, triples; the answer must exist here and, where the file names its dataset and
    id, be that answer), so a bad file adds nothing. New rows come after the database's own
    in the log: where one person decided the same pair in two copies of a database, the
    imported decision is the one in effect after the merge.

    Raises
    ------
    InputFormatError
        If the file cannot be read, a row is malformed, names an answer this database does not
        hold (or holds as another question), or replaces a row found neither in the file nor
        in the database.
    """
    frame = read_export(path, fmt=fmt)
    records = frame.to_dict("records")
    rows = [_checked_row(n, r) for n, r in enumerate(records, start=1)]
    with store.connect() as con:
        here = aq.item_keys(con, {(r["run_id"], r["item_id"]) for r in rows})
        known = aq.uids_present(con, [r["uid"] for r in rows])
        tasks = {int(t["task_id"]) for t in aq.tasks(con)}
    for n, (row, record) in enumerate(zip(rows, records, strict=True), start=1):
        key = (row["run_id"], row["item_id"])
        if key not in here:
            raise InputFormatError(
                f"row {n}: this database has no answer of run {key[0]} to item {key[1]}; import "
                "into the database the file was exported from (or a copy of it)"
            )
        named = (record.get("dataset"), record.get("ext_id"))
        if named[0] is not None and named != here[key]:
            raise InputFormatError(
                f"row {n}: run {key[0]} item {key[1]} is {here[key][0]}/{here[key][1]} here but "
                f"{named[0]}/{named[1]} in the file: it comes from another database"
            )
    seen: set[str] = set()
    new = []
    for row in sorted(rows, key=lambda r: r["created_at"]):
        if row["uid"] in known or row["uid"] in seen:
            continue
        seen.add(row["uid"])
        new.append(row)
    uids = set(known) | seen
    for row in new:
        if row["replaces_uid"] is not None and row["replaces_uid"] not in uids:
            raise InputFormatError(
                f"the row {row['uid']} replaces row {row['replaces_uid']}, which is neither in "
                "the file nor in the database; export the whole log again"
            )
    dropped = 0
    for row in new:
        if row["task_id"] is not None and row["task_id"] not in tasks:
            row["task_id"] = None
            dropped += 1
    if new:
        with store.transaction() as con:
            aq.insert_verdicts(con, [{**r, "replaces": None} for r in new])
            ids = aq.uids_present(con, uids)
            aq.set_replaces(
                con,
                [(ids[r["replaces_uid"]], ids[r["uid"]]) for r in new if r["replaces_uid"]],
            )
    return ImportReport(len(rows), len(new), len(rows) - len(new), dropped)
