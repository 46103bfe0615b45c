"""The annotation commands of ``s3kg``: ``annotate`` and ``annotations``.

``annotate`` makes tasks and reports progress, agreement and disagreements; ``annotations``
exports and imports the verdict log. Thin over :mod:`s3kg_core.annotation`: each command
builds the store, calls one library function and prints its summary; library errors become
one line and exit status 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..scoring.tau import TRIPLE_THRESHOLD
from ._common import (
    DB_OPTION,
    backend_option,
    check_output,
    existing_db,
    write_json_atomic,
)

__all__ = ["COMMANDS", "threshold_option"]


def _names(_ctx: click.Context, _param: click.Parameter, text: str) -> list[str]:
    names = [n for n in text.split(",") if n.strip()]
    if not names:
        raise click.BadParameter("give at least one name, comma-separated (a,b,c)")
    return names


def _threshold(
    _ctx: click.Context, _param: click.Parameter, value: str | None
) -> float | str | None:
    if value is None or value == "calibrated":
        return value
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise click.BadParameter(f"a number in [0, 1] or 'calibrated'; got {value!r}")
    return number


threshold_option = click.option(
    "--threshold",
    default=None,
    callback=_threshold,
    metavar="T|calibrated",
    help="TAU's triple threshold (sentence cosine to align two triples; default "
    f"{TRIPLE_THRESHOLD:g}), or "
    "'calibrated': the one `s3kg tau calibrate` fitted to the human labels for the encoder.",
)
"""``--threshold``: a number in [0, 1], ``calibrated``, or nothing (the default)."""

_FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "parquet", "jsonl"]),
    default=None,
    help="Default: by the file's suffix.",
)

_TASK_OPTION = click.option(
    "--task", "task_id", type=int, default=None, help="Only this task (default: everything)."
)


@click.group("annotate")
def annotate_group() -> None:
    """Annotation tasks: who judges which answers, progress, agreement."""


@annotate_group.command("assign")
@DB_OPTION
@click.option(
    "--annotators",
    required=True,
    callback=_names,
    help="Comma-separated names (a,b,c). Control and bidi-override characters are refused.",
)
@click.option(
    "--overlap",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="How many annotators see each answer (at most the number of annotators).",
)
@click.option(
    "--run", "run_ids", type=int, multiple=True, help="Only this run (repeatable; default: all)."
)
@click.option(
    "--sample", type=click.IntRange(1), default=None, help="Draw N of the eligible answers."
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seeds the sample, the order of each queue (then dealt out across TAU's categories) "
    "and the assignment's tie-breaks.",
)
@click.option("--name", default=None, help="A name for the task.")
@click.option("--signature", default=None, help="Scores whose encoder TAU uses (default: latest).")
@click.option(
    "--encoder", default=None, help="TAU's encoder (default: the one the scores were made with)."
)
@backend_option
@threshold_option
def assign_cmd(
    db_path: Path,
    annotators: list[str],
    overlap: int,
    run_ids: tuple[int, ...],
    sample: int | None,
    seed: int,
    name: str | None,
    signature: str | None,
    encoder: str | None,
    threshold: float | str | None,
) -> None:
    """Create an annotation task: each answer goes to OVERLAP annotators, the work balanced.

    Eligible answers have their gold and answer KGs (with at least one triple). TAU explains
    each chosen answer once, now: its pairs and single triples are the task's units, the same
    for every annotator, whatever TAU's threshold becomes later. Each queue is dealt out across
    TAU's categories (its first answers hold every category it has), so each category's
    precision has an estimate after a few answers. Deterministic for a seed.
    """
    from ..annotation.tasks import create_task
    from ..store.store import Store

    report = create_task(
        Store(existing_db(db_path)),
        annotators,
        overlap,
        run_ids=list(run_ids) or None,
        sample=sample,
        seed=seed,
        name=name,
        encoder=encoder,
        signature=signature,
        threshold=threshold,
    )
    click.echo(report.summary())


@annotate_group.command("tasks")
@DB_OPTION
def tasks_cmd(db_path: Path) -> None:
    """List the annotation tasks with each annotator's progress."""
    from ..annotation.tasks import task_progress
    from ..store import annotation_queries
    from ..store.store import Store

    with Store(existing_db(db_path), read_only=True).connect() as con:
        found = annotation_queries.tasks(con)
        if not found:
            click.echo("no annotation task yet: create one with `s3kg annotate assign`")
        for task in found:
            settings = json.loads(task["settings"])
            title = f" ({task['name']})" if task["name"] else ""
            click.echo(
                f"task {task['task_id']}{title}: {settings['items']} answers, overlap "
                f"{task['overlap']}, made {task['created_at']:%Y-%m-%d %H:%M} UTC; "
                f"{settings['tau']}"
            )
            for p in task_progress(con, int(task["task_id"])):
                click.echo(
                    f"  {p.annotator}: {p.done} of {p.total} done "
                    f"({p.units_decided} of {p.units_total} units)"
                )


