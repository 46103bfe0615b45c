"""Answer collection (s3kg_core.stages.collect) against the scripted local OpenAI server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fake_openai import Reply, fake_openai, last_user_message
from llm_helpers import ITEMS, make_dataset, toy_model
from store_helpers import REPO

from s3kg_core.cli import cli
from s3kg_core.errors import ConfigError, DatabaseLockedError, EndpointError
from s3kg_core.llm.cache import StoreCache
from s3kg_core.llm.client import LLMClient, LLMSettings
from s3kg_core.stages.collect import UNEXTRACTED, collect_answers
from s3kg_core.store.records import ItemRecord
from s3kg_core.store.store import Store


def _client(store: Store, url: str, **kw) -> LLMClient:
    options = {"timeout": 1.0, "max_retries": 1, "concurrency": 2, **kw}
    settings = LLMSettings(model="toy", base_url=url, **options)
    return LLMClient(settings, cache=StoreCache(store, settings))


def _answers(store: Store) -> list[tuple]:
    with store.connect() as con:
        return con.execute(
            "SELECT r.temperature, i.ext_id, a.answer, a.status, a.error, a.seed, a.truncated, "
            "a.prompt_tokens > 0, a.latency_s IS NOT NULL FROM answers a "
            "JOIN items i USING (item_id) JOIN runs r USING (run_id) ORDER BY 1, 2"
        ).fetchall()


def test_collects_one_run_per_temperature_with_answers_tokens_and_latency(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        report = collect_answers(
            store, _client(store, server.base_url), temperatures=[0.0, 0.7], seed=5
        )
        assert server.count() == 8
    assert report.asked == 8 and report.statuses == {"ok": 8} and not report.failures
    rows = _answers(store)
    assert len(rows) == 8
    assert {r[0] for r in rows} == {0.0, 0.7}
    first = {r[1]: r[2] for r in rows if r[0] == 0.0}
    assert first == {
        "q1": "Aspirin reduces fever.",
        "q2": "Curie was_born_in Warsaw.",
        "q3": "Sun heats earth.",
        "q4": "Shakespeare wrote Hamlet.",
    }
    assert all(r[3] == "ok" and r[5] == 5 and r[7] and r[8] for r in rows)
    with store.connect() as con:
        runs = con.execute("SELECT model, extractor, source, settings FROM runs").fetchall()
    assert {(m, e, s) for m, e, s, _ in runs} == {("toy", UNEXTRACTED, "collect")}
    assert '"seed": 5' in runs[0][3] and "api_key" not in runs[0][3]


def test_a_rerun_asks_nothing_and_failures_are_recorded_then_retried(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    items = [
        *ITEMS[:2],
        ItemRecord("bad", "Q?", "SERVERERROR here. More text.", "g"),
        ItemRecord("slow", "Q?", "HANG forever. More.", "g"),
        ItemRecord("limited", "Q?", "RATELIMIT once. Then fine.", "g"),
        ItemRecord("no", "Q?", "REFUSE this. Please.", "g"),
        ItemRecord("quiet", "Q?", "SILENT now. Yes.", "g"),
    ]
    make_dataset(store, items)
    with fake_openai(toy_model) as server:
        report = collect_answers(store, _client(store, server.base_url))
        assert report.statuses == {"ok": 3, "error": 2, "refused": 1, "empty": 1}
        timeout = "timeout (no complete reply within 1 s)"
        assert set(report.failures) == {"HTTP 500: scripted 500", timeout}
        assert "run the command again" in report.summary()
        got = {r[1]: (r[3], r[4]) for r in _answers(store)}
        assert got["bad"] == ("error", "HTTP 500: scripted 500")
        assert got["slow"] == ("error", timeout)
        assert got["limited"][0] == "ok"
        assert got["no"] == ("refused", "I will not answer that.")
        assert got["quiet"] == ("empty", None)
        sent = server.count()
        again = collect_answers(store, _client(store, server.base_url))
        # only the two failures are asked again; everything else is already stored
        assert again.asked == 2 and again.already_done == 5
        assert server.count() - sent == 2 * 2  # each: one try and one retry
    assert len(_answers(store)) == 7


def test_killed_collection_resumes_from_the_cache_without_calling_the_server(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url))
        with store.transaction() as con:  # as if killed after the responses were cached
            con.execute("DELETE FROM answers")
        sent = server.count()
        report = collect_answers(store, _client(store, server.base_url))
        assert server.count() == sent
    assert report.cached == 4 and len(_answers(store)) == 4


def test_long_contexts_are_truncated_with_a_flag(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    long = "Aspirin reduces fever. " + "word " * 500
    make_dataset(store, [ItemRecord("long", "Q?", long, "g"), ITEMS[0]])
    with fake_openai(toy_model) as server:
        report = collect_answers(store, _client(store, server.base_url), max_input_chars=200)
        sent = [b for _, b in server.requests]
    assert report.truncated == 1
    assert {r[1]: r[6] for r in _answers(store)} == {"long": True, "q1": False}
    assert max(len(b["messages"][1]["content"]) for b in sent) < 400


def test_limit_and_dataset_selection(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    make_dataset(store, name="one")
    make_dataset(store, name="two")
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url), datasets=["two"], limit=2)
    assert len(_answers(store)) == 2
    with pytest.raises(ConfigError, match=r"\['three'\].*'one', 'two'"):
        collect_answers(store, _client(store, "http://127.0.0.1:9/v1"), datasets=["three"])
    with pytest.raises(ConfigError, match="temperature"):
        collect_answers(store, _client(store, "http://127.0.0.1:9/v1"), temperatures=[3.0])


def test_endpoint_down_is_one_clear_error_and_keeps_what_was_stored(tmp_path):
    store = Store(tmp_path / "c.duckdb")
    make_dataset(store)
    with fake_openai(toy_model) as server:
        collect_answers(store, _client(store, server.base_url), limit=2)
        url = server.base_url
    with pytest.raises(EndpointError, match="connection error"):
        collect_answers(store, _client(store, url, max_retries=0))
    assert len(_answers(store)) == 2


def _stored_answers(db: Path) -> int | None:
    """How many answers are committed, or None while the collector holds the file."""
    try:
        with Store(db, read_only=True, lock_timeout=1.0).connect() as con:
            return int(con.execute("SELECT count(*) FROM answers").fetchall()[0][0])
    except DatabaseLockedError:
        return None


def test_kill_9_mid_batch_keeps_every_answer_received_and_the_rerun_pays_only_the_rest_d7(
    tmp_path,
):
    """Issue 17 (D7): a ``collect`` killed mid-batch had received 8 answers and stored none
    (answers and cache entries were written when the whole batch was back), so the rerun paid
    for all 20. Now each answer is stored as it arrives."""
    n, k = 20, 8
    db = tmp_path / "kill.duckdb"
    make_dataset(
        Store(db),
        [
            ItemRecord(f"q{i:02d}", f"Q{i}?", f"Thing{i} does stuff{i}. More.", "g")
            for i in range(n)
        ],
    )
    lock = threading.Lock()
    paid = {"first": 0, "rerun": 0}
    phase = {"name": "first"}

    def script(body, seen):
        with lock:
            if phase["name"] == "first" and paid["first"] >= k:
                return Reply(hang=300.0)  # never answered before the kill
            paid[phase["name"]] += 1
        return toy_model(body, seen)

    with fake_openai(script) as server:
        endpoint = ["--db", str(db), "--base-url", server.base_url, "--model", "toy"]
        command = [sys.executable, "-m", "s3kg_core", "collect", *endpoint, "--concurrency", "4"]
        env = {
            name: value
            for name, value in os.environ.items()
            if not name.startswith(("OPENAI_", "S3KG_MODEL"))
        }
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env={**env, "PYTHONPATH": str(REPO)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                if paid["first"] >= k and _stored_answers(db) == k:
                    break
                time.sleep(0.2)
            assert proc.poll() is None, proc.communicate()
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate()
        assert proc.returncode == -signal.SIGKILL
        assert paid["first"] == k
        phase["name"] = "rerun"
        sent = server.count()
        rerun = CliRunner().invoke(cli, ["collect", *endpoint])
        assert rerun.exit_code == 0, rerun.output
        assert server.count() - sent == n - k  # only the missing ones were asked
    assert f"{n - k} asked (ok {n - k}; 0 from the cache), {k} already answered" in rerun.output
    assert paid == {"first": k, "rerun": n - k}  # the total paid is N
    assert _stored_answers(db) == n


# -- hostile replies (issue 28) and a single-worker server (issue 29) ------------------------------


def test_hostile_answer_text_and_token_counts_are_stored_cleaned_and_cached_28_2(tmp_path):
    """Issue 28 (2b, 2c): an answer with a lone surrogate, or usage of 10^12 / "many" tokens,
    raised ConversionException in put_answers after the reply was cached: nothing of the batch
    was stored and every rerun crashed again without a request."""

    def script(body, n):
        if "Curie" in last_user_message(body):
            return Reply(text="Curie \ud800 Warsaw.", usage={"prompt_tokens": "many"})
        if "Sun" in last_user_message(body):
            return Reply(text="Sun.", usage={"prompt_tokens": 10**12, "completion_tokens": 1})
        return toy_model(body, n)

    store = Store(tmp_path / "h.duckdb")
    make_dataset(store)
    with fake_openai(script) as server:
        report = collect_answers(store, _client(store, server.base_url))
        again = collect_answers(store, _client(store, server.base_url), refresh=False)
        assert server.count() == 4
    assert report.statuses == {"ok": 4} and again.already_done == 4
    with store.connect() as con:
        rows = dict(
            con.execute(
                "SELECT i.ext_id, (a.answer, a.prompt_tokens, a.completion_tokens, a.model_id) "
                "FROM answers a JOIN items i USING (item_id)"
            ).fetchall()
        )
    assert rows["q2"] == ("Curie \ufffd Warsaw.", None, None, "toy")
    assert rows["q3"] == ("Sun.", None, 1, "toy")


def _answer_rows(db: Path) -> dict[str, tuple]:
    with Store(db).connect() as con:
        return dict(
            con.execute(
                "SELECT i.ext_id, (a.status, a.error) FROM answers a JOIN items i USING (item_id)"
            ).fetchall()
        )


@pytest.mark.slow  # wall-clock dependent (1 s replies against a 2.5 s timeout): on a loaded
# machine a fast reply queued behind the probe timed out and was retried (CI, 2026-12-07: 6
# fast requests for 5 answers); to be ordered by events (issue 61), as the D7 test now is
def test_collect_from_a_single_worker_server_stores_every_answer_without_a_pile_up_29(
    tmp_path, monkeypatch
):
    """Issue 29: against one CPU worker, collect's defaults (concurrency 4, retries of
    timed-out requests the server kept working on) jammed the server: 24 requests logged, 1
    finished, exit 3. Now: one request at a time after one probe, every answer stored, one
    request per answer; an answer slower than the timeout is an error row (exit 3), retried
    only once the server is past it.

    Replies take 1 s (0.5 s before): a reply queued behind the probe then comes 1 s late, not
    0.5, which load cannot hide (the same rule as the probe tests of test_llm_client: under
    coverage tracing beside two other test processes, a 0.5 s queue once did not read as one,
    the limit grew and the answers piled up)."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    items = [
        *ITEMS,
        ItemRecord("q5", "Q?", "Tea calms nerves.", "g"),
        ItemRecord("slow", "Q?", "SLOWITEM takes long. Yes.", "g"),
    ]
    db = tmp_path / "w.duckdb"
    make_dataset(Store(db), items)

    def script(body, n):
        slow = "SLOWITEM" in last_user_message(body)
        return Reply(text=toy_model(body, n).text, hang=4.0 if slow else 1.0)

    args = ["collect", "--db", str(db), "--model", "toy", "--timeout", "2.5", "--max-retries", "1"]
    with fake_openai(script, workers=1) as server:
        result = CliRunner().invoke(cli, [*args, "--base-url", server.base_url])
        fast = sum(i.ext_id != "slow" for i in items)
        assert server.count() - server.count("SLOWITEM") == fast  # one request per answer
        assert server.count("SLOWITEM") == 2, result.output  # one try, one retry
        assert server.busy <= 2  # never a pile-up: one in line at most
    assert result.exit_code == 3, result.output
    rows = _answer_rows(db)
    assert all(rows[i.ext_id] == ("ok", None) for i in items if i.ext_id != "slow")
    assert rows["slow"] == ("error", "timeout (no complete reply within 2.5 s)")
    assert f"{len(items) + 1} requests sent (1 retries, 2 timeouts" in result.output


