"""The LLM-stage commands of ``s3kg``: ``collect``, ``extract`` and ``run``.

Added to the main group by :mod:`s3kg_core.cli`; thin over
:func:`s3kg_core.stages.collect.collect_answers`, :func:`s3kg_core.stages.extract.extract_store`
and :func:`s3kg_core.stages.run.run_pipeline`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..scoring.tau import LOWEST_FRACTION
from ._common import (
    DB_OPTION,
    EXIT_STATUS_HELP,
    FiniteRange,
    StageBar,
    endpoint_options,
    existing_db,
    exit_on_failures,
    llm_client,
    scoring_options,
)

if TYPE_CHECKING:
    from ..extract.base import Extractor

__all__ = ["COMMANDS"]


def _origin(flag: str | None, variable: str, default: str | None = None) -> tuple[str, str]:
    """A setting's value and where it came from: its flag, the environment or the default."""
    if flag:
        return flag, "flag"
    if os.environ.get(variable):
        return os.environ[variable], f"${variable}"
    return default or "none", "default"


def _endpoint_line(endpoint: dict[str, Any]) -> str:
    """``endpoint URL (from), model NAME (from)``: what an LLM command is about to call."""
    from ..llm.client import DEFAULT_BASE_URL
    from ..llm.urls import redact_url

    url, url_from = _origin(endpoint["base_url"], "OPENAI_BASE_URL", DEFAULT_BASE_URL)
    model, model_from = _origin(endpoint["model"], "S3KG_MODEL")
    if url_from == "flag":
        url_from = "--base-url"
    if model_from == "flag":
        model_from = "--model"
    return f"endpoint {redact_url(url)} ({url_from}), model {model} ({model_from})"


def _extractor_line(kind: str, chosen_by: str, prompt: str, endpoint: dict[str, Any]) -> str:
    """Which extractor a command uses and why, with the endpoint of an LLM one."""
    if kind == "offline":
        why = "--extractor offline" if chosen_by == "flag" else "the default"
        return f"extractor offline, spaCy rules, no LLM ({why}; --extractor llm uses an endpoint)"
    return f"extractor llm (--extractor llm, prompt {prompt}), {_endpoint_line(endpoint)}"


def _local_endpoint(model: str, endpoint: dict[str, Any]) -> dict[str, Any]:
    """The endpoint options pointed at ``model``, served in this process until the command ends.

    Raises
    ------
    click.UsageError
        If an endpoint is named too (--base-url, --model or --api-key).
    """
    named = [f"--{k.replace('_', '-')}" for k in ("base_url", "model", "api_key") if endpoint[k]]
    if named:
        raise click.UsageError(f"--local serves its own model: leave out {', '.join(named)}")
    from ..llm.serve import local_server

    server = click.get_current_context().with_resource(local_server(model, say=click.echo))
    click.echo(f"collect: the local model {server.name}, served at {server.base_url} (--local)")
    return {**endpoint, "base_url": server.base_url, "model": server.model, "api_key": "local"}


def _temperatures(_ctx: click.Context, _param: click.Parameter, text: str) -> list[float]:
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"a comma-separated list of numbers; got {text!r}") from exc
    if not values:
        raise click.BadParameter("give at least one temperature")
    return values


