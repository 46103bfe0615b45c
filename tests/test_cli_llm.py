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


# -- memory under the body-length attacks (issue 59: peak RSS within 100 MB of idle) --------------


def _kb(pid: int, field: str) -> int:
    """``VmRSS`` (resident now) or ``VmHWM`` (its peak) of process ``pid``, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")


def _attack(port: int, head: bytes, body_mb: int) -> int:
    """Send a request head, then up to ``body_mb`` MB of body without reading; the MB the
    socket took before the server closed it (the answer, if it came, is read and dropped)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=60)
    sent = 0
    with sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n")
        try:
            for _ in range(body_mb):
                sock.sendall(b"x" * 1_000_000)
                sent += 1
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(65536):
                pass
        except OSError:  # the server closed the connection: what it should do
            pass
    return sent


ATTACKS = {
    "negative": (b"Content-Length: -1\r\n", 400),
    "absent": (b"", 400),
    "malformed": (b"Content-Length: abc\r\n", 400),
    "huge": (b"Content-Length: 99999999999999\r\n", 400),
    "huge digits": (b"Content-Length: " + b"9" * 5000 + b"\r\n", 400),
    "over the limit": (b"Content-Length: 300000000\r\n", 300),
    "chunked": (b"Transfer-Encoding: chunked\r\n", 400),
}
"""Each case's head and the MB of body the client then streams (the attack sent 400 MB)."""


@pytest.mark.slow
def test_serve_memory_stays_bounded_under_the_body_length_attacks(tiny_model):
    """Issue 59 (item 3's target): ``Content-Length: -1`` with 400 MB behind it grew the server
    by 410 MB. Under every body-length case (negative, absent, malformed, huge, over the limit,
    chunked: each head followed by 300-400 MB of body), and a body at the 2 MB limit sent 20
    times, the server's peak resident memory stays within 100 MB of its idle memory, and the
    next request is served. The peak is reset after the warm-up (``/proc/PID/clear_refs``),
    so VmHWM is the peak of the attacks alone. Run with ``-m slow -s`` to print the figures."""
    if serve_unavailable_reason():
        pytest.skip(serve_unavailable_reason())
    proc, exports, lines = _start(tiny_model)
    try:
        base = exports["OPENAI_BASE_URL"]
        port = int(base.rsplit(":", 1)[1].split("/")[0])

        def chat() -> int:
            body = json.dumps(
                {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2}
            ).encode()
            request = urllib.request.Request(
                f"{base}/chat/completions", data=body, headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=120) as resp:
                return resp.status

        assert chat() == 200, lines  # warm: the first reply's buffers are idle memory
        try:
            Path(f"/proc/{proc.pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
        except OSError as exc:
            pytest.skip(f"cannot reset the peak of the server's memory: {exc}")
        idle = _kb(proc.pid, "VmRSS")
        taken = {name: _attack(port, head, mb) for name, (head, mb) in ATTACKS.items()}
        at_limit = json.dumps(
            {"messages": [{"role": "user", "content": "y" * 1_999_000}], "max_tokens": 2}
        ).encode()
        assert len(at_limit) <= 2_000_000
        head = f"Content-Length: {len(at_limit)}\r\nContent-Type: application/json\r\n".encode()
        for _ in range(20):
            sock = socket.create_connection(("127.0.0.1", port), timeout=60)
            with sock:
                sock.sendall(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + head + b"\r\n"
                    + at_limit
                )  # fmt: skip
                answer = sock.recv(65536)
            assert answer.split()[1] == b"400", answer[
                :200
            ]  # the prompt is too long: read, refused
        assert chat() == 200  # the next request is served
        peak = _kb(proc.pid, "VmHWM")
        print(
            f"\nserver RSS idle {idle / 1e3:.0f} MB, peak under the attacks {peak / 1e3:.0f} MB "
            f"(+{(peak - idle) / 1e3:.0f} MB); MB each attack could send before the server "
            f"closed it: {taken}"
        )
        assert peak - idle < 100_000, f"peak {peak} kB against idle {idle} kB"
        assert all(mb < 64 for mb in taken.values()), taken  # closed, never read to the end
    finally:
        proc.kill()
        proc.wait()
