"""Plain-text helpers shared by the checkers and the dashboard: stop words, sentences, spacing.

The offline support checker (:mod:`s3kg_core.grapheval.checkers.support`) splits a context into
sentence windows and drops stop words from the words it compares; the dashboard's Hallucinations
page finds a flagged triple's sentence in the answer the same way. Both use this module, so a
sentence or a content word means the same thing in the score and in the picture of it.

The sentence rule and the stop list are part of the support checker's calibration
(``support_calibration.json`` was fitted with them): changing either changes its scores, and needs
a new calibration.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "detokenize", "sentence_spans", "split_sentences"]

# A sentence ends at ., ! or ? followed by whitespace (also after a closing quote or bracket),
# and at every line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][\"'\u201d\u2019)\]])\s+|\n+")

_STOP_TEXT = (
    "a an the and or but if of in on at to for from by with as is are was were be been being "
    "it its this that these those he she they them his her their we our you your i me my "
    "has have had do does did will would can could should may might must shall "
    "not no than then there here which who whom whose what when where why how all any each "
    "also about into over after before under up down out off so such very just more most "
    "said says say s t one"
)
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())
"""Lowercase English function words (and ``said``, ``one``...) that say nothing about a fact."""

_DETOK = (
    (re.compile(r" ([,.;:!?%)\]])"), r"\1"),
    (re.compile(r"([(\[$]) "), r"\1"),
    (re.compile(r" ('s|n't|'re|'ve|'ll|'d)\b"), r"\1"),
)


def detokenize(text: str) -> str:
    """Undo the tokenised spacing of corpus text (WikiText ``@-@``, `` , ``, `` 's``).

    Whitespace runs become one space.

    Examples
    --------
    >>> detokenize("Paris , France ( 1889 ) is n't far : it 's 3 @-@ 4 km")
    "Paris, France (1889) isn't far: it's 3-4 km"
    """
    text = text.replace(" @-@ ", "-").replace(" @,@ ", ",").replace(" @.@ ", ".")
    for pattern, repl in _DETOK:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    r"""Character ranges ``(start, end)`` of the sentences of a text (a punctuation rule, no model).

    A sentence ends at ``.``, ``!`` or ``?`` followed by whitespace (also when a closing quote or
    bracket comes between), and at every line break. Each range is stripped of surrounding
    whitespace; empty sentences are left out.

    Parameters
    ----------
    text
        Any text.

    Returns
    -------
    list of tuple of int
        In text order; ``text[start:end]`` is the sentence, as :func:`split_sentences` gives it.

    Examples
    --------
    >>> text = 'He said "hi." Then left.\n\nWhy?'
    >>> sentence_spans(text)
    [(0, 13), (14, 24), (26, 30)]
    >>> [text[a:b] for a, b in sentence_spans(text)] == split_sentences(text)
    True
    """
    bounds = [(m.start(), m.end()) for m in _SENTENCE_END.finditer(text)]
    spans = []
    start = 0
    for end, after in [*bounds, (len(text), len(text))]:
        piece = text[start:end]
        if piece.strip():
            spans.append((start + len(piece) - len(piece.lstrip()), start + len(piece.rstrip())))
        start = after
    return spans


def split_sentences(text: str) -> list[str]:
    """Split a text into sentences with a punctuation rule (no model).

    The rule is :func:`sentence_spans`'s; each sentence is stripped, empty ones are left out.

    Parameters
    ----------
    text
        Any text.

    Returns
    -------
    list of str
        The sentences, in text order (``[]`` for a blank text).

    Examples
    --------
    >>> split_sentences("The Eiffel Tower is in Paris. It opened in 1889!  Why?")
    ['The Eiffel Tower is in Paris.', 'It opened in 1889!', 'Why?']
    >>> split_sentences('He said "hi." Then left.')
    ['He said "hi."', 'Then left.']
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]
