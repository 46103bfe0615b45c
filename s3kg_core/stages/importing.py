r"""Importers: the S3KG authors' released QA runs, PubMedQA, and any CSV / JSONL with a mapping.

Every importer reads and checks a whole file first, then writes its datasets, items, runs,
answers and KGs through :class:`~s3kg_core.store.store.Store` in one short transaction per file
(per 1,000 rows of a released run, whose KG cells are parsed before each transaction): the write
lock is held for the writes only (a 6,000-row release file held it 52.8 s when its KG cells were
parsed inside one transaction), so a dashboard saving annotations meanwhile waits a moment, not a
minute.
Re-importing a file replaces what it wrote before, so imports are idempotent: into the same run
(a table's run is found again by its source, even once extracted), and an answer or KG that
changed loses the KGs, scores and TAU results made from the old one. Columns are checked before
anything is written: a missing column is an error that names the columns expected and found.
Text that is not UTF-8 (undecodable bytes, lone surrogates from JSON escapes such as ``\ud800``)
is replaced with U+FFFD where it is read (:mod:`s3kg_core.tables`, :mod:`s3kg_core.kgio`) and
reported as a problem of its row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import closing
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputFormatError, KGParseError, MappingError
from ..kg import SOURCES, Triple
from ..kgio import parse_kg_cell
from ..store import export_queries, queries
from ..store.records import AnswerRecord, ItemRecord, KGRecord
from ..store.store import Store
from ..tables import (
    Table,
    iter_json_object,
    read_csv_rows,
    read_jsonl_records,
    replace_surrogates,
)

__all__ = [
    "RELEASE_LAYOUTS",
    "ImportReport",
    "import_pubmedqa",
    "import_s3kg_release",
    "import_table",
    "parse_mapping",
]

RELEASE_LAYOUTS: dict[str, dict[str, str]] = {
    "released": {
        "id": "id",
        "question": "question",
        "gold": "gold_answer",
        "answer": "llm_answer",
        "context": "context",
        "kg_gold": "kg_gold",
        "kg_answer": "kg_llm",
        "kg_context": "kg_context",
    },
    "released-small": {
        "id": "row_id",
        "question": "question",
        "gold": "gold_answer",
        "answer": "llm_answer",
        "context": "context",
        "kg_gold": "gold_kg",
        "kg_answer": "llm_kg",
        "kg_context": "context_kg",
    },
}
"""The column names of the two layouts of the released runs (``qa/*.csv`` and
``qa/small/*.csv``), by role: ``id``, ``question``, ``gold``, ``answer``, ``context`` and the
three ``kg_*`` columns."""
TABLE_FIELDS = ("id", "question", "context", "gold", "answer")
_JSONL_SUFFIXES = (".jsonl", ".ndjson")
_REPLACED = "non-UTF-8 text replaced with U+FFFD"


@dataclass
class ImportReport:
    """What one import wrote, and every row-level problem it met."""

    source: str
    dataset: str
    model: str | None = None
    run_id: int | None = None
    items: int = 0
    answers: int = 0
    kgs: int = 0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the command line."""
        what = f"{self.dataset}" + (f" / {self.model}" if self.model else "")
        extra = f"; {len(self.problems)} problems" if self.problems else ""
        return (
            f"{self.source}: {what}: {self.items} items, {self.answers} answers, "
            f"{self.kgs} KGs{extra}"
        )


def _report_replaced(table: Table[Any], ids: Mapping[int, str], report: ImportReport) -> None:
    """One problem per row (and for the header) whose text that is not UTF-8 was replaced."""
    if table.header_replaced:
        report.problems.append(f"header: {_REPLACED}")
    where = "line" if table.path.suffix.lower() in _JSONL_SUFFIXES else "data row"
    for row in table.rows:
        if row.replaced:
            report.problems.append(
                f"row {ids.get(row.number) or '?'} ({where} {row.number}): {_REPLACED}"
            )


def _kg(
    source: str, cell: str | None, row: str, report: ImportReport
) -> tuple[tuple[Triple, ...], str, int]:
    """A KG cell parsed (before any transaction): its triples, status and dropped items."""
    try:
        triples, dropped, replaced = parse_kg_cell(cell)
    except KGParseError as exc:
        report.problems.append(f"row {row}: {source} KG unparseable ({exc})")
        return (), "unparseable", 0
    if replaced:
        report.problems.append(f"row {row}: {source} KG: {_REPLACED}")
    if dropped:
        report.problems.append(f"row {row}: {source} KG: {dropped} malformed triples dropped")
    return tuple(triples), "ok" if triples else "empty", dropped


def _text(value: Any) -> str | None:
    """A cell as text: a string as it is, ``None`` as ``None``, any other value as ``str()``."""
    return value if isinstance(value, str) or value is None else str(value)


def _release_layout(path: Path, header: list[str]) -> str:
    for name, layout in RELEASE_LAYOUTS.items():
        if set(layout.values()) <= set(header):
            return name
    expected = " or ".join(
        "(" + ", ".join(layout.values()) + ")" for layout in RELEASE_LAYOUTS.values()
    )
    raise InputFormatError(
        f"{path.name}: not a released QA run; expected columns {expected}, "
        f"found {', '.join(header) or 'none'}"
    )


def import_s3kg_release(
    store: Store, directory: str | Path, *, batch_rows: int = 1000
) -> list[ImportReport]:
    """Import every ``*.csv`` of a folder of the S3KG authors' released QA runs.

    The dataset and model come from the file name (``mesaqa_gemma-7b-it.csv`` is dataset
    ``mesaqa``, model ``gemma-7b-it``); the runs were made at temperature 0. The KGs, which the
    authors extracted jointly with an LLM, are stored with extractor ``released`` (layout of
    ``qa/``) or ``released-small`` (layout of ``qa/small/``, a separate extraction).

    Every file is read and checked before anything is written; its rows are then written in
    transactions of ``batch_rows`` rows each, their KG cells parsed before each transaction,
    so the write lock is never held long and is free while the next rows are parsed (another
    process, such as the dashboard saving annotations, gets the file then). A killed import
    leaves the rows written so far; importing the file again completes it.

    Raises
    ------
    InputFormatError
        If the folder has no CSV, a file name has no ``dataset_model`` form, or a file has
        neither column layout. Every file is checked first: on an error nothing is written.
    """
    folder = Path(directory)
    files = sorted(folder.glob("*.csv")) if folder.is_dir() else []
    if not files:
        raise InputFormatError(f"{folder}: no *.csv files to import (is it the qa/ folder?)")
    checked = []
    for path in files:  # check every file before writing any
        dataset, sep, model = path.stem.partition("_")
        if not sep or not dataset or not model:
            raise InputFormatError(
                f"{path.name}: file name must be DATASET_MODEL.csv, e.g. mesaqa_gemma-7b-it.csv"
            )
        table = read_csv_rows(path)
        header = [h for h in table.header if h]
        checked.append((path, dataset, model, _release_layout(path, header), table))
    reports = []
    for path, dataset, model, extractor, table in checked:
        cols = RELEASE_LAYOUTS[extractor]
        report = ImportReport(source=path.name, dataset=dataset, model=model)
        _report_replaced(
            table, {r.number: (r.cells.get(cols["id"]) or "").strip() for r in table.rows}, report
        )
        for short in table.rows:
            if any(short.cells.get(c) is None for c in cols.values()):
                report.problems.append(
                    f"row {short.cells.get(cols['id']) or '?'}: too few fields; the missing ones "
                    "are empty"
                )
        rows = [{k: (v if v is not None else "") for k, v in r.cells.items()} for r in table.rows]
        by_id = {r[cols["id"]].strip(): r for r in rows}
        if len(by_id) < len(rows):
            report.problems.append(
                f"{len(rows) - len(by_id)} rows repeat an id; the last row of each id is kept"
            )
            rows = list(by_id.values())
        records = [
            ItemRecord(
                r[cols["id"]].strip(), r[cols["question"]], r[cols["context"]], r[cols["gold"]]
            )
            for r in rows
        ]
        for lo in range(0, len(rows), batch_rows):
            chunk = slice(lo, lo + batch_rows)
            # Parsed before each transaction: the write lock is held for the writes only, and
            # is free while the next rows are parsed (another process gets the file then).
            parsed = {
                rec.ext_id: [_kg(s, r[cols[f"kg_{s}"]], rec.ext_id, report) for s in SOURCES]
                for rec, r in zip(records[chunk], rows[chunk], strict=True)
            }
            with store.transaction() as con:
                ds = store.ensure_dataset(con, dataset, source="s3kg_release")
                ids = store.upsert_items(con, ds, records[chunk])
                run = store.ensure_run(
                    con, ds, model, 0.0, extractor, source=f"s3kg_release/{path.name}"
                )
                report.run_id = run
                report.items += len(ids)
                answers: list[AnswerRecord] = []
                kgs: list[KGRecord] = []
                for rec, r in zip(records[chunk], rows[chunk], strict=True):
                    item = ids[rec.ext_id]
                    answers.append(AnswerRecord(item, r[cols["answer"]]))
                    kgs.extend(
                        KGRecord(run, item, source, triples, status, dropped)
                        for source, (triples, status, dropped) in zip(
                            SOURCES, parsed[rec.ext_id], strict=True
                        )
                    )
                report.answers += store.put_answers(con, run, answers)
                report.kgs += store.put_kgs(con, kgs)
        reports.append(report)
    return reports


def import_pubmedqa(
    store: Store, path: str | Path, *, dataset: str = "pubmedqa_pqal", limit: int | None = None
) -> ImportReport:
    """Import PubMedQA's ``ori_pqal.json``: question, joined contexts, long answer (no runs).

    Items are keyed by PMID, in dataset ``pubmedqa_pqal`` by default (the released runs' dataset
    ``pubmedqa`` numbers its questions 0..399 instead). ``limit``: the first ``limit`` records
    of the file only, in its order (``None``: all); the others are not read. The file is read a
    record at a time (:func:`~s3kg_core.tables.iter_json_object`), never held whole.

    Raises
    ------
    InputTooLargeError
        If the file is past the input cap (:func:`s3kg_core.limits.check_file_size`), before
        it is read.
    InputFormatError
        If the file is not a JSON object of records with QUESTION, CONTEXTS and LONG_ANSWER.
    ConfigError
        If ``limit`` is below 1.
    """
    if limit is not None and limit < 1:
        raise ConfigError(f"limit must be 1 or more; got {limit}")
    path = Path(path)
    need = ("QUESTION", "CONTEXTS", "LONG_ANSWER")
    records: dict[str, ItemRecord] = {}
    report = ImportReport(source=path.name, dataset=dataset)
    with closing(iter_json_object(path, expected="an object of PMID -> record")) as entries:
        for key, value in entries:
            if limit is not None and len(records) == limit and key not in records:
                break  # the records past the first `limit` are not read
            (pmid, rec), replaced = replace_surrogates([key, value])
            if replaced:
                report.problems.append(f"record {pmid}: {_REPLACED}")
            missing = [k for k in need if not isinstance(rec, dict) or k not in rec]
            if missing:
                found = ", ".join(sorted(rec)) if isinstance(rec, dict) else type(rec).__name__
                raise InputFormatError(
                    f"{path.name}: record {pmid} lacks {', '.join(missing)}; expected "
                    f"{', '.join(need)}, found {found}"
                )
            contexts = rec["CONTEXTS"]
            parts = contexts if isinstance(contexts, list) else [contexts]
            context = " ".join(text for c in parts if (text := _text(c)) is not None)
            # a PMID given twice keeps its first place and its last record read
            records[str(pmid)] = ItemRecord(
                str(pmid), _text(rec["QUESTION"]), context, _text(rec["LONG_ANSWER"])
            )
    with store.transaction() as con:
        ds = store.ensure_dataset(con, dataset, source="pubmedqa")
        report.items = len(store.upsert_items(con, ds, list(records.values())))
    return report


def parse_mapping(spec: str) -> dict[str, str]:
    """Parse ``question=Q,context=C,gold=G[,answer=A][,id=I]`` into ``{field: column}``.

    Examples
    --------
    >>> parse_mapping("question=q, context=ctx,gold=long_answer")
    {'question': 'q', 'context': 'ctx', 'gold': 'long_answer'}
    """
    mapping: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise MappingError(f"mapping entry {part!r} must be FIELD=COLUMN")
        if key not in TABLE_FIELDS:
            raise MappingError(
                f"unknown field {key!r} in mapping; fields are {', '.join(TABLE_FIELDS)}"
            )
        mapping[key] = value
    for required in ("question", "context", "gold"):
        if required not in mapping:
            raise MappingError(f"mapping must name the {required} column ({required}=COLUMN)")
    return mapping


def _read_table(path: Path) -> Table[Any]:
    if path.suffix.lower() in _JSONL_SUFFIXES:
        return read_jsonl_records(path)
    return read_csv_rows(path)


def import_table(
    store: Store,
    path: str | Path,
    mapping: Mapping[str, str],
    *,
    dataset: str | None = None,
    model: str | None = None,
    temperature: float = 0.0,
) -> ImportReport:
    """Import a CSV or JSONL file whose columns ``mapping`` names.

    Parameters
    ----------
    store
        Where to write.
    path
        A ``.csv`` file, or ``.jsonl`` / ``.ndjson`` with one JSON object per line.
    mapping
        ``{"question": col, "context": col, "gold": col}``, optionally ``"id"`` (else the row
        number) and ``"answer"``.
    dataset
        Dataset name (default: the file's stem).
    model, temperature
        The model whose answers the ``answer`` column holds, and its sampling temperature.

    Raises
    ------
    MappingError
        If a mapped column is not in the file (the message lists the columns found), or an
        answer column is mapped without a model name.
    """
    path = Path(path)
    table = _read_table(path)
    header = [h for h in table.header if h]
    rows = [r.cells for r in table.rows]
    missing = [f"{k}={c}" for k, c in mapping.items() if c not in header]
    if missing:
        raise MappingError(
            f"{path.name}: mapped column(s) not found: {', '.join(missing)}; "
            f"columns in the file: {', '.join(header) or 'none'}"
        )
    if "answer" in mapping and not model:
        raise MappingError("an answer column is mapped: name its model with --model NAME")
    name = dataset or path.stem
    report = ImportReport(
        source=path.name, dataset=name, model=model if "answer" in mapping else None
    )

    def cell(row: dict[str, Any], key: str) -> str | None:
        return _text(row.get(mapping[key])) if key in mapping else None

    records = [
        ItemRecord(
            (cell(r, "id") or str(number)).strip(),
            cell(r, "question"),
            cell(r, "context"),
            cell(r, "gold"),
        )
        for number, r in enumerate(rows, start=1)
    ]
    _report_replaced(
        table, {r.number: rec.ext_id for r, rec in zip(table.rows, records, strict=True)}, report
    )
    last = {rec.ext_id: (rec, row) for rec, row in zip(records, rows, strict=True)}
    if len(last) < len(records):
        report.problems.append(
            f"{len(records) - len(last)} rows repeat an id; the last row of each id is kept"
        )
        records = [rec for rec, _ in last.values()]
        rows = [row for _, row in last.values()]
    with store.transaction() as con:
        ds = store.ensure_dataset(con, name, source=f"table/{path.name}")
        ids = store.upsert_items(con, ds, records)
        report.items = len(ids)
        if "answer" in mapping and model:
            source = f"table/{path.name}"
            run = queries.find_run_by_source(con, ds, model, temperature, source)
            if run is None:  # the first import; later ones find it, extracted or not
                run = store.ensure_run(con, ds, model, temperature, "none", source=source)
            report.run_id = run
            report.answers = store.put_answers(
                con,
                run,
                [
                    AnswerRecord(ids[rec.ext_id], cell(row, "answer"))
                    for rec, row in zip(records, rows, strict=True)
                ],
            )
        owner = report.run_id if report.run_id is not None else export_queries.ITEM_LEVEL
        mapped = set(mapping.values())
        first = {c: pos for pos, c in reversed(list(enumerate(header))) if c not in mapped}
        extras = sorted(first.items(), key=lambda e: e[1])  # (name, place), in the file's order
        keys = [(owner, ids[rec.ext_id]) for rec in records]
        export_queries.replace_extra_columns(
            con,
            keys,
            [
                (run, item, name, pos, _extra_text(row.get(name), rec.ext_id, name, report))
                for (run, item), rec, row in zip(keys, records, rows, strict=True)
                for name, pos in extras
            ],
        )
    return report


def _extra_text(value: Any, row: str, column: str, report: ImportReport) -> str | None:
    """An extra column's cell as stored: text as it is, other JSON values as JSON text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, Decimal):  # an integer too long for int (tables.loads_json)
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except RecursionError:
        report.problems.append(f"row {row}: column {column} nested too deeply to keep; left empty")
        return None
