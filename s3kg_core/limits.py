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

A **file** a command reads whole (an annotation import, a PENMAN file of graphs) larger than
:data:`MAX_IMPORT_BYTES` is refused before it is read, with the limit in the message. A
**PENMAN graph** nested more than :data:`MAX_PENMAN_DEPTH` parentheses deep is refused with its
file and block (the reader recurses once a level: 500 levels ended in a ``RecursionError``).

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

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InputFormatError

__all__ = [
    "MAX_IMPORT_BYTES",
    "MAX_LABEL_CHARS",
    "MAX_PENMAN_DEPTH",
    "MAX_TEXT_CHARS",
    "MAX_TRIPLES",
    "OVERSIZED",
    "check_file_size",
    "kg_problem",
]

MAX_TEXT_CHARS = 100_000
"""Characters of one text given to an extractor; a longer text is cut (and marked truncated)."""

MAX_TRIPLES = 10_000
"""Triples of one KG that scoring and TAU compare; a larger KG is not compared (``oversized``)."""

MAX_LABEL_CHARS = 1_000
"""Characters of one head, relation or tail label; a KG with a longer one is not compared."""

MAX_IMPORT_BYTES = 64_000_000
"""Bytes of a file read whole (an annotation import: about 150,000 verdicts; a PENMAN file:
BAMBOO's largest holds 3.7 MB); a larger one is refused before it is read (a 95 MB JSONL import
took 1.33 GB, 50 MB of PENMAN 2.53 GB)."""

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


def check_file_size(path: Path, what: str, advice: str) -> None:
    """Refuse ``path`` before it is read when it holds more than :data:`MAX_IMPORT_BYTES`.

    Parameters
    ----------
    path
        The file a command will read whole.
    what, advice
        What such a file is and how to split it, for the message.

    Raises
    ------
    InputFormatError
        ``big.amr holds 71 MB; a PENMAN file takes at most 64 MB: split it ...``, or the file
        cannot be looked at.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "x.amr"
    >>> _ = path.write_text("(d / dog)")
    >>> check_file_size(path, "a PENMAN file", "split it")
    """
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if size > MAX_IMPORT_BYTES:
        raise InputFormatError(
            f"{path.name} holds {size / 1e6:,.0f} MB; {what} takes at most "
            f"{MAX_IMPORT_BYTES / 1e6:,.0f} MB: {advice}"
        )
