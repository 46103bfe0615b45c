"""s3kg_core.checker_training.synthetic: sources (never a test article), corruptions, hashing."""

from __future__ import annotations

import hashlib
import json
import random
import re

import pytest

from s3kg_core.checker_training.paraphrase import ParaphrasePair
from s3kg_core.checker_training.synthetic import (
    NEGATIVE_KINDS,
    SourceDocument,
    SyntheticPair,
    change_number,
    data_hash,
    generate_pairs,
    negate_relation,
    read_pairs,
    source_documents,
    write_pairs,
)
from s3kg_core.errors import InputFormatError
from s3kg_core.evaluation.summ_sets import DATASETS, load_summ_set
from s3kg_core.grapheval.checkers.base import triple_claim
from s3kg_core.grapheval.checkers.model_format import text_windows
from s3kg_core.kg import Triple

TOY = [
    SourceDocument(
        "toy:1",
        "toy",
        "Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 and studied physics "
        "at the Sorbonne. Pierre Curie married her in 1895 in Sceaux. The couple discovered "
        "radium in 1898. Marie Curie won the Nobel Prize in 1903 with Pierre Curie.",
    ),
    SourceDocument(
        "toy:2",
        "toy",
        "The Eiffel Tower is in Paris. Gustave Eiffel designed the tower for the 1889 World's "
        "Fair. It opened in 1889 and was not popular with artists. The tower is 330 metres "
        "tall. Millions of tourists visit France every year to see it.",
    ),
    SourceDocument(
        "toy:3",
        "toy",
        "Aspirin reduces fever and pain. Bayer sold aspirin from 1899 in Germany. Doctors in "
        "London used it to treat headaches. Aspirin does not cure infections. Felix Hoffmann "
        "made the drug at Bayer in Elberfeld.",
    ),
]


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


@pytest.fixture(scope="module")
def toy_pairs():
    return generate_pairs(TOY, n_pairs=60, seed=3, windows_per_doc=4, triples_per_window=4)


def test_relations_flip_their_negation():
    assert negate_relation("born in") == "not born in"
    assert negate_relation("not cause") == "cause"
    assert negate_relation("is not") == "is"
    assert negate_relation("was") == "was not"
    assert negate_relation("never visited") == "visited"


def test_numbers_change_and_years_stay_years():
    rng = random.Random(0)
    for _ in range(20):
        changed = change_number("opened in 1889", rng)
        year = int(changed.split()[-1])
        assert year != 1889 and 1880 <= year <= 1900
    assert change_number("445 billion yen", rng) != "445 billion yen"
    assert change_number("three sisters", rng) != "three sisters"
    assert change_number("no number", rng) == "no number"


def test_generation_is_deterministic_given_the_seed(toy_pairs):
    again = generate_pairs(TOY, n_pairs=60, seed=3, windows_per_doc=4, triples_per_window=4)
    assert again == toy_pairs and data_hash(again) == data_hash(toy_pairs)
    other = generate_pairs(TOY, n_pairs=60, seed=4, windows_per_doc=4, triples_per_window=4)
    assert data_hash(other) != data_hash(toy_pairs)


def test_pairs_are_positives_from_the_window_and_their_corruptions(toy_pairs):
    labels = [p.label for p in toy_pairs]
    assert 0 < sum(labels) < len(labels)
    allowed = {"support", "sentence"} | set(NEGATIVE_KINDS)
    allowed |= {f"sentence_{k}" for k in NEGATIVE_KINDS}
    assert {p.kind for p in toy_pairs} <= allowed
    assert len({p.kind for p in toy_pairs if p.label == 0}) >= 3  # several corruption kinds
    for pos, neg in zip(toy_pairs[::2], toy_pairs[1::2], strict=True):
        assert pos.label == 1 and neg.label == 0 and pos.window == neg.window
        assert pos.statement.lower() != neg.statement.lower()
        if pos.kind == "sentence":
            assert pos.statement in pos.window
    windows = {p.window for p in toy_pairs}
    assert all(any(w in _squash(d.text) for d in TOY) for w in map(_squash, windows))


