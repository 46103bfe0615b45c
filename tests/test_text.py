"""Stop words and the sentence rule shared by the support checker and the dashboard."""

from __future__ import annotations

import hashlib
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.text import STOP_WORDS, detokenize, sentence_spans, split_sentences


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two!", ["One.", "Two!"]),
        ('He said "hi." Then left.', ['He said "hi."', "Then left."]),
        ("It is (really.) So", ["It is (really.)", "So"]),
        ("Dr. Who?  Yes", ["Dr.", "Who?", "Yes"]),
        ("line one\nline two\n\n", ["line one", "line two"]),
        ("3.5 kg", ["3.5 kg"]),
        ("no end", ["no end"]),
        ("", []),
        ("  \n ", []),
    ],
)
def test_sentence_rule(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected
    assert [text[a:b] for a, b in sentence_spans(text)] == expected


def test_spans_are_stripped_ordered_and_disjoint() -> None:
    text = '  Alice met Bob.  "Hi!" she said.\nBye  '
    spans = sentence_spans(text)
    assert spans == [(2, 16), (18, 23), (24, 33), (34, 37)]
    assert all(a < b <= c for (a, b), (c, _) in pairwise(spans))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab .!?\n\t\"')]\u2019\u201d\u00a0")), max_size=40))
def test_spans_and_sentences_agree(text: str) -> None:
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == split_sentences(text)
    assert all(text[a:b] == text[a:b].strip() != "" for a, b in spans)


def test_stop_words_are_the_calibrated_list() -> None:
    # The support checker's calibration (support_calibration.json) was fitted with exactly this
    # list: a change here needs a new calibration (bench/experiments/calibrate_support.py).
    assert len(STOP_WORDS) == 100
    digest = hashlib.sha256(" ".join(sorted(STOP_WORDS)).encode()).hexdigest()
    assert digest == "feac4309d8354015f8dc63cfe73f226f3cba11abd8802db1b4150b0e39b51bcb"
    assert all(w == w.lower().strip() and w for w in STOP_WORDS)
    assert {"the", "said", "one", "not"} <= STOP_WORDS
    assert not {"paris", "born", "radium"} & STOP_WORDS


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris , France .", "Paris, France."),
        ("it 's ( really ) $ 5", "it's (really) $5"),
        ("3 @-@ 4 km , 1 @,@ 000 and 2 @.@ 5", "3-4 km, 1,000 and 2.5"),
        ("  many   spaces\n here ", "many spaces here"),
        ("Already clean.", "Already clean."),
    ],
)
def test_detokenize_undoes_corpus_spacing(text: str, expected: str) -> None:
    assert detokenize(text) == expected
