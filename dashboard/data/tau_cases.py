"""TAU's cases: the lowest-scoring answers explained triple by triple, now or in the background.

The Failure analysis shows TAU on the lowest share of each run, Annotate TAU's proposals for
every answer of a run, the Run comparison TAU's categories of two runs. All of them read one
store of explained answers per database, results version, score signature and reference KG
(:func:`explained_store`): an answer is explained once (from the TAU table ``s3kg tau`` wrote
when its TAU signature is the dashboard's, else live from the stored embeddings), whatever page
asked first. Past a few hundred answers the rest is explained by a background job
(:mod:`dashboard.data.background`) and the pages show progress.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data import background
from dashboard.data.database import View, by_results, reader, results_version
from dashboard.data.explain import encoder, fill_stored
from s3kg_core.encoders.cache import EmbeddingCache
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_label
from s3kg_core.scoring.signature import Signature
from s3kg_core.scoring.tau import (
    COMPONENT_THRESHOLD,
    TAU_CATEGORIES,
    TRIPLE_THRESHOLD,
    TauResult,
    TripletAnalyzer,
)
from s3kg_core.stages.tau import tau_signature
from s3kg_core.store import tau_queries
from s3kg_core.store.records import KGRecord
from s3kg_core.store.store import Store

__all__ = [
    "ANNOTATE_LIVE",
    "LIVE_TAU",
    "PREFETCH_SHARE",
    "TAU_BLOCK",
    "TAU_COLUMNS",
    "TauCases",
    "UnitCounts",
    "explained_store",
    "grid_counts",
    "prefetch_grid",
    "prefetch_share",
    "prefetch_tau",
    "run_unit_counts",
    "tau_cases",
    "tau_item",
    "tau_live",
    "tau_pending",
    "tau_run",
]

TAU_COLUMNS = (
    *tau_queries.LOWEST_COLUMNS[:6],
    "score",
    *TAU_CATEGORIES,
    "result",
)
"""The columns of :func:`tau_live`."""

TAU_BLOCK = 500
"""Answers explained at a time (a background job checks whether to stop between blocks)."""

LIVE_TAU = 200
"""Answers a Failure analysis step explains before it draws (about a second); past this many
unexplained, :func:`tau_cases` explains them in the background and the page shows progress."""

PREFETCH_SHARE = 0.2
"""The share of each run :func:`prefetch_tau` explains ahead (the Failure analysis's 20 %)."""

ANNOTATE_LIVE = 300
"""Answers of a run (lowest CUS first) whose TAU Annotate's picker waits for; a larger run's
others are explained in the background (:func:`run_unit_counts`)."""

Answer = tuple[int, int]
"""An answer: ``(run_id, item_id)``."""

Explained = tuple[tuple[int, ...], str]
"""One answer's TAU: its six counts (aligned, two mismatches, roles swapped, extra, missing) and
its result as JSON (:meth:`TauResult.to_dict`, with its ``signature``)."""


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


def _reference(target: str) -> str:
    """The KG an answer is explained against when ranked by ``target``."""
    return "context" if target == "ctx_sim" else "gold"


def explained_store(view: View, reference: str) -> dict[Answer, Explained]:
    """Every answer TAU has explained so far against ``reference``, by ``(run_id, item_id)``.

    One dict per database, results version and score signature, kept across reruns and
    sessions (a new version starts a new one).
    """
    return _explained(replace(view, stamp=results_version(view)), reference)


@st.cache_resource(show_spinner=False, max_entries=4)
def _explained(view: View, reference: str) -> dict[Answer, Explained]:
    return {}


@by_results()
@st.cache_data(show_spinner=False, max_entries=16)
def _tau_picks(view: View, target: str, fraction: float, alpha: float) -> pd.DataFrame:
    """The answers :func:`tau_live` explains (a DuckDB query, cached per share and alpha)."""
    with reader(view.path) as con:
        return tau_queries.lowest_scored(con, view.scored, target, fraction, alpha)


def _answers(picks: pd.DataFrame) -> list[Answer]:
    return list(zip(picks["run_id"].astype(int), picks["item_id"].astype(int), strict=True))


def _cases(picks: pd.DataFrame, target: str, explained: dict[Answer, Explained]) -> pd.DataFrame:
    """:data:`TAU_COLUMNS` of the ``picks`` that are ``explained`` (in the picks' order)."""
    answers = _answers(picks)
    done = [a in explained for a in answers]
    picks = picks[done].reset_index(drop=True)
    answers = [a for a, d in zip(answers, done, strict=True) if d]
    counts = pd.DataFrame([explained[a][0] for a in answers], columns=list(TAU_CATEGORIES))
    frame = picks[list(TAU_COLUMNS[:6])].assign(score=picks[target].astype(float))
    return pd.concat(
        [frame, counts, pd.DataFrame({"result": [explained[a][1] for a in answers]})], axis=1
    )


def _dashboard_tau_signature(signature: str) -> str:
    """The TAU signature of the dashboard's explanations (default thresholds)."""
    return tau_signature(
        Signature.parse(signature).encoder, TRIPLE_THRESHOLD, COMPONENT_THRESHOLD, "default"
    )


def _current(stored: dict[str, Any]) -> dict[str, Any]:
    """A stored result as :meth:`TauResult.to_dict` writes it now, its ``signature`` kept.

    An old result's entity mismatches with parts "swapped" become roles swapped.
    """
    out = TauResult.from_dict(stored).to_dict()
    if "signature" in stored:
        out["signature"] = stored["signature"]
    return out


def _tau_counts(result: dict[str, Any]) -> tuple[int, ...]:
    return tuple(len(result[k]) for k in TAU_CATEGORIES)


def _triples(
    kgs: dict[tuple[int, int, str], KGRecord], answer: Answer, source: str
) -> tuple[Triple, ...]:
    rec = kgs.get((*answer, source))
    return rec.triples if rec is not None else ()


def _fill_stored_tau(
    view: View, target: str, answers: list[Answer], into: dict[Answer, Explained]
) -> list[Answer]:
    """Put the stored TAU results that fit (``s3kg tau``'s table) ``into``; return the rest."""
    wanted = _dashboard_tau_signature(view.scored)
    targets = ["ctx_sim"] if _reference(target) == "context" else ["cus", "gold_sim"]
    with reader(view.path) as con:
        stored = tau_queries.stored_tau_of(con, view.scored, targets, wanted, answers)
    for key, text in stored.items():
        found = _current(json.loads(text))
        into[key] = (_tau_counts(found), json.dumps(found))
    return [a for a in answers if a not in stored]


def _explain(view: View, target: str, answers: list[Answer], into: dict[Answer, Explained]) -> None:
    """Put TAU of ``answers`` ``into`` the store of explained answers.

    Stored results that fit first, the others computed a block at a time (each block in as
    soon as it is done).
    """
    rest = _fill_stored_tau(view, target, answers, into)
    reference = _reference(target)
    wanted = _dashboard_tau_signature(view.scored)
    for lo in range(0, len(rest), TAU_BLOCK):
        block = rest[lo : lo + TAU_BLOCK]
        with reader(view.path) as con:
            kgs = Store.load_kgs_of(con, block, (reference, "answer"))
        pairs = [(_triples(kgs, a, reference), _triples(kgs, a, "answer")) for a in block]
        enc = encoder(view)
        analyzer = TripletAnalyzer(enc, cache=EmbeddingCache(enc))
        fill_stored(view.path, analyzer.cache, analyzer.strings_needed(pairs))
        for answer, result in zip(block, analyzer.analyse_many(pairs), strict=True):
            found = {**result.to_dict(), "signature": wanted}
            into[answer] = (_tau_counts(found), json.dumps(found))


def _explain_blocks(
    view: View,
    target: str,
    answers: list[Answer],
    explained: dict[Answer, Explained],
    stopped: Callable[[], bool],
) -> bool:
    """Explain the ``answers`` not yet ``explained``, into it, until ``stopped()``.

    :data:`TAU_BLOCK` answers at a time, in order; ``True`` once every one is explained.
    """
    todo = [a for a in answers if a not in explained]
    for lo in range(0, len(todo), TAU_BLOCK):
        if stopped():
            return False
        block = [a for a in todo[lo : lo + TAU_BLOCK] if a not in explained]
        if block:
            _explain(view, target, block, explained)
    return True


@by_results()
@st.cache_data(show_spinner="Explaining the lowest-scoring answers...", max_entries=16)
def tau_live(view: View, target: str, fraction: float, alpha: float) -> pd.DataFrame:
    """TAU on the lowest ``fraction`` of each run by ``target`` at ``alpha``, one row per case.

    Columns :data:`TAU_COLUMNS`. The cases are picked in DuckDB
    (:func:`~s3kg_core.store.tau_queries.lowest_scored`); each is explained once per score
    signature and results version (:func:`explained_store`), reading only the KGs of the
    answers not explained yet. So a share or alpha step explains only the answers it adds.
    :func:`tau_cases` is the same without the wait.
    """
    picks = _tau_picks(view, target, fraction, alpha)
    if picks.empty:
        return pd.DataFrame(columns=list(TAU_COLUMNS))
    explained = explained_store(view, _reference(target))
    missing = [a for a in _answers(picks) if a not in explained]
    if missing:
        _explain(view, target, missing, explained)
    return _cases(picks, target, explained)


def tau_cases(
    view: View, target: str, fraction: float, alpha: float, live: int | None = None
) -> TauCases:
    """:func:`tau_live` that never waits for more than ``live`` answers to be explained.

    With at most ``live`` answers of the share unexplained, explains them and returns every
    case (:func:`tau_live`, cached). With more, it first reads those ``s3kg tau`` stored (a
    query, no waiting); with still more (a jump of the share slider, an alpha step at
    100,000 answers), returns the cases explained so far and the number pending, and makes
    sure a background thread (:func:`prefetch_tau`, lowest rank of each run first) explains
    the rest: call again to see its progress.
    """
    picks = _tau_picks(view, target, fraction, alpha)
    explained = explained_store(view, _reference(target))
    missing = [a for a in _answers(picks) if a not in explained]
    limit = LIVE_TAU if live is None else live
    if len(missing) > limit:  # what s3kg tau stored: at once
        missing = _fill_stored_tau(view, target, missing, explained)
    if len(missing) <= limit:
        return TauCases(tau_live(view, target, fraction, alpha), len(picks), 0)
    prefetch_tau(view, target, alpha, prefetch_share(fraction))
    done = _cases(picks, target, explained)
    return TauCases(done, len(picks), len(picks) - len(done))


def tau_pending(view: View, target: str, fraction: float, alpha: float) -> int:
    """How many answers of the share :func:`tau_cases` still waits for (cheap: no query)."""
    picks = _tau_picks(view, target, fraction, alpha)
    explained = explained_store(view, _reference(target))
    return sum(a not in explained for a in _answers(picks))


def prefetch_share(fraction: float) -> float:
    """The share explained ahead while the page shows ``fraction`` (20 %, or ``fraction``)."""
    return max(PREFETCH_SHARE, fraction)


def prefetch_tau(
    view: View, target: str, alpha: float, share: float = PREFETCH_SHARE
) -> threading.Thread:
    """Explain the lowest ``share`` of each run in the background, the next share steps first.

    Started by the Failure analysis after it has drawn: a background job (one per database,
    results version, signature, target, alpha and share) loads the lemmatiser (seconds, once
    per process) and explains, :data:`TAU_BLOCK` answers at a time and lowest rank first, the
    answers :func:`tau_live` has not explained yet, into the same store of explained answers.
    A share step then finds its answers explained (or explains only those the job has not
    reached). A newer job stops the older ones at their next block; asked again for a view
    whose job was stopped, it starts a new one. Returns the thread.
    """
    key = replace(view, stamp=results_version(view))

    def work(stopped: Callable[[], bool]) -> bool:
        normalize_label("warming_up")  # lemminflect reads its tables
        if stopped():
            return False
        with reader(key.path) as con:
            picks = tau_queries.lowest_scored(con, key.scored, target, share, alpha)
        # lowest rank within its run first: the order in which share steps add answers
        rank = picks.groupby("run_id")[target].rank(method="first")
        picks = picks.assign(rank=rank).sort_values(["rank", "run_id"], kind="stable")
        explained = explained_store(key, _reference(target))
        return _explain_blocks(key, target, _answers(picks), explained, stopped)

    job = ("tau-prefetch", key, target, float(alpha), float(share))
    return background.start(job, work, group="tau-prefetch", supersede=True)


def _gold_explanations(view: View, answers: list[Answer]) -> list[dict[str, Any]]:
    """TAU of ``answers`` against their gold KGs, as :meth:`TauResult.to_dict` gives it."""
    explained = explained_store(view, "gold")
    missing = [a for a in answers if a not in explained]
    if missing:
        _explain(view, "gold_sim", missing, explained)
    out = []
    for answer in answers:
        result = json.loads(explained[answer][1])
        result.pop("signature", None)
        out.append(result)
    return out


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def tau_item(view: View, run_id: int, item_id: int) -> dict[str, Any]:
    """TAU's explanation of one answer against its gold KG (as a dict, for the Annotate page).

    The one :func:`tau_live` and :func:`tau_run` give (the same store of explained answers).
    """
    return _gold_explanations(view, [(run_id, item_id)])[0]


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def tau_run(view: View, run_id: int) -> dict[int, dict[str, Any]]:
    """TAU's explanation of every answer of a run against its gold KG, by item (for Annotate).

    One batch over the run, from the stored embeddings: which answers have pairs to judge is
    known before one is opened. Each value is :meth:`TauResult.to_dict` (``aligned`` holds the
    proposed pairs, normalised triples). Answers the Failure analysis explained, or the stored
    TAU table holds (:func:`tau_live`), are not explained again.
    """
    with reader(view.path) as con:
        items = tau_queries.kg_items(con, run_id)
    results = _gold_explanations(view, [(run_id, i) for i in items])
    return dict(zip(items, results, strict=True))


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=64)
def _kg_items(view: View, run_id: int) -> frozenset[int]:
    with reader(view.path) as con:
        return frozenset(tau_queries.kg_items(con, run_id))


