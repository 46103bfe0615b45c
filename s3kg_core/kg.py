"""Knowledge-graph data shapes: :class:`Triple` and :class:`KnowledgeGraph`.

A scorer takes either, or plain ``[head, relation, tail]`` lists (:data:`TriplesLike`);
:func:`as_triples` turns any of them into triples.

Both are frozen dataclasses with ``to_dict`` / ``from_dict`` so they can be stored as JSON
(DuckDB, CSV cells, the dashboard) and read back unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import TripleError

__all__ = ["SOURCES", "KnowledgeGraph", "Triple", "TriplesLike", "as_triples"]

SOURCES = ("gold", "answer", "context")
"""The three texts of a question whose KGs are compared, in the order they are drawn and stored."""


@dataclass(frozen=True, slots=True)
class Triple:
    """One fact ``(head, relation, tail)`` of a knowledge graph.

    Examples
    --------
    >>> t = Triple("Marie Curie", "discovered", "radium")
    >>> t.sentence()
    'Marie Curie discovered radium'
    >>> Triple.from_any(["a", "b", "c"]) == Triple("a", "b", "c")
    True
    """

    head: str
    relation: str
    tail: str

    @classmethod
    def from_any(cls, value: Any) -> Triple:
        """Build a triple from a ``Triple`` or a sequence of three strings.

        Raises
        ------
        TripleError
            If ``value`` does not have exactly three parts or a part is not a string.
        """
        if isinstance(value, Triple):
            return value
        if isinstance(value, Mapping):
            try:
                value = (value["head"], value["relation"], value["tail"])
            except KeyError as exc:
                raise TripleError(
                    f"triple mapping needs keys head, relation, tail; got {sorted(value)}"
                ) from exc
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise TripleError(
                f"a triple is a list of 3 strings [head, relation, tail]; got {value!r:.80}"
            )
        if len(value) != 3:
            raise TripleError(
                f"a triple has 3 parts [head, relation, tail]; got {len(value)}: {value!r:.80}"
            )
        if not all(isinstance(part, str) for part in value):
            raise TripleError(f"every part of a triple must be a string; got {value!r:.80}")
        return cls(value[0], value[1], value[2])

    def sentence(self) -> str:
        """Serialise as ``"head relation tail"``, the text that gets embedded."""
        return f"{self.head} {self.relation} {self.tail}"

    def to_list(self) -> list[str]:
        """Return ``[head, relation, tail]``."""
        return [self.head, self.relation, self.tail]


@dataclass(frozen=True, slots=True)
class KnowledgeGraph:
    """An ordered collection of triples.

    Examples
    --------
    >>> kg = KnowledgeGraph.from_triples([["a", "likes", "b"], ["b", "likes", "c"]])
    >>> len(kg), kg.entities(), kg.relations()
    (2, ['a', 'b', 'c'], ['likes'])
    >>> KnowledgeGraph.from_dict(kg.to_dict()) == kg
    True
    """

    triples: tuple[Triple, ...] = ()

    @classmethod
    def from_triples(cls, triples: Iterable[Any]) -> KnowledgeGraph:
        """Build a graph from triples or ``[head, relation, tail]`` lists (validated)."""
        return cls(tuple(Triple.from_any(t) for t in triples))

    def __len__(self) -> int:
        return len(self.triples)

    def __iter__(self) -> Iterator[Triple]:
        return iter(self.triples)

    def entities(self) -> list[str]:
        """Distinct head and tail labels in order of first appearance."""
        return list(dict.fromkeys(p for t in self.triples for p in (t.head, t.tail)))

    def relations(self) -> list[str]:
        """Distinct relation labels in order of first appearance."""
        return list(dict.fromkeys(t.relation for t in self.triples))

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"triples": [[h, r, t], ...]}``."""
        return {"triples": [t.to_list() for t in self.triples]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> KnowledgeGraph:
        """Inverse of :meth:`to_dict`."""
        return cls.from_triples(data.get("triples", ()))


TriplesLike = KnowledgeGraph | Iterable[Any]
"""What the scorers accept as a KG: a :class:`KnowledgeGraph`, or triples / ``[h, r, t]`` lists."""


def as_triples(kg: TriplesLike) -> tuple[Triple, ...]:
    """The triples of a KG given as a :class:`KnowledgeGraph` or as triples / ``[h, r, t]`` lists.

    Parameters
    ----------
    kg
        A :class:`KnowledgeGraph` (its triples are returned as they are), or an iterable of
        :class:`Triple` or three-string lists (each validated by :meth:`Triple.from_any`).

    Returns
    -------
    tuple of Triple
        In the given order, duplicates kept.

    Raises
    ------
    TripleError
        If an item is not three strings.

    Examples
    --------
    >>> as_triples([["Curie", "discovered", "radium"]])
    (Triple(head='Curie', relation='discovered', tail='radium'),)
    >>> kg = KnowledgeGraph.from_triples([["a", "r", "b"]])
    >>> as_triples(kg) is kg.triples
    True
    """
    if isinstance(kg, KnowledgeGraph):
        return kg.triples
    return tuple(Triple.from_any(t) for t in kg)
