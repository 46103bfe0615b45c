"""The verdict log: every decision saved the moment it is made, undo, adjudication, final labels.

A *decision* is one person's verdict on one pair of one answer: ``confirm`` or ``reject`` what
TAU said of the pair (its category: aligned, relation or entity mismatch, roles swapped, extra,
missing),
``skip`` it, or ``add`` a pair TAU missed. Decisions are appended to the store's log
(:mod:`s3kg_core.store.annotation_queries`), each in its own short transaction, with the time
and the row it replaces; nothing is ever updated or deleted. Taking a decision back
(:func:`withdraw`) and undoing the last act (:func:`undo_last`) are new rows too, so the log
says who decided what, when, and what they changed their mind about.

The *current verdicts* are derived from the log. An adjudicator's decision on a pair is its
*final label*; a pair nobody adjudicated takes the majority of its annotators' labels (a tie
gives none). :func:`disagreements` lists the pairs whose annotators' labels differ.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "log.duckdb"))
>>> pair = dict(run_id=1, item_id=7, gold=("a", "r", "b"), answer=("a", "r", "c"),
...             category="aligned")
>>> _ = save_decision(store, Decision("ann", verdict="confirm", **pair))
>>> _ = save_decision(store, Decision("bob", verdict="reject", **pair))
>>> with store.connect() as con:
...     disagreements(con)[["verdicts", "label"]].to_dict("records")
[{'verdicts': {'ann': 'confirm', 'bob': 'reject'}, 'label': None}]
>>> _ = adjudicate(store, "cy", label="reject", **pair)
>>> with store.connect() as con:
...     final_labels(con)[["label", "source"]].to_dict("records")
[{'label': 'reject', 'source': 'adjudicated'}]
>>> undo_last(store, "bob").restored is None  # bob's reject undone: no verdict of his now
True
"""

from __future__ import annotations

import numbers
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import duckdb
import pandas as pd

from ..errors import AnnotationError
from ..scoring.tau import TAU_CATEGORIES
from ..store import annotation_queries as aq
from ..store.store import Store
from .agreement import Judgement
from .names import normalize_annotator

__all__ = [
    "CATEGORIES",
    "LABELS",
    "ROLES",
    "VERDICTS",
    "Decision",
    "Entry",
    "Undone",
    "adjudicate",
    "current_verdicts",
    "disagreements",
    "final_labels",
    "judgements",
    "now",
    "save_decision",
    "save_decisions",
    "undo_last",
    "withdraw",
]

VERDICTS = ("confirm", "reject", "skip", "add")
"""What a person decides on a pair (``add``: a pair TAU missed, added by hand)."""

LABELS = ("confirm", "reject", "add")
"""The decisions that label a pair (``skip`` labels nothing)."""

ROLES = ("annotator", "adjudicator")
"""Who decides: annotators label pairs; an adjudicator's decision is a pair's final label."""

CATEGORIES = TAU_CATEGORIES
"""TAU's categories of a pair (of a single triple, for ``extra`` and ``missing``):
:data:`s3kg_core.scoring.tau.TAU_CATEGORIES`."""

_ACTS = (*VERDICTS, "withdraw")

Triple3 = tuple[str, ...]
UnitKey = tuple[int, int, Triple3 | None, Triple3 | None]


def now() -> datetime:
    """The time stamp the log records: UTC, without a time zone (DuckDB ``TIMESTAMP``)."""
    return datetime.now(UTC).replace(tzinfo=None)


def _triple(value: Any, what: str) -> Triple3 | None:
    if value is None:
        return None
    if isinstance(value, str) or len(value) != 3 or not all(isinstance(x, str) for x in value):
        raise AnnotationError(f"{what} must be three strings (head, relation, tail); got {value!r}")
    return tuple(value)


def _extracted(value: Iterable[Any] | None, what: str) -> tuple[Triple3, ...]:
    if value is None:
        return ()
    out = []
    for t in value:
        triple = _triple(t, what)
        if triple is not None:
            out.append(triple)
    return tuple(out)


