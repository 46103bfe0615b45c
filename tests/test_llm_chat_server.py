"""s3kg_core.llm.chat_server: the server of ``s3kg llm serve``, on a tiny character-level model.

Every test starts its own server on 127.0.0.1 port 0 (conftest's ``char_model``: a random
two-layer Llama that spells any JSON, loaded in a second) and bounds its clients in number and
in time.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request

import jsonschema
import pytest
from test_llm_constrained import nested_arrays

from s3kg_core.errors import ConfigError
from s3kg_core.llm.chat_server import ChatServer, ServeLimits

KG_SCHEMA = {
    "type": "object",
    "properties": {
        "kg": {
            "type": "array",
            "items": {
                "type": "array",
                "items": {"type": "string", "minLength": 1, "maxLength": 6},
                "minItems": 3,
                "maxItems": 3,
            },
            "minItems": 1,
            "maxItems": 2,
        }
    },
    "required": ["kg"],
    "additionalProperties": False,
}
LONG = 50_000  # tokens: minutes of generation, so only a cancel ends it within the test


def _post(url: str, body: dict, timeout: float = 30) -> tuple[int, dict, dict]:
    """Status, JSON body and headers of a POST to the chat endpoint."""
    request = urllib.request.Request(
        f"{url}/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, json.load(resp), dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), dict(exc.headers)


def _chat(content: str = "hi", **extra) -> dict:
    return {"messages": [{"role": "user", "content": content}], **extra}


def _open(server: ChatServer, body: dict) -> socket.socket:
    """A raw client that sends ``body`` and then does not read: closing it is hanging up."""
    data = json.dumps(body).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Content-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    return sock


def _until(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


# -- response_format (issue 43 item 1) ------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_a_json_schema_in_response_format_is_honoured(char_model, stream):
    """Issue 43: the packaged model never closed free-form JSON; the server now holds every
    token to the schema, so a random model's reply parses and validates."""
    fmt = {"type": "json_schema", "json_schema": {"name": "kg", "schema": KG_SCHEMA}}
    import openai

    with ChatServer(char_model) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
        for seed in range(3):
            kwargs = {"temperature": 1.0, "seed": seed, "max_tokens": 300, "response_format": fmt}
            messages = [{"role": "user", "content": f"graph {seed}"}]
            if stream:
                chunks = client.chat.completions.create(
                    model=server.model, messages=messages, stream=True, **kwargs
                )
                text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            else:
                reply = client.chat.completions.create(
                    model=server.model, messages=messages, **kwargs
                )
                assert reply.choices[0].finish_reason == "stop"
                text = reply.choices[0].message.content
            jsonschema.validate(json.loads(text), KG_SCHEMA)


def test_json_object_holds_the_reply_to_a_json_object(char_model):
    """An object has no bound: a random model may not close it in time, but it starts one and
    whatever it wrote is the start of JSON (free text would not be)."""
    with ChatServer(char_model) as server:
        status, body, _ = _post(
            server.base_url, _chat(max_tokens=40, response_format={"type": "json_object"})
        )
        free, plain, _ = _post(server.base_url, _chat(max_tokens=40))
    assert status == 200 == free
    text = body["choices"][0]["message"]["content"]
    assert text.lstrip().startswith("{")
    assert not plain["choices"][0]["message"]["content"].lstrip().startswith("{")


def test_a_bad_response_format_is_a_400_in_openai_shape(char_model):
    with ChatServer(char_model) as server:
        status, body, _ = _post(server.base_url, _chat(response_format={"type": "yaml"}))
    assert status == 400
    assert body["error"]["param"] == "response_format"
    assert "'text', 'json_object' or 'json_schema'" in body["error"]["message"]


def test_free_text_without_response_format_and_the_model_list(char_model):
    with ChatServer(char_model) as server:
        status, body, _ = _post(server.base_url, _chat(max_tokens=5, model=server.model))
        with urllib.request.urlopen(f"{server.base_url}/models", timeout=10) as resp:
            models = json.load(resp)["data"]
        other, error, _ = _post(server.base_url, _chat(model="gpt-9"))
    assert status == 200 and body["usage"]["completion_tokens"] == 5
    assert body["choices"][0]["finish_reason"] == "length"
    assert [m["id"] for m in models] == [str(char_model)]
    assert other == 404 and error["error"]["code"] == "model_not_found"


# -- bounds (issue 44 item 8) ---------------------------------------------------------------------


def test_a_huge_prompt_is_refused_at_once_with_a_400(char_model):
    """Issue 44: one 100 KB prompt kept `s3kg llm serve` busy for over 6 minutes (memory 0.6 ->
    2.5 GB). Now a prompt over --max-prompt-tokens is a 400 in OpenAI's shape, at once."""
    with ChatServer(char_model, limits=ServeLimits(max_prompt_tokens=500)) as server:
        started = time.monotonic()
        status, body, _ = _post(server.base_url, _chat("x" * 100_000), timeout=10)
        took = time.monotonic() - started
        ok, _, _ = _post(server.base_url, _chat("y" * 300, max_tokens=3), timeout=10)
    assert status == 400 and took < 5
    assert body["error"]["code"] == "context_length_exceeded"
    assert body["error"]["type"] == "invalid_request_error"
    assert "at most 500 (s3kg llm serve --max-prompt-tokens)" in body["error"]["message"]
    assert ok == 200