def run_unit_counts(
    view: View, run_id: int, order: Sequence[int], live: int | None = None
) -> UnitCounts:
    """What TAU said of each answer of run ``run_id``, the first ``live`` of ``order`` at once.

    ``order`` is the run's items as Annotate lists them (lowest CUS first); ``live`` defaults
    to :data:`ANNOTATE_LIVE`. Those first answers are explained now (stored TAU results read,
    the others explained from the stored embeddings), the rest of the run by a background
    job (one per run and results version): call again to see more counts. A run of at most
    ``live`` answers is explained whole before this returns.
    """
    with_kgs = _kg_items(view, run_id)
    explained = explained_store(view, "gold")
    answers = [(run_id, int(i)) for i in order if int(i) in with_kgs]
    limit = ANNOTATE_LIVE if live is None else live
    now = [a for a in answers[:limit] if a not in explained]
    if now:
        _explain(view, "gold_sim", now, explained)
    later = [a for a in answers[limit:] if a not in explained]
    if later:
        key = replace(view, stamp=results_version(view))

        def work(stopped: Callable[[], bool]) -> bool:
            return _explain_blocks(key, "gold_sim", later, explained, stopped)

        background.start(("tau-run", key, run_id), work, group="tau-run")
    counts = {a[1]: sum(explained[a][0]) for a in answers if a in explained}
    return UnitCounts(counts, with_kgs, len(answers) - len(counts))


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def _grid_picks(
    view: View, target: str, fraction: float, alphas: tuple[float, ...]
) -> pd.DataFrame:
    """TAU's picks at every alpha of ``alphas`` (one DuckDB scan, cached per share)."""
    with reader(view.path) as con:
        return tau_queries.lowest_scored_grid(con, view.scored, target, fraction, alphas)


