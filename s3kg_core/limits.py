"""The size limits of the inputs the project takes, in one place.

Texts, KGs and labels of any size can reach the project (a pasted 1 MB context, a KG cell of
20,000 triples, a 5 MB "label"). Past these limits the work grows faster than it is worth (a
spaCy parse of 1 MB took 187 s and 6.2 GB; one 5 MB label 1.76 GB in ``pairs score``), so each
stage meets them the same way, per row, never by failing the whole run:

- a **text** longer than :data:`MAX_TEXT_CHARS` is cut at a word boundary before offline
  extraction, and its KG is marked ``truncated`` (as the LLM extractor does with
  ``--max-input-chars``);
- a **KG** with more than :data:`MAX_TRIPLES` triples, or a **label** longer than
  :data:`MAX_LABEL_CHARS`, is not compared: scoring (``s3kg score``, ``pairs score``, ``bench
  pairs``) gives the pair status ``oversized_kg_1`` / ``oversized_kg_2`` and scores 0, as for an
  empty KG, and TAU leaves the answer out with the reason. An extractor keeps the first
  :data:`MAX_TRIPLES` triples of a text (marked ``truncated``) and drops a triple with a label
  over the limit (counted as dropped).

An **input file** (every file a command reads: a CSV or JSONL table to import, a pair file, an
annotation import, PubMedQA's JSON, a PENMAN file of graphs, a user's KG) larger than the input
cap (:func:`max_input_bytes`: :data:`MAX_IMPORT_BYTES`, or ``$S3KG_MAX_INPUT_MB`` megabytes) is
refused before it is read, by one function (:func:`check_file_size`), with the file, its size,
the cap and the way to raise it in one line (a Parquet file also by its columns' size once
decompressed, which its footer gives: :func:`check_parquet_size`); readers that stream open the
file with :func:`open_input`, which also stops a file that grows past the cap while it is read
(a FIFO, a device, a file still being written). A **PENMAN graph** nested more than
:data:`MAX_PENMAN_DEPTH` parentheses deep is refused with its file and block (the reader
recurses once a level: 500 levels ended in a ``RecursionError``).

The limits are far above what real inputs hold: the S3KG authors' released QA runs and pair
sets have at most 246 triples per KG, 337 characters per label and 8,314 per text; the demo's
texts at most 831 characters.

Examples
--------
>>> kg_problem([("a", "r", "b")]) is None
True
>>> kg_problem([("a" * (MAX_LABEL_CHARS + 1), "r", "b")])
'a label of 1,001 characters (the limit is 1,000)'
"""

from __future__ import annotations

import io
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import ConfigError, InputFormatError, InputTooLargeError

__all__ = [
    "MAX_IMPORT_BYTES",
    "MAX_INPUT_ENV",
    "MAX_LABEL_CHARS",
    "MAX_PENMAN_DEPTH",
    "MAX_TEXT_CHARS",
    "MAX_TRIPLES",
    "OVERSIZED",
    "check_file_size",
    "check_parquet_size",
    "kg_problem",
    "max_input_bytes",
    "open_input",
]

MAX_TEXT_CHARS = 100_000
"""Characters of one text given to an extractor; a longer text is cut (and marked truncated)."""

MAX_TRIPLES = 10_000
"""Triples of one KG that scoring and TAU compare; a larger KG is not compared (``oversized``)."""

MAX_LABEL_CHARS = 1_000
"""Characters of one head, relation or tail label; a KG with a longer one is not compared."""

MAX_IMPORT_BYTES = 64_000_000
"""Bytes of an input file by default (an annotation import: about 150,000 verdicts; a PENMAN
file: BAMBOO's largest holds 3.7 MB; a run of 5,000 answers with their contexts, the largest file
of ``bench/speed/bench_scale.py``'s 100,000 answers: 39 MB); a larger one is refused before it is
read (a 95 MB JSONL import took 1.33 GB, 50 MB of PENMAN 2.53 GB). ``$S3KG_MAX_INPUT_MB``
(:data:`MAX_INPUT_ENV`) sets another cap (:func:`max_input_bytes`)."""

