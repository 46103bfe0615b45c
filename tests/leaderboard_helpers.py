"""The leaderboard computed in pandas from every stored component: the tests' oracle.

The library computes each run's means once, in DuckDB
(:func:`s3kg_core.store.leaderboard_queries.run_summaries`, which ``s3kg cus`` and the
Overview read); these are the NumPy sums the Overview took before, kept here to check the SQL
against an independent path and to rank small frames in tests of
:func:`s3kg_core.analysis.leaderboard.rank_summaries`. :func:`build_scored_store` writes a store
of 2,000 scored answers without an encoder.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from s3kg_core.analysis.compare import SCORES
from s3kg_core.analysis.leaderboard import (
    LEADERBOARD_COLUMNS,
    REFERENCE_ALPHA,
    SUMMARY_COLUMNS,
    database_pairs,
    rank_summaries,
)
from s3kg_core.errors import ConfigError
from s3kg_core.stages.scored import reblend
from s3kg_core.stats import DEFAULT_RESAMPLES, NORMAL_FROM
from s3kg_core.store.leaderboard_queries import PAIRED_COLUMNS
from s3kg_core.store.records import AnswerRecord, ItemRecord
from s3kg_core.store.store import Store

__all__ = ["RUN_SIZES", "build_scored_store", "rank_runs", "run_summaries"]

_COMPONENTS = ["mode", "alpha", "gold_s_wl", "gold_s_sbert", "ctx_s_wl", "ctx_s_sbert"]
_RUN_KEYS = ["run_id", "dataset", "model", "temperature", "extractor"]


def run_summaries(frame: pd.DataFrame, alpha: float | None) -> pd.DataFrame:
    """One row per run of ``frame`` at ``alpha``: answers, means and standard deviations.

    ``frame`` holds stored components as :func:`rank_runs` takes them; sums by
    :func:`numpy.bincount`. Columns :data:`SUMMARY_COLUMNS`, by run id.
    """
    runs, codes = np.unique(frame["run_id"].to_numpy(), return_inverse=True)
    keys = frame.drop_duplicates("run_id")[_RUN_KEYS].set_index("run_id").loc[runs]
    blended = reblend(frame[_COMPONENTS], alpha)
    n = np.bincount(codes, minlength=len(runs))
    out = keys.reset_index().assign(n=n)
    for score in SCORES:
        values = blended[score].to_numpy(dtype=float)
        total = np.bincount(codes, weights=values, minlength=len(runs))
        squares = np.bincount(codes, weights=values**2, minlength=len(runs))
        mean = total / n
        spread = np.maximum(0.0, squares - n * mean**2) / np.maximum(n - 1, 1)
        out[score] = mean
        out[f"{score}_std"] = np.where(n > 1, np.sqrt(spread), np.nan)
    return out.loc[:, list(SUMMARY_COLUMNS)]


def rank_runs(
    frame: pd.DataFrame,
    alpha: float,
    *,
    metric: str = "cus",
    reference_alpha: float = REFERENCE_ALPHA,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    normal_from: int | None = NORMAL_FROM,
) -> pd.DataFrame:
    """Every run ranked by its mean ``metric`` at ``alpha`` within its dataset.

    ``frame`` holds the stored components of each scored answer (``run_id, dataset, model,
    temperature, extractor, item_id`` and what :func:`~s3kg_core.stages.scored.reblend`
    needs); the ranking is :func:`rank_summaries` of :func:`run_summaries`, the values of
    small runs by item and the paired summaries of large pairs summed in pandas.
    """
    if metric not in SCORES:
        raise ConfigError(f"rank by one of {', '.join(SCORES)}; got {metric!r}")
    if frame.empty:
        return pd.DataFrame(columns=list(LEADERBOARD_COLUMNS))
    summary = run_summaries(frame, alpha)
    small = summary.loc[
        summary["n"] < (normal_from if normal_from is not None else math.inf), "run_id"
    ]
    blended = reblend(frame[["run_id", "item_id", *_COMPONENTS]], alpha)
    by_run = {
        int(run): group.set_index("item_id")[metric].sort_index().astype(float)
        for run, group in blended.groupby("run_id", sort=False)
    }
    values = {run: by_run[run] for run in small.astype(int)}
    rows = []
    for run, leader in database_pairs(summary, metric, normal_from).items():
        both = pd.concat([by_run[run], by_run[leader]], axis=1, join="inner")
        change = both.iloc[:, 0] - both.iloc[:, 1]
        rows.append((run, leader, len(change), change.mean(), change.std(ddof=1)))
    paired = pd.DataFrame(rows, columns=list(PAIRED_COLUMNS))
    return rank_summaries(
        summary,
        run_summaries(frame, reference_alpha),
        values,
        paired,
        metric=metric,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        normal_from=normal_from,
    )


RUN_SIZES = {  # (dataset, model, temperature, mode) -> answers: 2,000 in all
    ("d1", "big-model", 0.0, "ot"): 1200,
    ("d1", "kgx-model", 0.0, "kgx"): 400,
    ("d1", "big-model", 0.7, "ot"): 249,
    ("d2", "small-model", 0.0, "paper"): 150,
    ("d2", "one-answer", 0.0, "hybrid"): 1,
}
"""The runs of :func:`build_scored_store`: two datasets, runs of 1 to 1,200 answers (above and
below the leaderboard's normal-interval threshold), four modes (kgx weights the WL side)."""


def build_scored_store(path: Path, *, seed: int = 0) -> tuple[Store, str]:
    """A store of 2,000 answers with component scores inserted directly (no encoder).

    Seeded random components in [0, 1], stored alphas of 0.3 to 0.7, and in every run of more
    than one answer: an answer with every component 1, one with GoldSim exactly 0 and one whose
    answer KG is empty (``answer_kg_empty``, components 0). Returns ``(store, signature)``.
    """
    rng = np.random.default_rng(seed)
    signature = "mode:ot|enc:test@0|tau:0.65|K:5|align:yes|norm:lemma|version:3"
    store = Store(path)
    n_items = max(RUN_SIZES.values())
    with store.transaction() as con:
        datasets = {name: store.ensure_dataset(con, name) for name in ("d1", "d2")}
        items = {
            name: store.upsert_items(
                con, ds, [ItemRecord(f"q{i}", f"Q{i}?", "C.", "G.") for i in range(n_items)]
            )
            for name, ds in datasets.items()
        }
        rows = []
        for (dataset, model, temperature, mode), n in RUN_SIZES.items():
            run = store.ensure_run(con, datasets[dataset], model, temperature, "none")
            ids = [items[dataset][f"q{i}"] for i in range(n)]
            store.put_answers(con, run, [AnswerRecord(i, "An answer.") for i in ids])
            for i, item in enumerate(ids):
                gw, gs, cw, cs = (float(v) for v in rng.uniform(0, 1, 4))
                status = "ok"
                if n > 1 and i == 0:
                    gw = gs = cw = cs = 1.0
                if n > 1 and i == 1:
                    gw = gs = 0.0
                if n > 1 and i == 2:
                    gw = gs = cw = cs = 0.0
                    status = "answer_kg_empty"
                alpha = float(rng.choice([0.3, 0.5, 0.7]))
                rows.append((run, item, signature, mode, alpha, gw, gs, status, cw, cs, status))
        con.executemany(
            "INSERT INTO scores (run_id, item_id, signature, mode, alpha, gold_s_wl, "
            "gold_s_sbert, gold_status, ctx_s_wl, ctx_s_sbert, ctx_status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        store.set_meta(con, "latest_signature", signature)
    return store, signature
