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
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ..atomic import replacing, write_failure
from ..errors import AnnotationError, InputFormatError, OutputError, S3KGError
from ..limits import MAX_LABEL_CHARS, check_file_size, check_parquet_size, kg_problem, open_input
from ..names import name_problem
from ..store import annotation_queries as aq
from ..store.connection import open_duckdb
from ..store.store import Store
from ..tables import FORMULA_STARTS, loads_json, read_jsonl_records
from .log import CATEGORIES, ROLES, VERDICTS, Decision, Triple3
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
_CLOCK_SKEW = timedelta(days=1)  # a row's created_at may be this far past the importer's clock
_JSON_COLUMNS = ("gold_triple", "answer_triple", "gold_extracted", "answer_extracted")
_FORMULA = FORMULA_STARTS  # the project's one rule (s3kg_core.tables), made reversible here
_ACTS = (*VERDICTS, "withdraw", "undo")
_MAX_ID = 2**31 - 1  # DuckDB's INTEGER, the log's run, item and task ids


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
    except (OSError, duckdb.Error) as exc:  # DuckDB writes Parquet: its IOException too
        raise write_failure(out, exc) from exc
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

    JSON lines are read with the project's one JSONL reader (:func:`~s3kg_core.tables.
    read_jsonl_records`: a line that is not a JSON object is named, integers are read exactly);
    a triple cell (JSON text in CSV) with :func:`~s3kg_core.tables.loads_json`. A file past
    the input cap (:func:`s3kg_core.limits.check_file_size`: 64 MB, or ``$S3KG_MAX_INPUT_MB``),
    or Parquet whose columns decompressed are (:func:`s3kg_core.limits.check_parquet_size`),
    is refused before its rows are read; CSV and JSON lines are read as a stream.

    Raises
    ------
    InputFormatError
        If the file is too large or cannot be read, lacks a required column, or a triple is
        not JSON text or a list of strings (the message names the row).
    """
    path = Path(path)
    fmt = _format_of(path, fmt)
    split = "split it into files of whole rows in time order and import them in that order"
    if fmt == "parquet":  # its columns decompressed are capped too
        check_parquet_size(path, "an annotation import", split)
    else:
        check_file_size(path, "an annotation import", split)
    try:
        if fmt == "csv":
            with open_input(path, "an annotation import", split) as fh:
                frame = pd.read_csv(fh, dtype=str, keep_default_na=False, na_values=[""])
            frame = frame.map(uncsv_cell)
        elif fmt == "jsonl":
            table = read_jsonl_records(path, what="annotation export ")
            frame = pd.DataFrame([row.cells for row in table.rows], columns=list(table.header))
        else:
            mem = open_duckdb()
            try:
                frame = aq.read_parquet_frame(mem, path)
            finally:
                mem.close()
    except InputFormatError:
        raise
    except (OSError, ValueError, duckdb.Error) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputFormatError(f"cannot read {path} as {fmt}: {first}") from exc
    missing = [c for c in _REQUIRED if c not in frame.columns]
    if missing:
        raise InputFormatError(
            f"{path} is not an annotation export: it lacks the column(s) {', '.join(missing)}"
        )
    frame = frame.astype(object).where(frame.notna(), None)
    for name in _JSON_COLUMNS:
        if name in frame.columns:
            frame[name] = [
                _triples(n, name, v) for n, v in enumerate(frame[name].tolist(), start=1)
            ]
    return frame


def _triples(n: int, name: str, value: Any) -> Any:
    """A triple (``*_triple``) or a list of triples (``*_extracted``) of row ``n``, checked."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None if name.endswith("_triple") else ()
    if isinstance(value, str):
        try:
            value = loads_json(value)
        except InputFormatError as exc:
            raise InputFormatError(f"row {n}: {name} is {exc}") from exc
    if hasattr(value, "tolist"):  # a NumPy array from Parquet
        value = value.tolist()
    single = name.endswith("_triple")
    problem = (
        f"row {n}: {name} must be "
        + ("three strings" if single else "a list of triples (three strings each)")
        + f"; got {_short(value)}"
    )
    triples = [value] if single else value
    if not isinstance(triples, list | tuple):
        raise InputFormatError(problem)
    out = []
    for triple in triples:
        if hasattr(triple, "tolist"):
            triple = triple.tolist()
        if not isinstance(triple, list | tuple) or len(triple) != 3:
            raise InputFormatError(problem)
        if not all(isinstance(x, str) for x in triple):
            raise InputFormatError(problem)
        out.append(tuple(triple))
    if (too_big := kg_problem(out)) is not None:
        raise InputFormatError(f"row {n}: {name} holds {too_big}")
    return out[0] if single else tuple(out)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)`` (a text as it is) for a one-line message: printable, ``limit`` at most."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except (RecursionError, ValueError):
        text = type(value).__name__
    text = "".join(c if c.isprintable() else "\ufffd" for c in text[: limit + 1])
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _int(name: str, value: Any) -> int | None:
    """An id cell: a whole number in DuckDB's INTEGER range, or ``None`` when empty."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        return None
    try:
        number = int(value) if not isinstance(value, bool | float) else None
        if isinstance(value, float) and value.is_integer():
            number = int(value)
    except (TypeError, ValueError, OverflowError):
        number = None
    if number is None or not 0 <= number <= _MAX_ID:
        raise InputFormatError(
            f"{name} {_short(value)} is not an id (a whole number from 0 to {_MAX_ID:,})"
        )
    return number


def _time(value: Any) -> datetime:
    """A time as the log keeps it: naive UTC (a time with a zone is converted)."""
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InputFormatError(f"created_at {_short(value)} is not a time") from exc
    if stamp is pd.NaT or not isinstance(stamp, pd.Timestamp):
        raise InputFormatError(f"created_at {_short(value)} is not a time")
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    result: datetime = stamp.to_pydatetime()
    return result


def _text(name: str, value: Any, *, required: bool = False) -> str | None:
    """A text cell, or ``None`` when empty; too long or not text is an error."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or value == "":
        if required:
            raise InputFormatError(f"{name} is needed (a non-empty text)")
        return None
    if not isinstance(value, str):
        raise InputFormatError(f"{name} {_short(value)} is not a text")
    if len(value) > MAX_LABEL_CHARS:
        raise InputFormatError(
            f"{name} has {len(value):,} characters (the limit is {MAX_LABEL_CHARS:,})"
        )
    return value


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
    """A file row as a log row, or a one-line error naming the row.

    The rules are the Annotate page's and :class:`~s3kg_core.annotation.log.Decision`'s: a
    uid, a valid name, role, verdict and category (an adjudicator does not skip), a triple of
    three strings; an ``undo`` names the row it undoes. A uid holds no character a name may
    not (:func:`s3kg_core.names.name_problem`), and ``created_at`` is not in the future (a day
    of clock skew allowed).
    """
    try:
        row: dict[str, Any] = {
            "uid": _text("uid", record.get("uid"), required=True),
            "created_at": _time(record["created_at"]),
            "annotator": normalize_annotator(_text("annotator", record["annotator"]) or ""),
            "role": _text("role", record["role"]),
            "task_id": _int("task_id", record.get("task_id")),
            "run_id": _int("run_id", record["run_id"]),
            "item_id": _int("item_id", record["item_id"]),
            "category": _text("category", record.get("category")),
            "gold_triple": record.get("gold_triple"),
            "answer_triple": record.get("answer_triple"),
            "gold_extracted": record.get("gold_extracted") or (),
            "answer_extracted": record.get("answer_extracted") or (),
            "verdict": _text("verdict", record["verdict"]),
            "replaces_uid": _text("replaces_uid", record.get("replaces_uid")),
            "source": _text("source", record.get("source")),
        }
    except (S3KGError, ValueError, TypeError) as exc:
        raise InputFormatError(f"row {n}: {exc}") from exc
    problems = []
    for key in ("uid", "replaces_uid"):  # the rule of every name: no NUL, ESC, U+202E
        if row[key] is not None and (bad := name_problem(row[key])) is not None:
            problems.append(f"{key} {_short(repr(row[key]))} holds {bad}")
    if row["created_at"] > datetime.now(UTC).replace(tzinfo=None) + _CLOCK_SKEW:
        problems.append(
            f"created_at {row['created_at']:%Y-%m-%d %H:%M} is in the future: a verdict is "
            "made before it is exported"
        )
    if row["role"] not in ROLES:
        problems.append(f"role {_short(repr(row['role']))} is not one of {', '.join(ROLES)}")
    if row["verdict"] not in _ACTS:
        problems.append(f"verdict {_short(repr(row['verdict']))} is not one of {', '.join(_ACTS)}")
    if row["category"] is not None and row["category"] not in CATEGORIES:
        problems.append(
            f"category {_short(repr(row['category']))} is not one of {', '.join(CATEGORIES)}"
        )
    if row["run_id"] is None or row["item_id"] is None:
        problems.append("run_id and item_id are needed")
    for side in ("gold_triple", "answer_triple"):
        if row[side] is not None and len(row[side]) != 3:
            problems.append(f"{side} is not three strings")
    if row["gold_triple"] is None and row["answer_triple"] is None:
        problems.append("it names neither a gold nor an answer triple")
    if row["verdict"] == "undo" and row["replaces_uid"] is None:
        problems.append("an undo names the row it undoes (replaces_uid)")
    if not problems and row["verdict"] != "undo":
        try:  # the page's and the API's rules, in one place
            Decision(
                row["annotator"],
                row["run_id"],
                row["item_id"],
                row["gold_triple"],
                row["answer_triple"],
                row["verdict"],
                row["category"],
                role=row["role"],
            )
        except AnnotationError as exc:
            problems.append(str(exc))
    if problems:
        raise InputFormatError(f"row {n}: {'; '.join(problems)}")
    return row


def _pair(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Whose decision on which pair a row is: what a later row may replace."""
    return (
        row["annotator"],
        row["role"],
        int(row["run_id"]),
        int(row["item_id"]),
        None if row["gold_triple"] is None else tuple(row["gold_triple"]),
        None if row["answer_triple"] is None else tuple(row["answer_triple"]),
    )


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
    first_row: dict[str, int] = {}
    for n, row in enumerate(rows, start=1):
        if row["uid"] in first_row:
            raise InputFormatError(
                f"row {n}: uid {_short(row['uid'])} is also row {first_row[row['uid']]}'s; "
                "every row has its own uid: export the log again"
            )
        first_row[row["uid"]] = n
    replaced_uids = {r["replaces_uid"] for r in rows if r["replaces_uid"] is not None}
    with store.connect() as con:
        here = aq.item_keys(con, {(r["run_id"], r["item_id"]) for r in rows})
        known = aq.uids_present(con, [r["uid"] for r in rows])
        in_db = aq.uids_present(con, replaced_uids - set(first_row))
        db_rows = aq.verdict_entries(con, in_db.values())
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
                f"{_short(named[0])}/{_short(named[1])} in the file: it comes from another "
                "database"
            )
    # the row each row replaces: in the file, else in the database; of the same person and pair
    pairs = {r["uid"]: _pair(r) for r in rows}
    pairs.update({uid: _pair(db_rows[i]) for uid, i in in_db.items() if i in db_rows})
    for n, row in enumerate(rows, start=1):
        target = row["replaces_uid"]
        if target is None:
            continue
        if target not in pairs:
            raise InputFormatError(
                f"row {n} (uid {_short(row['uid'])}) replaces row {_short(target)}, which is "
                "neither in the file nor in the database; export the whole log again"
            )
        if pairs[target] != _pair(row):
            raise InputFormatError(
                f"row {n} (uid {_short(row['uid'])}, {_short(row['annotator'])} as "
                f"{row['role']}) replaces row {_short(target)}, another person's decision or "
                "another pair's: a person can only replace or undo their own decision on the "
                "same pair"
            )
    seen: set[str] = set()
    new = []
    for row in sorted(rows, key=lambda r: r["created_at"]):
        if row["uid"] in known or row["uid"] in seen:
            continue
        seen.add(row["uid"])
        new.append(row)
    uids = set(known) | seen | set(in_db)
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