def test_a_body_over_the_limit_is_a_413(char_model):
    with ChatServer(char_model, limits=ServeLimits(max_body_bytes=10_000)) as server:
        status, body, _ = _post(server.base_url, _chat("z" * 20_000), timeout=10)
    assert status == 413 and body["error"]["code"] == "request_too_large"


@pytest.mark.parametrize("stream", [False, True])
def test_a_client_that_hangs_up_stops_its_generation(char_model, stream):
    """Issue 44: a client that gave up left the server generating for minutes and every new
    request timed out. Now generation stops within a second of the hang-up, and the next
    request is answered at once."""
    limits = ServeLimits(max_new_tokens=LONG)
    with ChatServer(char_model, limits=limits) as server:
        sock = _open(server, _chat("long", max_tokens=LONG, stream=stream))
        assert _until(lambda: server._pending == 1, 5)
        time.sleep(0.5)  # generating now
        sock.close()
        assert _until(lambda: server.stats.cancelled == 1, 5)
        started = time.monotonic()
        status, _, _ = _post(server.base_url, _chat("next", max_tokens=3), timeout=15)
        took = time.monotonic() - started
    assert status == 200 and took < 5
    assert server.stats.answered == 1  # the abandoned one was never finished


def test_a_full_queue_answers_429_with_retry_after_and_recovers(char_model):
    """Issue 44: 50 clients for 30 s left the next request waiting 152 s. Now at most
    --max-queue requests wait behind the one generating; the next gets a 429 with Retry-After
    at once (LLMClient honours it), and once the clients leave the server is free."""
    limits = ServeLimits(max_new_tokens=LONG, max_queue=1)
    with ChatServer(char_model, limits=limits) as server:
        generating = _open(server, _chat("a", max_tokens=LONG))
        assert _until(lambda: server._pending == 1, 5)
        waiting = _open(server, _chat("b", max_tokens=LONG))
        assert _until(lambda: server._pending == 2, 5)
        started = time.monotonic()
        status, body, headers = _post(server.base_url, _chat("c", max_tokens=3), timeout=10)
        assert status == 429 and time.monotonic() - started < 3
        assert body["error"]["type"] == "rate_limit_error"
        assert 1 <= int(headers["Retry-After"]) <= 60
        generating.close()
        waiting.close()
        assert _until(lambda: server._pending == 0, 5)
        status, _, _ = _post(server.base_url, _chat("d", max_tokens=3), timeout=10)
    assert status == 200


def test_a_flood_of_clients_gets_answers_or_429s_quickly_and_leaves_the_server_free(char_model):
    """50 clients at once (issue 44's flood) on a queue of 2: each is answered or refused
    within seconds, and the next request is answered at once."""
    limits = ServeLimits(max_queue=2)
    results: list[tuple[int, float]] = []
    lock = threading.Lock()

    with ChatServer(char_model, limits=limits) as server:

        def client(i: int) -> None:
            started = time.monotonic()
            status, _, _ = _post(server.base_url, _chat(f"q{i}", max_tokens=200), timeout=30)
            with lock:
                results.append((status, time.monotonic() - started))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(50)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        started = time.monotonic()
        status, _, _ = _post(server.base_url, _chat("after", max_tokens=3), timeout=10)
        after = time.monotonic() - started
    statuses = sorted({s for s, _ in results})
    assert len(results) == 50 and statuses == [200, 429]
    assert max(t for s, t in results if s == 429) < 5
    assert status == 200 and after < 5


def test_limits_are_checked():
    with pytest.raises(ConfigError, match="max_queue"):
        ServeLimits(max_queue=-1)
    with pytest.raises(ConfigError, match="max_prompt_tokens"):
        ServeLimits(max_prompt_tokens=0)


# -- every request checked before the work: length, parameters, schemas (issue 59, items 3, 7) ---


