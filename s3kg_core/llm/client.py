"""The one place that talks to an OpenAI-compatible endpoint.

:class:`LLMSettings` says where (base URL, model, key: flags or ``OPENAI_BASE_URL``,
``OPENAI_API_KEY``, ``S3KG_MODEL``) and how hard to push (concurrency, requests per minute,
timeout, retries). :class:`LLMClient` sends chat completions through the ``openai`` package and
adds what a slow or hostile server needs:

- **Streamed replies.** Requests ask for a stream: a server that cancels generation when the
  client hangs up (``transformers serve`` does, for streamed requests only) then stops working
  for a request that timed out, and an answer longer than ``max_tokens`` allows is cut off as
  it arrives (status ``ok``, ``finish_reason`` ``length``). A server that answers with plain
  JSON instead is read as such.
- **Bounded exchanges** (:mod:`s3kg_core.llm.transport`): the timeout is a total deadline per
  request, the reply's size is capped after decompression, a redirect to another origin is
  refused. Hitting a limit is a per-request ``error`` with the reason.
- **Adaptive concurrency** (:mod:`s3kg_core.llm.adaptive`): at most ``concurrency`` requests in
  flight, fewer when the server queues them or times out; a timed-out request is retried only
  once the server is known to be past it.
- **Bounded retries** of 429, 5xx, timeouts and connection errors, with exponential backoff and
  jitter, ``Retry-After`` honoured up to 60 s.
- **A response cache** (only usable replies are kept: never an error, an empty or refused reply,
  or one the caller could not use), written only once the caller has stored the results.
- **Clean replies** (:mod:`s3kg_core.llm.replies`): lone surrogates become U+FFFD, token counts
  that are not sane integers become ``None``.
- **A verdict per request** instead of an exception, so one bad answer never stops a run.

Without ``timeout``, a request may take ``60 s + 0.5 s x max_tokens`` (:func:`default_timeout`),
so a slow local CPU server has the time to write a long answer.

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

import contextlib
import hashlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..errors import (
    ConfigError,
    DeadlineExceeded,
    EndpointError,
    RedirectRefused,
    ReplyTooLarge,
)
from ..progress import Progress
from .adaptive import AdaptiveLimit, Ghost, Ticket
from .replies import clean_count, clean_text
from .urls import clean_url, redact_url

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_MAX_REPLY_BYTES",
    "ChatRequest",
    "ChatResult",
    "ClientStats",
    "LLMClient",
    "LLMSettings",
    "MemoryCache",
    "RateLimiter",
    "ResponseCache",
    "default_timeout",
    "endpoint_configured",
    "redact_url",
    "text_cap",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_ENV_BASE_URL = "OPENAI_BASE_URL"
_ENV_KEY = "OPENAI_API_KEY"
_ENV_MODEL = "S3KG_MODEL"

DEFAULT_MAX_REPLY_BYTES = 8 * 1024 * 1024
"""The most bytes of one reply's body, after decompression (:attr:`LLMSettings.max_reply_bytes`)."""
_TIMEOUT_BASE_S = 60.0
_TIMEOUT_PER_TOKEN_S = 0.5
_TOKENS_IF_UNBOUNDED = 2048
_CHARS_PER_TOKEN_CAP = 32
_MAX_RETRY_AFTER_S = 60.0
_MODEL_ID_CHARS = 200


def default_timeout(max_tokens: int | None) -> float:
    """Seconds a request may take when the user set no timeout: 60 + 0.5 per token asked for.

    A local CPU server writes a few tokens a second; this leaves it the time for ``max_tokens``
    of them (``None``: 2,048).

    Examples
    --------
    >>> default_timeout(512), default_timeout(None)
    (316.0, 1084.0)
    """
    tokens = _TOKENS_IF_UNBOUNDED if max_tokens is None else max_tokens
    return _TIMEOUT_BASE_S + _TIMEOUT_PER_TOKEN_S * tokens


