"""``s3kg factuality``: KG statements, LLM labels, and a judge on the LLM's hidden states."""

from __future__ import annotations

from .cli import cli

__all__ = ["factuality"]


@cli.group()
def factuality() -> None:
    """Factuality at scale: what an LLM knows about KG facts, read from its hidden states."""
