"""A real local HTTP server speaking the OpenAI chat-completions protocol, scripted by the test.

The script is a function of the request body (and of how many times this prompt was seen) that
returns a :class:`Reply`: text to answer with, an HTTP error status with headers, or a hang. The
server records every request it receives (time, body), so tests can check what was sent, how
retries were spaced, and that a rerun sent nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeOpenAI", "Reply", "fake_openai", "last_user_message"]


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

    def count(self, needle: str = "") -> int:
        """Requests received whose last user message contains ``needle``."""
        with self.lock:
            return sum(needle in last_user_message(b) for _, b in self.requests)

    def times(self, needle: str) -> list[float]:
        """Arrival times of the requests whose last user message contains ``needle``."""
        with self.lock:
            return [t for t, b in self.requests if needle in last_user_message(b)]


def _completion(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.refusal is not None:
        message["refusal"] = reply.refusal
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        "usage": {
            "prompt_tokens": len(prompt.split()),
            "completion_tokens": len((reply.text or "").split()),
            "total_tokens": len(prompt.split()) + len((reply.text or "").split()),
        },
    }


@contextmanager
def fake_openai(script: Callable[[dict[str, Any], int], Reply]) -> Iterator[FakeOpenAI]:
    """Start the server on a free port; stop it on exit.

    ``script(body, n)`` gets the request body and how many times (1, 2, ...) a request with the
    same last user message has arrived, so "fail twice, then answer" is easy to write.
    """
    state = FakeOpenAI(base_url="", script=script)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

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
            reply = state.script(body, n)
            if reply.hang:
                time.sleep(reply.hang)
            if reply.raw is not None:
                self._send(reply.status, reply.raw, reply.headers)
            elif reply.status != 200:
                err = {"error": {"message": f"scripted {reply.status}", "type": "fake"}}
                self._send(reply.status, json.dumps(err).encode(), reply.headers)
            else:
                payload = json.dumps(_completion(body, reply)).encode()
                self._send(200, payload, reply.headers)

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
