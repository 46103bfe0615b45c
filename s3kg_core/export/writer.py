"""The export writer: one row per stored answer, read in blocks, written as CSV, Parquet or JSON.

The export's columns, their dtypes and the reader are in :mod:`s3kg_core.export.schema`. Every
stored answer is a row: those without a score under the signature say why
(:data:`~s3kg_core.stages.scored.UNSCORED_REASONS`).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import duckdb
import pandas as pd

from ..atomic import replacing, write_failure
from ..errors import ConfigError
from ..kg import SOURCES
from ..scoring.signature import Signature
from ..scoring.tau import TAU_CATEGORIES, TauResult
from ..stages.scored import reblend, resolve_signature, unscored_reasons
from ..store import export_queries, queries
from ..store.connection import open_duckdb
from ..store.store import Store
from ..tables import csv_safe_frame
from .schema import (
    DEFAULT_INCLUDES,
    EXPORT_COLUMNS,
    EXPORT_FORMATS,
    INCLUDES,
    conform,
    dumps,
    extra_column_names,
    json_records,
    tau_gold_categories,
)

__all__ = [
    "EXPORT_BLOCK_ANSWERS",
    "export_blocks",
    "export_frame",
    "export_results",
    "write_export",
]

_COMPONENTS = ["mode", "alpha", "gold_s_wl", "gold_s_sbert", "ctx_s_wl", "ctx_s_sbert"]
_BASE = [c.name for c in EXPORT_COLUMNS.values() if c.group == "base"]

EXPORT_BLOCK_ANSWERS = 10_000
"""How many answers :func:`export_blocks` reads and :func:`export_results` writes at a time: the
export's memory grows with a block, not with the store."""

_PARQUET_MEMORY = "512MB"  # DuckDB's, writing a Parquet export
_PARQUET_ROW_GROUP = 40_000  # rows: DuckDB holds a row group in memory while it writes it


def export_frame(
    store: Store,
    *,
    signature: str | None = None,
    include: Sequence[str] = INCLUDES,
    run_ids: Sequence[int] | None = None,
) -> pd.DataFrame:
    """One row per stored answer: texts, statuses, components, scores, and the groups asked.

    Every answer is there, with its collect status and error (``answer_status``,
    ``answer_error``), its KGs' statuses (``gold_kg_status``, ``answer_kg_status``,
    ``context_kg_status``) and, where it has no score under ``signature`` (default: the
    latest; or nothing is scored yet), the reason in ``unscored_reason`` (a key of
    :data:`~s3kg_core.stages.scored.UNSCORED_REASONS`) and empty score columns; then every
    extra column of the imported file, under its own name (``input_<name>`` where that is
    taken). ``include`` adds groups of :data:`~s3kg_core.export.schema.INCLUDES`: ``metadata``
    (the run's name, model, source and settings; what collect stored of the answer),
    ``triples`` (the three KGs as JSON text) and ``tau`` (TAU's counts and its category per
    reference triple). Columns and dtypes: :data:`~s3kg_core.export.schema.EXPORT_COLUMNS`.
    ``run_ids`` keeps those runs only. The frame is :func:`export_blocks`' blocks put
    together; a large store is better written block by block (:func:`export_results`).

    Raises
    ------
    ConfigError
        If ``signature`` is unknown or a group is not one of ``metadata``, ``triples``, ``tau``.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import AnswerRecord, ItemRecord
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "x.duckdb"))
    >>> with store.transaction() as con:
    ...     ds = store.ensure_dataset(con, "toy")
    ...     ids = store.upsert_items(con, ds, [ItemRecord("007", "Why?", "Because.", "So.")])
    ...     run = store.ensure_run(con, ds, "org/m-1", 0.0, "none")
    ...     _ = store.put_answers(con, run, [AnswerRecord(ids["007"], "Hm.", prompt_tokens=9)])
    >>> row = export_frame(store, include=["metadata"]).iloc[0]
    >>> row["ext_id"], row["run_name"], int(row["prompt_tokens"]), row["unscored_reason"]
    ('007', 'm-1', 9, 'not_extracted')
    """
    blocks = list(export_blocks(store, signature=signature, include=include, run_ids=run_ids))
    return blocks[0] if len(blocks) == 1 else pd.concat(blocks, ignore_index=True)


