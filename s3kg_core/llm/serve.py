"""Local OpenAI-compatible endpoints: ``s3kg llm serve`` and ``transformers serve``.

``s3kg llm serve`` (:func:`local_server`) converts the packaged SmolLM2 once and serves it on
127.0.0.1 with the project's own :class:`~s3kg_core.llm.chat_server.ChatServer` (JSON schemas
honoured, prompt and queue bounded, abandoned requests cancelled), and prints what to export.
:func:`transformers_serve` runs ``transformers serve`` on a folder instead; the tests'
end-to-end run and the script that generates the demo answers use it. What follows is about it.

The server generates for one request at a time (one inference thread) and queues the others.
When a client hangs up, it cancels a *streamed* request (the next token raises) but goes on
generating a non-streamed one to the end (measured with ``bench/speed/bench_serve_disconnect.py``;
bench/README.md): this is why :class:`~s3kg_core.llm.client.LLMClient` streams.

llama.cpp's Python server (``llama-cpp-python``, which would run the GGUF file directly) is not
offered: it builds from source here and did not build within 15 minutes on two cores.

The server is pinned to the folder (``transformers serve FOLDER``): it loads the model before it
listens, so it is ready as soon as it answers, and every request must name the model as the
exact string it was started with, ``str(model_dir)`` (another name gets a 400). Use::

    with transformers_serve(folder) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="none")
        client.chat.completions.create(model=str(folder), messages=[...])
"""

from __future__ import annotations

import contextlib
import ctypes
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
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import ConfigError, ServeError
from .chat_server import ChatServer, ServeLimits

__all__ = [
    "LocalServer",
    "free_port",
    "local_server",
    "serve_command",
    "serve_unavailable_reason",
    "transformers_serve",
]

# What `transformers serve` imports (transformers.utils.import_utils.is_serve_available) plus
# what it runs on; all come with `pip install "transformers[serving]"`.
_SERVE_MODULES = ("transformers", "torch", "fastapi", "uvicorn", "pydantic", "openai")
# what `s3kg llm serve`'s own server needs besides (JSON schemas: lm-format-enforcer)
_LOCAL_MODULES = ("lmformatenforcer",)


def serve_unavailable_reason() -> str | None:
    """Why ``transformers serve`` cannot run here, or ``None`` when it can (for ``pytest.skip``)."""
    missing = [m for m in (*_SERVE_MODULES, *_LOCAL_MODULES) if importlib.util.find_spec(m) is None]
    if missing:
        return (
            f"a local server needs {', '.join(missing)}: "
            '`pip install -c requirements.txt "transformers[serving]" lm-format-enforcer`'
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


def _die_with_parent() -> None:
    """In the server's process: ask Linux to SIGTERM it when its parent dies (no orphan)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


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
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None,
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
    on_start
        Called with the server's process once it is started (before it is ready).

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
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
        if on_start is not None:
            on_start(proc)
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


@dataclass(frozen=True)
class LocalServer:
    """A running local endpoint: where it is and what to call it.

    Attributes
    ----------
    base_url
        ``http://127.0.0.1:PORT/v1`` (``OPENAI_BASE_URL``).
    model
        The model name requests must send (``S3KG_MODEL``): the served folder's path.
    name
        Its short name, the display name of the runs collected from it.
    server
        The running :class:`~s3kg_core.llm.chat_server.ChatServer`.
    """

    base_url: str
    model: str
    name: str
    server: ChatServer

    def exports(self) -> list[str]:
        """The two shell lines that point ``s3kg`` at this server.

        Examples
        --------
        >>> server = LocalServer("http://127.0.0.1:8000/v1", "/m dir/x", "x", None)  # type: ignore
        >>> server.exports()
        ['export OPENAI_BASE_URL=http://127.0.0.1:8000/v1', "export S3KG_MODEL='/m dir/x'"]
        """
        import shlex

        return [
            f"export OPENAI_BASE_URL={shlex.quote(self.base_url)}",
            f"export S3KG_MODEL={shlex.quote(self.model)}",
        ]

    def wait(self) -> None:
        """Block until the server stops (Ctrl-C raises ``KeyboardInterrupt`` here)."""
        self.server.wait()


def _is_packaged(model: str) -> bool:
    return model.lower() in ("smollm2", "smollm2-135m-instruct")


def _local_folder(model: str) -> Path:
    """``model`` as a local transformers model folder, or a :class:`ConfigError`.

    Cheap (one ``stat``), so a bad ``--model`` is told before anything else is probed.
    """
    folder = Path(model).expanduser()
    if not (folder / "config.json").is_file():
        raise ConfigError(
            f"the model must be 'smollm2' or a local transformers model folder (with config.json); "
            f"got {model!r}"
        )
    return folder.resolve()


def _model_folder(model: str, say: Callable[[str], None]) -> Path:
    """The folder to serve: the packaged SmolLM2 converted once, or a local model folder."""
    if _is_packaged(model):
        from .local_models import smollm2_model_dir, smollm2_ready

        if not smollm2_ready():
            say(
                "converting the packaged SmolLM2-135M-Instruct (GGUF) into a transformers folder "
                "(once; about two minutes)..."
            )
            started = time.monotonic()
            folder = smollm2_model_dir()
            say(f"  converted in {time.monotonic() - started:.0f} s: {folder}")
            return folder
        return smollm2_model_dir()
    return _local_folder(model)


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


@contextlib.contextmanager
def local_server(
    model: str = "smollm2",
    *,
    port: int | None = None,
    threads: int = 1,
    limits: ServeLimits | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> Iterator[LocalServer]:
    """Serve a local model on 127.0.0.1 (:class:`~s3kg_core.llm.chat_server.ChatServer`).

    The server honours ``response_format`` (a JSON schema, by constrained decoding), bounds
    the prompt and the queue, and stops generating for a client that hangs up (see
    :mod:`s3kg_core.llm.chat_server`).

    Parameters
    ----------
    model
        ``"smollm2"``: the packaged SmolLM2-135M-Instruct, converted once into the cache folder
        (:func:`~s3kg_core.llm.local_models.smollm2_model_dir`); or a local transformers model
        folder.
    port
        The port (``None``: a free one).
    threads
        torch threads of the server (one is fastest on a small busy CPU).
    limits
        The prompt, reply, queue and body limits (``None``: the defaults).
    say
        Called with each progress line (conversion, start).

    Yields
    ------
    LocalServer
        The running server.

    Raises
    ------
    ConfigError
        If the model is neither ``smollm2`` nor a model folder, or the port is taken.
    ServeError
        If the model folder cannot be loaded.
    """
    reason = serve_unavailable_reason()
    if reason:
        raise ServeError(reason)
    if not _is_packaged(model):
        _local_folder(model)  # an argument error comes before any probe of the machine
    if port is not None and not _port_free(port):
        raise ConfigError(
            f"port {port} on 127.0.0.1 is in use (another server?); pass --port 0 for a free one"
        )
    folder = _model_folder(model, say)
    from ..store.records import short_name

    started = time.monotonic()
    name = short_name(str(folder))
    say(f"loading {name} on the CPU ({threads} thread(s))...")
    try:
        server = ChatServer(folder, port=port or 0, limits=limits, threads=threads)
    except OSError as exc:  # the port was taken meanwhile
        raise ConfigError(
            f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; "
            "pass --port 0 for a free one"
        ) from exc
    with server:
        say(f"  ready in {time.monotonic() - started:.0f} s")
        yield LocalServer(server.base_url, server.model, name, server)
