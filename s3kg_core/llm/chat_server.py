"""The server of ``s3kg llm serve``: a local transformers model as an OpenAI chat endpoint.

``POST /v1/chat/completions`` (streamed or not) and ``GET /v1/models``, on 127.0.0.1, for one
local model folder. It differs from ``transformers serve`` (which
:func:`~s3kg_core.llm.serve.transformers_serve` still runs) where a small CPU server needs it:

- ``response_format`` is honoured (``json_schema`` and ``json_object``) by constrained decoding
  (:mod:`s3kg_core.llm.constrained`, lm-format-enforcer), so a 135M model's extraction reply is
  JSON that fits the schema, complete within the token budget the schema bounds;
- the prompt is bounded in tokens (``max_prompt_tokens``): a longer one is a 400 at once
  (``context_length_exceeded``), a body over ``max_body_bytes`` a 413, in OpenAI's error shape;
  the ``Content-Length`` is checked before the body is read (absent: 411; negative, malformed
  or given twice: 400), and what would otherwise be ignored is a 400: ``n`` above 1, ``stop``
  sequences, a ``seed`` outside 0 to 2**63 - 1, a schema the decoder cannot follow
  (:func:`~s3kg_core.llm.constrained.schema_problem`);
- a reply the schema let go no further than incomplete JSON is ``finish_reason: "length"``;
- one request generates at a time and at most ``max_queue`` wait behind it: the next is a 429
  with ``Retry-After`` (which :class:`~s3kg_core.llm.client.LLMClient` honours) rather than a
  wait no client survives;
- a request whose client hangs up, waiting or generating, streamed or not, is dropped or
  stopped within a fraction of a second (a stopping criterion polls its cancelled flag, which
  the request's thread sets when its socket closes).

Examples
--------
>>> ServeLimits().max_prompt_tokens
4096
>>> error_body("too long", code="context_length_exceeded", param="messages")["error"]["code"]
'context_length_exceeded'
"""

from __future__ import annotations

import contextlib
import json
import math
import queue
import re
import select
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..errors import ConfigError, ServeError, ServeRequestError
from .constrained import JsonSchemaLogitsProcessor, parse_response_format, tokenizer_data

__all__ = ["ChatServer", "ServeLimits", "ServeStats", "error_body"]

_POLL_S = 0.2  # how often a waiting request looks at its client's socket
_DIGITS = re.compile(r"[0-9]{1,18}")  # a Content-Length: ASCII digits, below 10**18


