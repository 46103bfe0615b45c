"""s3kg_core.llm.client: the OpenAI-compatible client against a local HTTP server (fake_openai)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import pytest
from fake_openai import Reply, fake_openai, last_user_message

from s3kg_core.errors import ConfigError, EndpointError
from s3kg_core.llm.client import (
    ChatRequest,
    ChatResult,
    LLMClient,
    LLMSettings,
    MemoryCache,
    RateLimiter,
    endpoint_configured,
)


def _request(text: str, **kwargs) -> ChatRequest:
    return ChatRequest.build(
        [("system", "be brief"), ("user", text)], prompt_version="t1", **kwargs
    )


def _client(base_url: str, cache=None, **kwargs) -> LLMClient:
    options = {"timeout": 5.0, "max_retries": 2, "concurrency": 4, **kwargs}
    return LLMClient(LLMSettings(model="fake-model", base_url=base_url, **options), cache=cache)


def _echo(body, n):
    return Reply(text="echo: " + last_user_message(body))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- settings ------------------------------------------------------------------------------------


def test_settings_from_env_and_flags(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env-host:1234/v1/")
    monkeypatch.setenv("S3KG_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret")
    s = LLMSettings.from_env()
    assert (s.base_url, s.model, s.api_key) == (
        "http://env-host:1234/v1",
        "env-model",
        "sk-env-secret",
    )
    s = LLMSettings.from_env(base_url="http://flag:1/v1", model="flag-model", api_key="k")
    assert (s.base_url, s.model, s.api_key) == ("http://flag:1/v1", "flag-model", "k")
    assert endpoint_configured()


def test_settings_without_endpoint_or_model_say_what_to_set(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    assert not endpoint_configured()
    with pytest.raises(ConfigError, match=r"--base-url.*OPENAI_BASE_URL"):
        LLMSettings.from_env(model="m")
    with pytest.raises(ConfigError, match="--model or set S3KG_MODEL"):
        LLMSettings.from_env(base_url="http://localhost:1/v1")
    with pytest.raises(ConfigError, match="http"):
        LLMSettings(model="m", base_url="localhost:8000")


def test_the_key_never_shows_and_credentials_never_enter_cache_keys():
    a = LLMSettings(model="m", base_url="http://user:pw@host:8000/v1/?x=1", api_key="sk-AAA")
    b = LLMSettings(model="m", base_url="http://host:8000/v1", api_key="sk-BBB")
    assert "sk-AAA" not in repr(a) and "pw" not in repr(a)
    assert a.endpoint == b.endpoint == "http://host:8000/v1"
    req = _request("q")
    assert req.cache_key(a) == req.cache_key(b)
    assert "sk-" not in req.cache_key(a)


def test_cache_key_changes_with_every_part_that_changes_the_answer():
    s = LLMSettings(model="m", base_url="http://h:1/v1")
    base = _request("q", temperature=0.0, seed=1)
    variants = [
        _request("q2", temperature=0.0, seed=1),
        _request("q", temperature=0.7, seed=1),
        _request("q", temperature=0.0, seed=2),
        ChatRequest.build([("system", "be brief"), ("user", "q")], prompt_version="t2", seed=1),
        _request("q", temperature=0.0, seed=1, json_mode=True),
    ]
    keys = {v.cache_key(s) for v in variants} | {base.cache_key(s)}
    assert len(keys) == len(variants) + 1
    other_model = LLMSettings(model="m2", base_url="http://h:1/v1")
    assert base.cache_key(other_model) != base.cache_key(s)


# -- answers and the cache -----------------------------------------------------------------------


def test_answers_come_back_in_order_with_tokens_and_latency():
    with fake_openai(_echo) as server:
        client = _client(server.base_url)
        results = client.chat_many([_request(f"question {i}", seed=7) for i in range(6)])
        assert [r.text for r in results] == [f"echo: question {i}" for i in range(6)]
        assert all(r.status == "ok" and not r.cached for r in results)
        assert all(r.prompt_tokens and r.completion_tokens == 3 for r in results)
        assert all(r.latency_s is not None and r.latency_s >= 0 for r in results)
        body = server.requests[0][1]
        assert body["model"] == "fake-model" and body["seed"] == 7 and body["temperature"] == 0.0


def test_a_rerun_is_served_from_the_cache_without_calling_the_server():
    cache = MemoryCache()
    with fake_openai(_echo) as server:
        first = _client(server.base_url, cache).chat_many([_request(f"q{i}") for i in range(5)])
        assert server.count() == 5
        progress = []
        again = _client(server.base_url, cache).chat_many(
            [_request(f"q{i}") for i in range(5)], progress=lambda d, t: progress.append((d, t))
        )
        assert server.count() == 5  # nothing new was sent
    assert [r.text for r in again] == [r.text for r in first]
    assert all(r.cached for r in again)
    assert progress[-1] == (5, 5)


def test_identical_requests_in_one_call_are_sent_once():
    with fake_openai(_echo) as server:
        results = _client(server.base_url).chat_many([_request("same")] * 4)
        assert server.count("same") == 1
    assert {r.text for r in results} == {"echo: same"}


def test_429_with_retry_after_is_waited_out_and_then_answered():
    def script(body, n):
        if "limited" in last_user_message(body) and n == 1:
            return Reply(status=429, headers={"Retry-After": "1"})
        return _echo(body, n)

    cache = MemoryCache()
    with fake_openai(script) as server:
        results = _client(server.base_url, cache).chat_many([_request("limited"), _request("free")])
        times = server.times("limited")
    assert [r.status for r in results] == ["ok", "ok"]
    assert len(times) == 2
    assert times[1] - times[0] >= 0.9  # the server's Retry-After: 1 was honoured


def test_500_is_retried_a_bounded_number_of_times_then_recorded_and_never_cached():
    def script(body, n):
        if "broken" in last_user_message(body):
            return Reply(status=500)
        return _echo(body, n)

    cache = MemoryCache()
    with fake_openai(script) as server:
        results = _client(server.base_url, cache, max_retries=2).chat_many(
            [_request("broken"), _request("fine")]
        )
        assert server.count("broken") == 3  # one try and two retries
        assert results[0].status == "error" and results[0].error.startswith("HTTP 500")
        assert results[1].status == "ok"
        rerun = _client(server.base_url, cache, max_retries=0).chat_many(
            [_request("broken"), _request("fine")]
        )
        assert server.count("broken") == 4  # the error was not cached: tried again
        assert server.count("fine") == 1  # the success was
    assert rerun[1].cached and not rerun[0].cached


def test_500_then_success_recovers_within_the_retries():
    def script(body, n):
        return Reply(status=503) if n <= 2 else _echo(body, n)

    with fake_openai(script) as server:
        result = _client(server.base_url, max_retries=2).chat(_request("flaky"))
        assert server.count("flaky") == 3
    assert result.status == "ok" and result.text == "echo: flaky"


def test_a_request_hanging_past_the_timeout_is_recorded_as_a_timeout():
    def script(body, n):
        if "slow" in last_user_message(body):
            return Reply(hang=3.0)
        return _echo(body, n)

    with fake_openai(script) as server:
        results = _client(server.base_url, timeout=0.5, max_retries=1).chat_many(
            [_request("slow"), _request("quick")]
        )
        assert server.count("slow") == 2
    assert results[0].status == "error" and results[0].error.startswith("timeout")
    assert results[1].status == "ok"


def test_empty_and_refused_answers_are_recorded_as_such():
    def script(body, n):
        text = last_user_message(body)
        if text == "blank":
            return Reply(text="   ")
        if text == "nothing":
            return Reply(text=None)
        if text == "refuse":
            return Reply(text=None, refusal="I can't help with that.")
        if text == "filtered":
            return Reply(text="", finish_reason="content_filter")
        return _echo(body, n)

    with fake_openai(script) as server:
        results = _client(server.base_url).chat_many(
            [_request(t) for t in ("blank", "nothing", "refuse", "filtered", "fine")]
        )
    assert [r.status for r in results] == ["empty", "empty", "refused", "refused", "ok"]
    assert results[2].error == "I can't help with that."


def test_empty_refused_and_unusable_replies_are_not_cached_and_asked_again_d5():
    """Issue 17 (D5): empty, refused and unparseable replies were cached as successes, so a
    rerun only read them back and never asked again."""

    def script(body, n):
        text = last_user_message(body)
        if text == "blank":
            return Reply(text="  ")
        if text == "refuse":
            return Reply(text=None, refusal="No.")
        if text == "garbled":
            return Reply(text="{not json" if n == 1 else "{}")
        return _echo(body, n)

    def usable(result: ChatResult) -> bool:
        return result.text != "{not json"

    cache = MemoryCache()
    requests = [_request(t) for t in ("blank", "refuse", "garbled", "fine")]
    with fake_openai(script) as server:
        first = _client(server.base_url, cache).chat_many(requests, usable=usable)
        assert [r.status for r in first] == ["empty", "refused", "ok", "ok"]
        settings = _client(server.base_url).settings
        assert set(cache.get_many([r.cache_key(settings) for r in requests])) == {
            requests[3].cache_key(settings)
        }
        again = _client(server.base_url, cache).chat_many(requests, usable=usable)
        assert [server.count(t) for t in ("blank", "refuse", "garbled", "fine")] == [2, 2, 2, 1]
    assert [r.cached for r in again] == [False, False, False, True]
    assert again[2].text == "{}"


def test_a_cached_reply_that_is_not_usable_is_not_served_d5():
    """Issue 17 (D5): a database whose cache already holds a refused or unparseable reply (made
    before the fix) asks again instead of serving it; the usable answer replaces it."""
    cache = MemoryCache()
    with fake_openai(_echo) as server:
        client = _client(server.base_url, cache)
        refused, garbled = _request("refuse"), _request("garbled")
        cache.put_many(
            [
                (refused.cache_key(client.settings), refused, ChatResult("refused", error="no")),
                (garbled.cache_key(client.settings), garbled, ChatResult("ok", text="{oops")),
            ]
        )
        results = client.chat_many([refused, garbled], usable=lambda r: r.text != "{oops")
        assert server.count() == 2
    assert [r.text for r in results] == ["echo: refuse", "echo: garbled"]
    assert not any(r.cached for r in results)
    kept = cache.get_many([garbled.cache_key(client.settings)])
    assert [r.text for r in kept.values()] == ["echo: garbled"]


def test_replies_are_passed_on_as_they_arrive_and_cached_once_stored_d7():
    """Issue 17 (D7): replies were cached, and handed back, only once the whole batch was in,
    so a process killed mid-batch lost every reply it had paid for. Issue 28 (2): a reply was
    cached before the caller stored it, so one the store rejected was replayed by every rerun;
    now each group is cached right after ``on_results`` returns. The slow reply is held by the
    server until the two fast ones have been handed over (an event, not a clock: a reply timed
    to be last was not, on a loaded machine, issue 61)."""
    release = threading.Event()

    def script(body, n):
        if last_user_message(body) == "slow":
            return Reply(text="late", gate=release)
        return _echo(body, n)

    cache = MemoryCache()
    requests = [_request(t) for t in ("slow", "a", "b", "c")]
    with fake_openai(script) as server:
        client = _client(server.base_url, cache)
        client.chat(requests[3])  # "c" is cached
        keys = [r.cache_key(client.settings) for r in requests]
        calls: list[tuple[list[int], bool, bool]] = []

        def on_results(arrived):
            indices = [i for i, _ in arrived]
            cached = set(cache.get_many([keys[i] for i in indices]))
            earlier = {keys[i] for c in calls for i in c[0] if i != 3}
            calls.append(
                (
                    indices,
                    cached == {keys[i] for i in indices},
                    earlier <= set(cache.get_many(keys)),
                )
            )
            if {1, 2} <= {i for c in calls for i in c[0]}:
                release.set()  # the fast replies are in: now the slow one may come

        results = client.chat_many(requests, on_results=on_results)
        first_fresh = calls[1]
    assert calls[0][:2] == ([3], True)  # the cache hit, at once
    assert 0 not in first_fresh[0] and not first_fresh[1]  # fast replies, not cached yet
    assert all(earlier for _, _, earlier in calls)  # each group cached once it was stored
    assert sorted(i for indices, _, _ in calls for i in indices) == [0, 1, 2, 3]
    assert calls[-1][0] == [0]
    assert set(cache.get_many(keys)) == set(keys)
    assert [r.text for r in results] == ["late", "echo: a", "echo: b", "echo: c"]


def test_a_group_the_caller_fails_to_store_is_not_cached_28_2():
    """Issue 28 (2): a reply the store rejected was cached first, so every rerun replayed it
    and crashed again without a request."""
    cache = MemoryCache()
    with fake_openai(_echo) as server:
        client = _client(server.base_url, cache, concurrency=1)

        def reject(arrived):
            raise ValueError("the store rejected it")

        with pytest.raises(ValueError, match="rejected"):
            client.chat_many([_request("poison")], on_results=reject)
        assert cache.get_many([_request("poison").cache_key(client.settings)]) == {}
        with contextlib.suppress(ValueError), client.deferred_cache():
            client.chat(_request("held"))
            raise ValueError("the KGs of this batch could not be stored")
        assert cache.get_many([_request("held").cache_key(client.settings)]) == {}
        with client.deferred_cache():
            client.chat(_request("held"))
            assert cache.get_many([_request("held").cache_key(client.settings)]) == {}
        assert server.count("held") == 2
    assert [
        r.text for r in cache.get_many([_request("held").cache_key(client.settings)]).values()
    ] == ["echo: held"]


def test_refresh_asks_again_and_replaces_the_cached_reply():
    cache = MemoryCache()
    with fake_openai(lambda body, n: Reply(text=f"reply {n}")) as server:
        first = _client(server.base_url, cache).chat(_request("q"))
        settings = _client(server.base_url).settings
        client = LLMClient(settings, cache=cache, refresh=True)
        fresh = client.chat(_request("q"))
        assert client.with_settings(timeout=3.0).refresh
        served = _client(server.base_url, cache).chat(_request("q"))
        assert server.count("q") == 2
    assert (first.text, fresh.text, served.text) == ("reply 1", "reply 2", "reply 2")
    assert not fresh.cached and served.cached


def test_a_malformed_response_body_is_an_error_not_a_crash():
    def script(body, n):
        return Reply(raw=b"<html>gateway</html>")

    with fake_openai(script) as server:
        result = _client(server.base_url, max_retries=0).chat(_request("q"))
    assert result.status == "error"
    assert result.error


def test_an_endpoint_that_is_down_gives_one_clear_error_after_the_retries():
    url = f"http://127.0.0.1:{_free_port()}/v1"
    client = _client(url, max_retries=1)
    with pytest.raises(EndpointError) as info:
        client.chat_many([_request(f"q{i}") for i in range(5)])
    message = str(info.value)
    assert url in message and "fake-model" in message and "connection error" in message.lower()
    assert "after 1 retries" in message


def test_a_rejected_key_stops_the_run_but_keeps_what_was_cached():
    def script(body, n):
        if last_user_message(body).startswith("late"):
            return Reply(status=401)
        return _echo(body, n)

    cache = MemoryCache()
    with fake_openai(script) as server:
        client = _client(server.base_url, cache, concurrency=1)
        client.chat_many([_request("early")])
        with pytest.raises(EndpointError, match="HTTP 401"):
            client.chat_many([_request("late 1"), _request("late 2")])
        assert server.count("late") == 1  # the second was not sent after a fatal answer
    assert "early" in {
        r.text.removeprefix("echo: ")
        for r in cache.get_many([_request("early").cache_key(client.settings)]).values()
    }


def test_concurrency_limit_is_respected():
    in_flight = 0
    peak = 0
    lock = threading.Lock()

    def script(body, n):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.2)
        with lock:
            in_flight -= 1
        return _echo(body, n)

    with fake_openai(script) as server:
        results = _client(server.base_url, concurrency=2).chat_many(
            [_request(f"q{i}") for i in range(8)]
        )
    assert all(r.ok for r in results)
    assert 1 <= peak <= 2


# -- rate limiter --------------------------------------------------------------------------------


def test_rate_limiter_spaces_requests_evenly():
    now = [100.0]
    slept = []

    def sleep(s):
        slept.append(s)
        now[0] += s

    limiter = RateLimiter(120, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        limiter.acquire()
    assert slept == pytest.approx([0.5, 0.5, 0.5, 0.5])
    with pytest.raises(ConfigError):
        RateLimiter(0)


def test_requests_per_minute_setting_limits_the_client():
    """The setting reaches the client: 300/min lets requests start 0.2 s apart (0.6 s for four).

    Regression: at 600/min (0.1 s apart) a first request that arrived 0.09 s late on a busy
    machine (its thread, its new connection) left a span of 0.21 s, under the 0.25 asked; the
    exact spacing is the fake-clock test's above, this one allows 0.2 s of such lateness."""
    with fake_openai(_echo) as server:
        _client(server.base_url, requests_per_minute=300, concurrency=4).chat_many(
            [_request(f"q{i}") for i in range(4)]
        )
        times = sorted(server.times("q"))
    assert len(times) == 4
    assert times[-1] - times[0] >= 0.4


