"""``s3kg grapheval``: triple-level hallucination detection, GraphCorrect and their benchmark."""

from __future__ import annotations

from .cli import cli

__all__ = ["grapheval"]


@cli.group()
def grapheval() -> None:
    """GraphEval: check every answer triple against its context, and correct the flagged ones."""
