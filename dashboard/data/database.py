"""The dashboard's database: which file, its view key, and short connections under one lock.

The dashboard opens the DuckDB file only for short moments: a read-only connection per cached
query, a short read-write transaction per write, serialised by one process-wide lock. So one
process (the Streamlit server) never holds two connections at once, two browser sessions
annotating at the same time are written one after the other (nothing lost), and between
queries other processes (``s3kg score``) can write.

Every cached read of the data layer takes a :class:`View`: the file, its stamp and the score
signature, one hashable key. Reads of runs, answers, KGs and scores are keyed by the content
version of those tables (:func:`by_results`: :func:`results_version`, computed once per change
of the file's modification stamp), the others (annotations, GraphEval, factuality) by the stamp
itself (:func:`by_stamp`). So new data shows without a restart, and an annotation saved keeps
every cache of scores and KGs. No SQL here: every statement is a function of
:mod:`s3kg_core.store`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import duckdb
import streamlit as st

from s3kg_core.config import default_db
from s3kg_core.errors import ConfigError
from s3kg_core.store import version_queries
from s3kg_core.store.store import Store

__all__ = [
    "LOCK_TIMEOUT",
    "View",
    "by_results",
    "by_stamp",
    "clear_caches",
    "db_path",
    "db_stamp",
    "locked",
    "read_store",
    "reader",
    "results_version",
    "writer",
]

LOCK_TIMEOUT = 15.0
"""Seconds a read or write waits for a database another process holds; then a one-line error
(:class:`~s3kg_core.errors.DatabaseLockedError`) that the page shows with a Retry button."""

_LOCK = threading.Lock()


@dataclass(frozen=True)
class View:
    """What a page shows: the database file, its stamp, and the score signature chosen.

    The one key of every cached read (Streamlit hashes a frozen dataclass by its fields).

    Attributes
    ----------
    path
        The database file.
    stamp
        :func:`db_stamp` of the file, or (negative) the results version a cache is keyed by.
    signature
        The stored score signature the page shows, ``None`` before anything is scored.

    Examples
    --------
    >>> view = View(Path("s3kg.duckdb"), 7, "mode:hybrid")
    >>> view.scored
    'mode:hybrid'
    >>> hash(view) == hash(View(Path("s3kg.duckdb"), 7, "mode:hybrid"))
    True
    """

    path: Path
    stamp: int
    signature: str | None = None

    @property
    def scored(self) -> str:
        """The score signature, for a read that needs one.

        Raises
        ------
        ConfigError
            If the view has no signature (nothing is scored yet).
        """
        if self.signature is None:
            raise ConfigError("nothing is scored in this database yet: run `s3kg score`")
        return self.signature


def db_path() -> Path:
    """The database the dashboard shows: ``$S3KG_DB`` or ``data/s3kg.duckdb``."""
    return default_db()


def db_stamp(path: Path) -> int:
    """A number that changes whenever the database (or its write-ahead log) changes."""
    stamp = 0
    for p in (path, Path(f"{path}.wal")):
        with suppress(FileNotFoundError):
            stamp = max(stamp, p.stat().st_mtime_ns)
    return stamp


def results_version(view: View) -> int:
    """The content version of the results tables at ``view.stamp`` (a negative number).

    :func:`s3kg_core.store.version_queries.results_version`, read once per stamp
    (:func:`db_stamp`): a write to other tables (an annotation) changes the stamp but not this.
    A stamp that is already a version (negative) is returned as it is.
    """
    return view.stamp if view.stamp < 0 else _results_version(view.path, view.stamp)


@st.cache_data(show_spinner=False, max_entries=8)
def _results_version(path: Path, stamp: int) -> int:
    with reader(path) as con:
        return version_queries.results_version(con)


_F = TypeVar("_F", bound=Callable[..., Any])


def by_results(*, signature: bool = True) -> Callable[[_F], _F]:
    """Key a cached read ``cached(view, ...)`` by :func:`results_version`, not the stamp.

    Callers pass the page's view; the cache sees the version, so the cached value survives
    writes that leave the results tables as they were. ``signature=False``: a read that does
    not depend on the score signature is cached once for every signature.
    """

    def wrap(cached: _F) -> _F:
        @functools.wraps(cached)
        def call(view: View, *args: Any, **kwargs: Any) -> Any:
            key = replace(
                view,
                stamp=results_version(view),
                signature=view.signature if signature else None,
            )
            return cached(key, *args, **kwargs)

        return cast(_F, call)

    return wrap


def by_stamp(*, signature: bool = False) -> Callable[[_F], _F]:
    """Key a cached read ``cached(view, ...)`` by the file's stamp (:func:`db_stamp`).

    For reads of what any write may change (annotations, GraphEval, factuality);
    ``signature=False``: cached once for every score signature.
    """

    def wrap(cached: _F) -> _F:
        @functools.wraps(cached)
        def call(view: View, *args: Any, **kwargs: Any) -> Any:
            return cached(view if signature else replace(view, signature=None), *args, **kwargs)

        return cast(_F, call)

    return wrap


@contextmanager
def locked() -> Iterator[None]:
    """The process lock, held: no read or write of this process runs meanwhile."""
    with _LOCK:
        yield


@contextmanager
def reader(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short read-only connection under the process lock (for a page's cached loaders)."""
    with _LOCK, Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT).connect() as con:
        yield con


@contextmanager
def read_store(path: Path) -> Iterator[Store]:
    """A read-only store under the process lock, for a library call that takes a store."""
    with _LOCK:
        yield Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT)


@contextmanager
def writer(path: Path) -> Iterator[Store]:
    """The store for a write, held under the process lock (no read runs meanwhile)."""
    with _LOCK:
        yield Store(path, lock_timeout=LOCK_TIMEOUT)


def clear_caches() -> None:
    """Forget every cached read (after this process wrote)."""
    st.cache_data.clear()
