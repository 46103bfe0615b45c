"""The database commands of ``s3kg``: ``import``, ``score``, ``tau``, ``cus``, ``export``."""

from __future__ import annotations

from pathlib import Path

import click

from ..scoring.signature import Signature
from ..scoring.tau import LOWEST_FRACTION
from ._common import (
    DB_OPTION,
    FiniteRange,
    StageBar,
    backend_option,
    check_output,
    existing_db,
    scored_options,
    scoring_options,
    write_json_atomic,
)
from .annotate import threshold_option

__all__ = ["COMMANDS"]


@click.group("import")
def import_group() -> None:
    """Import datasets and model runs into the database."""


@import_group.command("s3kg-release")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@DB_OPTION
def import_release(directory: Path, db_path: Path) -> None:
    """Import every *.csv of DIRECTORY: the S3KG authors' released QA runs with their KGs.

    Dataset and model come from the file name (mesaqa_gemma-7b-it.csv: dataset mesaqa, model
    gemma-7b-it). Re-importing a file replaces what it wrote before.
    """
    from ..stages.importing import import_s3kg_release
    from ..store.store import Store

    for report in import_s3kg_release(Store(db_path), directory):
        click.echo(report.summary())
        for problem in report.problems:
            click.echo(f"  {problem}")


@import_group.command("pubmedqa")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@DB_OPTION
@click.option("--dataset", default="pubmedqa_pqal", show_default=True, help="Dataset name.")
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=None,
    help="Import the first N questions of the file only, in its order (default: all).",
)
def import_pqa(path: Path, db_path: Path, dataset: str, limit: int | None) -> None:
    """Import PubMedQA's ori_pqal.json (question, joined contexts, long answer), keyed by PMID.

    Questions only, no answers: `s3kg collect` asks a model for them (an endpoint, or with
    --local the packaged SmolLM2, on the CPU, no endpoint needed).
    """
    from ..stages.importing import import_pubmedqa
    from ..store.store import Store

    report = import_pubmedqa(Store(db_path), path, dataset=dataset, limit=limit)
    click.echo(report.summary())
    for problem in report.problems:
        click.echo(f"  {problem}")


@import_group.command("csv")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@DB_OPTION
@click.option(
    "--map",
    "mapping",
    required=True,
    help="FIELD=COLUMN pairs: question=..,context=..,gold=.. and optionally id=.., answer=..",
)
@click.option("--dataset", default=None, help="Dataset name (default: the file name).")
@click.option("--model", default=None, help="The model whose answers the answer column holds.")
@click.option("--temperature", type=float, default=0.0, show_default=True)
def import_csv(
    path: Path,
    db_path: Path,
    mapping: str,
    dataset: str | None,
    model: str | None,
    temperature: float,
) -> None:
    """Import a CSV or JSONL file (.jsonl / .ndjson) through a column mapping."""
    from ..stages.importing import import_table, parse_mapping
    from ..store.store import Store

    report = import_table(
        Store(db_path),
        path,
        parse_mapping(mapping),
        dataset=dataset,
        model=model,
        temperature=temperature,
    )
    click.echo(report.summary())
    for problem in report.problems:
        click.echo(f"  {problem}")