@click.command("collect", epilog=EXIT_STATUS_HELP)
@DB_OPTION
@endpoint_options
@click.option(
    "--local",
    "local_model",
    default=None,
    metavar="smollm2|PATH",
    help="Answer with a local model served in this process while the command runs, not an "
    "endpoint: smollm2 (the packaged SmolLM2-135M-Instruct, converted once into the cache "
    "folder) or the PATH of a local transformers model folder. No network, key or GPU; not "
    "with --base-url, --model or --api-key.",
)
@click.option(
    "--temperatures",
    default="0",
    show_default=True,
    callback=_temperatures,
    help="Comma-separated temperatures, one run each (e.g. 0,0.3,0.7,1.0).",
)
@click.option("--dataset", "datasets", multiple=True, help="Only this dataset (repeatable).")
@click.option("--seed", type=int, default=0, show_default=True, help="Sent with every request.")
@click.option("--limit", type=click.IntRange(1), default=None, help="First N items per dataset.")
@click.option(
    "--max-input-chars",
    type=click.IntRange(100),
    default=12_000,
    show_default=True,
    help="Longer contexts are cut at a word boundary and the answer flagged truncated.",
)
@click.option("--max-tokens", type=click.IntRange(1), default=512, show_default=True)
@click.option(
    "--refresh",
    is_flag=True,
    help="Ask the answered items again too, ignoring cached replies (new ones replace them).",
)
@click.option(
    "--name",
    default=None,
    help="The runs' display name (default: the model's short name, e.g. the last part of a path).",
)
def collect_cmd(
    db_path: Path,
    temperatures: list[float],
    datasets: tuple[str, ...],
    seed: int,
    limit: int | None,
    max_input_chars: int,
    max_tokens: int,
    refresh: bool,
    name: str | None,
    local_model: str | None,
    **endpoint: Any,
) -> None:
    """Ask a model every stored question with its context; store answers, latency and tokens.

    The model is an OpenAI-compatible endpoint, or with --local the packaged SmolLM2 (or a
    local model folder) served in this process for the command's duration. One run per
    dataset x temperature. Resumable: answered items are skipped, failed ones
    (HTTP errors, timeouts) are asked again, and every usable response is cached in the
    database, so a rerun never pays twice. --refresh asks everything again on purpose.
    Requests are streamed; at most --concurrency are in flight, fewer while the server
    queues them, and a timed-out request is sent again only once the server is past it.
    """
    from ..stages.collect import collect_answers
    from ..store.store import Store

    existing = existing_db(db_path)
    if local_model is not None:
        endpoint = _local_endpoint(local_model, endpoint)
    client = llm_client(existing, endpoint, refresh=refresh)
    if local_model is None:
        click.echo(f"collect: {_endpoint_line(endpoint)}")
    with StageBar() as bar:
        report = collect_answers(
            Store(db_path),
            client,
            datasets=list(datasets) or None,
            temperatures=temperatures,
            seed=seed,
            max_input_chars=max_input_chars,
            max_tokens=max_tokens,
            limit=limit,
            refresh=refresh,
            name=name,
            progress=bar.update,
        )
    from ..store.records import short_name

    shown = name or short_name(client.settings.model)
    click.echo(f"collected from {shown}: {report.summary()}")
    exit_on_failures([report.stage_failures()])


def _extractor(
    kind: str | None,
    prompt: str,
    db_path: Path,
    endpoint: dict[str, Any],
    max_tokens: int = 2048,
    *,
    refresh: bool = False,
    say: str = "extract",
) -> Extractor:
    """The extractor of the ``--extractor`` / ``--prompt`` options, said on one line first.

    No option: offline, whatever the environment holds (an exported ``OPENAI_BASE_URL`` never
    switches extraction to the LLM by itself).
    """
    from ..extract.factory import make_extractor

    chosen_by = "flag" if kind else "default"
    kind = kind or "offline"
    click.echo(f"{say}: {_extractor_line(kind, chosen_by, prompt, endpoint)}")
    client = llm_client(db_path, endpoint, refresh=refresh) if kind == "llm" else None
    return make_extractor(
        kind,
        client=client,
        prompt=prompt,  # type: ignore[arg-type]
        max_tokens=max_tokens,
    )


_EXTRACTOR_OPTION = click.option(
    "--extractor",
    type=click.Choice(["offline", "llm"]),
    default=None,
    help="offline (the default): spaCy rules, no LLM; llm: the endpoint of --base-url / "
    "$OPENAI_BASE_URL and --model / $S3KG_MODEL. The command's first line says which it uses "
    "and why.",
)
_PROMPT_OPTION = click.option(
    "--prompt",
    type=click.Choice(["joint", "single"]),
    default="joint",
    show_default=True,
    help="LLM prompt: joint (S3KG: gold, answer, context in one call, consistent labels) or "
    "single (GraphEval: each text alone).",
)


@click.command("extract", epilog=EXIT_STATUS_HELP)
@DB_OPTION
@_EXTRACTOR_OPTION
@_PROMPT_OPTION
@click.option(
    "--max-tokens",
    type=click.IntRange(16),
    default=2048,
    show_default=True,
    help="Length limit of each LLM extraction response.",
)
@click.option(
    "--run",
    "run_ids",
    type=int,
    multiple=True,
    help="Only this run (repeatable); a run extracted with another extractor is copied first.",
)
@click.option(
    "--refresh",
    is_flag=True,
    help="Extract the items already done too, ignoring cached replies (new ones replace them).",
)
@endpoint_options
def extract_cmd(
    db_path: Path,
    extractor: str | None,
    prompt: str,
    max_tokens: int,
    run_ids: tuple[int, ...],
    refresh: bool,
    **endpoint: Any,
) -> None:
    """Extract the gold, answer and context KGs of every answer not extracted yet.

    Resumable: items with their three KGs are skipped, failed extractions (an error, an
    empty, refused or unparseable reply, none of which is cached) are asked again.
    Malformed triples are dropped and counted; texts over the budget are cut and flagged.
    --refresh extracts everything again on purpose.
    """
    from ..stages.extract import extract_store
    from ..store.store import Store

    ex = _extractor(
        extractor, prompt, existing_db(db_path), endpoint, max_tokens=max_tokens, refresh=refresh
    )
    with StageBar() as bar:
        report = extract_store(
            Store(db_path),
            ex,
            run_ids=list(run_ids) or None,
            refresh=refresh,
            progress=bar.update,
        )
    for note in report.notes():
        click.echo(f"extract: {note}")
    client = getattr(ex, "client", None)
    if getattr(client, "schema_refused", False):
        click.echo(
            "extract: the endpoint refused response_format (the replies' JSON schema); "
            "the requests were sent without it and the replies parsed as free text"
        )
    click.echo(f"extracted with {ex.name}: {report.summary()}")
    exit_on_failures([report.stage_failures()])


