"""Tests of s3kg_core.llm.serve: the ``transformers serve`` command, its start, failure and stop.

The fast tests start a real server and check what happens when it does not answer in time; the
slow ones wait for it (a tiny random Llama from tests/factuality_helpers.py loads in seconds).
SmolLM2 served and asked real questions is tested in tests/test_llm_local_models.py.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from s3kg_core.errors import ServeError
from s3kg_core.llm.serve import (
    free_port,
    local_server,
    serve_command,
    serve_unavailable_reason,
    transformers_serve,
)


def _needs_serve() -> None:
    reason = serve_unavailable_reason()
    if reason:
        pytest.skip(reason)


def _server_processes(port: int) -> list[int]:
    """Pids of live processes whose command line serves on ``port`` (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if b"serve" in argv and str(port).encode() in argv and state != "Z":
            found.append(int(proc.name))
    return found


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


# -- helpers (fast) -------------------------------------------------------------------------------


def test_free_port_can_be_bound():
    port = free_port()
    assert 1024 <= port <= 65535
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", port))


def test_serve_command_pins_the_folder_host_port_and_cpu(tmp_path):
    command = serve_command(tmp_path / "model", 8123)
    assert command[:3] == [sys.executable, "-m", "transformers.cli.transformers"]
    assert command[3:5] == ["serve", str(tmp_path / "model")]
    options = dict(zip(command[5::2], command[6::2], strict=True))
    assert options == {"--host": "127.0.0.1", "--port": "8123", "--device": "cpu"}


def test_the_command_names_a_module_that_exists_when_serve_is_available():
    _needs_serve()
    assert importlib.util.find_spec(serve_command(Path("m"), 1)[2]) is not None


def test_unavailable_reason_names_what_is_missing_and_how_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "fastapi" else real(name)
    )
    reason = serve_unavailable_reason()
    assert reason is not None
    assert "fastapi" in reason and "transformers[serving]" in reason
    assert "torch" not in reason.split(":")[0]  # only the missing modules are named


def test_a_server_that_does_not_answer_in_time_is_an_error_and_is_stopped(tmp_path):
    _needs_serve()
    port = free_port()
    start = time.monotonic()
    with (
        pytest.raises(ServeError, match=r"did not answer on http://127\.0\.0\.1:\d+/v1 within 1 s"),
        transformers_serve(tmp_path / "never-loaded", port=port, timeout=1),
    ):
        pytest.fail("the server cannot be ready within a second")
    assert time.monotonic() - start < 15
    assert _server_processes(port) == []
    assert not _listening(port)


# -- a real server (slow) -------------------------------------------------------------------------


@pytest.mark.slow
def test_serve_failure_reports_the_server_log(tmp_path: Path) -> None:
    _needs_serve()
    not_a_model = tmp_path / "empty-model"
    not_a_model.mkdir()
    with (
        pytest.raises(ServeError, match=r"exited with code") as info,
        transformers_serve(not_a_model, timeout=120),
    ):
        pytest.fail("the server should not start")
    assert "empty-model" in str(info.value)


@pytest.mark.slow
def test_the_served_folder_is_loaded_before_the_url_is_given_and_stopped_after(tiny_model):
    _needs_serve()
    model = tiny_model
    port = free_port()
    with transformers_serve(model, port=port, timeout=120) as base_url:
        assert base_url == f"http://127.0.0.1:{port}/v1"
        with urllib.request.urlopen(f"{base_url}/models", timeout=10) as resp:
            models = json.load(resp)["data"]
        assert [(m["id"], m["status"]["value"]) for m in models] == [(str(model), "loaded")]
        assert _server_processes(port)
    assert _server_processes(port) == []
    assert not _listening(port)


def test_the_conversion_line_gives_the_measured_time(monkeypatch):
    # issue 43: the line said "about a minute"; the packaged model's conversion took 115 s
    _needs_serve()
    from s3kg_core.llm import local_models

    def stop() -> Path:
        raise RuntimeError("converted no further")

    monkeypatch.setattr(local_models, "smollm2_ready", lambda: False)
    monkeypatch.setattr(local_models, "smollm2_model_dir", stop)
    said: list[str] = []
    with (
        pytest.raises(RuntimeError, match="converted no further"),
        local_server("smollm2", say=said.append),
    ):
        pass
    assert said and "(once; about two minutes)" in said[0], said