def _raw(server: ChatServer, head: bytes) -> tuple[socket.socket, int, bytes]:
    """Send a request head (no body) and read the answer; the socket, status and body."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.sendall(head)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection without an answer"
        data += chunk
    top, _, rest = data.partition(b"\r\n\r\n")
    length = int(next(
        line.split(b":", 1)[1] for line in top.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    ))  # fmt: skip
    while len(rest) < length:
        rest += sock.recv(65536)
    return sock, int(top.split()[1]), rest


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        (b"Content-Length: -1\r\n", 400),
        (b"Content-Length: -400000000\r\n", 400),
        (b"Content-Length: abc\r\n", 400),
        (b"Content-Length: 1e3\r\n", 400),
        (b"Content-Length: +5\r\n", 400),
        (b"Content-Length: 1_0\r\n", 400),  # int() reads it as 10
        (b"Content-Length: 5\r\nContent-Length: 7\r\n", 400),
        (b"Content-Length: " + b"9" * 5000 + b"\r\n", 400),
        (b"", 411),
        (b"Transfer-Encoding: chunked\r\n", 411),
    ],
)
def test_a_bad_content_length_is_refused_before_the_body_is_read(char_model, headers, status):
    """Regression: ``Content-Length: -1`` read the body to its end, past the 2 MB limit (400 MB
    sent grew the server by 410 MB, answered only when the client closed). The answer now
    comes with no body byte sent, the connection is closed (a body sent after it is refused by
    the socket, never read), and the next request is served."""
    with ChatServer(char_model) as server:
        head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + headers + b"\r\n"
        sock, got, body = _raw(server, head)
        with sock:
            assert got == status
            error = json.loads(body)["error"]
            assert error["type"] == "invalid_request_error" and "Content-Length" in error["message"]
            assert sock.recv(1) == b""  # closed: nothing more is read from this client
            with pytest.raises(OSError):
                for _ in range(64):  # 64 MB that the server never reads
                    sock.sendall(b"x" * 1_000_000)
        ok, reply, _ = _post(server.base_url, _chat(max_tokens=3))
    assert ok == 200 and reply["usage"]["completion_tokens"] == 3


def _schema_format(schema: dict) -> dict:
    return {"type": "json_schema", "json_schema": {"name": "x", "schema": schema}}


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"type": "bogus"},
        {"enum": []},
        {"not": {}},
        {"type": 5},
        {"type": "object", "properties": [1, 2]},
        nested_arrays(300),
        {"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},  # a loop of references
        {"type": "string", "pattern": "["},
        {"enum": [{"a": 1}]},
    ],
)
def test_a_schema_the_decoder_cannot_follow_is_a_400_naming_it(char_model, schema):
    """Regression: each was a 500 (some with pydantic's internals in the message)."""
    with ChatServer(char_model) as server:
        status, body, _ = _post(
            server.base_url, _chat(max_tokens=5, response_format=_schema_format(schema))
        )
        ok, _, _ = _post(server.base_url, _chat(max_tokens=3))
    assert status == 400, body
    message = body["error"]["message"]
    assert message.startswith("response_format.json_schema.schema")
    assert body["error"]["param"] == "response_format"
    assert "pydantic" not in message and "Traceback" not in message and "\n" not in message
    assert server.stats.refused == {400: 1} and ok == 200


@pytest.mark.parametrize(
    ("extra", "param", "message"),
    [
        ({"n": 2}, "n", "n must be 1: this server generates one choice per request"),
        ({"n": 0}, "n", "n must be 1"),
        ({"stop": ["x"] * 100_000}, "stop", "stop sequences are not supported by this server"),
        ({"stop": "\n"}, "stop", "stop sequences are not supported"),
        ({"seed": 2**70}, "seed", "seed must be a whole number from 0 to 2**63 - 1"),
        ({"seed": -1}, "seed", "seed must be a whole number"),
        ({"seed": 1.5}, "seed", "seed must be a whole number"),
        ({"seed": True}, "seed", "seed must be a whole number"),
    ],
)
def test_what_the_server_would_ignore_or_overflow_on_is_a_400(char_model, extra, param, message):
    """Regression: n > 1 and stop were ignored; seed 2**70 overflowed torch's generator (500)."""
    with ChatServer(char_model) as server:
        status, body, _ = _post(server.base_url, _chat(max_tokens=3, temperature=1.0, **extra))
        ok, _, _ = _post(server.base_url, _chat(max_tokens=3, n=1, stop=None, seed=2**63 - 1))
    assert status == 400 and body["error"]["param"] == param
    assert body["error"]["message"].startswith(message)
    assert ok == 200


UNFINISHABLE = [
    # a property required, none allowed: the decoder is stuck after the opening brace
    {"type": "object", "properties": {}, "required": ["zz"], "additionalProperties": False},
    # lm-format-enforcer fails inside (an object constant) and lets the sequence end at once
    {"const": {"a": 1}},
]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("schema", UNFINISHABLE)
def test_a_reply_the_schema_lets_go_no_further_is_length_never_stop(char_model, schema, stream):
    """Regression: a schema the decoder could not finish ended with the end-of-text token it
    forced, reported as ``finish_reason: "stop"`` with truncated JSON."""
    import openai

    with ChatServer(char_model) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="none", max_retries=0)
        kwargs = {"max_tokens": 200, "response_format": _schema_format(schema)}
        messages = [{"role": "user", "content": "x"}]
        if stream:
            chunks = list(client.chat.completions.create(
                model=server.model, messages=messages, stream=True, **kwargs
            ))  # fmt: skip
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            reason = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
        else:
            reply = client.chat.completions.create(model=server.model, messages=messages, **kwargs)
            text, reason = reply.choices[0].message.content, reply.choices[0].finish_reason
            assert reply.usage.completion_tokens < 200  # ended by the decoder, not the budget
    with pytest.raises(ValueError):
        json.loads(text)
    assert reason == "length"