@annotate_group.command("progress")
@DB_OPTION
@click.option("--task", "task_id", type=int, required=True, help="The task.")
@click.option("--annotator", required=True, help="Whose queue.")
def progress_cmd(db_path: Path, task_id: int, annotator: str) -> None:
    """An annotator's queue: how many answers are done, and the next one to do."""
    from ..annotation.tasks import queue_progress
    from ..store.store import Store

    with Store(existing_db(db_path), read_only=True).connect() as con:
        p = queue_progress(con, task_id, annotator)
    following = (
        "all done"
        if p.next_item is None
        else f"next: run {p.next_item[0]} item {p.next_item[1]}"
        f" (/Annotate?run={p.next_item[0]}&item={p.next_item[1]})"
    )
    click.echo(
        f"{p.annotator}, {p.line()} ({p.units_decided} of {p.units_total} units); {following}"
    )


@annotate_group.command("agreement")
@DB_OPTION
@_TASK_OPTION
@click.option(
    "--bootstrap",
    type=click.IntRange(0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of the agreement's and F1's intervals (0: none); precision and "
    "recall take Wilson's interval, which needs none.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds the bootstrap.")
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the report as JSON.",
)
def agreement_cmd(
    db_path: Path, task_id: int | None, bootstrap: int, seed: int, json_path: Path | None
) -> None:
    """Chance-corrected agreement and TAU's quality against the people's labels.

    Krippendorff's alpha (nominal) of all annotators and Cohen's kappa of every two who share
    pairs, overall and per TAU category, with bootstrap intervals; then TAU's precision,
    recall and F1 against the final labels (adjudicated, else the majority), and each TAU
    category's precision (the share of its judged units confirmed; JSON: tau.confirmed),
    precision and recall with Wilson's interval. Recall is untested until someone adds a pair
    TAU missed, and the report says so.
    """
    from ..annotation.quality import annotation_report
    from ..store.store import Store

    check_output(json_path, option="--json")
    report = annotation_report(
        Store(existing_db(db_path), read_only=True), task_id=task_id, bootstrap=bootstrap, seed=seed
    )
    for line in report.lines():
        click.echo(line)
    if json_path is not None:
        write_json_atomic(json_path, report.to_dict())


@annotate_group.command("disagreements")
@DB_OPTION
@_TASK_OPTION
def disagreements_cmd(db_path: Path, task_id: int | None) -> None:
    """The pairs whose annotators disagree, with each one's label and any final label."""
    from ..annotation.log import disagreements
    from ..store.store import Store

    with Store(existing_db(db_path), read_only=True).connect() as con:
        found = disagreements(con, task_id=task_id)
    click.echo(f"{len(found)} pairs with disagreeing labels")
    for row in found.itertuples(index=False):
        pair = " <-> ".join(
            " | ".join(t) if t is not None else "(none)"
            for t in (row.gold_triple, row.answer_triple)
        )
        labels = ", ".join(f"{who}: {v}" for who, v in row.verdicts.items())
        final = f"; final: {row.label}" if row.label else ""
        click.echo(
            f"  run {row.run_id} item {row.item_id} {row.category}: {pair} ({labels}){final}"
        )


@click.group("annotations")
def annotations_group() -> None:
    """Export and import the verdict log (every decision, who, when, what it replaced)."""


@annotations_group.command("export")
@DB_OPTION
@_FORMAT_OPTION
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
def export_cmd(db_path: Path, fmt: str | None, out: Path) -> None:
    """Write the verdict log: one row per decision, withdrawal and undo.

    Columns: uid, created_at (UTC), annotator, role, task_id, run_id, item_id, category
    (TAU's), gold_triple and answer_triple (as TAU compared them), gold_extracted and
    answer_extracted (as extracted), verdict, source, replaces_uid, dataset, ext_id,
    adjudicated (the pair's final label by an adjudicator, if any). The database itself is
    never overwritten.
    """
    from ..annotation.exchange import export_verdicts
    from ..store.store import Store

    check_output(out)  # (export_verdicts refuses the database itself too)
    n = export_verdicts(Store(existing_db(db_path), read_only=True), out, fmt=fmt)
    click.echo(f"wrote {n} rows to {out}")


@annotations_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@DB_OPTION
@_FORMAT_OPTION
def import_cmd(path: Path, db_path: Path, fmt: str | None) -> None:
    """Merge an export into the verdict log; rows already there (by uid) are skipped.

    Every row is checked before anything is written (names, verdicts, triples, and that its
    answer exists here as the same question), as the Annotate page checks a decision: each
    row has its own uid, and a row replaces or undoes only its own person's decision on the
    same pair. A bad file changes nothing: one line names the row, exit status 2.
    """
    from ..annotation.exchange import import_verdicts
    from ..errors import AnnotationError, InputFormatError
    from ..store.store import Store

    store = Store(existing_db(db_path))
    try:
        report = import_verdicts(store, path, fmt=fmt)
    except (InputFormatError, AnnotationError) as exc:
        error = click.ClickException(str(exc))
        error.exit_code = 2  # type: ignore[misc]
        raise error from exc
    click.echo(report.summary())


COMMANDS: tuple[click.Command, ...] = (annotate_group, annotations_group)
"""The commands this module adds to ``s3kg``."""