def export_blocks(
    store: Store,
    *,
    signature: str | None = None,
    include: Sequence[str] = INCLUDES,
    run_ids: Sequence[int] | None = None,
    block_size: int = EXPORT_BLOCK_ANSWERS,
) -> Generator[pd.DataFrame, None, None]:
    """:func:`export_frame`'s rows, ``block_size`` answers at a time, in order.

    Every block has the same columns and dtypes (an extra column that a block's answers lack
    is there, empty); a store without answers gives one empty block. The blocks are read in
    one transaction on one connection, held until the last block is read (or the iterator
    closed), so they agree with each other while another connection writes.

    Raises
    ------
    ConfigError
        If ``signature`` is unknown, a group unknown or ``block_size`` is not positive: at
        once, before any block is read.

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import AnswerRecord, ItemRecord
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "b.duckdb"))
    >>> with store.transaction() as con:
    ...     ds = store.ensure_dataset(con, "toy")
    ...     ids = store.upsert_items(con, ds, [ItemRecord(f"q{i}") for i in range(5)])
    ...     run = store.ensure_run(con, ds, "m", 0.0, "none")
    ...     _ = store.put_answers(con, run, [AnswerRecord(i, "a") for i in ids.values()])
    >>> [len(b) for b in export_blocks(store, include=(), block_size=2)]
    [2, 2, 1]
    """
    unknown = sorted(set(include) - set(INCLUDES))
    if unknown:
        raise ConfigError(f"include takes {', '.join(INCLUDES)}; got {', '.join(unknown)}")
    if block_size < 1:
        raise ConfigError(f"block_size must be a positive number of answers; got {block_size}")
    return _blocks(store, resolve_signature(store, signature), tuple(include), run_ids, block_size)


def _blocks(
    store: Store,
    signature: str | None,
    include: tuple[str, ...],
    run_ids: Sequence[int] | None,
    block_size: int,
) -> Generator[pd.DataFrame, None, None]:
    with store.connect() as con:
        con.execute("BEGIN TRANSACTION")  # one snapshot for every block
        keys = export_queries.export_keys(con, run_ids)
        order = export_queries.extra_column_positions(con, keys).sort_values(["pos", "name"])
        block = _Block(
            signature,
            tuple(g for g in INCLUDES if g in include),
            extra_column_names(order["name"], _BASE),
            export_queries.run_metadata(con) if "metadata" in include else None,
            _stored_alpha(con, signature),
        )
        for start in range(0, max(len(keys), 1), block_size):
            yield block.frame(con, keys.iloc[start : start + block_size])


@dataclass(frozen=True)
class _Block:
    """What every block of an export shares: signature, groups, extra columns, runs, alpha.

    ``alpha``: the one the signature's scores are stored with (``None``: none, or several).
    """

    signature: str | None
    groups: tuple[str, ...]
    extras: dict[str, str]
    runs: pd.DataFrame | None
    alpha: float | None = None

    def frame(self, con: duckdb.DuckDBPyConnection, keys: pd.DataFrame) -> pd.DataFrame:
        """The export's rows of the answers ``keys`` (``run_id, item_id``), in their order."""
        frame = export_queries.export_rows(con, self.signature, keys)
        frame["unscored_reason"] = unscored_reasons(frame)
        scored = frame["scored"].astype(bool)
        blended = reblend(frame.loc[scored, _COMPONENTS], None)  # unscored: no scores
        for column in ("gold_sim", "ctx_sim", "cus"):
            frame[column] = blended[column].reindex(frame.index)
        frame["signature"] = self.signatures(frame["alpha"])
        frame = frame[_BASE]
        if self.extras:
            frame = _with_extra_columns(frame, export_queries.extra_columns(con, keys), self.extras)
        for group in self.groups:
            if group == "metadata":
                frame = frame.merge(self.runs, on="run_id", how="left").merge(
                    export_queries.answer_metadata(con, keys), on=["run_id", "item_id"], how="left"
                )
            elif group == "triples":
                frame = _with_triples(frame, export_queries.kg_triples_json(con, keys))
            else:
                tau = (
                    []
                    if self.signature is None
                    else export_queries.tau_rows(con, self.signature, keys)
                )
                frame = _with_tau(frame, tau)
        return conform(frame.reset_index(drop=True))

    def signatures(self, alphas: pd.Series) -> pd.Series:
        """Each row's signature: the scores' with the alpha its row is blended at.

        An unscored row (no alpha) names the alpha the signature's scores are stored with.
        """
        if self.signature is None:
            return pd.Series(None, index=alphas.index, dtype=object)
        filled = alphas.astype(float)
        if self.alpha is not None:
            filled = filled.fillna(self.alpha)
        texts = {a: Signature.blended(self.signature, a) for a in filled.dropna().unique()}
        return filled.map(texts).fillna(self.signature).astype(object)


