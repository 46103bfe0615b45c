"""Every read and write of the dashboard, with its Streamlit caches.

The dashboard opens the DuckDB file only for short moments: a read-only connection per cached
query, a short read-write transaction per annotation decision, serialised by one process-wide
lock. So
one process (the Streamlit server) never holds two connections at once, two browser sessions
annotating at the same time are written one after the other (nothing lost), and between
queries other processes (``s3kg score``) can write. Cached reads are keyed by what they read:
reads of runs, answers, KGs and scores by the content version of those tables
(:func:`results_version`, computed once per change of the file's modification stamp), the
others (annotations, GraphEval, factuality) by the stamp itself. So new data shows without a
restart, and an annotation saved keeps every cache of scores and KGs. Pages call these functions and
render; they never query the database themselves. This is the only module of the dashboard
with Streamlit caches, and it holds no SQL: every statement is a function of
:mod:`s3kg_core.store`.
"""

from __future__ import annotations

import atexit
import functools
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import duckdb
import pandas as pd
import streamlit as st

from dashboard.run_names import run_label_map
from s3kg_core.config import default_db
from s3kg_core.kg import Triple
from s3kg_core.scoring.signature import Signature
from s3kg_core.store import grapheval_queries, queries, tau_queries, version_queries
from s3kg_core.store.records import SOURCES, KGRecord
from s3kg_core.store.store import Store

if TYPE_CHECKING:
    from dashboard.explorer import CaseScores
    from dashboard.hallucinations import AnswerCheck
    from s3kg_core.annotation.log import Decision, Entry, Undone
    from s3kg_core.stages.check import CheckResult
    from s3kg_core.store.search_queries import ScoreRange

__all__ = [
    "EVAL_COLUMNS",
    "LIVE_TAU",
    "LOCK_TIMEOUT",
    "PREFETCH_SHARE",
    "TAU_COLUMNS",
    "ItemView",
    "TauCases",
    "bench_results",
    "bench_texts",
    "check_with_trained",
    "clear_caches",
    "db_path",
    "db_stamp",
    "demo_pending",
    "encoder_of",
    "ensure_database",
    "explorer_case",
    "factuality_evals",
    "finish_demo",
    "grapheval_overview",
    "grapheval_results",
    "item_questions",
    "item_view",
    "leaderboard",
    "load_components",
    "load_runs",
    "mark_partial",
    "partial_runs",
    "prefetch_share",
    "prefetch_tau",
    "results_version",
    "run_components",
    "run_report",
    "signatures",
    "tau_cases",
    "tau_item",
    "tau_live",
    "tau_pending",
    "trained_checker_offer",
    "warm_pair",
    "warm_up",
    "writer",
]

_LOCK = threading.Lock()

LOCK_TIMEOUT = 15.0
"""Seconds a read or write waits for a database another process holds; then a one-line error
(:class:`~s3kg_core.errors.DatabaseLockedError`) that the page shows with a Retry button."""


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


_F = TypeVar("_F", bound=Callable[..., Any])


def results_version(path: Path, stamp: int) -> int:
    """The content version of the results tables at ``stamp`` (a negative number).

    :func:`s3kg_core.store.version_queries.results_version`, read once per ``stamp``
    (:func:`db_stamp`): a write to other tables (an annotation) changes the stamp but not this.
    A ``stamp`` that is already a version (negative) is returned as it is.
    """
    return stamp if stamp < 0 else _results_version(path, stamp)


@st.cache_data(show_spinner=False, max_entries=8)
def _results_version(path: Path, stamp: int) -> int:
    with _read(path) as con:
        return version_queries.results_version(con)


def _by_results(cached: _F) -> _F:
    """Key a cached read ``cached(path, stamp, ...)`` by :func:`results_version`, not the stamp.

    Callers still pass the stamp; the cache sees the version, so the cached value survives
    writes that leave the results tables as they were.
    """

    @functools.wraps(cached)
    def call(path: Path, stamp: int, *args: Any, **kwargs: Any) -> Any:
        return cached(path, results_version(path, stamp), *args, **kwargs)

    return cast(_F, call)


@contextmanager
def _read(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    with _LOCK, Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT).connect() as con:
        yield con


@contextmanager
def writer(path: Path) -> Iterator[Store]:
    """The store for a write, held under the process lock (no read runs meanwhile)."""
    with _LOCK:
        yield Store(path, lock_timeout=LOCK_TIMEOUT)


def clear_caches() -> None:
    """Forget every cached read (after this process wrote)."""
    st.cache_data.clear()


def ensure_database(
    path: Path, on_step: Callable[[str], None] | None = None, *, defer_grapheval: bool = False
) -> bool:
    """Build the demo database at ``path`` if there is none; return whether this build made it.

    A build never replaces a file: when another process installed one while this one was
    building, that file stays (with what was saved into it) and this build is discarded
    (``False``). ``on_step(line)`` hears each build step as it starts. ``defer_grapheval``
    leaves the GraphEval step pending, for :func:`finish_demo` (the first page shows sooner).
    """
    if path.exists():
        return False
    from s3kg_core.demo import build_demo

    with _LOCK:
        if not path.exists():
            return build_demo(path, on_step=on_step, grapheval=not defer_grapheval).installed
    return False


@st.cache_data(show_spinner=False, max_entries=8)
def demo_pending(path: Path, stamp: int) -> tuple[str, ...]:
    """The demo build's steps still to do in the file at ``path`` (none for other databases).

    Cached per ``stamp`` (:func:`db_stamp`): a page that asks on every visit opens the file
    once per change, not once per visit.
    """
    from s3kg_core.demo import pending_steps

    with _LOCK:
        return pending_steps(Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT))


def finish_demo(path: Path, progress: Callable[[str, int, int], None] | None = None) -> int:
    """Run the demo's pending GraphEval step on the file at ``path``; return answers checked."""
    from s3kg_core.demo import finish_demo as finish

    with _LOCK:
        reports = finish(Store(path, lock_timeout=LOCK_TIMEOUT), progress=progress)
    clear_caches()
    return sum(r.written for r in reports)


def trained_checker_offer() -> str | None:
    """One line about the trained checker the Hallucinations page may offer, or ``None``.

    ``None`` when ``s3kg grapheval train-checker`` has saved no model in the cache folder, or
    when its held-out balanced accuracy is below the dashboard's bar
    (:data:`~s3kg_core.grapheval.checkers.trained.DASHBOARD_MIN_HELDOUT`). Reads the manifest
    only.
    """
    from s3kg_core.grapheval.checkers.model_format import read_manifest
    from s3kg_core.grapheval.checkers.trained import (
        DASHBOARD_MIN_HELDOUT,
        manifest_summary,
        trained_checker_available,
    )

    if not trained_checker_available(min_heldout=DASHBOARD_MIN_HELDOUT):
        return None
    return manifest_summary(read_manifest())


