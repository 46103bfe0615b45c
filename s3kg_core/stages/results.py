"""Results of a scored store: components re-blended at any alpha, the CUS table, exports."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pandas as pd

from ..errors import ConfigError
from ..scoring.signature import Signature
from ..store import queries
from ..store.store import Store

__all__ = [
    "cus_table",
    "encoder_for",
    "export_results",
    "latest_signature",
    "reblend",
    "scored_frame",
]


def latest_signature(store: Store) -> str | None:
    """The signature of the latest `score` pass (even one that only re-blended), or ``None``."""
    with store.connect() as con:
        latest = store.get_meta(con, "latest_signature")
        if latest is not None:
            return latest
        return queries.latest_scored_signature(con)


def encoder_for(store: Store, signature: str) -> str:
    """The name or path to load the encoder a signature was scored with.

    Raises
    ------
    ConfigError
        If the database does not record it (pass the encoder explicitly then).
    """
    name = Signature.parse(signature).encoder
    with store.connect() as con:
        recorded = store.get_meta(con, f"encoder:{name}")
    if recorded is not None:
        return recorded
    base = name.split("@", 1)[0]
    if base in ("minilm", "mpnet"):
        return base
    raise ConfigError(
        f"this database does not record where encoder {name!r} was loaded from; "
        "pass it with --encoder PATH"
    )


def scored_frame(
    store: Store, signature: str, alpha: float | None = None, run_ids: Sequence[int] | None = None
) -> pd.DataFrame:
    """Every scored answer of ``signature`` with its run, components and blended scores."""
    with store.connect() as con:
        frame = queries.scored_components(con, signature)
    if run_ids is not None:
        frame = frame[frame["run_id"].isin(list(run_ids))]
    return reblend(frame, alpha)


def reblend(frame: pd.DataFrame, alpha: float | None = None) -> pd.DataFrame:
    """Set ``gold_sim``, ``ctx_sim`` and ``cus`` of stored components at ``alpha``.

    ``frame`` needs the columns ``mode``, ``alpha``, ``gold_s_wl``, ``gold_s_sbert``,
    ``ctx_s_wl`` and ``ctx_s_sbert``; ``alpha=None`` keeps each row's stored alpha. Vectorised:
    ten thousand answers take a few milliseconds, so a dashboard slider can call it on every move.

    Examples
    --------
    >>> f = pd.DataFrame({"mode": ["paper"], "alpha": [0.5], "gold_s_wl": [1.0],
    ...                   "gold_s_sbert": [0.0], "ctx_s_wl": [0.0], "ctx_s_sbert": [0.0]})
    >>> reblend(f, 0.25)[["gold_sim", "ctx_sim", "cus"]].round(3).values.tolist()
    [[0.75, 0.0, 0.0]]
    """
    frame = frame.copy()
    a = frame["alpha"] if alpha is None else pd.Series(float(alpha), index=frame.index)
    # paper and hybrid: alpha weights the embedding side; kgx: the WL side (types.blend)
    embedding_side = frame["mode"] != "kgx"
    frame["gold_sim"] = _blend_rows(frame["gold_s_wl"], frame["gold_s_sbert"], a, embedding_side)
    frame["ctx_sim"] = _blend_rows(frame["ctx_s_wl"], frame["ctx_s_sbert"], a, embedding_side)
    total = frame["gold_sim"] + frame["ctx_sim"]
    frame["cus"] = (2 * frame["gold_sim"] * frame["ctx_sim"] / total.where(total > 0, 1.0)).where(
        total > 0, 0.0
    )
    return frame


def _blend_rows(
    wl: pd.Series, sbert: pd.Series, alpha: pd.Series, embedding_side: pd.Series
) -> pd.Series:
    return ((1 - alpha) * wl + alpha * sbert).where(
        embedding_side, alpha * wl + (1 - alpha) * sbert
    )


def cus_table(
    store: Store, *, signature: str | None = None, alpha: float | None = None
) -> pd.DataFrame:
    """GoldSim, CtxSim and CUS means per dataset x model x temperature x extractor.

    ``alpha`` re-blends the stored components (default: the alpha each score was stored with).
    Unscorable answers count as 0, as their scores are.
    """
    signature = signature or latest_signature(store)
    columns = ["dataset", "model", "temperature", "extractor", "n", "gold_sim", "ctx_sim", "cus"]
    if signature is None:
        return pd.DataFrame(columns=columns)
    frame = scored_frame(store, signature, alpha)
    grouped = frame.groupby(["dataset", "model", "temperature", "extractor"], sort=True)
    table = grouped.agg(
        n=("item_id", "size"),
        gold_sim=("gold_sim", "mean"),
        ctx_sim=("ctx_sim", "mean"),
        cus=("cus", "mean"),
    ).reset_index()
    return table[columns]


def export_results(
    store: Store, out: str | Path, *, fmt: str = "csv", signature: str | None = None
) -> int:
    """Write one row per scored answer (texts, statuses, components, scores) as csv/parquet/json.

    Returns the number of rows written.
    """
    signature = signature or latest_signature(store)
    if signature is None:
        raise ConfigError("nothing is scored yet: run `s3kg score` first")
    frame = scored_frame(store, signature, None)
    with store.connect() as con:
        texts = queries.item_texts(con)
        answers = queries.answer_texts(con)
    frame = frame.merge(texts, on="item_id", how="left").merge(
        answers, on=["run_id", "item_id"], how="left"
    )
    frame["signature"] = signature
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        frame.to_csv(out, index=False)
    elif fmt == "parquet":  # DuckDB writes Parquet itself: no pyarrow needed
        mem = duckdb.connect()
        try:
            mem.register("results", frame)
            queries.copy_results_to_parquet(mem, out)
        finally:
            mem.close()
    elif fmt == "json":
        frame.to_json(out, orient="records", indent=2)
    else:
        raise ConfigError(f"format must be csv, parquet or json; got {fmt!r}")
    return len(frame)