def test_chat_result_round_trips_through_json():
    result = ChatResult("ok", text="t", finish_reason="stop", latency_s=0.5, prompt_tokens=3)
    back = ChatResult.from_json(result.to_json())
    assert back.cached and back.text == "t" and back.prompt_tokens == 3


# Regression (issue 17, D6): to_json dropped ``error``, so a refusal stored as
# "failed: refused (I cannot help with that.)" read back from the cache as "refused (None)".
@pytest.mark.parametrize("status", ["refused", "empty", "error"])
def test_chat_result_json_keeps_the_error(status):
    result = ChatResult(status, error="I cannot help with that.", finish_reason="content_filter")
    back = ChatResult.from_json(result.to_json())
    assert back.error == "I cannot help with that."
    assert back.failure() == result.failure()
    assert {**back.__dict__, "cached": False} == result.__dict__


# -- hostile replies (issue 28) ------------------------------------------------------------------


def test_lone_surrogates_and_absurd_token_counts_are_cleaned_at_the_boundary_28_2():
    """Issue 28 (2b, 2c): an answer with a lone surrogate and token counts of 10^12 or "many"
    reached the store raw (ConversionException / UnicodeEncodeError); both streamed and not."""

    def script(body, n):
        usage = {"prompt_tokens": 10**12, "completion_tokens": "many", "total_tokens": -1}
        stream = None if "stream" in last_user_message(body) else False
        return Reply(text="bad \ud800 text", usage=usage, stream=stream)

    with fake_openai(script) as server:
        results = _client(server.base_url).chat_many([_request("stream"), _request("plain")])
    for result in results:
        assert result.status == "ok" and result.text == "bad \ufffd text"
        assert result.prompt_tokens is None and result.completion_tokens is None
        result.text.encode("utf-8")  # encodable
        assert result.model_id == "fake-model"


