"""The LLM extractor (s3kg_core.extract.llm) against the scripted local OpenAI server."""

from __future__ import annotations

import json

import pytest
from fake_openai import Reply, fake_openai, last_user_message
from llm_helpers import toy_model

from s3kg_core.errors import ConfigError, EndpointError
from s3kg_core.extract import Extractor, ItemTexts
from s3kg_core.extract.llm import LLMExtractor
from s3kg_core.kg import Triple
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache


def _extractor(url: str, **kw) -> LLMExtractor:
    client = LLMClient(
        LLMSettings(model="toy", base_url=url, timeout=1.0, max_retries=1), cache=MemoryCache()
    )
    return LLMExtractor(client, **kw)


def test_joint_extraction_gives_three_consistent_graphs_in_one_call():
    with fake_openai(toy_model) as server:
        ex = _extractor(server.base_url)
        assert isinstance(ex, Extractor) and ex.name == "llm:toy:joint-kg-v1"
        [kgs] = ex.extract(
            [
                ItemTexts(
                    "Aspirin reduces fever.",
                    "Aspirin cures fever.",
                    "Aspirin reduces fever. Aspirin thins blood.",
                )
            ]
        )
        assert server.count() == 1
        body = server.requests[0][1]
        assert body["temperature"] == 0.0 and body["seed"] == 0
    assert kgs["gold"].triples == (Triple("Aspirin", "reduces", "fever"),)
    assert kgs["answer"].triples == (Triple("Aspirin", "cures", "fever"),)
    assert kgs["context"].triples == (
        Triple("Aspirin", "reduces", "fever"),
        Triple("Aspirin", "thins", "blood"),
    )
    assert all(kg.status == "ok" and not kg.truncated for kg in kgs.values())


def test_only_given_sources_come_back():
    with fake_openai(toy_model) as server:
        [kgs] = _extractor(server.base_url).extract([ItemTexts(answer="Sun heats earth.")])
    assert set(kgs) == {"answer"}


def test_broken_json_fails_the_item_with_its_reason_and_others_succeed():
    with fake_openai(toy_model) as server:
        out = _extractor(server.base_url).extract(
            [
                ItemTexts("BROKENJSON gold.", "a b c.", "d e f."),
                ItemTexts("FENCEDJSON gold here.", "Sun heats earth.", "x y z."),
                ItemTexts("Sun heats earth.", "SERVERERROR now.", "x y z."),
            ]
        )
    broken, fenced, errored = out
    assert all(
        kg.status.startswith("failed: the model's output is not JSON") for kg in broken.values()
    )
    assert all(kg.status in ("ok", "empty") for kg in fenced.values())
    assert fenced["answer"].triples == (Triple("Sun", "heats", "earth"),)
    assert all(kg.status == "failed: HTTP 500: scripted 500" for kg in errored.values())


def test_refusals_and_empty_answers_fail_with_the_reason():
    with fake_openai(toy_model) as server:
        refused, silent = _extractor(server.base_url).extract(
            [ItemTexts("REFUSE this.", "a", "b"), ItemTexts("SILENT.", "a", "b")]
        )
    assert refused["gold"].status == "failed: refused (I will not answer that.)"
    assert silent["gold"].status == "failed: empty response"


def test_long_texts_are_cut_and_flagged():
    long = "Sun heats earth. " + "filler " * 400
    with fake_openai(toy_model) as server:
        [kgs] = _extractor(server.base_url, max_input_chars=200).extract(
            [ItemTexts("Sun heats earth.", "Sun heats earth.", long)]
        )
        sent = server.requests[0][1]["messages"][-1]["content"]
    assert kgs["context"].truncated and not kgs["gold"].truncated
    assert len(sent) < 600


def test_single_prompt_extracts_each_text_alone_and_skips_blank_ones():
    with fake_openai(toy_model) as server:
        ex = _extractor(server.base_url, prompt="single")
        assert ex.name == "llm:toy:single-kg-v1"
        [kgs] = ex.extract([ItemTexts("Sun heats earth.", "   ", "BROKENJSON text here.")])
        assert server.count() == 2  # the blank answer was not sent
    assert kgs["gold"].triples == (Triple("Sun", "heats", "earth"),)
    assert kgs["answer"].status == "empty"
    assert kgs["context"].status.startswith("failed: the model's output is not JSON")


def test_rerun_is_served_from_the_cache():
    with fake_openai(toy_model) as server:
        ex = _extractor(server.base_url)
        items = [ItemTexts("Sun heats earth.", "a b c.", "d e f.")]
        first = ex.extract(items)
        assert ex.extract(items) == first
        assert server.count() == 1


@pytest.mark.parametrize("prompt", ["joint", "single"])
def test_an_unparseable_reply_is_asked_again_not_parsed_again_from_the_cache_d5(prompt):
    """Issue 17 (D5): an extraction reply beyond repair was cached as a success; every rerun
    parsed the same reply again and failed again without asking the model."""

    def flaky(body, n):
        if n == 1 and "FLAKY" in last_user_message(body):
            return Reply(text="Sure! knowledge_graph1 = a -> b")
        return toy_model(body, n)

    with fake_openai(flaky) as server:
        ex = _extractor(server.base_url, prompt=prompt)
        items = [ItemTexts("FLAKY sun heats earth.", "Sun heats earth.", "Earth orbits sun.")]
        [first] = ex.extract(items)
        assert first["gold"].status.startswith("failed: ")
        sent = server.count()
        [again] = ex.extract(items)
        assert server.count("FLAKY") > 0 and server.count() > sent
    assert again["gold"].status == "ok"
    assert again["gold"].triples == (Triple("FLAKY", "sun", "heats earth"),)


