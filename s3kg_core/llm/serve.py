"""Start ``transformers serve`` on a local model folder: a real OpenAI-compatible endpoint.

Used by the tests' end-to-end run and by the script that generates the demo answers; anyone can
use it to get a local endpoint for ``s3kg collect`` without a GPU or a network.

The server is pinned to the folder (``transformers serve FOLDER``): it loads the model before it
listens, so it is ready as soon as it answers, and every request must name the model as the
exact string it was started with, ``str(model_dir)`` (another name gets a 400). Use::

    with transformers_serve(folder) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        client.chat.completions.create(model=str(folder), messages=[...])
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import ServeError

__all__ = [
    "free_port",
    "serve_command",
    "serve_unavailable_reason",
    "transformers_serve",
]

# What `transformers serve` imports (transformers.utils.import_utils.is_serve_available) plus
# what it runs on; all come with `pip install "transformers[serving]"`.
_SERVE_MODULES = ("transformers", "torch", "fastapi", "uvicorn", "pydantic", "openai")


def serve_unavailable_reason() -> str | None:
    """Why ``transformers serve`` cannot run here, or ``None`` when it can (for ``pytest.skip``)."""
    missing = [m for m in _SERVE_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"transformers serve needs {', '.join(missing)}: "
            '`pip install -c requirements.txt "transformers[serving]"`'
        )
    from transformers.utils.import_utils import is_serve_available

    if not is_serve_available():
        return 'transformers serve is unavailable: `pip install "transformers[serving]"`'
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (another process may still take it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve_command(model_dir: Path, port: int) -> list[str]:
    """The command line that serves ``model_dir`` on ``127.0.0.1:port`` on the CPU."""
    return [
        sys.executable,
        "-m",
        "transformers.cli.transformers",
        "serve",
        str(model_dir),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--device",
        "cpu",
    ]


def _tail(log: IO[bytes], chars: int = 3000) -> str:
    log.flush()
    log.seek(0)
    return log.read().decode("utf-8", errors="replace")[-chars:]


def _ready(base_url: str, model: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=5) as resp:
            data = json.load(resp)
    except (OSError, ValueError):
        return False
    return any(
        m.get("id") == model and m.get("status", {}).get("value") == "loaded"
        for m in data.get("data", [])
    )


def _stop(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM the server's process group, then SIGKILL it if it lingers."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=wait)
    # The server's own children, if any, share its group: make sure none outlives it.
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def transformers_serve(
    model_dir: Path,
    *,
    port: int | None = None,
    timeout: float = 180,
    threads: int | None = 1,
) -> Iterator[str]:
    """Serve ``model_dir`` with ``transformers serve`` and yield its base URL.

    Parameters
    ----------
    model_dir
        A local transformers model folder. Requests must send ``model=str(model_dir)``.
    port
        The port on 127.0.0.1; ``None`` picks a free one.
    timeout
        Seconds to wait for the server to load the model and answer.
    threads
        torch threads of the server (``OMP_NUM_THREADS``). One is much faster on a small busy
        CPU (measured: 100 tokens in ~10 s with 1 thread, 57-89 s with 2, on 2 loaded cores).
        ``None`` keeps the environment's setting.

    Yields
    ------
    str
        ``http://127.0.0.1:PORT/v1``, for ``openai.OpenAI(base_url=..., api_key="none")``.

    Raises
    ------
    ServeError
        If the server exits or does not answer within ``timeout``, with the tail of its log.
    """
    model_dir = Path(model_dir)
    port = port or free_port()
    base_url = f"http://127.0.0.1:{port}/v1"
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_HUB_DISABLE_UPDATE_CHECK="1")
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    with tempfile.TemporaryFile(mode="a+b") as log:  # append: the server shares its offset
        proc = subprocess.Popen(
            serve_command(model_dir, port),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + timeout
            while not _ready(base_url, str(model_dir)):
                if proc.poll() is not None:
                    raise ServeError(
                        f"transformers serve exited with code {proc.returncode} before answering "
                        f"on {base_url}; its log ends with:\n{_tail(log)}"
                    )
                if time.monotonic() > deadline:
                    raise ServeError(
                        f"transformers serve did not answer on {base_url} within {timeout:.0f} s; "
                        f"its log ends with:\n{_tail(log)}"
                    )
                time.sleep(0.5)
            yield base_url
        finally:
            _stop(proc)
