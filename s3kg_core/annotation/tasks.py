"""Annotation tasks: who sees which answers, the units judged on each, queues and progress.

A task (``s3kg annotate assign``) picks answers (all eligible ones of some runs, or a seeded
sample), gives each to ``overlap`` annotators (:mod:`~s3kg_core.annotation.assign`), and fixes its
*units*: TAU's explanation of each answer, pair by pair (aligned, relation mismatch, entity
mismatch, roles swapped) and triple by triple (extra, missing), computed once when the task is
made, so every annotator judges the same units whatever TAU's threshold becomes later. An
annotator's item is *done* when every unit of it has a decision of theirs in effect (``skip``
counts: the unit was seen).

A queue is dealt out across TAU's categories (:func:`~s3kg_core.annotation.assign.
stratified_order` over the task's seeded order): its first answers hold an aligned pair, a
mismatch, an extra and a missing triple, as far as the task has them, so each category's
precision has an estimate after a few decisions. The order is worked out when the queue is
read, from what the task stored, so a task made before it follows it too; annotators whose
queues hold the same answers (overlap: every annotator) get the same order, so their first
decisions fall on the same units and agreement has something to measure early.

Examples
--------
>>> p = QueueProgress(task_id=1, annotator="ann", done=7, total=40, units_decided=30,
...                   units_total=160, next_item=(2, 14))
>>> p.line()
'your queue: 7 of 40 done'
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import AnnotationError, ConfigError
from ..kg import Triple
from ..names import clean_name
from ..normalize import normalize_triples
from ..scoring.signature import TauSignature
from ..scoring.tau import TAU_CATEGORIES, TauResult, TripletAnalyzer
from ..stages.scored import encoder_for, resolve_signature
from ..stages.tau import resolve_threshold
from ..store import annotation_queries as aq
from ..store.store import Store
from .assign import assign_items, sample_items, stratified_order
from .log import Triple3, now
from .names import normalize_annotator

__all__ = [
    "QueueItem",
    "QueueProgress",
    "TaskReport",
    "Unit",
    "create_task",
    "extracted_forms",
    "item_units",
    "queue",
    "queue_progress",
    "task_progress",
    "tau_encoder",
    "units_of",
]


@dataclass(frozen=True)
class Unit:
    """One thing TAU said of an answer, to be confirmed or rejected.

    ``gold`` / ``answer`` are the triples as TAU compared them (``None`` for the side an extra
    or missing triple lacks); ``gold_extracted`` / ``answer_extracted`` the extracted triples
    they came from; ``similarity`` the pair's sentence cosine (``None`` for a single triple).
    """

    run_id: int
    item_id: int
    unit: int
    category: str
    gold: Triple3 | None
    answer: Triple3 | None
    gold_extracted: tuple[Triple3, ...]
    answer_extracted: tuple[Triple3, ...]
    similarity: float | None

    def to_row(self) -> dict[str, Any]:
        """The row stored in ``task_units``."""
        return {
            "run_id": self.run_id,
            "item_id": self.item_id,
            "unit": self.unit,
            "category": self.category,
            "gold_triple": self.gold,
            "answer_triple": self.answer,
            "gold_extracted": self.gold_extracted,
            "answer_extracted": self.answer_extracted,
            "similarity": self.similarity,
        }

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Unit:
        """A unit from a stored row."""
        return cls(
            run_id=int(row["run_id"]),
            item_id=int(row["item_id"]),
            unit=int(row["unit"]),
            category=str(row["category"]),
            gold=row["gold_triple"],
            answer=row["answer_triple"],
            gold_extracted=row["gold_extracted"] or (),
            answer_extracted=row["answer_extracted"] or (),
            similarity=None if row["similarity"] is None else float(row["similarity"]),
        )


def extracted_forms(
    triples: Iterable[Triple], *, lemmatize: bool = True
) -> dict[Triple3, tuple[Triple3, ...]]:
    """Normalised triple (as TAU compares it) -> the extracted triples it came from.

    Examples
    --------
    >>> extracted_forms([Triple("The paper", "published_in", "Nature")])
    {('the paper', 'publish in', 'nature'): (('The paper', 'published_in', 'Nature'),)}
    """
    out: dict[Triple3, list[Triple3]] = {}
    for t in triples:
        for norm in normalize_triples([t], lemmatize=lemmatize):
            out.setdefault(tuple(norm.to_list()), []).append(tuple(t.to_list()))
    return {k: tuple(v) for k, v in out.items()}


def units_of(
    run_id: int,
    item_id: int,
    result: TauResult,
    gold: Sequence[Triple],
    answer: Sequence[Triple],
) -> list[Unit]:
    """TAU's explanation of one answer as units, in TAU's order of categories.

    ``gold`` and ``answer`` are the extracted KGs the result was computed from.

    Examples
    --------
    >>> from s3kg_core.scoring.tau import Mismatch
    >>> r = TauResult(relation_mismatch=(Mismatch(Triple("a", "cause", "b"),
    ...     Triple("a", "reduce", "b"), "relation", "relation", 0.8),),
    ...     extra=(Triple("c", "be", "d"),))
    >>> [(u.category, u.gold, u.answer) for u in units_of(1, 2, r, [], [])]
    [('relation_mismatch', ('a', 'cause', 'b'), ('a', 'reduce', 'b')), ('extra', None, ('c', 'be', 'd'))]
    """  # noqa: E501
    raw_gold, raw_answer = extracted_forms(gold), extracted_forms(answer)
    rows: list[tuple[str, Triple | None, Triple | None, float | None]] = [
        *(("aligned", a.gold, a.answer, a.similarity) for a in result.aligned),
        *(("relation_mismatch", m.gold, m.answer, m.similarity) for m in result.relation_mismatch),
        *(("entity_mismatch", m.gold, m.answer, m.similarity) for m in result.entity_mismatch),
        *(("roles_swapped", m.gold, m.answer, m.similarity) for m in result.roles_swapped),
        *(("extra", None, t, None) for t in result.extra),
        *(("missing", t, None, None) for t in result.missing),
    ]
    out = []
    for n, (category, g, a, similarity) in enumerate(rows):
        g3 = None if g is None else tuple(g.to_list())
        a3 = None if a is None else tuple(a.to_list())
        out.append(
            Unit(
                run_id,
                item_id,
                n,
                category,
                g3,
                a3,
                raw_gold.get(g3, ()) if g3 is not None else (),
                raw_answer.get(a3, ()) if a3 is not None else (),
                similarity,
            )
        )
    return out


@dataclass(frozen=True)
class TaskReport:
    """What :func:`create_task` made."""

    task_id: int
    items: int
    eligible: int
    units: int
    loads: dict[str, int]
    overlap: int
    tau_signature: str

    def summary(self) -> str:
        """One line for the command line."""
        loads = ", ".join(f"{name} {n}" for name, n in self.loads.items())
        return (
            f"task {self.task_id}: {self.items} answers of {self.eligible} eligible, "
            f"{self.units} units, each answer seen by {self.overlap}; items per annotator: "
            f"{loads}; {self.tau_signature}"
        )


def tau_encoder(
    store: Store, encoder: str | Encoder | None = None, signature: str | None = None
) -> Encoder:
    """The encoder TAU runs on (a name, path or object; default: the scores').

    ``encoder`` when given, else the one of ``signature``'s scores (default: the latest),
    else MiniLM when nothing is scored.
    """
    if isinstance(encoder, str):
        return load_encoder(encoder)
    if encoder is not None:
        return encoder
    scored = resolve_signature(store, signature)
    return load_encoder(encoder_for(store, scored) if scored is not None else "minilm")


def create_task(
    store: Store,
    annotators: Sequence[str],
    overlap: int,
    *,
    run_ids: Sequence[int] | None = None,
    sample: int | None = None,
    seed: int = 0,
    name: str | None = None,
    encoder: str | Encoder | None = None,
    signature: str | None = None,
    threshold: float | str | None = None,
) -> TaskReport:
    """Make an annotation task: answers, who sees each, and the units judged on each.

    Parameters
    ----------
    store
        The database.
    annotators
        The annotators' names (normalised; see :mod:`~s3kg_core.annotation.names`).
    overlap
        How many annotators see each answer.
    run_ids
        The runs to draw answers from (default: every run).
    sample, seed
        Draw ``sample`` of the eligible answers (default: all), seeded; the seed also orders
        the queues and breaks ties in the assignment.
    name
        A name to show for the task.
    encoder, signature, threshold
        TAU's encoder (default: the one of ``signature``'s scores, else the latest, else
        MiniLM) and triple threshold (see :func:`~s3kg_core.stages.tau.resolve_threshold`).

    Returns
    -------
    TaskReport

    Raises
    ------
    AnnotationError
        If a name is refused (an annotator's, or the task's: :func:`s3kg_core.names.
        clean_name`), ``overlap`` is out of range, or there is nothing to annotate.
    """
    names = [normalize_annotator(a) for a in annotators]
    assign_items([0], names, overlap)  # checks names and overlap before any work
    if name is not None:
        try:  # the rule of every name: no control or invisible character, 200 at most
            name = clean_name(name, "a task's name")
        except ConfigError as exc:
            raise AnnotationError(str(exc)) from exc
    with store.connect() as con:
        eligible = aq.eligible_items(con, run_ids)
    if not eligible:
        where = "" if run_ids is None else f" in run(s) {', '.join(map(str, run_ids))}"
        raise AnnotationError(
            f"no answer to annotate{where}: an answer needs its gold and answer KGs "
            "(`s3kg extract`)"
        )
    picked = sample_items(eligible, sample, seed=seed)
    enc = tau_encoder(store, encoder, signature)
    triple_threshold, source = resolve_threshold(store, threshold, enc.name)
    with store.connect() as con:
        kgs = store.load_kgs(con, sorted({r for r, _ in picked}))
        cache = EmbeddingCache(enc)
        cache.update(store.load_embeddings(con, enc.name))
    flushed = len(cache)

    def triples(run: int, item: int, source: str) -> tuple[Triple, ...]:
        rec = kgs.get((run, item, source))
        return rec.triples if rec is not None else ()

    analyzer = TripletAnalyzer(enc, cache=cache, triple_threshold=triple_threshold)
    pairs = [(triples(r, i, "gold"), triples(r, i, "answer")) for r, i in picked]
    results = analyzer.analyse_many(pairs)
    units = {
        key: found
        for key, (gold, answer), result in zip(picked, pairs, results, strict=True)
        if (found := units_of(*key, result, gold, answer))
    }
    if not units:
        raise AnnotationError("TAU finds nothing to judge in the chosen answers (empty KGs)")
    assignment = assign_items(list(units), names, overlap, seed=seed)
    signature_text = TauSignature(
        enc.name, analyzer.triple_threshold, analyzer.component_threshold, source
    ).format()
    settings = {
        "runs": None if run_ids is None else sorted(run_ids),
        "sample": sample,
        "seed": seed,
        "eligible": len(eligible),
        "items": len(units),
        "tau": signature_text,
    }
    with store.transaction() as con:
        task_id = aq.insert_task(
            con,
            name=name,
            created_at=now(),
            annotators=names,
            overlap=overlap,
            settings=json.dumps(settings),
        )
        aq.insert_task_items(
            con,
            task_id,
            [
                (who, position, run, item)
                for who, queue_ in assignment.by_annotator.items()
                for position, (run, item) in enumerate(queue_)
            ],
        )
        aq.insert_task_units(con, task_id, [u.to_row() for us in units.values() for u in us])
        store.put_embeddings(con, enc.name, cache.items(since=flushed))
    return TaskReport(
        task_id=task_id,
        items=len(units),
        eligible=len(eligible),
        units=sum(len(us) for us in units.values()),
        loads={n: len(q) for n, q in assignment.by_annotator.items()},
        overlap=overlap,
        tau_signature=signature_text,
    )


def item_units(
    con: duckdb.DuckDBPyConnection, task_id: int, run_id: int, item_id: int
) -> list[Unit]:
    """The units of one answer in a task, in order (empty when the task does not hold it)."""
    return [Unit.from_row(r) for r in aq.task_units(con, task_id, run_id, item_id)]


@dataclass(frozen=True)
class QueueItem:
    """One answer in an annotator's queue and how far they are with it.

    ``position`` is its place in the queue (from 0); ``categories`` the TAU categories of its
    units, in TAU's order.
    """

    position: int
    run_id: int
    item_id: int
    units: int
    decided: int
    categories: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        """Every unit has a decision of the annotator's in effect."""
        return self.decided >= self.units


