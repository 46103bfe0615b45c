"""Results of a scored store: components re-blended at any alpha, the CUS table, exports.

The export's columns, their dtypes and the reader are in :mod:`s3kg_core.stages.export_schema`.

The CUS table and the export account for every stored answer: those without a score under the
signature are counted by reason (:data:`UNSCORED_REASONS`), and an answer that can be scored
but is not yet (a ``s3kg score`` in progress, or stopped) says the table is partial.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO

import duckdb
import pandas as pd

from ..atomic import replacing, write_failure
from ..encoders.backend import backend_of_name, with_backend
from ..encoders.registry import PACKAGED_ENCODERS
from ..errors import ConfigError, InputFormatError
from ..kg import SOURCES
from ..scoring.cus import harmonic_mean
from ..scoring.result import TEXT_MODES, blend
from ..scoring.signature import Signature
from ..scoring.tau import TauResult
from ..store import export_queries, leaderboard_queries, queries
from ..store.connection import open_duckdb
from ..store.store import Store
from ..tables import csv_safe_frame
from .export_schema import (
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
    "EMPTY_POLICIES",
    "EXPORT_BLOCK_ANSWERS",
    "TABLE_COLUMNS",
    "UNSCORED_REASONS",
    "CUSReport",
    "EmptyPolicy",
    "ScoreCoverage",
    "check_empty_policy",
    "cus_report",
    "cus_table",
    "encoder_for",
    "export_blocks",
    "export_frame",
    "export_results",
    "latest_signature",
    "reblend",
    "resolve_signature",
    "score_coverage",
    "scored_frame",
    "unscored_reasons",
    "write_export",
]

_TAU_COUNTS = ("aligned", "relation_mismatch", "entity_mismatch", "extra", "missing")
_COMPONENTS = ["mode", "alpha", "gold_s_wl", "gold_s_sbert", "ctx_s_wl", "ctx_s_sbert"]
_BASE = [c.name for c in EXPORT_COLUMNS.values() if c.group == "base"]

EmptyPolicy = Literal["zero", "drop"]

EMPTY_POLICIES: tuple[EmptyPolicy, ...] = ("zero", "drop")
"""How an answer with an empty or unparseable KG counts in CUS means: ``zero`` (the default:
its scores are 0 and it counts) or ``drop`` (left out, as the authors' released QA scripts do)."""


def check_empty_policy(empty: str) -> None:
    """Raise :class:`ConfigError` unless ``empty`` is one of :data:`EMPTY_POLICIES`.

    Examples
    --------
    >>> check_empty_policy("drop")
    >>> check_empty_policy("none")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: empty must be one of zero, drop; got 'none'
    """
    if empty not in EMPTY_POLICIES:
        raise ConfigError(f"empty must be one of {', '.join(EMPTY_POLICIES)}; got {empty!r}")


TABLE_COLUMNS = [
    "dataset",
    "model",
    "temperature",
    "extractor",
    "run_id",
    "n",
    "unscored",
    "gold_sim",
    "ctx_sim",
    "cus",
]
"""The columns of the CUS table: one row per run (``run_id``: two runs may share a display
name, temperature and extractor), ``n`` answers scored, ``unscored`` stored but not scored."""

UNSCORED_REASONS: dict[str, str] = {
    "collect_error": "collect error",
    "kg_extraction_failed": "KG extraction failed",
    "not_extracted": "no KGs yet",
    "not_scored": "not yet scored",
}
"""Why a stored answer has no score under a signature (its ``unscored_reason`` -> words).

The first that applies: the answer failed to collect (status ``error``); one of its KGs failed
to extract; its answer KG is not stored (not extracted yet); else it can be scored but is not
yet. Answers whose KG is empty or unparseable are scored, and their CUS is 0.
"""


def latest_signature(store: Store) -> str | None:
    """The signature of the latest `score` pass (even one that only re-blended), or ``None``."""
    with store.connect() as con:
        latest = store.get_meta(con, "latest_signature")
        if latest is not None:
            return latest
        return queries.latest_scored_signature(con)


def resolve_signature(store: Store, signature: str | None = None) -> str | None:
    """``signature`` if the store has scores under it, else the latest one (``None``: none).

    Raises
    ------
    ConfigError
        If ``signature`` is given and nothing is scored under it; the message lists the
        stored signatures, latest first (and, for a signature printed with ``|alpha:A``, how
        to pass it: signatures are stored without alpha).

    Examples
    --------
    >>> import os, tempfile
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "r.duckdb"))
    >>> resolve_signature(store) is None
    True
    >>> resolve_signature(store, "nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: unknown signature 'nope'; nothing is scored yet: run ...
    """
    if signature is None:
        return latest_signature(store)
    with store.connect() as con:
        stored = queries.signatures_by_recency(con)
    if signature in stored:
        return signature
    if not stored:
        raise ConfigError(
            f"unknown signature {signature!r}; nothing is scored yet: run `s3kg score` first"
        )
    message = f"unknown signature {signature!r}; the stored signatures, latest first: " + (
        ", ".join(stored)
    )
    try:
        parsed = Signature.parse(signature)
    except InputFormatError:
        parsed = None
    if parsed is not None and parsed.alpha is not None and parsed.components in stored:
        message += (
            f" (signatures are stored without alpha: pass --signature "
            f"{parsed.components!r} --alpha {parsed.alpha:g})"
        )
    raise ConfigError(message)


def encoder_for(store: Store, signature: str) -> str:
    """The name or path to load the encoder a signature was scored with, on its backend.

    The backend comes from the signature's encoder name (``minilm@0.1.0+openvino``; no suffix:
    torch), whatever ``$S3KG_ENCODER_BACKEND`` says now, so the vectors match the stored ones.

    Raises
    ------
    ConfigError
        If the database does not record it (pass the encoder explicitly then).
    """
    name = Signature.parse(signature).encoder
    backend = backend_of_name(name)
    with store.connect() as con:
        recorded = store.get_meta(con, f"encoder:{name}")
    if recorded is not None:
        return with_backend(recorded, backend)
    base = name.split("@", 1)[0]
    if base in PACKAGED_ENCODERS:
        return with_backend(base, backend)
    raise ConfigError(
        f"this database does not record where encoder {name!r} was loaded from; "
        "pass it with --encoder PATH"
    )


def scored_frame(
    store: Store, signature: str, alpha: float | None = None, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every scored answer of ``signature`` with its run, components and blended scores."""
    with store.connect() as con:
        frame = queries.scored_components(con, signature, run_ids)
    return reblend(frame, alpha)


def reblend(frame: pd.DataFrame, alpha: float | None = None) -> pd.DataFrame:
    """Set ``gold_sim``, ``ctx_sim`` and ``cus`` of stored components at ``alpha``.

    ``frame`` needs the columns ``mode``, ``alpha``, ``gold_s_wl``, ``gold_s_sbert``,
    ``ctx_s_wl`` and ``ctx_s_sbert``; ``alpha=None`` keeps each row's stored alpha. The scores
    are :func:`~s3kg_core.scoring.result.blend` and :func:`~s3kg_core.scoring.cus.harmonic_mean`
    (in SQL: :data:`~s3kg_core.store.blend_queries.BLENDED`). Vectorised: ten thousand answers
    take a few milliseconds, so a dashboard slider can call it on every move.

    Raises
    ------
    ConfigError
        If an alpha is outside [0, 1] or a row's mode is unknown.

    Examples
    --------
    >>> f = pd.DataFrame({"mode": ["paper"], "alpha": [0.5], "gold_s_wl": [1.0],
    ...                   "gold_s_sbert": [0.0], "ctx_s_wl": [0.0], "ctx_s_sbert": [0.0]})
    >>> reblend(f, 0.25)[["gold_sim", "ctx_sim", "cus"]].round(3).values.tolist()
    [[0.75, 0.0, 0.0]]
    """
    frame = frame.copy()
    a = frame["alpha"].to_numpy(dtype=float) if alpha is None else float(alpha)
    kinds = frame["mode"].unique()  # a signature's scores share one mode: blend it as one
    modes = str(kinds[0]) if len(kinds) == 1 else frame["mode"].to_numpy()
    for side in ("gold", "ctx"):
        wl = frame[f"{side}_s_wl"].to_numpy(dtype=float)
        sbert = frame[f"{side}_s_sbert"].to_numpy(dtype=float)
        frame[f"{side}_sim"] = blend(wl, sbert, a, modes)
    frame["cus"] = harmonic_mean(frame["gold_sim"].to_numpy(), frame["ctx_sim"].to_numpy())
    return frame


def unscored_reasons(statuses: pd.DataFrame) -> pd.Series:
    """Why each answer is not scored: a key of :data:`UNSCORED_REASONS`, ``None`` if scored.

    ``statuses`` has the columns ``scored, answer_status, gold_kg_status, answer_kg_status,
    context_kg_status`` (:func:`~s3kg_core.store.queries.answer_statuses`).

    Examples
    --------
    >>> f = pd.DataFrame({"scored": [True, False, False, False, False],
    ...                   "answer_status": ["ok", "error", "ok", "ok", "ok"],
    ...                   "gold_kg_status": ["ok", None, "failed: x", None, "ok"],
    ...                   "answer_kg_status": ["ok", None, "ok", None, "empty"],
    ...                   "context_kg_status": ["ok", None, "ok", None, "ok"]})
    >>> unscored_reasons(f).tolist()
    [None, 'collect_error', 'kg_extraction_failed', 'not_extracted', 'not_scored']
    """
    reasons = pd.Series("not_scored", index=statuses.index, dtype=object)
    reasons[statuses["answer_kg_status"].isna()] = "not_extracted"
    reasons[_any_kg_failed(statuses)] = "kg_extraction_failed"
    reasons[statuses["answer_status"] == "error"] = "collect_error"
    reasons[statuses["scored"].astype(bool)] = None
    return reasons


def _any_kg_failed(statuses: pd.DataFrame) -> pd.Series:
    failed = pd.Series(False, index=statuses.index)
    for column in ("gold_kg_status", "answer_kg_status", "context_kg_status"):
        failed |= statuses[column].fillna("").astype(str).str.startswith("failed")
    return failed


@dataclass(frozen=True)
class ScoreCoverage:
    """How many stored answers a signature's scores cover, and why the others are not scored.

    Attributes
    ----------
    signature
        The scores' signature (``None``: nothing is scored).
    answers
        Stored answers.
    scored
        Answers with a score under ``signature``.
    scorable
        Answers that can be scored: answer KG stored, no KG failed (what ``s3kg score`` takes).
    unscored
        Answers not scored, by reason (keys of :data:`UNSCORED_REASONS`, in its order; only
        reasons that occur).
    zero_kg
        Scored answers whose gold or context comparison found a KG empty or unparseable: their
        CUS is 0.
    text_kg
        The same, scored in a mode that uses the texts (``text``): their comparisons with an
        empty KG scored the texts' cosine instead.

    Examples
    --------
    >>> c = ScoreCoverage("sig", answers=11, scored=8, scorable=9,
    ...                   unscored={"collect_error": 2, "not_scored": 1})
    >>> for line in c.lines():  # doctest: +ELLIPSIS
    ...     print(line)
    3 answers not scored: 2 collect error, 1 not yet scored
    run in progress (or stopped): 8 of 9 scorable answers scored under this signature; ...
    """

    signature: str | None
    answers: int
    scored: int
    scorable: int
    unscored: dict[str, int] = field(default_factory=dict)
    zero_kg: int = 0
    text_kg: int = 0

    @property
    def empty_kg(self) -> int:
        """Scored answers with an empty or unparseable KG, whatever they scored."""
        return self.zero_kg + self.text_kg

    @property
    def pending(self) -> int:
        """Answers that can be scored but are not yet (a scoring run in progress, or to run)."""
        return self.unscored.get("not_scored", 0)

    def lines(self) -> list[str]:
        """What a reader of the table should know, one line each (none when all is scored)."""
        out = []
        if self.unscored:
            parts = ", ".join(f"{n} {UNSCORED_REASONS[k]}" for k, n in self.unscored.items())
            out.append(f"{sum(self.unscored.values())} answers not scored: {parts}")
        if self.pending:
            out.append(
                f"run in progress (or stopped): {self.scorable - self.pending} of "
                f"{self.scorable} scorable answers scored under this signature; `s3kg score` "
                "with the same settings finishes it"
            )
        if self.zero_kg:
            out.append(
                f"{self.zero_kg} of the {self.scored} scored answers have CUS 0: a KG is empty "
                "or unparseable (gold_status and ctx_status in `s3kg export`)"
            )
        if self.text_kg:
            out.append(
                f"{self.text_kg} of the {self.scored} scored answers have a KG empty or "
                "unparseable: the texts' cosine stands in for those comparisons (text mode)"
            )
        return out


def _both_ok(scored: pd.DataFrame) -> pd.Series:
    return (scored["gold_status"] == "ok") & (scored["ctx_status"] == "ok")


def _coverage(statuses: pd.DataFrame, scored: pd.DataFrame, signature: str | None) -> ScoreCoverage:
    reasons = unscored_reasons(statuses)
    counts = reasons.value_counts()
    scorable = statuses["answer_kg_status"].notna() & ~_any_kg_failed(statuses)
    empty_kg = ~_both_ok(scored)
    on_texts = scored["mode"].isin(TEXT_MODES) if len(scored) else empty_kg
    return ScoreCoverage(
        signature=signature,
        answers=len(statuses),
        scored=int(statuses["scored"].astype(bool).sum()),
        scorable=int(scorable.sum()),
        unscored={k: int(counts[k]) for k in UNSCORED_REASONS if k in counts},
        zero_kg=int((empty_kg & ~on_texts).sum()),
        text_kg=int((empty_kg & on_texts).sum()),
    )


def score_coverage(store: Store, signature: str | None = None) -> ScoreCoverage:
    """How many stored answers ``signature`` (default: the latest) covers, and why not the rest.

    Raises
    ------
    ConfigError
        If ``signature`` is given and unknown (see :func:`resolve_signature`).

    Examples
    --------
    >>> import os, tempfile
    >>> from s3kg_core.store.records import AnswerRecord, ItemRecord
    >>> store = Store(os.path.join(tempfile.mkdtemp(), "c.duckdb"))
    >>> with store.transaction() as con:
    ...     ds = store.ensure_dataset(con, "toy")
    ...     ids = store.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
    ...     run = store.ensure_run(con, ds, "m", 0.0, "none")
    ...     _ = store.put_answers(con, run, [AnswerRecord(ids["q1"], None, error="HTTP 500")])
    >>> score_coverage(store).lines()
    ['1 answers not scored: 1 collect error']
    """
    signature = resolve_signature(store, signature)
    with store.connect() as con:
        statuses = queries.answer_statuses(con, signature)
        scored = queries.scored_components(con, signature or "")
    return _coverage(statuses, scored, signature)


@dataclass(frozen=True)
class CUSReport:
    """The CUS table of a signature, with what it covers.

    Attributes
    ----------
    signature
        The scores' signature (stored components, without alpha).
    alpha
        The alpha the table was re-blended at (``None``: as scored).
    table
        One row per run, by dataset, name, temperature, extractor (:data:`TABLE_COLUMNS`); the means
        are NaN where no answer is scored.
    coverage
        The stored answers the table covers and why the others are not scored.
    empty
        How answers with an empty or unparseable KG count: ``"zero"`` (scored 0, in ``n``) or
        ``"drop"`` (left out of the means and of ``n``).
    """

    signature: str
    alpha: float | None
    table: pd.DataFrame
    coverage: ScoreCoverage
    empty: EmptyPolicy = "zero"

    def records(self) -> list[dict[str, Any]]:
        """The table as a list of dicts (JSON-ready: NaN means are ``None``)."""
        return [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in self.table.to_dict(orient="records")
        ]

    def lines(self) -> list[str]:
        """What ``s3kg cus`` prints: the table, the coverage lines, the signature last."""
        text = self.table.to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-")
        signature = f"signature {Signature.blended(self.signature, self.alpha)}"
        coverage = self.coverage.lines()
        if self.empty == "drop" and self.coverage.empty_kg:
            coverage = [line for line in coverage if " scored answers ha" not in line] + [
                f"{self.coverage.empty_kg} of the {self.coverage.scored} scored answers are left "
                "out of the means (--empty drop): a KG is empty or unparseable"
            ]
        return [*text.splitlines(), *coverage, signature]


def cus_report(
    store: Store,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
) -> CUSReport:
    """GoldSim, CtxSim and CUS means per dataset x model x temperature x extractor, with coverage.

    ``alpha`` re-blends the stored components (default: the alpha each score was stored with).
    With ``empty="zero"`` (the default) answers whose KG is empty or unparseable are scored 0
    and count in ``n``; with ``empty="drop"`` they are left out of the means and of ``n`` (what
    the authors' released QA scripts do: their score is ``None``), and counted in
    :attr:`ScoreCoverage.zero_kg` all the same. Answers without a score count in ``unscored``,
    by reason in :attr:`CUSReport.coverage`. The means are the Overview's leaderboard's
    (:func:`s3kg_core.store.leaderboard_queries.run_summaries`, computed in DuckDB). One
    connection reads the scores and the answers, so the counts agree even while ``s3kg score``
    writes.

    Raises
    ------
    ConfigError
        If nothing is scored, ``signature`` is unknown, or ``empty`` is not zero or drop.

    Examples
    --------
    >>> import os, tempfile
    >>> cus_report(Store(os.path.join(tempfile.mkdtemp(), "e.duckdb")))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: no scores in ...e.duckdb: run `s3kg score --db ...e.duckdb`
    """
    check_empty_policy(empty)
    resolved = resolve_signature(store, signature)
    if resolved is None:
        raise ConfigError(f"no scores in {store.path}: run `s3kg score --db {store.path}`")
    with store.connect() as con:
        summaries = leaderboard_queries.run_summaries(
            con, resolved, alpha, drop_empty=empty == "drop"
        )
        components = queries.scored_components(con, resolved)  # for the coverage's counts
        statuses = queries.answer_statuses(con, resolved)
    keys = ["dataset", "model", "temperature", "extractor", "run_id"]
    means = summaries.loc[:, [*keys, "n", "gold_sim", "ctx_sim", "cus"]]
    unscored = (~statuses["scored"].astype(bool)).groupby([statuses[k] for k in keys]).sum()
    table = means.merge(unscored.rename("unscored").reset_index(), on=keys, how="outer")
    table = table.sort_values(keys).reset_index(drop=True)
    for column in ("n", "unscored"):
        table[column] = table[column].fillna(0).astype(int)
    return CUSReport(
        resolved, alpha, table[TABLE_COLUMNS], _coverage(statuses, components, resolved), empty
    )


def cus_table(
    store: Store,
    *,
    signature: str | None = None,
    alpha: float | None = None,
    empty: EmptyPolicy = "zero",
) -> pd.DataFrame:
    """The table of :func:`cus_report`; empty (with :data:`TABLE_COLUMNS`) when nothing is scored.

    Raises
    ------
    ConfigError
        If ``signature`` is given and unknown, or ``empty`` is not zero or drop.
    """
    if resolve_signature(store, signature) is None:
        return pd.DataFrame(columns=TABLE_COLUMNS)
    return cus_report(store, signature=signature, alpha=alpha, empty=empty).table


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
    :data:`UNSCORED_REASONS`) and empty score columns; then every extra column of the imported
    file, under its own name (``input_<name>`` where that is taken). ``include`` adds groups
    of :data:`~s3kg_core.stages.export_schema.INCLUDES`: ``metadata`` (the run's name, model,
    source and settings; what collect stored of the answer), ``triples`` (the three KGs as
    JSON text) and ``tau`` (TAU's counts and its category per reference triple). Columns and
    dtypes: :data:`~s3kg_core.stages.export_schema.EXPORT_COLUMNS`. ``run_ids`` keeps those
    runs only. The frame is :func:`export_blocks`' blocks put together; a large store is better
    written block by block (:func:`export_results`).

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
        )
        for start in range(0, max(len(keys), 1), block_size):
            yield block.frame(con, keys.iloc[start : start + block_size])


@dataclass(frozen=True)
class _Block:
    """What every block of an export shares: signature, groups, extra columns, runs."""

    signature: str | None
    groups: tuple[str, ...]
    extras: dict[str, str]
    runs: pd.DataFrame | None

    def frame(self, con: duckdb.DuckDBPyConnection, keys: pd.DataFrame) -> pd.DataFrame:
        """The export's rows of the answers ``keys`` (``run_id, item_id``), in their order."""
        frame = export_queries.export_rows(con, self.signature, keys)
        frame["unscored_reason"] = unscored_reasons(frame)
        scored = frame["scored"].astype(bool)
        blended = reblend(frame.loc[scored, _COMPONENTS], None)  # unscored: no scores
        for column in ("gold_sim", "ctx_sim", "cus"):
            frame[column] = blended[column].reindex(frame.index)
        frame["signature"] = self.signature
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
        result = json.loads(text)
        counts = TauResult.from_dict(result).counts()
        records.append(
            [
                run,
                item,
                target,
                *(counts[k] for k in _TAU_COUNTS),
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
    (:data:`~s3kg_core.stages.export_schema.DEFAULT_INCLUDES`: all of them in Parquet and
    JSON, none in CSV). The columns have the same dtypes in every format
    (:func:`~s3kg_core.stages.export_schema.read_export` reads them back so). The rows are read
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