MAX_INPUT_ENV = "S3KG_MAX_INPUT_MB"
"""The environment variable that sets the input cap in megabytes (``S3KG_MAX_INPUT_MB=200``)."""

MAX_PENMAN_DEPTH = 100
"""Parentheses one PENMAN graph may nest (BAMBOO's deepest graph nests 23); a deeper one is
refused before ``penman`` reads it, which it does by recursion."""

OVERSIZED = "oversized"
"""The status stem of a KG past :data:`MAX_TRIPLES` or :data:`MAX_LABEL_CHARS`."""


def kg_problem(triples: Sequence[Any]) -> str | None:
    """Why a KG is past the limits, in words; ``None`` when it is within them.

    Parameters
    ----------
    triples
        The KG: :class:`~s3kg_core.kg.Triple` objects or ``(head, relation, tail)`` sequences
        of strings (before normalisation, so a huge label is caught before any work on it).

    Examples
    --------
    >>> kg_problem([("a", "r", "b")] * (MAX_TRIPLES + 1))
    '10,001 triples (the limit is 10,000)'
    """
    if len(triples) > MAX_TRIPLES:
        return f"{len(triples):,} triples (the limit is {MAX_TRIPLES:,})"
    longest = max(
        (len(part) for t in triples for part in (t.to_list() if hasattr(t, "to_list") else t)),
        default=0,
    )
    if longest > MAX_LABEL_CHARS:
        return f"a label of {longest:,} characters (the limit is {MAX_LABEL_CHARS:,})"
    return None


def max_input_bytes() -> int:
    """The input cap in bytes: ``$S3KG_MAX_INPUT_MB`` megabytes, else :data:`MAX_IMPORT_BYTES`.

    The variable is read at call time.

    Raises
    ------
    ConfigError
        If ``$S3KG_MAX_INPUT_MB`` is not a positive number of megabytes.

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {MAX_INPUT_ENV: "200"}):
    ...     max_input_bytes()
    200000000
    >>> with mock.patch.dict(os.environ, {MAX_INPUT_ENV: ""}):
    ...     max_input_bytes() == MAX_IMPORT_BYTES
    True
    """
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return MAX_IMPORT_BYTES
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = math.nan
    if not (math.isfinite(megabytes) and megabytes > 0):
        raise ConfigError(
            f"{MAX_INPUT_ENV}={text!r} is not a number of megabytes above 0 (e.g. {MAX_INPUT_ENV}"
            "=200)"
        )
    return int(megabytes * 1e6)


def _too_large(
    path: Path, size: int | None, what: str, advice: str, *, decompressed: bool = False
) -> InputTooLargeError:
    """The one-line error of ``path`` past the cap.

    ``size`` ``None``: read past it; ``decompressed``: ``size`` is its columns' once decompressed.
    """
    cap = max_input_bytes()
    digits = 0  # as few as tell the size from the cap (64.3 MB, not 64 MB, against 64 MB)
    while (
        size is not None
        and digits < 3
        and cap >= 1_000_000
        and f"{size / 1e6:,.{digits}f}" == f"{cap / 1e6:,.{digits}f}"
    ):
        digits += 1
    most = f"{cap / 1e6:,.{digits}f}"
    held = f"more than {most}" if size is None else f"{size / 1e6:,.{digits}f}"
    return InputTooLargeError(
        f"{path.name} holds {held} MB{' once decompressed' if decompressed else ''}; {what} "
        f"takes at most {most} MB: {advice}, or raise the "
        f"cap with {MAX_INPUT_ENV}=<megabytes>"
    )