def text_cap(max_tokens: int | None) -> int | None:
    """The most characters kept of a reply asked for at most ``max_tokens`` tokens.

    32 characters a token, plus 1,024: far above what ``max_tokens`` tokens can spell, so only a
    server that ignores ``max_tokens`` is cut (``None``: no cap).

    Examples
    --------
    >>> text_cap(512)
    17408
    """
    return None if max_tokens is None else _CHARS_PER_TOKEN_CAP * max_tokens + 1024


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
        Seconds one request may take in all (connecting, waiting, reading) before it counts as
        a timeout and is retried; ``None``: :func:`default_timeout` of the request's
        ``max_tokens``.
    max_retries
        Retries after the first attempt on 429, 5xx, timeouts and connection errors.
    concurrency
        The most requests in flight at once; fewer while the server queues them or times out.
    requests_per_minute
        Upper bound on the request rate (``None``: unlimited).
    max_reply_bytes
        The most bytes of one reply's body, after decompression; a larger reply is an error.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None
    max_retries: int = 4
    concurrency: int = 4
    requests_per_minute: float | None = None
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES

    def __post_init__(self) -> None:
        if not self.model:
            raise ConfigError(f"no model given: pass --model or set {_ENV_MODEL}")
        if self.base_url is not None:
            object.__setattr__(self, "base_url", clean_url(self.base_url))
        if self.timeout is not None and self.timeout <= 0:
            raise ConfigError(f"timeout must be positive; got {self.timeout}")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries must be >= 0; got {self.max_retries}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1; got {self.concurrency}")
        if self.requests_per_minute is not None and self.requests_per_minute <= 0:
            raise ConfigError(
                f"requests_per_minute must be positive; got {self.requests_per_minute}"
            )
        if self.max_reply_bytes < 1024:
            raise ConfigError(f"max_reply_bytes must be at least 1024; got {self.max_reply_bytes}")

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

    def timeout_for(self, max_tokens: int | None) -> float:
        """The timeout of a request for at most ``max_tokens`` tokens (see :attr:`timeout`).

        Examples
        --------
        >>> LLMSettings(model="m", timeout=3).timeout_for(512)
        3
        >>> LLMSettings(model="m").timeout_for(80)
        100.0
        """
        return self.timeout if self.timeout is not None else default_timeout(max_tokens)


@dataclass(frozen=True)
class ChatRequest:
    """One chat completion to make.

    ``prompt_version`` names the prompt template, so a changed prompt never reuses answers
    cached for the old one. ``json_schema`` (a JSON schema as JSON text) is sent as
    ``response_format`` ``{"type": "json_schema", ...}``: an endpoint that constrains its output
    to it (``s3kg llm serve``, vLLM, llama.cpp, Ollama) replies with JSON that fits; one that
    rejects the field is asked again without it (see :class:`LLMClient`).
    """

    messages: tuple[tuple[str, str], ...]
    prompt_version: str
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int | None = None
    json_mode: bool = False
    json_schema: str | None = None

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
        fields: dict[str, Any] = {
            "messages": self.messages,
            "max_tokens": self.max_tokens,
            "json": self.json_mode,
        }
        if self.json_schema is not None:  # only then: the keys of other requests stay as they were
            fields["schema"] = self.json_schema
        body = json.dumps(fields, sort_keys=True, ensure_ascii=False)
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
    message, a timeout, a reply too large, after the retries). ``model_id`` is the model the
    server says answered; ``finish_reason`` ``length`` means the answer was cut at
    ``max_tokens`` (by the server, or by the client when the server went on).
    """

    status: str
    text: str | None = None
    error: str | None = None
    finish_reason: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model_id: str | None = None
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
                "model_id": self.model_id,
            }
        )

    @classmethod
    def from_json(cls, data: str) -> ChatResult:
        """Read back :meth:`to_json`, marked as served from the cache (older entries too)."""
        known = {f for f in cls.__dataclass_fields__ if f != "cached"}
        values = {k: v for k, v in json.loads(data).items() if k in known}
        return cls(**values, cached=True)


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


# -- one request -----------------------------------------------------------------------------


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` or ``obj.name``, ``None`` when absent (replies are not trusted)."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    return getattr(obj, name, None)


def _first(items: Any) -> Any:
    return items[0] if isinstance(items, list | tuple) and items else None


class _Reply:
    """A reply put together from a stream's chunks (or read whole from plain JSON)."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.parts: list[str] = []
        self.refusal: list[str] = []
        self.chars = 0
        self.choices = False
        self.capped = False
        self.finish_reason: Any = None
        self.prompt_tokens: Any = None
        self.completion_tokens: Any = None
        self.model_id: Any = None

    def _common(self, data: Any) -> None:
        model = _field(data, "model")
        if isinstance(model, str) and model:
            self.model_id = model
        usage = _field(data, "usage")
        if usage is not None:
            self.prompt_tokens = _field(usage, "prompt_tokens")
            self.completion_tokens = _field(usage, "completion_tokens")

    def _text(self, content: Any, refusal: Any) -> bool:
        added = False
        if isinstance(content, str) and content:
            self.parts.append(content)
            self.chars += len(content)
            added = True
        if isinstance(refusal, str) and refusal:
            self.refusal.append(refusal)
        if self.cap is not None and self.chars > self.cap:
            self.capped = True
        return added

    def add_chunk(self, chunk: Any) -> bool:
        """Take one streamed chunk; whether it brought answer text."""
        self._common(chunk)
        choice = _first(_field(chunk, "choices"))
        if choice is None:
            return False
        self.choices = True
        reason = _field(choice, "finish_reason")
        if reason is not None:
            self.finish_reason = reason
        delta = _field(choice, "delta")
        return self._text(_field(delta, "content"), _field(delta, "refusal"))

    def add_completion(self, data: Any) -> None:
        """Take a whole (non-streamed) completion."""
        self._common(data)
        choice = _first(_field(data, "choices"))
        if choice is None:
            return
        self.choices = True
        self.finish_reason = _field(choice, "finish_reason")
        message = _field(choice, "message")
        self._text(_field(message, "content"), _field(message, "refusal"))

    def result(self, latency: float) -> ChatResult:
        if not self.choices:
            return ChatResult("error", error="response has no choices", latency_s=latency)
        text = clean_text("".join(self.parts))
        finish = self.finish_reason
        if self.capped and self.cap is not None:
            text, finish = text[: self.cap], "length"
        finish = clean_text(finish, limit=40) if isinstance(finish, str) else None
        refusal = clean_text("".join(self.refusal), limit=500)
        if refusal or finish == "content_filter":
            status, error = "refused", refusal or "content filtered"
        else:
            status, error = ("ok" if text.strip() else "empty"), None
        model_id = self.model_id
        return ChatResult(
            status,
            text=text if (text or self.parts) else None,
            error=error,
            finish_reason=finish,
            latency_s=latency,
            prompt_tokens=clean_count(self.prompt_tokens),
            completion_tokens=clean_count(self.completion_tokens),
            model_id=clean_text(model_id, limit=_MODEL_ID_CHARS) if model_id else None,
        )


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain and len(chain) < 10:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


