"""A local HTTP server speaking the OpenAI chat-completions protocol, scripted and faulty at will.

It tests a client offline: the project's own tests and ``bench/speed/bench_collect.py`` run
``s3kg collect`` and the LLM client against it, and a user can run a pipeline in CI the same way.

The script is a function of the request body (and of how many times this prompt was seen) that
returns a :class:`Reply`: text to answer with, an HTTP error status with headers, or a hang. The
server records every request it receives (time, body), so tests can check what was sent, how
retries were spaced, and that a rerun sent nothing.

A request that asks for a stream (``"stream": true``) gets the reply as server-sent events, one
chunk per word, then the usage, as OpenAI sends it; ``Reply(stream=False)`` answers it with plain
JSON instead. Hostile behaviours: a body dripped one byte at a time (``drip``), gzip-compressed
(``gzip``, e.g. a bomb), a redirect (``redirect``), absurd usage figures (``usage``).

``fake_openai(script, workers=1)`` behaves like a single-worker CPU server: one request is
served at a time, the others wait in line, each takes its reply's ``hang`` seconds of "work"
whether or not its client is still there (an abandoned request is not cancelled), and
:attr:`FakeOpenAI.busy` records the peak of requests waiting or being served.

Examples
--------
>>> import json, urllib.request
>>> def script(body, n):
...     return Reply("Paris." if n == 1 else "again")
>>> with fake_openai(script) as server:
...     req = urllib.request.Request(
...         server.base_url + "/chat/completions",
...         data=json.dumps({"messages": [{"role": "user", "content": "Capital?"}]}).encode(),
...         headers={"Content-Type": "application/json"},
...     )
...     with urllib.request.urlopen(req) as resp:
...         reply = json.load(resp)
...     print(reply["choices"][0]["message"]["content"], server.count("Capital"))
Paris. 1
"""

from __future__ import annotations

import contextlib
import gzip as gzip_module
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ..errors import ConfigError

__all__ = ["FakeOpenAI", "Reply", "fake_openai", "last_user_message"]


GATE_TIMEOUT_S = 120.0
"""The longest a gated reply waits for its test's event (a test that never sets it fails on
what it checks, not by hanging)."""


@dataclass
class Reply:
    """What the server does with one request."""

    text: str | None = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0  # seconds to wait before answering
    finish_reason: str = "stop"
    refusal: str | None = None
    raw: bytes | None = None  # a body sent as is (a malformed response)
    drip: float = 0.0  # seconds between the bytes of the body
    gzip: bool = False  # send the body gzip-compressed
    redirect: str | None = None  # answer 307 with this Location
    usage: dict[str, Any] | None = None  # the usage figures to report instead of word counts
    stream: bool | None = None  # None: stream when asked; False: plain JSON even when asked
    gate: threading.Event | None = None  # answer only once the test sets it (after ``hang``)


