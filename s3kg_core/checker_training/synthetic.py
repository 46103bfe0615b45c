"""Synthetic factual-consistency pairs for training a triple checker (TrueTeacher-style, offline).

Every pair is ``(window, statement, label)``: a *window* of 2-4 consecutive sentences of a
public text, a *statement* in the form the checker sees at run time (a triple as
``head relation tail``, see :func:`~s3kg_core.grapheval.checkers.base.triple_claim`, or a whole
sentence), and ``label`` 1 when the window supports the statement, 0 when it does not.

Sources (:func:`source_documents`) are never test material: the **dev** articles of SummEval,
QAGS-C and QAGS-X (the split of :func:`s3kg_core.evaluation.splits.article_split`), the
Wikipedia lead sections and the PubMedQA contexts of the shared data folder. Windows are cut by
:func:`~s3kg_core.grapheval.checkers.model_format.text_windows`, as the checker cuts a context;
which documents' pairs are held out from training is
:func:`~s3kg_core.evaluation.splits.heldout_document`.

Positives are the triples the offline extractor finds in the window (and, for one pair in
:data:`SENTENCE_SHARE`, a sentence of the window verbatim). Negatives are the corruptions a
hallucination makes, one per positive, of a kind drawn among those that apply:

``swap``
    head and tail exchanged;
``same_type``
    head or tail replaced by another entity of the window, of the same spaCy entity type (or
    another noun phrase of the window when the entity has no type);
``relation``
    the relation replaced by another relation found in the same document;
``negation``
    the relation negated, or its negation removed;
``number``
    a number in the statement changed;
``absent``
    head or tail replaced by an entity (same type when possible) of another document, absent
    from this one.

Windows are drawn by :data:`SOURCE_SHARES` (half from the news articles). Sentence negatives
get ``same_type``, ``absent``, ``number`` or ``negation`` edits of the sentence text. Given
paraphrase pairs (:mod:`s3kg_core.checker_training.paraphrase`), about
:data:`PARAPHRASE_SHARE` of the pairs come from them: the reworded sentence (``paraphrase``) and
one of its triples (``paraphrase_triple``) as positives, each with a corruption
(``paraphrase_<kind>``), and PAWS's word-scrambled sentences (``scramble``) as negatives.
Everything is drawn from one :class:`random.Random` seeded by the caller, over documents in a
fixed order, so the same seed and data give the same pairs; :func:`data_hash` fingerprints
them for the manifest.

Examples
--------
>>> negate_relation("born in"), negate_relation("not cause"), negate_relation("is not")
('not born in', 'cause', 'is')
>>> change_number("445 billion yen", random.Random(0)) != "445 billion yen"
True
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..config import default_data_dir
from ..errors import InputFormatError
from ..evaluation.summ_sets import DATASETS, load_summ_set
from ..grapheval.checkers.base import triple_claim
from ..grapheval.checkers.model_format import WINDOW_WORDS, text_windows
from ..kg import Triple
from ..limits import open_input
from ..text import detokenize, split_sentences
from .paraphrase import ParaphrasePair

__all__ = [
    "GENERATOR_VERSION",
    "NEGATIVE_KINDS",
    "PARAPHRASE_SHARE",
    "SENTENCE_SHARE",
    "SOURCE_SHARES",
    "SourceDocument",
    "SyntheticPair",
    "change_number",
    "data_hash",
    "generate_pairs",
    "negate_relation",
    "read_pairs",
    "source_documents",
    "write_pairs",
]

GENERATOR_VERSION = "synthetic-2"
NEGATIVE_KINDS = ("swap", "same_type", "relation", "negation", "number", "absent")
SENTENCE_SHARE = 5
"""One positive in this many is a window sentence rather than a triple."""
PARAPHRASE_SHARE = 0.3
"""Share of the pairs drawn from paraphrase corpora when :func:`generate_pairs` is given some."""
SOURCE_SHARES = {"news": 0.5, "wikipedia": 0.3, "pubmedqa": 0.2}
"""Shares of the windows by source: the benchmarks are news (SummEval/QAGS dev articles)."""

_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)*\b")
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_NEGATED = re.compile(r"^(?:not|never|no)\s+|\s+(?:not|never)\b", re.IGNORECASE)
_COPULAS = ("is", "are", "was", "were", "has", "have", "had", "can", "will")


@dataclass(frozen=True)
class SourceDocument:
    """A text pairs may be drawn from (``source``: ``summeval``, ``wikipedia``...)."""

    doc_id: str
    source: str
    text: str


@dataclass(frozen=True)
class SyntheticPair:
    """One training pair (``label`` 1 = the window supports the statement).

    Examples
    --------
    >>> p = SyntheticPair("Paris is in France.", "Paris is in France", 1, "support", "toy:0")
    >>> SyntheticPair.from_dict(p.to_dict()) == p
    True
    """

    window: str
    statement: str
    label: int
    kind: str
    doc_id: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SyntheticPair:
        """Read back :meth:`to_dict`."""
        return cls(
            str(data["window"]),
            str(data["statement"]),
            int(data["label"]),
            str(data["kind"]),
            str(data["doc_id"]),
        )


def _fingerprints(text: str) -> set[str]:
    """Letters and digits of each sentence of 30+ of them (spacing and quotes ignored)."""
    out = set()
    for sentence in split_sentences(detokenize(text)):
        squashed = re.sub(r"[^a-z0-9]", "", sentence.lower())
        if len(squashed) >= 30:
            out.add(squashed)
    return out


def source_documents(data_dir: str | Path | None = None) -> list[SourceDocument]:
    """The non-test texts pairs are drawn from, in a fixed order.

    Dev articles of the three summarisation sets (each article once; an article sharing a
    sentence with a test article of any of the three sets is left out, as the sets share
    CNN/DM stories), the Wikipedia lead sections and the PubMedQA contexts; a source whose file
    is missing is skipped.

    Raises
    ------
    InputFormatError
        If no source file at all is found.
    """
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    docs: list[SourceDocument] = []
    sets = {n: load_summ_set(n, data_dir=root) for n in DATASETS if (root / DATASETS[n]).is_file()}
    # the sets share CNN/DM stories: a dev article of one set may be a test article of another
    test_sentences = {
        f
        for s in sets.values()
        for e in s.examples
        if e.split == "test"
        for f in _fingerprints(e.context)
    }
    for name, summ in sets.items():
        seen: set[str] = set()
        for e in summ.examples:
            if e.split != "dev" or e.article_key in seen:
                continue
            seen.add(e.article_key)
            if _fingerprints(e.context) & test_sentences:
                continue
            key = hashlib.sha256(e.article_key.encode()).hexdigest()[:12]
            docs.append(SourceDocument(f"{name}:{key}", name, detokenize(e.context)))
    wiki = root / "wikipedia_paragraphs" / "wikitext_lead_paragraphs.jsonl"
    if wiki.is_file():
        for line in wiki.read_text(encoding="utf-8").splitlines():
            if line.strip():
                rec = json.loads(line)
                text = detokenize(str(rec.get("lead_text_detok") or ""))
                docs.append(SourceDocument(f"wikipedia:{rec['doc_id']}", "wikipedia", text))
    pubmed = root / "pubmedqa" / "ori_pqal.json"
    if pubmed.is_file():
        for pmid, rec in sorted(json.loads(pubmed.read_text(encoding="utf-8")).items()):
            text = detokenize(" ".join(rec.get("CONTEXTS") or []))
            docs.append(SourceDocument(f"pubmedqa:{pmid}", "pubmedqa", text))
    docs = [d for d in docs if d.text.strip()]
    if not docs:
        raise InputFormatError(f"no source text found under {root} (SummEval, QAGS, Wikipedia...)")
    return docs


def negate_relation(relation: str) -> str:
    """The relation with its negation flipped ("born in" -> "not born in", "is not" -> "is").

    Examples
    --------
    >>> negate_relation("was"), negate_relation("never visited")
    ('was not', 'visited')
    """
    if _NEGATED.search(relation):
        return " ".join(_NEGATED.sub(" ", relation).split())
    first, _, rest = relation.partition(" ")
    if first.lower() in _COPULAS:
        return " ".join([first, "not", rest]).strip()
    return f"not {relation}"


def change_number(text: str, rng: random.Random) -> str:
    """The text with one number changed (digits, or a small number word); unchanged if none.

    Examples
    --------
    >>> change_number("no digits here", random.Random(1))
    'no digits here'
    """
    found = list(_NUMBER.finditer(text))
    if found:
        m = rng.choice(found)
        raw = m.group().replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            return text
        step = max(1, int(abs(value) * rng.uniform(0.1, 0.5))) * rng.choice((-1, 1))
        new = value + step if value + step >= 0 else value + abs(step)
        digits = f"{new:.{len(raw.split('.')[1])}f}" if "." in raw else str(int(new))
        if 1800 <= value <= 2100 and "." not in raw:  # a year stays a plausible year
            digits = str(int(value) + rng.choice((-3, -2, -1, 1, 2, 3)))
        return text[: m.start()] + digits + text[m.end() :]
    words = [w for w in _NUMBER_WORDS if re.search(rf"\b{w}\b", text, re.IGNORECASE)]
    if words:
        word = rng.choice(words)
        other = rng.choice([w for w in _NUMBER_WORDS if w != word])
        return re.sub(rf"\b{word}\b", other, text, count=1, flags=re.IGNORECASE)
    return text


def _replace(text: str, old: str, new: str) -> str:
    return text.replace(old, new, 1)


@dataclass
class _Window:
    doc_id: str
    text: str
    triples: list[Triple]
    entities: list[tuple[str, str]]  # (text, label), noun chunks labelled ""


class _Corruptor:
    """Makes negatives for one window, with the other documents' entities at hand."""

    def __init__(self, rng: random.Random, pool: dict[str, list[str]], relations: list[str]):
        self.rng = rng
        self.pool = pool  # entity label -> entity texts of all documents, sorted
        self.relations = relations

    def _same_type(self, entity: str, w: _Window, doc_text: str, inside: bool) -> str | None:
        label = next((lab for text, lab in w.entities if text == entity or text in entity), "")
        low = doc_text.lower()
        if inside:
            options = [
                t for t, lab in w.entities if lab == label and t.lower() not in entity.lower()
            ]
            options = [t for t in options if entity.lower() not in t.lower()]
        else:
            options = self.pool.get(label) or self.pool.get("", [])
            options = [t for t in self.rng.sample(options, min(40, len(options)))]
            options = [t for t in options if t.lower() not in low]
        return self.rng.choice(sorted(set(options))) if options else None

    def triple_negative(
        self, t: Triple, w: _Window, doc_text: str, doc_relations: list[str]
    ) -> tuple[str, str] | None:
        kinds = list(NEGATIVE_KINDS)
        self.rng.shuffle(kinds)
        for kind in kinds:
            new = self._triple_kind(kind, t, w, doc_text, doc_relations)
            if new is not None and new.lower() != triple_claim(t).lower():
                return kind, new
        return None

    def _triple_kind(
        self, kind: str, t: Triple, w: _Window, doc_text: str, doc_relations: list[str]
    ) -> str | None:
        h, r, tail = t.head, t.relation, t.tail
        if kind == "swap":
            if h.lower() == tail.lower() or r.lower() in ("and", "with", "is", "or"):
                return None
            return triple_claim(Triple(tail, r, h))
        if kind in ("same_type", "absent"):
            which = self.rng.choice(("head", "tail"))
            entity = h if which == "head" else tail
            new = self._same_type(entity, w, doc_text, inside=kind == "same_type")
            if new is None:
                return None
            return triple_claim(Triple(new, r, tail) if which == "head" else Triple(h, r, new))
        if kind == "relation":
            options = [x for x in doc_relations if x.lower() != r.lower()]
            options = options or [
                x for x in self.rng.sample(self.relations, min(20, len(self.relations))) if x != r
            ]
            if not options:
                return None
            return triple_claim(Triple(h, self.rng.choice(options), tail))
        if kind == "negation":
            return triple_claim(Triple(h, negate_relation(r), tail))
        changed = change_number(triple_claim(t), self.rng)
        return changed if changed != triple_claim(t) else None

    def sentence_negative(self, s: str, w: _Window, doc_text: str) -> tuple[str, str] | None:
        kinds = ["same_type", "absent", "number", "negation"]
        self.rng.shuffle(kinds)
        for kind in kinds:
            new: str | None = None
            if kind == "number":
                new = change_number(s, self.rng)
            elif kind == "negation":
                m = re.search(r"\b(is|are|was|were|has|have|had|will|can)\b", s)
                new = s[: m.end()] + " not" + s[m.end() :] if m else None
            else:
                ents = [e for e, _ in w.entities if e in s]
                if ents:
                    ent = self.rng.choice(ents)
                    repl = self._same_type(ent, w, doc_text, inside=kind == "same_type")
                    new = _replace(s, ent, repl) if repl else None
            if new and new != s:
                return kind, new
        return None

    def paraphrase_pairs(self, item: ParaphrasePair, w: _Window) -> list[SyntheticPair]:
        """Positives and their negatives from one paraphrase pair and its window ``w``.

        ``w`` (see :func:`_paraphrase_windows`) holds the premise and the triples of the
        statement side.

        Label 1: the hypothesis sentence (``paraphrase``) and one of its triples
        (``paraphrase_triple``), each with its corruption. Label 0 (PAWS): the scrambled
        hypothesis (``scramble``) against a triple of the premise (``support``).
        """
        out: list[SyntheticPair] = []
        triples = list(dict.fromkeys(w.triples))
        if item.label == 1:
            neg = self.sentence_negative(item.hypothesis, w, w.text)
            if neg is not None:
                out.append(SyntheticPair(w.text, item.hypothesis, 1, "paraphrase", w.doc_id))
                out.append(SyntheticPair(w.text, neg[1], 0, f"paraphrase_{neg[0]}", w.doc_id))
            if triples:
                t = self.rng.choice(triples)
                tneg = self.triple_negative(t, w, w.text, [])
                if tneg is not None:
                    claim = triple_claim(t)
                    out.append(SyntheticPair(w.text, claim, 1, "paraphrase_triple", w.doc_id))
                    out.append(SyntheticPair(w.text, tneg[1], 0, f"paraphrase_{tneg[0]}", w.doc_id))
        elif triples:
            claim = triple_claim(self.rng.choice(triples))
            out.append(SyntheticPair(w.text, claim, 1, "support", w.doc_id))
            out.append(SyntheticPair(w.text, item.hypothesis, 0, "scramble", w.doc_id))
        return out