RUN_KEYS = ("run_id", "dataset", "model", "temperature", "extractor")
"""The columns of :func:`grid_counts`' frames that name a run."""


def grid_counts(
    view: View, target: str, fraction: float, alphas: Sequence[float]
) -> list[pd.DataFrame | None]:
    """TAU's categories summed per run over the lowest ``fraction`` at each of ``alphas``.

    For the Failure analysis's live counts: at each alpha, :data:`RUN_KEYS`, ``cases`` and one
    column per category of :data:`~s3kg_core.scoring.tau.TAU_CATEGORIES` summed over that
    alpha's picks (:func:`tau_live`'s cases there), or ``None`` while some of its picks are not
    explained yet (:func:`prefetch_grid` explains them; nothing here waits). A query and sums.
    """
    grid = _grid_picks(view, target, fraction, tuple(float(a) for a in alphas))
    explained = explained_store(view, _reference(target))
    out: list[pd.DataFrame | None] = []
    for alpha in alphas:
        picks = grid[grid["alpha"] == float(alpha)]
        answers = _answers(picks)
        if any(a not in explained for a in answers):
            out.append(None)
            continue
        counts = pd.DataFrame(
            [explained[a][0] for a in answers], columns=list(TAU_CATEGORIES), dtype="int64"
        )
        frame = pd.concat(
            [picks[list(RUN_KEYS)].reset_index(drop=True), counts.assign(cases=1)], axis=1
        )
        out.append(frame.groupby(list(RUN_KEYS), as_index=False, sort=True).sum())
    return out


