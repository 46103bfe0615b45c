"""``s3kg llm``: a local LLM endpoint in one command (``s3kg llm serve``).

Thin over :func:`s3kg_core.llm.serve.local_server`: converts the packaged model once, serves it
on 127.0.0.1 (in this process), prints the two lines to export, and stops on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import signal
import sys
from types import FrameType

import click

__all__ = ["COMMANDS"]


@click.group("llm")
def llm_group() -> None:
    """Local LLM endpoints: no GPU, no network, no key."""


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@llm_group.command("serve")
@click.option(
    "--model",
    default="smollm2",
    show_default=True,
    help="smollm2: the packaged SmolLM2-135M-Instruct (converted once into the cache folder); "
    "or PATH of a local transformers model folder.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port on 127.0.0.1 (0: a free one).",
)
@click.option(
    "--threads",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="torch threads of the server (one is fastest on a small busy CPU).",
)
@click.option(
    "--max-prompt-tokens",
    type=click.IntRange(16, 1_000_000),
    default=4096,
    show_default=True,
    help="The longest prompt, in tokens; a longer one is refused at once (HTTP 400).",
)
@click.option(
    "--max-queue",
    type=click.IntRange(0, 1000),
    default=4,
    show_default=True,
    help="Requests that may wait behind the one generating; one more gets HTTP 429 with "
    "Retry-After.",
)
def serve_cmd(model: str, port: int, threads: int, max_prompt_tokens: int, max_queue: int) -> None:
    """Serve a local model as an OpenAI-compatible endpoint until Ctrl-C.

    Prints the two lines to export (OPENAI_BASE_URL and S3KG_MODEL) for `s3kg collect`,
    `extract --extractor llm` and `run` in another shell. The server (on the CPU) answers one
    request at a time, honours response_format (a JSON schema, by constrained decoding: what
    `extract --extractor llm` asks for), refuses a prompt over --max-prompt-tokens (400), a
    request over --max-queue waiting (429) and what it does not do (n > 1, stop sequences,
    a schema it cannot follow: 400), and stops generating for a client that hangs up.
    """
    from ..llm.chat_server import ServeLimits
    from ..llm.serve import local_server

    limits = ServeLimits(max_prompt_tokens=max_prompt_tokens, max_queue=max_queue)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:  # also when started with SIGINT ignored
        signal.signal(sig, _interrupt)
    try:
        with local_server(
            model, port=port or None, threads=threads, limits=limits, say=click.echo
        ) as server:
            click.echo(f"serving {server.name} at {server.base_url}; in another shell:")
            for line in server.exports():
                click.echo(line)
            click.echo("Press Ctrl-C to stop.")
            sys.stdout.flush()
            server.wait()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        for sig, handler in previous.items():  # a caller (a test) gets its own back
            signal.signal(sig, handler)


COMMANDS: tuple[click.Command, ...] = (llm_group,)
"""The commands this module adds to ``s3kg``."""
