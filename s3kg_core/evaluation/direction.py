"""The direction suite: a fact reworded should score above a fact changed.

The question is "who did what to whom": does a score rank a rewrite that keeps a fact's meaning
above one that changes it? Each fact is one triple (head, relation, tail), sometimes with one
more triple about the same entities (its *context*, kept identical in every variant). The
reference KG is the fact (and its context); every variant is scored against it, the reference
as KG 1. The variant families:

====================  =======================  ===============================================
family                the fact's triple as     kept for
====================  =======================  ===============================================
``passive``           (tail, passive, head)    facts with a passive form
``inverse``           (tail, inverse, head)    facts with a lexical inverse ("works for" of
                                               "employs", "is the child of" of "is the parent
                                               of")
``synonym``           (head, synonym, tail)    facts with a synonymous relation ("found" of
                                               "discovered")
``symmetric``         (tail, relation, head)   symmetric facts ("is married to", "borders")
``swap``              (tail, relation, head)   facts that are not symmetric: meaning changed
``passive_old_order`` (head, passive, tail)    facts with a passive form that are not
                                               symmetric: meaning changed
``entity_replaced``   the fact with one        every fact: meaning changed
                      entity replaced
====================  =======================  ===============================================

The first four keep the meaning (:data:`KEEP_FAMILIES`), the last three change it
(:data:`CHANGE_FAMILIES`). A symmetric relation's passive with the old order ("France is
bordered by Spain" of "France borders Spain") keeps the meaning, so symmetric facts have no
``passive_old_order`` variant.

Two sources of facts (:data:`SOURCES`):

``written``
    The facts of ``direction_facts.json`` beside this module (:func:`load_facts`): science,
    history, medicine, business and family, some geography and sport, written by hand from
    general knowledge, each with its passive, inverse, synonym, symmetry, a plausible wrong
    entity of the same type and sometimes a context triple.
``drawn``
    Single triples of the S3KG authors' labelled pair sets (:func:`draw_facts`): a deterministic
    sample (at most :data:`DRAWN_LIMIT`, round-robin over the sets in the order of a hash) whose
    relation is one transitive verb, so a passive can be made from its past participle
    (:func:`passive_of`: ``asked`` -> ``asked by``). Their families are ``passive``, ``swap``,
    ``passive_old_order`` and ``entity_replaced`` (an entity of another drawn triple of the same
    set). They need the shared data folder; without it the suite runs on the written facts and
    says so (:attr:`DirectionSuite.drawn_note`).

Every fact is on the dev or the test side by a hash of its id
(:func:`~s3kg_core.evaluation.splits.direction_split`, about half each), with all its variants.

**Accuracy** is the share, over every fact and every (keeping variant, changing variant) pair of
that fact, of the pairs in which the keeping variant scores higher; a tie (within
:data:`TIE_TOLERANCE`) counts half. The comparisons are pooled over the facts (a fact with more
variants weighs more), and their number is reported. Beside it: each family's mean score, the
*meaning-preserving mean* (the mean score of every keeping variant), the mean of the changing
ones, and the accuracy per domain and per source (:class:`SplitMetrics`).

Two entry points: :func:`evaluate` scores a suite with one scorer (one
:meth:`~s3kg_core.scoring.s3kg.KGScorer.score_pairs` call); :func:`run_direction` runs several
modes on one encoder and one embedding cache (``s3kg bench direction``). To score many scorer
settings, build the suite once with :func:`load_suite` and pass it to :func:`evaluate`.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..encoders.base import Encoder
from ..errors import ConfigError, InputFormatError
from ..kg import Triple
from ..progress import StageProgress
from ..resources import package_path
from ..scoring.result import DEFAULT_ALPHA
from ..scoring.s3kg import KGScorer, S3KGConfig
from ..scoring.signature import Signature
from .pair_sets import BENCHMARKS_SUBDIR, list_pair_sets, load_pair_set
from .splits import DIRECTION_SPLIT, direction_split
from .variants import short_name

__all__ = [
    "CHANGE_FAMILIES",
    "DRAWN_LIMIT",
    "DRAWN_SAMPLE",
    "FACTS_FORMAT",
    "FAMILIES",
    "KEEP_FAMILIES",
    "SOURCES",
    "SPLITS",
    "TIE_TOLERANCE",
    "DirectionPair",
    "DirectionResult",
    "DirectionSuite",
    "Fact",
    "GroupMetrics",
    "SplitMetrics",
    "VariantScore",
    "accuracy",
    "draw_facts",
    "evaluate",
    "facts_file",
    "load_facts",
    "load_suite",
    "passive_of",
    "report",
    "run_direction",
    "split_metrics",
]

FACTS_FORMAT = "s3kg-direction-facts-v1"
"""The ``format`` of the packaged facts file."""

KEEP_FAMILIES = ("passive", "inverse", "synonym", "symmetric")
"""Variant families that keep the fact's meaning."""

CHANGE_FAMILIES = ("swap", "passive_old_order", "entity_replaced")
"""Variant families that change it."""

FAMILIES = KEEP_FAMILIES + CHANGE_FAMILIES
"""Every family, in the order of the tables."""

SOURCES = ("written", "drawn")
"""Where a fact comes from: the packaged file, or a pair set of the shared data."""

SPLITS = ("dev", "test", "all")
"""What a run reports: the dev facts, the test facts, or both sides and all facts together."""

DRAWN_LIMIT = 100
"""At most this many facts are drawn from the labelled pair sets."""

DRAWN_SAMPLE = "direction-drawn-v1"
"""The hash key's prefix that orders the drawn triples (a new sample needs a new one)."""

TIE_TOLERANCE = 1e-9
"""Two scores closer than this are a tie (half a win)."""

_SIDES = ("head", "tail")
_PER_RELATION = 2
"""Drawn triples of one relation per pair set, at most (the sample stays varied)."""