@click.command("score")
@DB_OPTION
@scoring_options
@click.option(
    "--batch-items",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Answers per write transaction (the most a kill can lose).",
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS]",
    help="Score on Ray: a local cluster, or the cluster at ADDRESS (auto, ray://host:port).",
)
@click.option(
    "--ray-workers",
    type=click.IntRange(1),
    default=None,
    help="Ray workers, each loading the encoder once (default: the cluster's CPUs).",
)
def score_cmd(
    db_path: Path,
    encoder: str,
    mode: str,
    alpha: float,
    tau: float,
    wl_iterations: int | None,
    batch_items: int,
    ray_address: str | None,
    ray_workers: int | None,
) -> None:
    """Score every stored answer: GoldSim, CtxSim and CUS with their components.

    Resumable: answers already scored under the same signature are skipped, so a killed run
    continues where it stopped. Another alpha re-blends the stored components without encoding.
    """
    from ..scoring.s3kg import S3KGConfig
    from ..stages.score import score_store
    from ..store.store import Store

    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
    )
    with StageBar() as bar:
        report = score_store(
            Store(existing_db(db_path)),
            encoder=encoder,
            config=config,
            batch_items=batch_items,
            progress=bar.update,
            ray_address=ray_address,
            ray_workers=ray_workers,
        )
    problems = ", ".join(f"{n} {s}" for s, n in sorted(report.statuses.items()) if s != "ok")
    click.echo(
        f"scored {report.scored} answers ({report.already_done} already done"
        + (f", {report.not_ready_text()}" if report.not_ready else "")
        + (f"; comparisons not scorable: {problems}" if problems else "")
        + f") in {report.seconds:.1f}s, {report.encoded} strings encoded; "
        f"signature {Signature.blended(report.signature, alpha)}"
    )