def test_a_server_dripping_bytes_is_cut_at_the_total_deadline_28_4():
    """Issue 28 (4): a server that drips one byte a second kept a 3 s timeout waiting past
    100 s: the timeout bounded each read, not the request."""

    def script(body, n):
        return Reply(text="slowly " * 20, drip=0.2)

    with fake_openai(script) as server:
        started = time.monotonic()
        result = _client(server.base_url, timeout=1.0, max_retries=0).chat(_request("drip"))
        took = time.monotonic() - started
    assert result.status == "error" and result.error.startswith("timeout")
    assert "within 1 s" in result.error
    assert took < 3.0


def test_a_gzip_bomb_is_refused_past_the_size_cap_without_inflating_it_28_4():
    """Issue 28 (4): a gzip body of 0.8 MB on the wire took 1.76 GB of memory."""
    bomb = b'{"choices": [{"message": {"content": "' + b"a" * (64 * 1024 * 1024) + b'"}}]}'

    def script(body, n):
        return Reply(raw=bomb, gzip=True)

    with fake_openai(script) as server:
        client = _client(server.base_url, max_retries=2, max_reply_bytes=1024 * 1024)
        result = client.chat(_request("bomb"))
        assert server.count("bomb") == 1  # too large is final: not retried
    assert result.status == "error" and "larger than 1,048,576 bytes" in result.error


