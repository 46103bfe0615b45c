"""Who did what to whom: a relation's canonical reading (docs/scores.md, "Roles").

Two triples can state one fact with head and tail in opposite places: ``(alexander fleming,
discover, penicillin)`` and ``(penicillin, discovered by, alexander fleming)``; ``(marie, parent
of, irene)`` and ``(irene, child of, marie)``; ``(france, border, spain)`` and ``(spain, border,
france)``. And two triples with the same three labels can state opposite facts: ``(brutus, kill,
caesar)`` and ``(caesar, kill, brutus)``. A sentence encoder reads ``"h r t"`` almost as a bag of
words and cannot tell these apart; :func:`read_relation` can, from the relation's wording alone.

It takes a **normalised** relation label (:func:`s3kg_core.normalize.normalize_label` with
``role="relation"``: lowercased, lemmatised, PropBank roles spelt out) and returns its
:class:`RelationReading`: the *base* relation that states the fact in its canonical direction,
whether head and tail must be exchanged to read the triple with it (``flipped``), which rule
said so, and whether the base reads the same both ways (``symmetric``). The rules, in order:

1. A leading copula or auxiliary and the article after it are dropped: ``be the parent of`` ->
   ``parent of``, ``have be discover by`` -> ``discover by``, ``get kill by`` -> ``kill by``.
2. A PropBank/AMR inverse role is de-inverted: ``argument zero of`` -> ``argument zero``,
   flipped (``(a :ARG0-of b)`` is ``(b :ARG0 a)``).
3. A passive, a verb phrase ending in ``by`` (the word before it has a verb lemma), is made
   active: ``discover by`` -> ``discover``, flipped; ``theory by`` is no passive. A few phrasal
   verbs in ``by`` are active (``stand by``, ``go by``, ...: :data:`ACTIVE_BY`).
4. A relation in the table of inverse pairs (:data:`INVERSES`) is replaced by its partner,
   flipped: ``child of`` -> ``parent of``, ``work for`` -> ``employ``, ``lose to`` -> ``defeat``,
   ``younger than`` -> ``older than``.
5. A possessive ``have X`` (X a noun phrase: an article, or a word with a noun lemma and no verb
   lemma) is ``X of``, flipped: ``have capital`` -> ``capital of`` (``(france, have capital,
   paris)`` is ``(paris, capital of, france)``); ``have`` before a verb is a perfect and is
   dropped (``have win`` -> ``win``).
6. A base in :data:`SYMMETRIC` reads the same both ways: the bare copula ``be`` (``(first
   people, be, hillary)``, which extractors write either way round), ``marry``, ``border``,
   ``sibling of``,
   ``interact with``, ... (:func:`read_triple` puts its two entities in one canonical order).

Everything else is its own base, unflipped. The rules look at words only, so they err in both
directions on words they do not know: an inverse pair missing from the table scores as a
paraphrase of uncertain direction (the encoder's cosine of the two relations), as before.

References
----------
.. [1] M. Palmer, D. Gildea, P. Kingsbury, "The Proposition Bank: An Annotated Corpus of
   Semantic Roles", Computational Linguistics 31 (2005): numbered roles and their inverses.
.. [2] L. Banarescu et al., "Abstract Meaning Representation for Sembanking", LAW 2013: the
   ``-of`` inverse roles.
.. [3] D. Vrandecic, M. Kroetzsch, "Wikidata: a free collaborative knowledgebase", CACM 57
   (2014): inverse and symmetric properties (P1696 "inverse property", Q18647518 "symmetric
   property"), the model of the tables here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..kg import Triple
from ..normalize import normalize_label

__all__ = [
    "ACTIVE_BY",
    "INVERSES",
    "SYMMETRIC",
    "Reading",
    "RelationReading",
    "read_relation",
    "read_triple",
]

_LEADING = frozenset({"be", "get", "have be", "have get"})
_COPULA = "be"
_ARTICLES = frozenset({"the", "a", "an"})
_ROLE_OF = re.compile(r"(argument [a-z]+) of")

ACTIVE_BY: frozenset[str] = frozenset(
    {"stand", "go", "pass", "live", "abide", "come", "drop", "stop", "swear", "swing", "get"}
)
"""Verbs whose ``X by`` is an active phrasal verb, not a passive (``stand by``, ``go by``)."""

_PAIRS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # base (canonical direction)       relations that state it with head and tail exchanged
    ("parent of", ("child of", "son of", "daughter of", "offspring of", "have parent")),
    ("grandparent of", ("grandchild of", "grandson of", "granddaughter of")),
    ("ancestor of", ("descendant of", "descend from")),
    ("husband of", ("wife of",)),
    ("uncle of", ("nephew of", "niece of")),
    ("employ", ("work for", "work at", "employee of", "employed at", "staff of", "work under")),
    ("own", ("belong to", "property of", "possession of", "subsidiary of")),
    ("part of", ("contain", "include", "comprise", "consist of", "have part", "have member")),
    ("defeat", ("lose to", "lose against")),
    ("precede", ("follow", "succeed", "successor of", "come after", "after")),
    ("teach", ("study under", "student of", "pupil of", "learn from", "disciple of")),
    ("sell to", ("buy from", "purchase from")),
    ("give to", ("receive from", "get from")),
    ("lend to", ("borrow from",)),
    ("export to", ("import from",)),
    ("supervise", ("report to", "subordinate of", "serve under")),
    ("mentor", ("mentee of", "protege of", "apprentice of")),
    ("cause", ("result of", "effect of", "consequence of", "result from")),
    ("parent company of", ("subsidiary company of",)),
    ("predator of", ("prey of",)),
    ("host", ("guest of",)),
    ("above", ("below", "under", "beneath")),
    ("older than", ("younger than",)),
    ("larger than", ("smaller than",)),
    ("bigger than", ("smaller than",)),
    ("greater than", ("less than", "fewer than")),
    ("more than", ("less than",)),
    ("higher than", ("lower than",)),
    ("taller than", ("shorter than",)),
    ("heavier than", ("lighter than",)),
    ("longer than", ("shorter than",)),
    ("faster than", ("slower than",)),
    ("north of", ("south of",)),
    ("east of", ("west of",)),
    ("before", ("after",)),
    ("superclass of", ("subclass of", "subtype of", "kind of", "type of")),
)

INVERSES: dict[str, str] = {}
"""Each inverse relation and the base it is read as, flipped (natural words; :func:`read_relation`
compares their normalised forms). A relation listed under two bases reads as the first."""
for _base, _inverses in reversed(_PAIRS):  # the first base listed wins a shared inverse
    for _inverse in _inverses:
        INVERSES[_inverse] = _base

SYMMETRIC: frozenset[str] = frozenset(
    {
        "be", "marry", "married to", "spouse of", "partner of", "partner with", "wed",
        "sibling of", "twin of", "cousin of", "friend of", "colleague of", "classmate of",
        "teammate of", "roommate of", "neighbour of", "neighbor of",
        "border", "share border with", "share a border with", "adjacent to", "next to", "near",
        "interact with", "collaborate with", "cooperate with", "work with", "ally of",
        "allied with", "ally with", "compete with", "competitor of", "rival of", "play against",
        "fight against", "at war with", "trade with", "negotiate with", "merge with",
        "meet", "meet with", "correlate with", "associate with", "associated with",
        "related to", "connect to", "connected to", "similar to", "same as", "equal to",
        "equivalent to", "identical to", "different from", "bind to", "bind with",
        "coauthor with", "co-author with", "engaged to", "divorce", "date", "talk with",
        "correspond with", "communicate with",
    }
)  # fmt: skip
"""Relations that state the same fact both ways (natural words, compared normalised)."""


@dataclass(frozen=True)
class RelationReading:
    """How a normalised relation label reads (see :func:`read_relation`).

    Attributes
    ----------
    base
        The relation stating the fact in its canonical direction.
    flipped
        Whether head and tail are exchanged to read the triple with ``base``.
    rule
        ``"as is"``, ``"amr inverse"``, ``"passive"``, ``"inverse"`` or ``"have-of"``.
    symmetric
        Whether ``base`` reads the same both ways.
    """

    base: str
    flipped: bool
    rule: str
    symmetric: bool


@dataclass(frozen=True)
class Reading:
    """A triple read in its canonical direction (see :func:`read_triple`)."""

    triple: Triple
    flipped: bool
    rule: str
    symmetric: bool


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, str], frozenset[str]]:
    """:data:`INVERSES` and :data:`SYMMETRIC` normalised as S3KG normalises relations."""

    def norm(label: str) -> str:
        return _strip(normalize_label(label, role="relation"))

    inverses = {norm(inverse): norm(base) for inverse, base in INVERSES.items()}
    return inverses, frozenset(norm(label) for label in SYMMETRIC)


def _strip(relation: str) -> str:
    words = relation.split()
    for n in (2, 1):  # "have be ...", then "be ..." / "get ..."
        if len(words) > n and " ".join(words[:n]) in _LEADING:
            words = words[n:]
            break
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return " ".join(words)


@lru_cache(maxsize=100_000)
def read_relation(relation: str) -> RelationReading:
    """The canonical reading of one normalised relation label.

    Parameters
    ----------
    relation
        A relation label normalised as S3KG normalises relations (lowercased, lemmatised,
        ``ARG0`` spelt ``argument zero``).

    Returns
    -------
    RelationReading
        Its base relation, whether the triple's head and tail are exchanged to read it with
        the base, the rule that decided, and whether the base is symmetric.

    Examples
    --------
    >>> read_relation("discover by")
    RelationReading(base='discover', flipped=True, rule='passive', symmetric=False)
    >>> read_relation("be the child of")
    RelationReading(base='parent of', flipped=True, rule='inverse', symmetric=False)
    >>> read_relation("have capital")
    RelationReading(base='capital of', flipped=True, rule='have-of', symmetric=False)
    >>> read_relation("argument zero of").base, read_relation("argument zero of").flipped
    ('argument zero', True)
    >>> read_relation("be married to").symmetric, read_relation("border").symmetric
    (True, True)
    >>> read_relation("stand by").flipped, read_relation("discover").rule
    (False, 'as is')
    """
    inverses, _symmetric = _tables()
    text = _strip(relation.strip())
    role = _ROLE_OF.fullmatch(text)
    if role is not None:
        return _reading(role.group(1), True, "amr inverse")
    words = text.split()
    if (
        len(words) >= 2
        and words[-1] == "by"
        and words[-2] not in ACTIVE_BY
        and "VERB" in _parts_of_speech(words[-2])  # "theory by" is no passive
    ):
        active = _strip(" ".join(words[:-1]))
        base = inverses.get(active)  # "succeed by" is "follow by": precede
        if base is not None:
            return _reading(base, False, "inverse passive")
        return _reading(active, True, "passive")
    if text in inverses:
        return _reading(inverses[text], True, "inverse")
    if len(words) >= 2 and words[0] == "have":
        if words[1] in _ARTICLES and len(words) > 2:
            return _reading(" ".join(words[2:]) + " of", True, "have-of")
        kinds = _parts_of_speech(words[1])
        if "NOUN" in kinds and "VERB" not in kinds:
            return _reading(" ".join(words[1:]) + " of", True, "have-of")
        if "VERB" in kinds and words[1] != "to":  # a perfect: "have win" is "win"
            return read_relation(" ".join(words[1:]))
    return _reading(text, False, "as is")


def _parts_of_speech(word: str) -> frozenset[str]:
    """The parts of speech lemminflect knows a lemma for (after :func:`normalize_label`)."""
    from lemminflect import getAllLemmas

    normalize_label(word)  # loads lemminflect as the normaliser does (without spaCy's hook)
    return frozenset(getAllLemmas(word))


def _reading(base: str, flipped: bool, rule: str) -> RelationReading:
    return RelationReading(base, flipped, rule, base in _tables()[1])


@lru_cache(maxsize=200_000)
def read_triple(triple: Triple) -> Reading:
    """A normalised triple read in its canonical direction.

    A symmetric relation's triple reads the same both ways: its canonical order puts the
    smaller label first (``flipped`` and rule ``"symmetric"`` when that exchanged them), so
    ``(spain, border, france)`` and ``(france, border, spain)`` are one triple. The bare copula
    ``be`` is symmetric (compared both ways, never a swap) but keeps its written order: ``(radium,
    be, a metal)`` reads as written wherever its key is shown.

    Examples
    --------
    >>> read_triple(Triple("penicillin", "discover by", "alexander fleming")).triple
    Triple(head='alexander fleming', relation='discover', tail='penicillin')
    >>> r = read_triple(Triple("spain", "border", "france"))
    >>> r.triple, r.flipped, r.rule
    (Triple(head='france', relation='border', tail='spain'), True, 'symmetric')
    """
    r = read_relation(triple.relation)
    if r.symmetric and r.base != _COPULA:  # the copula keeps its written order (shown as is)
        head, tail = sorted((triple.head, triple.tail))
        flip = head != triple.head
        return Reading(Triple(head, r.base, tail), flip, "symmetric" if flip else r.rule, True)
    flip = r.flipped and not r.symmetric
    head, tail = (triple.tail, triple.head) if flip else (triple.head, triple.tail)
    return Reading(Triple(head, r.base, tail), flip, r.rule, r.symmetric)