PARAPHRASES = [
    ParaphrasePair(
        "paws:1",
        "paws",
        "Marie Curie moved to Paris in 1891.",
        "In 1891, Marie Curie moved to Paris.",
        1,
    ),
    ParaphrasePair(
        "paws:2",
        "paws",
        "Bayer sold aspirin in Germany from 1899.",
        "From 1899, Bayer sold aspirin in Germany.",
        1,
    ),
    ParaphrasePair(
        "paws:3",
        "paws",
        "Flights from Paris to Rome left at noon.",
        "Flights from Rome to Paris left at noon.",
        0,
    ),
    ParaphrasePair(
        "mrpc:4",
        "mrpc",
        "The tower in Paris was designed by Gustave Eiffel.",
        "Gustave Eiffel designed the tower in Paris.",
        1,
    ),
]


def _with_paraphrases(share: float = 0.5) -> list[SyntheticPair]:
    return generate_pairs(
        TOY, n_pairs=40, seed=3, windows_per_doc=4, paraphrases=PARAPHRASES, paraphrase_share=share
    )


def test_paraphrases_give_reworded_positives_and_scrambled_negatives():
    pairs = _with_paraphrases()
    assert pairs == _with_paraphrases()  # deterministic
    items = {p.pair_id: p for p in PARAPHRASES}
    para = [p for p in pairs if p.doc_id in items]
    assert 0 < len(para) <= 20 and len(pairs) - len(para) > 0  # at most the share, docs too
    kinds = {p.kind for p in para}
    assert {"paraphrase", "scramble", "paraphrase_triple"} <= kinds
    for pos, neg in zip(para[::2], para[1::2], strict=True):
        item = items[pos.doc_id]
        assert pos.label == 1 and neg.label == 0 and pos.window == neg.window
        assert item.premise in pos.window and len(pos.window) > len(item.premise)  # a distractor
        if pos.kind == "paraphrase":
            assert pos.statement == item.hypothesis and item.label == 1
            assert neg.kind.startswith("paraphrase_") and neg.statement != item.hypothesis
        if neg.kind == "scramble":
            assert neg.statement == item.hypothesis and item.label == 0 and pos.kind == "support"


def test_a_long_distractor_is_cut_and_the_premise_kept_whole():
    # regression: the window was cut at 110 words after joining, which could cut the premise
    long = " ".join(f"word{i}" for i in range(100)) + "."
    premise = "Marie Curie moved to Paris in 1891 and studied physics at the Sorbonne there."
    items = [
        ParaphrasePair("paws:1", "paws", premise, "In 1891 Marie Curie moved to Paris.", 1),
        ParaphrasePair("paws:2", "paws", long, long.replace("word1 ", "word2 "), 0),
    ]
    for seed in range(6):  # the distractor goes before or after the premise at random
        pairs = generate_pairs(TOY, n_pairs=40, seed=seed, paraphrases=items, paraphrase_share=0.5)
        windows = {p.window for p in pairs if p.doc_id == "paws:1"}
        assert windows and all(premise in w and len(w.split()) <= 110 for w in windows)


def test_a_zero_paraphrase_share_keeps_to_the_documents():
    pairs = _with_paraphrases(0.0)
    assert pairs and not {p.doc_id for p in pairs} & {p.pair_id for p in PARAPHRASES}


def test_a_swap_exchanges_head_and_tail(toy_pairs):
    # each negative follows its positive; a swap is the positive triple with ends exchanged
    for pos, neg in zip(toy_pairs[::2], toy_pairs[1::2], strict=True):
        if neg.kind == "swap":
            words = set(pos.statement.lower().split())
            assert set(neg.statement.lower().split()) == words


def test_an_absent_entity_is_not_in_the_document(toy_pairs):
    texts = {d.doc_id: d.text.lower() for d in TOY}
    absent = [
        (p, n) for p, n in zip(toy_pairs[::2], toy_pairs[1::2], strict=True) if n.kind == "absent"
    ]
    for pos, neg in absent:
        new_words = set(neg.statement.split()) - set(pos.statement.split())
        assert new_words and not all(w.lower() in texts[neg.doc_id] for w in new_words)


