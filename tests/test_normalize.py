"""Tests of s3kg_core.normalize: label normalisation, triple clean-up (docs/scores.md step 1)."""

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.normalize import (
    normalization_name,
    normalize_label,
    normalize_triples,
    spell_numbered_role,
)

PROPERTY = settings(
    max_examples=200,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Preached_in", "preach in"),
        ("won_against", "win against"),
        ("was_born_in", "be born in"),
        ("has_relationship_with", "have relationship with"),
        ("North_Branch  Districts", "north branch district"),
        ("Children\tof\nmen", "child of man"),
        ("Mice", "mouse"),
        ("\u00a0Paris\u00a0", "paris"),  # non-breaking spaces are whitespace too
        ("Marie  Curie", "marie curie"),
        ("U.S._Army", "u.s. army"),  # non-alphabetic tokens are kept as they are
        ("co-founded", "co-founded"),
        ("2020", "2020"),
        ("ÉCOLE_normale", "école normale"),
        ("___", ""),
        ("   ", ""),
        ("", ""),
    ],
)
def test_normalize_label_table(label, expected):
    assert normalize_label(label) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("Was__Injured_In", "was injured in"),
        ("North_Branch  Districts", "north branch districts"),
        ("  Mice ", "mice"),
        ("a_\t_b", "a b"),
        ("___", ""),
    ],
)
def test_normalize_label_without_lemmas(label, expected):
    assert normalize_label(label, lemmatize=False) == expected


@pytest.mark.parametrize("lemmatize", [True, False])
@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("ARG0", "argument zero"),
        ("Arg1", "argument one"),
        ("ARG2-of", "argument two of"),
        ("arg9", "argument nine"),
        ("ARG10", "arg10"),  # no such role: left as it is
        ("ARG0x", "arg0x"),
        ("op1", "op1"),
    ],
)
def test_a_numbered_role_is_spelt_out_as_a_relation(label, expected, lemmatize):
    assert normalize_label(label, role="relation", lemmatize=lemmatize) == expected


def test_a_numbered_role_as_an_entity_stays_a_token():
    assert normalize_label("ARG0") == "arg0"
    assert normalize_triples([Triple("feed", "ARG0", "man")]) == (
        Triple("feed", "argument zero", "man"),
    )


def test_spelling_is_idempotent():
    for d in range(10):
        once = spell_numbered_role(f"arg{d}")
        assert spell_numbered_role(once) == once
        assert normalize_label(once, role="relation") == once  # lemmas keep the words


def test_unknown_role_is_a_config_error():
    with pytest.raises(ConfigError, match="role must be 'entity' or 'relation'"):
        normalize_label("x", role="tail")  # type: ignore[arg-type]


def test_lemmatize_is_keyword_only():
    with pytest.raises(TypeError):
        normalize_label("Mice", False)  # type: ignore[misc]


def test_normalize_triples_drops_empty_parts_and_duplicates_first_kept():
    ts = [
        Triple("He", "preached_in", "Otisville"),
        Triple("x", "_", "y"),  # relation empty after normalisation
        Triple("Griese", "was_relieved_by", "Grossman"),
        Triple("he", "Preached in", "otisville"),  # duplicate of the first once normalised
        Triple("  ", "r", "y"),
    ]
    assert normalize_triples(ts) == (
        Triple("he", "preach in", "otisville"),
        Triple("griese", "be relieve by", "grossman"),
    )


def test_normalize_triples_without_lemmas_keeps_inflections():
    ts = [Triple("Mice", "were_eating", "Cheese"), Triple("mice", "were eating", "cheese")]
    assert normalize_triples(ts, lemmatize=False) == (Triple("mice", "were eating", "cheese"),)


def test_normalize_triples_of_nothing_is_empty():
    assert normalize_triples([]) == ()


@pytest.mark.parametrize(("lemmatize", "name"), [(True, "lemma"), (False, "lower")])
def test_normalization_name(lemmatize, name):
    assert normalization_name(lemmatize) == name


