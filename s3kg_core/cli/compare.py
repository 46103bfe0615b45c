"""``s3kg compare``: two runs of one dataset on the questions both answered, and the verdict."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ._common import DB_OPTION, existing_db, scored_options

__all__ = ["COMMANDS"]


@click.command("compare")
@DB_OPTION
@click.option("--run", "new_run", required=True, help="The new run: its id or display name.")
@click.option(
    "--baseline", required=True, help="The run to compare it with: its id or display name."
)
@scored_options
@click.option("--json", "as_json", is_flag=True, default=False, help="Print JSON instead.")
def compare_cmd(
    db_path: Path,
    new_run: str,
    baseline: str,
    signature: str | None,
    alpha: float | None,
    empty: str,
    as_json: bool,
) -> None:
    """Compare run --run with run --baseline on the questions both have a score for.

    For GoldSim, CtxSim and CUS: the baseline's and the new run's means, the mean change
    (new minus baseline) with its 95% paired-bootstrap interval, and the verdict: clearly
    lower, clearly higher or no clear difference, naming the test. The Overview, the Run
    comparison, `s3kg check` and `s3kg report` give the same verdict for the same runs.
    Exits 0 whatever the verdict (`s3kg check` gates on it).
    """
    from ..analysis.compare import compare_runs
    from ..scoring.signature import Signature
    from ..stages.scored import blend_alpha
    from ..store.store import Store

    store = Store(existing_db(db_path), read_only=True)
    comparison = compare_runs(
        store,
        new_run,
        baseline,
        signature=signature,
        alpha=alpha,
        empty=empty,  # type: ignore[arg-type]
    )
    full = Signature.blended(comparison.signature, blend_alpha(store, comparison.signature, alpha))
    if as_json:
        click.echo(json.dumps(comparison.to_dict(full), indent=2))
        return
    for line in comparison.lines(full):
        click.echo(line)


COMMANDS: tuple[click.Command, ...] = (compare_cmd,)
"""The commands this module adds to ``s3kg``."""
