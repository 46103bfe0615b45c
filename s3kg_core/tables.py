r"""CSV and JSONL files: one reader, one policy for text that is not UTF-8, one rule for output.

The rule for output: no CSV cell the project writes is one a spreadsheet would run as a formula.

The input tables (pair files, labelled pair sets, the GraphEval benchmark CSVs, released QA
runs and mapped CSV / JSONL files to import) are read here:

- text is UTF-8; a leading byte-order mark is dropped;
- text that is not UTF-8 never stops a read, and never goes further: each invalid byte sequence
  becomes U+FFFD (as ``bytes.decode(errors="replace")`` does), and so does each lone surrogate
  (U+D800..U+DFFF, which a JSON escape such as ``\ud800`` can spell but no UTF-8 text can hold:
  :func:`replace_surrogates`, for JSONL here and for KG cells in :mod:`s3kg_core.kgio`). The
  row it sat on is **reported** (:attr:`Row.replaced`, :attr:`Table.replaced`), so the caller
  can flag it. A U+FFFD that the file itself holds as valid UTF-8 is text like any other and is
  not reported;
- a file that cannot be read, a CSV the ``csv`` module rejects, or a JSONL line that is not a JSON
  object raises :class:`~s3kg_core.errors.InputFormatError`;
- a file past the input cap (:func:`s3kg_core.limits.check_file_size`: 64 MB, or
  ``$S3KG_MAX_INPUT_MB``) is refused before it is read
  (:class:`~s3kg_core.errors.InputTooLargeError`), and a file is read as a stream, a line (a CSV
  record) at a time (:func:`s3kg_core.limits.open_input`): only the rows are held, never the
  file's bytes or its whole text.

JSON text is parsed by :func:`loads_json`, which every reader of JSON input shares: an integer
with more digits than Python converts (4300) is read exactly as a :class:`decimal.Decimal`, and a
value nested deeper than Python can parse is an :class:`~s3kg_core.errors.InputFormatError`, so
no other exception escapes.

Every CSV the project writes (``s3kg export``, ``pairs score``, the dashboard's downloads, the
benchmark scripts) passes its cells through :func:`csv_safe_cell` (rows: :func:`csv_safe_row`,
pandas frames: :func:`csv_safe_frame`): OWASP's rule against CSV (formula) injection.

CSV rows are read as :class:`csv.DictReader` reads them: blank lines are skipped, a short row's
missing cells are ``None``, fields beyond the header are kept apart (:attr:`Row.extra`), and of
two columns with the same name the last one wins.

Examples
--------
>>> import tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "t.csv"
>>> _ = path.write_bytes(b"\xef\xbb\xbfid,name\n1,caf\xc3\xa9\n2,caf\xe9\n")
>>> table = read_csv_rows(path)
>>> [row.cells["name"] for row in table.rows], table.replaced
(['café', 'caf�'], (2,))
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import re
import sys
from collections.abc import Generator, Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Generic, TypeVar

from .errors import InputFormatError, InputTooLargeError
from .limits import open_input

__all__ = [
    "FORMULA_STARTS",
    "Row",
    "Table",
    "csv_safe_cell",
    "csv_safe_frame",
    "csv_safe_row",
    "iter_json_object",
    "loads_json",
    "read_csv_rows",
    "read_jsonl_records",
    "replace_surrogates",
]

T = TypeVar("T")

# A lone surrogate: a code point that no UTF-8 text can hold.
_SURROGATE = re.compile("[\ud800-\udfff]")
# What JSON text must hold to give one: a \uD800..\uDFFF escape, or the character itself.
_MAYBE_SURROGATE = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")
# A plain number ("-0.5", "+3", "1e-9"): a spreadsheet reads it as a number, never a formula.
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
# The csv module's field limit is a C long: 2**31 - 1 is the most every platform takes.
_FIELD_SIZE_LIMIT = min(sys.maxsize, 2**31 - 1)


@dataclass(frozen=True)
class Row(Generic[T]):
    """One row of a table.

    Attributes
    ----------
    number
        1-based: the data row of a CSV (the header and blank lines not counted), the line of a
        JSONL file.
    cells
        Column name -> cell. A CSV cell is text, or ``None`` when the row ended before its
        column; a JSONL cell is any JSON value.
    extra
        CSV fields beyond the header (a stray comma, a glued next row); always empty for JSONL.
    replaced
        Whether text that is not UTF-8 (undecodable bytes, lone surrogates) was replaced with
        U+FFFD on this row.
    """

    number: int
    cells: dict[str, T]
    extra: tuple[str, ...] = ()
    replaced: bool = False


@dataclass(frozen=True)
class Table(Generic[T]):
    """The rows of one file, with its header and the rows whose text was replaced.

    Attributes
    ----------
    path
        The file read.
    header
        The CSV header as written (stripped if asked), or the JSONL keys in first-seen order.
    rows
        The rows, in file order.
    header_replaced
        Whether the CSV header held bytes that are not UTF-8 (replaced with U+FFFD).
    """

    path: Path
    header: tuple[str, ...]
    rows: tuple[Row[T], ...]
    header_replaced: bool = False

    @property
    def replaced(self) -> tuple[int, ...]:
        """The :attr:`Row.number` of every row whose text that is not UTF-8 was replaced."""
        return tuple(row.number for row in self.rows if row.replaced)


def replace_surrogates(value: T) -> tuple[T, bool]:
    r"""Replace every lone surrogate in ``value`` with U+FFFD; say whether there was one.

    A lone surrogate (U+D800..U+DFFF) is what a JSON or Python escape such as ``\ud800`` gives
    when no partner follows: a ``str`` that cannot be encoded as UTF-8, so no file, tokenizer or
    database takes it. This is the policy of this module for undecodable bytes, applied to them.

    Parameters
    ----------
    value
        A string, or a JSON value: lists and dicts are walked (without recursion, however deep),
        their strings and dict keys replaced **in place**; other values are returned as they are.

    Returns
    -------
    value, replaced
        The value without lone surrogates, and whether any was replaced.

    Examples
    --------
    >>> replace_surrogates("Is \ud800 ok?")
    ('Is � ok?', True)
    >>> replace_surrogates({"q": ["😀", 1]})
    ({'q': ['😀', 1]}, False)
    """
    if isinstance(value, str):
        if not _SURROGATE.search(value):
            return value, False
        return _SURROGATE.sub("\ufffd", value), True  # type: ignore[return-value]
    replaced = False
    stack: list[Any] = [value] if isinstance(value, list | dict) else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(isinstance(k, str) and _SURROGATE.search(k) for k in node):
                items = [(replace_surrogates(k)[0], v) for k, v in node.items()]
                node.clear()
                node.update(items)
                replaced = True
            keys: Any = list(node)
        else:
            keys = range(len(node))
        for key in keys:
            item = node[key]
            if isinstance(item, str):
                if _SURROGATE.search(item):
                    node[key] = _SURROGATE.sub("\ufffd", item)
                    replaced = True
            elif isinstance(item, list | dict):
                stack.append(item)
    return value, replaced


def _json_int(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits() converts
        return Decimal(text)


def loads_json(text: str, *, strict: bool = True) -> Any:
    """Parse JSON input text as :func:`json.loads` does, with two differences.

    An integer with more digits than Python converts to ``int`` (``sys.get_int_max_str_digits()``,
    4300 by default) is read exactly, as a :class:`decimal.Decimal` (``str()`` gives its digits
    back), instead of raising ``ValueError``. A value nested deeper than Python can parse, or text
    that is not JSON, raises :class:`~s3kg_core.errors.InputFormatError` and nothing else.

    Parameters
    ----------
    text
        The JSON text.
    strict
        As :func:`json.loads`'s: ``False`` lets strings hold raw control characters (a line
        break written into a label as it is).

    Returns
    -------
    Any
        The value: dicts, lists, str, int (or ``Decimal``), float, bool, ``None``.

    Raises
    ------
    InputFormatError
        If ``text`` is not JSON (``"not JSON (...)"``, the decoder's message in brackets) or nests
        too deeply; the message reads on after "line N is".

    Examples
    --------
    >>> loads_json('{"n": 12, "big": ' + "9" * 5000 + "}")["big"] == 10**5000 - 1
    True
    >>> loads_json("[" * 100_000)
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: nested too deeply to read (deeper than Python's recursion ...
    """
    try:
        return json.loads(text, parse_int=_json_int, strict=strict)
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"not JSON ({exc})") from exc
    except RecursionError as exc:
        raise InputFormatError(
            "nested too deeply to read (deeper than Python's recursion limit)"
        ) from exc


_SPLIT_ROWS = "split it into files of whole rows"


def _open(path: Path, what: str, kind: str) -> io.BufferedReader:
    """``path`` opened as a capped stream (:func:`~s3kg_core.limits.open_input`)."""
    try:
        return open_input(path, kind, _SPLIT_ROWS)
    except InputTooLargeError:
        raise
    except InputFormatError as exc:
        cause = exc.__cause__
        reason = getattr(cause, "strerror", None) or cause or exc
        raise InputFormatError(f"cannot read {what}{path}: {reason}") from exc


def _mark_invalid(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: ``errors="replace"``, with :data:`_MARK` in place of U+FFFD."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    _marks[0] += 1
    return _MARK, exc.end


# The decoder calls the handler once per invalid sequence, as it does "replace"; the mark is a
# lone surrogate, which no decoded UTF-8 text holds, so it says where a U+FFFD was put.
_MARK = "\ud800"
_marks = [0]  # marks put so far, in any file: while a file puts none, its rows hold none
_MARK_ERRORS = "s3kg-tables-mark"
codecs.register_error(_MARK_ERRORS, _mark_invalid)


def read_csv_rows(
    path: str | Path, *, strip_header: bool = False, what: str = ""
) -> Table[str | None]:
    r"""Read a CSV file (UTF-8, optional BOM) into rows keyed by its header.

    Parameters
    ----------
    path
        The CSV file.
    strip_header
        Strip whitespace around the header's column names (``id, kg_1`` reads as ``id,kg_1``).
    what
        What the file is, for the error message: ``"pair set "`` gives "cannot read pair set
        PATH: ...".

    Returns
    -------
    Table
        An empty header (and no rows) for an empty file. :attr:`Table.replaced` lists the rows
        whose bytes that are not UTF-8 were replaced with U+FFFD.

    Raises
    ------
    InputTooLargeError
        If the file is past the input cap (:func:`s3kg_core.limits.check_file_size`), before
        it is read.
    InputFormatError
        If the file cannot be read, or the ``csv`` module rejects it.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("id,kg\n1,[]\n\n2\n3,[],stray\n")
    >>> table = read_csv_rows(path)
    >>> table.header
    ('id', 'kg')
    >>> for row in table.rows:
    ...     print(row.number, row.cells, row.extra)
    1 {'id': '1', 'kg': '[]'} ()
    2 {'id': '2', 'kg': None} ()
    3 {'id': '3', 'kg': '[]'} ('stray',)
    """
    path = Path(path)
    csv.field_size_limit(_FIELD_SIZE_LIMIT)
    header: list[str] | None = None
    header_replaced = False
    rows: list[Row[str | None]] = []
    with _open(path, what, "a CSV file") as raw:
        # Each invalid sequence is decoded as errors="replace" decodes it, to a mark that the
        # row's fields then hold in place of U+FFFD (the decoder never takes an ASCII byte into
        # an invalid sequence, so delimiters, quotes and line breaks are the file's).
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", errors=_MARK_ERRORS, newline="")
        reader = csv.reader(text)
        marks = _marks[0]
        try:
            for fields in reader:
                replaced = _marks[0] != marks and any(_MARK in f for f in fields)
                if replaced:
                    fields = [f.replace(_MARK, "\ufffd") for f in fields]
                if header is None:  # the first line, even a blank one, is the header
                    header = [f.strip() for f in fields] if strip_header else fields
                    header_replaced = replaced
                    continue
                if not fields:  # a blank line
                    continue
                cells: dict[str, str | None] = dict(zip(header, fields, strict=False))
                for name in header[len(fields) :]:
                    cells[name] = None
                rows.append(Row(len(rows) + 1, cells, tuple(fields[len(header) :]), replaced))
        except csv.Error as exc:
            raise InputFormatError(
                f"{path.name}: not a readable CSV file (line {reader.line_num}: {exc})"
            ) from exc
    return Table(path, tuple(header or ()), tuple(rows), header_replaced)


def read_jsonl_records(path: str | Path, *, what: str = "") -> Table[Any]:
    r"""Read a JSONL file (one JSON object per line, UTF-8, optional BOM); blank lines are skipped.

    Lines are split at ``\n`` only (a ``\r`` before it is dropped), so a JSON string holding a
    line separator such as U+2028 stays in its line. Lone surrogates (escapes such as
    ``\ud800``) in keys and values become U+FFFD (:func:`replace_surrogates`), their line reported
    as for undecodable bytes.

    Parameters
    ----------
    path
        The JSONL (or NDJSON) file.
    what
        What the file is, for the error message (see :func:`read_csv_rows`).

    Returns
    -------
    Table
        One row per object, numbered by its line; the header lists every key in first-seen order.
        :attr:`Table.replaced` lists the lines whose text that is not UTF-8 was replaced.

    Raises
    ------
    InputTooLargeError
        If the file is past the input cap, before it is read.
    InputFormatError
        If the file cannot be read, or a line is not JSON (see :func:`loads_json`) or not a JSON
        object (the message names the line).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "t.jsonl"
    >>> _ = path.write_bytes(b'{"q": "caf\xc3\xa9"}\n\n{"q": "caf\xe9", "n": 2}\n')
    >>> table = read_jsonl_records(path)
    >>> table.header, [r.cells for r in table.rows], table.replaced
    (('q', 'n'), [{'q': 'café'}, {'q': 'caf�', 'n': 2}], (3,))
    """
    path = Path(path)
    rows: list[Row[Any]] = []
    with _open(path, what, "a JSONL file") as raw:
        for number, line in enumerate(raw, start=1):
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            line = line.removesuffix(b"\n").removesuffix(b"\r")
            try:
                text, replaced = line.decode("utf-8"), False
            except UnicodeDecodeError:
                text, replaced = line.decode("utf-8", errors="replace"), True
            if not text.strip():
                continue
            try:
                value = loads_json(text)
            except InputFormatError as exc:
                raise InputFormatError(f"{path.name}: line {number} is {exc}") from exc
            if not isinstance(value, dict):
                raise InputFormatError(f"{path.name}: line {number} is not a JSON object")
            if _MAYBE_SURROGATE.search(text):
                value, surrogates = replace_surrogates(value)
                replaced = replaced or surrogates
            rows.append(Row(number, value, (), replaced))
    header = tuple(dict.fromkeys(k for row in rows for k in row.cells))
    return Table(path, header, tuple(rows))


_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_RUN = re.compile(r"[^ \t\n\r,:\]}]*")
_JSON_CHUNK = 1 << 20


class _JSONStream:
    """Text of a JSON file, held from the parse position on, a chunk at a time."""

    def __init__(self, text: io.TextIOBase, path: Path, what: str) -> None:
        self.text, self.path, self.what = text, path, what
        self.buf, self.pos, self.done, self.offset = "", 0, False, 0
        self.decoder = json.JSONDecoder(parse_int=_json_int)

    def fill(self) -> None:
        """Read more: as much as is held, at least a chunk (a large value doubles each time)."""
        try:
            chunk = self.text.read(max(_JSON_CHUNK, len(self.buf) - self.pos))
        except UnicodeDecodeError as exc:
            raise self.error(f"not UTF-8 ({exc.reason})") from exc
        self.offset += self.pos
        self.buf, self.pos = self.buf[self.pos :] + chunk, 0
        self.done = not chunk

    def error(self, reason: str) -> InputFormatError:
        return InputFormatError(f"cannot read {self.what}{self.path} as JSON: {reason}")

    def peek(self) -> str:
        """The next character after white space (``""`` at the end of the file)."""
        while True:
            match = _JSON_SPACE.match(self.buf, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buf) or self.done:
                return self.buf[self.pos : self.pos + 1]
            self.fill()

    def take(self, char: str, wanted: str) -> None:
        if self.peek() != char:
            found = repr(self.peek()) if self.peek() else "the end of the file"
            raise self.error(
                f"not JSON (expecting {wanted} at character {self.where}, found {found})"
            )
        self.pos += 1

    @property
    def where(self) -> int:
        return self.offset + self.pos

    def value(self) -> Any:
        """The next JSON value, read on until it is whole."""
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as exc:
                if self.done:
                    raise self.error(
                        f"not JSON ({exc.msg} at character {self.offset + exc.pos})"
                    ) from exc
                self.fill()
                continue
            except RecursionError as exc:
                raise self.error(
                    "nested too deeply to read (deeper than Python's recursion limit)"
                ) from exc
            # A number may go on past the buffer ("0." read as 0): read on while what follows
            # it runs up to the buffer's end without white space or punctuation.
            run = _JSON_RUN.match(self.buf, end)
            if self.done or (run is not None and run.end() < len(self.buf)):
                self.pos = end
                return value
            self.fill()


def iter_json_object(
    path: str | Path, *, what: str = "", expected: str = "a JSON object"
) -> Generator[tuple[str, Any], None, None]:
    r"""The ``(key, value)`` pairs of a file of one JSON object, in file order, as they are read.

    The file is refused past the input cap before it is read, and read a chunk at a time: only
    the value being parsed is held, so a caller that stops early reads no further (nor finds a
    fault further on). Values are parsed as :func:`loads_json` parses them; a key given twice
    comes twice (``json.loads`` would keep its last value at its first place).

    Parameters
    ----------
    path
        The JSON file (UTF-8, optional BOM).
    what
        What the file is, for the error message (see :func:`read_csv_rows`).
    expected
        What the file should hold, for the message when it is not an object.

    Raises
    ------
    InputTooLargeError
        If the file is past the input cap, before it is read.
    InputFormatError
        ``cannot read PATH as JSON: not JSON (... at character N)`` when the text is not JSON
        (or not UTF-8, or nested too deeply), ``NAME: expected ...`` when it is not an object.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.json"
    >>> _ = path.write_text('{"1": {"q": "a?"}, "2": 12} ')
    >>> list(iter_json_object(path))
    [('1', {'q': 'a?'}), ('2', 12)]
    """
    path = Path(path)
    with _open(path, what, "a JSON file") as raw:
        stream = _JSONStream(io.TextIOWrapper(raw, encoding="utf-8-sig"), path, what)
        if stream.peek() != "{":
            if stream.peek() in ("[", '"', "t", "f", "n", "-") or stream.peek().isdigit():
                raise InputFormatError(f"{path.name}: expected {expected}")
            stream.take("{", "an object")
        stream.pos += 1
        if stream.peek() == "}":
            stream.pos += 1
        else:
            while True:
                if stream.peek() != '"':
                    stream.take('"', "a key")
                key = stream.value()
                stream.take(":", "':'")
                yield key, stream.value()
                if stream.peek() == ",":
                    stream.pos += 1
                    continue
                stream.take("}", "',' or '}'")
                break
        if stream.peek():
            raise stream.error(f"not JSON (extra data at character {stream.where})")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a CSV cell as a formula (OWASP's list)."""


def csv_safe_cell(value: T) -> T:
    r"""A CSV cell as a spreadsheet will show it, never run it (OWASP's CSV injection rule).

    A text that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a
    leading ``'``, which spreadsheets read as "this is text" and do not display; a plain number
    (``-0.5``) and every value that is not a string are returned as they are.

    Parameters
    ----------
    value
        A cell.

    Returns
    -------
    T
        The cell, escaped when it is a text that could run as a formula.

    References
    ----------
    OWASP, "CSV Injection", https://owasp.org/www-community/attacks/CSV_Injection

    Examples
    --------
    >>> [csv_safe_cell(v) for v in ["=2+5", "@SUM(1)", "+SUM(1)", "\t=1", "-2+3", "a=b"]]
    ["'=2+5", "'@SUM(1)", "'+SUM(1)", "'\t=1", "'-2+3", 'a=b']
    >>> csv_safe_cell("-0.25"), csv_safe_cell(-0.25), csv_safe_cell(None)
    ('-0.25', -0.25, None)
    """
    if (
        isinstance(value, str)
        and value.startswith(FORMULA_STARTS)
        and not _PLAIN_NUMBER.fullmatch(value)
    ):
        return "'" + value  # type: ignore[return-value]
    return value


def csv_safe_row(row: Iterable[Any]) -> list[Any]:
    """:func:`csv_safe_cell` on every cell of a row (for :func:`csv.writer`).

    Examples
    --------
    >>> csv_safe_row(["id", "=cmd|' /C calc'!A0", 0.5])
    ['id', "'=cmd|' /C calc'!A0", 0.5]
    """
    return [csv_safe_cell(cell) for cell in row]


def csv_safe_frame(frame: Any) -> Any:
    r"""A copy of a pandas DataFrame with :func:`csv_safe_cell` on its text cells and column names.

    Numeric columns are left as they are (their numbers are written as numbers).

    Examples
    --------
    >>> import pandas as pd
    >>> csv_safe_frame(pd.DataFrame({"q": ["=1+1", "ok"], "s": [-1.0, 2.0]})).to_csv(index=False)
    "q,s\n'=1+1,-1.0\nok,2.0\n"
    """
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype.kind in "OSUT" or str(out[column].dtype) in ("string", "category"):
            out[column] = out[column].astype(object).map(csv_safe_cell)
    out.columns = [csv_safe_cell(c) for c in out.columns]
    return out
