"""Tests of s3kg_core.kg: Triple and KnowledgeGraph."""

import json

import pytest

from s3kg_core.errors import S3KGError, TripleError
from s3kg_core.kg import KnowledgeGraph, Triple

# -- Triple ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (["a", "r", "b"], Triple("a", "r", "b")),
        (("a", "r", "b"), Triple("a", "r", "b")),
        ({"head": "a", "relation": "r", "tail": "b", "extra": 1}, Triple("a", "r", "b")),
        (Triple("x", "y", "z"), Triple("x", "y", "z")),
        # empty parts are strings: accepted here, dropped later by normalisation
        (["", "r", "b"], Triple("", "r", "b")),
    ],
)
def test_triple_from_any_accepts(value, expected):
    assert Triple.from_any(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (["a", "r"], "3 parts"),
        (["a", "r", "b", "c"], "3 parts"),
        ([], "3 parts"),
        (["a", 1, "b"], "must be a string"),
        ([None, "r", "b"], "must be a string"),
        ([b"a", "r", "b"], "must be a string"),
        ([["a"], "r", "b"], "must be a string"),
        ("abc", "list of 3 strings"),  # a string of length 3 is not a triple
        (b"abc", "list of 3 strings"),
        (42, "list of 3 strings"),
        (None, "list of 3 strings"),
        ({"a", "r", "b"}, "list of 3 strings"),  # a set has no order
        ({"head": "a", "relation": "r"}, "needs keys head, relation, tail"),
    ],
)
def test_triple_from_any_rejects(value, message):
    with pytest.raises(TripleError, match=message):
        Triple.from_any(value)


def test_triple_error_is_a_value_error_and_an_s3kg_error():
    with pytest.raises(ValueError):
        Triple.from_any(["only", "two"])
    with pytest.raises(S3KGError):
        Triple.from_any(["only", "two"])


def test_triple_sentence_and_list():
    t = Triple("Marie Curie", "discovered", "radium")
    assert t.sentence() == "Marie Curie discovered radium"
    assert t.to_list() == ["Marie Curie", "discovered", "radium"]
    assert Triple.from_any(t.to_list()) == t


def test_triple_is_frozen_and_hashable():
    t = Triple("a", "r", "b")
    with pytest.raises(AttributeError):
        t.head = "c"  # type: ignore[misc]
    assert len({t, Triple("a", "r", "b"), Triple("b", "r", "a")}) == 2


# -- KnowledgeGraph --------------------------------------------------------------------------------


def test_kg_entities_and_relations_in_order_of_first_appearance():
    kg = KnowledgeGraph.from_triples(
        [["b", "likes", "a"], ["a", "knows", "c"], ["c", "likes", "b"], ["d", "knows", "d"]]
    )
    assert len(kg) == 4
    assert kg.entities() == ["b", "a", "c", "d"]
    assert kg.relations() == ["likes", "knows"]
    assert [t.head for t in kg] == ["b", "a", "c", "d"]


def test_kg_round_trips_through_json():
    kg = KnowledgeGraph.from_triples([("He", "preached_in", "Otisville"), ["x", "y", "z"]])
    data = json.loads(json.dumps(kg.to_dict()))
    assert data == {"triples": [["He", "preached_in", "Otisville"], ["x", "y", "z"]]}
    assert KnowledgeGraph.from_dict(data) == kg


@pytest.mark.parametrize("data", [{}, {"triples": []}])
def test_kg_from_dict_without_triples_is_empty(data):
    kg = KnowledgeGraph.from_dict(data)
    assert len(kg) == 0
    assert kg.entities() == []
    assert kg.relations() == []


def test_kg_from_triples_validates_every_item():
    with pytest.raises(TripleError, match="3 parts"):
        KnowledgeGraph.from_triples([["a", "r", "b"], ["a", "r"]])


def test_sources_is_defined_once() -> None:
    """The store, the extractors and the explorer share kg.SOURCES (they each had a copy)."""
    from dashboard import explorer
    from s3kg_core import kg
    from s3kg_core.extract import base
    from s3kg_core.store import records

    assert kg.SOURCES == ("gold", "answer", "context")
    assert records.SOURCES is kg.SOURCES
    assert base.SOURCES is kg.SOURCES
    assert explorer.SOURCES is kg.SOURCES