def check_with_trained(
    path: Path, run_id: int, progress: Callable[[str, int, int], None] | None = None
) -> int:
    """Check a run's answers with the trained checker; return how many answers were checked.

    The results go into the file at ``path``; resumable, as ``s3kg grapheval detect``.

    Raises
    ------
    CheckerError
        If there is no trained checker good enough to offer (see :func:`trained_checker_offer`).
    """
    from s3kg_core.errors import CheckerError
    from s3kg_core.grapheval.checkers.trained import load_trained_checker
    from s3kg_core.grapheval.results import detect_store

    checker = load_trained_checker()
    if checker is None:
        raise CheckerError("no trained checker to use: run `s3kg grapheval train-checker`")
    with _LOCK:
        report = detect_store(
            Store(path, lock_timeout=LOCK_TIMEOUT), run_id, checker, progress=progress
        )
    clear_caches()
    return report.written


_WARM_UP: list[threading.Thread] = []


def warm_up() -> threading.Thread:
    """Load what the first explained answer needs, once per process, in a background thread.

    The lemmatiser's dictionary (:func:`s3kg_core.normalize.load_lemmatizer`, 0.4 s) is read
    while the reader looks at the first page drawn, not when the Sample explorer, the Failure
    analysis or the Run comparison first explains an answer. ``app.py`` calls it after every
    page; only the first call starts the thread. Returns the thread.
    """
    from s3kg_core.normalize import load_lemmatizer

    with _AHEAD_LOCK:
        if not _WARM_UP:
            _WARM_UP.append(threading.Thread(target=load_lemmatizer, name="warm-up", daemon=True))
            _WARM_UP[0].start()
    return _WARM_UP[0]


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def signatures(path: Path, stamp: int) -> tuple[list[str], str | None]:
    """All score signatures in the file, and the latest one."""
    with _read(path) as con:
        return queries.signatures_by_recency(con), Store.get_meta(con, "latest_signature")


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def load_runs(path: Path, stamp: int) -> pd.DataFrame:
    """One row per run: dataset, model, temperature, extractor, source, answers, KGs, scores.

    ``label`` is the run's label on every picker and table (:func:`dashboard.run_names.
    run_label_map`, over all runs: a run reads the same on every page).
    """
    with _read(path) as con:
        runs = queries.run_overview(con)
    labels = run_label_map(runs)
    return runs.assign(label=[labels[int(r)] for r in runs["run_id"]])


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def load_components(path: Path, stamp: int, signature: str) -> pd.DataFrame:
    """Per-answer stored components of ``signature`` (blend them with ``reblend``)."""
    from s3kg_core.stages.results import scored_frame

    with _LOCK:
        return scored_frame(Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT), signature)


@_by_results
@st.cache_data(show_spinner=False, max_entries=16)
def run_components(path: Path, stamp: int, signature: str, run_id: int) -> pd.DataFrame:
    """One run's stored components under ``signature`` (blend them with ``reblend``).

    :func:`load_components`' rows of run ``run_id``, read alone: a page that shows one run
    never holds every answer of the file.
    """
    with _read(path) as con:
        return queries.scored_components(con, signature, [int(run_id)])


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def partial_runs(path: Path, stamp: int, signature: str) -> dict[int, tuple[int, int]]:
    """Runs only partly scored under ``signature``: ``run_id -> (scored, scorable)``.

    Partial: some answers are scored and some that can be scored are not yet (a ``s3kg
    score`` in progress, or stopped), as the CLI's ``cus`` reports it. Answers that cannot be
    scored (a collect error, a failed extraction) do not make a run partial. Cached per
    ``stamp``, so a run being scored is re-read as its batches are written.
    """
    from s3kg_core.stages.results import unscored_reasons

    with _read(path) as con:
        counts = queries.status_counts(con, signature)  # a few rows per run, not one per answer
    if counts.empty:
        return {}
    flags = pd.DataFrame(
        {
            "run_id": counts["run_id"],
            "scored": counts["n"].where(counts["scored"].astype(bool), 0),
            "pending": counts["n"].where(unscored_reasons(counts) == "not_scored", 0),
        }
    )
    totals = flags.groupby("run_id")[["scored", "pending"]].sum()
    partial = totals[(totals["scored"] > 0) & (totals["pending"] > 0)]
    return {
        int(run): (int(row.scored), int(row.scored + row.pending))
        for run, row in partial.iterrows()
    }


def mark_partial(
    board: pd.DataFrame, runs: pd.DataFrame, partial: dict[int, tuple[int, int]]
) -> pd.DataFrame:
    """``board`` with a ``scoring`` column that says which runs are only partly scored.

    ``board`` has one row per run (a ``run_id`` column); the column holds ``complete`` or
    ``partial: S of N scored`` (:func:`partial_runs`), so the table and its CSV say it.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": [1, 2]})
    >>> board = pd.DataFrame({"run_id": [2, 1], "cus": [0.5, 0.4]})
    >>> mark_partial(board, runs, {2: (150, 400)})["scoring"].tolist()
    ['partial: 150 of 400 scored', 'complete']
    """
    notes = {
        int(r): f"partial: {partial[int(r)][0]} of {partial[int(r)][1]} scored"
        for r in runs["run_id"]
        if int(r) in partial
    }
    return board.assign(scoring=[notes.get(int(r), "complete") for r in board["run_id"]])