@dataclass(frozen=True)
class ServeLimits:
    """What one server takes.

    Attributes
    ----------
    max_prompt_tokens
        The longest prompt, in tokens after the chat template (a longer one: 400).
    max_new_tokens
        The most tokens one reply may ask for (``max_tokens`` above it is lowered to it).
    max_queue
        Requests that may wait behind the one generating (one more: 429).
    max_body_bytes
        The largest request body (a larger one: 413).
    """

    max_prompt_tokens: int = 4096
    max_new_tokens: int = 2048
    max_queue: int = 4
    max_body_bytes: int = 2_000_000

    def __post_init__(self) -> None:
        for name in ("max_prompt_tokens", "max_new_tokens", "max_body_bytes"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1; got {getattr(self, name)}")
        if self.max_queue < 0:
            raise ConfigError(f"max_queue must be at least 0; got {self.max_queue}")


@dataclass
class ServeStats:
    """What the server did: requests answered, refused (by reason) and cancelled."""

    answered: int = 0
    cancelled: int = 0
    refused: dict[int, int] = field(default_factory=dict)
    generated_tokens: int = 0


def error_body(
    message: str,
    *,
    kind: str = "invalid_request_error",
    code: str | None = None,
    param: str | None = None,
) -> dict[str, Any]:
    """An error in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


class _Quiet(ThreadingHTTPServer):
    """A threading HTTP server that does not print a traceback when a client resets."""

    request_queue_size = 128  # connections waiting to be accepted (5 reset a flood's clients)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


@dataclass
class _Job:
    """One request's generation: its inputs, its cancelled flag, and its tokens as they come."""

    input_ids: Any
    max_new_tokens: int
    temperature: float
    top_p: float | None
    seed: int | None
    schema: dict[str, Any] | None
    processor: Any = None  # the schema's JsonSchemaLogitsProcessor, built when it is checked
    cancelled: threading.Event = field(default_factory=threading.Event)
    answered: bool = False
    out: queue.Queue[tuple[str, Any]] = field(default_factory=queue.Queue)


class _Streamer:
    """transformers' streamer protocol: each new token goes to the job's queue."""

    def __init__(self, job: _Job) -> None:
        self.job = job
        self.prompt_seen = False

    def put(self, value: Any) -> None:
        if not self.prompt_seen:  # generate() first puts the prompt
            self.prompt_seen = True
            return
        for token in value.reshape(-1).tolist():
            self.job.out.put(("token", int(token)))

    def end(self) -> None:
        pass


def _client_gone(sock: socket.socket) -> bool:
    """Whether the peer of ``sock`` has closed it (readable, and a peek reads nothing)."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI's content parts: keep the text ones
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, dict) and p.get("type") == "text"
        )
    raise ServeRequestError(
        400, error_body("each message's content must be a string", param="messages")
    )


def _messages(body: dict[str, Any]) -> list[dict[str, str]]:
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ServeRequestError(
            400, error_body("messages must be a non-empty list", param="messages")
        )
    out = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ServeRequestError(
                400, error_body("each message needs a role and a content", param="messages")
            )
        out.append({"role": message["role"], "content": _text_of(message.get("content", ""))})
    return out


def _number(body: dict[str, Any], name: str, default: float | None, low: float, high: float) -> Any:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ServeRequestError(
            400, error_body(f"{name} must be a number in [{low:g}, {high:g}]", param=name)
        )
    return value


MAX_SEED = 2**63 - 1
"""The largest ``seed`` (torch's generator takes 64 bits; 2**70 overflowed it, a 500)."""


def _seed(body: dict[str, Any]) -> int | None:
    """The request's ``seed``: ``None``, or a whole number from 0 to :data:`MAX_SEED`."""
    value = body.get("seed")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise ServeRequestError(
            400,
            error_body(
                f"seed must be a whole number from 0 to 2**63 - 1 ({MAX_SEED})", param="seed"
            ),
        )
    return value


def _is_json(text: str) -> bool:
    """Whether ``text`` is one whole JSON value (a reply held to a schema that was finished)."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def _refuse_unsupported(body: dict[str, Any]) -> None:
    """Refuse what the server would otherwise ignore: ``n`` above 1 and ``stop`` sequences.

    One choice is generated per request, and no stop sequence is applied: a request that asks
    for either gets a 400 rather than a reply that silently does not do it.
    """
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise ServeRequestError(
            400,
            error_body(
                "n must be 1: this server generates one choice per request (send n requests)",
                param="n",
            ),
        )
    stop = body.get("stop")
    if stop is not None and stop != [] and stop != "":
        raise ServeRequestError(
            400,
            error_body(
                "stop sequences are not supported by this server: leave stop out (the reply "
                "ends at the model's end of text, max_tokens, or the JSON schema's end)",
                param="stop",
            ),
        )


class ChatServer:
    """A local model folder served as an OpenAI chat-completions endpoint on 127.0.0.1.

    Parameters
    ----------
    model_dir
        A transformers model folder (config, weights, tokenizer with a chat template).
    port
        The port; 0 picks a free one.
    limits
        The prompt, reply, queue and body limits.
    threads
        torch threads (one is fastest on a small busy CPU); ``None`` keeps torch's setting.

    Examples
    --------
    ::

        with ChatServer(folder, port=0) as server:
            openai.OpenAI(base_url=server.base_url, api_key="none").chat.completions.create(
                model=server.model, messages=[{"role": "user", "content": "Hi"}])
    """

    def __init__(
        self,
        model_dir: Path,
        *,
        port: int = 0,
        limits: ServeLimits | None = None,
        threads: int | None = 1,
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_dir = Path(model_dir)
        self.model = str(self.model_dir)
        self.limits = limits or ServeLimits()
        self.stats = ServeStats()
        if threads is not None:
            torch.set_num_threads(threads)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
            lm: Any = AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32)
        except (OSError, ValueError) as exc:
            raise ServeError(f"cannot load the model folder {self.model_dir}: {exc}") from exc
        self._lm: Any = lm.eval()
        tokenizer_data(self.tokenizer)  # built now, not on the first JSON request
        self._lock = threading.Lock()
        self._pending = 0  # waiting or generating
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._seconds: list[float] = []  # the last generations' durations (Retry-After)
        self.tokenizer.model_max_length = 10**9  # the bound is ours (limits), told as a 400
        self._httpd = _Quiet(("127.0.0.1", port), self._handler())
        self._httpd.daemon_threads = True
        self._threads: list[threading.Thread] = []
        self._stopped = threading.Event()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def port(self) -> int:
        """The port it listens on."""
        return int(self._httpd.server_address[1])

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> ChatServer:
        """Start listening and generating (in background threads); returns itself."""
        for target in (self._httpd.serve_forever, self._work):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        """Stop listening, cancel what waits or generates, and free the port."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._jobs.put(None)
        for thread in self._threads:
            thread.join(timeout=10)

    def wait(self) -> None:
        """Block until :meth:`stop` (Ctrl-C raises ``KeyboardInterrupt`` here)."""
        while not self._stopped.wait(0.5):
            pass

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- generation (one thread) ------------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if job.cancelled.is_set() or self._stopped.is_set():
                job.out.put(("done", "cancelled"))
                continue
            started = time.monotonic()
            try:
                self._generate(job)
            except Exception as exc:  # reported to the request, never kills the worker
                job.out.put(("error", f"{type(exc).__name__}: {exc}"))
            finally:
                with self._lock:
                    self._seconds = [*self._seconds[-7:], time.monotonic() - started]

    def _generate(self, job: _Job) -> None:
        import torch
        from transformers import LogitsProcessorList, StoppingCriteria, StoppingCriteriaList

        stopped = self._stopped

        class Cancelled(StoppingCriteria):
            def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
                flag = job.cancelled.is_set() or stopped.is_set()
                return torch.full((input_ids.shape[0],), flag, dtype=torch.bool)

        kwargs: dict[str, Any] = {
            "max_new_tokens": job.max_new_tokens,
            "streamer": _Streamer(job),
            "stopping_criteria": StoppingCriteriaList([Cancelled()]),
            "pad_token_id": self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
        }
        if job.processor is not None:
            kwargs["logits_processor"] = LogitsProcessorList([job.processor])
        if job.temperature > 0:
            kwargs.update(do_sample=True, temperature=job.temperature)
            if job.top_p is not None:
                kwargs["top_p"] = job.top_p
            torch.manual_seed(job.seed if job.seed is not None else 0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            self._lm.generate(
                input_ids=job.input_ids,
                attention_mask=torch.ones_like(job.input_ids),
                **kwargs,
            )
        job.out.put(("done", "cancelled" if job.cancelled.is_set() else "finished"))

    # -- admission ----------------------------------------------------------------------------

    def _retry_after(self) -> int:
        """Seconds until a place in the queue is likely free (1 to 60)."""
        with self._lock:
            typical = sorted(self._seconds)[len(self._seconds) // 2] if self._seconds else 5.0
        return max(1, min(60, math.ceil(typical)))

    def _admit(self) -> None:
        with self._lock:
            if self._pending < 1 + self.limits.max_queue:
                self._pending += 1
                return
            busy = self._pending
        seconds = self._retry_after()
        raise ServeRequestError(
            429,
            error_body(
                f"the server is busy ({busy} request(s) generating or waiting; it takes "
                f"{1 + self.limits.max_queue}); retry after {seconds} s",
                kind="rate_limit_error",
                code="server_busy",
            ),
            {"Retry-After": str(seconds)},
        )

    def _release(self) -> None:
        with self._lock:
            self._pending -= 1

    def _count(self, status: int) -> None:
        with self._lock:
            self.stats.refused[status] = self.stats.refused.get(status, 0) + 1

    # -- requests -----------------------------------------------------------------------------

    def _job(self, body: dict[str, Any]) -> _Job:
        """The validated job of a chat request body (its prompt tokenised and bounded)."""
        model = body.get("model")
        if model not in (None, self.model, self.model_dir.name):
            raise ServeRequestError(
                404,
                error_body(
                    f"the model {str(model)[:200]!r} is not served here; this server serves "
                    f"{self.model!r}",
                    code="model_not_found",
                    param="model",
                ),
            )
        messages = _messages(body)
        _refuse_unsupported(body)
        seed = _seed(body)
        try:
            schema = parse_response_format(body.get("response_format"))
        except ConfigError as exc:
            raise ServeRequestError(400, error_body(str(exc), param="response_format")) from exc
        processor = None if schema is None else self._processor(schema)
        asked = _number(body, "max_completion_tokens", None, 1, 10**9)
        if asked is None:
            asked = _number(body, "max_tokens", None, 1, 10**9)
        max_new = min(int(asked or self.limits.max_new_tokens), self.limits.max_new_tokens)
        # the characters bound the tokens from above: refuse a huge prompt before tokenising it
        chars = sum(len(m["content"]) for m in messages)
        if chars > 16 * self.limits.max_prompt_tokens:
            raise self._too_long(f"about {chars // 4:,}")
        encoded: Any = self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, return_tensors="pt", return_dict=True
        )
        ids = encoded["input_ids"]
        if ids.shape[1] > self.limits.max_prompt_tokens:
            raise self._too_long(f"{ids.shape[1]:,}")
        return _Job(
            input_ids=ids,
            max_new_tokens=max_new,
            temperature=float(_number(body, "temperature", 0.0, 0, 2)),
            top_p=_number(body, "top_p", None, 0, 1),
            seed=seed,
            schema=schema,
            processor=processor,
        )

    def _processor(self, schema: dict[str, Any]) -> Any:
        """The schema's logits processor, or a 400 when lm-format-enforcer cannot read it."""
        try:
            return JsonSchemaLogitsProcessor(self.tokenizer, schema)
        except Exception as exc:  # its own errors (pydantic's, ValueError, RecursionError...)
            detail = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            if type(exc).__module__.startswith("pydantic"):  # internals: not for the client
                detail = "a keyword's value is not of the type JSON Schema gives it"
            raise ServeRequestError(
                400,
                error_body(
                    "response_format.json_schema.schema cannot be followed by this server's "
                    f"decoder: {detail or type(exc).__name__}",
                    param="response_format",
                ),
            ) from exc

    def _decode(self, tokens: list[int]) -> str:
        return str(self.tokenizer.decode(tokens, skip_special_tokens=True))

    def _too_long(self, tokens: str) -> ServeRequestError:
        return ServeRequestError(
            400,
            error_body(
                f"the prompt is {tokens} tokens; this server takes at most "
                f"{self.limits.max_prompt_tokens:,} (s3kg llm serve --max-prompt-tokens)",
                code="context_length_exceeded",
                param="messages",
            ),
        )

    def _tokens(self, job: _Job, sock: socket.socket) -> Iterator[tuple[str, Any]]:
        """The job's events as they come; the job is cancelled when the client hangs up."""
        checked = time.monotonic()
        while True:
            try:
                event: tuple[str, Any] | None = job.out.get(timeout=_POLL_S)
            except queue.Empty:
                event = None
            if event is None or time.monotonic() - checked >= _POLL_S:
                checked = time.monotonic()
                if _client_gone(sock) or self._stopped.is_set():
                    job.cancelled.set()
                    return
            if event is None:
                continue
            yield event
            if event[0] != "token":
                return

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 60  # seconds a client may take to send its request

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _json(
                self, status: int, payload: Any, headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload, ensure_ascii=False).encode("utf-8", "replace")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/") in ("/v1/models", "/models"):
                    model = {
                        "id": server.model,
                        "object": "model",
                        "owned_by": "s3kg",
                        "created": 0,
                        "status": {"value": "loaded"},
                    }
                    self._json(200, {"object": "list", "data": [model]})
                else:
                    self._json(404, error_body(f"no route {self.path[:100]!r}", code="not_found"))

            def do_POST(self) -> None:
                with contextlib.suppress(OSError):  # the client left: nothing to tell it
                    self._post()

            def _body(self) -> dict[str, Any]:
                length = self._length()
                if length > server.limits.max_body_bytes:
                    self.close_connection = True  # the body is not read
                    raise ServeRequestError(
                        413,
                        error_body(
                            f"the request body is {length:,} bytes; this server takes at most "
                            f"{server.limits.max_body_bytes:,}",
                            code="request_too_large",
                        ),
                    )
                try:
                    body = json.loads(self.rfile.read(length))
                except (ValueError, RecursionError):
                    raise ServeRequestError(400, error_body("the body is not JSON")) from None
                if not isinstance(body, dict):
                    raise ServeRequestError(400, error_body("the body must be a JSON object"))
                return body

            def _length(self) -> int:
                """The body's length, from the one Content-Length given in decimal digits.

                Checked before any byte of the body is read: an absent length is a 411, a
                negative or malformed one (``-1`` read the body to its end, unbounded), or
                several, a 400; the body is then not read and the connection is closed.
                """
                given = self.headers.get_all("Content-Length") or []
                if not given or "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                    self.close_connection = True
                    raise ServeRequestError(
                        411, error_body("a Content-Length is required (no chunked bodies)")
                    )
                text = given[0].strip()
                if len(given) > 1 or not _DIGITS.fullmatch(text):
                    self.close_connection = True
                    raise ServeRequestError(
                        400,
                        error_body(
                            "Content-Length must be one whole number of bytes from 0; got "
                            f"{', '.join(given)[:40]!r}"
                        ),
                    )
                return int(text)

            def _post(self) -> None:
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                    self._json(404, error_body(f"no route {self.path[:100]!r}", code="not_found"))
                    return
                try:
                    body = self._body()
                    job = server._job(body)
                    server._admit()
                except ServeRequestError as exc:
                    server._count(exc.status)
                    self._json(exc.status, exc.body, exc.headers)
                    return
                try:
                    server._jobs.put(job)
                    self._answer(body, job)
                finally:
                    job.cancelled.set()  # whatever happened here, the worker may stop
                    server._release()
                    if not job.answered:  # the client left (or the server stops)
                        with server._lock:
                            server.stats.cancelled += 1

            def _answer(self, body: dict[str, Any], job: _Job) -> None:
                rid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
                stream = bool(body.get("stream"))
                usage = stream and bool((body.get("stream_options") or {}).get("include_usage"))
                writer = _SSE(self, rid, server.model) if stream else None
                if writer is not None:
                    writer.start()
                tokens: list[int] = []
                sent = ""
                finish: str | None = None
                for kind, value in server._tokens(job, self.connection):
                    if kind == "token":
                        tokens.append(value)
                        if writer is not None:
                            text = server._decode(tokens)
                            if not text.endswith("\ufffd") and len(text) > len(sent):
                                writer.chunk({"content": text[len(sent) :]})
                                sent = text
                    elif kind == "error":
                        job.answered = True
                        if writer is not None:
                            writer.chunk({}, error=value)
                            writer.done()
                        else:
                            self._json(500, error_body(value, kind="server_error"))
                        return
                    else:
                        finish = value
                if finish is None or finish == "cancelled":
                    return  # the client left, or the server stops: nobody to answer
                processor = job.processor
                if processor is not None and processor.failure:
                    job.answered = True
                    server._count(400)
                    message = (
                        "response_format.json_schema.schema: the decoder could not follow it "
                        f"while generating ({processor.failure})"
                    )
                    if writer is not None:  # the 200 is sent: the stream ends in the error
                        writer.chunk({}, error=message)
                        writer.done()
                    else:
                        self._json(400, error_body(message, param="response_format"))
                    return
                text = server._decode(tokens)
                eos = server.tokenizer.eos_token_id
                ended = bool(tokens) and tokens[-1] == eos
                cut = len(tokens) >= job.max_new_tokens and not ended
                if processor is not None and (processor.cut_short or not _is_json(text)):
                    cut = True  # the decoder let it go no further: incomplete JSON, not finished
                reason = "length" if cut else "stop"
                counts = {
                    "prompt_tokens": int(job.input_ids.shape[1]),
                    "completion_tokens": len(tokens),
                    "total_tokens": int(job.input_ids.shape[1]) + len(tokens),
                }
                job.answered = True
                with server._lock:
                    server.stats.answered += 1
                    server.stats.generated_tokens += len(tokens)
                if writer is not None:
                    if len(text) > len(sent):
                        writer.chunk({"content": text[len(sent) :]})
                    writer.chunk({}, finish=reason)
                    if usage:
                        writer.chunk(None, usage=counts)
                    writer.done()
                    return
                self._json(
                    200,
                    {
                        "id": rid,
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": server.model,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": text},
                                "finish_reason": reason,
                            }
                        ],
                        "usage": counts,
                    },
                )

        return Handler


class _SSE:
    """Server-sent events in HTTP/1.1 chunked encoding, as OpenAI streams a chat completion."""

    def __init__(self, handler: BaseHTTPRequestHandler, rid: str, model: str) -> None:
        self.handler = handler
        self.rid = rid
        self.model = model

    def _write(self, data: bytes) -> None:
        self.handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.handler.wfile.flush()

    def start(self) -> None:
        self.handler.send_response(200)
        self.handler.send_header("Content-Type", "text/event-stream")
        self.handler.send_header("Cache-Control", "no-cache")
        self.handler.send_header("Transfer-Encoding", "chunked")
        self.handler.end_headers()
        self.chunk({"role": "assistant", "content": ""})

    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None, **extra: Any) -> None:
        data: dict[str, Any] = {
            "id": self.rid,
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": self.model,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if "error" in extra:
            data["error"] = {"message": extra["error"], "type": "server_error"}
        if "usage" in extra:
            data["usage"] = extra["usage"]
        self._write(f"data: {json.dumps(data, ensure_ascii=False)}\n\n".encode("utf-8", "replace"))

    def done(self) -> None:
        self._write(b"data: [DONE]\n\n")
        self._write(b"")
