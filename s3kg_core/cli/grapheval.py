"""``s3kg grapheval``: triple-level hallucination detection, GraphCorrect and their benchmark."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ._common import (
    DB_OPTION,
    ENCODER_HELP,
    EXIT_STATUS_HELP,
    FiniteRange,
    StageBar,
    backend_option,
    check_output,
    endpoint_options,
    existing_db,
    exit_on_failures,
    llm_client,
    write_json_atomic,
)

__all__ = ["COMMANDS"]

_CHECKERS = ("support", "trained", "nli", "llm")


@click.group()
def grapheval() -> None:
    """GraphEval: check every answer triple against its context, and correct the flagged ones."""


def _make_checker(
    kind: str,
    nli_model: Path | None,
    encoder: str,
    endpoint: dict[str, Any],
    db: Path | None,
    trained_model: Path | None = None,
    checker_backend: str = "auto",
) -> Any:
    from ..errors import CheckerError

    if kind == "support":
        from ..grapheval.checkers.support import SupportChecker

        return SupportChecker(encoder)
    if kind == "trained":
        from ..grapheval.checkers.trained import TrainedChecker

        return TrainedChecker(trained_model, backend=checker_backend)
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
        "calibrated on the dev split; trained: the cross-encoder `grapheval train-checker` "
        "made (--trained-model); nli: a local NLI model (--nli-model); llm: the configured "
        "endpoint.",
    ),
    click.option(
        "--trained-model",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="The folder of a checker made by `grapheval train-checker` for --checker trained "
        "(default: the cache directory's checkers/trained-minilm).",
    ),
    click.option(
        "--checker-backend",
        type=click.Choice(["auto", "torch", "onnx"]),
        default="auto",
        show_default=True,
        help="What runs --checker trained: torch, or onnx (the int8 export "
        "`grapheval export-checker` made; an error when it is missing or stale); auto: onnx "
        "when that export is there and matches the model, else torch.",
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
def bench_cmd(
    dataset: str,
    checker: str,
    trained_model: Path | None,
    checker_backend: str,
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
    from ..evaluation.grapheval import run_bench
    from ..extract.factory import make_extractor

    names = ["summeval", "qags_c", "qags_x"] if dataset == "all" else [dataset]
    details = {name: json_out.with_suffix(f".{name}.jsonl") for name in names}
    # before the work (and before the database is opened), not after it
    check_output(json_out, *details.values(), option="--json")
    check = _make_checker(
        checker, nli_model, encoder, endpoint, db_path, trained_model, checker_backend
    )
    client = llm_client(db_path, endpoint) if extractor == "llm" else None
    ex = make_extractor(extractor, client=client, prompt="single")
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
                detail_path=details[name],
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
def detect_cmd(
    db_path: Path,
    run_ids: tuple[int, ...],
    checker: str,
    trained_model: Path | None,
    checker_backend: str,
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
    check = _make_checker(
        checker, nli_model, encoder, endpoint, db_path, trained_model, checker_backend
    )
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
def correct_cmd(
    db_path: Path,
    run_id: int,
    checker: str,
    trained_model: Path | None,
    checker_backend: str,
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
    check = _make_checker(
        checker, nli_model, encoder, endpoint, db_path, trained_model, checker_backend
    )
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


@grapheval.command("train-checker")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Model folder to write (default: the cache directory's checkers/trained-minilm, "
    "where --checker trained looks).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder (default: $S3KG_DATA_DIR, else ../shared/data).",
)
@click.option(
    "--pairs",
    "n_pairs",
    type=click.IntRange(2),
    default=4000,
    show_default=True,
    help="Synthetic (window, statement) pairs to generate (about half positive).",
)
@click.option(
    "--paraphrase-share",
    type=FiniteRange(0.0, 1.0),
    default=0.3,
    show_default=True,
    help="Share of the pairs drawn from the paraphrase corpora (PAWS-Wiki dev, MRPC train): "
    "reworded positives and word-scrambled negatives; 0 for window text only.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the data generator and of training.",
)
@click.option(
    "--base",
    default="minilm",
    show_default=True,
    help="Packaged encoder to fine-tune (minilm, mpnet) or a local model folder.",
)
@click.option(
    "--max-length",
    type=click.IntRange(32, 512),
    default=256,
    show_default=True,
    help="Tokens per (window, statement) pair.",
)
@click.option("--epochs", type=click.IntRange(1), default=1, show_default=True)
@click.option("--batch-size", type=click.IntRange(1), default=16, show_default=True)
@click.option(
    "--learning-rate",
    type=float,
    default=5e-5,
    show_default=True,
    help="Learning rate of the encoder's unfrozen layers.",
)
@click.option(
    "--head",
    type=click.Choice(["alignment", "classifier"]),
    default="alignment",
    show_default=True,
    help="alignment: a linear head on how well each statement token is matched in the window; "
    "classifier: the usual [CLS] classifier (stays at chance on MiniLM within a CPU budget).",
)
@click.option(
    "--head-learning-rate",
    type=float,
    default=1e-2,
    show_default=True,
    help="Learning rate of the new head.",
)
@click.option(
    "--max-steps",
    type=click.IntRange(1),
    default=None,
    help="Stop after N optimiser steps (a quick trial).",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(1),
    default=25,
    show_default=True,
    help="Steps between resumable checkpoints.",
)
@click.option(
    "--threads",
    type=click.IntRange(1),
    default=None,
    help="Torch CPU threads (default: torch's choice).",
)
@click.option(
    "--freeze-layers",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Keep the embeddings and the lowest N transformer layers frozen (a cheaper step).",
)
@click.option("--fresh", is_flag=True, help="Discard an interrupted run's checkpoint.")
def train_checker_cmd(
    out_dir: Path | None,
    data_dir: Path | None,
    n_pairs: int,
    paraphrase_share: float,
    seed: int,
    base: str,
    max_length: int,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    head: str,
    head_learning_rate: float,
    max_steps: int | None,
    checkpoint_every: int,
    threads: int | None,
    freeze_layers: int,
    fresh: bool,
) -> None:
    """Generate synthetic pairs from non-test texts and fine-tune a cross-encoder checker on them.

    Pairs come from the dev articles of SummEval/QAGS, Wikipedia leads and PubMedQA contexts:
    positives are triples the offline extractor finds in a window, negatives their corruptions
    (swap, same-type entity, relation, negation, number, absent entity). A share of them comes
    from paraphrase corpora (PAWS-Wiki dev, MRPC train): reworded statements as positives,
    word-scrambled ones (PAWS) and corrupted paraphrases as negatives. CPU, fixed seed;
    killed and run again with the same options, it resumes from its last checkpoint. The
    model and its manifest.json (data hash, base model, seed, held-out metrics) are saved
    atomically; use it with `grapheval detect|bench --checker trained`.
    """
    from ..checker_training.paraphrase import paraphrase_pairs
    from ..checker_training.synthetic import GENERATOR_VERSION, generate_pairs, source_documents
    from ..checker_training.training import TrainConfig, train_checker
    from ..grapheval.checkers.model_format import trained_checker_dir
    from ..grapheval.checkers.trained import manifest_summary

    check_output(out_dir, option="--out", folder=True)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    target = out_dir or trained_checker_dir()
    config = TrainConfig(
        base=base,
        seed=seed,
        max_length=max_length,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        head=head,
        head_learning_rate=head_learning_rate,
        max_steps=max_steps,
        checkpoint_every=checkpoint_every,
        freeze_layers=freeze_layers,
    )
    docs = source_documents(data_dir)
    counts: dict[str, int] = {}
    for d in docs:
        counts[d.source] = counts.get(d.source, 0) + 1
    paraphrases = paraphrase_pairs(data_dir) if paraphrase_share > 0 else []
    for p in paraphrases:
        counts[f"{p.source} pairs"] = counts.get(f"{p.source} pairs", 0) + 1
    info = {
        "generator": GENERATOR_VERSION,
        "pairs": n_pairs,
        "paraphrase_share": paraphrase_share if paraphrases else 0.0,
        "seed": seed,
        "documents": counts,
    }

    def make() -> list[Any]:
        click.echo(
            f"generating {n_pairs} pairs from {len(docs)} documents "
            f"and {len(paraphrases)} paraphrase pairs...",
            err=True,
        )
        return generate_pairs(
            docs,
            n_pairs=n_pairs,
            seed=seed,
            paraphrases=paraphrases,
            paraphrase_share=paraphrase_share,
        )

    quiet_bar = not sys.stderr.isatty()

    with StageBar() as bar:

        def progress(done: int, total: int) -> None:
            bar.update("training steps", done, total)
            if quiet_bar and (done % checkpoint_every == 0 or done == total):
                click.echo(f"step {done}/{total}", err=True)  # a log line when no bar shows

        manifest = train_checker(
            target, make, config=config, data_info=info, progress=progress, fresh=fresh
        )
    if manifest["resumed_at_step"]:
        click.echo(f"resumed at step {manifest['resumed_at_step']} of {manifest['steps']}")
    click.echo(manifest_summary(manifest))
    click.echo(f"wrote {target} ({manifest['train_seconds']} s of training)")


@grapheval.command("export-checker")
@click.option(
    "--model",
    "model_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The trained checker's folder (default: the cache directory's checkers/trained-minilm).",
)
@click.option(
    "--pairs-file",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Synthetic pairs (JSONL, e.g. a training run's pairs.jsonl) whose held-out documents "
    "the two backends are measured on (default: the model's heldout_pairs.jsonl, else pairs "
    "generated from the held-out documents).",
)
@click.option(
    "--pairs",
    "n_pairs",
    type=click.IntRange(0),
    default=600,
    show_default=True,
    help="Held-out pairs measured on (a seeded sample of a file's; 0: all of them).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder, to generate held-out pairs (default: $S3KG_DATA_DIR, else "
    "../shared/data).",
)
@click.option(
    "--threads",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Threads of both backends while measuring.",
)
def export_checker_cmd(
    model_dir: Path | None,
    pairs_file: Path | None,
    n_pairs: int,
    data_dir: Path | None,
    threads: int,
) -> None:
    """Export the trained checker's encoder to int8 ONNX inside its folder, measured against torch.

    Writes model.int8.onnx (onnxruntime dynamic quantisation) into the model folder and records
    it in manifest.json with the held-out synthetic metrics and pairs/s of torch and int8, side
    by side. `grapheval detect|bench --checker trained` then run it (--checker-backend auto or
    onnx); a model trained again needs a new export (auto falls back to torch meanwhile).
    """
    from ..checker_training.export import export_checker

    entry = export_checker(
        model_dir, pairs_file=pairs_file, n_pairs=n_pairs, data_dir=data_dir, threads=threads
    )
    held = entry["heldout"]
    click.echo(f"held-out pairs: {held['n']} ({held['source']})")
    for name in ("torch", "onnx_int8"):
        m = held[name]
        click.echo(
            f"{name}: balanced accuracy {m.get('balanced_accuracy')}, AUROC {m.get('auroc')}, "
            f"{m['pairs_per_s']} pairs/s"
        )
    click.echo(
        f"int8 {held['speedup']}x torch's speed; P(supported) changed by at most "
        f"{held['max_abs_diff']} (mean {held['mean_abs_diff']})"
    )
    click.echo(
        f"wrote {entry['file']} ({entry['bytes'] / 1e6:.1f} MB, sha256 {entry['sha256'][:12]})"
    )


COMMANDS: tuple[click.Command, ...] = (grapheval,)
"""The commands this module adds to ``s3kg``."""
