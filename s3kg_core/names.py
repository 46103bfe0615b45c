r"""Names: one rule for every name a person or a file gives (runs, models, datasets, tasks).

A name is printed on the terminal (``s3kg cus``, ``s3kg check``), drawn on every page and
written into reports, so it must read as what it is: no control character (an ESC that starts
a terminal title sequence, a NUL, a line break left inside) and no invisible formatting
character (a bidirectional override such as U+202E, which makes ``"\u202eecila"`` print as
"alice"; a zero-width space, which makes ``"ann\u200b"`` print as "ann"); at most
:data:`MAX_NAME_CHARS` characters for a display name (a run's, a task's) and
:data:`MAX_KEY_CHARS` for a model's or a dataset's (an id or a path). Spaces around a name are
dropped and any run of whitespace becomes one space. The dashboard's Rename applied this rule
first; ``collect --name``, ``import csv --model/--dataset``, the releases' imports and
``annotate assign --name`` apply it too, and annotator names
(:mod:`s3kg_core.annotation.names`) refuse the same characters. What is read rather than typed
meets the same rule without being refused: a row's id in an input file loses those characters
(:func:`without_unsafe`), and a path or an id printed on the terminal shows each of them as an
escape (:func:`printable`), so an ESC in a file name cannot retitle the terminal.

Examples
--------
>>> clean_name("  baseline\n(T 0.7) ")
'baseline (T 0.7)'
>>> name_problem("ann\u200b")
'U+200B (an invisible formatting character)'
"""

from __future__ import annotations

import unicodedata

from .errors import ConfigError

__all__ = [
    "BIDI_CONTROLS",
    "MAX_KEY_CHARS",
    "MAX_NAME_CHARS",
    "clean_name",
    "name_problem",
    "printable",
    "without_unsafe",
]

MAX_NAME_CHARS = 200
"""The longest display name kept: a run's or a task's (a picker shows about 40 characters)."""

MAX_KEY_CHARS = 1_000
"""The longest model or dataset name kept: a model is named by its id or its path."""

BIDI_CONTROLS = frozenset(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
"""The bidirectional embedding, override and isolate characters a name may not hold."""


def name_problem(text: str) -> str | None:
    r"""The first character of ``text`` a name may not hold, in words; ``None`` when none.

    Control characters (Unicode category Cc: NUL, ESC, line breaks) and formatting characters
    (Cf: bidirectional controls, zero-width spaces and joiners, the soft hyphen) are refused;
    a zero-width joiner between two symbols is part of one emoji and is kept.

    Examples
    --------
    >>> name_problem("plain name") is None
    True
    >>> name_problem("\x1b]0;owned\x07")
    'U+001B (a control character)'
    >>> name_problem("\u202eecila")
    'U+202E (a bidirectional control)'
    """
    for i, char in enumerate(text):
        if kind := _unsafe(text, i):
            return f"U+{ord(char):04X} ({kind})"
    return None


def _unsafe(text: str, i: int) -> str | None:
    """What ``text[i]`` is when a name may not hold it, in words; ``None`` when it may."""
    char = text[i]
    if char in BIDI_CONTROLS:
        return "a bidirectional control"
    category = unicodedata.category(char)
    if category == "Cc":
        return "a control character"
    if category == "Cf" and not _joins_emoji(text, i):
        return "an invisible formatting character"
    return None


def without_unsafe(text: str) -> str:
    r"""``text`` without the characters a name may not hold (:func:`name_problem`'s).

    For what is read, not typed (a row's id in an input file): kept, less what would act on a
    terminal or hide itself.

    Examples
    --------
    >>> without_unsafe("q\x1b]0;owned\x07\u202e7")
    'q]0;owned7'
    """
    return "".join(c for i, c in enumerate(text) if _unsafe(text, i) is None)


def printable(text: object) -> str:
    r"""``text`` with each character a name may not hold written as its escape (``\x1b``).

    For a path, an id or a message printed on the terminal: shown as it is, never acted on
    (an ESC that retitles the terminal, a U+202E that turns the rest of the line round).

    Examples
    --------
    >>> print(printable("bad\x1b]0;owned\x07.amr"))
    bad\x1b]0;owned\x07.amr
    >>> print(printable("\u202eecila"), printable("plain: caf\u00e9"))
    \u202eecila plain: café
    """
    text = str(text)
    return "".join(
        c if _unsafe(text, i) is None else c.encode("unicode_escape").decode("ascii")
        for i, c in enumerate(text)
    )


def _joins_emoji(text: str, i: int) -> bool:
    """Whether ``text[i]`` is a zero-width joiner between two symbols (one emoji, 👩‍🔬)."""
    if text[i] != "\u200d" or not 0 < i < len(text) - 1:
        return False
    before = text[i - 1] if text[i - 1] != "\ufe0f" or i < 2 else text[i - 2]
    return unicodedata.category(before) == "So" and unicodedata.category(text[i + 1]) == "So"


def clean_name(name: object, what: str = "a name", *, limit: int = MAX_NAME_CHARS) -> str:
    r"""``name`` as it is stored: NFC, whitespace collapsed; or a named error saying why not.

    Parameters
    ----------
    name
        The name as typed or read from a file.
    what
        What the name is, for the message (``"a run's name"``).
    limit
        The most characters kept.

    Raises
    ------
    ConfigError
        If the name is not text, is empty, is longer than ``limit`` characters, or holds a
        control or formatting character (:func:`name_problem`).

    Examples
    --------
    >>> clean_name("x" * 201, "a run's name")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: a run's name is at most 200 characters; this one has 201
    >>> clean_name("a\u202eb", "a run's name")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.ConfigError: a run's name cannot hold control or formatting characters: U+202E (a bidirectional control); type it without
    """  # noqa: E501
    if not isinstance(name, str):
        raise ConfigError(f"{what} must be text; got {type(name).__name__}")
    cleaned = " ".join(unicodedata.normalize("NFC", name).split())
    if not cleaned:
        raise ConfigError(f"{what} cannot be empty; type one")
    if len(cleaned) > limit:
        raise ConfigError(f"{what} is at most {limit} characters; this one has {len(cleaned)}")
    problem = name_problem(cleaned)
    if problem is not None:
        raise ConfigError(
            f"{what} cannot hold control or formatting characters: {problem}; type it without"
        )
    return cleaned
