"""The LLM response cache kept in the DuckDB store.

Examples
--------
>>> import tempfile, os
>>> from s3kg_core.llm.client import ChatRequest, ChatResult, LLMSettings
>>> from s3kg_core.store.store import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "c.duckdb"))
>>> cache = StoreCache(store, LLMSettings(model="m", base_url="http://127.0.0.1:9/v1"))
>>> req = ChatRequest.build([("user", "hi")], prompt_version="v1")
>>> key = req.cache_key(cache.settings)
>>> cache.put_many([(key, req, ChatResult("ok", text="hello"))])
>>> cache.get_many([key])[key].text
'hello'
"""

from __future__ import annotations

from collections.abc import Sequence

from ..store.store import Store
from .client import ChatRequest, ChatResult, LLMSettings

__all__ = ["StoreCache"]


class StoreCache:
    """A :class:`~s3kg_core.llm.client.ResponseCache` in the store's ``llm_cache`` table.

    Each call is one short transaction, so the database is never held while requests are in
    flight. ``settings`` supplies the endpoint and model recorded beside each response (never
    the key).
    """

    def __init__(self, store: Store, settings: LLMSettings) -> None:
        self.store = store
        self.settings = settings

    def get_many(self, keys: Sequence[str]) -> dict[str, ChatResult]:
        """The cached results of those keys that have one."""
        with self.store.connect() as con:
            found = Store.get_llm_responses(con, keys)
        return {k: ChatResult.from_json(v) for k, v in found.items()}

    def put_many(self, entries: Sequence[tuple[str, ChatRequest, ChatResult]]) -> None:
        """Keep these results, replacing what their keys held."""
        rows = [
            (
                key,
                self.settings.endpoint,
                self.settings.model,
                request.prompt_version,
                float(request.temperature),
                request.seed,
                request.input_hash(),
                result.to_json(),
            )
            for key, request, result in entries
        ]
        with self.store.transaction() as con:
            Store.put_llm_responses(con, rows)
