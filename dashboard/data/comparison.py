"""The Run comparison's reads: which runs compare, two runs question by question, the gates.

Each takes the page's :class:`~dashboard.data.database.View` and is cached per pair (and
alpha) by the results version; :func:`warm_pair` fills a pair's caches at every alpha of the
slider in the background, nearest first.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.data import background
from dashboard.data.database import View, by_results, read_store, reader, results_version
from dashboard.data.explain import encoder, explorer_case
from dashboard.data.tau_cases import tau_item, tau_run
from dashboard.url_state import ALPHA_STEP, ALPHA_STOPS
from s3kg_core.analysis.check import CheckResult, check_runs
from s3kg_core.analysis.question_diff import QuestionDiff, pair_changes, question_diff
from s3kg_core.report.build import build_report
from s3kg_core.report.html import render_report
from s3kg_core.scoring.signature import Signature
from s3kg_core.scoring.tau import TauResult
from s3kg_core.store import compare_queries

__all__ = [
    "comparable_pairs",
    "pair_check",
    "pair_deltas",
    "pair_gold_changes",
    "pair_means_grid",
    "pair_questions",
    "question_across",
    "run_report",
    "warm_pair",
]


@by_results()
@st.cache_data(show_spinner=False, max_entries=8)
def comparable_pairs(view: View) -> dict[tuple[int, int], int]:
    """Every ordered pair of runs scored on the same questions -> how many.

    :func:`s3kg_core.store.compare_queries.comparable_pairs` (the Run comparison's run pickers),
    one query per results version and signature: alpha does not change which runs share
    questions.
    """
    with reader(view.path) as con:
        return compare_queries.comparable_pairs(con, view.scored)


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def pair_deltas(view: View, run_a: int, run_b: int, alpha: float) -> pd.DataFrame:
    """Each question runs A and B both answered, their scores at ``alpha`` and B minus A.

    :func:`s3kg_core.store.compare_queries.pair_deltas` (blended and joined in DuckDB: only the
    two runs' scores are read), cached per pair and alpha; biggest regression first.
    """
    with reader(view.path) as con:
        return compare_queries.pair_deltas(con, view.scored, run_a, run_b, alpha)


@by_results()
@st.cache_data(show_spinner=False, max_entries=16)
def pair_means_grid(view: View, run_a: int, run_b: int) -> pd.DataFrame:
    """The pair's figures at every stop of the alpha slider, in one scan.

    :func:`s3kg_core.store.compare_queries.pair_means_grid` at
    :data:`dashboard.url_state.ALPHA_STOPS`: what the page's live figures show while the slider
    moves. Cached per pair (every alpha at once).
    """
    with reader(view.path) as con:
        return compare_queries.pair_means_grid(con, view.scored, run_a, run_b, ALPHA_STOPS)


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def pair_questions(
    view: View,
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
    with reader(view.path) as con:
        return compare_queries.pair_questions(
            con, view.scored, run_a, run_b, alpha, text, page=page, size=page_size, keep=keep
        )


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def pair_check(view: View, run_a: int, run_b: int, alpha: float) -> CheckResult:
    """``s3kg check``'s gates on run B against run A (the baseline) at ``alpha``.

    :func:`s3kg_core.analysis.check.check_runs` with its default settings, as
    ``s3kg check --run B --baseline A --signature S --alpha ALPHA`` runs it: one gate
    evaluation for the command and the page (its paired BCa bootstrap of 9,999 resamples,
    seed 0). Cached per pair and alpha: choosing a question or a page does not run it again.

    Raises
    ------
    S3KGError
        What ``s3kg check`` refuses (exit status 2): runs it cannot compare.
    """
    with read_store(view.path) as store:
        return check_runs(store, run_b, run_a, signature=view.scored, alpha=alpha)


@by_results()
@st.cache_data(show_spinner=False, max_entries=64)
def question_across(view: View, run_a: int, run_b: int, item_id: int) -> QuestionDiff:
    """One question in runs A and B, triple by triple.

    The answer triples are the scorer's keys from each run's explanation at the signature's
    tau (:func:`~dashboard.data.explain.explorer_case`), the gold triples' categories TAU's
    (:func:`~dashboard.data.tau_cases.tau_item`): both from the stored embeddings, as the
    Sample explorer and Annotate draw them.
    """
    tau = float(Signature.parse(view.scored).tau)
    keys = [
        [t.key for t in explorer_case(view, run, item_id, tau).gold.triples_1]
        for run in (run_a, run_b)
    ]
    taus = [TauResult.from_dict(tau_item(view, run, item_id)) for run in (run_a, run_b)]
    return question_diff(keys[0], keys[1], taus[0], taus[1])


@by_results()
@st.cache_data(show_spinner="Comparing TAU's categories of both runs...", max_entries=16)
def pair_gold_changes(view: View, run_a: int, run_b: int) -> dict[tuple[str, str], int]:
    """Over the questions both runs answered: ``(A's TAU category, B's) -> gold triples``.

    Only changed categories are counted (:func:`s3kg_core.analysis.question_diff.pair_changes`
    on :func:`~dashboard.data.tau_cases.tau_run` of each run).
    """
    a, b = (
        {i: TauResult.from_dict(r) for i, r in tau_run(view, run).items()} for run in (run_a, run_b)
    )
    return dict(pair_changes(a, b, sorted(set(a) & set(b))))


@by_results()
@st.cache_data(show_spinner=False, max_entries=4)
def run_report(view: View, alpha: float | None, run_id: int, baseline_id: int) -> str:
    """The HTML report of run ``run_id`` against ``baseline_id``: ``s3kg report``'s file.

    Built by the library (:func:`~s3kg_core.report.build.build_report`,
    :func:`~s3kg_core.report.html.render_report`) with the page's signature and alpha,
    the encoder the dashboard already holds, under the process lock.
    """
    enc = encoder(view)
    with read_store(view.path) as store:
        report = build_report(
            store, run_id, baseline_id, signature=view.scored, alpha=alpha, encoder=enc
        )
    return render_report(report)


def warm_pair(
    view: View, run_a: int, run_b: int, alpha: float, *, gates: bool = True
) -> threading.Thread:
    """Fill the Run comparison's caches of a pair at every alpha of the slider, nearest first.

    :func:`pair_deltas` (one query) in a background job per pair, and with ``gates``
    :func:`pair_check` (``s3kg check``'s gates: about 0.4 s for the demo's 30 questions; the
    page asks for them up to :data:`dashboard.compare.CHECK_LIVE_MAX` shared questions). (The
    Overview needs none: its leaderboard at a new alpha is two ``GROUP BY`` queries, about
    20 ms at 100,000 answers.) Returns the thread.
    """
    grid = sorted(
        (round(i * ALPHA_STEP, 10) for i in range(round(1 / ALPHA_STEP) + 1)),
        key=lambda a: (abs(a - alpha), a),
    )

    def work(stopped: Callable[[], bool]) -> bool:
        for a in grid:
            if stopped():
                return False
            pair_deltas(view, run_a, run_b, a)
            if gates:
                pair_check(view, run_a, run_b, a)
        return True

    key = ("pair", view.path, results_version(view), view.signature, run_a, run_b, gates)
    return background.start(key, work, group="alpha-warm")
