"""The extractor interface: texts of an item in, one KG per text out.

An item has up to three texts (gold answer, model answer, context). The LLM extractor reads all
three in one call so their labels agree; the offline extractor reads each text on its own. Both
return, per item, a mapping ``source -> TextKG`` for the sources whose text was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..kg import SOURCES, Triple

__all__ = ["SOURCES", "Extractor", "ItemTexts", "TextKG"]


@dataclass(frozen=True)
class ItemTexts:
    """The texts of one item; a ``None`` text is not extracted (no KG for that source).

    Examples
    --------
    >>> ItemTexts(gold="Paris is the capital of France.").given()
    {'gold': 'Paris is the capital of France.'}
    """

    gold: str | None = None
    answer: str | None = None
    context: str | None = None

    def given(self) -> dict[str, str]:
        """The texts that are not ``None``, by source."""
        return {s: t for s in SOURCES if (t := getattr(self, s)) is not None}


@dataclass(frozen=True)
class TextKG:
    """The KG extracted from one text.

    ``status`` is ``ok``, ``empty`` (the text is blank or yields no triple) or
    ``failed: <reason>`` (the extractor could not produce a KG; nothing was guessed).
    ``n_dropped`` counts malformed triples that were discarded, ``truncated`` says that the
    text was cut to fit the model's input.

    Examples
    --------
    >>> TextKG((Triple("paris", "capital of", "france"),)).status
    'ok'
    """

    triples: tuple[Triple, ...] = ()
    status: str = "ok"
    n_dropped: int = 0
    truncated: bool = False

    def __post_init__(self) -> None:
        if self.status == "ok" and not self.triples:
            object.__setattr__(self, "status", "empty")


@runtime_checkable
class Extractor(Protocol):
    """Anything that turns items' texts into KGs.

    ``name`` identifies the extractor and its settings (stored as the run's extractor).
    """

    name: str

    def extract(self, items: Sequence[ItemTexts]) -> list[dict[str, TextKG]]:
        """One ``{source: TextKG}`` per item, for the sources whose text was given."""
        ...
