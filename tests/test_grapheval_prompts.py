"""Tests of s3kg_core.grapheval.prompts: the checker's and GraphCorrect's prompts and versions."""

from __future__ import annotations

import json
import re

from s3kg_core.extract.parse import repair_json
from s3kg_core.grapheval.prompts import (
    CHECK_PROMPT_VERSION,
    CORRECT_TRIPLE_PROMPT_VERSION,
    DIRECT_CORRECT_PROMPT_VERSION,
    REPLACE_PROMPT_VERSION,
    check_messages,
    correct_triple_messages,
    direct_correct_messages,
    replace_messages,
)
from s3kg_core.kg import Triple

WRONG = Triple("Marie Curie", "born in", "Paris")
RIGHT = Triple("Marie Curie", "born in", "Warsaw")


def _json_after(user: str, label: str) -> object:
    """The JSON value on the line that starts with ``label`` in a user prompt."""
    line = next(line for line in user.splitlines() if line.startswith(label))
    return json.loads(line[len(label) :])


def test_versions_are_distinct_and_name_their_prompt():
    versions = [
        CHECK_PROMPT_VERSION,
        CORRECT_TRIPLE_PROMPT_VERSION,
        REPLACE_PROMPT_VERSION,
        DIRECT_CORRECT_PROMPT_VERSION,
    ]
    assert len(set(versions)) == 4
    assert all(re.fullmatch(r"[a-z]+-[a-z]+-v\d+", v) for v in versions)


def test_check_messages_number_every_claim_from_one_in_order():
    claims = ["Paris is in France", "Paris is in Spain", "Lyon is in France"]
    msgs = check_messages("Paris and Lyon are in France.", claims)
    assert [role for role, _ in msgs] == ["system", "user"]
    user = msgs[1][1]
    assert user.startswith("Context:\nParis and Lyon are in France.\n")
    listed = re.findall(r"^(\d+)\. (.*)$", user, flags=re.M)
    assert listed == [("1", claims[0]), ("2", claims[1]), ("3", claims[2])]
    assert user.endswith("Verdicts (JSON):")
    assert '"verdicts"' in msgs[0][1] and '"supported"' in msgs[0][1]


def test_check_messages_system_prompt_is_shared_and_user_prompt_varies():
    a = check_messages("ctx A", ["x"])
    b = check_messages("ctx B", ["y", "z"])
    assert a[0] == b[0]
    assert a[1] != b[1]
    assert "ctx A" in a[1][1] and "ctx A" not in b[1][1]


def test_check_messages_with_no_claims_lists_none():
    user = check_messages("ctx", [])[1][1]
    assert not re.search(r"^\d+\. ", user, flags=re.M)


def test_correct_triple_messages_carry_the_triple_as_json_unescaped():
    triple = Triple("Zoë", "lives in", 'the "Côte"')
    msgs = correct_triple_messages("Zoë lives in Nice.", triple)
    user = msgs[1][1]
    assert "Context:\nZoë lives in Nice." in user
    assert _json_after(user, "Triple: ") == ["Zoë", "lives in", 'the "Côte"']
    assert "Zoë" in user.split("Triple: ")[1]  # ensure_ascii=False: no \u escapes
    assert user.endswith("Corrected triple (JSON):")


def test_replace_messages_carry_both_triples_and_the_answer():
    msgs = replace_messages("She was born in Paris.", WRONG, RIGHT)
    assert [role for role, _ in msgs] == ["system", "user"]
    user = msgs[1][1]
    assert user.startswith("Text:\nShe was born in Paris.\n")
    assert _json_after(user, "Incorrect triple: ") == WRONG.to_list()
    assert _json_after(user, "Corrected triple: ") == RIGHT.to_list()
    assert user.endswith("Edited text (JSON):")


def test_direct_correct_messages_put_context_before_the_text():
    msgs = direct_correct_messages("She was born in Paris.", "Curie was born in Warsaw.")
    user = msgs[1][1]
    assert user.index("Curie was born in Warsaw.") < user.index("She was born in Paris.")
    assert user.endswith("Corrected text (JSON):")


def test_the_reply_formats_the_system_prompts_show_parse():
    # The parser GraphEval uses must accept the exact reply shape each prompt asks for.
    for msgs, key in [
        (correct_triple_messages("c", WRONG), "triple"),
        (replace_messages("a", WRONG, RIGHT), "answer"),
        (direct_correct_messages("a", "c"), "answer"),
    ]:
        example = msgs[0][1][msgs[0][1].rindex("{") :]
        value, _ = repair_json(example)
        assert isinstance(value, dict) and key in value


def test_all_four_prompts_have_different_system_prompts():
    systems = {
        check_messages("c", ["x"])[0][1],
        correct_triple_messages("c", WRONG)[0][1],
        replace_messages("a", WRONG, RIGHT)[0][1],
        direct_correct_messages("a", "c")[0][1],
    }
    assert len(systems) == 4
