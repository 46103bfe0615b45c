"""``s3kg pairs score``: score pairs of KGs from a CSV or two PENMAN (AMR) files, no database."""

from __future__ import annotations

import collections
import statistics
import time
from pathlib import Path

import click

from ..names import printable
from ..scoring.signature import Signature
from ._common import (
    StageBar,
    check_output,
    scoring_options,
    write_csv_atomic,
)

__all__ = ["COMMANDS"]


@click.group()
def pairs() -> None:
    """Score pairs of knowledge graphs you already have."""


@pairs.command("score")
@click.argument(
    "inputs",
    nargs=-1,
    required=True,
    metavar="INPUT_CSV | SRC.amr TGT.amr",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="CSV to write: id,s_wl,s_sbert,s3kg,status.",
)
@click.option(
    "--no-align",
    is_flag=True,
    help="Pure WL-kernel baseline: no triple selection, no soft label alignment.",
)
@scoring_options
def pairs_score(
    inputs: tuple[Path, ...],
    output: Path,
    mode: str,
    no_align: bool,
    encoder: str,
    alpha: float,
    tau: float,
    wl_iterations: int | None,
) -> None:
    """Score the KG pairs of INPUT_CSV, or the graph pairs of two PENMAN (AMR) files.

    INPUT_CSV has columns id,kg_1,kg_2 (others are ignored); each KG cell is a JSON or
    Python-literal list of [head, relation, tail] lists. SRC.amr and TGT.amr are parallel
    PENMAN files (one graph per blank-line separated block; graph i of one against graph i of
    the other); a graph becomes triples (concept of the source without its sense, role without
    the colon, concept of the target or the constant) and a row's id is the graph's `# ::id`,
    else its index from 0. KG 1 (or SRC.amr) is the reference (it drives the matching), KG 2
    (or TGT.amr) the candidate. A row that cannot be scored gets scores 0 and a status saying
    why (empty_kg_1, unparseable_kg_2, oversized_kg_1 for a KG of more than 10,000 triples or
    with a label of more than 1,000 characters, ...); the run goes on. A malformed PENMAN
    block, two files with different numbers of graphs (counted before any graph is read) or an
    input file (INPUT_CSV or a PENMAN file) over 64 MB is a one-line error before any scoring
    (S3KG_MAX_INPUT_MB=<megabytes> raises the cap).
    """
    from ..amr import penman_pair_rows
    from ..kgio import read_pairs_csv
    from ..scoring.result import TEXT_MODES
    from ..scoring.s3kg import KGScorer, S3KGConfig

    if mode in TEXT_MODES:
        raise click.UsageError(
            f"--mode {mode} needs the two texts of each pair, and this command reads KGs only: "
            "use `s3kg score` (texts in the database) or `s3kg bench pairs`",
            ctx=click.get_current_context(),
        )
    if len(inputs) > 2:
        raise click.UsageError(
            f"give one CSV of KG pairs or two PENMAN files; got {len(inputs)} inputs",
            ctx=click.get_current_context(),
        )
    check_output(output, option="--output")  # before the work, not after it
    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
        align=not no_align,
    )
    rows = penman_pair_rows(*inputs) if len(inputs) == 2 else list(read_pairs_csv(inputs[0]))
    scorer = KGScorer(encoder, config)
    live = [r for r in rows if r.status == "ok"]
    started = time.perf_counter()
    with StageBar() as bar:
        results = scorer.score_pairs([(r.kg_1, r.kg_2) for r in live], progress=bar.update)
    elapsed = time.perf_counter() - started
    by_row = {id(r): res for r, res in zip(live, results, strict=True)}
    write_csv_atomic(
        output,
        ["id", "s_wl", "s_sbert", "s3kg", "status"],
        (
            [r.id, repr(res.s_wl), repr(res.s_sbert), repr(res.score), res.status]
            if (res := by_row.get(id(r))) is not None
            else [r.id, "0.0", "0.0", "0.0", r.status]
            for r in rows
        ),
    )
    statuses = collections.Counter(
        by_row[id(r)].status if id(r) in by_row else r.status for r in rows
    )
    ok_scores = [res.score for res in results if res.ok]
    problems = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()) if s != "ok")
    notes = []
    if dropped := sum(r.dropped for r in rows):
        notes.append(f"{dropped} malformed triples dropped")
    if ragged := sum(1 for r in rows if r.extra_fields):
        notes.append(f"{ragged} rows with extra fields")
    if cleaned := sum(1 for r in rows if r.id_cleaned):
        notes.append(f"{cleaned} ids with control or formatting characters removed")
    if oversized := [r for r in rows if r.problem]:
        first = oversized[0]
        notes.append(
            f"{len(oversized)} rows over the size limits (id {first.id}: {first.problem}"
            + (", ..." if len(oversized) > 1 else "")
            + ")"
        )
    if replaced := [r.id for r in rows if r.replaced]:
        shown = ", ".join(replaced[:10])
        if len(replaced) > 10:
            shown += f" and {len(replaced) - 10} more"
        label = "ids" if len(replaced) > 1 else "id"
        notes.append(f"{len(replaced)} rows with non-UTF-8 text replaced ({label} {shown})")
    mean = f"{statistics.fmean(ok_scores):.4f}" if ok_scores else "n/a"
    click.echo(
        f"scored {statuses.get('ok', 0)}/{len(rows)} pairs"
        + (f" ({problems})" if problems else "")
        + f" in {elapsed:.1f}s ({len(live) / max(elapsed, 1e-9):.1f} pairs/s); "
        + f"mean s3kg {mean}"
        + (f"; {'; '.join(notes)}" if notes else "")
        + f"; wrote {printable(output)}; signature {Signature.blended(scorer.signature, alpha)}"
    )


COMMANDS: tuple[click.Command, ...] = (pairs,)
"""The commands this module adds to ``s3kg``."""
