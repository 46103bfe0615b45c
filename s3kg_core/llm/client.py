"""The one place that talks to an OpenAI-compatible endpoint.

:class:`LLMSettings` says where (base URL, model, key: flags or ``OPENAI_BASE_URL``,
``OPENAI_API_KEY``, ``S3KG_MODEL``) and how hard to push (concurrency, requests per minute,
timeout, retries). :class:`LLMClient` sends chat completions through the ``openai`` package, whose
own retry loop already does what we want on 429, 5xx, connection errors and timeouts: bounded
retries, exponential backoff with jitter, and ``Retry-After`` honoured. On top of it this module
adds the concurrency and rate limits, a response cache (only usable replies are kept: never an
error, an empty or refused reply, or one the caller could not use), and a verdict per request
instead of an exception, so one bad answer never stops a run.

The API key is never stored, logged or put in a cache key; the endpoint in cache keys is the base
URL without user info or query.

Examples
--------
>>> s = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-secret")
>>> "sk-secret" in repr(s)
False
>>> s.endpoint
'http://127.0.0.1:9/v1'
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, EndpointError
from ..progress import Progress

__all__ = [
    "DEFAULT_BASE_URL",
    "ChatRequest",
    "ChatResult",
    "LLMClient",
    "LLMSettings",
    "MemoryCache",
    "RateLimiter",
    "ResponseCache",
    "endpoint_configured",
    "redact_url",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_ENV_BASE_URL = "OPENAI_BASE_URL"
_ENV_KEY = "OPENAI_API_KEY"
_ENV_MODEL = "S3KG_MODEL"


def redact_url(url: str) -> str:
    """A URL safe to print: user info (``user:KEY@``) masked, query and fragment dropped.

    Never raises, whatever the text: it is used in error messages about malformed URLs.

    Examples
    --------
    >>> redact_url("http://user:SECRET@127.0.0.1:8000/v1?key=SECRET#x")
    'http://***@127.0.0.1:8000/v1'
    >>> redact_url("http://user:SECRET@host:port/v1")
    'http://***@host:port/v1'
    >>> redact_url("not a url")
    'not a url'
    """
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "<a URL that cannot be read>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _clean_url(url: str) -> str:
    """The URL without user info, query or fragment, and without a trailing slash."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"the endpoint URL {redact_url(url)!r} is malformed: {exc}") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"the endpoint must be an http(s) URL; got {redact_url(url)!r}")
    host = parts.hostname + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def endpoint_configured(base_url: str | None = None, model: str | None = None) -> bool:
    """Whether flags or the environment name an endpoint and a model to call.

    Examples
    --------
    >>> endpoint_configured("http://localhost:8000/v1", "m")
    True
    """
    url = base_url or os.environ.get(_ENV_BASE_URL)
    name = model or os.environ.get(_ENV_MODEL)
    key = os.environ.get(_ENV_KEY)
    return bool(name) and bool(url or key)


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call an OpenAI-compatible endpoint.

    Parameters
    ----------
    base_url
        The endpoint, e.g. ``http://127.0.0.1:8000/v1``; ``None`` means OpenAI.
    model
        The model name the endpoint serves.
    api_key
        Never shown in ``repr`` and never stored; local servers accept any string.
    timeout
        Seconds for one request before it counts as a timeout (and is retried).
    max_retries
        Retries after the first attempt on 429, 5xx, timeouts and connection errors.
    concurrency
        Requests in flight at once.
    requests_per_minute
        Upper bound on the request rate (``None``: unlimited).
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 4
    concurrency: int = 4
    requests_per_minute: float | None = None

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError(f"no model given: pass --model or set {_ENV_MODEL}")
        if self.base_url is not None:
            object.__setattr__(self, "base_url", _clean_url(self.base_url))
        if self.timeout <= 0:
            raise ConfigError(f"timeout must be positive; got {self.timeout}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0; got {self.max_retries}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1; got {self.concurrency}")
        if self.requests_per_minute is not None and self.requests_per_minute <= 0:
            raise ConfigError(
                f"requests_per_minute must be positive; got {self.requests_per_minute}"
            )

    @classmethod
    def from_env(
        cls,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        **options: Any,
    ) -> LLMSettings:
        """Settings from explicit values, falling back to the environment.

        Raises
        ------
        ConfigError
            If no model is given, or no endpoint: neither a base URL nor an OpenAI key.
        """
        url = base_url or os.environ.get(_ENV_BASE_URL) or None
        key = api_key or os.environ.get(_ENV_KEY) or None
        name = model or os.environ.get(_ENV_MODEL) or ""
        if url is None and key is None:
            raise ConfigError(
                f"no LLM endpoint configured: pass --base-url (or set {_ENV_BASE_URL}) for a "
                f"local or hosted OpenAI-compatible server, or set {_ENV_KEY} for OpenAI"
            )
        return cls(model=name, base_url=url, api_key=key, **options)

    @property
    def endpoint(self) -> str:
        """The base URL as it enters cache keys (no credentials)."""
        return self.base_url or DEFAULT_BASE_URL


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make.

    ``prompt_version`` names the prompt template, so a changed prompt never reuses answers
    cached for the old one.
    """

    messages: tuple[tuple[str, str], ...]
    prompt_version: str
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    json_mode: bool = False

    @classmethod
    def build(
        cls, messages: Sequence[Mapping[str, str]] | Sequence[tuple[str, str]], **kwargs: Any
    ) -> ChatRequest:
        """A request from ``[{"role": .., "content": ..}]`` or ``[(role, content)]``."""
        pairs = tuple(
            (m["role"], m["content"]) if isinstance(m, Mapping) else (m[0], m[1]) for m in messages
        )
        return cls(messages=pairs, **kwargs)

    def input_hash(self) -> str:
        """A hash of everything the model sees besides temperature and seed."""
        body = json.dumps(
            {"messages": self.messages, "max_tokens": self.max_tokens, "json": self.json_mode},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(body.encode()).hexdigest()

    def cache_key(self, settings: LLMSettings) -> str:
        """The key of this request's response.

        It covers the endpoint, model, prompt version, temperature, seed and input hash.
        """
        parts = [
            settings.endpoint,
            settings.model,
            self.prompt_version,
            repr(float(self.temperature)),
            repr(self.seed),
            self.input_hash(),
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class ChatResult:
    """What came back for one request.

    ``status`` is ``ok``, ``empty`` (no text), ``refused`` (the endpoint says the model
    refused or filtered the content) or ``error`` (``error`` says why: the HTTP status and
    message, or ``timeout``), after the retries.
    """

    status: str
    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False

    @property
    def ok(self) -> bool:
        """Whether the request produced text."""
        return self.status == "ok"

    def failure(self) -> str:
        """Why a result that is not ``ok`` has no usable text, in words.

        Examples
        --------
        >>> ChatResult("refused", error="policy").failure()
        'the model refused (policy)'
        >>> ChatResult("error", error="HTTP 500").failure()
        'the request failed: HTTP 500'
        """
        if self.status == "refused":
            return f"the model refused ({self.error})"
        if self.status == "empty":
            return "the model returned an empty reply"
        return f"the request failed: {self.error}"

    def to_json(self) -> str:
        """The cacheable part, as JSON (everything but ``cached``).

        Examples
        --------
        >>> r = ChatResult("refused", error="I cannot help with that.")
        >>> ChatResult.from_json(r.to_json()).failure()
        'the model refused (I cannot help with that.)'
        """
        return json.dumps(
            {
                "status": self.status,
                "text": self.text,
                "error": self.error,
                "finish_reason": self.finish_reason,
                "latency_s": self.latency_s,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            }
        )

    @classmethod
    def from_json(cls, data: str) -> ChatResult:
        """Read back :meth:`to_json`, marked as served from the cache."""
        return cls(**json.loads(data), cached=True)


class ResponseCache(Protocol):
    """Where usable responses are kept, by :meth:`ChatRequest.cache_key`."""

    def get_many(self, keys: Sequence[str]) -> dict[str, ChatResult]:
        """The cached results of those keys that have one."""
        ...

    def put_many(self, entries: Sequence[tuple[str, ChatRequest, ChatResult]]) -> None:
        """Keep these results, replacing what their keys held (only ever usable ones)."""
        ...


class MemoryCache:
    """A :class:`ResponseCache` in a dict (tests, one-off scripts).

    Examples
    --------
    >>> cache = MemoryCache()
    >>> cache.put_many([("k", ChatRequest.build([("user", "hi")], prompt_version="v1"),
    ...                  ChatResult("ok", text="hello"))])
    >>> cache.get_many(["k", "other"])["k"].text
    'hello'
    """

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> dict[str, ChatResult]:
        """The cached results of those keys that have one."""
        with self._lock:
            return {k: ChatResult.from_json(self._data[k]) for k in keys if k in self._data}

    def put_many(self, entries: Sequence[tuple[str, ChatRequest, ChatResult]]) -> None:
        """Keep these results."""
        with self._lock:
            for key, _request, result in entries:
                self._data[key] = result.to_json()


class RateLimiter:
    """At most ``per_minute`` acquisitions in any 60-second window, spread evenly (thread-safe).

    Examples
    --------
    >>> limiter = RateLimiter(6000)
    >>> limiter.acquire(); limiter.acquire()  # 10 ms apart at most
    """

    def __init__(
        self,
        per_minute: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if per_minute <= 0:
            raise ConfigError(f"requests per minute must be positive; got {per_minute}")
        self.interval = 60.0 / per_minute
        self._clock = clock
        self._sleep = sleep
        self._next = clock()
        self._lock = threading.Lock()

    def acquire(self) -> None:
        """Block until the next request may start."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            self._sleep(start - now)