def _check_task(con: duckdb.DuckDBPyConnection, task_id: int) -> dict[str, Any]:
    found = aq.task(con, task_id)
    if found is None:
        raise AnnotationError(f"there is no annotation task {task_id}; see `s3kg annotate tasks`")
    return found


def _in_tau_order(categories: Iterable[str]) -> tuple[str, ...]:
    rank = {c: n for n, c in enumerate(TAU_CATEGORIES)}
    return tuple(sorted(categories, key=lambda c: (rank.get(c, len(rank)), c)))


def queue(con: duckdb.DuckDBPyConnection, task_id: int, annotator: str) -> list[QueueItem]:
    """An annotator's queue in a task, in order (empty when they are not in the task).

    The task's seeded order of the annotator's answers, dealt out across TAU's categories
    (:func:`~s3kg_core.annotation.assign.stratified_order`): the first answers cover every
    category the queue holds. Done answers keep their place (the page opens on the first
    undone one).

    Raises
    ------
    AnnotationError
        If the task does not exist, or the name is refused.
    """
    _check_task(con, task_id)
    rows = {
        (int(r["run_id"]), int(r["item_id"])): r
        for r in aq.queue_rows(con, task_id, normalize_annotator(annotator))
    }
    strata = {key: _in_tau_order(r["categories"] or ()) for key, r in rows.items()}
    return [
        QueueItem(
            position,
            run,
            item,
            int(rows[(run, item)]["units"]),
            int(rows[(run, item)]["decided"]),
            strata[(run, item)],
        )
        for position, (run, item) in enumerate(stratified_order(list(rows), strata, TAU_CATEGORIES))
    ]


