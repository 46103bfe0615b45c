"""Hypothesis strategies for hostile JSON-ish input: the cells and records of issue 17.

Values mix what a released file or a JSONL export can hold and Python cannot always take:
integers past the 4300-digit conversion limit, lone surrogates (``\\ud800``), NUL, NaN and
infinities, dicts where triples belong, deep nesting (10,000 lists), very long strings. They are
written as text by :func:`to_json` (JSON, surrogates as escapes) or :func:`to_python` (a Python
literal, as some released files are), since ``json.dumps`` cannot write the huge integers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st


@dataclass(frozen=True)
class Big:
    """A JSON integer with more digits than Python converts to ``int``."""

    digits: str


@dataclass(frozen=True)
class Deep:
    """``depth`` nested empty lists."""

    depth: int


# Any character, lone surrogates (which st.characters() leaves out) and NUL included.
CHARS = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.just("\x00"))
SPECIAL_STRINGS = st.sampled_from(
    [
        "",
        "\x00",
        "a\x00b",
        "\ud800",
        "x\udfffy",
        "\ud83d\ude00",  # an emoji as a surrogate pair: one valid character once joined
        "\ufffd",
        "\\ud800",  # the text of an escape, not a surrogate
        '"',
        "\r\n",
        "\u2028",
        "x" * 150_000,  # past the csv module's default field limit (131,072)
    ]
)
STRINGS = st.one_of(st.text(CHARS, max_size=12), SPECIAL_STRINGS)
BIG = st.builds(
    lambda n, sign: Big(sign + "9" * n), st.integers(4301, 6000), st.sampled_from(["", "-"])
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    BIG,
    STRINGS,
)
DEEP = st.builds(Deep, st.sampled_from([50, 500, 10_000]))
VALUES = st.recursive(
    st.one_of(SCALARS, DEEP),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(STRINGS, kids, max_size=3),
    max_leaves=10,
)
TRIPLE_LIKE = st.one_of(st.lists(STRINGS, min_size=3, max_size=3), VALUES)
KG_VALUES = st.one_of(st.lists(TRIPLE_LIKE, max_size=5), VALUES)


def to_json(value: Any) -> str:
    """JSON text for ``value``: surrogates as ``\\uXXXX`` escapes, :class:`Big` as its digits."""
    if isinstance(value, Big):
        return value.digits
    if isinstance(value, Deep):
        return "[" * value.depth + "]" * value.depth
    if isinstance(value, list):
        return "[" + ", ".join(to_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {to_json(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)  # NaN and Infinity too, as json.dumps writes (and reads) them


def to_python(value: Any) -> str:
    """A Python literal for ``value`` (lists of three become tuples, as in the released files)."""
    if isinstance(value, Big):
        return value.digits
    if isinstance(value, Deep):
        return "[" * value.depth + "]" * value.depth
    if isinstance(value, list):
        inner = ", ".join(to_python(v) for v in value)
        return f"({inner})" if len(value) == 3 else f"[{inner}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_python(k)}: {to_python(v)}" for k, v in value.items()) + "}"
    return repr(value)  # a float nan / inf is a name, which literal_eval refuses


# A KG cell as a file holds it: JSON, a Python literal, or any text at all.
KG_CELLS = st.one_of(KG_VALUES.map(to_json), KG_VALUES.map(to_python), STRINGS)


def utf8_clean(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