_NOT_PASSIVE = frozenset(
    {
        "be", "have", "do", "get", "become", "seem", "remain", "stay", "exist", "occur",
        "happen", "arrive", "die", "live", "go", "come", "rise", "fall", "lie", "sit", "stand",
        "sleep", "appear", "emerge", "return", "travel", "graduate", "retire", "resign", "work",
        "participate", "belong", "consist",
    }
)  # fmt: skip
"""Verbs whose passive (``X by``) is no rewording of the triple: auxiliaries, intransitives."""

_SYMMETRIC_VERBS = frozenset(
    {
        "marry", "wed", "divorce", "meet", "border", "adjoin", "neighbour", "neighbor",
        "resemble", "interact", "equal", "match", "fight", "battle", "collide", "touch", "date",
        "partner", "merge", "ally", "collaborate", "compete", "correlate", "associate", "connect",
        "intersect",
    }
)  # fmt: skip
"""Verbs that read the same both ways: their swap keeps the meaning, so they are not drawn."""


# -- facts ----------------------------------------------------------------------------------------


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InputFormatError(f"{what} must be a non-empty string; got {value!r}")
    return value.strip()


@dataclass(frozen=True)
class Fact:
    """One fact of the suite, with what its variants need.

    Attributes
    ----------
    id, domain
        A unique id (its split is a hash of it) and the fact's domain (``science``, ... or the
        short name of the pair set a drawn fact comes from).
    head, relation, tail
        The fact, its relation in the natural active form ("discovered", "employs").
    passive
        The relation's passive as an annotator would write it ("was discovered by",
        "discovered by"); ``None`` for a relation that has none ("is the parent of").
    inverse
        A relation that states the same fact with head and tail exchanged ("works for" of
        "employs"), or ``None``.
    synonym
        A relation with the same meaning in the same direction ("found" of "discovered"), or
        ``None``.
    symmetric
        Whether the relation reads the same both ways ("is married to").
    replacement, replaces
        A plausible wrong entity of the same type, and which entity it replaces (``"head"`` or
        ``"tail"``).
    context
        One more triple about the same entities, identical in every variant, or ``None``.
    source
        ``"written"`` or ``"drawn"`` (:data:`SOURCES`).

    Raises
    ------
    InputFormatError
        If a part is empty, ``replaces`` or ``source`` is unknown, the replacement is the entity
        it replaces, or the fact has no family that keeps its meaning (no passive, inverse or
        synonym, and not symmetric).

    Examples
    --------
    >>> f = Fact("f1", "science", "Fleming", "discovered", "penicillin",
    ...          passive="was discovered by", synonym="found", replacement="insulin")
    >>> f.triple, f.split
    (Triple(head='Fleming', relation='discovered', tail='penicillin'), 'test')
    >>> Fact.from_dict(f.to_dict()) == f
    True
    """

    id: str
    domain: str
    head: str
    relation: str
    tail: str
    passive: str | None = None
    inverse: str | None = None
    synonym: str | None = None
    symmetric: bool = False
    replacement: str = ""
    replaces: str = "tail"
    context: Triple | None = None
    source: str = "written"

    def __post_init__(self) -> None:
        where = f"fact {self.id!r}"
        for name in ("id", "domain", "head", "relation", "tail", "replacement"):
            _text(getattr(self, name), f"{where}: {name}")
        for name in ("passive", "inverse", "synonym"):
            if getattr(self, name) is not None:
                _text(getattr(self, name), f"{where}: {name}")
        if not isinstance(self.symmetric, bool):
            raise InputFormatError(f"{where}: symmetric must be true or false")
        if self.replaces not in _SIDES:
            raise InputFormatError(f"{where}: replaces must be 'head' or 'tail'")
        if self.source not in SOURCES:
            raise InputFormatError(f"{where}: source must be one of {', '.join(SOURCES)}")
        replaced = self.head if self.replaces == "head" else self.tail
        if self.replacement.strip().casefold() == replaced.strip().casefold():
            raise InputFormatError(f"{where}: the replacement is the {self.replaces} itself")
        if not (self.passive or self.inverse or self.synonym or self.symmetric):
            raise InputFormatError(
                f"{where}: no variant keeps its meaning; give a passive, an inverse or a "
                "synonym, or mark it symmetric"
            )
        if self.context is not None and not isinstance(self.context, Triple):
            raise InputFormatError(f"{where}: context must be a Triple")

    @property
    def triple(self) -> Triple:
        """The fact as a triple."""
        return Triple(self.head, self.relation, self.tail)

    @property
    def split(self) -> str:
        """``"dev"`` or ``"test"`` (:func:`~s3kg_core.evaluation.splits.direction_split`)."""
        return direction_split(self.id)

    def reference(self) -> tuple[Triple, ...]:
        """The reference KG: the fact and its context."""
        return self._with_context(self.triple)

    def _with_context(self, triple: Triple) -> tuple[Triple, ...]:
        return (triple,) if self.context is None else (triple, self.context)

    def variants(self) -> dict[str, tuple[Triple, ...]]:
        """The fact's variant KGs by family, in :data:`FAMILIES` order (context included).

        Examples
        --------
        >>> f = Fact("f2", "family", "Ann", "is the parent of", "Bo",
        ...          inverse="is the child of", replacement="Cy")
        >>> for family, kg in f.variants().items():
        ...     print(family, [t.to_list() for t in kg])
        inverse [['Bo', 'is the child of', 'Ann']]
        swap [['Bo', 'is the parent of', 'Ann']]
        entity_replaced [['Ann', 'is the parent of', 'Cy']]
        """
        h, r, t = self.head, self.relation, self.tail
        out: dict[str, Triple] = {}
        if self.passive:
            out["passive"] = Triple(t, self.passive, h)
        if self.inverse:
            out["inverse"] = Triple(t, self.inverse, h)
        if self.synonym:
            out["synonym"] = Triple(h, self.synonym, t)
        if self.symmetric:
            out["symmetric"] = Triple(t, r, h)
        else:
            out["swap"] = Triple(t, r, h)
            if self.passive:
                out["passive_old_order"] = Triple(h, self.passive, t)
        if self.replaces == "head":
            out["entity_replaced"] = Triple(self.replacement, r, t)
        else:
            out["entity_replaced"] = Triple(h, r, self.replacement)
        return {f: self._with_context(out[f]) for f in FAMILIES if f in out}

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of the facts file (``None`` fields left out; ``source`` when drawn)."""
        data: dict[str, Any] = {
            "id": self.id,
            "domain": self.domain,
            "head": self.head,
            "relation": self.relation,
            "tail": self.tail,
        }
        for name in ("passive", "inverse", "synonym"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        data |= {
            "symmetric": self.symmetric,
            "replacement": self.replacement,
            "replaces": self.replaces,
        }
        if self.context is not None:
            data["context"] = self.context.to_list()
        if self.source != "written":
            data["source"] = self.source
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fact:
        """A fact from its JSON form.

        Raises
        ------
        InputFormatError
            If a key is unknown or missing, or the fact is not valid (see the class).
        """
        known = {
            "id", "domain", "head", "relation", "tail", "passive", "inverse", "synonym",
            "symmetric", "replacement", "replaces", "context", "source",
        }  # fmt: skip
        if not isinstance(data, Mapping):
            raise InputFormatError(f"a fact must be an object; got {type(data).__name__}")
        where = f"fact {data.get('id')!r}"
        if unknown := sorted(set(data) - known):
            raise InputFormatError(f"{where}: unknown key(s) {', '.join(unknown)}")
        required = ("id", "domain", "head", "relation", "tail", "replacement")
        if missing := [k for k in required if k not in data]:
            raise InputFormatError(f"{where}: missing key(s) {', '.join(missing)}")
        context = data.get("context")
        if context is not None:
            if not (
                isinstance(context, list)
                and len(context) == 3
                and all(isinstance(x, str) and x.strip() for x in context)
            ):
                raise InputFormatError(f"{where}: context must be [head, relation, tail]")
            context = Triple(*context)
        return cls(
            id=data["id"],
            domain=data["domain"],
            head=data["head"],
            relation=data["relation"],
            tail=data["tail"],
            passive=data.get("passive"),
            inverse=data.get("inverse"),
            synonym=data.get("synonym"),
            symmetric=data.get("symmetric", False),
            replacement=data["replacement"],
            replaces=data.get("replaces", "tail"),
            context=context,
            source=data.get("source", "written"),
        )


def facts_file() -> Path:
    """The packaged facts file, ``direction_facts.json`` beside this module."""
    return package_path("s3kg_core", "evaluation", "direction_facts.json")


def load_facts(path: str | Path | None = None) -> tuple[Fact, ...]:
    """The written facts: the packaged file, or another file in its format.

    Parameters
    ----------
    path
        A JSON file ``{"format": "s3kg-direction-facts-v1", "facts": [...]}``; default
        :func:`facts_file`.

    Raises
    ------
    InputFormatError
        If the file cannot be read, is not in the format, or holds an invalid fact or two facts
        with one id.

    Examples
    --------
    >>> facts = load_facts()
    >>> len(facts) >= 150, facts[0].id, facts[0].relation
    (True, 'sci-01', 'discovered')
    """
    path = Path(path) if path is not None else facts_file()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputFormatError(f"cannot read the direction facts {path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("format") != FACTS_FORMAT:
        raise InputFormatError(f"{path}: not a facts file (format {FACTS_FORMAT!r} expected)")
    if not isinstance(data.get("facts"), list):
        raise InputFormatError(f"{path}: 'facts' must be a list")
    facts = tuple(Fact.from_dict(item) for item in data["facts"])
    twice = sorted(k for k, n in Counter(f.id for f in facts).items() if n > 1)
    if twice:
        raise InputFormatError(f"{path}: fact id(s) used twice: {', '.join(twice)}")
    return facts


# -- facts drawn from the labelled pair sets ------------------------------------------------------


def passive_of(relation: str, joiner: str = " ") -> str | None:
    """The passive of a one-verb relation (``"asked"`` -> ``"asked by"``), or ``None``.

    A relation is one verb when it is one word (``_`` counts as a space) that lemminflect knows
    as a past or third-person form of a verb, or as a base form that is nothing but a verb;
    auxiliaries, common intransitives and verbs that read the same both ways ("marries",
    "borders") give ``None``.

    Parameters
    ----------
    relation
        The relation label.
    joiner
        Between the participle and ``by`` (``"_"`` for a set whose labels use underscores).

    Examples
    --------
    >>> passive_of("asked"), passive_of("increases"), passive_of("include", "_")
    ('asked by', 'increased by', 'included_by')
    >>> passive_of("preached_in"), passive_of("condition"), passive_of("borders")
    (None, None, None)
    """
    from lemminflect import getAllLemmas, getInflection

    words = relation.replace("_", " ").split()
    if len(words) != 1:
        return None
    word = words[0].lower()
    lemmas = getAllLemmas(word)
    if "VERB" not in lemmas or "AUX" in lemmas:
        return None
    lemma = lemmas["VERB"][0]
    if lemma in _NOT_PASSIVE or lemma in _SYMMETRIC_VERBS:
        return None
    inflected = word in getInflection(lemma, "VBD") or word in getInflection(lemma, "VBZ")
    if not inflected and (word != lemma or set(lemmas) != {"VERB"}):
        return None
    participle = getInflection(lemma, "VBN")
    if not participle:
        return None
    return f"{participle[0]}{joiner}by"


@dataclass(frozen=True)
class _Drawn:
    key: str
    set_name: str
    triple: Triple
    passive: str


def _candidates(name: str, data_dir: str | Path | None) -> list[_Drawn]:
    """The drawable triples of one pair set, in hash order, at most 2 per relation."""
    ps = load_pair_set(name, data_dir)
    kgs = (*ps.kg_1, *ps.kg_2)
    joiner = "_" if any("_" in t.relation for kg in kgs for t in kg) else " "
    found: dict[str, _Drawn] = {}
    for kg in kgs:
        for t in kg:
            h, r, tl = t.head.strip(), t.relation.strip(), t.tail.strip()
            if not h or not tl or h.casefold() == tl.casefold():
                continue
            passive = passive_of(r, joiner)
            if passive is None:
                continue
            key = hashlib.sha256(f"{DRAWN_SAMPLE}:{name}:{h}\x1f{r}\x1f{tl}".encode()).hexdigest()
            found.setdefault(key, _Drawn(key, name, Triple(h, r, tl), passive))
    per_relation: Counter[str] = Counter()
    out = []
    for d in sorted(found.values(), key=lambda d: d.key):
        rel = d.triple.relation.casefold()
        if per_relation[rel] < _PER_RELATION:
            per_relation[rel] += 1
            out.append(d)
    return out


def _replacement(d: _Drawn, others: Sequence[_Drawn]) -> tuple[str, str] | None:
    """``(side, entity)``: the same side of the next other drawn triple that is not in ``d``."""
    side = "head" if int(d.key[-1], 16) % 2 else "tail"
    own = {d.triple.head.casefold(), d.triple.tail.casefold()}
    start = next((i for i, o in enumerate(others) if o.key == d.key), -1) + 1
    for o in [*others[start:], *others[:start]]:
        entity = o.triple.head if side == "head" else o.triple.tail
        if o.key != d.key and entity.casefold() not in own:
            return side, entity
    return None


def draw_facts(data_dir: str | Path | None = None, limit: int = DRAWN_LIMIT) -> tuple[Fact, ...]:
    r"""Facts drawn from the KGs of the labelled pair sets (empty when there are none).

    Every pair set's distinct triples (both KGs of every pair) whose relation has a passive
    (:func:`passive_of`) are ordered by ``sha256(f"{DRAWN_SAMPLE}:{set}:{h}\\x1f{r}\\x1f{t}")``
    (at most two per relation and set); the facts are taken round-robin over the sets, in name
    order, up to ``limit``. A fact's replacement is the same entity side (head or tail, by
    its hash) of the next drawn triple of its set, or of another set when its set has no other.

    Parameters
    ----------
    data_dir
        The shared data folder holding ``s3kg_release/benchmarks/``; default
        :func:`~s3kg_core.config.default_data_dir`.
    limit
        At most this many facts.

    Raises
    ------
    ConfigError
        If ``limit`` is negative.
    InputFormatError
        If a pair set cannot be read (see :func:`~s3kg_core.evaluation.pair_sets.load_pair_set`).

    Examples
    --------
    >>> import tempfile
    >>> draw_facts(tempfile.mkdtemp())
    ()
    """
    if limit < 0:
        raise ConfigError(f"limit must be >= 0; got {limit}")
    per_set = {name: _candidates(name, data_dir) for name in list_pair_sets(data_dir)}
    taken: list[_Drawn] = []
    rank = 0
    while len(taken) < limit and any(rank < len(c) for c in per_set.values()):
        for cands in per_set.values():
            if rank < len(cands) and len(taken) < limit:
                taken.append(cands[rank])
        rank += 1
    facts = []
    for d in taken:
        same_set = [o for o in taken if o.set_name == d.set_name]
        chosen = _replacement(d, same_set) if len(same_set) > 1 else None
        chosen = chosen or _replacement(d, taken)
        if chosen is None:
            continue
        side, entity = chosen
        short = short_name(d.set_name)
        facts.append(
            Fact(
                id=f"drawn-{short}-{d.key[:10]}",
                domain=short,
                head=d.triple.head,
                relation=d.triple.relation,
                tail=d.triple.tail,
                passive=d.passive,
                replacement=entity,
                replaces=side,
                source="drawn",
            )
        )
    return tuple(facts)


# -- the suite ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DirectionPair:
    """One scored pair of the suite: a fact's reference KG and one of its variants.

    Examples
    --------
    >>> f = Fact("f3", "x", "A", "employs", "B", inverse="works for", replacement="C")
    >>> p = DirectionPair(f, "inverse", f.reference(), f.variants()["inverse"])
    >>> p.keeps, p.as_tuple()[2:]
    (True, ('inverse', 'f3'))
    """

    fact: Fact
    family: str
    reference: tuple[Triple, ...]
    variant: tuple[Triple, ...]

    @property
    def fact_id(self) -> str:
        """The fact's id."""
        return self.fact.id

    @property
    def keeps(self) -> bool:
        """Whether the variant keeps the fact's meaning."""
        return self.family in KEEP_FAMILIES

    @property
    def split(self) -> str:
        """The fact's side of the split."""
        return self.fact.split

    def as_tuple(self) -> tuple[tuple[Triple, ...], tuple[Triple, ...], str, str]:
        """``(kg_a, kg_variant, family, fact_id)``."""
        return self.reference, self.variant, self.family, self.fact.id