@dataclass(frozen=True)
class _Failure:
    """What went wrong with one attempt, and what to do about it."""

    text: str
    kind: str  # timeout, overload, retry, connection, fatal, final
    retry_after: float | None = None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = float(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return value if 0 < value <= _MAX_RETRY_AFTER_S else None


def _classify(exc: Exception, timeout: float) -> _Failure:
    """Turn an exception of one attempt (whose deadline was ``timeout`` s) into a failure."""
    import openai

    chain = _causes(exc)
    for cause in chain:
        if isinstance(cause, DeadlineExceeded):
            return _Failure(f"timeout (no complete reply within {timeout:g} s)", "timeout")
        if isinstance(cause, ReplyTooLarge):
            return _Failure(clean_text(str(cause), limit=500), "final")
        if isinstance(cause, RedirectRefused):
            return _Failure(clean_text(str(cause), limit=500), "fatal")
    if isinstance(exc, openai.APITimeoutError):
        return _Failure(f"timeout (no complete reply within {timeout:g} s)", "timeout")
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        message = body.get("message") if isinstance(body, dict) else None
        text = clean_text(f"HTTP {exc.status_code}: {message or exc.message or ''}".strip())[:500]
        code = exc.status_code
        if code in (429, 503):
            return _Failure(text, "overload", _retry_after(exc))
        if code in (408, 409) or code >= 500:
            return _Failure(text, "retry", _retry_after(exc))
        if code in (401, 403, 404):
            return _Failure(text, "fatal")
        return _Failure(text, "final")
    if isinstance(exc, openai.APIConnectionError):
        return _Failure(clean_text(f"connection error: {exc}")[:500], "connection")
    return _Failure(clean_text(f"{type(exc).__name__}: {exc}")[:500], "final")


def _refuses_response_format(exc: Exception) -> bool:
    """Whether an endpoint's 400 or 422 says it does not take ``response_format`` as sent."""
    import openai

    if not isinstance(exc, openai.APIStatusError) or exc.status_code not in (400, 422):
        return False
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in ("response_format", "json_schema", "response format"))


