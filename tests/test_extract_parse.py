"""Strict KG JSON parsing with bounded repair (s3kg_core.extract.parse)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3kg_core.errors import LLMResponseError
from s3kg_core.extract.parse import parse_kg_json, parse_triples, repair_json
from s3kg_core.kg import Triple

KEYS = ["knowledge_graph1", "knowledge_graph2", "knowledge_graph3"]


def test_valid_json_needs_no_repair():
    text = json.dumps({"knowledge_graph1": [["a", "r", "b"]], "knowledge_graph2": []})
    out = parse_kg_json(text, KEYS)
    assert out.repairs == ()
    assert out.graphs == {
        "knowledge_graph1": [Triple("a", "r", "b")],
        "knowledge_graph2": [],
        "knowledge_graph3": [],  # a missing key is an empty graph
    }


@pytest.mark.parametrize(
    ("text", "repairs"),
    [
        ('```json\n{"knowledge_graph1": [["a", "r", "b"]]}\n```', ("fences",)),
        ('Here you go:\n{"knowledge_graph1": [["a", "r", "b"]]}\nHope it helps!', ("fences",)),
        ('{"knowledge_graph1": [["a", "r", "b"],],}', ("trailing_commas",)),
        ("{'knowledge_graph1': [['a', 'r', 'b']]}", ("single_quotes",)),
        (
            "```\n{'knowledge_graph1': [['a', 'r', 'b'],]}\n```",
            ("fences", "trailing_commas", "single_quotes"),
        ),
    ],
)
def test_each_repair_is_applied_and_named(text, repairs):
    out = parse_kg_json(text, KEYS)
    assert out.graphs["knowledge_graph1"] == [Triple("a", "r", "b")]
    assert out.repairs == repairs


def test_apostrophes_inside_single_quoted_strings_survive():
    out = parse_kg_json("{'knowledge_graph1': [['Renzo's team', 'won', 'the cup']]}", KEYS)
    assert out.graphs["knowledge_graph1"] == [Triple("Renzo's team", "won", "the cup")]


def test_double_quotes_inside_single_quoted_strings_are_escaped():
    out = parse_kg_json("{'knowledge_graph1': [['the \"Big\" apple', 'is', 'a city']]}", KEYS)
    assert out.graphs["knowledge_graph1"][0].head == 'the "Big" apple'


@pytest.mark.parametrize(
    "text",
    ["", "   ", "Sure! knowledge_graph1 = aspirin -> fever", "{not json", "[[1, 2"],
)
def test_irreparable_output_is_a_named_error_quoting_the_start(text):
    with pytest.raises(LLMResponseError) as info:
        parse_kg_json(text, KEYS)
    if text.strip():
        assert text.strip()[:10] in str(info.value)


def test_a_non_object_is_an_error_unless_one_key_is_expected():
    with pytest.raises(LLMResponseError, match="JSON object"):
        parse_kg_json('"just a string"', KEYS)
    out = parse_kg_json('[["a", "r", "b"]]', ["knowledge_graph"])
    assert out.graphs["knowledge_graph"] == [Triple("a", "r", "b")]


def test_wrong_arity_and_non_text_parts_are_dropped_and_counted():
    triples, dropped = parse_triples(
        [
            ["a", "r", "b"],
            ["a", "r"],
            ["a", "r", "b", "c"],
            ["a", None, "b"],
            ["a", "r", ["nested"]],
            ["a", "r", True],
            ["", "r", "b"],
            "a r b",
            {"subject": "x", "relation": "y", "object": "z"},
            ["n", "count", 3],
            ["a", "r", "b"],  # duplicate: removed, not counted as dropped
            ["  spaced   out ", "r", "b"],
        ]
    )
    assert triples == [
        Triple("a", "r", "b"),
        Triple("x", "y", "z"),
        Triple("n", "count", "3"),
        Triple("spaced out", "r", "b"),
    ]
    assert dropped == 7


def test_keys_are_matched_case_insensitively_and_a_non_list_graph_counts_as_dropped():
    out = parse_kg_json('{"Knowledge_Graph1": [["a","r","b"]], "knowledge_graph2": "none"}', KEYS)
    assert out.graphs["knowledge_graph1"] == [Triple("a", "r", "b")]
    assert out.graphs["knowledge_graph2"] == [] and out.dropped["knowledge_graph2"] == 1


def test_repair_json_never_evaluates_code():
    with pytest.raises(LLMResponseError):
        repair_json("__import__('os').system('echo pwned')")


@given(
    st.lists(st.tuples(st.text(min_size=1), st.text(min_size=1), st.text(min_size=1)), max_size=5)
)
def test_any_valid_json_graph_round_trips(parts):
    text = json.dumps({"knowledge_graph": [list(p) for p in parts]})
    out = parse_kg_json(text, ["knowledge_graph"])
    expected = {
        Triple(*(" ".join(x.split()) for x in p)) for p in parts if all(x.strip() for x in p)
    }
    assert set(out.graphs["knowledge_graph"]) == expected


# -- the truncated repair (opt-in) ----------------------------------------------------------------

# What SmolLM2-135M returned to the LLM checker: a prefix, then verdicts with invented keys until
# the token budget ran out mid-string.
_CUT_REPLY = (
    'JSON: {\n  "verdicts": [\n    {"id": 1, "supported": true, "confidence": 0.9, '
    '"note": "a } and a ] in a string"},\n    {"id": 2, "supported": false, "confidence": 0.7},'
    '\n    {"id": 3, "supported": true, "confidence_percent": "9'
)


def test_a_cut_off_reply_keeps_its_complete_entries_when_the_caller_allows_it():
    value, repairs = repair_json(_CUT_REPLY, truncated=True)
    assert [v["id"] for v in value["verdicts"]] == [1, 2]
    assert value["verdicts"][0]["note"] == "a } and a ] in a string"
    assert repairs[-1] == "truncated"


def test_the_truncated_repair_is_off_by_default_and_for_kg_extraction():
    """A cut-off KG would look complete (its missing graphs empty), so extraction fails and
    retries instead."""
    with pytest.raises(LLMResponseError):
        repair_json(_CUT_REPLY)
    cut = '{"knowledge_graph1": [["a", "r", "b"], ["c", "r", "d"]], "knowledge_graph2": [["e", "r'
    with pytest.raises(LLMResponseError):
        parse_kg_json(cut, KEYS)


@pytest.mark.parametrize("text", ['{"a": 1, "b": "cut', "[[1, 2", '{"a": [1, 2', "}{"])
def test_nothing_complete_to_keep_is_still_an_error(text):
    with pytest.raises(LLMResponseError):
        repair_json(text, truncated=True)


_SAFE_TEXT = st.text(alphabet='abc XYZ09"\\{}[],:', min_size=1, max_size=8)


@given(
    st.lists(st.lists(_SAFE_TEXT, min_size=1, max_size=3), min_size=1, max_size=6),
    st.integers(min_value=0, max_value=10_000),
)
def test_any_cut_of_a_list_reply_yields_a_prefix_of_its_entries(entries, at):
    """Whatever point a reply is cut at, the repair returns only entries exactly as the model
    wrote them, in order, or fails; a cut-off entry is never completed."""
    text = json.dumps({"entries": entries})
    cut = text[: at % (len(text) + 1)]
    try:
        value, _ = repair_json(cut, truncated=True)
    except LLMResponseError:
        return
    kept = value["entries"]
    assert kept == entries[: len(kept)]


def test_a_comma_and_bracket_inside_a_string_survive_the_trailing_comma_repair():
    """Regression (found by the property above): the trailing-comma repair was a regex that also
    removed ``,]`` inside strings."""
    value, repairs = repair_json('{"k": [["a", "x,]", "b"],]}')
    assert value == {"k": [["a", "x,]", "b"]]} and repairs == ("trailing_commas",)