def leaderboard(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean GoldSim, CtxSim and CUS of each run (by run id: two runs may share a name).

    Columns ``run_id, dataset, model, temperature, extractor, n, gold_sim, ctx_sim, cus``,
    one row per run, in run order (``model`` is the run's display name).
    """
    keys = ["run_id", "dataset", "model", "temperature", "extractor"]
    if frame.empty:
        return pd.DataFrame(columns=[*keys, "n", "gold_sim", "ctx_sim", "cus"])
    return (
        frame.groupby(keys, sort=True)
        .agg(
            n=("item_id", "size"),
            gold_sim=("gold_sim", "mean"),
            ctx_sim=("ctx_sim", "mean"),
            cus=("cus", "mean"),
        )
        .reset_index()
    )


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def item_questions(path: Path, stamp: int) -> pd.DataFrame:
    """Every item's ``item_id, ext_id, question`` (for labels and tables of cases)."""
    with _read(path) as con:
        return queries.item_questions(con)


@dataclass(frozen=True)
class ItemView:
    """One answer with its texts, three KGs, stored score details and TAU result."""

    run_id: int
    item_id: int
    ext_id: str
    question: str
    context: str
    gold: str
    answer: str
    answer_status: str
    kgs: dict[str, KGRecord]
    details: dict[str, Any]
    tau: dict[str, Any] | None

    @property
    def kg_statuses(self) -> dict[str, str]:
        """Each source's KG status: ``"ok"``, ``"failed: ..."``, or ``"not extracted"``."""
        return {s: self.kgs[s].status if s in self.kgs else "not extracted" for s in SOURCES}


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def item_view(path: Path, stamp: int, run_id: int, item_id: int, signature: str | None) -> ItemView:
    """Everything the sample explorer shows for one answer."""
    with _read(path) as con:
        row = queries.item_answer_texts(con, run_id, item_id)
        if row is None:
            raise KeyError(f"no answer for run {run_id}, item {item_id}")
        kgs = {key[2]: kg for key, kg in Store.load_kgs_of(con, [(run_id, item_id)]).items()}
        details: dict[str, Any] = {}
        tau = None
        if signature is not None:
            found = queries.score_details(con, run_id, item_id, signature)
            if found is not None:
                details = {
                    "gold": json.loads(found[0] or "{}"),
                    "context": json.loads(found[1] or "{}"),
                }
            stored_tau = queries.tau_result(con, run_id, item_id, signature)
            if stored_tau is not None:
                tau = json.loads(stored_tau)
    ext_id, question, context, gold, answer, status = row
    return ItemView(
        run_id,
        item_id,
        ext_id,
        question or "",
        context or "",
        gold or "",
        answer or "",
        status or "",
        kgs,
        details,
        tau,
    )


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def encoder_of(path: Path, stamp: int, signature: str) -> str:
    """How to load the encoder of ``signature`` (recorded by ``s3kg score``)."""
    from s3kg_core.stages.results import encoder_for

    with _LOCK:
        return encoder_for(Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT), signature)


@st.cache_resource(show_spinner=False)
def _encoder(name: str) -> Any:
    from s3kg_core.encoders.registry import load_encoder

    return load_encoder(name)


def _fill_stored(path: Path, cache: Any, texts: Iterable[str]) -> None:
    """Put the stored vectors of ``texts`` (those the file has) into an embedding cache.

    Which strings a computation needs is the library's to say
    (:meth:`KGScorer.strings_needed <s3kg_core.scoring.s3kg.KGScorer.strings_needed>`,
    :meth:`TripletAnalyzer.strings_needed <s3kg_core.scoring.tau.TripletAnalyzer.strings_needed>`).
    """
    with _read(path) as con:
        cache.update(queries.embeddings_of(con, cache.encoder.name, texts))


@_by_results
@st.cache_data(show_spinner=False, max_entries=128)
def explorer_case(
    path: Path, stamp: int, signature: str, run_id: int, item_id: int, tau: float
) -> CaseScores:
    """One answer explained again at ``tau`` from the stored embeddings, with its triple table.

    The signature gives the mode, K and normalisation; the scorer says which strings it needs
    (:meth:`~s3kg_core.scoring.s3kg.KGScorer.strings_needed`: sentences, labels and, in
    ``text`` mode, the texts), and the encoder is only ever asked for those the database does
    not hold (``CaseScores.encoded`` says how many: 0 for a question scored by ``s3kg score``),
    so moving tau never loads a model.
    """
    from dashboard.explorer import case_scores
    from s3kg_core.encoders.cache import EmbeddingCache
    from s3kg_core.scoring.s3kg import KGScorer, S3KGConfig

    view = item_view(path, stamp, run_id, item_id, signature)
    kgs = {s: (view.kgs[s].triples if s in view.kgs else ()) for s in ("answer", "gold", "context")}
    config = Signature.parse(signature).config_kwargs()
    config["tau"] = float(tau)
    enc = _encoder(encoder_of(path, stamp, signature))
    scorer = KGScorer(enc, S3KGConfig(**config), cache=EmbeddingCache(enc))
    needs = scorer.strings_needed(
        [(kgs["answer"], kgs["gold"]), (kgs["answer"], kgs["context"])],
        texts=[(view.answer, view.gold), (view.answer, view.context)],
    )
    _fill_stored(path, scorer.cache, needs)
    return case_scores(
        scorer,
        kgs["answer"],
        kgs["gold"],
        kgs["context"],
        texts=(view.answer, view.gold, view.context),
    )


@_by_results
@st.cache_data(show_spinner=False, max_entries=4)
def run_report(
    path: Path, stamp: int, signature: str, alpha: float | None, run_id: int, baseline_id: int
) -> str:
    """The HTML report of run ``run_id`` against ``baseline_id``: ``s3kg report``'s file.

    Built by the library (:func:`~s3kg_core.stages.report.build_report`,
    :func:`~s3kg_core.stages.report_html.render_report`) with the page's signature and alpha,
    the encoder the dashboard already holds, under the process lock.
    """
    from s3kg_core.stages.report import build_report
    from s3kg_core.stages.report_html import render_report

    encoder = _encoder(encoder_of(path, stamp, signature))
    with _LOCK:
        report = build_report(
            Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT),
            run_id,
            baseline_id,
            signature=signature,
            alpha=alpha,
            encoder=encoder,
        )
    return render_report(report)


def _tau_analyzer(path: Path, encoder: Any, pairs: Sequence[tuple[Any, Any]]) -> Any:
    """A TAU analyser whose cache holds the stored vectors it needs for ``(gold, answer)``."""
    from s3kg_core.encoders.cache import EmbeddingCache
    from s3kg_core.scoring.tau import TripletAnalyzer

    analyzer = TripletAnalyzer(encoder, cache=EmbeddingCache(encoder))
    _fill_stored(path, analyzer.cache, analyzer.strings_needed(pairs))
    return analyzer


TAU_COLUMNS = (
    *tau_queries.LOWEST_COLUMNS[:6],
    "score",
    "aligned",
    "relation_mismatch",
    "entity_mismatch",
    "extra",
    "missing",
    "result",
)
"""The columns of :func:`tau_live`."""

_TAU_COUNTS = TAU_COLUMNS[7:12]
_TAU_BLOCK = 500

# one answer's TAU: its five counts (in _TAU_COUNTS order) and its result as JSON
_Explained = tuple[tuple[int, ...], str]


@_by_results
@st.cache_data(show_spinner=False, max_entries=16)
def _tau_picks(
    path: Path, stamp: int, signature: str, target: str, fraction: float, alpha: float
) -> pd.DataFrame:
    """The answers :func:`tau_live` explains (a DuckDB query, cached per share and alpha)."""
    with _read(path) as con:
        return tau_queries.lowest_scored(con, signature, target, fraction, alpha)


def _answers(picks: pd.DataFrame) -> list[tuple[int, int]]:
    return list(zip(picks["run_id"].astype(int), picks["item_id"].astype(int), strict=True))


def _cases(
    picks: pd.DataFrame, target: str, explained: dict[tuple[int, int], _Explained]
) -> pd.DataFrame:
    """:data:`TAU_COLUMNS` of the ``picks`` that are ``explained`` (in the picks' order)."""
    answers = _answers(picks)
    done = [a in explained for a in answers]
    picks = picks[done].reset_index(drop=True)
    answers = [a for a, d in zip(answers, done, strict=True) if d]
    counts = pd.DataFrame([explained[a][0] for a in answers], columns=list(_TAU_COUNTS))
    frame = picks[list(TAU_COLUMNS[:6])].assign(score=picks[target].astype(float))
    return pd.concat(
        [frame, counts, pd.DataFrame({"result": [explained[a][1] for a in answers]})], axis=1
    )