def _backoff(attempt: int, retry_after: float | None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): Retry-After, else 0.5 s doubling."""
    if retry_after is not None:
        return retry_after
    return min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random())


@dataclass
class ClientStats:
    """What a client sent: requests, retries, timeouts, and its concurrency."""

    sent: int = 0
    retries: int = 0
    timeouts: int = 0
    peak_in_flight: int = 0
    limit: int = 1


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

    Notes
    -----
    A request with a ``json_schema`` sends it as ``response_format``. An endpoint that answers
    400 or 422 naming ``response_format`` (or ``json_schema``) gets the request again at once
    without it, and no further schema in this client's life (:attr:`schema_refused`); an
    endpoint that ignores the field answers free text, which the caller parses as before.

    Raises
    ------
    EndpointError
        From :meth:`chat_many` when the endpoint is unreachable after the retries, refuses
        the key or the model, or redirects to another origin: every further request would fail
        the same way, so the run stops with one clear message (results cached so far are kept).

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
        self._held: list[tuple[str, ChatRequest, ChatResult]] | None = None
        self.limit = AdaptiveLimit(settings.concurrency)
        self.stats = ClientStats()
        self._stats_lock = threading.Lock()
        self.schema_refused = False
        """Whether the endpoint refused ``response_format`` (then it is no longer sent)."""

    @property
    def calls(self) -> int:
        """Requests sent to the endpoint, retries included."""
        return self.stats.sent

    def _openai(self) -> Any:
        if self._client is None:
            import httpx2
            import openai

            from .transport import BoundedTransport, refuse_cross_origin_redirect

            http = httpx2.Client(
                transport=BoundedTransport(max_bytes=self.settings.max_reply_bytes),
                event_hooks={"response": [refuse_cross_origin_redirect]},
                follow_redirects=True,
                timeout=self.settings.timeout_for(None),
            )
            self._client = openai.OpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or "not-needed",
                max_retries=0,  # retries are ours: they must know about ghosts and backoff
                http_client=http,
            )
        return self._client

    def _count(self, **changes: int) -> None:
        with self._stats_lock:
            for name, value in changes.items():
                setattr(self.stats, name, getattr(self.stats, name) + value)

    def _call(self, request: ChatRequest, *, with_schema: bool) -> tuple[ChatResult, float]:
        """One attempt: the result and the seconds until its first answer text arrived.

        ``with_schema``: send the request's JSON schema as ``response_format``.
        """
        if self._limiter is not None:
            self._limiter.acquire()
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "messages": [{"role": r, "content": c} for r, c in request.messages],
            "temperature": request.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": self.settings.timeout_for(request.max_tokens),
        }
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.max_tokens is not None:
            kwargs["max_tokens"] = request.max_tokens
        if with_schema and request.json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": "reply",
                    "schema": json.loads(request.json_schema),
                    "strict": True,
                },
            }
        elif request.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        self._count(sent=1)
        started = time.perf_counter()
        reply = _Reply(text_cap(request.max_tokens))
        first: float | None = None
        stream = self._openai().chat.completions.create(**kwargs)
        try:
            content_type = str(stream.response.headers.get("content-type", ""))
            if "text/event-stream" not in content_type:  # a server that does not stream
                reply.add_completion(json.loads(stream.response.read()))
            else:
                for chunk in stream:
                    if reply.add_chunk(chunk) and first is None:
                        first = time.perf_counter() - started
                    if reply.capped:
                        break  # closing the stream tells the server to stop
        finally:
            stream.close()
        latency = time.perf_counter() - started
        return reply.result(latency), latency if first is None else first

    def _attempts(
        self, request: ChatRequest, stop: threading.Event, fatal: Callable[[str], None]
    ) -> ChatResult:
        """Send ``request`` until it is answered or the retries are spent."""
        ghost: Ghost | None = None
        attempt = 0
        while True:
            if ghost is not None:  # the server may still be busy with the last attempt
                self.limit.wait_ghost(ghost, stop)
            ticket: Ticket | None = self.limit.acquire(stop)
            if ticket is None:
                return ChatResult("error", error="not sent: the endpoint failed")
            with self._stats_lock:
                self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.limit.peak)
            with_schema = request.json_schema is not None and not self.schema_refused
            try:
                result, first = self._call(request, with_schema=with_schema)
            except Exception as exc:
                failure = _classify(exc, self.settings.timeout_for(request.max_tokens))
                ghost = None
                if with_schema and _refuses_response_format(exc):
                    # remembered for the run; this request is asked again at once, without it
                    self.schema_refused = True
                    self.limit.release(ticket)
                    continue
                if failure.kind == "timeout":
                    self._count(timeouts=1)
                    ghost = self.limit.timed_out(
                        ticket, ghost_seconds=self.settings.timeout_for(request.max_tokens)
                    )
                elif failure.kind == "overload":
                    self.limit.overload(ticket)
                else:
                    self.limit.release(ticket, answered=failure.kind != "connection")
                retryable = failure.kind in ("timeout", "overload", "retry", "connection")
                if retryable and attempt < self.settings.max_retries and not stop.is_set():
                    attempt += 1
                    self._count(retries=1)
                    stop.wait(_backoff(attempt - 1, failure.retry_after))
                    continue
                if failure.kind in ("fatal", "connection"):
                    fatal(failure.text)
                return ChatResult("error", error=failure.text)
            if result.status == "error":
                self.limit.release(ticket)
            else:
                self.limit.success(ticket, first_token_s=first, total_s=result.latency_s or first)
            return result

    def chat(self, request: ChatRequest) -> ChatResult:
        """One request (see :meth:`chat_many`)."""
        return self.chat_many([request])[0]

    @contextlib.contextmanager
    def deferred_cache(self) -> Iterator[None]:
        """Hold the replies to cache until the block ends without an error, then write them.

        A caller that stores its results after :meth:`chat_many` returns (the extraction stage
        writes KGs per batch) wraps both in this block, so a reply whose results the store
        rejects is never cached (and a rerun asks it again instead of replaying it).
        """
        if self._held is not None:
            yield
            return
        self._held = []
        try:
            yield
            held = self._held
        finally:
            self._held = None
        if self.cache is not None and held:
            self.cache.put_many(held)

    def _keep(self, entries: list[tuple[str, ChatRequest, ChatResult]]) -> None:
        if self.cache is None or not entries:
            return
        if self._held is not None:
            self._held.extend(entries)
        else:
            self.cache.put_many(entries)

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

        ``on_results`` is called in the calling thread with the ``(index into requests,
        result)`` pairs of the cache hits, then of each group of replies as it arrives (by
        index within a group): a caller stores its results there to keep them if it is killed.
        Replies are cached as they arrive, *after* ``on_results`` returns: a group whose
        results the caller fails to store (``on_results`` raises) is not cached, and the
        exception stops the call. Once the endpoint has failed for good, error results are no
        longer passed on (the call raises :class:`EndpointError`).

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
        stop = threading.Event()

        def failed_for_good(text: str) -> None:
            with lock:
                fatal.append(
                    EndpointError(
                        f"the endpoint {self.settings.endpoint} (model {self.settings.model!r}) "
                        f"failed after {self.settings.max_retries} retries: {text}"
                    )
                )
            stop.set()

        def work(key: str) -> tuple[str, ChatResult]:
            if stop.is_set():
                return key, ChatResult("error", error="not sent: the endpoint failed")
            return key, self._attempts(requests[todo[key][0]], stop, failed_for_good)

        if todo:
            self._openai()  # built once, here, not raced by the worker threads
        pool = ThreadPoolExecutor(max_workers=self.settings.concurrency)
        try:
            pending = {pool.submit(work, key) for key in todo}
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                arrived = sorted((f.result() for f in finished), key=lambda kr: todo[kr[0]][0])
                delivered = [(i, r) for k, r in arrived for i in todo[k]]
                for i, result in delivered:
                    results[i] = result
                done += len(delivered)
                if on_results is not None:
                    if fatal:
                        delivered = [(i, r) for i, r in delivered if r.status != "error"]
                    if delivered:
                        on_results(delivered)  # stored first: what it rejects is not cached
                self._keep([(k, requests[todo[k][0]], r) for k, r in arrived if keep(r)])
                if progress is not None:
                    progress(done, len(requests))
        except BaseException:
            stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            with self._stats_lock:
                self.stats.limit = self.limit.limit
        if fatal:
            raise fatal[0]
        return [r if r is not None else ChatResult("error", error="no result") for r in results]

    def with_settings(self, **changes: Any) -> LLMClient:
        """A client with some settings changed, sharing this one's cache (and refresh)."""
        return LLMClient(replace(self.settings, **changes), cache=self.cache, refresh=self.refresh)