def _texts(kg: Sequence[Triple]) -> str:
    return " ".join(f"{t.sentence()}." for t in kg)


@dataclass(frozen=True)
class DirectionSuite:
    """The facts of a run and their pairs, built once (:func:`load_suite`).

    Attributes
    ----------
    facts
        The facts, written then drawn.
    pairs
        Every variant of every fact, fact by fact, in :data:`FAMILIES` order.
    split
        ``"dev"``, ``"test"`` or ``"all"``: which facts are in it.
    drawn_note
        Why there are no drawn facts (no pair sets in the data folder, not asked for), else
        ``""``.

    Examples
    --------
    >>> suite = load_suite("dev", drawn=False)
    >>> suite.split, {p.split for p in suite.pairs}, suite.counts()["drawn"]
    ('dev', {'dev'}, 0)
    >>> kg_a, kg_b = suite.kg_pairs()[0]
    >>> kg_a == suite.pairs[0].reference
    True
    """

    facts: tuple[Fact, ...]
    pairs: tuple[DirectionPair, ...]
    split: str = "all"
    drawn_note: str = ""

    def __len__(self) -> int:
        return len(self.pairs)

    def kg_pairs(self) -> list[tuple[tuple[Triple, ...], tuple[Triple, ...]]]:
        """``(reference, variant)`` per pair, as ``KGScorer.score_pairs`` takes them."""
        return [(p.reference, p.variant) for p in self.pairs]

    def texts(self) -> list[tuple[str, str]]:
        """Each pair's two KGs written out as sentences (for a mode that reads texts)."""
        return [(_texts(p.reference), _texts(p.variant)) for p in self.pairs]

    def counts(self) -> dict[str, int]:
        """Facts per source (``written``, ``drawn``)."""
        return {s: sum(1 for f in self.facts if f.source == s) for s in SOURCES}

    def subset(self, split: str) -> DirectionSuite:
        """The facts and pairs of one side (``"all"``: the suite itself).

        Raises
        ------
        ConfigError
            On an unknown split, or a side this suite does not hold.
        """
        _check_split(split)
        if split == "all" or split == self.split:
            return self
        if self.split != "all":
            raise ConfigError(f"this suite holds the {self.split} facts only, not {split}")
        return DirectionSuite(
            facts=tuple(f for f in self.facts if f.split == split),
            pairs=tuple(p for p in self.pairs if p.split == split),
            split=split,
            drawn_note=self.drawn_note,
        )


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")


