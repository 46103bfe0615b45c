"""s3kg_core.extract.schemas: the extraction replies' schemas, sized to the token budget."""

from __future__ import annotations

import json

import jsonschema
import pytest

from s3kg_core.extract.parse import parse_kg_json
from s3kg_core.extract.prompts import JOINT_KEYS, SINGLE_KEY
from s3kg_core.extract.schemas import (
    LABEL_MAX_CHARS,
    MAX_TRIPLES,
    TOKENS_PER_TRIPLE,
    joint_schema,
    schema_text,
    single_schema,
)

ALL = ("gold", "answer", "context")


@pytest.mark.parametrize(
    ("max_tokens", "per_graph"), [(64, 1), (384, 3), (1024, 11), (2048, 20), (None, 20)]
)
def test_triples_per_graph_fit_the_budget(max_tokens, per_graph):
    schema = joint_schema(max_tokens, ALL)
    assert {g["maxItems"] for g in schema["properties"].values()} == {per_graph}
    if max_tokens is not None and per_graph > 1:  # the whole reply fits, by the estimate
        assert 3 * per_graph * TOKENS_PER_TRIPLE + 32 <= max_tokens
    assert per_graph <= MAX_TRIPLES


def test_a_missing_text_has_an_empty_graph_and_a_given_one_at_least_one_triple():
    schema = joint_schema(384, ["answer"])
    graphs = schema["properties"]
    assert graphs["knowledge_graph1"]["maxItems"] == 0 == graphs["knowledge_graph3"]["maxItems"]
    assert graphs["knowledge_graph2"]["minItems"] == 1
    assert graphs["knowledge_graph2"]["maxItems"] == 11  # the budget of one graph
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: [] for k in JOINT_KEYS}, schema)


def test_what_the_schema_accepts_the_parser_reads_and_long_labels_are_refused():
    reply = {
        "knowledge_graph1": [["aspirin", "reduces", "fever"]],
        "knowledge_graph2": [["aspirin", "not cause", "stomach problems"]],
        "knowledge_graph3": [["aspirin", "is", "common drug"]],
    }
    jsonschema.validate(reply, joint_schema(384, ALL))
    parsed = parse_kg_json(json.dumps(reply), JOINT_KEYS)
    assert [len(parsed.graphs[k]) for k in JOINT_KEYS] == [1, 1, 1]
    long = {**reply, "knowledge_graph1": [["a" * (LABEL_MAX_CHARS + 1), "b", "c"]]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(long, joint_schema(384, ALL))
    jsonschema.Draft202012Validator.check_schema(single_schema(384))
    assert list(single_schema(384)["properties"]) == [SINGLE_KEY]


def test_schema_text_is_canonical():
    assert schema_text({"b": 1, "a": [2]}) == '{"a":[2],"b":1}'
    assert json.loads(schema_text(joint_schema(384, ALL))) == joint_schema(384, ALL)
