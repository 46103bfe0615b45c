"""Knowledge graphs for the factuality judge: FinDKG, or any table of head, relation, tail.

A :class:`FactKG` is a table of distinct facts with one row per (head, relation, tail) and the
entity type of each side. FinDKG (Li et al. 2023, the ``findkg`` folder under the shared data
folder) is read from its id files: ``entity2id.txt`` (name, id, type, type id),
``relation2id.txt`` (name, id) and the quadruple splits ``train/valid/test.txt`` (head id,
relation id, tail id, time id, ignored). Time is dropped: a fact true in any week is a known
true fact. A user's KG is a CSV or Parquet file with the columns ``head, relation, tail`` and
optionally ``head_type, tail_type`` (other columns are refused, so a misnamed column is never
silently ignored).
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..config import default_data_dir
from ..errors import InputFormatError
from ..limits import check_file_size, check_parquet_size, open_input

__all__ = [
    "FINDKG_SPLITS",
    "FINDKG_SUBDIR",
    "KG_COLUMNS",
    "OPTIONAL_KG_COLUMNS",
    "FactKG",
    "load_findkg",
    "load_kg",
    "load_user_kg",
]

FINDKG_SUBDIR = "findkg"
"""Where FinDKG lies under the shared data folder."""

FINDKG_SPLITS = ("train", "valid", "test")
"""FinDKG's quadruple files (``<split>.txt``)."""

KG_COLUMNS = ("head", "relation", "tail")
"""Columns a user KG file must have."""

OPTIONAL_KG_COLUMNS = ("head_type", "tail_type")
"""Columns a user KG file may have (an entity without a type gets the type ``""``)."""

_FACT_COLUMNS = [*KG_COLUMNS, *OPTIONAL_KG_COLUMNS]


@dataclass(frozen=True, eq=False)
class FactKG:
    """Distinct facts with entity types.

    Attributes
    ----------
    name
        ``"findkg"`` or the file stem of a user KG.
    facts
        One row per distinct (head, relation, tail), columns ``head, relation, tail, head_type,
        tail_type`` (all strings), in first-seen order.
    entity_types
        Every entity's type (an entity typed differently in two rows keeps its most frequent
        type; ties go to the type seen first).
    source
        Where the facts were read from.

    Examples
    --------
    >>> kg = FactKG.from_frame("toy", pd.DataFrame(
    ...     {"head": ["Apple", "Apple"], "relation": ["Control", "Control"],
    ...      "tail": ["Beats", "Beats"]}))
    >>> len(kg), kg.entity_types["Apple"]
    (1, '')
    """

    name: str
    facts: pd.DataFrame
    entity_types: dict[str, str]
    source: str = ""

    def __len__(self) -> int:
        return len(self.facts)

    @classmethod
    def from_frame(cls, name: str, frame: pd.DataFrame, source: str = "") -> FactKG:
        """Facts from a frame with ``head, relation, tail`` (and optional type columns).

        Rows with an empty head, relation or tail are dropped; duplicate facts are kept once.

        Raises
        ------
        InputFormatError
            If a required column is missing.
        """
        missing = [c for c in KG_COLUMNS if c not in frame.columns]
        if missing:
            raise InputFormatError(
                f"{name}: missing column(s) {', '.join(missing)}; found "
                f"{', '.join(map(str, frame.columns)) or 'no columns'} (a KG needs "
                f"{', '.join(KG_COLUMNS)}, optionally {', '.join(OPTIONAL_KG_COLUMNS)})"
            )
        out = pd.DataFrame(
            {
                c: (
                    frame[c].fillna("").astype(str).str.strip()
                    if c in frame.columns
                    else pd.Series([""] * len(frame), index=frame.index, dtype=object)
                )
                for c in _FACT_COLUMNS
            }
        )
        out = out[(out["head"] != "") & (out["relation"] != "") & (out["tail"] != "")]
        out = out.drop_duplicates(subset=list(KG_COLUMNS)).reset_index(drop=True)
        return cls(name=name, facts=out, entity_types=_entity_types(out), source=source)

    def known(self) -> set[tuple[str, str, str]]:
        """Every known true fact as a (head, relation, tail) tuple."""
        return set(zip(self.facts["head"], self.facts["relation"], self.facts["tail"], strict=True))

    def degrees(self) -> dict[str, int]:
        """How many facts each entity takes part in (as head or tail).

        Examples
        --------
        >>> kg = FactKG.from_frame("t", pd.DataFrame(
        ...     {"head": ["a", "a"], "relation": ["r", "s"], "tail": ["b", "c"]}))
        >>> kg.degrees()["a"], kg.degrees()["b"]
        (2, 1)
        """
        counts: Counter[str] = Counter(self.facts["head"])
        counts.update(self.facts["tail"])
        return dict(counts)

    def relations(self) -> list[str]:
        """The distinct relations, in first-seen order."""
        return list(dict.fromkeys(self.facts["relation"]))


def _entity_types(facts: pd.DataFrame) -> dict[str, str]:
    votes: dict[str, Counter[str]] = {}
    for entity, kind in zip(
        [*facts["head"], *facts["tail"]], [*facts["head_type"], *facts["tail_type"]], strict=True
    ):
        votes.setdefault(entity, Counter())[kind] += 1
    # Counter.most_common keeps first-seen order among ties.
    return {entity: counter.most_common(1)[0][0] for entity, counter in votes.items()}


