"""The DuckDB-backed LLM response cache (s3kg_core.llm.cache)."""

from __future__ import annotations

import duckdb

from s3kg_core.llm.cache import StoreCache
from s3kg_core.llm.client import ChatRequest, ChatResult, LLMSettings
from s3kg_core.store.store import Store


def test_responses_survive_reopening_and_never_store_the_key(tmp_path):
    path = tmp_path / "cache.duckdb"
    settings = LLMSettings(model="m", base_url="http://127.0.0.1:9/v1", api_key="sk-TOPSECRET")
    req = ChatRequest.build([("user", "hello")], prompt_version="v1", temperature=0.3, seed=4)
    key = req.cache_key(settings)
    StoreCache(Store(path), settings).put_many(
        [(key, req, ChatResult("ok", text="hi", prompt_tokens=2, completion_tokens=1))]
    )
    got = StoreCache(Store(path), settings).get_many([key, "missing"])
    assert list(got) == [key]
    assert got[key].text == "hi" and got[key].cached and got[key].prompt_tokens == 2
    con = duckdb.connect(str(path), read_only=True)
    row = con.execute(
        "SELECT endpoint, model, prompt_version, temperature, seed FROM llm_cache"
    ).fetchall()
    con.close()
    assert row == [("http://127.0.0.1:9/v1", "m", "v1", 0.3, 4)]
    assert b"TOPSECRET" not in path.read_bytes()


def test_empty_lookups_and_puts_are_no_ops(tmp_path):
    cache = StoreCache(
        Store(tmp_path / "c.duckdb"), LLMSettings(model="m", base_url="http://h:1/v1")
    )
    assert cache.get_many([]) == {}
    cache.put_many([])