def load_suite(
    split: str = "all",
    *,
    data_dir: str | Path | None = None,
    drawn: bool = True,
    drawn_limit: int = DRAWN_LIMIT,
    facts: Iterable[Fact] | None = None,
) -> DirectionSuite:
    """The facts of one side and all their variant pairs, to score once or many times.

    Parameters
    ----------
    split
        ``"dev"``, ``"test"`` or ``"all"`` (:data:`SPLITS`).
    data_dir
        The shared data folder for the drawn facts (:func:`draw_facts`).
    drawn
        Add the drawn facts when the data folder has pair sets.
    drawn_limit
        At most this many drawn facts.
    facts
        The written facts to use instead of the packaged ones (:func:`load_facts`).

    Raises
    ------
    ConfigError
        On an unknown split.
    InputFormatError
        If the facts file or a pair set cannot be read, or two facts share an id.
    """
    _check_split(split)
    written = tuple(facts) if facts is not None else load_facts()
    taken: tuple[Fact, ...] = ()
    note = "drawn facts not asked for"
    if drawn:
        from ..config import default_data_dir

        taken = draw_facts(data_dir, drawn_limit)
        if not taken:
            folder = Path(data_dir) if data_dir is not None else default_data_dir()
            note = (
                f"no pair sets under {folder / BENCHMARKS_SUBDIR}: the written facts only "
                "(pass --data-dir or set S3KG_DATA_DIR to add facts drawn from them)"
            )
        else:
            note = ""
    every = written + taken
    twice = sorted(k for k, n in Counter(f.id for f in every).items() if n > 1)
    if twice:
        raise InputFormatError(f"fact id(s) used twice: {', '.join(twice)}")
    kept = tuple(f for f in every if split == "all" or f.split == split)
    pairs = tuple(
        DirectionPair(f, family, f.reference(), kg)
        for f in kept
        for family, kg in f.variants().items()
    )
    return DirectionSuite(facts=kept, pairs=pairs, split=split, drawn_note=note)


