"""The scripted OpenAI-compatible server (s3kg_core.llm.fault_server), through the real client."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.llm.fault_server import Reply, fake_openai, last_user_message


def _post(base_url: str, body: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(
        base_url + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _ask(text: str, **extra) -> dict:
    return {"messages": [{"role": "user", "content": text}], **extra}


def test_the_script_sees_how_often_a_prompt_came_and_the_server_records_it():
    with fake_openai(lambda body, n: Reply(status=503) if n == 1 else Reply("fine")) as server:
        first, _ = _post(server.base_url, _ask("q1"))
        second, payload = _post(server.base_url, _ask("q1"))
        assert (first, second) == (503, 200)
        assert json.loads(payload)["choices"][0]["message"]["content"] == "fine"
        assert server.count("q1") == 2 and server.count("q2") == 0
        assert len(server.times("q1")) == 2


def test_a_stream_is_sent_as_server_sent_events_ending_in_done():
    with fake_openai(lambda body, n: Reply("two words")) as server:
        status, payload = _post(server.base_url, _ask("q", stream=True))
    text = payload.decode()
    assert status == 200 and text.rstrip().endswith("data: [DONE]")
    words = [
        json.loads(line[6:])["choices"][0]["delta"].get("content", "")
        for line in text.splitlines()
        if line.startswith("data: {") and json.loads(line[6:])["choices"]
    ]
    assert "".join(words).strip() == "two words"


def test_a_single_worker_server_serves_one_request_at_a_time():
    with fake_openai(lambda body, n: Reply("ok", hang=0.3), workers=1) as server:
        threads = [
            threading.Thread(target=_post, args=(server.base_url, _ask(f"q{i}"))) for i in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert server.served == 3 and server.busy >= 2


def test_workers_other_than_one_are_refused_and_other_paths_are_404():
    with pytest.raises(ConfigError), fake_openai(lambda body, n: Reply(), workers=2):
        pass
    with fake_openai(lambda body, n: Reply()) as server:
        req = urllib.request.Request(server.base_url + "/embeddings", data=b"{}")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 404
    assert last_user_message({"messages": [{"role": "system", "content": "s"}]}) == ""


def test_a_gated_reply_waits_for_its_event_while_others_are_answered():
    """Issue 61: the order of replies is the test's (an event), not a hang timed to be last."""
    gate = threading.Event()

    def script(body, n):
        return Reply(text="held", gate=gate) if last_user_message(body) == "held" else Reply()

    replies: dict[str, tuple[int, bytes]] = {}
    with fake_openai(script) as server:
        held = threading.Thread(
            target=lambda: replies.__setitem__("held", _post(server.base_url, _ask("held")))
        )
        held.start()
        assert _post(server.base_url, _ask("free"))[0] == 200  # answered while one is held
        assert held.is_alive() and "held" not in replies  # the gate is not set: still waiting
        gate.set()
        held.join()
    assert replies["held"][0] == 200 and b"held" in replies["held"][1]