@click.group("tau", invoke_without_command=True)
@DB_OPTION
@click.option(
    "--fraction",
    type=FiniteRange(0.0, 1.0, min_open=True),
    default=LOWEST_FRACTION,
    show_default=True,
)
@click.option(
    "--target",
    type=click.Choice(["cus", "gold_sim", "ctx_sim"]),
    default="cus",
    show_default=True,
    help="The score that ranks answers; ctx_sim explains answers against the context KG.",
)
@click.option("--signature", default=None, help="Scores to use (default: the latest).")
@click.option(
    "--encoder",
    default=None,
    help="Encoder to embed triples with (default: the one the scores were made with, on its "
    "backend).",
)
@backend_option
@threshold_option
@click.pass_context
def tau_cmd(
    ctx: click.Context,
    db_path: Path,
    fraction: float,
    target: str,
    signature: str | None,
    encoder: str | None,
    threshold: float | str | None,
) -> None:
    """Explain the lowest-scoring answers of every run triple by triple (TAU).

    `s3kg tau calibrate` fits TAU's threshold to the annotators' labels; `--threshold
    calibrated` then uses it. The TAU signature printed (and stored with every result) names
    the threshold and where it came from.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ..stages.tau import tau_store
    from ..store.store import Store

    report = tau_store(
        Store(existing_db(db_path)),
        fraction=fraction,
        target=target,
        signature=signature,
        encoder=encoder,
        threshold=threshold,
    )
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts.items())
    click.echo(
        f"TAU on {report.analysed} answers (lowest {fraction:g} by {target}): {counts or 'none'}"
        + report.note()
        + (f"; {report.tau_signature}" if report.tau_signature else "")
    )


@tau_cmd.command("calibrate")
@DB_OPTION
@click.option(
    "--task", "task_id", type=int, default=None, help="Only this task's labels (default: all)."
)
@click.option("--signature", default=None, help="Scores whose encoder TAU uses (default: latest).")
@click.option(
    "--encoder", default=None, help="TAU's encoder (default: the one the scores were made with)."
)
@backend_option
@click.option(
    "--curve",
    "curve_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the whole result (the curve at every threshold) as JSON.",
)
@click.pass_context
def tau_calibrate_cmd(
    ctx: click.Context,
    db_path: Path,
    task_id: int | None,
    signature: str | None,
    encoder: str | None,
    curve_path: Path | None,
) -> None:
    """Fit TAU's triple threshold (0.76 by default) to the people's final labels.

    Aligned: confirmed alignments and added pairs; not aligned: rejected alignments and
    confirmed relation or entity mismatches. The threshold (0.30 to 0.99 by 0.01) whose
    "aligned when the sentence cosine reaches it" has the best F1 against them is stored for
    the encoder, for `s3kg tau --threshold calibrated`. Prints the curve.
    """
    from ..annotation.calibrate import calibrate_store
    from ..store.store import Store

    parent = ctx.parent
    if (
        parent is not None
        and ctx.get_parameter_source("db_path") is not click.core.ParameterSource.COMMANDLINE
        and parent.get_parameter_source("db_path") is click.core.ParameterSource.COMMANDLINE
    ):
        db_path = parent.params["db_path"]  # `s3kg tau --db X calibrate` means X too
    check_output(curve_path, option="--curve", databases=[db_path])
    result = calibrate_store(
        Store(existing_db(db_path)), task_id=task_id, encoder=encoder, signature=signature
    )
    click.echo(result.summary())
    click.echo("threshold  precision  recall  F1")
    for p in result.curve:
        mark = " <- chosen" if p.threshold == result.threshold else ""
        mark += " (default)" if p.threshold == result.default.threshold else ""
        click.echo(f"{p.threshold:9.2f}  {p.precision:9.3f}  {p.recall:6.3f}  {p.f1:.3f}{mark}")
    if curve_path is not None:
        write_json_atomic(curve_path, result.to_dict())


@click.command("cus")
@DB_OPTION
@scored_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the table as a JSON list.",
)
def cus_cmd(
    db_path: Path,
    signature: str | None,
    alpha: float | None,
    empty: str,
    json_path: Path | None,
) -> None:
    """GoldSim, CtxSim and CUS per dataset x model x temperature (x extractor).

    n counts the answers in the means (with --empty zero, those with an empty or unparseable
    KG score 0 and count; with --empty drop they are left out), unscored the stored answers
    without a score under the signature; a line after the table gives their reasons, and says
    when answers that can be scored are not yet (a `s3kg score` in progress).
    """
    from ..analysis.cus_table import cus_report
    from ..store.store import Store

    if json_path is not None:
        check_output(json_path, option="--json")
    report = cus_report(
        Store(db_path, read_only=True),
        signature=signature,
        alpha=alpha,
        empty=empty,  # type: ignore[arg-type]
    )
    for line in report.lines():
        click.echo(line)
    if json_path is not None:
        write_json_atomic(json_path, report.records())


def _export_epilog() -> str:
    from ..export.schema import columns_help

    return (
        "Columns, by group (--include adds metadata, triples, tau; the base columns are "
        "always there, followed by the imported file's extra columns, as text, under their own "
        "names: input_NAME where that is taken). Every column has one pandas dtype in every "
        "format (Int64 and boolean may be missing); nested values are JSON text. Read an "
        "export back with its dtypes: s3kg_core.export.schema.read_export.\n\n" + columns_help()
    )


@click.command("export", epilog=_export_epilog())
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), required=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--signature", default=None, help="Scores to use (default: the latest).")
@click.option(
    "--include",
    default=None,
    metavar="GROUPS",
    help="Column groups to add, comma-separated: metadata, triples, tau (or all, none). "
    "Default: all for parquet and json, none for csv.",
)
def export_cmd(
    db_path: Path, fmt: str, out: Path, signature: str | None, include: str | None
) -> None:
    """Export every answer: texts, statuses, components, GoldSim, CtxSim, CUS, and more.

    Answers without a score under the signature are written too, with empty scores and the
    reason in unscored_reason; answer_status and answer_error say how the collection went,
    gold_kg_status, answer_kg_status and context_kg_status how the extraction went; every
    extra column of the imported file follows. The metadata group adds the run's name, model
    and settings and what collect stored of each answer (latency, tokens, model id); triples
    the three KGs; tau TAU's category per reference triple.
    """
    from ..export.schema import parse_include
    from ..export.writer import export_results
    from ..store.store import Store

    groups = parse_include(include, fmt)
    check_output(out)
    n = export_results(
        Store(db_path, read_only=True), out, fmt=fmt, signature=signature, include=groups
    )
    click.echo(f"wrote {n} rows to {out}" + (f" ({', '.join(groups)} included)" if groups else ""))


COMMANDS: tuple[click.Command, ...] = (
    import_group,
    score_cmd,
    tau_cmd,
    cus_cmd,
    export_cmd,
)
"""The commands this module adds to ``s3kg``."""