def _stored_alpha(con: duckdb.DuckDBPyConnection, signature: str | None) -> float | None:
    """The alpha ``signature``'s scores are stored with; ``None`` if none, or several."""
    alphas = [] if signature is None else queries.score_alphas(con, signature)
    return alphas[0] if len(alphas) == 1 else None


def _with_extra_columns(
    frame: pd.DataFrame, extras: pd.DataFrame, names: dict[str, str]
) -> pd.DataFrame:
    """``frame`` with the imported files' extra columns ``names`` (stored name -> column).

    An answer's own value, else its item's; empty where neither has one.
    """
    keys = frame[["run_id", "item_id"]]
    own = extras[extras["run_id"] != export_queries.ITEM_LEVEL].merge(
        keys, on=["run_id", "item_id"]
    )
    of_item = (
        extras[extras["run_id"] == export_queries.ITEM_LEVEL]
        .drop(columns="run_id")
        .merge(keys, on="item_id")
    )
    own["rank"], of_item["rank"] = 0, 1
    values = (
        pd.concat([own, of_item], ignore_index=True)
        .sort_values("rank", kind="stable")
        .drop_duplicates(["run_id", "item_id", "name"])
    )
    if values.empty:
        return frame.assign(**dict.fromkeys(names.values()))
    wide = values.pivot(index=["run_id", "item_id"], columns="name", values="value")
    wide = wide.reindex(columns=list(names)).rename(columns=names).reset_index()
    wide.columns.name = None
    return frame.merge(wide, on=["run_id", "item_id"], how="left")


def _with_triples(frame: pd.DataFrame, triples: pd.DataFrame) -> pd.DataFrame:
    wide = triples.pivot(index=["run_id", "item_id"], columns="source", values="triples")
    wide = wide.reindex(columns=list(SOURCES))
    wide.columns = [f"{source}_triples" for source in SOURCES]
    return frame.merge(wide.reset_index(), on=["run_id", "item_id"], how="left")


