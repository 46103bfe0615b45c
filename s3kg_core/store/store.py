"""The DuckDB store: datasets, items, runs, answers, KGs, scores, TAU, embeddings, benchmarks.

One file holds everything (default ``data/s3kg.duckdb``). SQL is parameterised throughout; the
schema version is recorded in ``meta`` and migrations run on the first read-write open. Writes are
idempotent (``INSERT ... ON CONFLICT``), so re-running a stage skips or replaces what is there and a
killed run resumes without loss.

DuckDB lets one process write a file at a time, and no other process may open it meanwhile.
Long stages therefore open the file for short transactions only, and :meth:`Store.connect`
retries a locked file for ``lock_timeout`` seconds before raising
:class:`~s3kg_core.errors.DatabaseLockedError` with the holder's details. A file that is not a
DuckDB database, or one that is truncated or damaged (found on opening it or by any query inside
:meth:`Store.connect`, read-only or not), raises :class:`~s3kg_core.errors.CorruptDatabaseError`.
A full disk, a read-only file system or a file that may not be written, met when opening the
file or by any statement, commit or checkpoint inside :meth:`Store.connect`, raises
:class:`~s3kg_core.errors.DatabaseError` naming the file and the cause (DuckDB's own
``TransactionException`` or ``FatalException`` never escapes); the transaction is rolled back,
so the file keeps what was committed before and stays readable.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import duckdb
import numpy as np
import pandas as pd

from ..config import DEFAULT_DB
from ..errors import CorruptDatabaseError, DatabaseError, DatabaseLockedError, KGSourceError
from ..kg import Triple
from ..names import MAX_KEY_CHARS, clean_name
from . import grapheval_queries, queries
from .connection import attached_read_only, opened_for_writing
from .records import SOURCES, AnswerRecord, ItemRecord, KGRecord, ScoreRecord, short_name
from .schema import BENCH_COLUMNS, MIGRATIONS, SCHEMA_VERSION

__all__ = ["Store", "in_one_session"]

_APPLIED_KEY = "schema_migrations"


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc)
    return "Could not set lock" in text or "Conflicting lock" in text


_WRITE_PROBLEMS = (
    ("No space left on device", "the disk is full (No space left on device)"),
    ("Disk quota exceeded", "the disk quota is exceeded"),
    ("Read-only file system", "its file system is read-only"),
    ("Permission denied", "permission is denied"),
)


def _write_problem(exc: Exception, path: Path) -> DatabaseError | None:
    """The one-line error of a write the file system refused (full, read-only), else ``None``."""
    text = str(exc)
    for needle, cause in _WRITE_PROBLEMS:
        if needle in text:
            return DatabaseError(
                f"cannot write database {path}: {cause}; what was saved before is kept and the "
                "file stays readable: "
                + (
                    "free space on its disk (or use a database on another disk), then rerun"
                    if "disk" in cause
                    else "use a copy in a folder you can write, or open it read-only"
                )
            )
    if isinstance(exc, duckdb.FatalException | duckdb.TransactionException):
        return DatabaseError(f"cannot write database {path}: {text.splitlines()[0]}")
    return None


_HOLDER = re.compile(r"Conflicting lock is held in (?P<program>.+?) \(PID (?P<pid>\d+)\)")


def _holder(exc: Exception) -> str:
    """Which process holds the lock, from DuckDB's message: ``PID 123, /usr/bin/python3``.

    DuckDB's own message (without its link to the documentation) where it names none.
    """
    text = " ".join(str(exc).split())
    found = _HOLDER.search(text)
    if found:
        return f"PID {found['pid']}, {found['program']}"
    return text.split(" See also ")[0]


def _is_damage_error(exc: Exception, path: Path) -> bool:
    """What DuckDB says of a truncated file (a block past its end) or a damaged one (checksums)."""
    text = str(exc)
    return f'Could not read enough bytes from file "{path}"' in text or (
        "Corrupt database file" in text
    )


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
    (9, ['q1'])
    """

    def __init__(
        self, path: str | Path = DEFAULT_DB, *, read_only: bool = False, lock_timeout: float = 10.0
    ) -> None:
        self.path = Path(path)
        self.read_only = read_only
        self.lock_timeout = lock_timeout
        self._migrated = False
        self._sessions: dict[int, duckdb.DuckDBPyConnection] = {}  # thread -> held connection

    # -- connections -----------------------------------------------------------------------------

    def _open(self, stack: ExitStack) -> duckdb.DuckDBPyConnection:
        """A connection to the file, detached when ``stack`` closes.

        A read-only store reads through :func:`~s3kg_core.store.connection.attached_read_only`,
        a writer through :func:`~s3kg_core.store.connection.opened_for_writing`: no database
        instance of their own (an empty transaction costs about 5 ms instead of 23).
        """
        if self.read_only and not self.path.exists():
            raise DatabaseError(
                f"database {self.path} does not exist; create it with `s3kg import ... --db "
                f"{self.path}`"
            )
        if not self.read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a read-only or full disk: one line, as for the file
                failure = _write_problem(exc, self.path) or DatabaseError(
                    f"cannot make the folder of database {self.path}: {exc.strerror or exc}; "
                    "use a database in a folder you can write"
                )
                raise failure from exc
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.05
        while True:
            try:
                opened = attached_read_only if self.read_only else opened_for_writing
                return stack.enter_context(opened(str(self.path)))
            except duckdb.IOException as exc:
                if _is_lock_error(exc):
                    if time.monotonic() < deadline:
                        time.sleep(delay)
                        delay = min(delay * 2, 1.0)
                        continue
                    raise DatabaseLockedError(
                        f"database {self.path} is locked by another process ({_holder(exc)}); "
                        "wait for it to finish (a long `s3kg score` releases the file between "
                        "batches) or stop it, then retry"
                    ) from exc
                if "not a valid DuckDB database" in str(exc) or "Install it first" in str(exc):
                    # the second: a file another engine wrote (SQLite), which DuckDB reads only
                    # with an extension; open_duckdb never installs one
                    raise CorruptDatabaseError(
                        f"{self.path} is not a DuckDB database file; move it aside and re-import "
                        "into a new file"
                    ) from exc
                if _is_damage_error(exc, self.path):
                    raise self._damaged() from exc
                if (problem := _write_problem(exc, self.path)) is not None:
                    raise problem from exc
                raise DatabaseError(f"cannot open database {self.path}: {exc}") from exc
            except duckdb.Error as exc:
                if _is_damage_error(exc, self.path):
                    raise self._damaged() from exc
                raise DatabaseError(f"cannot open database {self.path}: {exc}") from exc

    def _damaged(self) -> CorruptDatabaseError:
        return CorruptDatabaseError(
            f"{self.path} is not a readable DuckDB database (truncated or damaged); restore it "
            "from a backup, or move it aside and re-import into a new file"
        )

    @contextmanager
    def connect(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Open the file (retrying while locked), migrate if needed, and close it after use.

        DuckDB reads a file's blocks when a query first needs them, so a truncated or damaged
        file can pass the open and fail any query later: such a failure inside the ``with``
        block raises :class:`~s3kg_core.errors.CorruptDatabaseError` too.
        """
        held = self._sessions.get(threading.get_ident())
        try:
            if held is not None:  # inside session(): its connection, closed when it ends
                yield held
                return
            with ExitStack() as stack:
                con = self._open(stack)
                self._check_schema(con)
                yield con
        except duckdb.Error as exc:
            if _is_damage_error(exc, self.path):
                raise self._damaged() from exc
            if (problem := _write_problem(exc, self.path)) is not None:
                raise problem from exc
            raise

    @contextmanager
    def session(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold one connection for a block of several reads, closed when the block ends.

        Every :meth:`connect` of this store in the block (in this thread) uses it: a library
        call that reads in several steps (``s3kg check``: the runs, the signature, the scores,
        the statuses) opens the file once instead of once a step (attaching a file and checking
        its schema costs about 4 ms: :mod:`~s3kg_core.store.connection`).
        A session inside a session is the outer one; other threads open their own connections.
        The file stays held for the whole block: keep it short.

        Examples
        --------
        >>> import tempfile, os
        >>> db = Store(os.path.join(tempfile.mkdtemp(), "s.duckdb"))
        >>> with db.session() as held, db.connect() as con:
        ...     con is held
        True
        """
        ident = threading.get_ident()
        if ident in self._sessions:
            yield self._sessions[ident]
            return
        with self.connect() as con:
            self._sessions[ident] = con
            try:
                yield con
            finally:
                del self._sessions[ident]

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
                with suppress(duckdb.Error):  # after a fatal write error there is none to undo
                    con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")

    def _check_schema(self, con: duckdb.DuckDBPyConnection) -> None:
        version, applied = self._applied(con)
        if version > SCHEMA_VERSION or applied - set(MIGRATIONS):
            raise CorruptDatabaseError(
                f"{self.path} has schema version {version}, newer than this s3kg "
                f"({SCHEMA_VERSION}); upgrade s3kg-workbench"
            )
        missing = sorted(set(MIGRATIONS) - applied)
        if not missing:
            return
        if self.read_only:
            raise DatabaseError(
                f"{self.path} has schema version {version}, this s3kg needs {SCHEMA_VERSION} "
                f"(migrations {', '.join(map(str, missing))} to run); run any write command "
                "(for example `s3kg score`) once to migrate it"
            )
        con.execute("BEGIN TRANSACTION")
        try:
            for target in missing:
                for statement in MIGRATIONS[target]:
                    con.execute(statement)
                applied.add(target)
                self.set_meta(con, "schema_version", str(max(applied)))
                self.set_meta(con, _APPLIED_KEY, ",".join(map(str, sorted(applied))))
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    @classmethod
    def _applied(cls, con: duckdb.DuckDBPyConnection) -> tuple[int, set[int]]:
        """The schema version and the migrations applied to the file.

        Files written before the list was kept (``meta`` has no ``schema_migrations``) applied
        every migration up to their version. Migrations are numbered in the order they were
        written, and a branch may add one above a number another adds later: each runs once,
        whichever order they arrive in.
        """
        version = cls._version(con)
        recorded = cls.get_meta(con, _APPLIED_KEY) if version else None
        if recorded is None:
            return version, set(range(1, version + 1))
        return version, {int(v) for v in recorded.split(",") if v.strip()}

    @staticmethod
    def _version(con: duckdb.DuckDBPyConnection) -> int:
        # duckdb_tables(), not information_schema.tables: 1 ms instead of 5 on every open; of
        # this file only (a reader's instance may have other files attached)
        has_meta = con.execute(
            "SELECT count(*) FROM duckdb_tables() "
            "WHERE database_name = current_database() AND schema_name = 'main' "
            "AND table_name = 'meta'"
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
        """The id of dataset ``name``, created if new.

        Raises
        ------
        ConfigError
            If ``name`` breaks the rule of every name (:func:`s3kg_core.names.clean_name`:
            empty, too long, a control or formatting character).
        """
        clean_name(name, "a dataset's name", limit=MAX_KEY_CHARS)
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
        name: str | None = None,
    ) -> int:
        """The id of the run ``(dataset, model, temperature, extractor)``, created if new.

        ``name`` is the run's display name: a new run gets it (default: the model's
        :func:`~s3kg_core.store.records.short_name`), an existing one is renamed to it when
        given.

        Raises
        ------
        ConfigError
            If ``model`` or ``name`` breaks the rule of every name
            (:func:`s3kg_core.names.clean_name`: empty, too long, a control or formatting
            character); ``name`` is stored cleaned (whitespace collapsed).
        """
        clean_name(model, "a model's name", limit=MAX_KEY_CHARS)
        name = clean_name(name, "a run's name") if name else None
        con.execute(
            "INSERT INTO runs (dataset_id, model, temperature, extractor, source, settings, "
            "name) VALUES (?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (dataset_id, model, temperature, extractor) DO NOTHING",
            [
                dataset_id,
                model,
                float(temperature),
                extractor,
                source,
                json.dumps(settings or {}),
                name or short_name(model),
            ],
        )
        rows = con.execute(
            "SELECT run_id FROM runs WHERE dataset_id = ? AND model = ? AND temperature = ? "
            "AND extractor = ?",
            [dataset_id, model, float(temperature), extractor],
        ).fetchall()
        run = int(rows[0][0])
        if name:
            con.execute("UPDATE runs SET name = ? WHERE run_id = ?", [name, run])
        return run

    @staticmethod
    def put_answers(
        con: duckdb.DuckDBPyConnection, run_id: int, answers: Sequence[AnswerRecord]
    ) -> int:
        """Insert or replace a run's answers (the last one per item wins); return how many.

        An answer whose text or status changes loses its KGs, scores and TAU results, which
        were made from the old text; an answer written again unchanged keeps them.
        """
        if not answers:
            return 0
        answers = list({a.item_id: a for a in answers}.values())  # last one per item wins
        frame = pd.DataFrame(
            [[run_id, *astuple(a)] for a in answers],
            columns=["run_id", *(f.name for f in fields(AnswerRecord))],
        ).astype(object)
        con.register("_new_answers", frame)
        try:
            changed = con.execute(
                "SELECT a.run_id, a.item_id FROM answers a JOIN _new_answers n "
                "ON a.run_id = n.run_id AND a.item_id = n.item_id "
                "WHERE a.answer IS DISTINCT FROM n.answer OR a.status IS DISTINCT FROM n.status"
            ).fetchall()
            con.execute(
                "INSERT OR REPLACE INTO answers (run_id, item_id, answer, seed, latency_s, "
                "prompt_tokens, completion_tokens, error, status, truncated, model_id, "
                "finish_reason) SELECT run_id, item_id, answer, seed, latency_s, prompt_tokens, "
                "completion_tokens, error, status, truncated, model_id, finish_reason "
                "FROM _new_answers"
            )
        finally:
            con.unregister("_new_answers")
        if changed:
            keys = sorted((int(r), int(i)) for r, i in changed)
            queries.delete_item_kgs(con, keys)
            queries.delete_item_results(con, keys)
            grapheval_queries.delete_item_detections(con, keys)
        return len(answers)

    @staticmethod
    def put_kgs(con: duckdb.DuckDBPyConnection, kgs: Sequence[KGRecord]) -> int:
        """Insert or replace KGs and their triples (the last one per key wins); return how many.

        The scores and TAU results of every ``(run, item)`` one of whose KGs changes (other
        triples or another status, or a KG it did not have) are removed: they were computed
        from the old KGs; so are its GraphEval detections when its answer KG changes. KGs
        written again unchanged keep them.

        Raises
        ------
        KGSourceError
            If a KG's source is not one of :data:`~s3kg_core.store.records.SOURCES`.
        """
        bad = {kg.source for kg in kgs} - set(SOURCES)
        if bad:
            raise KGSourceError(f"KG source must be one of {SOURCES}; got {sorted(bad)}")
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
            changed_kgs = Store._changed_kg_keys(con, kgs)
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
        changed = sorted({(r, i) for r, i, _ in changed_kgs})
        if changed:
            queries.delete_item_results(con, changed)
        answer_changed = sorted({(r, i) for r, i, s in changed_kgs if s == "answer"})
        if answer_changed:
            grapheval_queries.delete_item_detections(con, answer_changed)
        return len(kgs)

    @staticmethod
    def _changed_kg_keys(
        con: duckdb.DuckDBPyConnection, kgs: Sequence[KGRecord]
    ) -> list[tuple[int, int, str]]:
        """The ``(run, item, source)`` of ``kgs`` (registered as ``_new_kgs``) unlike the store."""
        stored = {
            (int(r), int(i), str(s)): str(status)
            for r, i, s, status in con.execute(
                "SELECT k.run_id, k.item_id, k.source, k.status FROM kgs k JOIN _new_kgs n "
                "ON k.run_id = n.run_id AND k.item_id = n.item_id AND k.source = n.source"
            ).fetchall()
        }
        triples: dict[tuple[int, int, str], list[tuple[str, str, str]]] = {}
        for r, i, s, head, relation, tail in con.execute(
            "SELECT t.run_id, t.item_id, t.source, t.head, t.relation, t.tail FROM triples t "
            "JOIN _new_kgs n ON t.run_id = n.run_id AND t.item_id = n.item_id "
            "AND t.source = n.source ORDER BY t.run_id, t.item_id, t.source, t.pos"
        ).fetchall():
            triples.setdefault((int(r), int(i), str(s)), []).append((head, relation, tail))
        changed = set()
        for kg in kgs:
            key = (kg.run_id, kg.item_id, kg.source)
            new = [(t.head, t.relation, t.tail) for t in kg.triples]
            if stored.get(key) != kg.status or triples.get(key, []) != new:
                changed.add(key)
        return sorted(changed)

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
        return _kg_records(con, "triples" + where, "kgs" + where, params)

    @staticmethod
    def load_kgs_of(
        con: duckdb.DuckDBPyConnection,
        answers: Iterable[tuple[int, int]],
        sources: Sequence[str] | None = None,
    ) -> dict[tuple[int, int, str], KGRecord]:
        """The stored KGs of these ``(run_id, item_id)`` answers only.

        Of every source, or of ``sources`` only (``gold``, ``answer``, ``context``). A stage
        that works a batch at a time reads its batch's KGs with this, so its memory does not
        grow with the database; one that compares two KGs reads only those (the context KGs
        hold most triples).

        Examples
        --------
        >>> import os, tempfile
        >>> db = Store(os.path.join(tempfile.mkdtemp(), "s.duckdb"))
        >>> with db.connect() as con:
        ...     db.load_kgs_of(con, [(1, 1)])
        {}
        """
        frame = pd.DataFrame(list(answers), columns=["run_id", "item_id"], dtype="int64")
        con.register("_wanted_answers", frame)
        try:
            join = " t JOIN _wanted_answers w ON t.run_id = w.run_id AND t.item_id = w.item_id"
            params: list[Any] = []
            if sources is not None:
                join += f" WHERE t.source IN ({', '.join('?' for _ in sources) or 'NULL'})"
                params = list(sources)
            return _kg_records(con, "triples" + join, "kgs" + join, params, alias="t.")
        finally:
            con.unregister("_wanted_answers")


def _kg_records(
    con: duckdb.DuckDBPyConnection,
    triples_from: str,
    kgs_from: str,
    params: list[Any],
    alias: str = "",
) -> dict[tuple[int, int, str], KGRecord]:
    """KG records read ``FROM triples_from`` (the triples) and ``FROM kgs_from`` (the KGs)."""
    a = alias
    triples: dict[tuple[int, int, str], list[Triple]] = {}
    for run_id, item_id, source, head, relation, tail in con.execute(
        f"SELECT {a}run_id, {a}item_id, {a}source, {a}head, {a}relation, {a}tail FROM "
        f"{triples_from} ORDER BY {a}run_id, {a}item_id, {a}source, {a}pos",
        params,
    ).fetchall():
        triples.setdefault((run_id, item_id, source), []).append(Triple(head, relation, tail))
    out = {}
    for run_id, item_id, source, status, dropped, truncated in con.execute(
        f"SELECT {a}run_id, {a}item_id, {a}source, {a}status, {a}n_dropped, {a}truncated FROM "
        f"{kgs_from}",
        params,
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


_P = ParamSpec("_P")
_R = TypeVar("_R")


def in_one_session(
    read: Callable[Concatenate[Store, _P], _R],
) -> Callable[Concatenate[Store, _P], _R]:
    """Run ``read(store, ...)`` inside :meth:`Store.session`: its reads share one connection.

    For a library call that reads the same store in several steps (``check_runs``,
    ``compare_runs``; ``s3kg report`` reads through them).

    Examples
    --------
    >>> import tempfile, os
    >>> @in_one_session
    ... def opens(store: Store) -> bool:
    ...     with store.connect() as a, store.connect() as b:
    ...         return a is b
    >>> opens(Store(os.path.join(tempfile.mkdtemp(), "s.duckdb")))
    True
    """

    @functools.wraps(read)
    def call(store: Store, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        with store.session():
            return read(store, *args, **kwargs)

    return call
