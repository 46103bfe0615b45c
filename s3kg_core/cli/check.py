"""``s3kg check``: regression gates for CI, on two runs of a database or two pair files."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from ..errors import S3KGError
from ..stats import DEFAULT_RESAMPLES
from ._common import DB_OPTION, FiniteRange, check_output, scored_options, write_atomic

__all__ = ["COMMANDS"]

CHECK_EPILOG = """\b
Gates on runs (--run, with --baseline for the first three and the last):
  cus_drop, gold_sim_drop, ctx_sim_drop: the mean change over the questions
    both runs have a score for (new minus baseline) and its paired-bootstrap
    interval; fails when the whole interval is below -MAX_DROP (a drop larger
    than MAX_DROP with one-sided confidence (1 + confidence) / 2).
  min_cus: the new run's mean CUS over its scored answers is below MIN_CUS.
  new_unscorable: more than MAX_NEW_UNSCORABLE answers scorable in the
    baseline are not in the new run (no score, an empty/unparseable KG, or
    not answered: `missing`, unless --allow-missing).
Gates on `s3kg pairs score` outputs (--pairs, with --baseline-pairs): s3kg_drop,
min_score and new_failed, the same rules on the s3kg column, rows paired by id
(a baseline row the new file lacks is `missing`, unless --allow-missing).
A measure that is not a number (NaN in the stored scores) fails its gate.

\b
Exit status: 0 when no gate fails, 1 when one does, 2 when the input cannot
be checked (unknown or ambiguous run, other datasets, nothing shared, no score
under the signature, an unreadable file).
"""


F = TypeVar("F", bound=Callable[..., Any])


def _refuse(message: str) -> NoReturn:
    """Input that cannot be checked: ``Error: ...`` on stderr and exit status 2."""
    click.echo(f"Error: {message}", err=True)
    raise click.exceptions.Exit(2)


def _bad_input_is_2(func: F) -> F:
    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except S3KGError as exc:
            _refuse(str(exc))

    return wrapper  # type: ignore[return-value]


@click.command("check", epilog=CHECK_EPILOG)
@DB_OPTION
@click.option("--run", "new_run", default=None, help="The new run: its id or display name.")
@click.option("--baseline", default=None, help="The run to compare with: id or display name.")
@scored_options
@click.option(
    "--pairs",
    "pairs_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Check an `s3kg pairs score` output instead of a run.",
)
@click.option(
    "--baseline-pairs",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The `s3kg pairs score` output to compare --pairs with.",
)
@click.option(
    "--max-drop",
    type=FiniteRange(0.0),
    default=0.02,
    show_default=True,
    help="Largest mean drop of CUS (of s3kg with --pairs) allowed.",
)
@click.option(
    "--max-gold-drop",
    type=FiniteRange(0.0),
    default=None,
    help="GoldSim's (default: --max-drop).",
)
@click.option(
    "--max-ctx-drop",
    type=FiniteRange(0.0),
    default=None,
    help="CtxSim's (default: --max-drop).",
)
@click.option(
    "--min-cus", type=FiniteRange(0.0, 1.0), default=None, help="Least mean CUS of the run."
)
@click.option(
    "--min-score",
    type=FiniteRange(0.0, 1.0),
    default=None,
    help="Least mean s3kg of --pairs.",
)
@click.option(
    "--max-new-unscorable",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Answers (pairs) that may become unscorable.",
)
@click.option(
    "--allow-missing",
    is_flag=True,
    default=False,
    help="Leave out the baseline's questions (pair rows) the new run (file) lacks; by "
    "default each counts as unscorable (`missing`).",
)
@click.option(
    "--confidence",
    type=FiniteRange(0.5, 1.0, max_open=True),
    default=0.95,
    show_default=True,
    help="Two-sided level of the bootstrap intervals.",
)
@click.option(
    "--resamples",
    type=click.IntRange(100),
    default=DEFAULT_RESAMPLES,
    show_default=True,
    help="Bootstrap resamples.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The bootstrap's seed.")
@click.option(
    "--junit",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write JUnit XML: one test case per gate.",
)
@click.option(
    "--markdown",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a Markdown summary (e.g. to $GITHUB_STEP_SUMMARY).",
)
@_bad_input_is_2
def check_cmd(
    db_path: Path,
    new_run: str | None,
    baseline: str | None,
    signature: str | None,
    alpha: float | None,
    empty: str,
    pairs_path: Path | None,
    baseline_pairs: Path | None,
    max_drop: float,
    max_gold_drop: float | None,
    max_ctx_drop: float | None,
    min_cus: float | None,
    min_score: float | None,
    max_new_unscorable: int,
    allow_missing: bool,
    confidence: float,
    resamples: int,
    seed: int,
    junit: Path | None,
    markdown: Path | None,
) -> None:
    """Fail a CI job when a new run (or pair file) is worse than its baseline.

    Compares run --run with run --baseline on the questions both answered (one
    dataset, scored under one signature), or an `s3kg pairs score` output
    (--pairs) with another (--baseline-pairs), gate by gate; prints one line per
    gate and writes JUnit XML and a Markdown summary if asked.
    """
    from ..analysis.check import CheckSettings, check_pairs, check_runs
    from ..analysis.check_report import junit_xml, markdown_summary
    from ..store.store import Store

    ctx = click.get_current_context()
    if (new_run is None) == (pairs_path is None):
        raise click.UsageError("name a run (--run) or a pairs output (--pairs), not both", ctx)
    if pairs_path is None and (baseline_pairs is not None or min_score is not None):
        raise click.UsageError("--baseline-pairs and --min-score go with --pairs", ctx)
    if pairs_path is not None and (baseline is not None or min_cus is not None):
        raise click.UsageError("--baseline and --min-cus go with --run", ctx)
    check_output(junit, option="--junit")
    check_output(markdown, option="--markdown")
    settings = CheckSettings(
        max_drop=max_drop,
        max_gold_drop=max_gold_drop,
        max_ctx_drop=max_ctx_drop,
        min_cus=min_cus,
        min_score=min_score,
        max_new_unscorable=max_new_unscorable,
        allow_missing=allow_missing,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
    )
    if pairs_path is not None:
        result = check_pairs(pairs_path, baseline_pairs, settings=settings)
    elif new_run is not None:
        if not db_path.exists():
            _refuse(f"database {db_path} does not exist")
        result = check_runs(
            Store(db_path, read_only=True),
            new_run,
            baseline,
            settings=settings,
            signature=signature,
            alpha=alpha,
            empty=empty,  # type: ignore[arg-type]
        )
    else:  # pragma: no cover - refused above
        raise click.UsageError("name a run (--run) or a pairs output (--pairs)", ctx)
    for line in result.lines():
        click.echo(line)
    if junit is not None:
        text = junit_xml(result)
        write_atomic(junit, lambda fh: fh.write(text))
    if markdown is not None:
        summary = markdown_summary(result)
        write_atomic(markdown, lambda fh: fh.write(summary))
    ctx.exit(result.exit_code)


COMMANDS: tuple[click.Command, ...] = (check_cmd,)
"""The commands this module adds to ``s3kg``."""
