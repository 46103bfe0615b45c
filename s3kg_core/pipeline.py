"""Stages over a stored run: score (GoldSim, CtxSim, CUS) and TAU, resumable.

Each stage reads what it needs, computes in memory and writes its results in short
transactions, one batch of items at a time: a stage killed at any point loses at most the batch
in flight, and running it again skips every item already done under the same signature.
Embeddings are persisted with the scores, so re-scoring with another alpha or tau encodes nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from .cus import score_cus_many
from .embeddings import EmbeddingCache, Encoder, load_encoder
from .errors import ConfigError
from .s3kg import KGScorer, S3KGConfig
from .store import KGRecord, ScoreRecord, Store
from .tau import TripletAnalyzer, lowest_fraction
from .types import ScoreResult, Triple

__all__ = [
    "ScoreJob",
    "ScoreReport",
    "TauReport",
    "cus_table",
    "encoder_for",
    "export_results",
    "latest_signature",
    "lowest_cases",
    "reblend",
    "score_batch",
    "score_store",
    "scored_frame",
    "tau_store",
]

Progress = Callable[[str, int, int], None]
TARGETS = ("cus", "gold_sim", "ctx_sim")


@dataclass
class ScoreReport:
    """What a scoring pass did."""

    signature: str
    pending: int = 0
    scored: int = 0
    already_done: int = 0
    not_ready: int = 0  # answers without KGs yet, or whose extraction failed
    encoded: int = 0
    seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)


def _detail(result: ScoreResult) -> str:
    return json.dumps(
        {
            "matched": [t.to_list() for t in result.matched],
            "entity_map": result.entity_map,
            "relation_map": result.relation_map,
            "n_triples_1": result.n_triples_1,
            "n_triples_2": result.n_triples_2,
        }
    )


def _status(result: ScoreResult, kg_1: KGRecord | None, kg_2: KGRecord | None) -> str:
    """The result's status, naming KGs that could not be parsed rather than calling them empty."""
    if kg_1 is not None and kg_1.status == "unparseable":
        return "unparseable_kg_1"
    if kg_2 is not None and kg_2.status == "unparseable":
        return "unparseable_kg_2"
    return result.status


def score_store(
    store: Store,
    *,
    encoder: str | Encoder = "minilm",
    config: S3KGConfig | None = None,
    batch_items: int = 1000,
    run_ids: Sequence[int] | None = None,
    progress: Progress | None = None,
    ray_address: str | None = None,
    ray_workers: int | None = None,
) -> ScoreReport:
    """Score every stored answer: GoldSim and CtxSim components, under one signature.

    Parameters
    ----------
    store
        The database (opened read-write).
    encoder, config
        As for :class:`~s3kg_core.s3kg.KGScorer`.
    batch_items
        Answers per write transaction (and the most a kill can lose).
    run_ids
        Only these runs (default: all).
    progress
        ``progress(stage, done, total)``; stage ``"answers"`` counts answers written.
    ray_address
        Score on Ray: ``"local"`` starts a local cluster, anything else is a cluster address
        (``"auto"``, ``"ray://host:10001"``). Each worker loads the encoder once; results are
        written here, batch by batch, exactly as without Ray.
    ray_workers
        Number of Ray workers (default: the cluster's CPUs).

    Returns
    -------
    ScoreReport
        Counts and the signature the scores were stored under.
    """
    if batch_items < 1:
        raise ConfigError(f"batch_items must be >= 1; got {batch_items}")
    config = config or S3KGConfig()
    enc = load_encoder(encoder) if isinstance(encoder, str) else encoder
    started = time.perf_counter()
    cache = EmbeddingCache(enc)
    scorer = KGScorer(enc, config, cache=cache)
    report = ScoreReport(signature=scorer.signature)
    with store.connect() as con:
        runs_filter = ""
        params: list[Any] = [scorer.signature]
        if run_ids is not None:
            runs_filter = f" AND a.run_id IN ({', '.join('?' for _ in run_ids) or 'NULL'})"
            params += list(run_ids)
        rows = con.execute(
            "SELECT a.run_id, a.item_id, EXISTS (SELECT 1 FROM scores s WHERE s.run_id = a.run_id "
            "AND s.item_id = a.item_id AND s.signature = ?) AS done FROM answers a WHERE "
            # ready: the answer's KG is stored and no KG of the item failed to extract
            "EXISTS (SELECT 1 FROM kgs k WHERE k.run_id = a.run_id AND k.item_id = a.item_id "
            "AND k.source = 'answer') AND NOT EXISTS (SELECT 1 FROM kgs k WHERE k.run_id = "
            "a.run_id AND k.item_id = a.item_id AND k.status LIKE 'failed%')"
            + runs_filter
            + " ORDER BY a.run_id, a.item_id",
            params,
        ).fetchall()
        pending = [(int(r), int(i)) for r, i, done in rows if not done]
        total = con.execute(
            "SELECT count(*) FROM answers a WHERE true" + runs_filter, params[1:]
        ).fetchall()
        report.not_ready = int(total[0][0]) - len(rows)
        report.already_done = len(rows) - len(pending)
        report.pending = len(pending)
        kgs = store.load_kgs(con, sorted({r for r, _ in pending})) if pending else {}
        if pending:
            cache.update(store.load_embeddings(con, enc.name))
    with store.transaction() as con:
        if report.already_done:  # a new alpha only re-blends: no recomputation
            con.execute(
                "UPDATE scores SET alpha = ? WHERE signature = ? AND alpha <> ?",
                [config.alpha, scorer.signature, config.alpha],
            )
        if not pending:  # a re-blend pass: it is now the latest
            store.set_meta(con, "latest_signature", scorer.signature)
        if isinstance(encoder, str):  # how to load this encoder again (tau, dashboard)
            store.set_meta(con, f"encoder:{enc.name}", encoder)
    jobs = [
        ScoreJob(
            run,
            item,
            kgs.get((run, item, "answer")),
            kgs.get((run, item, "gold")),
            kgs.get((run, item, "context")),
        )
        for run, item in pending
    ]
    batches = [jobs[lo : lo + batch_items] for lo in range(0, len(jobs), batch_items)]
    if ray_address is not None and batches:
        from .distributed import score_on_ray

        if not isinstance(encoder, str):
            raise ConfigError("scoring on Ray needs the encoder by name or path, not an object")
        outputs = score_on_ray(
            batches,
            encoder=encoder,
            config=config,
            embeddings=list(cache.items()),
            address=ray_address,
            workers=ray_workers,
        )
    else:
        prepare = getattr(enc, "prepare", None)
        if prepare is not None and jobs:
            prepare(4 * sum(len(kg.triples) for kg in kgs.values()))
        outputs = (score_batch(scorer, batch) for batch in batches)
    for records, embeddings in outputs:
        for rec in records:
            for status in (rec.gold_status, rec.ctx_status):
                report.statuses[status] = report.statuses.get(status, 0) + 1
        with store.transaction() as con:
            report.encoded += store.put_embeddings(con, enc.name, embeddings)
            report.scored += store.put_scores(con, records)
            store.set_meta(con, "latest_signature", scorer.signature)
        if progress is not None:
            progress("answers", report.scored, len(pending))
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class ScoreJob:
    """One answer to score, with its three stored KGs (``None`` where none is stored)."""

    run_id: int
    item_id: int
    answer: KGRecord | None
    gold: KGRecord | None
    context: KGRecord | None