def _entities(doc: Any) -> list[tuple[str, str]]:
    """A parsed window's entities (text, spaCy label) and noun chunks (text, "")."""
    ents = [(e.text, e.label_) for e in doc.ents if len(e.text) > 1]
    chunks = [(c.text, "") for c in doc.noun_chunks if c.root.pos_ in ("NOUN", "PROPN")]
    chunks = [(re.sub(r"^(?:the|a|an) ", "", t, flags=re.I), lab) for t, lab in chunks]
    return ents + [c for c in chunks if len(c[0]) > 2 and c[0] not in {e for e, _ in ents}]


def _paraphrase_items(
    items: Sequence[ParaphrasePair], rng: random.Random, n: int
) -> list[tuple[ParaphrasePair, str]]:
    """``n`` pairs drawn at random, each with its window.

    The window is the premise and, before or after it, the premise of another pair (a
    distractor sentence, as a window of a text has). The distractor is cut to keep the window
    within 110 words; the premise never is.
    """
    if not items or n <= 0:
        return []
    order = list(items)
    rng.shuffle(order)
    out = []
    for i, item in enumerate(order[:n]):
        premise = item.premise.split()
        pad = order[(i + 1) % len(order)].premise.split() if len(order) > 1 else []
        pad = pad[: max(0, WINDOW_WORDS - len(premise))]
        words = [*premise, *pad] if rng.random() < 0.5 else [*pad, *premise]
        out.append((item, " ".join(words)))
    return out