# -- metrics --------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def accuracy(pairs: Sequence[DirectionPair], scores: Sequence[float]) -> tuple[float | None, int]:
    """The share of a fact's (keeping, changing) variant pairs where the keeping one is higher.

    Every fact's pairs are pooled; a tie (within :data:`TIE_TOLERANCE`) counts half. The number
    of comparisons comes with the share.

    Parameters
    ----------
    pairs
        Suite pairs (of any facts, in any order).
    scores
        One score per pair.

    Returns
    -------
    tuple
        ``(accuracy, comparisons)``; the accuracy is ``None`` when there is no comparison.

    Raises
    ------
    InputFormatError
        If there is not one finite score per pair.

    Examples
    --------
    >>> f = Fact("f4", "x", "A", "employs", "B", passive="is employed by", replacement="C")
    >>> pairs = [DirectionPair(f, fam, f.reference(), kg) for fam, kg in f.variants().items()]
    >>> [p.family for p in pairs]
    ['passive', 'swap', 'passive_old_order', 'entity_replaced']
    >>> accuracy(pairs, [0.8, 0.5, 0.8, 0.9])  # a win, a tie, a loss
    (0.5, 3)
    """
    if len(scores) != len(pairs):
        raise InputFormatError(f"{len(scores)} scores for {len(pairs)} pairs: one per pair needed")
    if not all(math.isfinite(float(s)) for s in scores):
        raise InputFormatError("scores must be finite numbers")
    by_fact: dict[str, tuple[list[float], list[float]]] = {}
    for p, s in zip(pairs, scores, strict=True):
        keep, change = by_fact.setdefault(p.fact_id, ([], []))
        (keep if p.keeps else change).append(float(s))
    wins = 0.0
    comparisons = 0
    for keep, change in by_fact.values():
        for k in keep:
            for c in change:
                comparisons += 1
                if abs(k - c) <= TIE_TOLERANCE:
                    wins += 0.5
                elif k > c:
                    wins += 1.0
    return (wins / comparisons if comparisons else None), comparisons


@dataclass(frozen=True)
class GroupMetrics:
    """The accuracy and means of a group of facts (one domain, one source)."""

    facts: int
    comparisons: int
    accuracy: float | None
    preserving_mean: float | None
    changing_mean: float | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "facts": self.facts,
            "comparisons": self.comparisons,
            "accuracy": self.accuracy,
            "preserving_mean": self.preserving_mean,
            "changing_mean": self.changing_mean,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GroupMetrics:
        """Inverse of :meth:`to_dict`."""
        return cls(
            facts=int(data["facts"]),
            comparisons=int(data["comparisons"]),
            accuracy=_opt(data["accuracy"]),
            preserving_mean=_opt(data["preserving_mean"]),
            changing_mean=_opt(data["changing_mean"]),
        )


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