def _error_text(exc: Exception) -> str:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return "timeout"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        return f"HTTP {exc.status_code}: {message or exc.message or ''}".strip()[:500]
    if isinstance(exc, openai.APIConnectionError):
        return f"connection error: {exc}"[:500]
    return f"{type(exc).__name__}: {exc}"[:500]


def _fatal(exc: Exception) -> bool:
    """Errors that will fail every request alike: stop the run instead of recording each."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return False
    if isinstance(exc, openai.APIConnectionError):
        return True
    return isinstance(
        exc,
        openai.AuthenticationError | openai.PermissionDeniedError | openai.NotFoundError,
    )


class LLMClient:
    """Chat completions with limits, retries and a cache; failures become results.

    Parameters
    ----------
    settings
        Endpoint, model and limits.
    cache
        Where usable responses are kept (``None``: no cache).
    refresh
        Ask the endpoint again even for requests the cache answers; the new replies replace
        the cached ones (``s3kg extract --refresh``).

    Raises
    ------
    EndpointError
        From :meth:`chat_many` when the endpoint is unreachable after the retries, or refuses
        the key or the model: every further request would fail the same way, so the run stops
        with one clear message (results cached so far are kept).

    Examples
    --------
    >>> client = LLMClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="m"),
    ...                    cache=MemoryCache())
    >>> client.settings.concurrency
    4
    """

    def __init__(
        self, settings: LLMSettings, cache: ResponseCache | None = None, *, refresh: bool = False
    ) -> None:
        self.settings = settings
        self.cache = cache
        self.refresh = refresh
        self._limiter = (
            RateLimiter(settings.requests_per_minute) if settings.requests_per_minute else None
        )
        self._client: Any = None
        self.calls = 0  # requests sent to the endpoint (retries inside openai not counted)

    def _openai(self) -> Any:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or "not-needed",
                timeout=self.settings.timeout,
                max_retries=self.settings.max_retries,
            )
        return self._client

    def _call(self, request: ChatRequest) -> ChatResult:
        if self._limiter is not None:
            self._limiter.acquire()
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
            "temperature": request.temperature,
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        self.calls += 1
        started = time.perf_counter()
        response = self._openai().chat.completions.create(**kwargs)
        latency = time.perf_counter() - started
        if not getattr(response, "choices", None):
            return ChatResult("error", error="response has no choices", latency_s=latency)
        choice = response.choices[0]
        message = choice.message
        text = message.content if message is not None else None
        usage = getattr(response, "usage", None)
        prompt_tokens = getattr(usage, "prompt_tokens", None)
        completion_tokens = getattr(usage, "completion_tokens", None)
        finish = choice.finish_reason
        if getattr(message, "refusal", None) or finish == "content_filter":
            reason = getattr(message, "refusal", None) or "content filtered"
            status, error = "refused", str(reason)[:500]
        else:
            status, error = ("ok" if text and text.strip() else "empty"), None
        return ChatResult(
            status,
            text=text,
            error=error,
            finish_reason=finish,
            latency_s=latency,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def chat(self, request: ChatRequest) -> ChatResult:
        """One request (see :meth:`chat_many`)."""
        return self.chat_many([request])[0]

    def chat_many(
        self,
        requests: Sequence[ChatRequest],
        progress: Progress | None = None,
        *,
        usable: Callable[[ChatResult], bool] | None = None,
        on_results: Callable[[list[tuple[int, ChatResult]]], None] | None = None,
    ) -> list[ChatResult]:
        """Results in the order of ``requests``: cached ones first, the rest from the endpoint.

        Only usable results are cached: ``ok`` ones that ``usable`` accepts (default: every
        ``ok`` one). Errors, empty and refused replies, and replies ``usable`` rejects (an
        extraction that does not parse) are not, so a rerun asks them again; a cached reply
        that is not usable is not served either (one cached by an older version). With
        :attr:`refresh`, nothing is served from the cache.

        Replies are cached as they arrive (those that arrive together in one write), so a
        process killed mid-call keeps every reply it received. ``on_results`` is called in the
        calling thread with the ``(index into requests, result)`` pairs of the cache hits,
        then of each group of replies as it arrives (by index within a group): a caller stores
        its results there to keep them if it is killed. Once the endpoint has failed for good,
        error results are no longer passed on (the call raises :class:`EndpointError`).

        Examples
        --------
        >>> settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
        >>> client = LLMClient(settings, cache=MemoryCache())
        >>> request = ChatRequest.build([("user", "hi")], prompt_version="v1")
        >>> client.cache.put_many([(request.cache_key(settings), request,
        ...                         ChatResult("ok", text="not json"))])
        >>> client.chat_many([request])[0].text
        'not json'
        >>> try:
        ...     client.chat_many([request], usable=lambda r: (r.text or "").startswith("{"))
        ... except EndpointError:  # nothing listens on port 9
        ...     print("not served from the cache: asked the endpoint")
        not served from the cache: asked the endpoint
        """
        keys = [r.cache_key(self.settings) for r in requests]
        results: list[ChatResult | None] = [None] * len(requests)

        def keep(result: ChatResult) -> bool:
            return result.ok and (usable is None or usable(result))

        hits = {}
        if self.cache is not None and not self.refresh:
            found = self.cache.get_many(list(dict.fromkeys(keys)))
            hits = {k: v for k, v in found.items() if keep(v)}
        todo: dict[str, list[int]] = {}
        for i, key in enumerate(keys):
            if key in hits:
                results[i] = hits[key]
            else:
                todo.setdefault(key, []).append(i)
        done = len(requests) - sum(len(v) for v in todo.values())
        if on_results is not None and done:
            on_results([(i, r) for i, r in enumerate(results) if r is not None])
        if progress is not None:
            progress(done, len(requests))
        fatal: list[EndpointError] = []
        lock = threading.Lock()

        def work(key: str) -> tuple[str, ChatResult]:
            if fatal:
                return key, ChatResult("error", error="not sent: the endpoint failed")
            try:
                return key, self._call(requests[todo[key][0]])
            except Exception as exc:
                text = _error_text(exc)
                if _fatal(exc):
                    with lock:
                        fatal.append(
                            EndpointError(
                                f"the endpoint {self.settings.endpoint} (model "
                                f"{self.settings.model!r}) failed after "
                                f"{self.settings.max_retries} retries: {text}"
                            )
                        )
                return key, ChatResult("error", error=text)

        if todo:
            self._openai()  # built once, here, not raced by the worker threads
        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        try:
            pending = {pool.submit(work, key) for key in todo}
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                arrived = sorted((f.result() for f in finished), key=lambda kr: todo[kr[0]][0])
                fresh = [(k, requests[todo[k][0]], r) for k, r in arrived if keep(r)]
                if self.cache is not None and fresh:
                    self.cache.put_many(fresh)
                delivered = [(i, r) for k, r in arrived for i in todo[k]]
                for i, result in delivered:
                    results[i] = result
                done += len(delivered)
                if on_results is not None:
                    if fatal:
                        delivered = [(i, r) for i, r in delivered if r.status != "error"]
                    if delivered:
                        on_results(delivered)
                if progress is not None:
                    progress(done, len(requests))
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if fatal:
            raise fatal[0]
        return [r if r is not None else ChatResult("error", error="no result") for r in results]

    def with_settings(self, **changes: Any) -> LLMClient:
        """A client with some settings changed, sharing this one's cache (and refresh)."""
        return LLMClient(replace(self.settings, **changes), cache=self.cache, refresh=self.refresh)
