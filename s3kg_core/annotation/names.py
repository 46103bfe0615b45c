r"""Annotator names: one spelling per person, and nothing that can disguise one person as another.

A name is saved with every verdict and shown beside it, so ``"ann"`` and ``" ann"`` must be one
person and ``"\u202eecila"`` (which displays as "alice") must not be anyone. Names are normalised
to Unicode NFC with surrounding whitespace stripped; control characters (NUL, line breaks, tabs:
category Cc), the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
U+2066-U+2069) and the other invisible formatting characters (category Cf: a zero-width space
makes ``"ann\u200b"`` print as "ann") are refused: the rule of every name
(:mod:`s3kg_core.names`).
"""

from __future__ import annotations

import unicodedata

from ..errors import AnnotatorNameError
from ..names import BIDI_CONTROLS, name_problem

__all__ = ["BIDI_CONTROLS", "MAX_NAME_LENGTH", "normalize_annotator"]

MAX_NAME_LENGTH = 256
"""The longest name accepted, in characters after normalisation."""


def normalize_annotator(name: object) -> str:
    r"""The name as it is stored: NFC, stripped; or a named error saying what is wrong.

    Parameters
    ----------
    name
        The name as typed (or as read from a file).

    Returns
    -------
    str
        The normalised name.

    Raises
    ------
    AnnotatorNameError
        If the name is not a string, is empty once stripped, is longer than
        :data:`MAX_NAME_LENGTH`, or holds a control or bidi control character.

    Examples
    --------
    >>> normalize_annotator("  Zoe\u0301 ")
    'Zoé'
    >>> normalize_annotator("\u202eecila")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.AnnotatorNameError: annotator name '\u202eecila' holds U+202E (a bidirectional control); type the name without it
    """  # noqa: E501
    if not isinstance(name, str):
        raise AnnotatorNameError(f"annotator name must be text; got {type(name).__name__}")
    text = unicodedata.normalize("NFC", name).strip()
    if not text:
        raise AnnotatorNameError("annotator name is empty; type your name")
    problem = name_problem(text)  # the rule of every name (s3kg_core.names)
    if problem is not None:
        raise AnnotatorNameError(
            f"annotator name {text!r} holds {problem}; type the name without it"
        )
    if len(text) > MAX_NAME_LENGTH:
        raise AnnotatorNameError(
            f"annotator name is {len(text)} characters long; at most {MAX_NAME_LENGTH} are kept"
        )
    return text
