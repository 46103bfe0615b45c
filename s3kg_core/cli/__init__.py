"""The ``s3kg`` command line: thin commands over the library.

Each command builds the library object, calls one method, and turns library errors into a
one-line message and a non-zero exit status.
"""

from __future__ import annotations

import click

from .._version import __version__
from ..config import set_process_env
from ..dependencies import missing_dependency
from ..errors import S3KGError
from ..names import printable
from . import (
    annotate,
    bench,
    check,
    compare,
    dashboard,
    factuality,
    grapheval,
    llm,
    pairs,
    pipeline,
    report,
    store,
)
from ._common import as_click

__all__ = ["cli", "main"]


class _Cli(click.Group):
    r"""The top group: a library error no command turned into a message is one line too.

    So is a package that is not installed (an extra, or a dependency gone from the
    environment): one line naming it and how to install it, not a traceback. Every error's
    message is printed :func:`~s3kg_core.names.printable` (click's own too: ``Path
    'x\x1b.amr' does not exist``), so no path or id in it acts on the terminal.
    """

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            exc.message = printable(exc.message)  # type: ignore[misc]  # Final in click, shown once
            raise
        except S3KGError as exc:
            raise as_click(exc) from exc
        except ModuleNotFoundError as exc:
            error = missing_dependency(exc)
            if error is None:
                raise
            raise as_click(error) from exc


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="s3kg")
def cli() -> None:
    """S3KG Workbench: evaluate LLM answers by comparing knowledge graphs."""


for _module in (
    pairs,
    store,
    check,
    compare,
    report,
    pipeline,
    llm,
    bench,
    grapheval,
    factuality,
    annotate,
    dashboard,
):
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Run the ``s3kg`` command line (in a process of its own: :func:`set_process_env`)."""
    set_process_env()
    cli.main(args=argv, prog_name="s3kg")
