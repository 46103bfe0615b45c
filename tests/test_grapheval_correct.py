"""s3kg_core.grapheval.correct: GraphCorrect and the direct baseline, scripted local server."""

from __future__ import annotations

import pytest
from fake_openai import fake_openai
from grapheval_helpers import CONTEXT, scripted_llm
from test_grapheval_detect import ListExtractor, YearChecker

from s3kg_core.errors import LLMResponseError
from s3kg_core.grapheval.correct import (
    Correction,
    GraphCorrect,
    parse_answer_reply,
    parse_triple_reply,
    rouge_scores,
    summarise_corrections,
)
from s3kg_core.grapheval.detect import GraphEval
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache


def _gc(url: str) -> GraphCorrect:
    client = LLMClient(
        LLMSettings(model="toy", base_url=url, timeout=2.0, max_retries=0), cache=MemoryCache()
    )
    return GraphCorrect(client, GraphEval(YearChecker(), ListExtractor()))


ANSWERS = [
    "Eiffel Tower|opened in|1899 ; Eiffel Tower|is in|Paris",  # one flagged triple, fixable
    "Eiffel Tower|is in|Paris",  # nothing flagged: no call
    "Eiffel Tower|opened in|1899 SERVERERROR",  # the first prompt fails with HTTP 500
]


def test_graphcorrect_fixes_flagged_triples_and_records_failures():
    with fake_openai(scripted_llm) as server:
        out = _gc(server.base_url).correct_many(ANSWERS, [CONTEXT] * 3)
        assert server.count("Corrected triple (JSON)") == 2 and server.count("Edited text") == 1
    fixed, untouched, failed = out
    assert fixed.corrected == "Eiffel Tower|opened in|1889 ; Eiffel Tower|is in|Paris"
    assert fixed.fixes[0].applied and fixed.fixes[0].corrected.tail == "1889"
    assert fixed.believed_corrected is True and fixed.after.inconsistent is False
    assert 0.5 < fixed.rouge["rouge1"] < 1.0
    assert untouched.corrected == ANSWERS[1] and untouched.after is None
    assert untouched.believed_corrected is None
    assert failed.corrected == ANSWERS[2] and "HTTP 500" in failed.fixes[0].error
    assert failed.error == "no flagged triple could be corrected"
    assert failed.believed_corrected is False
    assert Correction.from_dict(fixed.to_dict()).to_dict() == fixed.to_dict()
    summary = summarise_corrections(out)
    assert summary["flagged_answers"] == 2 and summary["believed_corrected"] == 1
    assert summary["believed_corrected_share"] == 0.5 and summary["failed"] == 1
    assert summary["flagged_triples_before"] == 2 and summary["flagged_triples_after"] == 1


def test_unparseable_corrected_triple_is_recorded():
    with fake_openai(scripted_llm) as server:
        [c] = _gc(server.base_url).correct_many(
            ["Eiffel Tower|opened in|1899"], [CONTEXT + " BADTRIPLE"]
        )
    assert c.fixes[0].error.startswith("unparseable triple") and not c.fixes[0].applied


def test_direct_baseline():
    with fake_openai(scripted_llm) as server:
        out = _gc(server.base_url).direct_many(ANSWERS, [CONTEXT] * 3)
        assert server.count("Corrected text") == 2
    assert out[0].method == "direct" and out[0].believed_corrected is True
    assert "HTTP 500" in out[2].error and out[2].corrected == ANSWERS[2]


def test_parsers_and_rouge():
    assert parse_triple_reply("{'triple': ['a', 'b', 'c'],}").to_list() == ["a", "b", "c"]
    assert parse_triple_reply('["a", "b", "c"]').tail == "c"
    # what SmolLM2 returned: a bare subject/relation/object object, cut off after more keys
    bare = '{"subject": "a", "relation": "b", "object": "c", "context": {"k": "v"}, "more": "x'
    assert parse_triple_reply(bare).to_list() == ["a", "b", "c"]
    with pytest.raises(LLMResponseError):
        parse_triple_reply('{"triple": ["a", "b"]}')
    with pytest.raises(LLMResponseError):
        parse_answer_reply('{"answer": ""}')
    assert rouge_scores("same text", "same text") == {"rouge1": 1.0, "rouge2": 1.0, "rougeL": 1.0}


def test_the_corrected_triple_prompt_asks_for_few_tokens():
    # Regression: every prompt allowed 1,024 completion tokens, and SmolLM2 filled them with
    # runaway JSON (minutes per call on a CPU); a triple needs far fewer.
    from fake_openai import last_user_message

    from s3kg_core.grapheval.correct import TRIPLE_MAX_TOKENS

    with fake_openai(scripted_llm) as server:
        _gc(server.base_url).correct_many(ANSWERS[:1], [CONTEXT])
        asked = {
            ("triple" if "Corrected triple (JSON)" in last_user_message(b) else "edit"): b.get(
                "max_tokens", b.get("max_completion_tokens")
            )
            for _, b in server.requests
        }
    assert asked == {"triple": TRIPLE_MAX_TOKENS, "edit": 1024}
