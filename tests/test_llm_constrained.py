"""s3kg_core.llm.constrained: OpenAI's response_format read, and lm-format-enforcer's constraint
applied to a real (tiny, character-level) model's generation."""

from __future__ import annotations

import json

import jsonschema
import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.llm.constrained import (
    MAX_SCHEMA_CHARS,
    JsonSchemaLogitsProcessor,
    parse_response_format,
)

OBJECT = {"type": "object", "properties": {"a": {"type": "string", "maxLength": 4}}}


@pytest.mark.parametrize(
    ("response_format", "schema"),
    [
        (None, None),
        ({"type": "text"}, None),
        ({"type": "json_object"}, {"type": "object"}),
        ({"type": "json_schema", "json_schema": {"name": "x", "schema": OBJECT}}, OBJECT),
        ({"type": "json_schema", "json_schema": {"name": "x"}}, {"type": "object"}),
    ],
)
def test_the_three_openai_forms(response_format, schema):
    assert parse_response_format(response_format) == schema


@pytest.mark.parametrize(
    ("response_format", "message"),
    [
        ("json", "must be an object"),
        ({"type": "yaml"}, "'text', 'json_object' or 'json_schema'; got 'yaml'"),
        ({"type": "json_schema", "json_schema": {"schema": [1]}}, "a JSON schema object"),
        (
            {"type": "json_schema", "json_schema": {"schema": {"enum": ["x" * MAX_SCHEMA_CHARS]}}},
            "larger than",
        ),
    ],
)
def test_what_is_not_a_response_format_is_a_config_error(response_format, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_response_format(response_format)


def test_generation_held_to_a_schema_parses_and_validates(char_model):
    """A random model, sampled, still writes JSON valid under the schema (seeded, 5 draws)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LogitsProcessorList

    folder = char_model
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    schema = {
        "type": "object",
        "properties": {
            "graph": {
                "type": "array",
                "items": {
                    "type": "array",
                    "items": {"type": "string", "minLength": 1, "maxLength": 5},
                    "minItems": 3,
                    "maxItems": 3,
                },
                "minItems": 1,
                "maxItems": 2,
            }
        },
        "required": ["graph"],
        "additionalProperties": False,
    }
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": "x"}], add_generation_prompt=True, return_tensors="pt",
        return_dict=True,
    )["input_ids"]  # fmt: skip
    for seed in range(5):
        torch.manual_seed(seed)
        out = model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=200,
            do_sample=True,
            logits_processor=LogitsProcessorList([JsonSchemaLogitsProcessor(tokenizer, schema)]),
            pad_token_id=tokenizer.pad_token_id,
        )
        new = out[0, ids.shape[1] :].tolist()
        assert new[-1] == tokenizer.eos_token_id  # it ended by itself, the JSON complete
        jsonschema.validate(json.loads(tokenizer.decode(new, skip_special_tokens=True)), schema)


# -- schemas the decoder cannot follow are named before the work (issue 59, item 7) --------------


def nested_arrays(levels: int) -> dict:
    """A schema of ``levels`` arrays, one inside the other, of strings."""
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    return schema


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"$ref": "#"}, "schema.$ref must name a schema under $defs or definitions"),
        ({"type": "bogus"}, 'schema.type must be one of array, boolean, integer, null, number, '
         'object, string (or a non-empty list of them); got "bogus"'),
        ({"enum": []}, "schema.enum must be a non-empty list; got []"),
        ({"not": {}}, "schema: 'not' is not supported by this server's decoder"),
        ({"type": 5}, "schema.type must be one of"),
        ({"type": "object", "properties": [1, 2]},
         "schema.properties must be an object of schemas; got [1, 2]"),
        (nested_arrays(300), "schema is nested more than 32 schemas deep"),
        ({"type": "object", "properties": {"a": {"enum": []}}},
         "schema.properties.a.enum must be a non-empty list"),
        ({"type": "object", "properties": {"a": {}}},
         "schema.properties.a must say what its value is"),
        ({"type": "object", "properties": {"a": True}}, "schema.properties.a must be a schema"),
        ({"type": "array", "items": [{"type": "string"}]}, "schema.items must be a schema"),
        ({"anyOf": []}, "schema.anyOf must be a non-empty list of schemas"),
        ({"type": ["string", "bogus"]}, "schema.type must be one of"),
        ({"type": "string", "minLength": 5, "maxLength": 2},
         "schema.minLength (5) is above maxLength (2): nothing fits"),
        ({"type": "array", "items": {"type": "string"}, "maxItems": -1},
         "schema.maxItems must be a whole number from 0"),
        ({"type": "object", "properties": {"x": {"$ref": "#/$defs/zz"}}},
         "schema.properties.x.$ref must name a schema under $defs"),
    ],
)  # fmt: skip
def test_a_schema_the_decoder_cannot_follow_is_named(schema, message):
    """Regression: each of these reached lm-format-enforcer, which failed with its own error
    (pydantic's, ``Unsupported type None``, a ``RecursionError``): a 500 from the server."""
    with pytest.raises(ConfigError) as info:
        parse_response_format({"type": "json_schema", "json_schema": {"schema": schema}})
    assert message in str(info.value)
    assert str(info.value).startswith("response_format.json_schema.schema")


@pytest.mark.parametrize(
    "schema",
    [
        {},
        nested_arrays(30),
        {"type": ["string", "null"]},
        {"$defs": {"a": {"type": "string"}}, "type": "object",
         "properties": {"x": {"$ref": "#/$defs/a"}}, "additionalProperties": False},
        {"anyOf": [{"type": "string"}, {"const": 3}]},
    ],
)  # fmt: skip
def test_schemas_the_decoder_follows_pass(schema):
    assert (
        parse_response_format({"type": "json_schema", "json_schema": {"schema": schema}}) == schema
    )


def test_the_extraction_schemas_pass():
    from s3kg_core.extract.schemas import joint_schema, single_schema
    from s3kg_core.llm.constrained import schema_problem

    for max_tokens in (None, 10, 2000):
        assert schema_problem(single_schema(max_tokens)) is None
        assert schema_problem(joint_schema(max_tokens, ("gold", "answer", "context"))) is None