def _triples(rec: KGRecord | None) -> tuple[Triple, ...]:
    return rec.triples if rec is not None else ()


def score_batch(
    scorer: KGScorer, jobs: Sequence[ScoreJob]
) -> tuple[list[ScoreRecord], list[tuple[str, Any]]]:
    """Score a batch of answers: their score records and the embeddings newly computed."""
    flushed = len(scorer.cache)
    results = score_cus_many(
        [(_triples(j.answer), _triples(j.gold), _triples(j.context)) for j in jobs], scorer
    )
    cfg = scorer.config
    records = [
        ScoreRecord(
            j.run_id,
            j.item_id,
            scorer.signature,
            cfg.mode,
            cfg.alpha,
            res.gold.s_wl,
            res.gold.s_sbert,
            _status(res.gold, j.answer, j.gold),
            res.context.s_wl,
            res.context.s_sbert,
            _status(res.context, j.answer, j.context),
            _detail(res.gold),
            _detail(res.context),
        )
        for j, res in zip(jobs, results, strict=True)
    ]
    return records, list(scorer.cache.items(since=flushed))


def latest_signature(store: Store) -> str | None:
    """The signature of the latest `score` pass (even one that only re-blended), or ``None``."""
    with store.connect() as con:
        latest = store.get_meta(con, "latest_signature")
        if latest is not None:
            return latest
        rows = con.execute(
            "SELECT signature FROM scores GROUP BY signature ORDER BY max(scored_at) DESC LIMIT 1"
        ).fetchall()
    return str(rows[0][0]) if rows else None


def encoder_for(store: Store, signature: str) -> str:
    """The name or path to load the encoder a signature was scored with.

    Raises
    ------
    ConfigError
        If the database does not record it (pass the encoder explicitly then).
    """
    fields = dict(part.split(":", 1) for part in signature.split("|") if ":" in part)
    name = fields.get("enc", "")
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
        frame = con.execute(
            "SELECT d.name AS dataset, r.model, r.temperature, r.extractor, s.run_id, s.item_id, "
            "s.mode, s.alpha, s.gold_s_wl, s.gold_s_sbert, s.gold_status, s.ctx_s_wl, "
            "s.ctx_s_sbert, s.ctx_status FROM scores s JOIN runs r USING (run_id) "
            "JOIN datasets d USING (dataset_id) WHERE s.signature = ? "
            "ORDER BY dataset, r.model, r.temperature, r.extractor, s.item_id",
            [signature],
        ).df()
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


