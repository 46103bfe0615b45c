"""Answers found by words: the Search page's pages and the pickers' pages of a run's questions.

Searched, filtered and paged in DuckDB (:mod:`s3kg_core.store.search_queries`): no page or
picker ever lists every answer of a file.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.data.database import View, by_results, by_stamp, reader
from s3kg_core.store import search_queries
from s3kg_core.store.search_queries import ScoreRange

__all__ = ["counts_by_alpha", "question_page", "question_position", "search"]


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=32)
def search(
    view: View,
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
    with reader(view.path) as con:
        return search_queries.search_answers(
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


@by_stamp(signature=True)
@st.cache_data(show_spinner=False, max_entries=64)
def question_page(
    view: View,
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
    DuckDB) under ``view``'s signature: a picker never lists every answer of a run.
    """
    with reader(view.path) as con:
        return search_queries.question_page(
            con, view.scored, run_id, alpha, text, low=low, high=high,
            limit=page_size, offset=page * page_size,
        )  # fmt: skip


@by_stamp(signature=True)
@st.cache_data(show_spinner=False, max_entries=64)
def question_position(
    view: View,
    run_id: int,
    alpha: float,
    item_id: int,
    text: str,
    low: float,
    high: float,
) -> int | None:
    """Where a question stands in :func:`question_page`'s order (``None``: not listed)."""
    with reader(view.path) as con:
        return search_queries.question_position(
            con, view.scored, run_id, alpha, item_id, text, low=low, high=high
        )


@by_results(signature=False)
@st.cache_data(show_spinner=False, max_entries=32)
def counts_by_alpha(
    view: View,
    text: str,
    run_ids: tuple[int, ...] | None,
    answer_status: str | None,
    answer_kg_status: str | None,
    alphas: tuple[float, ...],
    score_range: ScoreRange,
    tau_category: str | None = None,
    scope: str = "all",
) -> list[int]:
    """How many answers :func:`search` finds at each of ``alphas`` (one query, cached)."""
    with reader(view.path) as con:
        return search_queries.count_by_alpha(
            con, text, alphas, score_range=score_range,
            run_ids=None if run_ids is None else list(run_ids), answer_status=answer_status,
            answer_kg_status=answer_kg_status, tau_category=tau_category, scope=scope,
        )  # fmt: skip