@_by_results
@st.cache_data(show_spinner="Explaining the lowest-scoring answers...", max_entries=16)
def tau_live(
    path: Path, stamp: int, signature: str, target: str, fraction: float, alpha: float
) -> pd.DataFrame:
    """TAU on the lowest ``fraction`` of each run by ``target`` at ``alpha``, one row per case.

    Columns :data:`TAU_COLUMNS`. The cases are picked in DuckDB
    (:func:`~s3kg_core.store.tau_queries.lowest_scored`); each is explained once per score
    signature and results version (:func:`_explained`): from the TAU table ``s3kg tau`` wrote
    when its TAU signature is the dashboard's (default thresholds), else live from the stored
    embeddings, reading only the KGs of the answers not explained yet. So a share or alpha step
    explains only the answers it adds. :func:`tau_cases` is the same without the wait.
    """
    picks = _tau_picks(path, stamp, signature, target, fraction, alpha)
    if picks.empty:
        return pd.DataFrame(columns=list(TAU_COLUMNS))
    explained = _explained(path, stamp, signature, _reference(target))
    missing = [a for a in _answers(picks) if a not in explained]
    if missing:
        _explain(path, stamp, signature, target, missing, explained)
    return _cases(picks, target, explained)


LIVE_TAU = 200
"""Answers a Failure analysis step explains before it draws (about a second); past this many
unexplained, :func:`tau_cases` explains them in the background and the page shows progress."""


@dataclass(frozen=True)
class TauCases:
    """The Failure analysis's cases at one share, target and alpha, explained so far.

    Attributes
    ----------
    frame
        :data:`TAU_COLUMNS` of the explained cases (every case once ``pending`` is 0).
    picked
        The answers in the share (explained or not).
    pending
        Those a background thread is still explaining.
    """

    frame: pd.DataFrame
    picked: int
    pending: int


def tau_cases(
    path: Path,
    stamp: int,
    signature: str,
    target: str,
    fraction: float,
    alpha: float,
    live: int | None = None,
) -> TauCases:
    """:func:`tau_live` that never waits for more than ``live`` answers to be explained.

    With at most ``live`` answers of the share unexplained, explains them and returns every
    case (:func:`tau_live`, cached). With more, it first reads those ``s3kg tau`` stored (a
    query, no waiting); with still more (a jump of the share slider, an alpha step at
    100,000 answers), returns the cases explained so far and the number pending, and makes
    sure a background thread (:func:`prefetch_tau`, lowest rank of each run first) explains
    the rest: call again to see its progress.
    """
    picks = _tau_picks(path, stamp, signature, target, fraction, alpha)
    explained = _explained(path, results_version(path, stamp), signature, _reference(target))
    missing = [a for a in _answers(picks) if a not in explained]
    limit = LIVE_TAU if live is None else live
    if len(missing) > limit:  # what s3kg tau stored: at once
        missing = _fill_stored_tau(path, signature, target, missing, explained)
    if len(missing) <= limit:
        return TauCases(tau_live(path, stamp, signature, target, fraction, alpha), len(picks), 0)
    prefetch_tau(path, stamp, signature, target, alpha, prefetch_share(fraction))
    done = _cases(picks, target, explained)
    return TauCases(done, len(picks), len(picks) - len(done))


def tau_pending(
    path: Path, stamp: int, signature: str, target: str, fraction: float, alpha: float
) -> int:
    """How many answers of the share :func:`tau_cases` still waits for (cheap: no query)."""
    picks = _tau_picks(path, stamp, signature, target, fraction, alpha)
    explained = _explained(path, results_version(path, stamp), signature, _reference(target))
    return sum(a not in explained for a in _answers(picks))


PREFETCH_SHARE = 0.2
"""The share of each run :func:`prefetch_tau` explains ahead (the Failure analysis's 20 %)."""


def prefetch_share(fraction: float) -> float:
    """The share explained ahead while the page shows ``fraction`` (20 %, or ``fraction``)."""
    return max(PREFETCH_SHARE, fraction)


def prefetch_tau(
    path: Path, stamp: int, signature: str, target: str, alpha: float, share: float = PREFETCH_SHARE
) -> threading.Thread:
    """Explain the lowest ``share`` of each run in the background, the next share steps first.

    Started by the Failure analysis after it has drawn: a thread (one per database, results
    version, signature, target, alpha and share) loads the lemmatiser (seconds, once per process)
    and explains, :data:`_TAU_BLOCK` answers at a time and lowest rank first, the answers
    :func:`tau_live` has not explained yet, into the same store of explained answers. A share
    step then finds its answers explained (or explains only those the thread has not reached).
    A newer thread stops the older ones at their next block; asked again for a view whose
    thread was stopped, it starts a new one. Returns the thread.
    """
    key = (path, results_version(path, stamp), signature, target, float(alpha), float(share))
    with _AHEAD_LOCK:
        known = _AHEAD.get(key)
        if known is not None and (
            known.complete.is_set() or (known.thread.is_alive() and known.number == _NEWEST[0])
        ):
            return known.thread
        _NEWEST[0] += 1  # an alpha step, target, share or version supersedes the last thread
        complete = threading.Event()
        thread = threading.Thread(
            target=_explain_ahead,
            args=(*key, _NEWEST[0], complete),
            name="tau-prefetch",
            daemon=True,
        )
        _AHEAD[key] = _Ahead(_NEWEST[0], thread, complete)
        for old in [k for k, a in _AHEAD.items() if not a.thread.is_alive()][:-8]:
            del _AHEAD[old]  # keep the last few finished ones (their views are complete)
        thread.start()
    return thread


@dataclass(frozen=True)
class _Ahead:
    number: int  # the newest thread's number: an older one stops at its next block
    thread: threading.Thread
    complete: threading.Event  # set once every answer of its share is explained


_STOP_PREFETCH = threading.Event()
_AHEAD_LOCK = threading.Lock()
_AHEAD: dict[tuple[Any, ...], _Ahead] = {}
_NEWEST = [0]


@atexit.register
def _stop_prefetching() -> None:
    """At exit, let each background thread finish its block and stop (never killed in a query).

    A thread killed inside a DuckDB query aborts the interpreter ("terminate called after
    throwing an instance of ..."): the alpha-warming threads are waited for too.
    """
    _STOP_PREFETCH.set()
    threads = [a.thread for a in list(_AHEAD.values())]
    threads += [*_RUN_AHEAD.values(), *_WARMING.values()]
    for thread in threads:
        thread.join(timeout=60)


