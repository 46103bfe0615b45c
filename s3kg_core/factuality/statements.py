"""True and false declarative statements from KG facts, with type-compatible negative sampling.

A sampled fact becomes a *positive* statement through a relation template (FinDKG's 15
relations have their own; any other relation reads ``"{head} {relation words} {tail}."``).
Each positive gets ``negatives_per_positive`` *negatives*: the tail or the head (alternating,
see :func:`build_statements`) is replaced by another entity of the SAME entity type, drawn at
random, and the result is kept only if it is not a known true fact of the KG (every split,
time ignored), not already generated, and not a self-loop (head = tail). A positive and its
negatives form a *group* (``group_id``), which later keeps a fact and its corruptions in the
same split.

The output table (:data:`STATEMENT_COLUMNS`) is written as Parquet by
:func:`write_statements`; :func:`read_statements` checks the columns when reading it back.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import numpy as np
import pandas as pd

from ..errors import FactualityError, InputFormatError
from ..limits import check_file_size
from .kg import FactKG

__all__ = [
    "GENERIC_TEMPLATE",
    "RELATION_TEMPLATES",
    "STATEMENT_COLUMNS",
    "BuildReport",
    "build_statements",
    "read_statements",
    "render_statement",
    "write_statements",
]

RELATION_TEMPLATES: Mapping[str, str] = MappingProxyType(
    {
        "Relate_To": "{head} is related to {tail}.",
        "Control": "{head} controls {tail}.",
        "Operate_In": "{head} operates in {tail}.",
        "Impact": "{head} has an impact on {tail}.",
        "Has": "{head} has {tail}.",
        "Negative_Impact_On": "{head} has a negative impact on {tail}.",
        "Raise": "{head} raises {tail}.",
        "Is_Member_Of": "{head} is a member of {tail}.",
        "Participates_In": "{head} participates in {tail}.",
        "Announce": "{head} announces {tail}.",
        "Invests_In": "{head} invests in {tail}.",
        "Produce": "{head} produces {tail}.",
        "Introduce": "{head} introduces {tail}.",
        "Decrease": "{head} decreases {tail}.",
        "Positive_Impact_On": "{head} has a positive impact on {tail}.",
    }
)
"""Statement templates of FinDKG's relations (``{head}``, ``{tail}`` are entity names)."""

GENERIC_TEMPLATE = "{head} {relation} {tail}."
"""Any other relation: its words (underscores and camel case split, lowercased) between."""

STATEMENT_COLUMNS = (
    "statement_id",
    "group_id",
    "statement",
    "head",
    "relation",
    "tail",
    "head_type",
    "tail_type",
    "label",
    "kind",
    "head_degree",
    "tail_degree",
)
"""Columns of a statements table. ``label`` is True for a true statement; ``kind`` is
``positive``, ``tail-corrupted`` or ``head-corrupted``; degrees count the entity's facts."""

Kind = Literal["positive", "tail-corrupted", "head-corrupted"]
_MAX_TRIES = 50


def _relation_words(relation: str) -> str:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", relation.replace("_", " "))
    return " ".join(spaced.split()).lower()


def render_statement(head: str, relation: str, tail: str) -> str:
    """The declarative statement of one fact.

    Examples
    --------
    >>> render_statement("Apple", "Control", "Beats")
    'Apple controls Beats.'
    >>> render_statement("Curie", "was_born_in", "Warsaw")
    'Curie was born in Warsaw.'
    >>> render_statement("Aspirin", "treatsCondition", "fever")
    'Aspirin treats condition fever.'
    """
    template = RELATION_TEMPLATES.get(relation)
    if template is not None:
        return template.format(head=head, tail=tail)
    return GENERIC_TEMPLATE.format(head=head, relation=_relation_words(relation), tail=tail)


