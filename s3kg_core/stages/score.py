"""The score stage: GoldSim and CtxSim components of every answer of a store, resumable.

It reads what it needs, computes in memory and writes its results in short transactions, one
batch of items at a time: a stage killed at any point loses at most the batch in flight, and
running it again skips every item already scored under the same signature.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..encoders.backend import backend_of_name, with_backend
from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple
from ..progress import StageProgress
from ..scoring.cus import score_cus_many
from ..scoring.result import ScoreResult
from ..scoring.s3kg import KGScorer, S3KGConfig
from ..statuses import Reference
from ..store import queries
from ..store.records import KGRecord, ScoreRecord
from ..store.store import Store

__all__ = ["ScoreJob", "ScoreReport", "score_batch", "score_store"]


@dataclass
class ScoreReport:
    """What a scoring pass did."""

    signature: str
    pending: int = 0
    scored: int = 0
    already_done: int = 0
    not_ready: int = 0  # answers without KGs yet, or whose extraction failed
    failed_runs: dict[int, tuple[str, int]] = field(default_factory=dict)
    """``{run: (extractor, answers)}``: the answers not ready because a KG of theirs failed."""
    encoded: int = 0
    seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def kg_failed(self) -> int:
        """Answers not scored because a KG of theirs failed to extract."""
        return sum(n for _, n in self.failed_runs.values())

    def not_ready_text(self) -> str:
        """The answers not ready, said apart: not extracted yet, and extracted but failed.

        Examples
        --------
        >>> report = ScoreReport("s", not_ready=7, failed_runs={1: ("llm:m:joint-kg-v1", 5)})
        >>> report.not_ready_text()
        '2 without KGs yet, 5 whose KGs failed (s3kg extract --extractor llm --run 1 retries them)'
        """
        from .extract import extract_command

        parts = []
        if self.not_ready > self.kg_failed:
            parts.append(f"{self.not_ready - self.kg_failed} without KGs yet")
        if self.kg_failed:
            by_extractor: dict[str, list[int]] = {}
            for run, (extractor, _) in sorted(self.failed_runs.items()):
                by_extractor.setdefault(extractor, []).append(run)
            commands = "; ".join(extract_command(e, runs) for e, runs in by_extractor.items())
            parts.append(f"{self.kg_failed} whose KGs failed ({commands} retries them)")
        return ", ".join(parts)

    def summary(self) -> str:
        """One line for the command line."""
        return (
            f"{self.scored} answers scored, {self.already_done} already done, "
            f"{self.not_ready_text() or '0 without KGs'}"
        )


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


def _status(
    result: ScoreResult, answer: KGRecord | None, reference: KGRecord | None, name: Reference
) -> str:
    """The result's status, naming KGs that could not be parsed rather than calling them empty."""
    if answer is not None and answer.status == "unparseable":
        return "answer_kg_unparseable"
    if reference is not None and reference.status == "unparseable":
        return f"{name}_kg_unparseable"
    return result.status


