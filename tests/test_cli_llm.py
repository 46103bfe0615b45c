"""s3kg_core.cli.llm: ``s3kg llm serve``, its errors, and its stop (Ctrl-C, SIGTERM, kill -9).

The real start and stop serve a tiny random Llama (conftest's ``tiny_model``), which loads in
seconds; they are slow tests. The server itself is tested in tests/test_llm_chat_server.py;
SmolLM2 served by the same command is exercised end to end in tests/test_e2e_llm.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from serve_helpers import serve_unavailable_reason

from s3kg_core.cli import cli

REPO = Path(__file__).resolve().parents[1]


def test_serve_help_names_the_model_port_and_stop():
    result = CliRunner().invoke(cli, ["llm", "serve", "--help"])
    assert result.exit_code == 0
    for text in ("--model", "smollm2", "--port", "Ctrl-C", "OPENAI_BASE_URL", "S3KG_MODEL"):
        assert text in result.output
    for text in ("--max-prompt-tokens", "--max-queue", "response_format", "429"):
        assert text in result.output


def test_a_model_that_is_not_a_folder_is_one_line_error(tmp_path):
    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    # --port 0: no fixed port (the order of the checks is pinned by the test below)
    args = ["llm", "serve", "--port", "0", "--model", str(tmp_path / "nothing")]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output.startswith("Error: the model must be 'smollm2' or a local transformers")
    assert "Traceback" not in result.output


def test_a_bad_model_is_told_before_the_port_is_probed(tmp_path):
    """Regression (issue 42): with the port held by another program (a user's own server on the
    default 8000), a bad --model was reported as "port in use" instead of the argument error."""
    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        args = ["llm", "serve", "--port", str(port), "--model", str(tmp_path / "nothing")]
        result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert result.output.startswith("Error: the model must be 'smollm2' or a local transformers")
    assert "in use" not in result.output


def test_a_port_in_use_is_one_line_error():
    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = CliRunner().invoke(cli, ["llm", "serve", "--port", str(port)])
    assert result.exit_code == 1
    assert f"port {port} on 127.0.0.1 is in use" in result.output and "--port 0" in result.output


def _children(pid: int) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == pid:
                found.append(int(proc.name))
    return found


def _start(model: Path) -> tuple[subprocess.Popen[str], dict[str, str], list[str]]:
    """``s3kg llm serve --model MODEL --port 0`` until it prints its exports."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(
        [sys.executable, "-m", "s3kg_core", "llm", "serve", "--model", str(model), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 180
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Press Ctrl-C"):
            break
    exports = dict(
        line.removeprefix("export ").split("=", 1) for line in lines if line.startswith("export ")
    )
    return proc, exports, lines


@pytest.mark.slow
def test_serve_prints_the_exports_answers_and_stops_on_ctrl_c_without_orphans(tiny_model):
    """Issue 29: a local endpoint in one command, stopped cleanly on Ctrl-C, and no process
    left when the command itself is killed with SIGKILL (the server runs in its process)."""
    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    model = tiny_model
    proc, exports, lines = _start(model)
    try:
        assert set(exports) == {"OPENAI_BASE_URL", "S3KG_MODEL"}, lines
        assert exports["S3KG_MODEL"] == str(model)
        with urllib.request.urlopen(f"{exports['OPENAI_BASE_URL']}/models", timeout=10) as resp:
            assert [m["id"] for m in json.load(resp)["data"]] == [str(model)]
        assert _children(proc.pid) == []
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out.strip().endswith("stopped")

    proc, exports, lines = _start(model)
    port = int(exports["OPENAI_BASE_URL"].rsplit(":", 1)[1].split("/")[0])
    proc.kill()  # SIGKILL: no handler runs; nothing may keep the port
    proc.wait()
    with socket.socket() as sock:
        assert sock.connect_ex(("127.0.0.1", port)) != 0