def _group(pairs: Sequence[DirectionPair], scores: Sequence[float]) -> GroupMetrics:
    acc, n = accuracy(pairs, scores)
    return GroupMetrics(
        facts=len({p.fact_id for p in pairs}),
        comparisons=n,
        accuracy=acc,
        preserving_mean=_mean([s for p, s in zip(pairs, scores, strict=True) if p.keeps]),
        changing_mean=_mean([s for p, s in zip(pairs, scores, strict=True) if not p.keeps]),
    )


@dataclass(frozen=True)
class SplitMetrics:
    """The figures of one side of the split (or of all facts).

    Attributes
    ----------
    split
        ``"dev"``, ``"test"`` or ``"all"``.
    facts, pairs, comparisons, accuracy
        Facts and scored pairs, and :func:`accuracy` over them.
    preserving_mean, changing_mean
        The mean score of every variant that keeps the meaning (the *meaning-preserving
        mean*), and of every one that changes it.
    family_means, family_pairs
        Each family's mean score (``None`` where no fact has the family) and pair count.
    by_domain, by_source
        :class:`GroupMetrics` per domain and per source (sources with no fact left out).
    """

    split: str
    facts: int
    pairs: int
    comparisons: int
    accuracy: float | None
    preserving_mean: float | None
    changing_mean: float | None
    family_means: Mapping[str, float | None]
    family_pairs: Mapping[str, int]
    by_domain: Mapping[str, GroupMetrics]
    by_source: Mapping[str, GroupMetrics]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the groups nested)."""
        return {
            "split": self.split,
            "facts": self.facts,
            "pairs": self.pairs,
            "comparisons": self.comparisons,
            "accuracy": self.accuracy,
            "preserving_mean": self.preserving_mean,
            "changing_mean": self.changing_mean,
            "family_means": dict(self.family_means),
            "family_pairs": dict(self.family_pairs),
            "by_domain": {k: v.to_dict() for k, v in self.by_domain.items()},
            "by_source": {k: v.to_dict() for k, v in self.by_source.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SplitMetrics:
        """Inverse of :meth:`to_dict`."""
        return cls(
            split=str(data["split"]),
            facts=int(data["facts"]),
            pairs=int(data["pairs"]),
            comparisons=int(data["comparisons"]),
            accuracy=_opt(data["accuracy"]),
            preserving_mean=_opt(data["preserving_mean"]),
            changing_mean=_opt(data["changing_mean"]),
            family_means={k: _opt(v) for k, v in data["family_means"].items()},
            family_pairs={k: int(v) for k, v in data["family_pairs"].items()},
            by_domain={k: GroupMetrics.from_dict(v) for k, v in data["by_domain"].items()},
            by_source={k: GroupMetrics.from_dict(v) for k, v in data["by_source"].items()},
        )


def split_metrics(
    pairs: Sequence[DirectionPair], scores: Sequence[float], split: str = "all"
) -> SplitMetrics:
    """The figures of the pairs on one side (``"all"``: every pair given).

    Pure: any scores work (a fake scorer's, a blend at another alpha).

    Raises
    ------
    ConfigError
        On an unknown split.
    InputFormatError
        If there is not one finite score per pair.

    Examples
    --------
    >>> f = Fact("f5", "x", "A", "borders", "B", symmetric=True, replacement="C")
    >>> pairs = [DirectionPair(f, fam, f.reference(), kg) for fam, kg in f.variants().items()]
    >>> m = split_metrics(pairs, [0.9, 0.4])
    >>> m.accuracy, m.comparisons, m.family_means["symmetric"], m.family_means["swap"]
    (1.0, 1, 0.9, None)
    """
    _check_split(split)
    if len(scores) != len(pairs):
        raise InputFormatError(f"{len(scores)} scores for {len(pairs)} pairs: one per pair needed")
    chosen = [(p, float(s)) for p, s in zip(pairs, scores, strict=True)]
    if split != "all":
        chosen = [(p, s) for p, s in chosen if p.split == split]
    ps = [p for p, _ in chosen]
    ss = [s for _, s in chosen]
    whole = _group(ps, ss)

    def groups(key: Any, order: Iterable[str]) -> dict[str, GroupMetrics]:
        out = {}
        for name in order:
            idx = [i for i, p in enumerate(ps) if key(p) == name]
            if idx:
                out[name] = _group([ps[i] for i in idx], [ss[i] for i in idx])
        return out

    domains = sorted({p.fact.domain for p in ps})
    return SplitMetrics(
        split=split,
        facts=whole.facts,
        pairs=len(ps),
        comparisons=whole.comparisons,
        accuracy=whole.accuracy,
        preserving_mean=whole.preserving_mean,
        changing_mean=whole.changing_mean,
        family_means={f: _mean([s for p, s in chosen if p.family == f]) for f in FAMILIES},
        family_pairs={f: sum(1 for p in ps if p.family == f) for f in FAMILIES},
        by_domain=groups(lambda p: p.fact.domain, domains),
        by_source=groups(lambda p: p.fact.source, SOURCES),
    )


# -- scoring --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VariantScore:
    """One variant's score against its fact's reference."""

    fact_id: str
    family: str
    split: str
    domain: str
    source: str
    score: float
    s_wl: float
    s_sbert: float
    status: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "fact_id": self.fact_id,
            "family": self.family,
            "split": self.split,
            "domain": self.domain,
            "source": self.source,
            "score": self.score,
            "s_wl": self.s_wl,
            "s_sbert": self.s_sbert,
            "status": self.status,
        }


@dataclass(frozen=True)
class DirectionResult:
    """The direction suite's figures for one scorer.

    Attributes
    ----------
    mode, encoder, alpha, signature
        How the pairs were scored (``signature`` ends in ``|alpha:A``).
    split
        What was asked: ``"dev"``, ``"test"`` or ``"all"``.
    metrics
        :class:`SplitMetrics` by side: the side asked, or for ``"all"`` ``dev``, ``test`` and
        ``all``.
    facts
        Facts scored per source (``written``, ``drawn``).
    drawn_note
        Why no fact was drawn, else ``""``.
    scores
        Every variant's score (:meth:`per_fact`; in :meth:`to_dict` only when asked).
    seconds
        The scoring's wall-clock seconds (encoding included).

    Examples
    --------
    >>> f = Fact("f6", "x", "A", "employs", "B", inverse="works for", replacement="C")
    >>> fake = lambda pairs: [0.9 if p.keeps else 0.2 for p in pairs]
    >>> r = evaluate(fake, "all", suite=load_suite(facts=[f], drawn=False))
    >>> r.metrics["all"].accuracy, r.per_fact()["f6"]
    (1.0, {'inverse': 0.9, 'swap': 0.2, 'entity_replaced': 0.2})
    >>> DirectionResult.from_dict(r.to_dict()).metrics == r.metrics
    True
    """

    mode: str
    encoder: str
    alpha: float | None
    signature: str
    split: str
    metrics: Mapping[str, SplitMetrics]
    facts: Mapping[str, int]
    drawn_note: str = ""
    scores: tuple[VariantScore, ...] = field(default=(), repr=False, compare=False)
    seconds: float = 0.0

    def per_fact(self) -> dict[str, dict[str, float]]:
        """Fact id -> family -> score."""
        out: dict[str, dict[str, float]] = {}
        for v in self.scores:
            out.setdefault(v.fact_id, {})[v.family] = v.score
        return out

    def to_dict(self, scores: bool = False) -> dict[str, Any]:
        """The JSON form; ``scores`` adds every variant's score."""
        data: dict[str, Any] = {
            "benchmark": "direction",
            "mode": self.mode,
            "encoder": self.encoder,
            "alpha": self.alpha,
            "signature": self.signature,
            "split": self.split,
            "split_rule": DIRECTION_SPLIT,
            "facts": dict(self.facts),
            "drawn_note": self.drawn_note,
            "seconds": self.seconds,
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()},
        }
        if scores:
            data["scores"] = [v.to_dict() for v in self.scores]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DirectionResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            mode=str(data["mode"]),
            encoder=str(data["encoder"]),
            alpha=_opt(data["alpha"]),
            signature=str(data["signature"]),
            split=str(data["split"]),
            metrics={k: SplitMetrics.from_dict(v) for k, v in data["metrics"].items()},
            facts={k: int(v) for k, v in data["facts"].items()},
            drawn_note=str(data.get("drawn_note", "")),
            scores=tuple(VariantScore(**v) for v in data.get("scores", ())),
            seconds=float(data.get("seconds", 0.0)),
        )