def _read_tsv(path: Path, n_fields: int) -> list[list[str]]:
    if not path.is_file():
        raise InputFormatError(
            f"{path} not found: FinDKG needs entity2id.txt, relation2id.txt and "
            f"{'/'.join(FINDKG_SPLITS)}.txt (set S3KG_DATA_DIR or pass --data-dir)"
        )
    rows = []
    # capped and streamed as every input (s3kg_core.limits): a huge or endless file is one line
    with (
        open_input(path, "a FinDKG file", "keep FinDKG's own files") as raw,
        io.TextIOWrapper(raw, encoding="utf-8") as handle,
    ):
        try:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                fields = line.rstrip("\n").split("\t")
                if len(fields) < n_fields:
                    raise InputFormatError(
                        f"{path}:{number}: expected at least {n_fields} tab-separated fields, "
                        f"found {len(fields)}"
                    )
                rows.append(fields)
        except UnicodeDecodeError as exc:
            raise InputFormatError(f"{path}: not UTF-8 text ({exc.reason})") from exc
    return rows


def load_findkg(
    data_dir: str | Path | None = None, splits: Sequence[str] = FINDKG_SPLITS
) -> FactKG:
    """FinDKG's facts (time dropped) with entity names and types.

    Parameters
    ----------
    data_dir
        The shared data folder holding ``findkg/`` (default:
        :func:`s3kg_core.config.default_data_dir`, i.e. ``$S3KG_DATA_DIR`` or
        ``../shared/data``), or the ``findkg`` folder itself.
    splits
        Which quadruple files to read.

    Raises
    ------
    InputFormatError
        If a file is missing or malformed, or a quadruple names an unknown id.

    Examples
    --------
    >>> kg = load_findkg()  # doctest: +SKIP
    >>> kg.facts.iloc[0].to_dict()  # doctest: +SKIP
    {'head': 'Apple Inc.', 'relation': 'Control', 'tail': ..., 'head_type': 'COMP', ...}
    """
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    folder = root if (root / "entity2id.txt").is_file() else root / FINDKG_SUBDIR
    entities = {
        int(r[1]): (r[0].strip(), r[2].strip()) for r in _read_tsv(folder / "entity2id.txt", 3)
    }
    relations = {int(r[1]): r[0].strip() for r in _read_tsv(folder / "relation2id.txt", 2)}
    unknown = [s for s in splits if s not in FINDKG_SPLITS]
    if unknown:
        raise InputFormatError(
            f"unknown FinDKG split(s) {', '.join(unknown)}; choose from {', '.join(FINDKG_SPLITS)}"
        )
    rows: list[tuple[str, str, str, str, str]] = []
    for split in splits:
        path = folder / f"{split}.txt"
        for number, r in enumerate(_read_tsv(path, 3), 1):
            try:
                head, tail = entities[int(r[0])], entities[int(r[2])]
                relation = relations[int(r[1])]
            except (KeyError, ValueError) as exc:
                raise InputFormatError(f"{path}:{number}: unknown or malformed id ({exc})") from exc
            rows.append((head[0], relation, tail[0], head[1], tail[1]))
    frame = pd.DataFrame(rows, columns=_FACT_COLUMNS)
    return FactKG.from_frame("findkg", frame, source=str(folder))


def _read_table(path: Path) -> pd.DataFrame:
    suffix = path.suffix.lower()
    advice = "split it into smaller KGs"
    if suffix == ".parquet":  # its columns decompressed are capped too
        check_parquet_size(path, "a KG file", advice)
    else:
        check_file_size(path, "a KG file", advice)
    try:
        if suffix == ".parquet":
            return pd.read_parquet(path)
        if suffix in (".csv", ".tsv", ".txt"):
            with open_input(path, "a KG file", advice) as fh:
                return pd.read_csv(
                    fh, sep="\t" if suffix != ".csv" else ",", dtype=str, keep_default_na=False
                )
    except (OSError, ValueError) as exc:
        raise InputFormatError(f"cannot read {path}: {exc}") from exc
    raise InputFormatError(f"{path}: unsupported file type {suffix!r}; use .csv or .parquet")


def load_user_kg(path: str | Path) -> FactKG:
    r"""A user's KG from a CSV (or TSV) or Parquet file.

    Raises
    ------
    InputTooLargeError
        If the file is past the input cap (:func:`s3kg_core.limits.check_file_size`), or a
        Parquet file's columns once decompressed are
        (:func:`s3kg_core.limits.check_parquet_size`), before its rows are read (a CSV or TSV
        is then read as a stream).
    InputFormatError
        If the file cannot be read, lacks ``head, relation, tail``, or has other columns
        than those and ``head_type, tail_type`` (the message names the columns found).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "kg.csv")
    >>> _ = open(p, "w").write("head,relation,tail\nApple,Control,Beats\n")
    >>> load_user_kg(p).facts[["head", "tail"]].values.tolist()
    [['Apple', 'Beats']]
    """
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"KG file {path} not found")
    frame = _read_table(path)
    columns = [str(c) for c in frame.columns]
    extra = [c for c in columns if c not in _FACT_COLUMNS]
    missing = [c for c in KG_COLUMNS if c not in columns]
    if extra or missing:
        raise InputFormatError(
            f"{path}: expected columns {', '.join(KG_COLUMNS)} (optionally "
            f"{', '.join(OPTIONAL_KG_COLUMNS)}); found {', '.join(columns) or 'no columns'}"
        )
    return FactKG.from_frame(path.stem, frame, source=str(path))


def load_kg(spec: str | Path, data_dir: str | Path | None = None) -> FactKG:
    """``"findkg"`` (from the shared data folder) or the path of a user KG file.

    Examples
    --------
    >>> load_kg("findkg").name  # doctest: +SKIP
    'findkg'
    """
    if str(spec).lower() == "findkg":
        return load_findkg(data_dir)
    return load_user_kg(spec)
