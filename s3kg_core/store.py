"""The DuckDB store: datasets, items, runs, answers, KGs, scores, TAU, embeddings, benchmarks.

One file holds everything (default ``data/s3kg.duckdb``). SQL is parameterised throughout; the
schema version is recorded in ``meta`` and migrations run on the first read-write open. Writes are
idempotent (``INSERT ... ON CONFLICT``), so re-running a stage skips or replaces what is there and a
killed run resumes without loss.

DuckDB lets one process write a file at a time, and no other process may open it meanwhile.
Long stages therefore open the file for short transactions only, and :meth:`Store.connect`
retries a locked file for ``lock_timeout`` seconds before raising
:class:`~s3kg_core.errors.DatabaseLockedError` with the holder's details.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, dataclass, fields
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from .errors import CorruptDatabaseError, DatabaseError, DatabaseLockedError
from .types import Triple

__all__ = [
    "BENCH_COLUMNS",
    "DEFAULT_DB",
    "SCHEMA_VERSION",
    "AnswerRecord",
    "ItemRecord",
    "KGRecord",
    "ScoreRecord",
    "Store",
]

DEFAULT_DB = Path("data") / "s3kg.duckdb"
SCHEMA_VERSION = 4
SOURCES = ("gold", "answer", "context")

_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        "CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR)",
        "CREATE SEQUENCE IF NOT EXISTS dataset_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS item_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS run_ids START 1",
        "CREATE SEQUENCE IF NOT EXISTS annotation_ids START 1",
        """CREATE TABLE IF NOT EXISTS datasets (
            dataset_id INTEGER PRIMARY KEY DEFAULT nextval('dataset_ids'),
            name VARCHAR NOT NULL UNIQUE,
            source VARCHAR,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE IF NOT EXISTS items (
            item_id INTEGER PRIMARY KEY DEFAULT nextval('item_ids'),
            dataset_id INTEGER NOT NULL,
            ext_id VARCHAR NOT NULL,
            question VARCHAR,
            context VARCHAR,
            gold_answer VARCHAR,
            UNIQUE (dataset_id, ext_id))""",
        """CREATE TABLE IF NOT EXISTS runs (
            run_id INTEGER PRIMARY KEY DEFAULT nextval('run_ids'),
            dataset_id INTEGER NOT NULL,
            model VARCHAR NOT NULL,
            temperature DOUBLE NOT NULL,
            extractor VARCHAR NOT NULL,
            source VARCHAR,
            settings JSON,
            created_at TIMESTAMP DEFAULT current_timestamp,
            UNIQUE (dataset_id, model, temperature, extractor))""",
        """CREATE TABLE IF NOT EXISTS answers (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            answer VARCHAR,
            seed INTEGER,
            latency_s DOUBLE,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            error VARCHAR,
            PRIMARY KEY (run_id, item_id))""",
        """CREATE TABLE IF NOT EXISTS kgs (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            source VARCHAR NOT NULL CHECK (source IN ('gold', 'answer', 'context')),
            status VARCHAR NOT NULL,
            n_triples INTEGER NOT NULL,
            n_dropped INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, item_id, source))""",
        """CREATE TABLE IF NOT EXISTS triples (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            source VARCHAR NOT NULL,
            pos INTEGER NOT NULL,
            head VARCHAR NOT NULL,
            relation VARCHAR NOT NULL,
            tail VARCHAR NOT NULL,
            PRIMARY KEY (run_id, item_id, source, pos))""",
        """CREATE TABLE IF NOT EXISTS scores (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            signature VARCHAR NOT NULL,
            mode VARCHAR NOT NULL,
            alpha DOUBLE NOT NULL,
            gold_s_wl DOUBLE NOT NULL,
            gold_s_sbert DOUBLE NOT NULL,
            gold_status VARCHAR NOT NULL,
            ctx_s_wl DOUBLE NOT NULL,
            ctx_s_sbert DOUBLE NOT NULL,
            ctx_status VARCHAR NOT NULL,
            gold_detail JSON,
            ctx_detail JSON,
            scored_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (run_id, item_id, signature))""",
        """CREATE TABLE IF NOT EXISTS tau_results (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            signature VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            fraction DOUBLE NOT NULL,
            alpha DOUBLE NOT NULL,
            target_score DOUBLE NOT NULL,
            n_aligned INTEGER NOT NULL,
            n_relation_mismatch INTEGER NOT NULL,
            n_entity_mismatch INTEGER NOT NULL,
            n_extra INTEGER NOT NULL,
            n_missing INTEGER NOT NULL,
            result JSON NOT NULL,
            PRIMARY KEY (run_id, item_id, signature, target))""",
        """CREATE TABLE IF NOT EXISTS annotations (
            annotation_id INTEGER PRIMARY KEY DEFAULT nextval('annotation_ids'),
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            annotator VARCHAR NOT NULL,
            gold_triple JSON,
            answer_triple JSON,
            verdict VARCHAR NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
        """CREATE TABLE IF NOT EXISTS embeddings (
            encoder VARCHAR NOT NULL,
            text VARCHAR NOT NULL,
            vector FLOAT[] NOT NULL,
            PRIMARY KEY (encoder, text))""",
    ),
    # 2: the LLM stage. Answers say how the call went and whether the prompt was cut; KGs say
    # whether their text was cut; successful LLM responses are cached by request key.
    2: (
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS status VARCHAR",
        "ALTER TABLE answers ADD COLUMN IF NOT EXISTS truncated BOOLEAN DEFAULT false",
        "ALTER TABLE kgs ADD COLUMN IF NOT EXISTS truncated BOOLEAN DEFAULT false",
        "UPDATE answers SET status = CASE WHEN error IS NOT NULL THEN 'error' "
        "WHEN answer IS NULL OR trim(answer) = '' THEN 'empty' ELSE 'ok' END "
        "WHERE status IS NULL",
        """CREATE TABLE IF NOT EXISTS llm_cache (
            key VARCHAR PRIMARY KEY,
            endpoint VARCHAR NOT NULL,
            model VARCHAR NOT NULL,
            prompt_version VARCHAR NOT NULL,
            temperature DOUBLE NOT NULL,
            seed INTEGER,
            input_hash VARCHAR NOT NULL,
            response JSON NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp)""",
    ),
    # 3: the benchmark harness. One row per (pair set, encoder, mode, triple source, method).
    3: (
        """CREATE TABLE IF NOT EXISTS bench_results (
            run_at TIMESTAMP DEFAULT current_timestamp,
            dataset VARCHAR NOT NULL,
            n INTEGER NOT NULL,
            encoder VARCHAR NOT NULL,
            mode VARCHAR NOT NULL,
            triples VARCHAR NOT NULL,
            method VARCHAR NOT NULL,
            f1 DOUBLE NOT NULL,
            auroc DOUBLE NOT NULL,
            alpha DOUBLE,
            threshold DOUBLE NOT NULL,
            f1_lo DOUBLE,
            f1_hi DOUBLE,
            auroc_lo DOUBLE,
            auroc_hi DOUBLE,
            detail JSON,
            PRIMARY KEY (dataset, encoder, mode, triples, method))""",
    ),
    # 4: GraphEval (per-answer detection and correction, benchmark rows) and the factuality
    # judge's evaluations. Per-triple details are JSON so a new checker needs no migration.
    4: (
        """CREATE TABLE IF NOT EXISTS grapheval_results (
            run_id INTEGER NOT NULL,
            item_id INTEGER NOT NULL,
            checker VARCHAR NOT NULL,
            extractor VARCHAR NOT NULL,
            inconsistent BOOLEAN,
            raw_probability DOUBLE,
            n_triples INTEGER NOT NULL,
            n_flagged INTEGER NOT NULL,
            detail JSON NOT NULL,
            corrected_answer VARCHAR,
            correction JSON,
            signature VARCHAR NOT NULL,
            created_at TIMESTAMP DEFAULT current_timestamp,
            PRIMARY KEY (run_id, item_id, checker, extractor))""",
        """CREATE TABLE IF NOT EXISTS grapheval_bench (
            run_at TIMESTAMP DEFAULT current_timestamp,
            dataset VARCHAR NOT NULL,
            n INTEGER NOT NULL,
            checker VARCHAR NOT NULL,
            extractor VARCHAR NOT NULL,
            raw_balanced_accuracy DOUBLE,
            kg_balanced_accuracy DOUBLE,
            flagged_triples INTEGER,
            detail JSON,
            PRIMARY KEY (dataset, checker, extractor))""",
        """CREATE TABLE IF NOT EXISTS factuality_evals (
            run_at TIMESTAMP DEFAULT current_timestamp,
            name VARCHAR PRIMARY KEY,
            model VARCHAR NOT NULL,
            layer INTEGER NOT NULL,
            n_test INTEGER NOT NULL,
            summary JSON NOT NULL,
            breakdown JSON)""",
    ),
}