def check_file_size(
    path: Path, what: str = "an input file", advice: str = "split it into smaller files"
) -> int:
    """Refuse ``path`` before it is read when it holds more than :func:`max_input_bytes`.

    The one size check of every input file a command reads (see the module's docstring).

    Parameters
    ----------
    path
        The file a command will read.
    what, advice
        What such a file is and how to split it, for the message.

    Returns
    -------
    int
        The file's size in bytes (0 for a FIFO or a device, which :func:`open_input` caps as
        it reads).

    Raises
    ------
    InputTooLargeError
        ``big.amr holds 71 MB; a PENMAN file takes at most 64 MB: split it ..., or raise the
        cap with S3KG_MAX_INPUT_MB=<megabytes>`` (an :class:`~s3kg_core.errors.InputFormatError`).
    InputFormatError
        If the file cannot be looked at.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.amr"
    >>> _ = path.write_text("(d / dog)")
    >>> check_file_size(path, "a PENMAN file", "split it")
    9
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > max_input_bytes():
        raise _too_large(path, size, what, advice)
    return size


def check_parquet_size(
    path: Path, what: str = "a Parquet file", advice: str = "split it into smaller files"
) -> int:
    """Refuse a Parquet file past the cap on disk or once decompressed, before its rows are read.

    A Parquet file is compressed: a few megabytes on disk can hold gigabytes of columns. Its
    footer says how large every row group is once decompressed, so the cap
    (:func:`max_input_bytes`) applies to that size as well as to the file's (the footer alone is
    read, not the rows). A file read then holds at most the cap in columns.

    Returns
    -------
    int
        The columns' size once decompressed, in bytes (from the footer).

    Raises
    ------
    InputTooLargeError
        If the file, or its columns decompressed, are past the cap (``... holds 310 MB once
        decompressed; ...``).
    InputFormatError
        If the file cannot be read or is no Parquet file (its footer is not one).

    Examples
    --------
    >>> import tempfile, pandas as pd
    >>> path = Path(tempfile.mkdtemp()) / "kg.parquet"
    >>> pd.DataFrame({"head": ["a"], "relation": ["r"], "tail": ["b"]}).to_parquet(path)
    >>> check_parquet_size(path) > 0
    True
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    check_file_size(path, what, advice)
    try:
        meta = pq.ParquetFile(path).metadata
    except (OSError, pa.ArrowException) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputFormatError(f"cannot read {path} as Parquet: {first}") from exc
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    if size > max_input_bytes():
        raise _too_large(path, size, what, advice, decompressed=True)
    return int(size)


class _CappedReader(io.RawIOBase):
    """A binary file that raises :class:`InputTooLargeError` once more than the cap is read."""

    def __init__(self, raw: Any, path: Path, what: str, advice: str) -> None:
        super().__init__()
        self._raw, self._path, self._what, self._advice = raw, path, what, advice
        self._cap, self._read = max_input_bytes(), 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = int(self._raw.readinto(buffer) or 0)
        except OSError as exc:
            raise InputFormatError(f"cannot read {self._path}: {exc.strerror or exc}") from exc
        self._read += n
        if self._read > self._cap:
            raise _too_large(self._path, None, self._what, self._advice)
        return n

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


def open_input(
    path: Path, what: str = "an input file", advice: str = "split it into smaller files"
) -> io.BufferedReader:
    r"""Open an input file to be read as a stream, after :func:`check_file_size`.

    The stream raises :class:`~s3kg_core.errors.InputTooLargeError` once more than the cap has
    been read, so a file whose size says nothing (a FIFO, ``/dev/zero``) or that grows while it
    is read is bounded too. Read it in lines or chunks, and close it (it is a context manager).

    Raises
    ------
    InputTooLargeError
        If the file is past the cap (before it is read, or once the cap is passed).
    InputFormatError
        If the file cannot be opened or read.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = path.write_text('{"a": 1}\n{"a": 2}\n')
    >>> with open_input(path) as fh:
    ...     [line for line in fh]
    [b'{"a": 1}\n', b'{"a": 2}\n']
    """
    path = Path(path)
    check_file_size(path, what, advice)
    try:
        raw = path.open("rb", buffering=0)
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return io.BufferedReader(_CappedReader(raw, path, what, advice), buffer_size=1 << 20)