def test_an_answer_far_past_max_tokens_is_capped_28_4():
    """Issue 28 (4): a 50 MB answer was stored although --max-tokens was 512."""
    from s3kg_core.llm.client import text_cap

    def script(body, n):
        return Reply(text="word " * 200_000)  # 1 MB

    with fake_openai(script) as server:
        result = _client(server.base_url).chat(_request("long", max_tokens=16))
    assert result.status == "ok" and result.finish_reason == "length"
    assert len(result.text) == text_cap(16)


def test_a_redirect_to_another_origin_is_refused_with_a_clear_error_28_11():
    """Issue 28 (11): a 307 to another origin was followed silently (with the key)."""
    with fake_openai(_echo) as other:

        def script(body, n):
            return Reply(redirect=f"{other.base_url}/chat/completions")

        with fake_openai(script) as server:
            client = _client(server.base_url, max_retries=0)
            with pytest.raises(EndpointError, match="redirected to another origin") as info:
                client.chat(_request("q"))
        assert other.count() == 0
    assert other.base_url.removesuffix("/v1") in str(info.value)


def test_a_redirect_within_the_same_origin_is_followed():
    with fake_openai(_echo) as server:
        target = f"{server.base_url}/chat/completions"

        def script(body, n):
            return Reply(redirect=target) if n == 1 else _echo(body, n)

        server.script = script
        result = _client(server.base_url).chat(_request("moved"))
    assert result.status == "ok" and result.text == "echo: moved"