@click.command("run", epilog=EXIT_STATUS_HELP)
@DB_OPTION
@click.option(
    "--pubmedqa",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Import PubMedQA's ori_pqal.json first.",
)
@click.option(
    "--table",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Import a CSV/JSONL file first (with --map).",
)
@click.option("--map", "mapping", default=None, help="Column mapping for --table.")
@click.option("--dataset", "datasets", multiple=True, help="Only this dataset (repeatable).")
@click.option(
    "--temperatures",
    default="0",
    show_default=True,
    callback=_temperatures,
    help="Comma-separated, one run each.",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="First N items per dataset.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sent with every request.")
@_EXTRACTOR_OPTION
@_PROMPT_OPTION
@endpoint_options
@scoring_options
@click.option(
    "--fraction",
    type=FiniteRange(0.0, 1.0, min_open=True),
    default=LOWEST_FRACTION,
    show_default=True,
    help="TAU explains this lowest-scoring share of each run.",
)
@click.option(
    "--name",
    default=None,
    help="Display name of the collected runs (default: the model's short name).",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1),
    default=512,
    show_default=True,
    help="Length limit of each collected answer.",
)
@click.option(
    "--extract-max-tokens",
    type=click.IntRange(16),
    default=2048,
    show_default=True,
    help="Length limit of each LLM extraction response (--extractor llm).",
)
def run_cmd(
    db_path: Path,
    pubmedqa: Path | None,
    table: Path | None,
    mapping: str | None,
    datasets: tuple[str, ...],
    temperatures: list[float],
    limit: int | None,
    seed: int,
    extractor: str | None,
    prompt: str,
    encoder: str,
    mode: str,
    alpha: float,
    tau: float,
    wl_iterations: int | None,
    fraction: float,
    name: str | None,
    max_tokens: int,
    extract_max_tokens: int,
    **endpoint: Any,
) -> None:
    """Import -> collect -> extract -> score -> TAU, each stage resumable.

    Without an endpoint the collect stage is skipped (answers must already be stored, e.g.
    imported with a table's answer column, whose model --model names). Extraction is offline
    unless --extractor llm says otherwise; the first lines say what each stage uses and why.
    """
    from ..llm.client import endpoint_configured
    from ..scoring.s3kg import S3KGConfig
    from ..stages.importing import parse_mapping
    from ..stages.run import (
        CollectSettings,
        Importer,
        PubMedQAImport,
        TableImport,
        TauSettings,
        run_pipeline,
    )
    from ..store.store import Store

    imports: list[Importer] = []
    if pubmedqa is not None:
        imports.append(PubMedQAImport(pubmedqa))
    if table is not None:
        if not mapping:
            raise click.UsageError("--table needs --map")
        imports.append(TableImport(table, parse_mapping(mapping), model=endpoint["model"]))
    if not imports:
        existing_db(db_path)
    collect = None
    if endpoint_configured(endpoint["base_url"], endpoint["model"]):
        click.echo(f"run: collect from {_endpoint_line(endpoint)}")
        collect = CollectSettings(
            llm_client(db_path, endpoint),
            datasets=list(datasets) or None,
            temperatures=temperatures,
            seed=seed,
            limit=limit,
            max_tokens=max_tokens,
            name=name,
        )
    chosen = _extractor(
        extractor, prompt, db_path, endpoint, max_tokens=extract_max_tokens, say="run"
    )
    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
    )
    with StageBar() as bar:
        report = run_pipeline(
            Store(db_path),
            imports=imports,
            collect=collect,
            extractor=chosen,
            encoder=encoder,
            config=config,
            tau=TauSettings(fraction=fraction),
            progress=bar.update,
            on_stage=click.echo,
        )
    exit_on_failures(report.stage_failures())


COMMANDS: tuple[click.Command, ...] = (
    collect_cmd,
    extract_cmd,
    run_cmd,
)
"""The commands this module adds to ``s3kg``."""