def prefetch_grid(
    view: View, target: str, fraction: float, alphas: Sequence[float]
) -> threading.Thread:
    """Explain, in the background, the picks of every alpha of ``alphas`` not explained yet.

    So that :func:`grid_counts` has every stop of the slider: the union of the stops' picks,
    the stops nearest the middle first (a share's picks at neighbouring stops overlap most).
    One job per database, results version, signature, target and share; a newer one stops it.
    The picks are :func:`grid_counts`' own (one cached scan for both, not a second one here).
    """
    key = replace(view, stamp=results_version(view))
    stops = tuple(float(a) for a in alphas)
    grid = _grid_picks(view, target, fraction, stops)
    answers: list[Answer] = []
    seen: set[Answer] = set()
    for alpha in sorted(stops, key=lambda a: abs(a - 0.5)):
        for a in _answers(grid[grid["alpha"] == alpha]):
            if a not in seen:
                seen.add(a)
                answers.append(a)

    def work(stopped: Callable[[], bool]) -> bool:
        normalize_label("warming_up")  # lemminflect reads its tables
        explained = explained_store(key, _reference(target))
        return _explain_blocks(key, target, answers, explained, stopped)

    job = ("tau-grid", key, target, float(fraction), stops)
    return background.start(job, work, group="tau-grid", supersede=True)