def test_a_server_that_ignores_stream_is_read_as_plain_json():
    with fake_openai(lambda body, n: Reply(text="whole", stream=False)) as server:
        result = _client(server.base_url).chat(_request("q"))
        assert server.requests[0][1]["stream"] is True
    assert result.status == "ok" and result.text == "whole" and result.completion_tokens == 1


# -- adaptive concurrency (issue 29) -------------------------------------------------------------


@pytest.mark.slow  # wall-clock dependent (1 s replies read as queued or not): under a loaded
# machine it failed (busy 4 <= 2, a CI run beside three other jobs); `make test-all` runs it
# until issue 61 gives the adaptive limit a fake clock
def test_a_single_worker_server_gets_one_request_at_a_time_after_one_probe():
    # 1 s per reply, so a queued reply (2 s) reads as queued beside the CPU noise of a busy
    # machine (regression: at 0.3 s, with three test processes on two cores, the probe's queued
    # reply did not, and the limit grew to 4)
    def script(body, n):
        return Reply(text="done", hang=1.0)

    with fake_openai(script, workers=1) as server:
        client = _client(server.base_url, concurrency=8, max_retries=0)
        results = client.chat_many([_request(f"q{i}") for i in range(8)])
        assert server.count() == 8  # one request per answer, no retries
        assert server.busy <= 2  # probed at 2 once, never more
    assert all(r.ok for r in results)
    assert client.limit.limit == 1


