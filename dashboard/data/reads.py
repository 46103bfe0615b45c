"""The dashboard's cached reads of runs, answers, KGs and scores.

Each takes the page's :class:`~dashboard.data.database.View` and is cached by the results
tables' content version (:func:`~dashboard.data.database.by_results`): an annotation saved
keeps them, a score written refreshes them. Pages call these and render; they never query the
database themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data.database import View, by_results, reader
from dashboard.run_names import run_label_map
from s3kg_core.analysis.leaderboard import (
    REFERENCE_ALPHA,
    bootstrap_runs,
    database_pairs,
    rank_summaries,
    read_values,
)
from s3kg_core.stages.scored import unscored_reasons
from s3kg_core.store import leaderboard_queries, queries, run_queries
from s3kg_core.store.records import SOURCES, KGRecord
from s3kg_core.store.store import Store

__all__ = [
    "ItemView",
    "RunSummary",
    "item_questions",
    "item_view",
    "load_runs",
    "mark_partial",
    "means_grid",
    "partial_runs",
    "ranked",
    "run_components",
    "run_summaries",
    "run_summary",
    "score_histograms",
    "scored_runs",
    "signatures",
]


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=8)
def signatures(view: View) -> tuple[list[str], str | None]:
    """All score signatures in the file, and the latest one."""
    with reader(view.path) as con:
        return queries.signatures_by_recency(con), Store.get_meta(con, "latest_signature")


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=8)
def load_runs(view: View) -> pd.DataFrame:
    """One row per run: dataset, model, temperature, extractor, source, answers, KGs, scores.

    ``label`` is the run's label on every picker and table (:func:`dashboard.run_names.
    run_label_map`, over all runs: a run reads the same on every page).
    """
    with reader(view.path) as con:
        runs = queries.run_overview(con)
    labels = run_label_map(runs)
    return runs.assign(label=[labels[int(r)] for r in runs["run_id"]])


@by_results()
@st.cache_data(show_spinner=False, max_entries=16)
def run_components(view: View, run_id: int) -> pd.DataFrame:
    """One run's stored components under ``view``'s signature (blend them with ``reblend``).

    Read alone: a page that shows one run never holds every answer of the file.
    """
    with reader(view.path) as con:
        return queries.scored_components(con, view.scored, [int(run_id)])


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def partial_runs(view: View) -> dict[int, tuple[int, int]]:
    """Runs only partly scored under ``view``'s signature: ``run_id -> (scored, scorable)``.

    Partial: some answers are scored and some that can be scored are not yet (a ``s3kg
    score`` in progress, or stopped), as the CLI's ``cus`` reports it. Answers that cannot be
    scored (a collect error, a failed extraction) do not make a run partial. Cached per
    results version, so a run being scored is re-read as its batches are written.
    """
    with reader(view.path) as con:
        counts = queries.status_counts(con, view.scored)  # a few rows per run, not per answer
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


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=8)
def item_questions(view: View) -> pd.DataFrame:
    """Every item's ``item_id, ext_id, question`` (for labels and tables of cases)."""
    with reader(view.path) as con:
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


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def item_view(view: View, run_id: int, item_id: int) -> ItemView:
    """Everything the sample explorer shows for one answer (scores: ``view``'s signature's)."""
    signature = view.signature
    with reader(view.path) as con:
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


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def run_summaries(view: View, alpha: float | None) -> pd.DataFrame:
    """Per run: answers scored, each score's mean and spread at ``alpha`` (one ``GROUP BY``).

    :func:`s3kg_core.store.leaderboard_queries.run_summaries`, cached per alpha (the reference
    alpha's is read once for every step).
    """
    with reader(view.path) as con:
        return leaderboard_queries.run_summaries(con, view.scored, alpha)


def scored_runs(view: View) -> list[int]:
    """The runs with at least one score under ``view``'s signature, by id.

    From :func:`run_summaries` at the reference alpha, which the Overview reads too.
    """
    return [int(r) for r in run_summaries(view, REFERENCE_ALPHA)["run_id"]]


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def ranked(view: View, alpha: float, metric: str) -> pd.DataFrame:
    """The leaderboard at ``alpha``: every run ranked within its dataset by ``metric``.

    :func:`s3kg_core.analysis.leaderboard.rank_summaries` (intervals, each run's verdict against
    its dataset's #1, rank change against alpha 0.5) on the runs' summaries at ``alpha`` and at
    0.5, computed in DuckDB (:func:`run_summaries`); only the runs too small for the normal
    interval have their values read (their bootstrap and paired test), and a large run's paired
    test against #1 is summed in DuckDB. Cached per alpha: a slider step back costs nothing.
    """
    summary = run_summaries(view, alpha)
    reference = run_summaries(view, REFERENCE_ALPHA)
    values: dict[int, pd.Series] = {}
    paired = None
    # an open of the file costs ~20 ms of a step: only when a bootstrap or a pair needs it
    if bootstrap_runs(summary) or database_pairs(summary, metric):
        with reader(view.path) as con:
            values, paired = read_values(con, view.scored, alpha, metric, summary)
    return rank_summaries(summary, reference, values, paired, metric=metric)


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def means_grid(view: View, alphas: tuple[float, ...]) -> pd.DataFrame:
    """Every run's mean scores at each alpha of ``alphas`` (the slider's stops), in one scan.

    :func:`s3kg_core.store.leaderboard_queries.run_means_grid`: what the Overview's live
    leaderboard ranks in the browser while the slider moves. Cached: read once per signature.
    """
    with reader(view.path) as con:
        return leaderboard_queries.run_means_grid(con, view.scored, alphas)


@by_results()
@st.cache_data(show_spinner=False, max_entries=32)
def score_histograms(view: View, alpha: float, metric: str, dataset: str | None) -> pd.DataFrame:
    """Each run's answers in 20 bins of ``metric`` at ``alpha`` (the Distributions chart).

    :func:`s3kg_core.store.leaderboard_queries.score_histograms`: counted in DuckDB, a few
    hundred rows whatever the number of answers; ``dataset``: its runs only.
    """
    with reader(view.path) as con:
        return leaderboard_queries.score_histograms(
            con, view.scored, alpha, metric, dataset=dataset
        )


@dataclass(frozen=True)
class RunSummary:
    """One run as its page shows it: who, how, what it cost, how its stages went."""

    info: dict[str, Any]
    usage: dict[str, Any]
    answer_statuses: dict[str, int]
    finish_reasons: dict[str, int]
    kg_statuses: pd.DataFrame
    scored: pd.DataFrame


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=32)
def run_summary(view: View, run_id: int) -> RunSummary | None:
    """Everything the Run page shows of run ``run_id`` (aggregated in DuckDB), or ``None``."""
    with reader(view.path) as con:
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