@dataclass(frozen=True)
class Decision:
    """One person's act on one pair, before it is saved.

    Parameters
    ----------
    annotator
        The person's name (normalised; see :func:`~s3kg_core.annotation.names.normalize_annotator`).
    run_id, item_id
        The answer.
    gold, answer
        The pair's triples as TAU compared them (normalised), ``None`` for the missing side of
        an ``extra`` (no gold) or ``missing`` (no answer) triple.
    verdict
        One of :data:`VERDICTS`, or ``withdraw`` to take a decision back.
    category
        TAU's category of the pair (one of :data:`CATEGORIES`); ``None`` for an added pair.
    gold_extracted, answer_extracted
        The triples as extracted that the compared ones came from (several may normalise to one).
    task_id
        The task the decision was made in, if any.
    role
        ``annotator`` or ``adjudicator``.

    Raises
    ------
    AnnotationError
        If a field is not one of its allowed values (the name raises its own subclass).
    """

    annotator: str
    run_id: int
    item_id: int
    gold: Triple3 | None
    answer: Triple3 | None
    verdict: str
    category: str | None = None
    gold_extracted: tuple[Triple3, ...] = ()
    answer_extracted: tuple[Triple3, ...] = ()
    task_id: int | None = None
    role: str = "annotator"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "annotator", normalize_annotator(self.annotator))
        set_(self, "gold", _triple(self.gold, "gold"))
        set_(self, "answer", _triple(self.answer, "answer"))
        set_(self, "gold_extracted", _extracted(self.gold_extracted, "gold_extracted"))
        set_(self, "answer_extracted", _extracted(self.answer_extracted, "answer_extracted"))
        if self.gold is None and self.answer is None:
            raise AnnotationError("a decision needs a gold triple, an answer triple, or both")
        if self.verdict not in _ACTS:
            raise AnnotationError(
                f"verdict must be one of {', '.join(_ACTS)}; got {self.verdict!r}"
            )
        if self.role not in ROLES:
            raise AnnotationError(f"role must be one of {', '.join(ROLES)}; got {self.role!r}")
        if self.category is not None and self.category not in CATEGORIES:
            raise AnnotationError(
                f"category must be one of {', '.join(CATEGORIES)} or none; got {self.category!r}"
            )
        for name in ("run_id", "item_id", "task_id"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise AnnotationError(f"{name} must be an integer; got {value!r}")
            set_(self, name, int(value))  # a NumPy integer from a frame is welcome
        if self.role == "adjudicator" and self.verdict == "skip":
            raise AnnotationError("an adjudicator gives a label (confirm, reject, add), not skip")

    @property
    def key(self) -> tuple[str, str, int, int, Triple3 | None, Triple3 | None]:
        """``(annotator, role, run_id, item_id, gold, answer)``: what a later decision replaces."""
        return (self.annotator, self.role, self.run_id, self.item_id, self.gold, self.answer)

    def to_row(self, *, replaces: int | None, source: str, created_at: datetime) -> dict[str, Any]:
        """The log row of this decision (a new ``uid``)."""
        return {
            "uid": uuid.uuid4().hex,
            "created_at": created_at,
            "annotator": self.annotator,
            "role": self.role,
            "task_id": self.task_id,
            "run_id": self.run_id,
            "item_id": self.item_id,
            "category": self.category,
            "gold_triple": self.gold,
            "answer_triple": self.answer,
            "gold_extracted": self.gold_extracted,
            "answer_extracted": self.answer_extracted,
            "verdict": self.verdict,
            "replaces": replaces,
            "source": source,
        }


@dataclass(frozen=True)
class Entry:
    """One row of the log, as stored (:data:`~s3kg_core.store.annotation_queries.LOG_COLUMNS`)."""

    verdict_id: int
    uid: str
    created_at: datetime
    annotator: str
    role: str
    task_id: int | None
    run_id: int
    item_id: int
    category: str | None
    gold: Triple3 | None
    answer: Triple3 | None
    gold_extracted: tuple[Triple3, ...]
    answer_extracted: tuple[Triple3, ...]
    verdict: str
    replaces: int | None
    source: str | None = field(default=None)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Entry:
        """An entry from a row of the store's queries."""
        return cls(
            verdict_id=int(row["verdict_id"]),
            uid=str(row["uid"]),
            created_at=row["created_at"],
            annotator=str(row["annotator"]),
            role=str(row["role"]),
            task_id=None if row["task_id"] is None else int(row["task_id"]),
            run_id=int(row["run_id"]),
            item_id=int(row["item_id"]),
            category=row["category"],
            gold=row["gold_triple"],
            answer=row["answer_triple"],
            gold_extracted=row["gold_extracted"] or (),
            answer_extracted=row["answer_extracted"] or (),
            verdict=str(row["verdict"]),
            replaces=None if row["replaces"] is None else int(row["replaces"]),
            source=row["source"],
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (time as ISO text, triples as lists)."""
        out = asdict(self)
        out["created_at"] = self.created_at.isoformat()
        for side in ("gold", "answer"):
            out[side] = None if out[side] is None else list(out[side])
            out[f"{side}_extracted"] = [list(t) for t in out[f"{side}_extracted"]]
        return out


def _append(
    con: duckdb.DuckDBPyConnection, decision: Decision, source: str, created_at: datetime
) -> Entry | None:
    """Append ``decision`` unless it changes nothing; the new entry, or ``None``."""
    before = aq.effective_entry(con, *decision.key)
    if before is None and decision.verdict == "withdraw":
        return None  # nothing to take back
    same = before is not None and before["verdict"] == decision.verdict
    if same and decision.category in (None, before["category"]):  # type: ignore[index]
        return None  # the same verdict again
    row = decision.to_row(
        replaces=None if before is None else int(before["verdict_id"]),
        source=source,
        created_at=created_at,
    )
    if decision.verdict == "withdraw" and before is not None:  # the pair's facts, as decided
        for name in ("category", "gold_extracted", "answer_extracted", "task_id"):
            row[name] = row[name] or before[name]
    if decision.task_id is not None and not (decision.gold_extracted or decision.answer_extracted):
        unit = aq.task_unit(con, decision.task_id, *decision.key[2:])
        if unit is not None:  # the task knows the pair: record it as extracted too
            for name in ("gold_extracted", "answer_extracted", "category"):
                row[name] = row[name] or unit[name]
    row["verdict_id"] = aq.insert_verdict(con, row)
    return Entry.from_row(row)


def save_decisions(
    store: Store, decisions: Sequence[Decision], *, source: str = "api"
) -> list[Entry | None]:
    """Append decisions, in order, in one short transaction; the entry written for each.

    A decision that changes nothing (the verdict already in effect on the pair, or a
    withdrawal of a pair without one) writes nothing and gives ``None``.
    """
    if not decisions:
        return []
    stamp = now()
    with store.transaction() as con:
        return [_append(con, d, source, stamp) for d in decisions]


def save_decision(store: Store, decision: Decision, *, source: str = "api") -> Entry | None:
    """Append one decision at once (its own short transaction); the entry, or ``None``.

    ``None`` when it changes nothing (see :func:`save_decisions`). ``source`` says where it was
    made (``page``, ``cli``, ``import:FILE``).
    """
    return save_decisions(store, [decision], source=source)[0]


def withdraw(
    store: Store,
    annotator: str,
    run_id: int,
    item_id: int,
    gold: Triple3 | None,
    answer: Triple3 | None,
    *,
    role: str = "annotator",
    source: str = "api",
) -> Entry | None:
    """Take back a person's decision on a pair (a ``withdraw`` row); ``None`` if there was none."""
    decision = Decision(annotator, run_id, item_id, gold, answer, "withdraw", role=role)
    return save_decision(store, decision, source=source)


@dataclass(frozen=True)
class Undone:
    """What :func:`undo_last` did: the act undone and the decision in effect now on its pair."""

    undone: Entry
    undo: Entry
    restored: Entry | None

    @property
    def verdict(self) -> str | None:
        """The verdict in effect now on the pair (``None``: none)."""
        return None if self.restored is None else self.restored.verdict


def undo_last(
    store: Store, annotator: str, *, role: str = "annotator", source: str = "api"
) -> Undone | None:
    """Undo a person's last decision or withdrawal (an ``undo`` row); ``None`` if none is left.

    Repeated undos walk back through the person's acts, newest first; the pair of each undone
    act returns to what was in effect before it.
    """
    name = normalize_annotator(annotator)
    if role not in ROLES:
        raise AnnotationError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    with store.transaction() as con:
        last = aq.last_undoable(con, name, role)
        if last is None:
            return None
        row = {
            **{k: last[k] for k in aq.LOG_COLUMNS if k != "verdict_id"},
            "uid": uuid.uuid4().hex,
            "created_at": now(),
            "verdict": "undo",
            "replaces": int(last["verdict_id"]),
            "source": source,
        }
        row["verdict_id"] = aq.insert_verdict(con, row)
        before = last["replaces"]
        restored = aq.verdict_entries(con, [before]).get(before) if before is not None else None
    now_in_effect = None
    if restored is not None and restored["verdict"] != "withdraw":
        now_in_effect = Entry.from_row(restored)
    return Undone(Entry.from_row(last), Entry.from_row(row), now_in_effect)


def adjudicate(
    store: Store,
    adjudicator: str,
    run_id: int,
    item_id: int,
    gold: Triple3 | None,
    answer: Triple3 | None,
    label: str,
    *,
    category: str | None = None,
    task_id: int | None = None,
    source: str = "api",
) -> Entry | None:
    """Record the final label of a pair (``confirm``, ``reject`` or ``add``) by an adjudicator.

    It overrides the annotators' majority in :func:`final_labels`; the adjudicator's own
    :func:`undo_last` (``role="adjudicator"``) or :func:`withdraw` takes it back.
    """
    if label not in LABELS:
        raise AnnotationError(f"a final label is one of {', '.join(LABELS)}; got {label!r}")
    decision = Decision(
        adjudicator,
        run_id,
        item_id,
        gold,
        answer,
        label,
        category=category,
        task_id=task_id,
        role="adjudicator",
    )
    return save_decision(store, decision, source=source)


def current_verdicts(
    con: duckdb.DuckDBPyConnection,
    *,
    run_id: int | None = None,
    annotator: str | None = None,
    role: str | None = "annotator",
) -> pd.DataFrame:
    """The decisions in effect (all, or of one run, annotator or role), in the order made.

    Columns :data:`~s3kg_core.store.annotation_queries.LOG_COLUMNS`; triples are tuples.
    Withdrawn and undone decisions are not there; an unknown verdict migrated from an old file
    is (it labels nothing: see :data:`LABELS`).
    """
    rows = aq.current_verdicts(con, run_id=run_id, annotator=annotator, role=role)
    return pd.DataFrame(rows, columns=list(aq.LOG_COLUMNS))


def _unit(row: Mapping[str, Any]) -> UnitKey:
    return (int(row["run_id"]), int(row["item_id"]), row["gold_triple"], row["answer_triple"])


@dataclass(frozen=True)
class _Scope:
    """What a task covers: its units by key, its answers and its annotators."""

    units: dict[UnitKey, dict[str, Any]]
    answers: set[tuple[int, int]]
    team: set[str]

    def covers(self, key: UnitKey) -> bool:
        """A unit of the task, or another pair of one of its answers (a pair added there)."""
        return key in self.units or key[:2] in self.answers


def _scope(con: duckdb.DuckDBPyConnection, task_id: int | None) -> _Scope | None:
    """What task ``task_id`` covers (``None``: no task, everything)."""
    if task_id is None:
        return None
    found = aq.task(con, task_id)
    if found is None:
        raise AnnotationError(f"there is no annotation task {task_id}; see `s3kg annotate tasks`")
    units = {_unit(u): u for u in aq.task_units(con, task_id)}
    answers = {(int(r["run_id"]), int(r["item_id"])) for r in aq.task_items(con, task_id)}
    return _Scope(units, answers, set(found["annotators"]))


def _votes(
    con: duckdb.DuckDBPyConnection, task_id: int | None, run_id: int | None
) -> tuple[dict[UnitKey, dict[str, Any]], dict[UnitKey, dict[str, str]], dict[UnitKey, str]]:
    """Per pair: what is known of it, the annotators' labels, the adjudicated label.

    With a task: the task's units and the pairs added on its answers, by its annotators (any
    adjudicator counts); a unit's category is the task's.
    """
    scope = _scope(con, task_id)
    info: dict[UnitKey, dict[str, Any]] = {}
    votes: dict[UnitKey, dict[str, str]] = {}
    adjudicated: dict[UnitKey, str] = {}
    for row in aq.current_verdicts(con, run_id=run_id):
        key = _unit(row)
        if row["verdict"] not in LABELS or (scope is not None and not scope.covers(key)):
            continue
        unit = scope.units.get(key) if scope is not None else None
        fixed = unit is not None
        known = info.setdefault(key, dict(unit) if unit is not None else {})
        for name in ("category", "gold_extracted", "answer_extracted"):
            if row[name] and not (fixed and known.get(name)):
                known[name] = row[name]
        if row["role"] == "adjudicator":
            adjudicated[key] = str(row["verdict"])  # the latest adjudicator wins
        elif scope is None or row["annotator"] in scope.team:
            votes.setdefault(key, {})[str(row["annotator"])] = str(row["verdict"])
    return info, votes, adjudicated


_UNIT_COLUMNS = ["run_id", "item_id", "category", "gold_triple", "answer_triple"]
_RAW_COLUMNS = ["gold_extracted", "answer_extracted"]


def _majority(votes: Mapping[str, str]) -> str | None:
    counts = Counter(votes.values()).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def disagreements(
    con: duckdb.DuckDBPyConnection, *, task_id: int | None = None, run_id: int | None = None
) -> pd.DataFrame:
    """The pairs whose annotators' current labels differ, with each label and any final one.

    Columns ``run_id, item_id, category, gold_triple, answer_triple, gold_extracted,
    answer_extracted, verdicts`` (annotator -> label), ``label`` (the adjudicated label, or
    ``None``): the adjudicator's worklist. ``skip`` is no label, so it disagrees with nothing.
    With ``task_id``, only the task's units and annotators count.

    Raises
    ------
    AnnotationError
        If ``task_id`` names no task.
    """
    info, votes, adjudicated = _votes(con, task_id, run_id)
    rows = [
        {
            **{c: info[key].get(c) for c in ("category", *_RAW_COLUMNS)},
            "run_id": key[0],
            "item_id": key[1],
            "gold_triple": key[2],
            "answer_triple": key[3],
            "verdicts": dict(sorted(v.items())),
            "label": adjudicated.get(key),
        }
        for key, v in votes.items()
        if len(set(v.values())) > 1
    ]
    columns = [*_UNIT_COLUMNS, *_RAW_COLUMNS, "verdicts", "label"]
    return pd.DataFrame(rows, columns=columns)


def final_labels(
    con: duckdb.DuckDBPyConnection, *, task_id: int | None = None, run_id: int | None = None
) -> pd.DataFrame:
    """Every labelled pair with its final label: adjudicated, else the annotators' majority.

    Columns ``run_id, item_id, category, gold_triple, answer_triple, gold_extracted,
    answer_extracted, label, source, votes``: ``source`` is ``adjudicated``, ``majority`` or
    ``tie`` (no majority: ``label`` is ``None``); ``votes`` maps annotator -> label.

    Raises
    ------
    AnnotationError
        If ``task_id`` names no task.
    """
    info, votes, adjudicated = _votes(con, task_id, run_id)
    rows = []
    for key in sorted(set(votes) | set(adjudicated), key=lambda k: (k[0], k[1], str(k[2:]))):
        mine = votes.get(key, {})
        label: str | None
        if key in adjudicated:
            label, source = adjudicated[key], "adjudicated"
        else:
            label = _majority(mine)
            source = "majority" if label is not None else "tie"
        rows.append(
            {
                **{c: info[key].get(c) for c in ("category", *_RAW_COLUMNS)},
                "run_id": key[0],
                "item_id": key[1],
                "gold_triple": key[2],
                "answer_triple": key[3],
                "label": label,
                "source": source,
                "votes": dict(sorted(mine.items())),
            }
        )
    columns = [*_UNIT_COLUMNS, *_RAW_COLUMNS, "label", "source", "votes"]
    return pd.DataFrame(rows, columns=columns)


def judgements(
    con: duckdb.DuckDBPyConnection, *, task_id: int | None = None, run_id: int | None = None
) -> list[Judgement]:
    """The annotators' current labels as agreement input, one per annotator and pair.

    The unit is ``(run_id, item_id, gold, answer)`` and its category TAU's (``None`` for an
    added pair); ``skip`` is no label. With ``task_id``, only the task's units and annotators
    count (see :func:`~s3kg_core.annotation.agreement.agreement_report`).

    Raises
    ------
    AnnotationError
        If ``task_id`` names no task.
    """
    info, votes, _ = _votes(con, task_id, run_id)
    return [
        Judgement(key, who, label, info[key].get("category"))
        for key, labels in votes.items()
        for who, label in sorted(labels.items())
    ]
