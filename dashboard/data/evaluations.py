"""The evaluation pages' reads (Benchmarks, Hallucinations, Factuality) and the trained check.

Each read takes the page's :class:`~dashboard.data.database.View` and is cached by the file's
stamp (:func:`~dashboard.data.database.by_stamp`): a new benchmark row, GraphEval result or
factuality evaluation shows on the next run.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from dashboard.data.database import View, by_stamp, clear_caches, read_store, reader, writer
from dashboard.hallucinations import AnswerCheck
from s3kg_core.errors import CheckerError, S3KGError
from s3kg_core.evaluation.pair_sets import load_pair_set
from s3kg_core.evaluation.pairs import load_bench_results
from s3kg_core.factuality.results import load_evaluations
from s3kg_core.grapheval.checkers.model_format import read_manifest
from s3kg_core.grapheval.checkers.trained import (
    DASHBOARD_MIN_HELDOUT,
    load_trained_checker,
    manifest_summary,
    trained_checker_available,
)
from s3kg_core.grapheval.results import detect_store, load_results
from s3kg_core.store import grapheval_queries

__all__ = [
    "EVAL_COLUMNS",
    "bench_results",
    "bench_texts",
    "check_with_trained",
    "factuality_evals",
    "grapheval_overview",
    "grapheval_results",
    "trained_checker_offer",
]

EVAL_COLUMNS = ("name", "model", "layer", "n_test", "run_at", "summary", "breakdown")
"""The columns of :func:`factuality_evals`."""


@by_stamp()
@st.cache_data(show_spinner=False, max_entries=8)
def bench_results(view: View) -> pd.DataFrame:
    """Stored benchmark rows (``s3kg bench pairs --db``), ``detail`` parsed."""
    with read_store(view.path) as store:
        rows = load_bench_results(store)
    return pd.DataFrame(rows)


@st.cache_data(show_spinner=False, max_entries=4)
def bench_texts(dataset: str) -> pd.DataFrame | None:
    """The texts of a benchmark pair set by id, or ``None`` when its file is not found here."""
    try:
        ps = load_pair_set(dataset)
    except S3KGError:
        return None
    return pd.DataFrame({"id": [str(i) for i in ps.ids], "text_1": ps.text_1, "text_2": ps.text_2})


@by_stamp()
@st.cache_data(show_spinner=False, max_entries=8)
def grapheval_overview(view: View) -> pd.DataFrame:
    """One row per run x checker x extractor with stored GraphEval results.

    Columns: ``run_id, checker, extractor, answers, inconsistent, unjudged, triples,
    flagged_triples, with_raw, corrected, signature`` (distinct signatures joined by ``" ; "``).
    """
    with reader(view.path) as con:
        return grapheval_queries.grapheval_overview(con)


@by_stamp()
@st.cache_data(show_spinner=False, max_entries=16)
def grapheval_results(view: View, run_id: int, checker: str, extractor: str) -> list[AnswerCheck]:
    """The stored GraphEval results of one run, checker and extractor, in item order."""
    with reader(view.path) as con:
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


@by_stamp()
@st.cache_data(show_spinner=False, max_entries=8)
def factuality_evals(view: View) -> pd.DataFrame:
    """Every stored factuality evaluation, newest first, one row each.

    Columns :data:`EVAL_COLUMNS`; ``summary`` and ``breakdown`` hold the parsed JSON dicts.
    """
    with read_store(view.path) as store:
        evaluations = load_evaluations(store)
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


def trained_checker_offer() -> str | None:
    """One line about the trained checker the Hallucinations page may offer, or ``None``.

    ``None`` when ``s3kg grapheval train-checker`` has saved no model in the cache folder, or
    when its held-out balanced accuracy is below the dashboard's bar
    (:data:`~s3kg_core.grapheval.checkers.trained.DASHBOARD_MIN_HELDOUT`). Reads the manifest
    only.
    """
    if not trained_checker_available(min_heldout=DASHBOARD_MIN_HELDOUT):
        return None
    return manifest_summary(read_manifest())


def check_with_trained(
    view: View, run_id: int, progress: Callable[[str, int, int], None] | None = None
) -> int:
    """Check a run's answers with the trained checker; return how many answers were checked.

    The results go into ``view``'s file; resumable, as ``s3kg grapheval detect``.

    Raises
    ------
    CheckerError
        If there is no trained checker good enough to offer (see :func:`trained_checker_offer`).
    """
    checker = load_trained_checker()
    if checker is None:
        raise CheckerError("no trained checker to use: run `s3kg grapheval train-checker`")
    with writer(view.path) as store:
        report = detect_store(store, run_id, checker, progress=progress)
    clear_caches()
    return report.written