_PIECES = [*"abcXYZ_ -.1éÉ", "\t", "\n", "\u00a0", "Mice", "was", "Preached", "_in_", "Districts"]
_LABEL_TEXT = st.lists(st.sampled_from(_PIECES), max_size=10).map("".join)


@PROPERTY
@given(_LABEL_TEXT)
def test_lower_normalisation_is_idempotent_and_clean(label):
    # Without lemmas, normalisation is a projection: applying it twice changes nothing. (With
    # lemmas it is not: "founded" -> "found" -> "find"; lemminflect's lemmas are not fixed points.)
    once = normalize_label(label, lemmatize=False)
    assert normalize_label(once, lemmatize=False) == once
    assert once == once.lower()
    assert "_" not in once
    assert once == once.strip()
    assert not re.search(r"\s\s", once)


@PROPERTY
@given(_LABEL_TEXT)
def test_lemma_normalisation_is_clean_and_keeps_the_token_count(label):
    # Lemmatisation works token by token: same number of tokens as the lowercased label, every
    # non-alphabetic token unchanged, output lowercase with single spaces.
    lower = normalize_label(label, lemmatize=False)
    lemma = normalize_label(label)
    assert lemma == lemma.lower()
    assert "_" not in lemma
    assert lemma == lemma.strip()
    assert not re.search(r"\s\s", lemma)
    assert len(lemma.split()) == len(lower.split())
    for before, after in zip(lower.split(), lemma.split(), strict=True):
        if not before.isalpha():
            assert after == before


@PROPERTY
@given(st.lists(st.tuples(_LABEL_TEXT, _LABEL_TEXT, _LABEL_TEXT), max_size=6))
def test_normalize_triples_output_is_distinct_and_non_empty(raw):
    out = normalize_triples([Triple(*t) for t in raw])
    assert len(set(out)) == len(out)
    assert all(t.head and t.relation and t.tail for t in out)
    # normalising the output again keeps every triple (nothing new becomes empty or duplicate)
    assert len(normalize_triples(out, lemmatize=False)) == len(out)


def test_lemmatising_does_not_import_spacy_and_spacy_still_imports():
    """Regression (issue 33): lemminflect imported spaCy for a hook we never use (seconds on
    the dashboard's first lemmatised label); the lemmas are the same without it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from s3kg_core.normalize import normalize_label\n"
        "print(normalize_label('was_born_in', role='relation'), normalize_label('running_dogs'))\n"
        "assert 'spacy' not in sys.modules\n"
        "import spacy, lemminflect\n"
        "print(lemminflect.getAllLemmas('dogs')['NOUN'][0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert out[0] == "be born in running dog"
    assert out[1] == "dog"


def test_the_lemmatizer_loads_once_from_several_threads():
    """The dashboard loads the dictionary in a background thread (issue 33: 0.4 s of the first
    explained answer); a page that needs a lemma meanwhile waits for that load, never reads
    the dictionary a second time."""
    import subprocess
    import sys

    code = (
        "import threading\n"
        "from lemminflect.codecs import LemmaLUCodec\n"
        "calls = []\n"
        "load = LemmaLUCodec.LemmaLUCodec.load\n"
        "def counted(*args, **kwargs):\n"
        "    calls.append(1)\n"
        "    return load(*args, **kwargs)\n"
        "LemmaLUCodec.LemmaLUCodec.load = staticmethod(counted)\n"
        "from s3kg_core.normalize import load_lemmatizer, normalize_label\n"
        "threads = [threading.Thread(target=load_lemmatizer) for _ in range(3)]\n"
        "threads.append(threading.Thread(target=normalize_label, args=('dogs',)))\n"
        "[t.start() for t in threads]\n"
        "[t.join() for t in threads]\n"
        "print(len(calls), normalize_label('districts'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["1", "district"]
