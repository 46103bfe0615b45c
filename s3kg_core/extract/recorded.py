"""Recorded KGs: what an extractor produced, kept in a JSONL file and served again without it.

The demo ships the offline extractor's KGs of its own texts (``data/demo/kgs.jsonl``, written by
``scripts/make_demo_kgs.py``), so a first start needs no spaCy. A file records the extractor's
:func:`fingerprint` (its name, a digest of its code, the spaCy version) and one line per distinct
text, keyed by the text's SHA-256. :class:`RecordedExtractor` answers under the recorded
extractor's ``name`` (so runs, scores and signatures are those of a build that extracted), and
hands any text the file does not hold to the live extractor. A file whose fingerprint is not the
live extractor's is stale: :func:`load_recorded` says so and the caller extracts instead.

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.kg import Triple
>>> class Upper:
...     name = "upper"
...     def extract(self, items):
...         return [{s: TextKG((Triple(t.upper(), "is", "text"),)) for s, t in i.given().items()}
...                 for i in items]
>>> path = os.path.join(tempfile.mkdtemp(), "kgs.jsonl")
>>> record_kgs(Upper(), ["a b"], path)
1
>>> recorded = RecordedExtractor(load_recorded(path, Upper()), fallback=Upper)
>>> out = recorded.extract([ItemTexts(gold="a b"), ItemTexts(answer="c")])
>>> out[0]["gold"].triples[0].head, out[1]["answer"].triples[0].head
('A B', 'C')
>>> recorded.served, recorded.extracted  # "c" was not recorded: the live extractor's
(1, 1)
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from .._version import __version__
from ..errors import InputFormatError
from ..kg import Triple
from .base import Extractor, ItemTexts, TextKG

__all__ = [
    "RECORD_FORMAT",
    "RecordedExtractor",
    "RecordedKGs",
    "fingerprint",
    "load_recorded",
    "record_kgs",
    "text_key",
]

RECORD_FORMAT = "s3kg-recorded-kgs-v1"
"""The ``format`` of a recorded-KG file's header line."""


