"""Where a flagged triple sits in the answer text (s3kg_core.grapheval.spans).

Moved from the dashboard's Hallucinations helpers (``dashboard/hallucinations.py``), which now
only render these spans as HTML (``highlight_html``, tested in test_dashboard_hallucinations).
"""

from __future__ import annotations

import doctest
import itertools

import pytest

import s3kg_core.grapheval.spans as spans_module
from s3kg_core.grapheval.spans import Span, flag_spans, triple_spans, triple_text
from s3kg_core.kg import Triple


@pytest.mark.parametrize(
    ("answer", "triple", "marked"),
    [
        ("The TOWER opened in 1899.", ("tower", "opened in", "1899"), ["TOWER", "1899"]),
        ("St Mary's Hospital is in London.", ("St Mary Hospital", "in", "London"),
         ["St Mary's Hospital", "London"]),
        # the phrase is not there: its content words are
        ("Fleming worked at a hospital.", ("Alexander Fleming", "at", "the hospital"),
         ["Fleming", "hospital"]),
        # only the sentence sharing most words with the triple is marked
        ("The tower is old. The tower opened in 1899.", ("tower", "opened in", "1899"),
         ["tower", "1899"]),
        # neither head nor tail found: the relation's words
        ("It was discovered late.", ("penicillin", "discovered", "1928"), ["discovered"]),
        ("Nothing to see here.", ("penicillin", "discovered by", "Fleming"), []),
        ("", ("a", "b", "c"), []),
    ],
)  # fmt: skip
def test_flag_spans_finds_the_words_of_a_flagged_triple(answer, triple, marked):
    spans = flag_spans(answer, [(triple, 0.8)])
    assert [answer[s.start : s.end] for s in spans] == marked


def test_a_triple_is_marked_in_the_sentence_that_carries_it():
    answer = "The tower is old. The tower opened in 1899."
    spans = flag_spans(answer, [(("tower", "opened in", "1899"), 0.8)])
    assert [s.start for s in spans] == [answer.rindex("tower"), answer.index("1899")]


def test_overlapping_marks_merge_and_keep_every_triple():
    answer = "Marie Curie discovered radium."
    spans = flag_spans(
        answer, [(("Marie Curie", "discovered", "radium"), 0.9), (("Curie", "born in", "x"), None)]
    )
    assert [answer[s.start : s.end] for s in spans] == ["Marie Curie", "radium"]
    assert len(spans[0].notes) == 2 and "not judged" in spans[0].notes[1]


def test_a_triple_found_twice_in_one_place_is_noted_once():
    answer = "Curie, Curie"
    spans = flag_spans(answer, [(("Curie", "is", "Curie"), 0.7), (("Curie", "is", "Curie"), 0.7)])
    assert [(s.start, s.end) for s in spans] == [(0, 5), (7, 12)]
    assert all(s.notes == ("(Curie | is | Curie): P(unsupported) 0.70",) for s in spans)


def test_a_triple_of_short_or_common_words_only_has_no_span():
    assert flag_spans("ab cd of the", [(("ab", "of", "the"), 0.9)]) == []


def test_spans_are_sorted_and_disjoint_whatever_the_order_of_the_triples():
    answer = "Aspirin reduces fever. Ibuprofen reduces pain. Paracetamol treats headaches."
    flagged = [
        (("Paracetamol", "treats", "headaches"), 0.9),
        (("Aspirin", "reduces", "fever"), 0.8),
        (("Ibuprofen", "reduces", "pain"), None),
    ]
    spans = flag_spans(answer, flagged)
    assert spans == flag_spans(answer, flagged[::-1])
    assert all(a.end < b.start for a, b in itertools.pairwise(spans))
    assert [answer[s.start : s.end] for s in spans] == [
        "Aspirin", "fever", "Ibuprofen", "pain", "Paracetamol", "headaches",
    ]  # fmt: skip
    assert spans[2].notes == ("(Ibuprofen | reduces | pain): not judged",)


def test_triple_spans_gives_unmerged_ranges_in_every_best_sentence():
    answer = "The tower opened in 1899. The tower opened in 1899 too. A tower."
    t = Triple("tower", "opened in", "1899")
    assert [answer[s:e] for s, e in triple_spans(answer, t)] == ["tower", "1899", "tower", "1899"]
    assert triple_spans(answer, t)[2][0] == answer.index("tower", 5)
    assert triple_spans("", t) == [] and triple_spans("Nothing here.", t) == []


def test_spans_are_plain_frozen_values():
    span = Span(0, 3, ("note",))
    assert span == Span(0, 3, ("note",))
    with pytest.raises(AttributeError):
        span.start = 1  # type: ignore[misc]


def test_triple_text():
    assert triple_text(Triple("a b", "r", "c")) == "(a b | r | c)"


def test_the_module_examples_run():
    result = doctest.testmod(spans_module)
    assert result.attempted >= 8 and result.failed == 0
