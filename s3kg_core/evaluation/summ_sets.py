"""The summarisation consistency benchmarks of GraphEval, and their declared dev/test split.

Three TRUE-binarised sets (label 1 = consistent), read from the shared data folder
(``--data-dir`` or ``$S3KG_DATA_DIR``, else ``../shared/data``; see
:func:`s3kg_core.config.default_data_dir`), never copied into the repository:

=========  ==============================================  ======================
name       file                                            article key
=========  ==============================================  ======================
summeval   ``summeval/summeval_true.csv``                  ``id`` (CNN/DM story)
qags_c     ``qags/true_binarized/qags_cnndm_true.csv``     the article text
qags_x     ``qags/true_binarized/qags_xsum_true.csv``      the article text
=========  ==============================================  ======================

The split is by article (:func:`~s3kg_core.evaluation.splits.article_split`), so every summary
of one article is on the same side: about 30 % of the articles are **dev**, the rest **test**.
Calibration may use dev only; reported figures are on test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config import default_data_dir
from ..errors import InputFormatError
from ..tables import read_csv_rows
from .splits import article_split

__all__ = [
    "DATASETS",
    "SPLITS",
    "SummExample",
    "SummSet",
    "load_summ_set",
    "read_summ_csv",
]

DATASETS: Mapping[str, Path] = {
    "summeval": Path("summeval") / "summeval_true.csv",
    "qags_c": Path("qags") / "true_binarized" / "qags_cnndm_true.csv",
    "qags_x": Path("qags") / "true_binarized" / "qags_xsum_true.csv",
}
"""Benchmark name -> file under the data folder."""

SPLITS = ("test", "dev", "all")
"""What :meth:`SummSet.select` and :func:`load_summ_set` take: one side of the split, or all."""

_REQUIRED = ("grounding", "generated_text", "label")


@dataclass(frozen=True)
class SummExample:
    """One summary with its source article and its human label (1 = consistent)."""

    uid: str
    article_key: str
    context: str
    answer: str
    label: int
    split: str


@dataclass(frozen=True)
class SummSet:
    """A benchmark's examples (one split or all), in file order.

    Examples
    --------
    >>> s = SummSet("toy", (SummExample("0", "a", "ctx", "sum", 1, "dev"),), "")
    >>> len(s), s.labels()
    (1, [1])
    """

    name: str
    examples: tuple[SummExample, ...]
    source: str
    split: str = "all"
    replaced_rows: tuple[int, ...] = ()
    """Data rows of the source file (from 1) whose non-UTF-8 bytes were replaced with U+FFFD."""

    def __len__(self) -> int:
        return len(self.examples)

    def labels(self) -> list[int]:
        """The labels in order (1 = consistent)."""
        return [e.label for e in self.examples]

    def select(self, split: str) -> SummSet:
        """The examples of one split (``test``, ``dev`` or ``all``)."""
        if split not in SPLITS:
            raise InputFormatError(f"split must be one of {SPLITS}; got {split!r}")
        if split == "all":
            return SummSet(self.name, self.examples, self.source, "all", self.replaced_rows)
        kept = tuple(e for e in self.examples if e.split == split)
        return SummSet(self.name, kept, self.source, split, self.replaced_rows)


def _label(value: str | None, row: int, path: Path) -> int:
    text = (value or "").strip().lower()
    if text in ("1", "1.0", "true"):
        return 1
    if text in ("0", "0.0", "false"):
        return 0
    raise InputFormatError(f"{path}: row {row} has label {value!r}; labels must be 0 or 1")


def read_summ_csv(path: str | Path, name: str | None = None) -> SummSet:
    r"""Read a TRUE-style CSV: ``grounding``, ``generated_text``, ``label`` (and optionally ``id``).

    Bytes that are not UTF-8 are replaced with U+FFFD and their rows listed in
    :attr:`SummSet.replaced_rows` (see :mod:`s3kg_core.tables`).

    Raises
    ------
    InputFormatError
        If the file is missing, is not a readable CSV, or lacks a required column (the message
        lists the columns found).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "toy.csv")
    >>> _ = open(p, "w").write(",grounding,generated_text,label\n0,Paris is in France.,"
    ...                        "Paris is in Spain.,0\n")
    >>> s = read_summ_csv(p)
    >>> s.name, s.examples[0].answer, s.examples[0].label
    ('toy', 'Paris is in Spain.', 0)
    """
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"benchmark file {path} not found")
    table = read_csv_rows(path)
    fields = list(table.header)
    missing = [c for c in _REQUIRED if c not in fields]
    if fields and missing:
        raise InputFormatError(
            f"{path}: missing column(s) {', '.join(missing)}; found "
            f"{', '.join(repr(f) for f in fields)}; expected grounding, "
            "generated_text, label (and optionally id)"
        )
    examples: list[SummExample] = []
    for n, entry in enumerate(table.rows):
        row = entry.cells
        context = row.get("grounding") or ""
        key = (row.get("id") or "").strip() or context
        uid = (row.get("") or "").strip() or str(n)
        examples.append(
            SummExample(
                uid=uid,
                article_key=key,
                context=context,
                answer=row.get("generated_text") or "",
                label=_label(row.get("label"), n, path),
                split=article_split(key),
            )
        )
    return SummSet(name or path.stem, tuple(examples), str(path), replaced_rows=table.replaced)


def load_summ_set(name: str, *, data_dir: str | Path | None = None, split: str = "all") -> SummSet:
    """Load ``summeval``, ``qags_c`` or ``qags_x`` from the data folder, one split or all.

    Raises
    ------
    InputFormatError
        For an unknown name or split, or a missing or malformed file.

    Examples
    --------
    >>> load_summ_set("cnn")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: unknown benchmark 'cnn'; use one of summeval, qags_c, qags_x
    """
    if name not in DATASETS:
        raise InputFormatError(f"unknown benchmark {name!r}; use one of {', '.join(DATASETS)}")
    if split not in SPLITS:
        raise InputFormatError(f"split must be one of {SPLITS}; got {split!r}")
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    path = root / DATASETS[name]
    if not path.is_file():
        raise InputFormatError(
            f"benchmark file {path} not found; pass --data-dir or set S3KG_DATA_DIR to the "
            "shared data folder"
        )
    return read_summ_csv(path, name).select(split)