def test_a_parallel_server_lets_the_limit_grow_to_the_concurrency():
    # 1 s per reply: a first token is "queued" past 1.5x the quickest, so the CPU noise of a
    # busy machine stays well under what would read as congestion (regressions: at 0.1 s one
    # late reply under load left the limit at 3; at 0.4 s, with four test processes on two
    # cores, at 1)
    with fake_openai(lambda body, n: Reply(text="done", hang=1.0)) as server:
        client = _client(server.base_url, concurrency=4, max_retries=0)
        results = client.chat_many([_request(f"q{i}") for i in range(24)])
    assert all(r.ok for r in results)
    assert client.limit.limit == 4 and client.stats.peak_in_flight == 4


@pytest.mark.slow  # wall-clock dependent (1 s replies read as queued or not): under a loaded
# machine it failed (busy 4 <= 2, a CI run beside three other jobs); `make test-all` runs it
# until issue 61 gives the adaptive limit a fake clock
def test_a_timed_out_request_is_not_retried_while_the_server_still_works_on_it():
    """Issue 29: retries of timed-out requests jammed a single-worker server that kept
    generating for the abandoned ones (24 requests logged, 1 finished)."""

    def script(body, n):
        return Reply(text="done", hang=0.8 if n == 1 else 0.2)

    with fake_openai(script, workers=1) as server:
        client = _client(server.base_url, timeout=0.5, max_retries=2, concurrency=4)
        results = client.chat_many([_request(f"q{i}") for i in range(3)])
        assert server.busy <= 2
    assert all(r.ok for r in results)
    assert client.stats.timeouts >= 1
    assert client.stats.sent == server.count() <= 6
