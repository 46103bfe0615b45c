r"""Reading knowledge graphs from text cells and pair files.

A KG cell is a JSON or Python-literal list of ``[head, relation, tail]`` lists, the format of the
S3KG authors' released files. Parsing is strict (JSON by :func:`s3kg_core.tables.loads_json`,
then ``ast.literal_eval``, never ``eval``); items that are not three strings are dropped and
counted, never guessed at. A number too long for Python to convert is such an item in a JSON cell
and a parse error in a Python literal (Python's own parser refuses it). A lone surrogate (an
escape such as ``\ud800`` with no partner, which no UTF-8 text can hold) becomes U+FFFD and is
reported, the policy of :mod:`s3kg_core.tables` for bytes that are not UTF-8. A line break or
other control character written raw into a label (``"a\r\nb"``, which strict JSON and Python
literals refuse) is read as it is (JSON) or as a space (a Python literal), not as a parse error.

A pair file's header may have spaces around its names (``id, kg_1, kg_2``); control characters
in an ``id`` (a NUL) are removed; a KG past the limits of :mod:`s3kg_core.limits` (too many
triples, a label too long) is not kept, and its row gets status ``oversized_kg_1`` or
``oversized_kg_2``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputFormatError, KGParseError
from .kg import Triple
from .limits import OVERSIZED, kg_problem
from .names import without_unsafe
from .tables import loads_json, read_csv_rows, replace_surrogates

__all__ = ["PairRow", "parse_kg_cell", "read_pairs_csv"]

PAIR_COLUMNS = ("id", "kg_1", "kg_2")

# Control characters (C0, DEL, C1): raw in a label they break a Python literal; in an id, a NUL
# and the like are removed.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def _loads(cell: str) -> Any:
    try:
        return loads_json(cell, strict=False)  # a raw line break in a string is text
    except InputFormatError:
        pass
    try:
        # A raw line break (or other control character) ends a Python string literal: read it
        # as a space, as it reads between the items anyway.
        return ast.literal_eval(_CONTROL.sub(" ", cell))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise KGParseError(
            f"not a JSON or Python list of [head, relation, tail]: {cell[:60]!r}"
            f"{'...' if len(cell) > 60 else ''} ({type(exc).__name__})"
        ) from exc


def parse_kg_cell(cell: str | None) -> tuple[list[Triple], int, bool]:
    r"""Parse one KG cell into triples.

    Parameters
    ----------
    cell
        Text such as ``'[["a", "r", "b"]]'`` or ``"[('a', 'r', 'b')]"``. ``None`` or a blank
        cell is an empty KG.

    Returns
    -------
    triples, dropped, replaced
        The triples; how many items were dropped for not being three strings; and whether a lone
        surrogate in a triple (``"\ud800"``: text that is not UTF-8) was replaced with U+FFFD.

    Raises
    ------
    KGParseError
        If the cell is not a list (or tuple) at all.

    Examples
    --------
    >>> parse_kg_cell('[["He", "preached_in", "Otisville"]]')
    ([Triple(head='He', relation='preached_in', tail='Otisville')], 0, False)
    >>> parse_kg_cell("[('a', 'r', 'b'), ('only', 'two'), ['a', 'r', 'b', 'c']]")
    ([Triple(head='a', relation='r', tail='b')], 2, False)
    >>> parse_kg_cell(r'[["\ud800", "r", "b"]]')
    ([Triple(head='�', relation='r', tail='b')], 0, True)
    >>> parse_kg_cell('[["a\r\nb", "r", "c"]]')[0], parse_kg_cell("[('a\r\nb', 'r', 'c')]")[0]
    ([Triple(head='a\r\nb', relation='r', tail='c')], [Triple(head='a  b', relation='r', tail='c')])
    >>> parse_kg_cell("")
    ([], 0, False)
    >>> parse_kg_cell('[["a", "r", "b"]]137')
    Traceback (most recent call last):
    ...
    s3kg_core.errors.KGParseError: not a JSON or Python list of [head, relation, tail]: ...
    """
    if cell is None or not cell.strip():
        return [], 0, False
    value = _loads(cell.strip())
    if not isinstance(value, list | tuple):
        raise KGParseError(f"a KG cell must hold a list of triples; got {type(value).__name__}")
    triples: list[Triple] = []
    dropped = 0
    replaced = False
    for item in value:
        if (
            isinstance(item, list | tuple)
            and len(item) == 3
            and all(isinstance(part, str) for part in item)
        ):
            parts = [replace_surrogates(part) for part in item]
            replaced = replaced or any(flag for _, flag in parts)
            triples.append(Triple(parts[0][0], parts[1][0], parts[2][0]))
        else:
            dropped += 1
    return triples, dropped, replaced


@dataclass
class PairRow:
    """One row of a pair file, parsed as far as it goes.

    ``status`` is ``"ok"`` or why the pair cannot be scored (``"unparseable_kg_1"``, ...);
    ``replaced`` says that text of the row that was not UTF-8 (undecodable bytes, lone
    surrogates in its KGs) was replaced with U+FFFD.
    """

    id: str
    kg_1: list[Triple] = field(default_factory=list)
    kg_2: list[Triple] = field(default_factory=list)
    status: str = "ok"
    dropped: int = 0
    extra_fields: int = 0
    replaced: bool = False
    id_cleaned: bool = False
    problem: str = ""


def _clean_id(text: str | None, number: int) -> tuple[str, bool]:
    """The row's id without what a name may not hold, stripped; ``row<N>`` when blank.

    Control and formatting characters (a NUL, an ESC, U+202E) are removed
    (:func:`s3kg_core.names.without_unsafe`).
    """
    raw = text or ""
    clean = without_unsafe(raw)
    return clean.strip() or f"row{number}", clean != raw


def read_pairs_csv(path: str | Path) -> Iterator[PairRow]:
    """Read a CSV with columns ``id,kg_1,kg_2`` (others are ignored), one :class:`PairRow` each.

    The file is read by :func:`s3kg_core.tables.read_csv_rows`: bytes that are not UTF-8, and
    lone surrogates in KG cells, are replaced (U+FFFD) and flagged on their row (``replaced``);
    a row with more fields than the header (a glued next row, a stray comma) is flagged with
    ``extra_fields``; a row too short to reach a KG column gets status ``missing_kg_1`` or
    ``missing_kg_2``. Spaces around the header's names are ignored. Control and formatting
    characters in an ``id`` are removed (``id_cleaned``); a blank ``id`` becomes ``row<N>``, N
    counting the data rows from 1. A KG past :func:`s3kg_core.limits.kg_problem`'s limits is
    dropped and its row gets status ``oversized_kg_1`` / ``oversized_kg_2``, the reason in
    ``problem``.

    Raises
    ------
    InputFormatError
        If the file cannot be read or lacks one of the required columns.
    """
    path = Path(path)
    table = read_csv_rows(path, strip_header=True)
    header = table.header
    missing = [c for c in PAIR_COLUMNS if c not in header]
    if missing:
        raise InputFormatError(
            f"{path.name}: missing column(s) {', '.join(missing)}; expected "
            f"{', '.join(PAIR_COLUMNS)} (other columns are ignored), "
            f"found {', '.join(header) or 'no header'}"
        )
    for entry in table.rows:
        record = entry.cells
        row_id, cleaned = _clean_id(record.get("id"), entry.number)
        row = PairRow(id=row_id, id_cleaned=cleaned)
        row.extra_fields = len(entry.extra)
        row.replaced = entry.replaced
        for side, column in ((1, "kg_1"), (2, "kg_2")):
            if record.get(column) is None:  # the row ended before this column
                if row.status == "ok":
                    row.status = f"missing_kg_{side}"
                continue
            try:
                triples, dropped, replaced = parse_kg_cell(record.get(column))
            except KGParseError:
                if row.status == "ok":
                    row.status = f"unparseable_kg_{side}"
                continue
            row.dropped += dropped
            row.replaced = row.replaced or replaced
            if problem := kg_problem(triples):
                if row.status == "ok":
                    row.status = f"{OVERSIZED}_kg_{side}"
                    row.problem = f"kg_{side}: {problem}"
                continue
            setattr(row, column, triples)
        yield row