@dataclass
class TauReport:
    """What a TAU pass did."""

    signature: str
    target: str
    fraction: float
    analysed: int = 0
    counts: dict[str, int] = field(default_factory=dict)


def lowest_cases(frame: pd.DataFrame, target: str, fraction: float) -> pd.DataFrame:
    """The rows of the lowest ``fraction`` of each run by ``target`` (what TAU explains).

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 1, 2], "item_id": [1, 2, 3, 4],
    ...                   "cus": [0.9, 0.1, 0.5, 0.7]})
    >>> lowest_cases(f, "cus", 0.3)["item_id"].tolist()
    [2, 4]
    """
    if target not in TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    parts = []
    for _, group in frame.groupby("run_id", sort=True):
        rows = group.reset_index(drop=True)
        parts.append(rows.iloc[lowest_fraction(rows[target].tolist(), fraction)])
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[0:0]


def tau_store(
    store: Store,
    *,
    fraction: float = 0.05,
    target: str = "cus",
    signature: str | None = None,
    alpha: float | None = None,
    encoder: str | Encoder | None = None,
) -> TauReport:
    """Run TAU on the lowest-scoring ``fraction`` of each run's answers and store the results.

    ``target`` picks the score that ranks answers (``cus``, ``gold_sim``, ``ctx_sim``); the
    answer KG is explained against the gold KG, or against the context KG for ``ctx_sim``.
    The encoder defaults to the one named in the signature.
    """
    if target not in TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    signature = signature or latest_signature(store)
    if signature is None:
        raise ConfigError("nothing is scored yet: run `s3kg score` first")
    if encoder is None:
        encoder = encoder_for(store, signature)
    enc = load_encoder(encoder) if isinstance(encoder, str) else encoder
    frame = scored_frame(store, signature, alpha)
    lowest = lowest_cases(frame, target, fraction)
    picks = [
        (int(r), int(i), float(v))
        for r, i, v in zip(lowest["run_id"], lowest["item_id"], lowest[target], strict=True)
    ]
    report = TauReport(signature=signature, target=target, fraction=fraction)
    if not picks:
        return report
    with store.connect() as con:
        kgs = store.load_kgs(con, sorted({r for r, _, _ in picks}))
        cache = EmbeddingCache(enc)
        cache.update(store.load_embeddings(con, enc.name))
    analyzer = TripletAnalyzer(enc, cache=cache)
    reference = "context" if target == "ctx_sim" else "gold"

    def triples(run: int, item: int, source: str) -> tuple[Triple, ...]:
        rec = kgs.get((run, item, source))
        return rec.triples if rec is not None else ()

    flushed = len(cache)
    results = analyzer.analyse_many(
        [(triples(r, i, reference), triples(r, i, "answer")) for r, i, _ in picks]
    )
    stored_alpha = {
        (int(r), int(i)): float(a)
        for r, i, a in zip(frame["run_id"], frame["item_id"], frame["alpha"], strict=True)
    }
    rows = []
    for (run, item, score), res in zip(picks, results, strict=True):
        used_alpha = alpha if alpha is not None else stored_alpha[(run, item)]
        counts = res.counts()
        for key, value in counts.items():
            report.counts[key] = report.counts.get(key, 0) + value
        rows.append(
            [
                run,
                item,
                signature,
                target,
                fraction,
                used_alpha,
                score,
                counts["aligned"],
                counts["relation_mismatch"],
                counts["entity_mismatch"],
                counts["extra"],
                counts["missing"],
                json.dumps(res.to_dict()),
            ]
        )
    with store.transaction() as con:
        con.execute(
            "DELETE FROM tau_results WHERE signature = ? AND target = ?", [signature, target]
        )
        con.executemany(
            "INSERT INTO tau_results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )
        store.put_embeddings(con, enc.name, cache.items(since=flushed))
    report.analysed = len(rows)
    return report


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
        texts = con.execute(
            "SELECT i.item_id, i.ext_id, i.question, i.context, i.gold_answer FROM items i"
        ).df()
        answers = con.execute("SELECT run_id, item_id, answer FROM answers").df()
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
            mem.execute(f"COPY results TO '{_sql_path(out)}' (FORMAT parquet)")
        finally:
            mem.close()
    elif fmt == "json":
        frame.to_json(out, orient="records", indent=2)
    else:
        raise ConfigError(f"format must be csv, parquet or json; got {fmt!r}")
    return len(frame)


def _sql_path(path: Path) -> str:
    """A path as a single-quoted SQL literal body (COPY TO takes no parameters)."""
    return str(path).replace("'", "''")