def evaluate(
    scorer: Any,
    split: str = "dev",
    *,
    suite: DirectionSuite | None = None,
    data_dir: str | Path | None = None,
    drawn: bool = True,
    progress: StageProgress | None = None,
) -> DirectionResult:
    """Score every variant of every fact of one side with one scorer and compute the figures.

    Parameters
    ----------
    scorer
        A :class:`~s3kg_core.scoring.s3kg.KGScorer` (all pairs in one ``score_pairs`` call), or
        any function from a list of :class:`DirectionPair` to one score per pair (a fake scorer,
        or another metric).
    split
        ``"dev"``, ``"test"`` or ``"all"`` (figures for dev, test and all facts).
    suite
        A suite built once by :func:`load_suite` (its ``"all"`` suite serves every split);
        without one the suite is built here.
    data_dir, drawn
        Without ``suite``: the shared data folder, and whether to add the drawn facts
        (:func:`load_suite`).
    progress
        ``progress(stage, done, total)`` while scoring (see ``score_pairs``).

    Returns
    -------
    DirectionResult
        With every variant's score: :meth:`DirectionResult.per_fact`.

    Raises
    ------
    ConfigError
        On an unknown split, or a suite that does not hold that side.
    InputFormatError
        If the facts cannot be read, or the scorer gives not one finite score per pair.

    Examples
    --------
    >>> from s3kg_core.scoring.s3kg import KGScorer
    >>> suite = load_suite(facts=load_facts()[:8], drawn=False)  # the whole suite: load_suite()
    >>> result = evaluate(KGScorer("minilm"), "all", suite=suite)
    >>> result.mode, result.metrics["all"].facts, 0.5 < result.metrics["all"].accuracy <= 1.0
    ('ot', 8, True)
    >>> sorted(result.per_fact()["sci-01"])
    ['entity_replaced', 'passive', 'passive_old_order', 'swap', 'synonym']
    """
    _check_split(split)
    if suite is None:
        suite = load_suite(split, data_dir=data_dir, drawn=drawn)
    suite = suite.subset(split)
    began = time.perf_counter()
    if isinstance(scorer, KGScorer):
        texts = suite.texts() if scorer.needs_texts else None
        results = scorer.score_pairs(suite.kg_pairs(), texts=texts, progress=progress)
        scores = [float(r.score) for r in results]
        parts = [(float(r.s_wl), float(r.s_sbert), r.status) for r in results]
        mode, encoder = str(scorer.config.mode), scorer.encoder.name
        alpha: float | None = float(scorer.config.alpha)
        signature = Signature.blended(scorer.signature, float(scorer.config.alpha))
    else:
        scores = [float(s) for s in scorer(list(suite.pairs))]
        parts = [(math.nan, math.nan, "ok")] * len(scores)
        mode = encoder = signature = getattr(scorer, "__name__", type(scorer).__name__)
        alpha = None
    seconds = time.perf_counter() - began
    sides = ("dev", "test", "all") if split == "all" else (split,)
    metrics = {s: split_metrics(suite.pairs, scores, s) for s in sides}
    variant_scores = tuple(
        VariantScore(p.fact_id, p.family, p.split, p.fact.domain, p.fact.source, s, wl, sb, status)
        for p, s, (wl, sb, status) in zip(suite.pairs, scores, parts, strict=True)
    )
    return DirectionResult(
        mode=mode,
        encoder=encoder,
        alpha=alpha,
        signature=signature,
        split=split,
        metrics=metrics,
        facts=suite.counts(),
        drawn_note=suite.drawn_note,
        scores=variant_scores,
        seconds=seconds,
    )