def text_key(text: str) -> str:
    """The key of a text in a recorded-KG file: the SHA-256 of its UTF-8 bytes.

    Examples
    --------
    >>> text_key("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint(extractor: Extractor) -> str:
    """What a recorded KG depends on: the extractor's name, its code and its parser's version.

    ``<name>|code:<sha256 of the module defining its class, 16 hex>|spacy:<version>`` (the
    spaCy part where the module uses spaCy). Editing the extractor's module changes it, so a
    file recorded before the edit is no longer used.

    Examples
    --------
    >>> class Toy:
    ...     name = "toy"
    >>> fingerprint(Toy()).split("|")[0]
    'toy'
    """
    parts = [str(extractor.name)]
    try:
        source = inspect.getsourcefile(type(extractor))
    except (TypeError, OSError):  # a built-in class: nothing to digest
        source = None
    if source is not None and Path(source).is_file():
        code = Path(source).read_bytes()
        parts.append(f"code:{hashlib.sha256(code).hexdigest()[:16]}")
        if b"spacy" in code:
            try:
                parts.append(f"spacy:{metadata.version('spacy')}")
            except metadata.PackageNotFoundError:
                parts.append("spacy:none")
    return "|".join(parts)


@dataclass(frozen=True)
class RecordedKGs:
    """A recorded-KG file, read: the extractor it came from and its KGs by text key."""

    path: Path
    extractor: str
    fingerprint: str
    version: str
    kgs: dict[str, TextKG]


def _kg_line(text: str, kg: TextKG) -> dict[str, Any]:
    return {
        "sha256": text_key(text),
        "triples": [t.to_list() for t in kg.triples],
        "status": kg.status,
        "n_dropped": kg.n_dropped,
        "truncated": kg.truncated,
    }


def record_kgs(extractor: Extractor, texts: Iterable[str], path: str | Path) -> int:
    """Extract every distinct text with ``extractor`` and write the recorded-KG file ``path``.

    Parameters
    ----------
    extractor
        The extractor whose output is recorded (each text extracted on its own, as the
        offline extractor does).
    texts
        The texts (repeats are written once).
    path
        The JSONL file: a header line (``format``, ``extractor``, ``fingerprint``,
        ``s3kg_version``, ``texts``), then one line per text in the order given.

    Returns
    -------
    int
        How many texts were recorded.
    """
    distinct = list(dict.fromkeys(texts))
    kgs = extractor.extract([ItemTexts(gold=t) for t in distinct])
    header = {
        "format": RECORD_FORMAT,
        "extractor": extractor.name,
        "fingerprint": fingerprint(extractor),
        "s3kg_version": __version__,
        "texts": len(distinct),
    }
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.writing")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps(header) + "\n")
        for text, kg in zip(distinct, kgs, strict=True):
            fh.write(json.dumps(_kg_line(text, kg["gold"]), ensure_ascii=False) + "\n")
    tmp.replace(out)
    return len(distinct)


def load_recorded(path: str | Path, extractor: Extractor | None = None) -> RecordedKGs:
    """Read a recorded-KG file; with ``extractor``, check that it is that extractor's, current.

    Raises
    ------
    InputFormatError
        If the file is missing or malformed, or (with ``extractor``) its fingerprint is not the
        live extractor's: the file is stale; record it again (``scripts/make_demo_kgs.py``).
    """
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"no recorded KGs at {path}")
    with path.open(encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    try:
        header = json.loads(lines[0]) if lines else {}
        rows = [json.loads(line) for line in lines[1:]]
    except json.JSONDecodeError as exc:
        raise InputFormatError(f"{path}: not JSON lines ({exc})") from exc
    if header.get("format") != RECORD_FORMAT:
        raise InputFormatError(
            f"{path}: header format {header.get('format')!r}, expected {RECORD_FORMAT!r}"
        )
    if extractor is not None and header.get("fingerprint") != fingerprint(extractor):
        raise InputFormatError(
            f"{path} was recorded by {header.get('fingerprint')!r}, not the current "
            f"{fingerprint(extractor)!r}; record it again (scripts/make_demo_kgs.py)"
        )
    try:
        kgs = {
            str(r["sha256"]): TextKG(
                tuple(Triple(*t) for t in r["triples"]),
                str(r["status"]),
                int(r["n_dropped"]),
                bool(r["truncated"]),
            )
            for r in rows
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise InputFormatError(f"{path}: malformed KG line ({exc!r})") from exc
    return RecordedKGs(
        path,
        str(header.get("extractor", "")),
        str(header.get("fingerprint", "")),
        str(header.get("s3kg_version", "")),
        kgs,
    )


class RecordedExtractor:
    """Serve recorded KGs under the recorded extractor's name; extract what is not recorded.

    Parameters
    ----------
    recorded
        The file, read by :func:`load_recorded`.
    fallback
        Builds the live extractor, called only when a text is not recorded (so its model is
        loaded only then); ``None``: an unrecorded text raises.

    Attributes
    ----------
    served, extracted
        Texts answered from the file, and texts handed to the live extractor.
    """

    def __init__(
        self, recorded: RecordedKGs, fallback: Callable[[], Extractor] | None = None
    ) -> None:
        self.recorded = recorded
        self.name = recorded.extractor
        self._fallback = fallback
        self._live: Extractor | None = None
        self.served = 0
        self.extracted = 0

    def extract(self, items: Sequence[ItemTexts]) -> list[dict[str, TextKG]]:
        """One ``{source: TextKG}`` per item, from the file where it holds every given text."""
        out: list[dict[str, TextKG]] = []
        missing: list[int] = []
        for n, item in enumerate(items):
            given = item.given()
            found = {s: self.recorded.kgs.get(text_key(t)) for s, t in given.items()}
            if all(kg is not None for kg in found.values()):
                out.append({s: kg for s, kg in found.items() if kg is not None})
                self.served += len(found)
            else:
                out.append({})
                missing.append(n)
        if missing:
            if self._fallback is None:
                raise InputFormatError(
                    f"{len(missing)} item(s) have texts not in {self.recorded.path} and no live "
                    "extractor was given"
                )
            if self._live is None:
                self._live = self._fallback()
            for n, kgs in zip(
                missing, self._live.extract([items[n] for n in missing]), strict=True
            ):
                out[n] = kgs
                self.extracted += len(kgs)
        return out