def _explain_ahead(
    path: Path,
    version: int,
    signature: str,
    target: str,
    alpha: float,
    share: float,
    number: int,
    complete: threading.Event,
) -> None:
    from s3kg_core.normalize import normalize_label

    def stopped() -> bool:  # at exit, or once a newer thread explains for the page's view
        return _STOP_PREFETCH.is_set() or _NEWEST[0] != number

    normalize_label("warming_up")  # lemminflect reads its tables
    if stopped():
        return
    with _read(path) as con:
        picks = tau_queries.lowest_scored(con, signature, target, share, alpha)
    # lowest rank within its run first: the order in which share steps add answers
    rank = picks.groupby("run_id")[target].rank(method="first")
    picks = picks.assign(rank=rank).sort_values(["rank", "run_id"], kind="stable")
    explained = _explained(path, version, signature, _reference(target))
    if _explain_blocks(path, version, signature, target, _answers(picks), explained, stopped):
        complete.set()


def _explain_blocks(
    path: Path,
    stamp: int,
    signature: str,
    target: str,
    answers: list[tuple[int, int]],
    explained: dict[tuple[int, int], _Explained],
    stopped: Callable[[], bool],
) -> bool:
    """Explain the ``answers`` not yet ``explained``, into it, until ``stopped()``.

    :data:`_TAU_BLOCK` answers at a time, in order; ``True`` once every one is explained.
    """
    todo = [a for a in answers if a not in explained]
    for lo in range(0, len(todo), _TAU_BLOCK):
        if stopped():
            return False
        block = [a for a in todo[lo : lo + _TAU_BLOCK] if a not in explained]
        if block:
            _explain(path, stamp, signature, target, block, explained)
    return True


def _reference(target: str) -> str:
    """The KG an answer is explained against when ranked by ``target``."""
    return "context" if target == "ctx_sim" else "gold"


@st.cache_resource(show_spinner=False, max_entries=4)
def _explained(
    path: Path, version: int, signature: str, reference: str
) -> dict[tuple[int, int], _Explained]:
    """Every answer TAU has explained so far against ``reference``, by ``(run_id, item_id)``.

    One dict per database, results version and score signature, filled by :func:`tau_live`
    and kept across reruns and sessions (a new version starts a new one).
    """
    return {}


def _tau_counts(result: dict[str, Any]) -> tuple[int, ...]:
    return tuple(len(result[k]) for k in _TAU_COUNTS)


def _triples(
    kgs: dict[tuple[int, int, str], KGRecord], answer: tuple[int, int], source: str
) -> tuple[Triple, ...]:
    rec = kgs.get((*answer, source))
    return rec.triples if rec is not None else ()


def _explain(
    path: Path,
    stamp: int,
    signature: str,
    target: str,
    answers: list[tuple[int, int]],
    into: dict[tuple[int, int], _Explained],
) -> None:
    """Put TAU of ``answers`` ``into`` the store of explained answers.

    Stored results that fit first, the others computed a block at a time (each block in as
    soon as it is done).
    """
    rest = _fill_stored_tau(path, signature, target, answers, into)
    reference = _reference(target)
    wanted = _dashboard_tau_signature(signature)
    for lo in range(0, len(rest), _TAU_BLOCK):
        block = rest[lo : lo + _TAU_BLOCK]
        with _read(path) as con:
            kgs = Store.load_kgs_of(con, block, (reference, "answer"))
        pairs = [(_triples(kgs, a, reference), _triples(kgs, a, "answer")) for a in block]
        enc = _encoder(encoder_of(path, stamp, signature))
        for answer, result in zip(
            block, _tau_analyzer(path, enc, pairs).analyse_many(pairs), strict=True
        ):
            found = {**result.to_dict(), "signature": wanted}
            into[answer] = (_tau_counts(found), json.dumps(found))


def _dashboard_tau_signature(signature: str) -> str:
    """The TAU signature of the dashboard's explanations (default thresholds)."""
    from s3kg_core.scoring.tau import COMPONENT_THRESHOLD, TRIPLE_THRESHOLD
    from s3kg_core.stages.tau import tau_signature

    return tau_signature(
        Signature.parse(signature).encoder, TRIPLE_THRESHOLD, COMPONENT_THRESHOLD, "default"
    )


def _fill_stored_tau(
    path: Path,
    signature: str,
    target: str,
    answers: list[tuple[int, int]],
    into: dict[tuple[int, int], _Explained],
) -> list[tuple[int, int]]:
    """Put the stored TAU results that fit (``s3kg tau``'s table) ``into``; return the rest."""
    wanted = _dashboard_tau_signature(signature)
    targets = ["ctx_sim"] if _reference(target) == "context" else ["cus", "gold_sim"]
    with _read(path) as con:
        stored = tau_queries.stored_tau_of(con, signature, targets, wanted, answers)
    for key, text in stored.items():
        into[key] = (_tau_counts(json.loads(text)), text)
    return [a for a in answers if a not in stored]


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def tau_item(path: Path, stamp: int, signature: str, run_id: int, item_id: int) -> dict[str, Any]:
    """TAU's explanation of one answer against its gold KG (as a dict, for the Annotate page).

    The one :func:`tau_live` and :func:`tau_run` give (the same store of explained answers).
    """
    return _gold_explanations(path, stamp, signature, [(run_id, item_id)])[0]


def _gold_explanations(
    path: Path, stamp: int, signature: str, answers: list[tuple[int, int]]
) -> list[dict[str, Any]]:
    """TAU of ``answers`` against their gold KGs, as :meth:`TauResult.to_dict` gives it."""
    explained = _explained(path, stamp, signature, "gold")
    missing = [a for a in answers if a not in explained]
    if missing:
        _explain(path, stamp, signature, "gold_sim", missing, explained)
    out = []
    for answer in answers:
        result = json.loads(explained[answer][1])
        result.pop("signature", None)
        out.append(result)
    return out


@st.cache_data(show_spinner=False, max_entries=8)
def bench_results(path: Path, stamp: int) -> pd.DataFrame:
    """Stored benchmark rows (``s3kg bench pairs --db``), ``detail`` parsed."""
    from s3kg_core.evaluation.pairs import load_bench_results

    with _LOCK:
        rows = load_bench_results(Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT))
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=4)
def bench_texts(dataset: str) -> pd.DataFrame | None:
    """The texts of a benchmark pair set by id, or ``None`` when its file is not found here."""
    from s3kg_core.errors import S3KGError
    from s3kg_core.evaluation.pair_sets import load_pair_set

    try:
        ps = load_pair_set(dataset)
    except S3KGError:
        return None
    return pd.DataFrame({"id": [str(i) for i in ps.ids], "text_1": ps.text_1, "text_2": ps.text_2})


@st.cache_data(show_spinner=False, max_entries=8)
def grapheval_overview(path: Path, stamp: int) -> pd.DataFrame:
    """One row per run x checker x extractor with stored GraphEval results.

    Columns: ``run_id, checker, extractor, answers, inconsistent, unjudged, triples,
    flagged_triples, with_raw, corrected, signature`` (distinct signatures joined by ``" ; "``).
    """
    with _read(path) as con:
        return grapheval_queries.grapheval_overview(con)


