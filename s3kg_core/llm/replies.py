r"""What an endpoint sends back, made safe to store: text without lone surrogates, sane counts.

A reply is hostile input. JSON may carry a lone surrogate (``"\ud800"``), which Python decodes
into a string that no database, file or page can encode; a token count may be ``10**12`` or
``"many"``. Every string and count of a reply goes through these functions once, where the
reply enters the project (:mod:`s3kg_core.llm.client` for answers, token counts, model ids and
error messages; :mod:`s3kg_core.extract.parse` for the labels of extracted triples), so nothing
downstream has to guess.

Examples
--------
>>> clean_text("a\ud800b") == "a\ufffdb"
True
>>> clean_count(12), clean_count(10**12), clean_count("many"), clean_count(True)
(12, None, None, None)
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MAX_COUNT", "clean_count", "clean_text"]

MAX_COUNT = 2**31 - 1
"""The largest count kept (the store's INTEGER); a larger one is not a sane token count."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str, *, limit: int | None = None) -> str:
    r"""``text`` with every lone surrogate replaced by U+FFFD, cut to ``limit`` characters.

    Parameters
    ----------
    text
        Any string decoded from a reply.
    limit
        The most characters kept (``None``: all).

    Examples
    --------
    >>> clean_text("\udc80 ok", limit=3) == "\ufffd o"
    True
    """
    cleaned = _SURROGATE.sub("\ufffd", text)
    return cleaned if limit is None else cleaned[:limit]


def clean_count(value: Any) -> int | None:
    """``value`` as a token count: a non-negative integer up to :data:`MAX_COUNT`, else ``None``.

    An integral float (``12.0``) counts; a bool, a string, a fraction or a negative number
    does not.

    Examples
    --------
    >>> clean_count(12.0), clean_count(-1), clean_count(2.5), clean_count(None)
    (12, None, None, None)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_COUNT:
        return value
    return None