BENCH_COLUMNS = (
    "dataset",
    "n",
    "encoder",
    "mode",
    "triples",
    "method",
    "f1",
    "auroc",
    "alpha",
    "threshold",
    "f1_lo",
    "f1_hi",
    "auroc_lo",
    "auroc_hi",
    "detail",
)
"""The columns :meth:`Store.put_bench_results` expects, in order (``run_at`` is set on write)."""


@dataclass(frozen=True)
class ItemRecord:
    """A question with its context and gold answer, identified within its dataset."""

    ext_id: str
    question: str | None = None
    context: str | None = None
    gold_answer: str | None = None


@dataclass(frozen=True)
class AnswerRecord:
    """A model's answer to an item, with what the collection recorded about it."""

    item_id: int
    answer: str | None
    seed: int | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    error: str | None = None
    status: str | None = None
    truncated: bool = False

    def __post_init__(self) -> None:
        if self.status is None:
            status = (
                "error" if self.error else "ok" if self.answer and self.answer.strip() else "empty"
            )
            object.__setattr__(self, "status", status)


@dataclass(frozen=True)
class KGRecord:
    """One stored KG: ``status`` is ``ok``, ``empty``, ``unparseable...`` or ``failed: ...``."""

    run_id: int
    item_id: int
    source: str
    triples: tuple[Triple, ...]
    status: str = "ok"
    n_dropped: int = 0
    truncated: bool = False