@st.cache_data(show_spinner=False, max_entries=16)
def grapheval_results(
    path: Path, stamp: int, run_id: int, checker: str, extractor: str
) -> list[AnswerCheck]:
    """The stored GraphEval results of one run, checker and extractor, in item order."""
    from dashboard.hallucinations import AnswerCheck
    from s3kg_core.grapheval.results import load_results

    with _read(path) as con:
        rows = load_results(con, run_id, checker)
    return [
        AnswerCheck(
            item_id=int(r["item_id"]),
            answer=str(r["answer"] or ""),
            context=str(r["context"] or ""),
            detection=r["detection"],
            raw_probability=(None if r["raw_probability"] is None else float(r["raw_probability"])),
            corrected_answer=r["corrected_answer"],
            correction=r["correction"],
            signature=str(r["signature"]),
        )
        for r in rows
        if r["extractor"] == extractor
    ]


EVAL_COLUMNS = ("name", "model", "layer", "n_test", "run_at", "summary", "breakdown")
"""The columns of :func:`factuality_evals`."""


@st.cache_data(show_spinner=False, max_entries=8)
def factuality_evals(path: Path, stamp: int) -> pd.DataFrame:
    """Every stored factuality evaluation, newest first, one row each.

    Columns :data:`EVAL_COLUMNS`; ``summary`` and ``breakdown`` hold the parsed JSON dicts.
    ``stamp`` (the database's :func:`db_stamp`) keys the cache, so a new evaluation shows on
    the next run.
    """
    from s3kg_core.factuality.results import load_evaluations

    with _LOCK:
        evaluations = load_evaluations(Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT))
    rows = [
        {
            "name": e.name,
            "model": e.model,
            "layer": e.layer,
            "n_test": e.n_test,
            "run_at": e.run_at,
            "summary": e.summary,
            "breakdown": e.breakdown,
        }
        for e in evaluations
    ]
    return pd.DataFrame(rows, columns=list(EVAL_COLUMNS))


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def tau_run(path: Path, stamp: int, signature: str, run_id: int) -> dict[int, dict[str, Any]]:
    """TAU's explanation of every answer of a run against its gold KG, by item (for Annotate).

    One batch over the run, from the stored embeddings: which answers have pairs to judge is
    known before one is opened. Each value is :meth:`TauResult.to_dict` (``aligned`` holds the
    proposed pairs, normalised triples). Answers the Failure analysis explained, or the stored
    TAU table holds (:func:`tau_live`), are not explained again.
    """
    with _read(path) as con:
        items = tau_queries.kg_items(con, run_id)
    results = _gold_explanations(path, stamp, signature, [(run_id, i) for i in items])
    return dict(zip(items, results, strict=True))


ANNOTATE_LIVE = 300
"""Answers of a run (lowest CUS first) whose TAU Annotate's picker waits for; a larger run's
others are explained in the background (:func:`run_unit_counts`)."""


@dataclass(frozen=True)
class UnitCounts:
    """How many things TAU said of each answer of a run, as far as it has explained them.

    Attributes
    ----------
    counts
        Aligned pairs, mismatches, extra and missing triples of each explained answer, by item.
    with_kgs
        The run's items with a stored KG (what TAU can explain).
    pending
        Items of ``with_kgs`` not explained yet (a background thread explains them).
    """

    counts: dict[int, int]
    with_kgs: frozenset[int]
    pending: int


def run_unit_counts(
    path: Path,
    stamp: int,
    signature: str,
    run_id: int,
    order: Sequence[int],
    live: int | None = None,
) -> UnitCounts:
    """What TAU said of each answer of run ``run_id``, the first ``live`` of ``order`` at once.

    ``order`` is the run's items as Annotate lists them (lowest CUS first); ``live`` defaults
    to :data:`ANNOTATE_LIVE`. Those first answers are explained now (stored TAU results read,
    the others explained from the stored embeddings), the rest of the run by a background
    thread: call again to see more counts. A run of at most ``live`` answers is explained
    whole before this returns.
    """
    with_kgs = _kg_items(path, stamp, run_id)
    explained = _explained(path, results_version(path, stamp), signature, "gold")
    answers = [(run_id, int(i)) for i in order if int(i) in with_kgs]
    limit = ANNOTATE_LIVE if live is None else live
    now = [a for a in answers[:limit] if a not in explained]
    if now:
        _explain(path, stamp, signature, "gold_sim", now, explained)
    later = [a for a in answers[limit:] if a not in explained]
    if later:
        _explain_run_ahead(path, stamp, signature, run_id, later, explained)
    counts = {a[1]: sum(explained[a][0]) for a in answers if a in explained}
    return UnitCounts(counts, with_kgs, len(answers) - len(counts))


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def _kg_items(path: Path, stamp: int, run_id: int) -> frozenset[int]:
    with _read(path) as con:
        return frozenset(tau_queries.kg_items(con, run_id))


_RUN_AHEAD: dict[tuple[Any, ...], threading.Thread] = {}


def _explain_run_ahead(
    path: Path,
    stamp: int,
    signature: str,
    run_id: int,
    todo: list[tuple[int, int]],
    explained: dict[tuple[int, int], _Explained],
) -> None:
    """Explain ``todo`` (one run's answers) into ``explained`` in a background thread.

    One thread per run and results version.
    """
    key = (path, results_version(path, stamp), signature, run_id)
    with _AHEAD_LOCK:
        known = _RUN_AHEAD.get(key)
        if known is not None and known.is_alive():
            return
        thread = threading.Thread(
            target=_explain_blocks,
            args=(path, stamp, signature, "gold_sim", todo, explained, _STOP_PREFETCH.is_set),
            name="tau-prefetch",
            daemon=True,
        )
        _RUN_AHEAD[key] = thread
        thread.start()


def record_decision(path: Path, decision: Decision) -> Entry | None:
    """Save one decision at once (its own short transaction, under the process lock).

    Returns the log row written, or ``None`` when it changes nothing (see
    :func:`s3kg_core.annotation.log.save_decision`).
    """
    from s3kg_core.annotation.log import save_decision

    with _LOCK:
        entry = save_decision(Store(path, lock_timeout=LOCK_TIMEOUT), decision, source="page")
    return entry


def undo_decision(path: Path, annotator: str, role: str = "annotator") -> Undone | None:
    """Undo a person's last decision (a new ``undo`` row); ``None`` when none is left."""
    from s3kg_core.annotation.log import undo_last

    with _LOCK:
        undone = undo_last(
            Store(path, lock_timeout=LOCK_TIMEOUT), annotator, role=role, source="page"
        )
    return undone


def rename_run(path: Path, run_id: int, name: str) -> str:
    """Store a run's new display name (one short transaction) and forget the cached reads.

    Returns the name as stored; raises :class:`~s3kg_core.errors.ConfigError` for a name
    :func:`s3kg_core.store.run_queries.rename_run` refuses.
    """
    from s3kg_core.store.run_queries import rename_run as store_rename

    with writer(path) as store, store.transaction() as con:
        stored = store_rename(con, run_id, name)
    clear_caches()
    return stored


