"""``s3kg llm``: a local LLM endpoint in one command (``s3kg llm serve``).

Thin over :func:`s3kg_core.llm.serve.local_server`: converts the packaged model once, serves it
on 127.0.0.1, prints the two lines to export, and stops the server (and every process it
started) on Ctrl-C or SIGTERM.
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
def serve_cmd(model: str, port: int, threads: int) -> None:
    """Serve a local model as an OpenAI-compatible endpoint until Ctrl-C.

    Prints the two lines to export (OPENAI_BASE_URL and S3KG_MODEL) for `s3kg collect`,
    `extract --extractor llm` and `run` in another shell. The server (transformers serve, on
    the CPU) answers one request at a time; collect adapts to that by itself.
    """
    from ..llm.serve import local_server

    for sig in (signal.SIGINT, signal.SIGTERM):  # also when started with SIGINT ignored
        signal.signal(sig, _interrupt)
    try:
        with local_server(model, port=port or None, threads=threads, say=click.echo) as server:
            click.echo(f"serving {server.name} at {server.base_url}; in another shell:")
            for line in server.exports():
                click.echo(line)
            click.echo("Press Ctrl-C to stop.")
            sys.stdout.flush()
            code = server.wait()
            raise click.ClickException(
                f"the server stopped by itself (exit code {code}); run the command again"
            )
    except KeyboardInterrupt:
        click.echo("stopped")


COMMANDS: tuple[click.Command, ...] = (llm_group,)
"""The commands this module adds to ``s3kg``."""