def test_collect_with_a_dripping_server_stops_at_its_timeout_28_4(tmp_path, monkeypatch):
    """Issue 28 (4): a server dripping one byte a second kept `collect --timeout 3` waiting
    past 100 s."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "S3KG_MODEL"):
        monkeypatch.delenv(var, raising=False)
    db = tmp_path / "d.duckdb"
    make_dataset(Store(db), ITEMS[:1])
    args = ["collect", "--db", str(db), "--model", "toy", "--timeout", "1", "--max-retries", "0"]
    with fake_openai(lambda body, n: Reply(text="drip " * 50, drip=0.05)) as server:
        started = time.monotonic()
        result = CliRunner().invoke(cli, [*args, "--base-url", server.base_url])
        took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert _answer_rows(db)["q1"] == ("error", "timeout (no complete reply within 1 s)")
    assert took < 4


def test_a_collected_run_s_name_follows_the_rule_of_every_name(tmp_path):
    # regression (issue 44, item 7): `collect --name` stored an ESC/OSC title sequence, and a
    # second collect renamed a found run to it without any check
    from s3kg_core.errors import ConfigError
    from s3kg_core.stages.collect import collected_run
    from s3kg_core.store.store import Store

    store = Store(tmp_path / "c.duckdb")
    with store.transaction() as con:
        ds = store.ensure_dataset(con, "d")
        run = collected_run(con, ds, "org/m", 0.0, {}, name=" first  name ")
        assert con.execute("SELECT name FROM runs").fetchone() == ("first name",)
    for bad in ("m\x1b]0;owned\x07", "x" * 10_000, "m\u202e"):
        with pytest.raises(ConfigError, match="a run's name"), store.transaction() as con:
            collected_run(con, ds, "org/m", 0.0, {}, name=bad)
    with store.connect() as con:
        assert con.execute("SELECT run_id, name FROM runs").fetchall() == [(run, "first name")]
