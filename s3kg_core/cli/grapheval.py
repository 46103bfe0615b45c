"""``s3kg grapheval``: triple-level hallucination detection, GraphCorrect and their benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ._common import (
    DB_OPTION,
    ENCODER_HELP,
    EXIT_STATUS_HELP,
    StageBar,
    backend_option,
    check_writable,
    endpoint_options,
    existing_db,
    exit_on_failures,
    friendly_errors,
    llm_client,
    write_json_atomic,
)

__all__ = ["COMMANDS"]

_CHECKERS = ("support", "nli", "llm")


@click.group()
def grapheval() -> None:
    """GraphEval: check every answer triple against its context, and correct the flagged ones."""


def _make_checker(
    kind: str, nli_model: Path | None, encoder: str, endpoint: dict[str, Any], db: Path | None
) -> Any:
    from ..errors import CheckerError

    if kind == "support":
        from ..grapheval.checkers.support import SupportChecker

        return SupportChecker(encoder)
    if kind == "nli":
        if nli_model is None:
            raise CheckerError("--checker nli needs --nli-model DIR (a local NLI model folder)")
        from ..grapheval.checkers.nli import NLIChecker

        return NLIChecker(nli_model)
    from ..grapheval.checkers.llm import LLMChecker

    return LLMChecker(llm_client(db, endpoint))


_CHECKER_OPTIONS = [
    click.option(
        "--checker",
        type=click.Choice(_CHECKERS),
        default="support",
        show_default=True,
        help="support: offline embedding support with number/negation/entity checks, "
        "calibrated on the dev split; nli: a local NLI model (--nli-model); llm: the "
        "configured endpoint.",
    ),
    click.option(
        "--nli-model",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="A local Hugging Face NLI model folder (e.g. DeBERTa-MNLI, HHEM) for --checker nli.",
    ),
    click.option(
        "--encoder",
        default="minilm",
        show_default=True,
        help=f"Sentence encoder of the support checker: {ENCODER_HELP}",
    ),
]


def _checker_options(func: Any) -> Any:
    func = backend_option(func)
    for option in reversed(_CHECKER_OPTIONS):
        func = option(func)
    return func


@grapheval.command("bench")
@click.option(
    "--dataset",
    type=click.Choice(["summeval", "qags_c", "qags_x", "all"]),
    default="all",
    show_default=True,
    help="Benchmark (TRUE-binarised, label 1 = consistent).",
)
@_checker_options
@click.option(
    "--json",
    "json_out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Where to write the result (a list when --dataset all).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder (default: $S3KG_DATA_DIR, else ../shared/data).",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="A stratified sample of N.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --limit.")
@click.option(
    "--split",
    type=click.Choice(["test", "dev", "all"]),
    default="test",
    show_default=True,
    help="Article-level split (dev is what the support checker was calibrated on).",
)
@click.option(
    "--extractor",
    type=click.Choice(["offline", "llm"]),
    default="offline",
    show_default=True,
    help="KG extraction: offline spaCy rules, or the endpoint with GraphEval's single prompt.",
)
@click.option("--no-raw", is_flag=True, help="Skip the raw checker (whole summary vs article).")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also store the result rows in this DuckDB file (table grapheval_bench), and cache "
    "the endpoint's replies there (--checker llm, --extractor llm): a killed run, rerun, asks "
    "only what it had not asked.",
)
@endpoint_options
@friendly_errors
def bench_cmd(
    dataset: str,
    checker: str,
    nli_model: Path | None,
    encoder: str,
    json_out: Path,
    data_dir: Path | None,
    limit: int | None,
    seed: int,
    split: str,
    extractor: str,
    no_raw: bool,
    db_path: Path | None,
    **endpoint: Any,
) -> None:
    """Balanced accuracy of a checker alone (raw) and with the KG (GraphEval's Table 2).

    A summary is predicted inconsistent when the raw probability, or any triple's probability,
    exceeds 0.5. Per-summary detections go next to the JSON (OUT.<dataset>.jsonl).
    """
    from ..extract.factory import make_extractor
    from ..grapheval.bench import run_bench

    check_writable(json_out)  # before the work, not after it
    check = _make_checker(checker, nli_model, encoder, endpoint, db_path)
    client = llm_client(db_path, endpoint) if extractor == "llm" else None
    ex = make_extractor(extractor, client=client, prompt="single")
    names = ["summeval", "qags_c", "qags_x"] if dataset == "all" else [dataset]
    results = []
    for name in names:
        with StageBar() as bar:
            result = run_bench(
                name,
                check,
                ex,
                data_dir=data_dir,
                split=split,
                limit=limit,
                seed=seed,
                raw=not no_raw,
                detail_path=json_out.with_suffix(f".{name}.jsonl"),
                progress=lambda done, total: bar.update("summaries", done, total),
            )
        results.append(result)
        raw = result["raw"]["balanced_accuracy"] if result["raw"] else None
        click.echo(
            f"{name} ({result['split']}, n={result['n']}): raw {raw}, "
            f"kg {result['kg']['balanced_accuracy']} ({result['kg']['flagged_triples']} "
            "flagged triples)"
        )
    write_json_atomic(json_out, results[0] if len(results) == 1 else results)
    if db_path is not None:
        from ..grapheval.results import put_bench_row
        from ..store.store import Store

        with Store(db_path).transaction() as con:
            for result in results:
                put_bench_row(con, result)
    click.echo(f"wrote {json_out}")


@grapheval.command("detect", epilog=EXIT_STATUS_HELP)
@DB_OPTION
@click.option("--run", "run_ids", type=int, multiple=True, help="Only this run (repeatable).")
@_checker_options
@click.option("--no-raw", is_flag=True, help="Skip raw mode (whole answer vs context).")
@endpoint_options
@friendly_errors
def detect_cmd(
    db_path: Path,
    run_ids: tuple[int, ...],
    checker: str,
    nli_model: Path | None,
    encoder: str,
    no_raw: bool,
    **endpoint: Any,
) -> None:
    """Check every stored answer's KG against its context (table grapheval_results).

    Uses the answer KGs already extracted (`s3kg extract`). Resumable: answers already judged
    with this checker are skipped; those it judged no triple of are checked again.
    """
    from ..failures import StageFailures
    from ..grapheval.results import detect_store
    from ..store import queries
    from ..store.store import Store

    store = Store(existing_db(db_path))
    if not run_ids:
        with store.connect() as con:
            run_ids = tuple(queries.run_ids(con))
    check = _make_checker(checker, nli_model, encoder, endpoint, db_path)
    failures = []
    for run in run_ids:
        with StageBar() as bar:
            report = detect_store(store, run, check, raw=not no_raw, progress=bar.update)
        click.echo(report.summary())
        failures.append(report.stage_failures())
    exit_on_failures([StageFailures.combine(failures)] if failures else [])


@grapheval.command("correct")
@DB_OPTION
@click.option("--run", "run_id", type=int, required=True, help="The run to correct.")
@_checker_options
@click.option(
    "--method",
    type=click.Choice(["graphcorrect", "direct"]),
    default="graphcorrect",
    show_default=True,
    help="graphcorrect: fix each flagged triple, then edit the answer (two prompts per "
    "triple); direct: one 'correct the answer given the context' prompt.",
)
@click.option("--limit", type=click.IntRange(1), default=None, help="First N flagged answers.")
@endpoint_options
@friendly_errors
def correct_cmd(
    db_path: Path,
    run_id: int,
    checker: str,
    nli_model: Path | None,
    encoder: str,
    method: str,
    limit: int | None,
    **endpoint: Any,
) -> None:
    """Correct the answers flagged by `s3kg grapheval detect` (needs an LLM endpoint).

    The corrected answer is checked again (same checker, and the run's extractor when it is
    the offline one, else the endpoint); corrected answers and their report are stored on the
    detection rows.
    """
    from ..extract.factory import make_extractor
    from ..grapheval.correct import GraphCorrect, summarise_corrections
    from ..grapheval.detect import GraphEval
    from ..grapheval.results import load_results, put_corrections
    from ..store.store import Store

    store = Store(existing_db(db_path))
    check = _make_checker(checker, nli_model, encoder, endpoint, db_path)
    with store.connect() as con:
        rows = load_results(con, run_id, check.name, inconsistent_only=True)
    if limit is not None:
        rows = rows[:limit]
    if not rows:
        click.echo(f"run {run_id}: no flagged answers for checker {check.name}; run detect first")
        return
    extractor_name = str(rows[0]["extractor"])
    offline = extractor_name.startswith("offline")
    ex = make_extractor(
        "offline" if offline else "llm",
        client=None if offline else llm_client(db_path, endpoint),
        prompt="single",
    )
    gc = GraphCorrect(llm_client(db_path, endpoint), GraphEval(check, ex))
    answers = [str(r["answer"] or "") for r in rows]
    contexts = [str(r["context"] or "") for r in rows]
    detections = [r["detection"] for r in rows]
    run = gc.correct_many if method == "graphcorrect" else gc.direct_many
    corrections = run(answers, contexts, detections)
    with store.transaction() as con:
        put_corrections(
            con,
            run_id,
            check.name,
            extractor_name,
            [(int(r["item_id"]), c) for r, c in zip(rows, corrections, strict=True)],
        )
    click.echo(json.dumps(summarise_corrections(corrections)))


COMMANDS: tuple[click.Command, ...] = (grapheval,)
"""The commands this module adds to ``s3kg``."""