def _with_tau(frame: pd.DataFrame, rows: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    """TAU's columns, of target ``cus``, else ``gold_sim``, else ``ctx_sim``, per answer."""
    preference = {"cus": 0, "gold_sim": 1, "ctx_sim": 2}
    chosen: dict[tuple[int, int], tuple[str, str]] = {}
    for run, item, target, result in rows:
        key = (int(run), int(item))
        if key not in chosen or preference.get(target, 9) < preference.get(chosen[key][0], 9):
            chosen[key] = (str(target), str(result))
    names = [c.name for c in EXPORT_COLUMNS.values() if c.group == "tau"]
    records = []
    for (run, item), (target, text) in chosen.items():
        result = TauResult.from_dict(json.loads(text)).to_dict()  # old swaps: roles swapped
        counts = result["counts"]
        records.append(
            [
                run,
                item,
                target,
                *(counts[k] for k in TAU_CATEGORIES),
                dumps(tau_gold_categories(result)),
                dumps([list(t) for t in result.get("extra", ())]),
            ]
        )
    tau = pd.DataFrame(records, columns=["run_id", "item_id", *names])
    return frame.merge(tau, on=["run_id", "item_id"], how="left")


def write_export(frame: pd.DataFrame, out: str | Path, fmt: str = "csv") -> None:
    """Write an export frame as csv, parquet or json, whole or not at all.

    Raises
    ------
    ConfigError
        If ``fmt`` is not csv, parquet or json.
    OutputError
        If the file cannot be written (a file that was there is unchanged).
    """
    _write_blocks(iter([frame]), out, fmt)


def _write_blocks(blocks: Iterator[pd.DataFrame], out: str | Path, fmt: str) -> int:
    """Write export blocks (same columns and dtypes) as one file; return how many rows."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"format must be csv, parquet or json; got {fmt!r}")
    try:
        with replacing(out) as tmp:  # a killed export leaves the previous file, not half of one
            if fmt == "csv":
                return _write_csv(blocks, tmp)
            if fmt == "parquet":
                return _write_parquet(blocks, tmp)
            return _write_json(blocks, tmp)
    except (OSError, duckdb.Error) as exc:  # DuckDB writes Parquet: its IOException too
        raise write_failure(out, exc) from exc


def _write_csv(blocks: Iterator[pd.DataFrame], path: Path) -> int:
    n, first = 0, True
    with path.open("w", encoding="utf-8", newline="") as fh:
        for block in blocks:
            csv_safe_frame(block).to_csv(fh, index=False, header=first)  # no cell a formula
            n, first = n + len(block), False
    return n


def _write_parquet(blocks: Iterator[pd.DataFrame], path: Path) -> int:
    """Write each block to a Parquet part beside ``path``, then the parts to ``path`` in order.

    DuckDB writes Parquet itself (no pyarrow needed), under a memory limit and in row groups
    of :data:`_PARQUET_ROW_GROUP` rows: the memory needed is a block's, not the export's.
    """
    n = 0
    parts: list[Path] = []
    with tempfile.TemporaryDirectory(dir=path.parent, prefix=f".{path.name}.") as folder:
        con = open_duckdb(config={"memory_limit": _PARQUET_MEMORY, "temp_directory": folder})
        try:
            for block in blocks:
                parts.append(Path(folder) / f"part-{len(parts):06d}.parquet")
                con.register("results", block)
                try:
                    queries.copy_results_to_parquet(con, parts[-1])
                finally:
                    con.unregister("results")
                n += len(block)
            queries.copy_parquet_parts(con, parts, path, row_group=_PARQUET_ROW_GROUP)
        finally:
            con.close()
    return n


def _write_json(blocks: Iterator[pd.DataFrame], path: Path) -> int:
    """One JSON array of records, written as ``json.dump(records, fh, indent=2)`` would.

    The json module writes floats exactly (pandas' to_json keeps 10 digits).
    """
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for block in blocks:
            for record in json_records(block):
                fh.write(",\n  " if n else "[\n  ")
                json.dump(record, _Indented(fh), ensure_ascii=False, indent=2)
                n += 1
        fh.write("\n]" if n else "[]")
    return n


@dataclass(frozen=True)
class _Indented:
    """A text file whose every new line starts two spaces in: a record inside the array.

    A JSON text has no line break inside a string, so every one it holds starts a line.
    """

    fh: TextIO

    def write(self, text: str) -> int:
        return self.fh.write(text.replace("\n", "\n  "))


def export_results(
    store: Store,
    out: str | Path,
    *,
    fmt: str = "csv",
    signature: str | None = None,
    include: Sequence[str] | None = None,
    block_size: int = EXPORT_BLOCK_ANSWERS,
) -> int:
    """Write :func:`export_frame`'s rows as csv/parquet/json; return how many were written.

    ``include`` defaults to the format's groups
    (:data:`~s3kg_core.export.schema.DEFAULT_INCLUDES`: all of them in Parquet and
    JSON, none in CSV). The columns have the same dtypes in every format
    (:func:`~s3kg_core.export.schema.read_export` reads them back so). The rows are read
    and written ``block_size`` answers at a time (:func:`export_blocks`), so the memory needed
    grows with a block, not with the store; a Parquet export writes a part per block in a
    temporary folder beside ``out``, then the parts, in order, to ``out``.

    Raises
    ------
    ConfigError
        If ``signature`` is unknown, ``fmt`` is not csv, parquet or json, a group unknown or
        ``block_size`` not positive.
    OutputError
        If the file cannot be written (it is written whole or not at all).
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"format must be csv, parquet or json; got {fmt!r}")
    groups = DEFAULT_INCLUDES[fmt] if include is None else tuple(include)
    blocks = export_blocks(store, signature=signature, include=groups, block_size=block_size)
    try:
        return _write_blocks(blocks, out, fmt)
    finally:
        blocks.close()  # the store's connection, at once even when the writing failed
