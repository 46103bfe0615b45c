r"""Meaning graphs in PENMAN notation (AMR) read as knowledge graphs.

A PENMAN file holds one graph per block, blocks separated by blank lines (as AMR corpora are
written), each graph after its comment lines (``# ::id 0``, ``# ::snt A man is dancing.``).
:func:`read_penman` and :func:`parse_penman` read every graph with the ``penman`` package and
its AMR model (so ``:consist-of`` and the like are roles of their own, not inversions), and keep
the comment metadata. :func:`amr_to_triples` turns one graph into ``[head, relation, tail]``
triples, the input of every S3KG scorer.

The mapping (`s3kg bench bamboo` converts BAMBOO's graphs with it; the outside evaluation of the
test split ran before named entities were read by their names):

- a variable is named by its concept, the PropBank sense suffix dropped (``dance-01`` ->
  ``dance``, ``have-org-role-91`` -> ``have-org-role``; ``man`` stays ``man``). Two variables
  with the same concept are therefore one KG node: ``(a / man :ARG0-of (b / see-01 :ARG1 (c /
  man)))`` gives the triples ``(see, ARG0, man)`` and ``(see, ARG1, man)``, a KG with the nodes
  ``see`` and ``man``;
- a named entity is named by its name, as a KG built from text names it: a variable with a
  ``:name`` whose target is a ``name`` node with constant ``:op1``, ``:op2``... is named by those
  constants joined by spaces in their order, its concept kept in one triple ``(name, instance,
  concept)``; the ``name`` node's ``:op`` triples give none. ``(c / company :name (n / name :op1
  "Nokia"))`` gives ``(Nokia, instance, company)``, where every name would otherwise be one
  ``name`` node (two companies, and who did what to whom among them, indistinguishable);
- a role loses its colon (``:ARG0`` -> ``ARG0``, ``:mod`` -> ``mod``, ``:op1`` -> ``op1``); an
  inverse role is de-inverted, ``(a :ARG0-of b)`` giving ``(concept of b, ARG0, concept of a)``;
- a constant is unquoted (``"Obama"`` -> ``Obama``, escapes resolved); ``-`` (polarity) and
  numbers stay as their text;
- one triple per edge and per attribute, in the graph's order: ``(concept of the source, role,
  concept of the target or the constant)``; the ``:instance`` triples themselves give none.
  Duplicates are kept (the scorers drop them);
- reification is left as it comes (a reified ``:location`` stays a ``be-located-at`` node);
- a graph of one node and nothing else gives one triple ``(concept, instance, concept)``, so two
  identical one-node graphs compare as identical instead of as two empty KGs.

Malformed input raises :class:`~s3kg_core.errors.PenmanFormatError` naming the file, the block
(graphs counted from 1 in file order) and its line: text before or after the graph, unbalanced
parentheses, nesting deeper than :data:`~s3kg_core.limits.MAX_PENMAN_DEPTH`, what ``penman``
cannot decode, a role without a target, a variable without a concept.
A block of comments only (a corpus header) is no graph and is skipped. Bytes that are not UTF-8
become U+FFFD.

Examples
--------
>>> graphs = parse_penman('''
... # ::id s1
... # ::snt The boy wants to go.
... (w / want-01
...    :ARG0 (b / boy)
...    :ARG1 (g / go-02 :ARG0 b))
... ''')
>>> graphs[0].id, graphs[0].sentence
('s1', 'The boy wants to go.')
>>> [t.to_list() for t in amr_to_triples(graphs[0])]
[['want', 'ARG0', 'boy'], ['want', 'ARG1', 'go'], ['go', 'ARG0', 'boy']]
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import penman
from penman import constant
from penman.exceptions import PenmanError
from penman.models.amr import model as AMR_MODEL

from .errors import InputFormatError, PenmanFormatError
from .kg import Triple
from .kgio import PairRow
from .limits import MAX_PENMAN_DEPTH, MAX_TRIPLES, OVERSIZED, kg_problem, open_input
from .names import without_unsafe

__all__ = [
    "SINGLE_NODE_RELATION",
    "AMRGraph",
    "amr_to_triples",
    "concept_label",
    "parse_penman",
    "penman_pair_rows",
    "read_penman",
    "read_penman_pairs",
]

SINGLE_NODE_RELATION = "instance"
"""The relation of the one triple ``(concept, instance, concept)`` of a graph with one node."""

_SENSE = re.compile(r"-\d+$")
_BLANK = re.compile(r"^[ \t\r\f\v]*$")


@dataclass(frozen=True)
class AMRGraph:
    """One graph of a PENMAN file, its comment metadata and where it was read.

    Attributes
    ----------
    graph
        The decoded ``penman.Graph`` (AMR model: inverse roles de-inverted).
    metadata
        The ``# ::key value`` comments (``id``, ``snt``, ...), read-only.
    index
        The graph's position in its file, from 0 (blocks of comments only are not counted).
    line
        The line its block starts on, from 1.
    source
        The file name, or ``"<text>"``.

    Examples
    --------
    >>> g = parse_penman("(d / dance-01 :ARG0 (m / man))")[0]
    >>> g.id, g.sentence, g.index, g.line
    ('0', None, 0, 1)
    >>> AMRGraph.from_dict(g.to_dict()) == g
    True
    """

    graph: penman.Graph = field(repr=False, compare=False)
    metadata: Mapping[str, str] = field(default_factory=dict)
    index: int = 0
    line: int = 1
    source: str = "<text>"

    @property
    def id(self) -> str:
        """The ``# ::id`` of the graph, else its index as text."""
        return self.metadata.get("id") or str(self.index)

    @property
    def sentence(self) -> str | None:
        """The ``# ::snt`` sentence, or ``None``."""
        return self.metadata.get("snt")

    def triples(self) -> list[Triple]:
        """The graph as KG triples (:func:`amr_to_triples`)."""
        return amr_to_triples(self)

    def penman(self) -> str:
        """The graph in PENMAN notation, as ``penman`` writes it (variables and roles kept).

        Raises
        ------
        PenmanFormatError
            If the graph is nested too deeply for ``penman`` to write (it recurses once a
            level), naming its source and position.
        """
        try:
            with _quiet_penman():
                return str(penman.encode(self.graph, model=AMR_MODEL))
        except RecursionError:
            raise PenmanFormatError(
                f"{self.source}, block {self.index + 1} (line {self.line}): nested too deeply "
                "to write"
            ) from None

    def to_dict(self) -> dict[str, Any]:
        """``{"penman": ..., "metadata": {...}, "index": ..., "line": ..., "source": ...}``."""
        return {
            "penman": self.penman(),
            "metadata": dict(self.metadata),
            "index": self.index,
            "line": self.line,
            "source": self.source,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AMRGraph:
        """Inverse of :meth:`to_dict` (the PENMAN text is decoded again).

        Raises
        ------
        PenmanFormatError
            If the stored PENMAN text is malformed.
        """
        source = str(data.get("source", "<text>"))
        line = int(data.get("line", 1))
        index = int(data.get("index", 0))
        graph = _decode(str(data["penman"]), source, index + 1, line)
        return cls(
            graph=graph,
            metadata=MappingProxyType(dict(data.get("metadata", {}))),
            index=index,
            line=line,
            source=source,
        )


@contextmanager
def _quiet_penman() -> Iterator[None]:
    """Silence ``penman``'s own warnings (a missing target, a node given twice) meanwhile.

    A missing target is an error here, raised with the file and block, not a line logged beside.
    """
    logger = logging.getLogger("penman")
    before = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(before)


def _check_extent(body: str) -> str | None:
    """Why ``body`` (a block without its comments) is not one graph the reader can take.

    Exactly one parenthesised graph, nested at most :data:`~s3kg_core.limits.MAX_PENMAN_DEPTH`
    deep (``penman`` recurses once a level).
    """
    text = body.strip()
    if not text.startswith("("):
        return f"text before the graph: {text[:40]!r}"
    depth = 0
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "(":
            depth += 1
            if depth > MAX_PENMAN_DEPTH:
                return f"nested more than {MAX_PENMAN_DEPTH} parentheses deep (the limit)"
        elif ch == ")":
            depth -= 1
            if depth == 0:
                rest = text[i + 1 :].strip()
                return f"text after the graph: {rest[:40]!r}" if rest else None
    if in_string:
        return "a quoted constant is not closed"
    return f"unbalanced parentheses: {depth} not closed"


def _decode(text: str, source: str, block: int, line: int) -> penman.Graph:
    """Decode one block's text, or raise :class:`PenmanFormatError` naming block and line."""
    where = f"{source}, block {block} (line {line})"
    body = "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#"))
    if problem := _check_extent(body):
        raise PenmanFormatError(f"{where}: malformed PENMAN: {problem}")
    try:
        with _quiet_penman():
            graph = penman.decode(text, model=AMR_MODEL)
    except PenmanError as exc:  # DecodeError and the model's errors
        detail = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        lineno = getattr(exc, "lineno", None)
        at = f" (line {line + lineno - 1})" if isinstance(lineno, int) else ""
        raise PenmanFormatError(f"{where}: malformed PENMAN{at}: {detail}") from exc
    except RecursionError:  # the reader recurses once a level: deeper than this stack allows
        raise PenmanFormatError(f"{where}: malformed PENMAN: nested too deeply to read") from None
    for src, role, target in graph.triples:
        if src is None or (role == ":instance" and target is None):
            name = "a node" if src is None else f"variable {src}"
            raise PenmanFormatError(f"{where}: malformed PENMAN: {name} has no concept")
        if target is None:
            raise PenmanFormatError(
                f"{where}: malformed PENMAN: role {role} of {src} has no target"
            )
    return graph


