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