def test_endpoint_down_raises_endpoint_error():
    with fake_openai(toy_model) as server:
        url = server.base_url
    with pytest.raises(EndpointError):
        _extractor(url).extract([ItemTexts("a", "b", "c")])


def test_bad_options_are_config_errors():
    with pytest.raises(ConfigError, match="prompt"):
        _extractor("http://127.0.0.1:9/v1", prompt="triple")
    with pytest.raises(ConfigError, match="max_input_chars"):
        _extractor("http://127.0.0.1:9/v1", max_input_chars=5)


def test_a_reply_cut_at_the_token_limit_says_so_in_its_status():
    """Issue 29: SmolLM2's joint extraction runs past --max-tokens and stops mid-JSON; the
    per-KG status says that, not only the JSON error."""
    cut = '{"knowledge_graph1": [["aspirin", "reduces", "fever"], ["aspirin", "rel'
    with fake_openai(lambda body, n: Reply(text=cut, finish_reason="length")) as server:
        settings = LLMSettings(model="m", base_url=server.base_url, max_retries=0)
        extractor = LLMExtractor(LLMClient(settings), max_tokens=64)
        [kgs] = extractor.extract([ItemTexts("Aspirin reduces fever.", "It does.", "Aspirin.")])
    assert {kg.status.split(":")[0] for kg in kgs.values()} == {"failed"}
    assert "stopped at the token limit (64; raise --max-tokens)" in kgs["gold"].status
    assert "not JSON" in kgs["gold"].status


# -- the reply's JSON schema as response_format (issue 43 item 1) -------------------------------


def _schema_of(body: dict) -> dict:
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    return fmt["json_schema"]["schema"]


def test_the_joint_request_asks_for_its_reply_schema_sized_to_max_tokens():
    """Issue 43: SmolLM2 behind `s3kg llm serve` never closed free-form JSON within 384 tokens;
    the extractor now asks for the schema of its reply (bounded labels and triples), which a
    constraining endpoint holds the output to. On main no response_format was sent."""
    import jsonschema

    with fake_openai(toy_model) as server:
        [kgs] = _extractor(server.base_url, max_tokens=384).extract(
            [ItemTexts(answer="Aspirin reduces fever.", context="Aspirin reduces fever.")]
        )
        [(_, body)] = server.requests
    schema = _schema_of(body)
    graphs = schema["properties"]
    assert schema["required"] == ["knowledge_graph1", "knowledge_graph2", "knowledge_graph3"]
    assert graphs["knowledge_graph1"]["maxItems"] == 0  # no reference text: an empty graph
    assert graphs["knowledge_graph2"]["minItems"] == 1 and graphs["knowledge_graph2"]["maxItems"]
    jsonschema.validate({"knowledge_graph1": [], "knowledge_graph2": [["a", "b", "c"]],
                         "knowledge_graph3": [["a", "b", "c"]]}, schema)  # fmt: skip
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"knowledge_graph1": [["a", "b"]]}, schema)
    assert kgs["answer"].triples == (Triple("Aspirin", "reduces", "fever"),)


def test_the_single_prompt_asks_for_its_schema_too():
    with fake_openai(toy_model) as server:
        _extractor(server.base_url, prompt="single").extract_texts(["Sun heats earth."])
        [(_, body)] = server.requests
    assert list(_schema_of(body)["properties"]) == ["knowledge_graph"]


def _refuses_response_format(body: dict, n: int) -> Reply:
    if "response_format" in body:
        error = {"error": {"message": "Unsupported parameter: 'response_format'", "type": "x"}}
        return Reply(status=400, raw=json.dumps(error).encode())
    return toy_model(body, n)


def test_an_endpoint_that_rejects_response_format_is_asked_again_without_it_once_per_run():
    """Issue 43: an endpoint that answers 400 to response_format gets the request again at
    once without it, and no response_format for the rest of the run."""
    items = [
        ItemTexts("Sun heats earth.", "Aspirin reduces fever.", "Curie won prizes."),
        ItemTexts("Earth orbits sun.", "Sun heats earth.", "Aspirin thins blood."),
    ]
    with fake_openai(_refuses_response_format, workers=1) as server:
        settings = LLMSettings(model="toy", base_url=server.base_url, timeout=1.0, concurrency=1)
        ex = LLMExtractor(LLMClient(settings, cache=MemoryCache()))
        out = ex.extract(items)
        sent = [("response_format" in body) for _, body in server.requests]
    assert sent == [True, False, False]  # refused once, then never sent again
    assert ex.client.schema_refused
    assert [kgs["answer"].triples[0].relation for kgs in out] == ["reduces", "heats"]
    assert all(kg.status == "ok" for kgs in out for kg in kgs.values())


def test_an_endpoint_that_ignores_response_format_is_parsed_as_before():
    """The fault server ignores response_format (as transformers serve does): free text that
    parses still gives the KGs, text that does not is `failed:` with its reason."""
    with fake_openai(toy_model) as server:
        out = _extractor(server.base_url).extract(
            [
                ItemTexts("Sun heats earth.", "a b c.", "x y z."),
                ItemTexts("BROKENJSON x.", "a.", "b."),
            ]
        )
    assert out[0]["gold"].triples == (Triple("Sun", "heats", "earth"),)
    assert out[1]["gold"].status.startswith("failed: ")


def test_another_400_is_not_taken_for_a_refused_schema():
    def script(body: dict, n: int) -> Reply:
        error = {"error": {"message": "messages: too long", "type": "x"}}
        return Reply(status=400, raw=json.dumps(error).encode())

    with fake_openai(script) as server:
        ex = _extractor(server.base_url)
        [kgs] = ex.extract([ItemTexts(answer="Sun heats earth.")])
        assert server.count() == 1
    assert not ex.client.schema_refused
    assert kgs["answer"].status.startswith("failed: HTTP 400")