def _blocks(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """``(first line, text)`` of each block of ``lines`` (blocks are separated by blank lines)."""
    start: int | None = None
    block: list[str] = []
    for number, line in enumerate(lines, start=1):
        if _BLANK.match(line):
            if block and start is not None:
                yield start, "\n".join(block)
            start, block = None, []
            continue
        if start is None:
            start = number
        block.append(line)
    if block and start is not None:
        yield start, "\n".join(block)


def _graph_blocks(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """:func:`_blocks` that hold a graph: a block of comments only (a corpus header) is none."""
    for line, block in _blocks(lines):
        if not all(ln.lstrip().startswith("#") for ln in block.splitlines()):
            yield line, block


def _graph(block: str, source: str, index: int, line: int) -> AMRGraph:
    """The graph of one block, decoded (:func:`_decode`), ``index`` its position from 0."""
    graph = _decode(block, source, index + 1, line)
    return AMRGraph(
        graph=graph,
        metadata=MappingProxyType(dict(graph.metadata)),
        index=index,
        line=line,
        source=source,
    )


def parse_penman(text: str, *, source: str = "<text>") -> list[AMRGraph]:
    r"""Read every graph of a PENMAN text.

    Parameters
    ----------
    text
        Graphs separated by blank lines, each after its comment lines (``# ::id``, ``# ::snt``).
    source
        What to call the text in error messages (a file name).

    Returns
    -------
    list of AMRGraph
        In order; a block of comments only is skipped.

    Raises
    ------
    PenmanFormatError
        If a block is not one well-formed graph; the message names ``source``, the block
        (graphs counted from 1) and its line.

    Examples
    --------
    >>> gs = parse_penman("# ::id a\n(x / dog)\n\n# ::id b\n(y / cat :quant 2)")
    >>> [(g.id, g.line) for g in gs]
    [('a', 1), ('b', 4)]
    >>> parse_penman("(x / dog)\n\n(y / cat :ARG0 (z / mouse)", source="toy.amr")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.PenmanFormatError: toy.amr, block 2 (line 3): malformed PENMAN: unbalanced ...
    """
    return [
        _graph(block, source, index, line)
        for index, (line, block) in enumerate(_graph_blocks(text.splitlines()))
    ]


def _lines(path: Path) -> Iterator[str]:
    """The lines of the PENMAN file ``path``, read as they come (never the whole file at once).

    The file is refused before it is read when it holds more than
    :data:`~s3kg_core.limits.MAX_IMPORT_BYTES`. Bytes that are not UTF-8 become U+FFFD; a BOM
    is dropped.
    """
    try:  # capped before it is read, and while: a FIFO or a growing file stops at the cap
        with (
            open_input(
                path,
                "a PENMAN file",
                "split it into files of whole graphs (the same pairs in each of the two)",
            ) as raw,
            io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace") as fh,
        ):
            for line in fh:
                yield line.rstrip("\r\n")
    except OSError as exc:
        raise InputFormatError(f"cannot read {path}: {exc.strerror or exc}") from exc


def read_penman(path: str | Path) -> list[AMRGraph]:
    r"""Read every graph of a PENMAN file (see :func:`parse_penman`), a block at a time.

    Raises
    ------
    InputFormatError
        If the file cannot be read or holds more than
        :data:`~s3kg_core.limits.MAX_IMPORT_BYTES` (refused before it is read);
        :class:`~s3kg_core.errors.PenmanFormatError` (a subclass) if a block is malformed,
        naming the file, the block and its line.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "one.amr"
    >>> _ = path.write_text("# ::snt Hi.\n(s / say-01 :ARG1 (h / hi))\n")
    >>> [t.to_list() for t in read_penman(path)[0].triples()]
    [['say', 'ARG1', 'hi']]
    """
    path = Path(path)
    return [
        _graph(block, path.name, index, line)
        for index, (line, block) in enumerate(_graph_blocks(_lines(path)))
    ]


def _check_parallel(path_1: Path, path_2: Path) -> None:
    """Refuse two PENMAN files of different numbers of graphs, counted before any is decoded."""
    one, two = (sum(1 for _ in _graph_blocks(_lines(p))) for p in (path_1, path_2))
    if one != two:
        raise InputFormatError(
            f"{path_1.name} has {one} graphs and {path_2.name} has {two}: parallel files need "
            "one graph per pair, in the same order"
        )


def read_penman_pairs(path_1: str | Path, path_2: str | Path) -> list[tuple[AMRGraph, AMRGraph]]:
    r"""Read two parallel PENMAN files: graph i of the first with graph i of the second.

    The graphs of both files are counted first, a block at a time and without decoding any,
    so two files of different lengths are named at once.

    Raises
    ------
    InputFormatError
        If the two files hold different numbers of graphs (both counts are named), or a file
        cannot be read or is too large (:func:`read_penman`);
        :class:`~s3kg_core.errors.PenmanFormatError` for a malformed block.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.amr").write_text("(x / dog)\n\n(y / cat)\n")
    >>> _ = (folder / "b.amr").write_text("(x / dog)\n")
    >>> read_penman_pairs(folder / "a.amr", folder / "b.amr")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: a.amr has 2 graphs and b.amr has 1: parallel files ...
    """
    _check_parallel(Path(path_1), Path(path_2))
    return list(zip(read_penman(path_1), read_penman(path_2), strict=True))


_ROLE = re.compile(r":[^\s()/:~]+")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')
_NAME_OP = re.compile(r":op[0-9]+")


def _too_many_triples(block: str) -> str | None:
    """Why ``block`` is past :data:`~s3kg_core.limits.MAX_TRIPLES` before it is decoded.

    Every role of a graph but a name's ``:opN`` gives one triple (:func:`amr_to_triples`), so
    more roles than the limit, ``:opN`` left out, is more triples than the limit. Only a block
    long enough to hold them is looked at (four characters a role at the least).
    """
    if len(block) <= 4 * MAX_TRIPLES:
        return None
    graph = "\n".join(ln for ln in block.splitlines() if not ln.lstrip().startswith("#"))
    body = _QUOTED.sub('""', graph)
    roles = sum(1 for m in _ROLE.finditer(body) if not _NAME_OP.fullmatch(m.group()))
    if roles <= MAX_TRIPLES:
        return None
    return f"more than {MAX_TRIPLES:,} triples ({roles:,} roles; the limit is {MAX_TRIPLES:,})"


def _comment_id(block: str) -> str | None:
    """The ``# ::id`` of a block's leading comments, read as ``penman`` reads metadata."""
    metadata: dict[str, str] = {}
    for line in block.splitlines():
        if not line.lstrip().startswith("#"):
            break
        comment = line.strip()
        while comment:
            comment, found, meta = comment.rpartition("::")
            if found:
                key, _, value = meta.partition(" ")
                metadata[key] = value.rstrip()
    return metadata.get("id") or None


def penman_pair_rows(path_1: str | Path, path_2: str | Path) -> list[PairRow]:
    r"""Two parallel PENMAN files as pair rows, as :func:`~s3kg_core.kgio.read_pairs_csv` gives.

    A row's ``id`` is the ``# ::id`` of the first file's graph, else its index (from 0), less
    what a name may not hold (an ESC, U+202E: :func:`s3kg_core.names.without_unsafe`; the row is
    then ``id_cleaned``); its KGs are the two graphs' triples (:func:`amr_to_triples`). A graph
    past the size limits of :mod:`s3kg_core.limits` is not kept and its row gets status
    ``oversized_kg_1`` / ``oversized_kg_2``, as in a pair CSV; one with more roles than the
    triples a KG may have is called so before it is decoded. The files are counted first
    (:func:`read_penman_pairs`) and read a pair of graphs at a time: what is kept of a pair is
    its triples.

    Raises
    ------
    InputFormatError
        As :func:`read_penman_pairs`.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.amr").write_text("# ::id p1\n(x / dog)\n\n(y / cat :mod (z / big))\n")
    >>> _ = (folder / "b.amr").write_text("(x / dog)\n\n(y / cat)\n")
    >>> [(r.id, r.status, len(r.kg_1), len(r.kg_2)) for r in penman_pair_rows(
    ...     folder / "a.amr", folder / "b.amr")]
    [('p1', 'ok', 1, 1), ('1', 'ok', 1, 1)]
    """
    paths = (Path(path_1), Path(path_2))
    _check_parallel(*paths)
    rows: list[PairRow] = []
    sides = zip(*(_graph_blocks(_lines(p)) for p in paths), strict=True)
    for index, blocks in enumerate(sides):
        graphs = [
            None if _too_many_triples(block) else _graph(block, path.name, index, line)
            for path, (line, block) in zip(paths, blocks, strict=True)
        ]
        first = graphs[0]
        graph_id = first.id if first is not None else _comment_id(blocks[0][1]) or str(index)
        cleaned = without_unsafe(graph_id)
        row = PairRow(id=cleaned.strip() or str(index), id_cleaned=cleaned != graph_id)
        for side, (graph, (_, block)) in enumerate(zip(graphs, blocks, strict=True), start=1):
            triples = amr_to_triples(graph) if graph is not None else []
            problem = _too_many_triples(block) if graph is None else kg_problem(triples)
            if problem:
                if row.status == "ok":
                    row.status = f"{OVERSIZED}_kg_{side}"
                    row.problem = f"kg_{side}: {problem}"
                continue
            setattr(row, f"kg_{side}", triples)
        rows.append(row)
    return rows


def concept_label(concept: str) -> str:
    """A concept without its PropBank sense suffix (``-01``, ``-91``).

    Examples
    --------
    >>> concept_label("dance-01"), concept_label("have-org-role-91"), concept_label("man")
    ('dance', 'have-org-role', 'man')
    """
    return _SENSE.sub("", concept)


def _constant(value: str) -> str:
    """A constant as a KG label: a quoted string unquoted (escapes resolved), others as written."""
    if constant.type(value) is constant.STRING:
        return str(constant.evaluate(value))
    return value


_NAME_PART = re.compile(r":op[0-9]+")


def _names(g: penman.Graph, concepts: Mapping[str, str]) -> dict[str, str]:
    """The name each ``name`` node that is some variable's ``:name`` spells (its ``:op``s)."""
    named = {t for _, role, t in g.edges() if role == ":name" and concepts.get(t) == "name"}
    parts: dict[str, list[tuple[int, str]]] = {}
    for source, role, value in g.attributes():
        if source in named and _NAME_PART.fullmatch(role):
            parts.setdefault(source, []).append((int(role[3:]), _constant(str(value))))
    return {v: " ".join(text for _, text in sorted(p)) for v, p in parts.items()}


def amr_to_triples(graph: AMRGraph | penman.Graph) -> list[Triple]:
    """The KG triples of one AMR graph (the mapping of this module's docstring).

    Parameters
    ----------
    graph
        An :class:`AMRGraph` or a ``penman.Graph`` decoded with the AMR model.

    Returns
    -------
    list of Triple
        One per edge and attribute, in the graph's order; ``[(concept, instance, concept)]`` for
        a graph of one node and nothing else.

    Examples
    --------
    >>> g = parse_penman('''(s / say-01 :ARG0-of (c / cause-01) :polarity -
    ...     :ARG1 (n / name :op1 "Obama") :consist-of (m / metal))''')[0]
    >>> [t.to_list() for t in amr_to_triples(g)]  # doctest: +NORMALIZE_WHITESPACE
    [['cause', 'ARG0', 'say'], ['say', 'polarity', '-'], ['say', 'ARG1', 'name'],
     ['name', 'op1', 'Obama'], ['say', 'consist-of', 'metal']]
    >>> amr_to_triples(parse_penman("(l / line)")[0])
    [Triple(head='line', relation='instance', tail='line')]
    >>> g = parse_penman('''(b / beat-03
    ...     :ARG0 (p / person :name (n / name :op1 "Renzo" :op2 "Furlan"))
    ...     :ARG1 (p2 / person :name (n2 / name :op1 "Thomas" :op2 "Johansson")))''')[0]
    >>> [t.to_list() for t in amr_to_triples(g)]  # doctest: +NORMALIZE_WHITESPACE
    [['beat', 'ARG0', 'Renzo Furlan'], ['Renzo Furlan', 'instance', 'person'],
     ['beat', 'ARG1', 'Thomas Johansson'], ['Thomas Johansson', 'instance', 'person']]
    """
    g = graph.graph if isinstance(graph, AMRGraph) else graph
    concepts = {v: concept_label(str(c)) for v, _, c in g.instances()}
    names = _names(g, concepts)
    labels = dict(concepts)
    for source, role, target in g.edges():
        if role == ":name" and target in names:
            labels[source] = names[target]
    triples: list[Triple] = []
    for source, role, target in g.triples:
        if role == ":instance" or (source in names and _NAME_PART.fullmatch(role)):
            continue
        head = labels.get(str(source), str(source))
        if role == ":name" and target in names:
            triples.append(Triple(head, SINGLE_NODE_RELATION, concepts[source]))
            continue
        label = role[1:] if role.startswith(":") else role
        tail = labels[target] if target in labels else _constant(str(target))
        triples.append(Triple(head, label, tail))
    if not triples and len(concepts) == 1:
        only = next(iter(concepts.values()))
        triples.append(Triple(only, SINGLE_NODE_RELATION, only))
    return triples