def run_direction(
    modes: Sequence[str],
    *,
    encoder: str | Encoder = "minilm",
    alpha: float = DEFAULT_ALPHA,
    split: str = "all",
    data_dir: str | Path | None = None,
    drawn: bool = True,
    facts: Iterable[Fact] | None = None,
    progress: StageProgress | None = None,
) -> list[DirectionResult]:
    """The direction suite in several modes: one encoder, one embedding cache, one suite.

    Parameters
    ----------
    modes
        Scorer modes (:data:`~s3kg_core.scoring.result.MODES`), each scored in one
        ``score_pairs`` call.
    encoder, alpha
        The encoder (loaded once) and the blend weight of every mode.
    split, data_dir, drawn, progress
        As :func:`evaluate`.
    facts
        The written facts to use instead of the packaged ones (:func:`load_suite`).

    Raises
    ------
    ConfigError
        On no mode, an unknown mode or split.

    Examples
    --------
    >>> results = run_direction(["ot", "kgx"], drawn=False, facts=load_facts()[:4])
    >>> [r.mode for r in results], results[0].facts, sorted(results[0].metrics)
    (['ot', 'kgx'], {'written': 4, 'drawn': 0}, ['all', 'dev', 'test'])
    """
    from ..encoders.cache import EmbeddingCache
    from ..encoders.registry import load_encoder

    if not modes:
        raise ConfigError("give at least one mode")
    configs = [S3KGConfig(mode=m, alpha=alpha) for m in modes]  # type: ignore[arg-type]
    _check_split(split)
    suite = load_suite(split, data_dir=data_dir, drawn=drawn, facts=facts)
    loaded = load_encoder(encoder) if isinstance(encoder, str) else encoder
    cache = EmbeddingCache(loaded)
    return [
        evaluate(KGScorer(loaded, config, cache=cache), split, suite=suite, progress=progress)
        for config in configs
    ]


# -- the report -----------------------------------------------------------------------------------

_SHORT = {
    "passive": "passive",
    "inverse": "inverse",
    "synonym": "synonym",
    "symmetric": "symmetr",
    "swap": "swap",
    "passive_old_order": "pas.old",
    "entity_replaced": "replace",
}


def _sides(side: str) -> tuple[str, ...]:
    return ("dev", "test") if side == "all" else (side,)


def _cell(value: float | None, width: int = 9) -> str:
    return f"{'-' if value is None else f'{value:.3f}':>{width}}"


def report(results: Sequence[DirectionResult]) -> str:
    """Text tables of the results of one suite, a row per mode.

    Per side: accuracy, the meaning-preserving mean, each family's mean and the changing mean;
    then the accuracy per domain of the written facts and per source. A side without facts is
    left out.

    Examples
    --------
    >>> f = Fact("f7", "x", "A", "employs", "B", inverse="works for", replacement="C")
    >>> r = evaluate(lambda ps: [0.5] * len(ps), "all", suite=load_suite(facts=[f], drawn=False))
    >>> for line in report([r]).splitlines()[:3]:
    ...     print(line)
    Direction suite, test split: 1 facts (1 written, 0 drawn), 2 comparisons
      mode     accuracy    keep passive inverse synonym symmetr    swap pas.old replace  change
      <lambda>    0.500   0.500       -   0.500       -       -   0.500       -   0.500   0.500
    """
    if not results:
        return "no results"
    lines: list[str] = []
    first = results[0]
    for side in first.metrics:
        m0 = first.metrics[side]
        if not m0.pairs:
            continue
        by = m0.by_source
        written = by["written"].facts if "written" in by else 0
        drawn = by["drawn"].facts if "drawn" in by else 0
        title = "all facts" if side == "all" else f"{side} split"
        lines.append(
            f"Direction suite, {title}: {m0.facts} facts ({written} written, {drawn} drawn), "
            f"{m0.comparisons:,} comparisons"
        )
        lines.append(
            f"  {'mode':<8}{'accuracy':>9}{'keep':>8}"
            + "".join(f"{_SHORT[f]:>8}" for f in FAMILIES)
            + f"{'change':>8}"
        )
        for r in results:
            m = r.metrics[side]
            lines.append(
                f"  {r.mode:<8}{_cell(m.accuracy)}{_cell(m.preserving_mean, 8)}"
                + "".join(_cell(m.family_means[f], 8) for f in FAMILIES)
                + _cell(m.changing_mean, 8)
            )
        written_domains = sorted(
            {v.domain for v in first.scores if v.source == "written" and v.split in _sides(side)}
        )
        groups = [*written_domains, *m0.by_source]
        width = max([9, *(len(g) + 1 for g in groups)])
        lines.append("  accuracy by domain (written facts) and by source")
        lines.append(f"  {'mode':<8}" + "".join(f"{g:>{width}}" for g in groups))
        for r in results:
            m = r.metrics[side]
            cells = [m.by_domain[g].accuracy if g in m.by_domain else None for g in written_domains]
            cells += [m.by_source[g].accuracy if g in m.by_source else None for g in m0.by_source]
            lines.append(f"  {r.mode:<8}" + "".join(_cell(c, width) for c in cells))
        lines.append("")
    lines.append(
        "accuracy: share of (keeping, changing) variant pairs of a fact where the keeping one "
        "scores higher (ties half); keep/change: mean score of the variants that keep/change "
        "the meaning"
    )
    if first.drawn_note:
        lines.append(f"note: {first.drawn_note}")
    for r in results:
        lines.append(f"{r.mode}: {r.signature} ({len(r.scores):,} pairs in {r.seconds:.1f} s)")
    return "\n".join(lines)
