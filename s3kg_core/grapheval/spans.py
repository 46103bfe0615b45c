"""Spans: where a (flagged) triple sits in the answer text it was extracted from.

A checker flags triples; a reader wants to see the words of the answer that carry them.
:func:`triple_spans` finds one triple's words in an answer (its head and tail, in the
sentence(s) sharing the most of its words); :func:`flag_spans` places every flagged triple and
merges the result into sorted, non-overlapping :class:`Span` objects with one note per triple.
Pure text functions: rendering them (the dashboard's ``highlight_html``) is left to the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..kg import Triple
from ..text import STOP_WORDS, sentence_spans

__all__ = ["Span", "flag_spans", "triple_spans", "triple_text"]

_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


@dataclass(frozen=True)
class Span:
    """A stretch ``answer[start:end]`` that carries one or more flagged triples.

    Attributes
    ----------
    start, end
        Character offsets into the answer.
    notes
        One line per flagged triple found there (the triple and its probability).

    Examples
    --------
    >>> text = "Aspirin cures fever."
    >>> span = Span(0, 7, ("(Aspirin | cures | fever): P(unsupported) 0.90",))
    >>> text[span.start : span.end]
    'Aspirin'
    """

    start: int
    end: int
    notes: tuple[str, ...]


def triple_text(triple: Triple) -> str:
    """A triple as one short line, ``(head | relation | tail)``.

    Examples
    --------
    >>> triple_text(Triple("Marie Curie", "discovered", "radium"))
    '(Marie Curie | discovered | radium)'
    """
    return f"({triple.head} | {triple.relation} | {triple.tail})"


def _probability_text(p: float | None) -> str:
    return "not judged" if p is None else f"P(unsupported) {p:.2f}"


def _phrase_pattern(label: str) -> re.Pattern[str] | None:
    """A label as a whole phrase: any spacing or punctuation between words, ``'s`` allowed."""
    words = _WORD.findall(label)
    if not words:
        return None
    body = r"(?:['\u2019]s)?\W+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _content_words(label: str) -> list[str]:
    return [
        w
        for w in _WORD.findall(label)
        if w.lower() not in STOP_WORDS and (len(w) > 2 or w.isdigit())
    ]


def _word_pattern(word: str) -> re.Pattern[str]:
    """A whole word, a short suffix allowed for longer words (open ~ opened, cell ~ cells)."""
    suffix = r"\w{0,3}" if word.isalpha() and len(word) >= 4 else ""
    return re.compile(rf"(?<!\w){re.escape(word)}{suffix}(?!\w)", re.IGNORECASE)


def _label_spans(text: str, label: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Where a label occurs in ``text[lo:hi]``: the whole phrase if it does, else its words."""
    phrase = _phrase_pattern(label)
    if phrase is None:
        return []
    found = [m.span() for m in phrase.finditer(text, lo, hi)]
    if found:
        return found
    return [
        m.span() for w in _content_words(label) for m in _word_pattern(w).finditer(text, lo, hi)
    ]


def triple_spans(answer: str, triple: Triple) -> list[tuple[int, int]]:
    """Where one triple sits in ``answer``: ``(start, end)`` ranges of its head and tail.

    Parameters
    ----------
    answer
        The text the triple was extracted from.
    triple
        The triple to find.

    Returns
    -------
    list of (int, int)
        Character ranges, not merged, in the order found. The triple is placed in the
        answer's sentence(s) sharing the most of its content words (case-insensitive, short
        suffixes allowed; common words do not count); there its head and tail are marked,
        each as a whole phrase (any spacing or punctuation between words, ``'s`` allowed) or
        else word by word, or the relation's words when neither is found. A triple none of
        whose words is in the answer gives ``[]``.

    Examples
    --------
    >>> text = "The old tower is in Rome. The tower opened in 1899."
    >>> [text[s:e] for s, e in triple_spans(text, Triple("Tower", "opened in", "1899"))]
    ['tower', '1899']
    >>> triple_spans(text, Triple("penicillin", "discovered by", "Fleming"))
    []
    """
    words = [_word_pattern(w) for part in triple.to_list() for w in _content_words(part)]
    ranges = sentence_spans(answer)
    scores = [sum(1 for p in words if p.search(answer, lo, hi)) for lo, hi in ranges]
    best = max(scores, default=0)
    if best == 0:
        return []
    spans: list[tuple[int, int]] = []
    for (lo, hi), score in zip(ranges, scores, strict=True):
        if score != best:
            continue
        found = [
            s for label in (triple.head, triple.tail) for s in _label_spans(answer, label, lo, hi)
        ]
        spans.extend(found or _label_spans(answer, triple.relation, lo, hi))
    return spans


def flag_spans(
    answer: str, flagged: Sequence[tuple[Triple | Sequence[str], float | None]]
) -> list[Span]:
    """The stretches of ``answer`` that carry a flagged triple: its head and tail words.

    Parameters
    ----------
    answer
        The answer text.
    flagged
        ``(triple, probability)`` pairs, the probability that the triple is unsupported
        (``None``: not judged).

    Returns
    -------
    list of Span
        Sorted, non-overlapping spans; overlapping or touching matches are merged and keep the
        notes of every triple they carry (``"(head | relation | tail): P(unsupported) 0.93"``,
        or ``"...: not judged"``). Each triple is placed as :func:`triple_spans` places it.
        A triple none of whose words is in the answer has no span.

    Examples
    --------
    >>> text = "The old tower is in Rome. The tower opened in 1899."
    >>> spans = flag_spans(text, [(Triple("Tower", "opened in", "1899"), 0.93)])
    >>> [(text[s.start:s.end], s.notes) for s in spans]  # the second sentence only
    [('tower', ('(Tower | opened in | 1899): P(unsupported) 0.93',)), \
('1899', ('(Tower | opened in | 1899): P(unsupported) 0.93',))]
    >>> text = "St Mary's Hospital, London."
    >>> spans = flag_spans(text, [(("St Mary Hospital", "in", "London"), 0.6)])
    >>> [text[s.start:s.end] for s in spans]
    ["St Mary's Hospital", 'London']
    """
    marks: list[tuple[int, int, str]] = []
    for item, probability in flagged:
        t = Triple.from_any(item)
        note = f"{triple_text(t)}: {_probability_text(probability)}"
        marks.extend((s, e, note) for s, e in triple_spans(answer, t) if e > s)
    marks.sort()
    spans: list[Span] = []
    for start, end, note in marks:
        last = spans[-1] if spans else None
        if last is not None and start <= last.end:
            notes = last.notes if note in last.notes else (*last.notes, note)
            spans[-1] = Span(last.start, max(last.end, end), notes)
        else:
            spans.append(Span(start, end, (note,)))
    return spans