def test_pairs_round_trip_through_a_file_and_the_hash_sees_every_field(tmp_path, toy_pairs):
    path = tmp_path / "pairs.jsonl"
    write_pairs(toy_pairs, path)
    assert read_pairs(path) == toy_pairs
    changed = [*toy_pairs[:-1], SyntheticPair(**{**toy_pairs[-1].to_dict(), "label": 1})]
    assert data_hash(changed) != data_hash(toy_pairs)
    assert data_hash([]) == hashlib.sha256(b"").hexdigest()
    path.write_text('{"window": 1}\n')
    with pytest.raises(InputFormatError, match="line 1"):
        read_pairs(path)
    with pytest.raises(InputFormatError, match="not found"):
        read_pairs(tmp_path / "none.jsonl")


def test_no_source_text_is_an_error(tmp_path):
    with pytest.raises(InputFormatError, match="no source text"):
        source_documents(tmp_path)


def test_sources_read_wikipedia_and_pubmedqa_files(tmp_path):
    (tmp_path / "wikipedia_paragraphs").mkdir()
    rec = {"doc_id": 7, "lead_text_detok": "Valkyria ( Japanese ) is a game . It 's fun ."}
    (tmp_path / "wikipedia_paragraphs" / "wikitext_lead_paragraphs.jsonl").write_text(
        json.dumps(rec) + "\n"
    )
    (tmp_path / "pubmedqa").mkdir()
    (tmp_path / "pubmedqa" / "ori_pqal.json").write_text(
        json.dumps({"123": {"CONTEXTS": ["Aspirin works.", "It is cheap."]}})
    )
    docs = source_documents(tmp_path)
    assert [(d.doc_id, d.source) for d in docs] == [
        ("wikipedia:7", "wikipedia"),
        ("pubmedqa:123", "pubmedqa"),
    ]
    assert docs[0].text == "Valkyria (Japanese) is a game. It's fun."
    assert docs[1].text == "Aspirin works. It is cheap."


@pytest.mark.shared_data
def test_no_test_article_is_a_source(shared_data):
    docs = source_documents(shared_data)
    news = [d for d in docs if d.source in DATASETS]
    assert {d.source for d in docs} == {*DATASETS, "wikipedia", "pubmedqa"}
    test_texts, test_keys = [], set()
    for name in DATASETS:
        full = load_summ_set(name, data_dir=shared_data, split="all")
        dev = {
            hashlib.sha256(e.article_key.encode()).hexdigest()[:12]
            for e in full.examples
            if e.split == "dev"
        }
        kept = {d.doc_id.split(":")[1] for d in news if d.source == name}
        assert kept <= dev and len(kept) > len(dev) / 2
        for e in full.examples:
            if e.split == "test":
                test_keys.add(hashlib.sha256(e.article_key.encode()).hexdigest()[:12])
                test_texts.append(_squash(e.context))
    assert not test_keys & {d.doc_id.split(":")[1] for d in news}
    # no window of a news article (CNN/DM, XSum: the sets share stories) is a piece of a test
    # article of any of the three sets
    squashed_tests = "\n".join(sorted(set(test_texts)))
    for d in news:
        for w in text_windows(d.text):
            piece = _squash(w)
            if len(piece) > 80:
                assert piece not in squashed_tests, d.doc_id


def test_positives_are_extracted_triples_rendered_as_claims():
    from s3kg_core.extract.offline import OfflineExtractor

    ex = OfflineExtractor()
    pairs = generate_pairs(TOY[:1], n_pairs=40, seed=0, windows_per_doc=4, extractor=ex)
    claims = {
        triple_claim(t) for w in text_windows(TOY[0].text) for t in ex.extract_text(w).triples
    }
    assert {p.statement for p in pairs if p.kind == "support"} <= claims
    assert triple_claim(Triple("a_b", "r", "c")) == "a b r c"