def _statement_id(head: str, relation: str, tail: str) -> str:
    return hashlib.sha256(f"{head}\x1f{relation}\x1f{tail}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class BuildReport:
    """What :func:`build_statements` made.

    ``unfilled`` counts negatives that could not be drawn (no type-compatible entity gave an
    unknown fact within the tries), so the stated ratio was not met for some positives.
    """

    positives: int
    negatives: int
    unfilled: int
    seed: int
    negatives_per_positive: int

    def summary(self) -> str:
        """One line for the CLI.

        Examples
        --------
        >>> BuildReport(2, 3, 1, 0, 2).summary()
        '5 statements: 2 positives, 3 negatives (2 per positive asked, 1 not found), seed 0'
        """
        return (
            f"{self.positives + self.negatives} statements: {self.positives} positives, "
            f"{self.negatives} negatives ({self.negatives_per_positive} per positive asked, "
            f"{self.unfilled} not found), seed {self.seed}"
        )


def build_statements(
    kg: FactKG,
    n: int | None = None,
    *,
    negatives_per_positive: int = 1,
    seed: int = 0,
    corrupt: tuple[Literal["tail", "head"], ...] = ("tail", "head"),
) -> tuple[pd.DataFrame, BuildReport]:
    """Sample ``n`` facts as positives and corrupt each into negatives.

    Parameters
    ----------
    kg
        The facts; all of them count as known true facts, sampled or not.
    n
        How many positives (facts sampled without replacement); ``None``: every fact.
    negatives_per_positive
        Negatives per positive (the ratio of false to true statements); ``0``: none.
    seed
        Seeds the fact sample and the corruptions: the same arguments give the same table.
    corrupt
        Which side a negative replaces: the k-th negative of the i-th positive replaces
        ``corrupt[(i + k) % len(corrupt)]`` (default: tail and head alternate, so one negative
        per positive gives half tail-, half head-corrupted statements).

    Returns
    -------
    tuple of (pandas.DataFrame, BuildReport)
        The statements (:data:`STATEMENT_COLUMNS`, positives first in sample order, each
        followed by its negatives) and what was made.

    Raises
    ------
    FactualityError
        If ``n`` or ``negatives_per_positive`` is negative, or ``corrupt`` is empty or names
        another side.

    Examples
    --------
    >>> kg = FactKG.from_frame("toy", pd.DataFrame({
    ...     "head": ["Apple", "Google", "Apple"], "relation": ["Control", "Control", "Produce"],
    ...     "tail": ["Beats", "YouTube", "iPhone"],
    ...     "head_type": ["COMP", "COMP", "COMP"], "tail_type": ["COMP", "COMP", "PRODUCT"]}))
    >>> table, report = build_statements(kg, 1, seed=1)
    >>> for row in table[["statement", "label", "kind"]].values.tolist():
    ...     print(row)
    ['Apple controls Beats.', True, 'positive']
    ['Apple controls YouTube.', False, 'tail-corrupted']
    """
    if n is not None and n < 0:
        raise FactualityError(f"n must be >= 0; got {n}")
    if negatives_per_positive < 0:
        raise FactualityError(f"negatives_per_positive must be >= 0; got {negatives_per_positive}")
    if not corrupt or any(side not in ("tail", "head") for side in corrupt):
        raise FactualityError(f"corrupt must list 'tail' and/or 'head'; got {corrupt!r}")
    rng = np.random.default_rng(seed)
    facts = kg.facts
    count = len(facts) if n is None else min(n, len(facts))
    order = rng.permutation(len(facts))[:count]
    known = kg.known()
    degrees = kg.degrees()
    by_type: dict[str, list[str]] = {}
    for entity, kind in kg.entity_types.items():
        by_type.setdefault(kind, []).append(entity)
    pools = {k: np.array(sorted(v), dtype=object) for k, v in by_type.items()}

    rows: list[dict[str, object]] = []
    seen: set[tuple[str, str, str]] = set()
    unfilled = 0

    def add(h: str, r: str, t: str, ht: str, tt: str, group: str, kind: Kind) -> None:
        rows.append(
            {
                "statement_id": _statement_id(h, r, t),
                "group_id": group,
                "statement": render_statement(h, r, t),
                "head": h,
                "relation": r,
                "tail": t,
                "head_type": ht,
                "tail_type": tt,
                "label": kind == "positive",
                "kind": kind,
                "head_degree": degrees.get(h, 0),
                "tail_degree": degrees.get(t, 0),
            }
        )
        seen.add((h, r, t))

    positives = 0
    negatives = 0
    for position, index in enumerate(order):
        fact = facts.iloc[int(index)]
        h, r, t = str(fact["head"]), str(fact["relation"]), str(fact["tail"])
        ht, tt = str(fact["head_type"]), str(fact["tail_type"])
        if (h, r, t) in seen:
            continue
        group = _statement_id(h, r, t)
        add(h, r, t, ht, tt, group, "positive")
        positives += 1
        for k in range(negatives_per_positive):
            side = corrupt[(position + k) % len(corrupt)]
            original = t if side == "tail" else h
            pool = pools[kg.entity_types.get(original, tt if side == "tail" else ht)]
            made = False
            for _ in range(_MAX_TRIES):
                other = str(pool[int(rng.integers(len(pool)))])
                if other == original:
                    continue
                triple = (h, r, other) if side == "tail" else (other, r, t)
                if triple[0] == triple[2] or triple in known or triple in seen:
                    continue
                add(*triple, ht, tt, group, f"{side}-corrupted")  # type: ignore[arg-type]
                negatives += 1
                made = True
                break
            unfilled += not made
    table = pd.DataFrame(rows, columns=list(STATEMENT_COLUMNS))
    table["label"] = table["label"].astype(bool)
    table[["head_degree", "tail_degree"]] = table[["head_degree", "tail_degree"]].astype("int64")
    report = BuildReport(positives, negatives, unfilled, seed, negatives_per_positive)
    return table, report


def write_statements(table: pd.DataFrame, path: str | Path) -> Path:
    """Write a statements table (with any extra columns, e.g. labels) as one Parquet file.

    Examples
    --------
    >>> import os, tempfile
    >>> kg = FactKG.from_frame("t", pd.DataFrame(
    ...     {"head": ["a", "c"], "relation": ["r", "r"], "tail": ["b", "d"]}))
    >>> table, _ = build_statements(kg, 1, seed=0)
    >>> p = write_statements(table, os.path.join(tempfile.mkdtemp(), "s.parquet"))
    >>> read_statements(p)["kind"].tolist()
    ['positive', 'tail-corrupted']
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    table.to_parquet(tmp, index=False)
    tmp.replace(path)
    return path


def read_statements(
    path: str | Path, required: tuple[str, ...] = STATEMENT_COLUMNS
) -> pd.DataFrame:
    """Read a statements table back, checking that it has the ``required`` columns.

    Raises
    ------
    InputFormatError
        If the file is missing, unreadable, past the input cap
        (:func:`s3kg_core.limits.check_file_size`, before it is read), or lacks a required
        column.
    """
    path = Path(path)
    if not path.exists():
        raise InputFormatError(
            f"statements file {path} not found (make one with `s3kg factuality build`)"
        )
    check_file_size(path, "a statements file", "split it into smaller files")
    try:
        table = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise InputFormatError(f"cannot read {path} as Parquet: {exc}") from exc
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise InputFormatError(
            f"{path}: missing column(s) {', '.join(missing)}; found "
            f"{', '.join(map(str, table.columns))}"
        )
    return table