@dataclass(frozen=True)
class ScoreRecord:
    """GoldSim and CtxSim components of one answer under one signature."""

    run_id: int
    item_id: int
    signature: str
    mode: str
    alpha: float
    gold_s_wl: float
    gold_s_sbert: float
    gold_status: str
    ctx_s_wl: float
    ctx_s_sbert: float
    ctx_status: str
    gold_detail: str | None = None
    ctx_detail: str | None = None


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


class Store:
    """A DuckDB file with the S3KG Workbench schema.

    Parameters
    ----------
    path
        The database file (created on the first read-write use).
    read_only
        Open for reading only (many readers may share a file no writer holds).
    lock_timeout
        Seconds to keep retrying while another process holds the file.

    Examples
    --------
    >>> import tempfile, os
    >>> db = Store(os.path.join(tempfile.mkdtemp(), "demo.duckdb"))
    >>> with db.transaction() as con:
    ...     ds = db.ensure_dataset(con, "toy", source="doctest")
    ...     ids = db.upsert_items(con, ds, [ItemRecord("q1", "Why?", "Because.", "So.")])
    >>> db.schema_version(), sorted(ids)
    (4, ['q1'])
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, *, read_only: bool = False, lock_timeout: float = 10.0
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.lock_timeout = lock_timeout
        self._migrated = False

    # -- connections -----------------------------------------------------------------------------

    def _open(self) -> duckdb.DuckDBPyConnection:
        if self.read_only and not self.path.exists():
            raise DatabaseError(
                f"database {self.path} does not exist; create it with `s3kg import ... --db "
                f"{self.path}`"
            )
        if not self.read_only:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.05
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=self.read_only)
            except duckdb.IOException as exc:
                if _is_lock_error(exc):
                    if time.monotonic() < deadline:
                        time.sleep(delay)
                        delay = min(delay * 2, 1.0)
                        continue
                    raise DatabaseLockedError(
                        f"database {self.path} is locked by another process ({exc}); wait for it "
                        "to finish (a long `s3kg score` releases the file between batches) or "
                        "stop it, then retry"
                    ) from exc
                if "not a valid DuckDB database" in str(exc):
                    raise CorruptDatabaseError(
                        f"{self.path} is not a DuckDB database file; move it aside and re-import "
                        "into a new file"
                    ) from exc
                raise DatabaseError(f"cannot open database {self.path}: {exc}") from exc
            except duckdb.Error as exc:
                raise DatabaseError(f"cannot open database {self.path}: {exc}") from exc

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the file (retrying while locked), migrate if needed, and close it after use."""
        con = self._open()
        try:
            self._check_schema(con)
            yield con
        finally:
            con.close()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A short read-write transaction: committed on success, rolled back on any error."""
        if self.read_only:
            raise DatabaseError(f"database {self.path} was opened read-only; writes need a writer")
        with self.connect() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                yield con
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _check_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        version = self._version(con)
        if version > SCHEMA_VERSION:
            raise CorruptDatabaseError(
                f"{self.path} has schema version {version}, newer than this s3kg "
                f"({SCHEMA_VERSION}); upgrade s3kg-workbench"
            )
        if version == SCHEMA_VERSION:
            return
        if self.read_only:
            raise DatabaseError(
                f"{self.path} has schema version {version}, this s3kg needs {SCHEMA_VERSION}; run "
                "any write command (for example `s3kg score`) once to migrate it"
            )
        con.execute("BEGIN TRANSACTION")
        try:
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[target]:
                    con.execute(statement)
                con.execute(
                    "INSERT INTO meta VALUES ('schema_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [str(target)],
                )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    @staticmethod
    def _version(con: duckdb.DuckDBPyConnection) -> int:
        has_meta = con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'"
        ).fetchall()
        if not has_meta or not has_meta[0][0]:
            return 0
        rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        return int(rows[0][0]) if rows else 0

    def schema_version(self) -> int:
        """The schema version recorded in the file."""
        with self.connect() as con:
            return self._version(con)

    # -- writing ---------------------------------------------------------------------------------

    @staticmethod
    def set_meta(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
        """Record ``key = value`` in the meta table."""
        con.execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [key, value],
        )

    @staticmethod
    def get_meta(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
        """The value recorded for ``key``, or ``None``."""
        rows = con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchall()
        return str(rows[0][0]) if rows else None

    @staticmethod
    def ensure_dataset(con: duckdb.DuckDBPyConnection, name: str, source: str | None = None) -> int:
        """The id of dataset ``name``, created if new."""
        con.execute(
            "INSERT INTO datasets (name, source) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
            [name, source],
        )
        rows = con.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchall()
        return int(rows[0][0])

    @staticmethod
    def upsert_items(
        con: duckdb.DuckDBPyConnection, dataset_id: int, items: Sequence[ItemRecord]
    ) -> dict[str, int]:
        """Insert or update items by ``(dataset, ext_id)``; return ``ext_id -> item_id``.

        When ``items`` repeats an ``ext_id``, the last record wins.
        """
        last = {it.ext_id: it for it in items}
        frame = pd.DataFrame(
            [[it.ext_id, it.question, it.context, it.gold_answer] for it in last.values()],
            columns=["ext_id", "question", "context", "gold_answer"],
        ).astype(object)
        con.register("_new_items", frame)
        try:
            con.execute(
                "INSERT INTO items (dataset_id, ext_id, question, context, gold_answer) "
                "SELECT ?, ext_id, question, context, gold_answer FROM _new_items "
                "ON CONFLICT (dataset_id, ext_id) DO UPDATE SET question = excluded.question, "
                "context = excluded.context, gold_answer = excluded.gold_answer",
                [dataset_id],
            )
        finally:
            con.unregister("_new_items")
        rows = con.execute(
            "SELECT ext_id, item_id FROM items WHERE dataset_id = ?", [dataset_id]
        ).fetchall()
        return {ext: int(item) for ext, item in rows if ext in last}

    @staticmethod
    def ensure_run(
        con: duckdb.DuckDBPyConnection,
        dataset_id: int,
        model: str,
        temperature: float,
        extractor: str,
        *,
        source: str | None = None,
        settings: dict[str, Any] | None = None,
    ) -> int:
        """The id of the run ``(dataset, model, temperature, extractor)``, created if new."""
        con.execute(
            "INSERT INTO runs (dataset_id, model, temperature, extractor, source, settings) "
            "VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (dataset_id, model, temperature, extractor) DO NOTHING",
            [dataset_id, model, float(temperature), extractor, source, json.dumps(settings or {})],
        )
        rows = con.execute(
            "SELECT run_id FROM runs WHERE dataset_id = ? AND model = ? AND temperature = ? "
            "AND extractor = ?",
            [dataset_id, model, float(temperature), extractor],
        ).fetchall()
        return int(rows[0][0])

    @staticmethod
    def put_answers(
        con: duckdb.DuckDBPyConnection, run_id: int, answers: Sequence[AnswerRecord]
    ) -> int:
        """Insert or replace a run's answers (the last one per item wins); return how many."""
        if not answers:
            return 0
        answers = list({a.item_id: a for a in answers}.values())  # last one per item wins
        frame = pd.DataFrame(
            [[run_id, *astuple(a)] for a in answers],
            columns=["run_id", *(f.name for f in fields(AnswerRecord))],
        ).astype(object)
        con.register("_new_answers", frame)
        try:
            con.execute(
                "INSERT OR REPLACE INTO answers (run_id, item_id, answer, seed, latency_s, "
                "prompt_tokens, completion_tokens, error, status, truncated) SELECT run_id, "
                "item_id, answer, seed, latency_s, prompt_tokens, completion_tokens, error, "
                "status, truncated FROM _new_answers"
            )
        finally:
            con.unregister("_new_answers")
        return len(answers)

    @staticmethod
    def put_kgs(con: duckdb.DuckDBPyConnection, kgs: Sequence[KGRecord]) -> int:
        """Insert or replace KGs and their triples (the last one per key wins); return how many."""
        bad = {kg.source for kg in kgs} - set(SOURCES)
        if bad:
            raise ValueError(f"KG source must be one of {SOURCES}; got {sorted(bad)}")
        if not kgs:
            return 0
        kgs = list({(kg.run_id, kg.item_id, kg.source): kg for kg in kgs}.values())  # last wins
        heads = pd.DataFrame(
            [
                [
                    kg.run_id,
                    kg.item_id,
                    kg.source,
                    kg.status,
                    len(kg.triples),
                    kg.n_dropped,
                    kg.truncated,
                ]
                for kg in kgs
            ],
            columns=[
                "run_id",
                "item_id",
                "source",
                "status",
                "n_triples",
                "n_dropped",
                "truncated",
            ],
        ).astype(object)
        body = pd.DataFrame(
            [
                [kg.run_id, kg.item_id, kg.source, pos, t.head, t.relation, t.tail]
                for kg in kgs
                for pos, t in enumerate(kg.triples)
            ],
            columns=["run_id", "item_id", "source", "pos", "head", "relation", "tail"],
        ).astype(object)
        con.register("_new_kgs", heads)
        con.register("_new_triples", body)
        try:
            con.execute(
                "DELETE FROM triples WHERE (run_id, item_id, source) IN "
                "(SELECT (run_id, item_id, source) FROM _new_kgs)"
            )
            con.execute(
                "INSERT OR REPLACE INTO kgs (run_id, item_id, source, status, n_triples, "
                "n_dropped, truncated) SELECT * FROM _new_kgs"
            )
            if len(body):
                con.execute("INSERT INTO triples SELECT * FROM _new_triples")
        finally:
            con.unregister("_new_kgs")
            con.unregister("_new_triples")
        return len(kgs)

    @staticmethod
    def put_scores(con: duckdb.DuckDBPyConnection, records: Iterable[ScoreRecord]) -> int:
        """Insert or replace score rows; return how many were written."""
        frame = pd.DataFrame(
            [astuple(r) for r in records], columns=[f.name for f in fields(ScoreRecord)]
        ).astype(object)
        if frame.empty:
            return 0
        names = ", ".join(frame.columns)
        con.register("_new_scores", frame)
        try:
            con.execute(f"INSERT OR REPLACE INTO scores ({names}) SELECT {names} FROM _new_scores")
        finally:
            con.unregister("_new_scores")
        return len(frame)

    @staticmethod
    def put_embeddings(
        con: duckdb.DuckDBPyConnection, encoder: str, items: Iterable[tuple[str, np.ndarray]]
    ) -> int:
        """Store embedding vectors in one bulk insert (existing ``(encoder, text)`` rows are kept).

        Bulk, not row by row: tens of thousands of vectors go in well under a second, so the
        write lock is held only briefly.
        """
        pairs = list(items)
        if not pairs:
            return 0
        frame = pd.DataFrame(
            {
                "encoder": encoder,
                "text": [text for text, _ in pairs],
                "vector": [np.asarray(vec, dtype=np.float32) for _, vec in pairs],
            }
        )
        con.register("_new_embeddings", frame)
        try:
            con.execute(
                "INSERT INTO embeddings SELECT encoder, text, vector::FLOAT[] "
                "FROM _new_embeddings ON CONFLICT (encoder, text) DO NOTHING"
            )
        finally:
            con.unregister("_new_embeddings")
        return len(pairs)

    @staticmethod
    def put_llm_responses(con: duckdb.DuckDBPyConnection, rows: Sequence[tuple[Any, ...]]) -> int:
        """Cache LLM responses; an existing key is replaced.

        Each row is ``(key, endpoint, model, prompt_version, temperature, seed, input_hash,
        response_json)``.
        """
        if not rows:
            return 0
        con.executemany(
            "INSERT OR REPLACE INTO llm_cache (key, endpoint, model, prompt_version, temperature, "
            "seed, input_hash, response) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [list(r) for r in rows],
        )
        return len(rows)

    @staticmethod
    def put_bench_results(con: duckdb.DuckDBPyConnection, rows: Sequence[tuple[Any, ...]]) -> int:
        """Insert or replace benchmark rows (values in :data:`BENCH_COLUMNS` order).

        A row with the same ``(dataset, encoder, mode, triples, method)`` replaces the old one and
        gets a new ``run_at``.
        """
        if not rows:
            return 0
        names = ", ".join(BENCH_COLUMNS)
        marks = ", ".join("?" for _ in BENCH_COLUMNS)
        con.executemany(
            f"INSERT OR REPLACE INTO bench_results (run_at, {names}) "
            f"VALUES (current_timestamp, {marks})",
            [list(r) for r in rows],
        )
        return len(rows)

    # -- reading ---------------------------------------------------------------------------------

    @staticmethod
    def get_bench_results(
        con: duckdb.DuckDBPyConnection, dataset: str | None = None
    ) -> list[dict[str, Any]]:
        """Stored benchmark rows as dicts (``detail`` as JSON text), optionally of one dataset."""
        where, params = ("WHERE dataset = ?", [dataset]) if dataset is not None else ("", [])
        cur = con.execute(
            f"SELECT run_at, {', '.join(BENCH_COLUMNS)} FROM bench_results {where} "
            "ORDER BY dataset, encoder, mode, triples, method",
            params,
        )
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    @staticmethod
    def load_embeddings(
        con: duckdb.DuckDBPyConnection, encoder: str
    ) -> Iterator[tuple[str, np.ndarray]]:
        """Every stored ``(text, vector)`` of ``encoder``."""
        cur = con.execute("SELECT text, vector FROM embeddings WHERE encoder = ?", [encoder])
        while batch := cur.fetchmany(10_000):
            for text, vec in batch:
                yield text, np.asarray(vec, dtype=np.float32)

    @staticmethod
    def get_llm_responses(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> dict[str, str]:
        """Cached LLM responses (JSON) of those ``keys`` that have one."""
        if not keys:
            return {}
        frame = pd.DataFrame({"key": list(keys)})
        con.register("_wanted_keys", frame)
        try:
            rows = con.execute(
                "SELECT c.key, c.response FROM llm_cache c JOIN _wanted_keys w ON c.key = w.key"
            ).fetchall()
        finally:
            con.unregister("_wanted_keys")
        return {str(k): str(v) for k, v in rows}

    @staticmethod
    def load_kgs(
        con: duckdb.DuckDBPyConnection, run_ids: Sequence[int] | None = None
    ) -> dict[tuple[int, int, str], KGRecord]:
        """Stored KGs by ``(run_id, item_id, source)``, optionally for some runs only."""
        where, params = "", []
        if run_ids is not None:
            where = f" WHERE run_id IN ({', '.join('?' for _ in run_ids) or 'NULL'})"
            params = list(run_ids)
        triples: dict[tuple[int, int, str], list[Triple]] = {}
        for run_id, item_id, source, head, relation, tail in con.execute(
            "SELECT run_id, item_id, source, head, relation, tail FROM triples"
            + where
            + " ORDER BY run_id, item_id, source, pos",
            params,
        ).fetchall():
            triples.setdefault((run_id, item_id, source), []).append(Triple(head, relation, tail))
        out = {}
        for run_id, item_id, source, status, dropped, truncated in con.execute(
            "SELECT run_id, item_id, source, status, n_dropped, truncated FROM kgs" + where, params
        ).fetchall():
            key = (run_id, item_id, source)
            out[key] = KGRecord(
                run_id,
                item_id,
                source,
                tuple(triples.get(key, ())),
                status,
                int(dropped),
                bool(truncated),
            )
        return out
