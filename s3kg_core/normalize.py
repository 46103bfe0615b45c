"""Label normalisation (DESIGN step 1).

A label becomes comparable text: ``_`` replaced with a space, whitespace collapsed and stripped,
lowercased, and every alphabetic token lemmatised with lemminflect. Lemmatisation is dictionary
based and context free (a label is a short phrase, not a sentence): a token takes its noun lemma
if it has one, else its adjective, verb, auxiliary or adverb lemma, else stays as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from .types import Triple

__all__ = ["normalization_name", "normalize_label", "normalize_triples"]

_SPACE = re.compile(r"\s+")
_UPOS_ORDER = ("NOUN", "ADJ", "VERB", "AUX", "ADV")


@lru_cache(maxsize=200_000)
def _lemma(token: str) -> str:
    if not token.isalpha():
        return token
    from lemminflect import getAllLemmas

    lemmas = getAllLemmas(token)
    for upos in _UPOS_ORDER:
        if lemmas.get(upos):
            return str(lemmas[upos][0])
    return token


@lru_cache(maxsize=200_000)
def normalize_label(label: str, *, lemmatize: bool = True) -> str:
    """Normalise one entity or relation label.

    Parameters
    ----------
    label
        Raw label, for example ``"was_born_in"``.
    lemmatize
        Lemmatise every alphabetic token (default). Without it only case, underscores and
        whitespace are normalised.

    Returns
    -------
    str
        The normalised label; ``""`` if nothing but whitespace and underscores was there.

    Examples
    --------
    >>> normalize_label("Preached_in")
    'preach in'
    >>> normalize_label("  North_Branch  Districts ")
    'north branch district'
    >>> normalize_label("Was__Injured_In", lemmatize=False)
    'was injured in'
    >>> normalize_label("___")
    ''
    """
    text = _SPACE.sub(" ", label.replace("_", " ")).strip().lower()
    if not lemmatize or not text:
        return text
    return " ".join(_lemma(token) for token in text.split(" "))


def normalize_triples(triples: Iterable[Triple], *, lemmatize: bool = True) -> tuple[Triple, ...]:
    """Normalise every label, drop triples with an empty part, drop duplicates (first kept).

    Examples
    --------
    >>> ts = [Triple("He", "preached_in", "Otisville"), Triple("he", "Preached in", "otisville"),
    ...       Triple("he", "", "x")]
    >>> normalize_triples(ts)
    (Triple(head='he', relation='preach in', tail='otisville'),)
    """
    out: dict[Triple, None] = {}
    for t in triples:
        norm = Triple(
            normalize_label(t.head, lemmatize=lemmatize),
            normalize_label(t.relation, lemmatize=lemmatize),
            normalize_label(t.tail, lemmatize=lemmatize),
        )
        if norm.head and norm.relation and norm.tail:
            out.setdefault(norm, None)
    return tuple(out)


def normalization_name(lemmatize: bool) -> str:
    """The normalisation's name in a score signature (``lemma`` or ``lower``)."""
    return "lemma" if lemmatize else "lower"
