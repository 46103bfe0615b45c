"""Labelled pair sets: two texts, their knowledge graphs and a binary label per pair.

The S3KG authors released nine such sets (``s3kg_release/benchmarks/<name>.csv`` under the shared
data folder) with the columns ``id, paragraph_1, kg_1, paragraph_2, kg_2, label,
perturbation_type``; ``pubmedqa_ranked_faithfulness_400`` adds ``faithfulness_level``. Any CSV
with the six required columns loads the same way; further columns are kept as text in
:attr:`PairSet.extra`.

KG cells are parsed with :func:`s3kg_core.kgio.parse_kg_cell` (strict JSON, then a Python
literal, never ``eval``). A cell that does not parse never stops the load: its KG is kept empty
with the status ``"unparseable"``, and :attr:`PairSet.unparseable` counts such cells.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from ..config import default_data_dir
from ..errors import InputFormatError, KGParseError
from ..kg import Triple
from ..kgio import parse_kg_cell
from ..tables import read_csv_rows

__all__ = [
    "BENCHMARKS_SUBDIR",
    "KG_STATUSES",
    "OPTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "PairSet",
    "list_pair_sets",
    "load_pair_set",
]

BENCHMARKS_SUBDIR = Path("s3kg_release") / "benchmarks"
"""Where the labelled pair sets lie under the data folder."""

REQUIRED_COLUMNS = ("id", "paragraph_1", "kg_1", "paragraph_2", "kg_2", "label")
"""Columns every pair file must have (any order)."""

OPTIONAL_COLUMNS = ("perturbation_type",)
"""Columns with a field of their own on :class:`PairSet` when present."""

KG_STATUSES = ("ok", "empty", "unparseable", "missing")
"""Status of one KG cell: triples parsed; parsed but no triple (``[]`` or blank); not a list of
triples (kept as an empty KG); the row ended before the column (kept as an empty KG)."""


def _frozen_labels(values: Iterable[int]) -> npt.NDArray[np.int64]:
    labels = np.fromiter(values, dtype=np.int64)
    labels.setflags(write=False)
    return labels


@dataclass(frozen=True, eq=False)
class PairSet:
    """A labelled set of text pairs with a knowledge graph for each text.

    All per-pair fields are tuples of the same length; ``labels`` is a read-only ``int64`` array
    of 0 and 1. Equality is identity (the label array has no single truth value); compare
    :meth:`to_dict` results to compare contents.

    Attributes
    ----------
    name
        The file stem, e.g. ``"paws_wiki_400"``.
    ids
        The ``id`` column as text (not necessarily unique in a user's file).
    text_1, text_2
        The two texts of each pair (``paragraph_1`` / ``paragraph_2``).
    kg_1, kg_2
        The triples of each text, one tuple of :class:`~s3kg_core.kg.Triple` per pair.
    labels
        1 for a positive pair (paraphrase, faithful, similar), else 0.
    status_1, status_2
        One of :data:`KG_STATUSES` per pair and side.
    perturbation_type
        The ``perturbation_type`` column, or empty strings when the file has none.
    extra
        Every further column (e.g. ``faithfulness_level``), as text, by column name.
    dropped
        Items of KG cells dropped for not being three strings, over the whole set.
    source
        The file the set was read from (empty for a set built in memory).
    replaced_rows
        The data rows of that file (numbered from 1) whose text that was not UTF-8 (bytes, lone
        surrogates in KG cells) was replaced with U+FFFD (see :mod:`s3kg_core.tables`); like
        ``dropped``, about the file.

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [
    ...     {"id": "a", "paragraph_1": "x", "kg_1": '[["x", "is", "y"]]',
    ...      "paragraph_2": "x.", "kg_2": '[["x", "is", "y"]]', "label": "1"},
    ...     {"id": "b", "paragraph_1": "p", "kg_1": "[]",
    ...      "paragraph_2": "q", "kg_2": "not a list", "label": "0"},
    ... ])
    >>> len(ps), ps.labels.tolist(), ps.status_2, ps.unparseable
    (2, [1, 0], ('ok', 'unparseable'), 1)
    >>> ps.kg_1[0]
    (Triple(head='x', relation='is', tail='y'),)
    """

    name: str
    ids: tuple[str, ...]
    text_1: tuple[str, ...]
    text_2: tuple[str, ...]
    kg_1: tuple[tuple[Triple, ...], ...]
    kg_2: tuple[tuple[Triple, ...], ...]
    labels: npt.NDArray[np.int64]
    status_1: tuple[str, ...]
    status_2: tuple[str, ...]
    perturbation_type: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dropped: int = 0
    source: str = ""
    replaced_rows: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.ids)
        if not self.perturbation_type:
            object.__setattr__(self, "perturbation_type", ("",) * n)
        labels = np.asarray(self.labels)
        if labels.dtype != np.int64 or labels.flags.writeable:
            labels = _frozen_labels(int(v) for v in labels.ravel())
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "extra", MappingProxyType(dict(self.extra)))
        lengths = {
            "text_1": len(self.text_1),
            "text_2": len(self.text_2),
            "kg_1": len(self.kg_1),
            "kg_2": len(self.kg_2),
            "labels": len(self.labels),
            "status_1": len(self.status_1),
            "status_2": len(self.status_2),
            "perturbation_type": len(self.perturbation_type),
            **{f"extra[{k!r}]": len(v) for k, v in self.extra.items()},
        }
        wrong = {k: v for k, v in lengths.items() if v != n}
        if wrong:
            raise InputFormatError(
                f"pair set {self.name!r}: every field needs one value per pair ({n} ids); "
                f"got {', '.join(f'{k}={v}' for k, v in wrong.items())}"
            )
        if not np.isin(self.labels, (0, 1)).all():
            raise InputFormatError(f"pair set {self.name!r}: labels must be 0 or 1")
        bad_status = sorted(set(self.status_1 + self.status_2) - set(KG_STATUSES))
        if bad_status:
            raise InputFormatError(
                f"pair set {self.name!r}: unknown KG status {bad_status}; use {KG_STATUSES}"
            )

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def from_rows(
        cls,
        name: str,
        rows: Iterable[Mapping[str, str | None]],
        source: str = "",
        replaced_rows: Sequence[int] = (),
    ) -> PairSet:
        """Build a set from CSV-like rows (mappings of column name to cell text).

        Rows must hold :data:`REQUIRED_COLUMNS`; ``perturbation_type`` and any other column are
        kept (a column absent from a row reads as an empty string). ``source`` and
        ``replaced_rows`` describe the file the rows come from; the rows whose KG cells held lone
        surrogates (replaced with U+FFFD) are added to ``replaced_rows``.

        Raises
        ------
        InputFormatError
            If a label is missing or not 0 or 1 (``"1"``, ``"0"``, ``"1.0"``, ``"true"`` and
            ``"false"`` are accepted). A missing id becomes ``row<N>``, a missing text ``""``.
        """
        ids: list[str] = []
        texts: tuple[list[str], list[str]] = ([], [])
        kgs: tuple[list[tuple[Triple, ...]], list[tuple[Triple, ...]]] = ([], [])
        statuses: tuple[list[str], list[str]] = ([], [])
        labels: list[int] = []
        perturbation: list[str] = []
        extra: dict[str, list[str]] = {}
        dropped = 0
        replaced = set(replaced_rows)
        has_perturbation = False
        for number, row in enumerate(rows, start=1):
            row_id = (row.get("id") or "").strip() or f"row{number}"
            labels.append(_parse_label(row.get("label"), name, row_id))
            ids.append(row_id)
            for side in (0, 1):
                texts[side].append(row.get(f"paragraph_{side + 1}") or "")
                triples, status, n_dropped, surrogates = _parse_kg(row.get(f"kg_{side + 1}"))
                kgs[side].append(triples)
                statuses[side].append(status)
                dropped += n_dropped
                if surrogates:
                    replaced.add(number)
            if "perturbation_type" in row:
                has_perturbation = True
            perturbation.append(row.get("perturbation_type") or "")
            for key in row:
                if key not in REQUIRED_COLUMNS and key not in OPTIONAL_COLUMNS and key:
                    extra.setdefault(key, [""] * (len(ids) - 1))
            for key, values in extra.items():
                values.append(row.get(key) or "")
        return cls(
            name=name,
            ids=tuple(ids),
            text_1=tuple(texts[0]),
            text_2=tuple(texts[1]),
            kg_1=tuple(kgs[0]),
            kg_2=tuple(kgs[1]),
            labels=_frozen_labels(labels),
            status_1=tuple(statuses[0]),
            status_2=tuple(statuses[1]),
            perturbation_type=tuple(perturbation) if has_perturbation else (),
            extra={k: tuple(v) for k, v in extra.items()},
            dropped=dropped,
            source=source,
            replaced_rows=tuple(sorted(replaced)),
        )

    # -- views ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_positive(self) -> int:
        """How many pairs are labelled 1."""
        return int(self.labels.sum())

    @property
    def unparseable(self) -> int:
        """KG cells kept as empty because they did not parse or were missing (both sides)."""
        return sum(s in ("unparseable", "missing") for s in self.status_1 + self.status_2)

    @property
    def empty(self) -> int:
        """KG cells that parsed but hold no triple (both sides)."""
        return sum(s == "empty" for s in self.status_1 + self.status_2)

    @property
    def parsed(self) -> npt.NDArray[np.bool_]:
        """Per pair: both KG cells parsed (possibly to an empty KG)."""
        good = ("ok", "empty")
        return np.array(
            [a in good and b in good for a, b in zip(self.status_1, self.status_2, strict=True)],
            dtype=bool,
        )

    def status_counts(self) -> dict[str, int]:
        """How many KG cells (both sides together) have each status of :data:`KG_STATUSES`.

        Examples
        --------
        >>> PairSet.from_rows("t", [{"id": "1", "paragraph_1": "", "kg_1": "[]",
        ...     "paragraph_2": "", "kg_2": "", "label": "0"}]).status_counts()
        {'ok': 0, 'empty': 2, 'unparseable': 0, 'missing': 0}
        """
        counts = Counter(self.status_1 + self.status_2)
        return {s: counts.get(s, 0) for s in KG_STATUSES}

    def text_ties(self) -> int:
        """Pairs whose two texts recur in the set with another label (only their KGs differ).

        A method that reads the texts alone cannot separate such pairs; in
        ``pubmedqa_ranked_faithfulness_400`` every pair is one (four faithfulness levels share
        the same two texts).
        """
        seen: dict[tuple[str, str], set[int]] = {}
        for t1, t2, y in zip(self.text_1, self.text_2, self.labels.tolist(), strict=True):
            seen.setdefault((t1, t2), set()).add(y)
        return sum(len(seen[pair]) > 1 for pair in zip(self.text_1, self.text_2, strict=True))

    def subset(self, indices: Sequence[int] | npt.NDArray[np.integer[Any]]) -> PairSet:
        """The pairs at ``indices`` (in that order), as a new set of the same name.

        Examples
        --------
        >>> ps = PairSet.from_rows("t", [{"id": str(i), "paragraph_1": "", "kg_1": "",
        ...     "paragraph_2": "", "kg_2": "", "label": str(i % 2)} for i in range(4)])
        >>> ps.subset([3, 0]).ids
        ('3', '0')
        """
        idx = [int(i) for i in np.asarray(indices, dtype=np.int64).ravel()]

        def pick(values: Sequence[Any]) -> tuple[Any, ...]:
            return tuple(values[i] for i in idx)

        return PairSet(
            name=self.name,
            ids=pick(self.ids),
            text_1=pick(self.text_1),
            text_2=pick(self.text_2),
            kg_1=pick(self.kg_1),
            kg_2=pick(self.kg_2),
            labels=_frozen_labels(self.labels[idx].tolist()),
            status_1=pick(self.status_1),
            status_2=pick(self.status_2),
            perturbation_type=pick(self.perturbation_type),
            extra={k: pick(v) for k, v in self.extra.items()},
            dropped=self.dropped,
            source=self.source,
            replaced_rows=self.replaced_rows,
        )

    def sample(self, n: int, seed: int = 0) -> PairSet:
        """At most ``n`` pairs drawn at random, stratified by label, kept in file order.

        Each class gets its share of ``n`` (rounded, at least one pair per class when the set
        has both and ``n >= 2``). ``n >= len(self)`` returns the whole set.

        Examples
        --------
        >>> ps = PairSet.from_rows("t", [{"id": str(i), "paragraph_1": "", "kg_1": "",
        ...     "paragraph_2": "", "kg_2": "", "label": str(int(i < 2))} for i in range(10)])
        >>> small = ps.sample(4)
        >>> len(small), small.n_positive
        (4, 1)
        """
        if n >= len(self):
            return self
        if n < 1:
            raise InputFormatError(f"sample size must be at least 1; got {n}")
        rng = np.random.default_rng(seed)
        pos = np.flatnonzero(self.labels == 1)
        neg = np.flatnonzero(self.labels == 0)
        k_pos = round(n * len(pos) / len(self))
        if n >= 2 and len(pos) and len(neg):
            k_pos = min(max(k_pos, 1), n - 1)
        k_pos = min(k_pos, len(pos))
        k_neg = min(n - k_pos, len(neg))
        chosen = np.concatenate(
            [rng.choice(pos, size=k_pos, replace=False), rng.choice(neg, size=k_neg, replace=False)]
        )
        return self.subset(np.sort(chosen))

    # -- serialisation --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: one list per field, triples as ``[h, r, t]`` lists."""
        return {
            "name": self.name,
            "ids": list(self.ids),
            "text_1": list(self.text_1),
            "text_2": list(self.text_2),
            "kg_1": [[t.to_list() for t in kg] for kg in self.kg_1],
            "kg_2": [[t.to_list() for t in kg] for kg in self.kg_2],
            "labels": self.labels.tolist(),
            "status_1": list(self.status_1),
            "status_2": list(self.status_2),
            "perturbation_type": list(self.perturbation_type),
            "extra": {k: list(v) for k, v in self.extra.items()},
            "dropped": self.dropped,
            "source": self.source,
            "replaced_rows": list(self.replaced_rows),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairSet:
        """Inverse of :meth:`to_dict`.

        Examples
        --------
        >>> ps = PairSet.from_rows("t", [{"id": "1", "paragraph_1": "a", "kg_1": '[["a","r","b"]]',
        ...     "paragraph_2": "b", "kg_2": "[]", "label": "1"}])
        >>> PairSet.from_dict(ps.to_dict()).to_dict() == ps.to_dict()
        True
        """
        return cls(
            name=str(data["name"]),
            ids=tuple(str(i) for i in data["ids"]),
            text_1=tuple(data["text_1"]),
            text_2=tuple(data["text_2"]),
            kg_1=tuple(tuple(Triple.from_any(t) for t in kg) for kg in data["kg_1"]),
            kg_2=tuple(tuple(Triple.from_any(t) for t in kg) for kg in data["kg_2"]),
            labels=_frozen_labels(int(v) for v in data["labels"]),
            status_1=tuple(data["status_1"]),
            status_2=tuple(data["status_2"]),
            perturbation_type=tuple(data.get("perturbation_type", ())),
            extra={k: tuple(v) for k, v in data.get("extra", {}).items()},
            dropped=int(data.get("dropped", 0)),
            source=str(data.get("source", "")),
            replaced_rows=tuple(int(n) for n in data.get("replaced_rows", ())),
        )


def _parse_label(value: str | None, name: str, row_id: str) -> int:
    text = (value or "").strip().lower()
    if text in ("1", "1.0", "true"):
        return 1
    if text in ("0", "0.0", "false"):
        return 0
    raise InputFormatError(
        f"{name}: row id {row_id}: label must be 0 or 1; got {value!r} "
        "(a labelled pair set needs a binary label on every row)"
    )


def _parse_kg(cell: str | None) -> tuple[tuple[Triple, ...], str, int, bool]:
    if cell is None:
        return (), "missing", 0, False
    try:
        triples, dropped, replaced = parse_kg_cell(cell)
    except KGParseError:
        return (), "unparseable", 0, False
    return tuple(triples), ("ok" if triples else "empty"), dropped, replaced


def _benchmarks_dir(data_dir: str | Path | None) -> Path:
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    return base / BENCHMARKS_SUBDIR


def list_pair_sets(data_dir: str | Path | None = None) -> list[str]:
    r"""Names of the labelled pair sets under ``<data_dir>/s3kg_release/benchmarks``, sorted.

    Parameters
    ----------
    data_dir
        The shared data folder; default :func:`default_data_dir`.

    Returns
    -------
    list of str
        File stems such as ``"paws_wiki_400"``; empty when the folder does not exist.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     folder = Path(tmp) / "s3kg_release" / "benchmarks"
    ...     folder.mkdir(parents=True)
    ...     for stem in ("b_set", "a_set"):
    ...         _ = (folder / f"{stem}.csv").write_text("id\n")
    ...     list_pair_sets(tmp)
    ['a_set', 'b_set']
    """
    folder = _benchmarks_dir(data_dir)
    if not folder.is_dir():
        return []
    return sorted(p.stem for p in folder.glob("*.csv") if p.is_file())


def _looks_like_path(value: str | Path) -> bool:
    if isinstance(value, Path) or "/" in value or os.sep in value:
        return True
    # a bare "name.csv" is a file in the working directory if there is one, else a set name
    return value.endswith(".csv") and Path(value).is_file()


def load_pair_set(name_or_path: str | Path, data_dir: str | Path | None = None) -> PairSet:
    r"""Load a labelled pair set by name (from the shared data folder) or from a CSV path.

    Parameters
    ----------
    name_or_path
        A set name from :func:`list_pair_sets` (``"paws_wiki_400"``, or with ``.csv``), or a
        path to a CSV file (a :class:`~pathlib.Path`, text holding a path separator, or a
        ``name.csv`` that exists in the working directory).
    data_dir
        The shared data folder for names; default :func:`default_data_dir`.

    Returns
    -------
    PairSet
        One entry per CSV row, in file order. Unparseable KG cells are empty KGs with status
        ``"unparseable"`` (see :attr:`PairSet.unparseable`). Text that is not UTF-8 (bytes, lone
        surrogates in KG cells) is replaced with U+FFFD, and its rows listed in
        :attr:`PairSet.replaced_rows`.

    Raises
    ------
    InputFormatError
        If the name is unknown (the message lists the available sets), the file cannot be read,
        lacks a required column (the message names the columns expected and found), or has a
        label that is not 0 or 1.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = Path(tmp) / "toy.csv"
    ...     _ = path.write_text(
    ...         "id,paragraph_1,kg_1,paragraph_2,kg_2,label,perturbation_type\n"
    ...         '0,A cat.,"[[""cat"", ""is"", ""animal""]]",A dog.,[],0,n\n'
    ...         '1,Hi.,oops,Hello.,"[[""x"", ""y"", ""z""]]",1,p\n')
    ...     ps = load_pair_set(path)
    >>> ps.name, len(ps), ps.labels.tolist(), ps.status_counts()
    ('toy', 2, [0, 1], {'ok': 2, 'empty': 1, 'unparseable': 1, 'missing': 0})
    >>> load_pair_set("no_such_set", data_dir=tmp)
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: unknown pair set 'no_such_set': no pair sets under ...
    """
    if _looks_like_path(name_or_path):
        path = Path(name_or_path)
    else:
        name = str(name_or_path).removesuffix(".csv")
        folder = _benchmarks_dir(data_dir)
        available = list_pair_sets(data_dir)
        if name not in available:
            where = (
                f"available in {folder}: {', '.join(available)}"
                if available
                else f"no pair sets under {folder} (set S3KG_DATA_DIR or pass data_dir)"
            )
            raise InputFormatError(f"unknown pair set {name!r}: {where}")
        path = folder / f"{name}.csv"
    return _read_csv(path)


def _read_csv(path: Path) -> PairSet:
    table = read_csv_rows(path, strip_header=True, what="pair set ")
    header = table.header
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise InputFormatError(
            f"{path.name}: missing column(s) {', '.join(missing)}; expected "
            f"{', '.join(REQUIRED_COLUMNS)} (optional: {', '.join(OPTIONAL_COLUMNS)}; others are "
            f"kept as extra), found {', '.join(header) or 'no header'}"
        )
    return PairSet.from_rows(
        path.stem, (r.cells for r in table.rows), source=str(path), replaced_rows=table.replaced
    )
