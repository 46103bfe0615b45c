"""Label normalisation (docs/scores.md, S3KG step 1).

A label becomes comparable text: ``_`` replaced with a space, whitespace collapsed and stripped,
lowercased, and every alphabetic token lemmatised with lemminflect. Lemmatisation is dictionary
based and needs no tagger (a label is a short phrase, not a sentence); the label's role in the
triple stands in for the part of speech. In an entity label a token takes its noun lemma if it has
one, else its adjective, verb, auxiliary or adverb lemma; in a relation label adjective, verb
and auxiliary lemmas come before the noun ("lives_in" -> "live in", not "life in"; "born_in"
stays "born in", not "bear in"). A token with no lemma stays as it is.

A relation that is a numbered role of PropBank and AMR (``ARG0`` to ``ARG9``, inverse
``ARG0-of``) is spelt out: ``ARG0`` -> ``argument zero``, ``ARG1-of`` -> ``argument one of``.
A sentence encoder embeds ``arg0`` and ``arg1`` almost alike, so a triple's sentence would hardly
change when two arguments swap roles; spelt out, the two sentences differ in a word the encoder
reads (BAMBOO dev role-confusion accuracy of the ``ot`` mode, MiniLM: STS 90.6 -> 92.5, PARA
89.3 -> 92.3; bench/README.md, "BAMBOO").
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Literal, cast

from .errors import ConfigError
from .kg import Triple

__all__ = [
    "load_lemmatizer",
    "normalization_name",
    "normalize_label",
    "normalize_triple",
    "normalize_triples",
    "spell_numbered_role",
]

Role = Literal["entity", "relation"]

_SPACE = re.compile(r"\s+")
_NUMBERED_ROLE = re.compile(r"arg([0-9])(-of)?")
_DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
_IMPORT_LOCK = threading.Lock()
_LOADED = threading.Event()
_UPOS_ORDER = {
    "entity": ("NOUN", "ADJ", "VERB", "AUX", "ADV"),
    "relation": ("ADJ", "VERB", "AUX", "NOUN", "ADV"),
}


class _NoSpacy:
    """A meta path finder that makes ``import spacy`` fail (while lemminflect is imported)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name == "spacy" or name.startswith("spacy."):
            raise ImportError("spaCy is not loaded for lemminflect's optional hook")


def _all_lemmas() -> Callable[[str], dict[str, tuple[str, ...]]]:
    """The ``getAllLemmas`` of lemminflect, imported without its spaCy hook.

    On import, lemminflect imports spaCy, when it is installed, to register token extensions
    this module never uses: seconds (most of the first label's cost). So unless spaCy is
    already loaded, lemminflect is imported while ``import spacy`` fails; spaCy itself stays
    importable afterwards.
    """
    if not _LOADED.is_set():
        with _IMPORT_LOCK:  # one thread loads; another waits for it instead of loading again
            if "lemminflect" not in sys.modules and "spacy" not in sys.modules:
                blocker = _NoSpacy()
                sys.meta_path.insert(0, blocker)
                try:
                    import lemminflect  # noqa: F401
                finally:
                    sys.meta_path.remove(blocker)
            from lemminflect import getAllLemmas

            getAllLemmas("loaded")  # reads its dictionary (0.4 s), once per process
            _LOADED.set()
    from lemminflect import getAllLemmas

    return cast(Callable[[str], dict[str, tuple[str, ...]]], getAllLemmas)


def load_lemmatizer() -> None:
    """Load the lemmatiser's dictionary now (about 0.4 s, once per process).

    The first lemmatised label pays it otherwise; the dashboard calls this in a background
    thread after its first page is drawn, so the first explained answer does not wait.
    Safe from several threads: one loads, the others wait for it.

    Examples
    --------
    >>> load_lemmatizer()
    >>> normalize_label("districts")
    'district'
    """
    _all_lemmas()


@lru_cache(maxsize=200_000)
def _lemma(token: str, role: str) -> str:
    if not token.isalpha():
        return token
    lemmas = _all_lemmas()(token)
    for upos in _UPOS_ORDER[role]:
        if lemmas.get(upos):
            return str(lemmas[upos][0])
    return token


@lru_cache(maxsize=200_000)
def normalize_label(label: str, *, lemmatize: bool = True, role: Role = "entity") -> str:
    """Normalise one entity or relation label.

    Parameters
    ----------
    label
        Raw label, for example ``"was_born_in"``.
    lemmatize
        Lemmatise every alphabetic token (default). Without it only case, underscores and
        whitespace are normalised.
    role
        ``"entity"`` (heads and tails: noun lemmas first) or ``"relation"`` (verb lemmas first).

    Returns
    -------
    str
        The normalised label; ``""`` if nothing but whitespace and underscores was there.

    Examples
    --------
    >>> normalize_label("Preached_in", role="relation")
    'preach in'
    >>> normalize_label("lives_in", role="relation"), normalize_label("lives")
    ('live in', 'life')
    >>> normalize_label("  North_Branch  Districts ")
    'north branch district'
    >>> normalize_label("Was__Injured_In", lemmatize=False)
    'was injured in'
    >>> normalize_label("___")
    ''
    >>> normalize_label("ARG0", role="relation"), normalize_label("ARG0")
    ('argument zero', 'arg0')
    """
    text = _SPACE.sub(" ", label.replace("_", " ")).strip().lower()
    if role not in _UPOS_ORDER:
        raise ConfigError(f"role must be 'entity' or 'relation'; got {role!r}")
    if role == "relation":
        text = spell_numbered_role(text)
    if not lemmatize or not text:
        return text
    return " ".join(_lemma(token, role) for token in text.split(" "))


def spell_numbered_role(relation: str) -> str:
    """Spell out a lowercased PropBank numbered role; any other relation is returned as it is.

    Parameters
    ----------
    relation
        A relation label, already lowercased (``normalize_label`` calls this).

    Returns
    -------
    str
        ``"arg<d>"`` as ``"argument <digit word>"``, ``"arg<d>-of"`` as
        ``"argument <digit word> of"``; every other label unchanged.

    Examples
    --------
    >>> spell_numbered_role("arg1"), spell_numbered_role("arg2-of"), spell_numbered_role("arg10")
    ('argument one', 'argument two of', 'arg10')
    >>> spell_numbered_role("argue")
    'argue'
    """
    match = _NUMBERED_ROLE.fullmatch(relation)
    if match is None:
        return relation
    inverse = " of" if match.group(2) else ""
    return f"argument {_DIGIT_WORDS[int(match.group(1))]}{inverse}"


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
        norm = normalize_triple(t, lemmatize=lemmatize)
        if norm.head and norm.relation and norm.tail:
            out.setdefault(norm, None)
    return tuple(out)


def normalize_triple(triple: Triple, *, lemmatize: bool = True) -> Triple:
    """Normalise the three labels of one triple (head and tail as entities).

    Examples
    --------
    >>> normalize_triple(Triple("Cats", "chases", "mice"))
    Triple(head='cat', relation='chase', tail='mouse')
    """
    return Triple(
        normalize_label(triple.head, lemmatize=lemmatize),
        normalize_label(triple.relation, lemmatize=lemmatize, role="relation"),
        normalize_label(triple.tail, lemmatize=lemmatize),
    )


def normalization_name(lemmatize: bool) -> str:
    """The normalisation's name in a score signature (``lemma`` or ``lower``)."""
    return "lemma" if lemmatize else "lower"