def last_user_message(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request body."""
    return next(
        (m["content"] for m in reversed(body.get("messages", [])) if m["role"] == "user"), ""
    )


@dataclass
class FakeOpenAI:
    """The running server: ``base_url``, the recorded ``requests``, and the script."""

    base_url: str
    script: Callable[[dict[str, Any], int], Reply]
    requests: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    served: int = 0  # requests whose work the server finished
    waiting: int = 0  # requests in line or being served now (single-worker mode)
    busy: int = 0  # the most requests ever in line or being served at once
    worker: threading.Lock | None = None  # held while serving, in single-worker mode

    def count(self, needle: str = "") -> int:
        """Requests received whose last user message contains ``needle``."""
        with self.lock:
            return sum(needle in last_user_message(b) for _, b in self.requests)

    def times(self, needle: str) -> list[float]:
        """Arrival times of the requests whose last user message contains ``needle``."""
        with self.lock:
            return [t for t, b in self.requests if needle in last_user_message(b)]


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.usage is not None:
        return reply.usage
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    return {
        "prompt_tokens": len(prompt.split()),
        "completion_tokens": len((reply.text or "").split()),
        "total_tokens": len(prompt.split()) + len((reply.text or "").split()),
    }


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": _usage(body, reply),
    }


def _events(body: dict[str, Any], reply: Reply) -> bytes:
    """The reply as server-sent events: role, one chunk per word, finish, usage, [DONE]."""

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        data = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": []
            if extra.get("usage")
            else [{"index": 0, "delta": delta, "finish_reason": finish}],
            **extra,
        }
        return f"data: {json.dumps(data)}\n\n"

    text = reply.text or ""
    words = [w for w in text.split(" ")]
    pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)] if text else []
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": p}) for p in pieces if p]
    if reply.refusal is not None:
        out.append(chunk({"refusal": reply.refusal}))
    out.append(chunk({}, reply.finish_reason))
    out.append(chunk({}, usage=_usage(body, reply)))
    out.append("data: [DONE]\n\n")
    return "".join(out).encode("utf-8", "surrogatepass")


@contextmanager
def fake_openai(
    script: Callable[[dict[str, Any], int], Reply], *, workers: int | None = None
) -> Iterator[FakeOpenAI]:
    """Start the server on a free port; stop it on exit.

    ``script(body, n)`` gets the request body and how many times (1, 2, ...) a request with the
    same last user message has arrived, so "fail twice, then answer" is easy to write.
    ``workers=1``: a single-worker server (see the module's docstring).

    Examples
    --------
    >>> with fake_openai(lambda body, n: Reply(status=503)) as server:
    ...     server.base_url.startswith("http://127.0.0.1:")
    True
    """
    if workers not in (None, 1):
        raise ConfigError("workers is None (as many as come) or 1")
    state = FakeOpenAI(base_url="", script=script)
    if workers == 1:
        state.worker = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(
            self,
            status: int,
            payload: bytes,
            headers: dict[str, str],
            *,
            content_type: str = "application/json",
            drip: float = 0.0,
            compress: bool = False,
        ) -> None:
            if compress:
                payload = gzip_module.compress(payload, compresslevel=9)
                headers = {**headers, "Content-Encoding": "gzip"}
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if not drip:
                self.wfile.write(payload)
                return
            for i in range(len(payload)):
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                time.sleep(drip)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                payload = {"object": "list", "data": [{"id": "fake", "object": "model"}]}
                self._send(200, json.dumps(payload).encode(), {})
            else:
                self._send(404, b'{"error": {"message": "not found"}}', {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            key = last_user_message(body)
            with state.lock:
                state.requests.append((time.monotonic(), body))
                state.seen[key] = state.seen.get(key, 0) + 1
                n = state.seen[key]
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, b'{"error": {"message": "not found"}}', {})
                return
            reply = self._work(body, n)
            with contextlib.suppress(OSError):  # the client went away: the work is done anyway
                self._answer(body, reply)

        def _work(self, body: dict[str, Any], n: int) -> Reply:
            """The scripted reply, after its ``hang`` seconds (in line, in single-worker mode)."""
            if state.worker is None:
                reply = state.script(body, n)
                if reply.hang:
                    time.sleep(reply.hang)
                if reply.gate is not None:  # the test's event orders the replies, no clock
                    reply.gate.wait(GATE_TIMEOUT_S)
                with state.lock:
                    state.served += 1
                return reply
            with state.lock:
                state.waiting += 1
                state.busy = max(state.busy, state.waiting)
            try:
                with state.worker:
                    reply = state.script(body, n)
                    if reply.hang:
                        time.sleep(reply.hang)
                    if reply.gate is not None:
                        reply.gate.wait(GATE_TIMEOUT_S)
                    with state.lock:
                        state.served += 1
            finally:
                with state.lock:
                    state.waiting -= 1
            return reply

        def _answer(self, body: dict[str, Any], reply: Reply) -> None:
            send: dict[str, Any] = {"drip": reply.drip, "compress": reply.gzip}
            if reply.redirect is not None:
                self._send(307, b"", {**reply.headers, "Location": reply.redirect})
            elif reply.raw is not None:
                self._send(reply.status, reply.raw, reply.headers, **send)
            elif reply.status != 200:
                err = {"error": {"message": f"scripted {reply.status}", "type": "fake"}}
                self._send(reply.status, json.dumps(err).encode(), reply.headers, **send)
            elif body.get("stream") and reply.stream is not False:
                events = _events(body, reply)
                self._send(200, events, reply.headers, content_type="text/event-stream", **send)
            else:
                payload = json.dumps(_completion(body, reply)).encode("utf-8", "surrogatepass")
                self._send(200, payload, reply.headers, **send)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
