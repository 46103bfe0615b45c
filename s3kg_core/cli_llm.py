"""The LLM-stage commands of ``s3kg``: ``collect``, ``extract`` and ``run``.

Registered on the main group by :mod:`s3kg_core.cli`; thin over :mod:`s3kg_core.collect`,
:mod:`s3kg_core.extraction` and :mod:`s3kg_core.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .cli import DB_OPTION, _existing, _friendly_errors, _scoring_options, _StageBar, cli

__all__: list[str] = []

F = TypeVar("F", bound=Callable[..., Any])


def _endpoint_options(func: F) -> F:
    """Where the LLM is and how hard to push it."""
    options = [
        click.option(
            "--base-url",
            default=None,
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: "
            "$OPENAI_BASE_URL, else OpenAI when $OPENAI_API_KEY is set).",
        ),
        click.option("--model", default=None, help="Model name (default: $S3KG_MODEL)."),
        click.option(
            "--api-key",
            default=None,
            help="API key (default: $OPENAI_API_KEY; never stored or logged).",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 256),
            default=4,
            show_default=True,
            help="Requests in flight at once.",
        ),
        click.option(
            "--rpm",
            type=click.FloatRange(0, min_open=True),
            default=None,
            help="Most requests per minute (default: no limit).",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(0, min_open=True),
            default=60.0,
            show_default=True,
            help="Seconds per request before it is retried.",
        ),
        click.option(
            "--max-retries",
            type=click.IntRange(0, 20),
            default=4,
            show_default=True,
            help="Retries on 429, 5xx, timeouts (exponential backoff, Retry-After honoured).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def _client(db_path: Path | None, endpoint: dict[str, Any]) -> Any:
    """The LLM client of the endpoint options; responses cached in ``db_path`` (else memory)."""
    from .llm import LLMClient, LLMSettings, MemoryCache

    settings = LLMSettings.from_env(
        base_url=endpoint["base_url"],
        model=endpoint["model"],
        api_key=endpoint["api_key"],
        concurrency=endpoint["concurrency"],
        requests_per_minute=endpoint["rpm"],
        timeout=endpoint["timeout"],
        max_retries=endpoint["max_retries"],
    )
    if db_path is None:
        return LLMClient(settings, cache=MemoryCache())
    from .llm_cache import StoreCache
    from .store import Store

    return LLMClient(settings, cache=StoreCache(Store(db_path), settings))


def _temperatures(_ctx: click.Context, _param: click.Parameter, text: str) -> list[float]:
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError as exc:
        raise click.BadParameter(f"a comma-separated list of numbers; got {text!r}") from exc
    if not values:
        raise click.BadParameter("give at least one temperature")
    return values


ENDPOINT_KEYS = ("base_url", "model", "api_key", "concurrency", "rpm", "timeout", "max_retries")


@cli.command("collect")
@DB_OPTION
@_endpoint_options
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
@_friendly_errors
def collect_cmd(
    db_path: Path,
    temperatures: list[float],
    datasets: tuple[str, ...],
    seed: int,
    limit: int | None,
    max_input_chars: int,
    max_tokens: int,
    **endpoint: Any,
) -> None:
    """Ask a model every stored question with its context; store answers, latency and tokens.

    One run per dataset x temperature. Resumable: answered items are skipped, failed ones
    (HTTP errors, timeouts) are asked again, and every response is cached in the database, so
    a rerun never pays twice.
    """
    from .collect import collect_answers
    from .store import Store

    client = _client(_existing(db_path), endpoint)
    with _StageBar() as bar:
        report = collect_answers(
            Store(db_path),
            client,
            datasets=list(datasets) or None,
            temperatures=temperatures,
            seed=seed,
            max_input_chars=max_input_chars,
            max_tokens=max_tokens,
            limit=limit,
            progress=bar.update,
        )
    click.echo(f"collected from {client.settings.model}: {report.summary()}")


def _extractor(
    kind: str, prompt: str, db_path: Path, endpoint: dict[str, Any], max_tokens: int = 2048
) -> Any:
    from .extraction import make_extractor
    from .llm import endpoint_configured

    if kind == "auto":
        kind = "llm" if endpoint_configured(endpoint["base_url"], endpoint["model"]) else "offline"
    if kind == "offline":
        return make_extractor("offline")
    from .extract.llm import LLMExtractor

    return LLMExtractor(
        _client(db_path, endpoint),
        prompt=prompt,  # type: ignore[arg-type]
        max_tokens=max_tokens,
    )


_EXTRACTOR_OPTION = click.option(
    "--extractor",
    type=click.Choice(["auto", "llm", "offline"]),
    default="auto",
    show_default=True,
    help="llm: the configured endpoint; offline: spaCy rules, no LLM; auto: llm when an "
    "endpoint and model are configured, else offline.",
)
_PROMPT_OPTION = click.option(
    "--prompt",
    type=click.Choice(["joint", "single"]),
    default="joint",
    show_default=True,
    help="LLM prompt: joint (S3KG: gold, answer, context in one call, consistent labels) or "
    "single (GraphEval: each text alone).",
)


@cli.command("extract")
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
@_endpoint_options
@_friendly_errors
def extract_cmd(
    db_path: Path,
    extractor: str,
    prompt: str,
    max_tokens: int,
    run_ids: tuple[int, ...],
    **endpoint: Any,
) -> None:
    """Extract the gold, answer and context KGs of every answer not extracted yet.

    Resumable: items with their three KGs are skipped, failed extractions are tried again.
    Malformed triples are dropped and counted; texts over the budget are cut and flagged.
    """
    from .extraction import extract_store
    from .store import Store

    ex = _extractor(extractor, prompt, _existing(db_path), endpoint, max_tokens=max_tokens)
    with _StageBar() as bar:
        report = extract_store(
            Store(db_path), ex, run_ids=list(run_ids) or None, progress=bar.update
        )
    click.echo(f"extracted with {ex.name}: {report.summary()}")


@cli.command("run")
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
@_endpoint_options
@_scoring_options
@click.option(
    "--fraction",
    type=click.FloatRange(0.0, 1.0, min_open=True),
    default=0.05,
    show_default=True,
    help="TAU explains this lowest-scoring share of each run.",
)
@_friendly_errors
def run_cmd(
    db_path: Path,
    pubmedqa: Path | None,
    table: Path | None,
    mapping: str | None,
    datasets: tuple[str, ...],
    temperatures: list[float],
    limit: int | None,
    seed: int,
    extractor: str,
    prompt: str,
    encoder: str,
    mode: str,
    alpha: float,
    tau: float,
    wl_iterations: int,
    fraction: float,
    **endpoint: Any,
) -> None:
    """Import -> collect -> extract -> score -> TAU, each stage resumable.

    Without an endpoint the collect stage is skipped (answers must already be stored, e.g.
    imported with a table's answer column) and extraction is offline.
    """
    from .collect import collect_answers
    from .extraction import extract_store
    from .importers import import_pubmedqa, import_table, parse_mapping
    from .llm import endpoint_configured
    from .pipeline import score_store, tau_store
    from .s3kg import S3KGConfig
    from .store import Store

    store = Store(db_path)
    if pubmedqa is not None:
        click.echo("import: " + import_pubmedqa(store, pubmedqa).summary())
    if table is not None:
        if not mapping:
            raise click.UsageError("--table needs --map")
        click.echo("import: " + import_table(store, table, parse_mapping(mapping)).summary())
    _existing(db_path)
    with _StageBar() as bar:
        if endpoint_configured(endpoint["base_url"], endpoint["model"]):
            client = _client(db_path, endpoint)
            report = collect_answers(
                store,
                client,
                datasets=list(datasets) or None,
                temperatures=temperatures,
                seed=seed,
                limit=limit,
                progress=bar.update,
            )
            click.echo(f"collect: {report.summary()}")
        else:
            click.echo("collect: skipped (no endpoint configured; using stored answers)")
        ex = _extractor(extractor, prompt, db_path, endpoint)
        click.echo(
            f"extract ({ex.name}): " + extract_store(store, ex, progress=bar.update).summary()
        )
        config = S3KGConfig(
            mode=mode,  # type: ignore[arg-type]
            alpha=alpha,
            tau=tau,
            wl_iterations=wl_iterations,
        )
        scored = score_store(store, encoder=encoder, config=config, progress=bar.update)
    click.echo(
        f"score: {scored.scored} answers scored, {scored.already_done} already done, "
        f"{scored.not_ready} without KGs"
    )
    if scored.scored + scored.already_done:
        tau_report = tau_store(store, fraction=fraction, signature=scored.signature, alpha=alpha)
        counts = ", ".join(f"{k} {v}" for k, v in sorted(tau_report.counts.items()))
        click.echo(f"tau: {tau_report.analysed} answers analysed: {counts or 'nothing found'}")