# added at the end: fewer merge conflicts
__all__ += [
    "ANNOTATE_LIVE",
    "UnitCounts",
    "record_decision",
    "rename_run",
    "run_unit_counts",
    "tau_run",
    "undo_decision",
]


@contextmanager
def reader(path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short read-only connection under the process lock (for a page's cached loaders)."""
    with _read(path) as con:
        yield con


__all__ += ["reader"]


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def run_summaries(path: Path, stamp: int, signature: str, alpha: float | None) -> pd.DataFrame:
    """Per run: answers scored, each score's mean and spread at ``alpha`` (one ``GROUP BY``).

    :func:`s3kg_core.store.leaderboard_queries.run_summaries`, cached per alpha (the reference
    alpha's is read once for every step).
    """
    from s3kg_core.store import leaderboard_queries

    with _read(path) as con:
        return leaderboard_queries.run_summaries(con, signature, alpha)


def scored_runs(path: Path, stamp: int, signature: str) -> list[int]:
    """The runs with at least one score under ``signature``, by id.

    From :func:`run_summaries` at the reference alpha, which the Overview reads too.
    """
    from s3kg_core.stages.leaderboard import REFERENCE_ALPHA

    return [int(r) for r in run_summaries(path, stamp, signature, REFERENCE_ALPHA)["run_id"]]


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def ranked(path: Path, stamp: int, signature: str, alpha: float, metric: str) -> pd.DataFrame:
    """The leaderboard at ``alpha``: every run ranked within its dataset by ``metric``.

    :func:`s3kg_core.stages.leaderboard.rank_summaries` (intervals, ties with the leader, rank
    change against alpha 0.5) on the runs' summaries at ``alpha`` and at 0.5, computed in
    DuckDB (:func:`run_summaries`); only the runs too small for the normal interval have their
    values read, for their bootstrap. Cached per alpha: a slider step back costs nothing.
    """
    from s3kg_core.stages.leaderboard import NORMAL_FROM, REFERENCE_ALPHA, rank_summaries
    from s3kg_core.store import leaderboard_queries

    summary = run_summaries(path, stamp, signature, alpha)
    reference = run_summaries(path, stamp, signature, REFERENCE_ALPHA)
    small = [int(r) for r in summary.loc[summary["n"] < NORMAL_FROM, "run_id"]]
    values = {}
    if small:  # an open of the file costs ~20 ms of a step: only when a bootstrap needs it
        with _read(path) as con:
            values = leaderboard_queries.run_values(con, signature, alpha, metric, small)
    return rank_summaries(summary, reference, values, metric=metric)


@_by_results
@st.cache_data(show_spinner=False, max_entries=32)
def score_histograms(
    path: Path, stamp: int, signature: str, alpha: float, metric: str, dataset: str | None
) -> pd.DataFrame:
    """Each run's answers in 20 bins of ``metric`` at ``alpha`` (the Distributions chart).

    :func:`s3kg_core.store.leaderboard_queries.score_histograms`: counted in DuckDB, a few
    hundred rows whatever the number of answers; ``dataset``: its runs only.
    """
    from s3kg_core.store import leaderboard_queries

    with _read(path) as con:
        return leaderboard_queries.score_histograms(con, signature, alpha, metric, dataset=dataset)


def warm_pair(
    path: Path,
    stamp: int,
    signature: str,
    run_a: int,
    run_b: int,
    alpha: float,
    *,
    gates: bool = True,
) -> threading.Thread:
    """Fill the Run comparison's caches of a pair at every alpha of the slider, nearest first.

    :func:`pair_deltas` (one query) in a background thread per pair, and with ``gates``
    :func:`pair_check` (``s3kg check``'s gates: about 0.4 s for the demo's 30 questions; the
    page asks for them up to :data:`dashboard.compare.CHECK_LIVE_MAX` shared questions). (The
    Overview needs none: its leaderboard at a new alpha is two ``GROUP BY`` queries, about
    20 ms at 100,000 answers.) Returns the thread.
    """

    def fill(a: float) -> None:
        pair_deltas(path, stamp, signature, run_a, run_b, a)
        if gates:
            pair_check(path, stamp, signature, run_a, run_b, a)

    key = ("pair", path, results_version(path, stamp), signature, run_a, run_b, gates)
    return _warm_alphas(key, fill, alpha)


_WARMING: dict[tuple[Any, ...], threading.Thread] = {}


def _warm_alphas(
    key: tuple[Any, ...], fill: Callable[[float], Any], alpha: float, step: float = 0.05
) -> threading.Thread:
    """Run ``fill`` at the slider's alphas, nearest to ``alpha`` first, in a background thread.

    One thread per ``key``; the alphas are ``step`` apart, as the slider's.
    """
    grid = sorted(
        (round(i * step, 10) for i in range(round(1 / step) + 1)),
        key=lambda a: (abs(a - alpha), a),
    )

    def run() -> None:
        for a in grid:
            if _STOP_PREFETCH.is_set():
                return
            fill(a)

    with _AHEAD_LOCK:
        known = _WARMING.get(key)
        if known is None:
            known = _WARMING[key] = threading.Thread(target=run, name="alpha-warm", daemon=True)
            known.start()
    return known


@dataclass(frozen=True)
class RunSummary:
    """One run as its page shows it: who, how, what it cost, how its stages went."""

    info: dict[str, Any]
    usage: dict[str, Any]
    answer_statuses: dict[str, int]
    finish_reasons: dict[str, int]
    kg_statuses: pd.DataFrame
    scored: pd.DataFrame


@_by_results
@st.cache_data(show_spinner=False, max_entries=32)
def run_summary(path: Path, stamp: int, run_id: int) -> RunSummary | None:
    """Everything the Run page shows of run ``run_id`` (aggregated in DuckDB), or ``None``."""
    from s3kg_core.store import run_queries

    with _read(path) as con:
        info = run_queries.run_info(con, run_id)
        if info is None:
            return None
        return RunSummary(
            info=info,
            usage=run_queries.answer_usage(con, run_id),
            answer_statuses=run_queries.answer_status_counts(con, run_id),
            finish_reasons=run_queries.finish_reasons(con, run_id),
            kg_statuses=run_queries.kg_status_counts(con, run_id),
            scored=run_queries.scored_per_signature(con, run_id),
        )


__all__ += [
    "RunSummary",
    "ranked",
    "run_summaries",
    "run_summary",
    "score_histograms",
    "scored_runs",
]


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def question_across(
    path: Path, stamp: int, signature: str, run_a: int, run_b: int, item_id: int
) -> Any:
    """One question in runs A and B, triple by triple (a :class:`QuestionDiff`).

    The answer triples are the scorer's keys from each run's explanation at the signature's
    tau (:func:`explorer_case`), the gold triples' categories TAU's (:func:`tau_item`): both
    from the stored embeddings, as the Sample explorer and Annotate draw them.
    """
    from s3kg_core.scoring.tau import TauResult
    from s3kg_core.stages.question_diff import question_diff

    tau = float(Signature.parse(signature).tau)
    keys = [
        [t.key for t in explorer_case(path, stamp, signature, run, item_id, tau).gold.triples_1]
        for run in (run_a, run_b)
    ]
    taus = [
        TauResult.from_dict(tau_item(path, stamp, signature, run, item_id))
        for run in (run_a, run_b)
    ]
    return question_diff(keys[0], keys[1], taus[0], taus[1])


@_by_results
@st.cache_data(show_spinner="Comparing TAU's categories of both runs...", max_entries=16)
def pair_gold_changes(
    path: Path, stamp: int, signature: str, run_a: int, run_b: int
) -> dict[tuple[str, str], int]:
    """Over the questions both runs answered: ``(A's TAU category, B's) -> gold triples``.

    Only changed categories are counted (:func:`s3kg_core.stages.question_diff.pair_changes`
    on :func:`tau_run` of each run).
    """
    from s3kg_core.scoring.tau import TauResult
    from s3kg_core.stages.question_diff import pair_changes

    a, b = (
        {i: TauResult.from_dict(r) for i, r in tau_run(path, stamp, signature, run).items()}
        for run in (run_a, run_b)
    )
    return dict(pair_changes(a, b, sorted(set(a) & set(b))))


__all__ += ["pair_gold_changes", "question_across"]


@_by_results
@st.cache_data(show_spinner=False, max_entries=32)
def search(
    path: Path,
    stamp: int,
    text: str,
    run_ids: tuple[int, ...] | None,
    answer_status: str | None,
    answer_kg_status: str | None,
    page: int,
    page_size: int = 50,
    tau_category: str | None = None,
    score_range: ScoreRange | None = None,
    scope: str = "all",
) -> tuple[pd.DataFrame, int]:
    """One page of the answers that match a search, and how many match (in DuckDB).

    ``scope``: where the words are looked for (``answer`` or ``all``,
    :data:`s3kg_core.store.search_queries.SEARCH_SCOPES`).
    """
    from s3kg_core.store.search_queries import search_answers

    with _read(path) as con:
        return search_answers(
            con,
            text,
            run_ids=None if run_ids is None else list(run_ids),
            answer_status=answer_status,
            answer_kg_status=answer_kg_status,
            tau_category=tau_category,
            score_range=score_range,
            limit=page_size,
            offset=page * page_size,
            scope=scope,
        )


__all__ += ["search"]


@st.cache_data(show_spinner=False, max_entries=64)
def question_page(
    path: Path,
    stamp: int,
    signature: str,
    run_id: int,
    alpha: float,
    text: str,
    low: float,
    high: float,
    page: int,
    page_size: int = 50,
) -> tuple[pd.DataFrame, int]:
    """One page of a run's questions for a picker, lowest CUS first, and how many match.

    :func:`s3kg_core.store.search_queries.question_page` (searched, filtered and paged in
    DuckDB): a picker never lists every answer of a run.
    """
    from s3kg_core.store.search_queries import question_page as page_of

    with _read(path) as con:
        return page_of(
            con, signature, run_id, alpha, text, low=low, high=high,
            limit=page_size, offset=page * page_size,
        )  # fmt: skip


@st.cache_data(show_spinner=False, max_entries=64)
def question_position(
    path: Path,
    stamp: int,
    signature: str,
    run_id: int,
    alpha: float,
    item_id: int,
    text: str,
    low: float,
    high: float,
) -> int | None:
    """Where a question stands in :func:`question_page`'s order (``None``: not listed)."""
    from s3kg_core.store.search_queries import question_position as position_of

    with _read(path) as con:
        return position_of(con, signature, run_id, alpha, item_id, text, low=low, high=high)


__all__ += ["question_page", "question_position"]


@_by_results
@st.cache_data(show_spinner=False, max_entries=8)
def comparable_pairs(path: Path, stamp: int, signature: str) -> dict[tuple[int, int], int]:
    """Every ordered pair of runs scored on the same questions -> how many.

    :func:`s3kg_core.store.compare_queries.comparable_pairs` (the Run comparison's run pickers),
    one query per results version and signature: alpha does not change which runs share
    questions.
    """
    from s3kg_core.store import compare_queries

    with _read(path) as con:
        return compare_queries.comparable_pairs(con, signature)


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def pair_deltas(
    path: Path, stamp: int, signature: str, run_a: int, run_b: int, alpha: float
) -> pd.DataFrame:
    """Each question runs A and B both answered, their scores at ``alpha`` and B minus A.

    :func:`s3kg_core.store.compare_queries.pair_deltas` (blended and joined in DuckDB: only the
    two runs' scores are read), cached per pair and alpha; biggest regression first.
    """
    from s3kg_core.store import compare_queries

    with _read(path) as con:
        return compare_queries.pair_deltas(con, signature, run_a, run_b, alpha)


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def pair_questions(
    path: Path,
    stamp: int,
    signature: str,
    run_a: int,
    run_b: int,
    alpha: float,
    text: str,
    page: int,
    page_size: int = 50,
    keep: int | None = None,
) -> tuple[pd.DataFrame, int, int]:
    """One page of the questions A and B share that match ``text``: ``(rows, matches, page)``.

    :func:`s3kg_core.store.compare_queries.pair_questions` (searched and paged in DuckDB, one
    query), in :func:`pair_deltas`' order: the Run comparison's question picker. ``keep``: a
    question whose page is returned instead of ``page`` when it matches.
    """
    from s3kg_core.store import compare_queries

    with _read(path) as con:
        return compare_queries.pair_questions(
            con, signature, run_a, run_b, alpha, text, page=page, size=page_size, keep=keep
        )


__all__ += ["comparable_pairs", "pair_deltas", "pair_questions"]


@_by_results
@st.cache_data(show_spinner=False, max_entries=64)
def pair_check(
    path: Path, stamp: int, signature: str, run_a: int, run_b: int, alpha: float
) -> CheckResult:
    """``s3kg check``'s gates on run B against run A (the baseline) at ``alpha``.

    :func:`s3kg_core.stages.check.check_runs` with its default settings, as
    ``s3kg check --run B --baseline A --signature S --alpha ALPHA`` runs it: one gate
    evaluation for the command and the page (its paired BCa bootstrap of 9,999 resamples,
    seed 0). Cached per pair and alpha: choosing a question or a page does not run it again.

    Raises
    ------
    S3KGError
        What ``s3kg check`` refuses (exit status 2): runs it cannot compare.
    """
    from s3kg_core.stages.check import check_runs

    with _LOCK:
        return check_runs(
            Store(path, read_only=True, lock_timeout=LOCK_TIMEOUT),
            run_b,
            run_a,
            signature=signature,
            alpha=alpha,
        )


__all__ += ["pair_check"]