def _paraphrase_windows(
    items: Sequence[tuple[ParaphrasePair, str]], extractor: Any
) -> list[tuple[_Window, ParaphrasePair]]:
    """The windows of :func:`_paraphrase_items` with their triples and entities.

    The triples are those of the statement side: the hypothesis of a paraphrase, the premise of
    a scramble.
    """
    if not items:
        return []
    sides = [item.hypothesis if item.label == 1 else item.premise for item, _ in items]
    kgs = extractor.extract_texts(sides)
    parsed = extractor.nlp.pipe([w for _, w in items], batch_size=64)
    return [
        (_Window(item.pair_id, window, list(kg.triples), _entities(doc)), item)
        for (item, window), kg, doc in zip(items, kgs, parsed, strict=True)
    ]


def _windows(
    docs: Sequence[SourceDocument], rng: random.Random, per_doc: int
) -> list[tuple[SourceDocument, str]]:
    out: list[tuple[SourceDocument, str]] = []
    for d in docs:
        wins = text_windows(d.text)
        rng.shuffle(wins)
        out.extend((d, w) for w in wins[:per_doc] if len(w.split()) >= 12)
    return out


def generate_pairs(
    documents: Sequence[SourceDocument],
    *,
    n_pairs: int = 4000,
    seed: int = 0,
    windows_per_doc: int = 3,
    news_windows_per_doc: int = 12,
    triples_per_window: int = 2,
    extractor: Any = None,
    paraphrases: Sequence[ParaphrasePair] = (),
    paraphrase_share: float = PARAPHRASE_SHARE,
) -> list[SyntheticPair]:
    """Draw about ``n_pairs`` pairs (half positive) from the documents, deterministically.

    Parameters
    ----------
    documents
        From :func:`source_documents` (or any :class:`SourceDocument` list).
    n_pairs
        Target count; fewer when the documents run out.
    seed
        Seed of the one random generator (documents, windows, triples, corruptions).
    windows_per_doc, news_windows_per_doc
        Windows drawn per Wikipedia/PubMedQA document, and per news (SummEval/QAGS) article.
    triples_per_window
        Most positive triples kept per window.
    extractor
        An :class:`~s3kg_core.extract.offline.OfflineExtractor` (default: a new one).
    paraphrases
        From :func:`~s3kg_core.checker_training.paraphrase.paraphrase_pairs`: reworded positives
        (``paraphrase``, ``paraphrase_triple``) and PAWS scrambles (``scramble``), about
        ``paraphrase_share`` of the pairs (none when empty).
    paraphrase_share
        Share of the pairs drawn from ``paraphrases``.

    Examples
    --------
    >>> docs = [SourceDocument("toy:1", "toy", "Marie Curie was born in Warsaw in 1867. She "
    ...         "moved to Paris in 1891 and studied physics there with great success. Pierre "
    ...         "Curie married her in 1895 in the town of Sceaux near Paris.")]
    >>> pairs = generate_pairs(docs, n_pairs=6, seed=0)
    >>> sorted({p.label for p in pairs}), pairs == generate_pairs(docs, n_pairs=6, seed=0)
    ([0, 1], True)
    """
    if extractor is None:
        from ..extract.offline import OfflineExtractor

        extractor = OfflineExtractor()
    rng = random.Random(seed)
    docs = sorted(documents, key=lambda d: d.doc_id)
    rng.shuffle(docs)
    news = set(DATASETS)
    by_source: dict[str, list[tuple[SourceDocument, str]]] = {}
    for d in docs:
        per = news_windows_per_doc if d.source in news else windows_per_doc
        group = "news" if d.source in news else d.source
        by_source.setdefault(group, []).extend(_windows([d], rng, per))
    # enough windows for the target (a window gives about triples_per_window * 2 + 1 pairs),
    # shared out by SOURCE_SHARES; what a source lacks goes to the others
    share = paraphrase_share if paraphrases else 0.0
    wanted = max(1, round(n_pairs * (1 - share)) // 3)
    shares = {g: SOURCE_SHARES.get(g, 0.0) for g in by_source}
    total = sum(shares.values()) or 1.0
    quota = {g: round(wanted * shares[g] / total) for g in by_source}
    chosen: list[tuple[SourceDocument, str]] = []
    for g in sorted(by_source):
        chosen.extend(by_source[g][: quota[g]])
    spare = [x for g in sorted(by_source) for x in by_source[g][quota[g] :]]
    chosen.extend(spare[: max(0, wanted - len(chosen))])
    rng.shuffle(chosen)
    texts = [w for _, w in chosen]
    kgs = extractor.extract_texts(texts)
    parsed = list(extractor.nlp.pipe(texts, batch_size=64))
    windows: list[_Window] = []
    pool: dict[str, set[str]] = {}
    for (d, text), kg, doc in zip(chosen, kgs, parsed, strict=True):
        windows.append(_Window(d.doc_id, text, list(kg.triples), _entities(doc)))
    items = _paraphrase_items(paraphrases, rng, round(n_pairs * paraphrase_share / 3))
    para_windows = _paraphrase_windows(items, extractor)
    for w in [*windows, *(pw for pw, _ in para_windows)]:
        for name, lab in w.entities:
            pool.setdefault(lab, set()).add(name)
    doc_texts = {d.doc_id: d.text for d in docs}
    doc_relations: dict[str, list[str]] = {}
    for w in windows:
        doc_relations.setdefault(w.doc_id, []).extend(t.relation for t in w.triples)
    relations = sorted({r for rs in doc_relations.values() for r in rs}) or ["is"]
    corruptor = _Corruptor(rng, {k: sorted(v) for k, v in pool.items()}, relations)
    para = [p for w, item in para_windows for p in corruptor.paraphrase_pairs(item, w)]
    para = para[: 2 * (round(n_pairs * paraphrase_share) // 2)]  # whole (positive, negative) pairs
    pairs: list[SyntheticPair] = []
    for w in windows:
        doc_text = doc_texts[w.doc_id]
        rels = sorted(set(doc_relations[w.doc_id]))
        triples = list(dict.fromkeys(w.triples))
        rng.shuffle(triples)
        for t in triples[:triples_per_window]:
            neg = corruptor.triple_negative(t, w, doc_text, rels)
            if neg is None:
                continue
            pairs.append(SyntheticPair(w.text, triple_claim(t), 1, "support", w.doc_id))
            pairs.append(SyntheticPair(w.text, neg[1], 0, neg[0], w.doc_id))
        if rng.randrange(SENTENCE_SHARE) == 0:
            sentences = [s for s in split_sentences(w.text) if len(s.split()) >= 6]
            if sentences:
                s = rng.choice(sentences)
                neg = corruptor.sentence_negative(s, w, doc_text)
                if neg is not None:
                    pairs.append(SyntheticPair(w.text, s, 1, "sentence", w.doc_id))
                    pairs.append(SyntheticPair(w.text, neg[1], 0, f"sentence_{neg[0]}", w.doc_id))
        if len(pairs) >= n_pairs - len(para):
            break
    return [*pairs[: n_pairs - len(para)], *para][:n_pairs]


def data_hash(pairs: Sequence[SyntheticPair]) -> str:
    """SHA-256 of the pairs as canonical JSON lines (the manifest's fingerprint).

    Examples
    --------
    >>> data_hash([]) == hashlib.sha256(b"").hexdigest()
    True
    """
    h = hashlib.sha256()
    for p in pairs:
        h.update((json.dumps(p.to_dict(), sort_keys=True) + "\n").encode())
    return h.hexdigest()


def write_pairs(pairs: Sequence[SyntheticPair], path: str | Path) -> None:
    """Write pairs as JSON lines (atomically: a temporary file renamed into place)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p.to_dict(), sort_keys=True) + "\n")
    tmp.replace(path)


def read_pairs(path: str | Path) -> list[SyntheticPair]:
    """Read :func:`write_pairs`' file.

    Raises
    ------
    InputFormatError
        If the file is missing or a line is not a pair.
    """
    path = Path(path)
    if not path.is_file():
        raise InputFormatError(f"pairs file {path} not found")
    out = []
    with open_input(path, "a pairs file", "pass fewer pairs") as fh:
        for n, line in enumerate(io.TextIOWrapper(fh, encoding="utf-8"), 1):
            if line.strip():
                try:
                    out.append(SyntheticPair.from_dict(json.loads(line)))
                except (ValueError, KeyError, TypeError) as exc:
                    raise InputFormatError(f"{path}: line {n} is not a pair: {exc}") from exc
    return out