def score_store(
    store: Store,
    *,
    encoder: str | Encoder = "minilm",
    config: S3KGConfig | None = None,
    batch_items: int = 1000,
    run_ids: Sequence[int] | None = None,
    progress: StageProgress | None = None,
    ray_address: str | None = None,
    ray_workers: int | None = None,
) -> ScoreReport:
    """Score every stored answer: GoldSim and CtxSim components, under one signature.

    Parameters
    ----------
    store
        The database (opened read-write).
    encoder, config
        As for :class:`~s3kg_core.scoring.s3kg.KGScorer`.
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
        rows = queries.scoring_candidates(con, scorer.signature, run_ids)
        pending = [(int(r), int(i)) for r, i, done in rows if not done]
        report.not_ready = queries.count_answers(con, run_ids) - len(rows)
        report.failed_runs = {
            run: (extractor, n) for run, extractor, n in queries.failed_extractions(con, run_ids)
        }
        report.already_done = len(rows) - len(pending)
        report.pending = len(pending)
    with store.transaction() as con:
        if report.already_done:  # a new alpha only re-blends: no recomputation
            queries.set_score_alpha(con, scorer.signature, config.alpha)
        if not pending:  # a re-blend pass: it is now the latest
            store.set_meta(con, "latest_signature", scorer.signature)
        if isinstance(encoder, str):  # how to load this encoder again (tau, dashboard)
            store.set_meta(
                con, f"encoder:{enc.name}", with_backend(encoder, backend_of_name(enc.name))
            )
    # item by item, every run of an item in one batch: its gold and context KGs' vectors are
    # read once for all of them
    ordered = sorted(pending, key=lambda ri: (ri[1], ri[0]))
    chunks = [ordered[lo : lo + batch_items] for lo in range(0, len(ordered), batch_items)]
    outputs: Iterable[tuple[list[ScoreRecord], list[tuple[str, Any]]]]
    if ray_address is not None and chunks:
        from .ray_scoring import score_on_ray

        if not isinstance(encoder, str):
            raise ConfigError("scoring on Ray needs the encoder by name or path, not an object")
        # the workers get every batch and every stored vector up front (memory grows with N)
        with store.connect() as con:
            batches = [_jobs(store, con, chunk, scorer.needs_texts) for chunk in chunks]
            cache.update(store.load_embeddings(con, enc.name))
        outputs = score_on_ray(
            batches,
            score_batch=score_batch,
            # the backend this process loaded, whatever a worker's environment says
            encoder=with_backend(encoder, backend_of_name(enc.name)),
            config=config,
            embeddings=list(cache.items()),
            address=ray_address,
            workers=ray_workers,
        )
    else:
        outputs = _score_chunks(store, enc, config, chunks)
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


def _jobs(
    store: Store, con: Any, answers: Sequence[tuple[int, int]], with_texts: bool
) -> list[ScoreJob]:
    """The jobs of these ``(run_id, item_id)`` answers, their KGs (and texts) read from ``con``."""
    kgs = store.load_kgs_of(con, answers)
    texts = _texts(con, answers) if with_texts else {}
    return [
        ScoreJob(
            run,
            item,
            kgs.get((run, item, "answer")),
            kgs.get((run, item, "gold")),
            kgs.get((run, item, "context")),
            texts.get((run, item)),
        )
        for run, item in answers
    ]


CACHE_VECTORS = 100_000
"""Vectors kept in memory from one batch to the next (about 150 MB at 384 dimensions): the
strings of a batch are often the last one's (the same gold and context KGs, the same labels).
Past it the next batch starts an empty cache, so memory does not grow with the database."""


def _score_chunks(
    store: Store, enc: Encoder, config: S3KGConfig, chunks: Sequence[Sequence[tuple[int, int]]]
) -> Iterator[tuple[list[ScoreRecord], list[tuple[str, Any]]]]:
    """Score the batches one after another, a bounded cache of vectors carried between them."""
    scorer = KGScorer(enc, config, cache=EmbeddingCache(enc))
    for chunk in chunks:
        if len(scorer.cache) > CACHE_VECTORS:
            scorer = KGScorer(enc, config, cache=EmbeddingCache(enc))
        yield _score_chunk(store, scorer, chunk)


def _score_chunk(
    store: Store, scorer: KGScorer, answers: Sequence[tuple[int, int]]
) -> tuple[list[ScoreRecord], list[tuple[str, Any]]]:
    """Score one batch: its own KGs read, and the stored vectors its cache does not hold yet."""
    cache, enc = scorer.cache, scorer.encoder
    with store.connect() as con:
        jobs = _jobs(store, con, answers, scorer.needs_texts)
        pairs = [(_triples(j.answer), _triples(ref)) for j in jobs for ref in (j.gold, j.context)]
        texts = None
        if scorer.needs_texts:
            texts = [
                (a, ref)
                for j in jobs
                for a, g, c in [j.texts or (None, None, None)]
                for ref in (g, c)
            ]
        needed = [t for t in scorer.strings_needed(pairs, texts=texts) if t not in cache]
        cache.update(queries.embeddings_of(con, enc.name, needed))
    prepare = getattr(enc, "prepare", None)
    if prepare is not None and jobs:
        prepare(4 * sum(len(_triples(kg)) for j in jobs for kg in (j.answer, j.gold, j.context)))
    return score_batch(scorer, jobs)


@dataclass(frozen=True)
class ScoreJob:
    """One answer to score, with its three stored KGs (``None`` where none is stored)."""

    run_id: int
    item_id: int
    answer: KGRecord | None
    gold: KGRecord | None
    context: KGRecord | None
    texts: tuple[str | None, str | None, str | None] | None = None
    """``(answer, gold answer, context)`` texts: loaded only for a mode that uses them."""


def _texts(
    con: Any, answers: Sequence[tuple[int, int]]
) -> dict[tuple[int, int], tuple[str | None, str | None, str | None]]:
    """``(answer, gold answer, context)`` of these answers, by ``(run_id, item_id)``."""
    out = {}
    for run, item, answer, gold, context in queries.texts_of(con, answers):
        out[(int(run), int(item))] = (_text(answer), _text(gold), _text(context))
    return out


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _triples(rec: KGRecord | None) -> tuple[Triple, ...]:
    return rec.triples if rec is not None else ()


def score_batch(
    scorer: KGScorer, jobs: Sequence[ScoreJob]
) -> tuple[list[ScoreRecord], list[tuple[str, Any]]]:
    """Score a batch of answers: their score records and the embeddings newly computed."""
    flushed = len(scorer.cache)
    texts = None
    if scorer.needs_texts:
        texts = [j.texts or (None, None, None) for j in jobs]
    results = score_cus_many(
        [(_triples(j.answer), _triples(j.gold), _triples(j.context)) for j in jobs],
        scorer,
        texts=texts,
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
            _status(res.gold, j.answer, j.gold, "gold"),
            res.context.s_wl,
            res.context.s_sbert,
            _status(res.context, j.answer, j.context, "context"),
            _detail(res.gold),
            _detail(res.context),
        )
        for j, res in zip(jobs, results, strict=True)
    ]
    return records, list(scorer.cache.items(since=flushed))