@dataclass(frozen=True)
class QueueProgress:
    """How far an annotator is with their queue, and where to go next."""

    task_id: int
    annotator: str
    done: int
    total: int
    units_decided: int
    units_total: int
    next_item: tuple[int, int] | None

    def line(self) -> str:
        """The page's one-line summary."""
        return f"your queue: {self.done} of {self.total} done"


def queue_progress(
    con: duckdb.DuckDBPyConnection,
    task_id: int,
    annotator: str,
    *,
    after: tuple[int, int] | None = None,
) -> QueueProgress:
    """Progress through an annotator's queue, and their next undone answer.

    ``next_item`` is the first undone answer of the queue, or with ``after`` (an answer in
    the queue) the first undone one after it, wrapping round; ``None`` when all are done.

    Raises
    ------
    AnnotationError
        If the task does not exist, or the name is refused.
    """
    items = queue(con, task_id, annotator)
    keys = [(q.run_id, q.item_id) for q in items]
    start = keys.index(after) + 1 if after in keys else 0
    ring = [*items[start:], *items[:start]]
    following = next(((q.run_id, q.item_id) for q in ring if not q.done), None)
    return QueueProgress(
        task_id=task_id,
        annotator=normalize_annotator(annotator),
        done=sum(q.done for q in items),
        total=len(items),
        units_decided=sum(min(q.decided, q.units) for q in items),
        units_total=sum(q.units for q in items),
        next_item=following,
    )


def task_progress(con: duckdb.DuckDBPyConnection, task_id: int) -> list[QueueProgress]:
    """Every annotator's progress in a task, in the task's order of names.

    Raises
    ------
    AnnotationError
        If the task does not exist.
    """
    found = _check_task(con, task_id)
    return [queue_progress(con, task_id, name) for name in found["annotators"]]
