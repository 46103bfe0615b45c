"""``s3kg report``: one self-contained HTML file about a run, or a run against a baseline."""

from __future__ import annotations

from pathlib import Path

import click

from ..stats import DEFAULT_RESAMPLES
from ._common import (
    DB_OPTION,
    FiniteRange,
    check_output,
    existing_db,
    scored_options,
    write_atomic,
)

__all__ = ["COMMANDS"]


@click.command("report")
@DB_OPTION
@click.option("--run", "run", required=True, help="The run: its id or display name.")
@click.option("--baseline", default=None, help="Compare with this run: id or display name.")
@scored_options
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The HTML file to write.",
)
@click.option(
    "--worst",
    type=click.IntRange(0),
    default=10,
    show_default=True,
    help="Answers shown with their triples: the lowest CUS, or the biggest regressions.",
)
@click.option(
    "--max-drop",
    type=FiniteRange(0.0),
    default=0.02,
    show_default=True,
    help="The check's largest mean CUS drop allowed (as `s3kg check`).",
)
@click.option(
    "--min-cus",
    type=FiniteRange(0.0, 1.0),
    default=None,
    help="The check's least mean CUS (as `s3kg check`).",
)
@click.option(
    "--resamples",
    type=click.IntRange(100),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples of the intervals.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The bootstrap's seed.")
def report_cmd(
    db_path: Path,
    run: str,
    baseline: str | None,
    signature: str | None,
    alpha: float | None,
    empty: str,
    out: Path,
    worst: int,
    max_drop: float,
    min_cus: float | None,
    resamples: int,
    seed: int,
) -> None:
    """Write a self-contained HTML report of a run, against a baseline if given.

    The file holds the run's settings and signature, GoldSim, CtxSim and CUS with bootstrap
    intervals and their distribution, TAU's categories and the worst answers with the
    triples S3KG matched; with --baseline, the paired comparison, the verdicts of `s3kg
    check` and the biggest regressions with a triple-level diff. It loads nothing from
    any host: open it from disk, attach it, mail it.
    """
    from ..analysis.check import CheckSettings
    from ..report.build import build_report
    from ..report.html import render_report
    from ..store.store import Store

    check_output(out)
    existing_db(db_path)
    report = build_report(
        Store(db_path, read_only=True),
        run,
        baseline,
        signature=signature,
        alpha=alpha,
        empty=empty,  # type: ignore[arg-type]
        worst=worst,
        settings=CheckSettings(max_drop=max_drop, min_cus=min_cus, resamples=resamples, seed=seed),
    )
    page = render_report(report)
    write_atomic(out, lambda fh: fh.write(page))
    size = len(page.encode("utf-8"))
    click.echo(f"wrote {out} ({size / 1024:.0f} KiB, {len(report.cases)} answers shown)")


COMMANDS: tuple[click.Command, ...] = (report_cmd,)
"""The commands this module adds to ``s3kg``."""
