"""``s3kg factuality``: KG statements, LLM labels, and a judge on the LLM's hidden states.

Thin over :mod:`s3kg_core.factuality`: each command reads files, calls one library
function, writes files, and turns library errors into a one-line error with exit status 1.
The files flow ``build`` -> statements.parquet -> ``label`` -> labelled.parquet ->
``hidden`` -> hidden/ -> ``train`` -> judge/ -> ``evaluate`` -> JSON (and DuckDB).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import click

from ._common import (
    StageBar,
    check_output,
    endpoint_options,
    write_json_atomic,
)

__all__ = ["COMMANDS"]

_PATH = click.Path(path_type=Path)
_EXISTING = click.Path(exists=True, path_type=Path)


@click.group()
def factuality() -> None:
    """Factuality at scale: what an LLM knows about KG facts, read from its hidden states.

    A run, one command per step: build (statements from a KG), label (the LLM's own True /
    False / I don't know), hidden (its hidden states), train (the judge, --layer-sweep to
    choose the layer on validation), evaluate (--json; judge vs majority vs logistic
    regression, correctness / truthfulness / informativeness).
    """


@factuality.command("build")
@click.option(
    "--kg",
    "kg_spec",
    default="findkg",
    show_default=True,
    help="findkg (from the shared data folder) or a CSV/Parquet file with columns head, "
    "relation, tail (optionally head_type, tail_type).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder holding findkg/ (default: $S3KG_DATA_DIR or ../shared/data).",
)
@click.option(
    "--n",
    type=click.IntRange(1),
    default=None,
    help="How many facts to sample as true statements (default: all).",
)
@click.option(
    "--negatives-per-positive",
    type=click.IntRange(0),
    default=1,
    show_default=True,
    help="False statements per true one: the tail or head replaced by an entity of the same "
    "type, never a known fact.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seeds sampling.")
@click.option("--out", type=_PATH, required=True, help="Parquet file to write.")
def build_cmd(
    kg_spec: str,
    data_dir: Path | None,
    n: int | None,
    negatives_per_positive: int,
    seed: int,
    out: Path,
) -> None:
    """Turn KG facts into true statements and corrupted false ones (Parquet)."""
    from ..factuality.kg import load_kg
    from ..factuality.statements import build_statements, write_statements

    check_output(out)
    kg = load_kg(kg_spec, data_dir)
    table, report = build_statements(
        kg, n, negatives_per_positive=negatives_per_positive, seed=seed
    )
    write_statements(table, out)
    click.echo(f"{kg.name} ({len(kg)} facts): {report.summary()}; wrote {out}")


@factuality.command("label")
@click.argument("statements", type=_EXISTING)
@click.option(
    "--local",
    "local_model",
    default=None,
    help="Label locally with this model: smollm2 (packaged) or a model folder. Without it, "
    "the endpoint options below are used.",
)
@click.option(
    "--calibrate",
    is_flag=True,
    help="With --local: subtract a content-free input's answer scores (contextual calibration).",
)
@click.option("--batch-size", type=click.IntRange(1), default=16, show_default=True)
@click.option(
    "--db",
    "db_path",
    type=_PATH,
    default=Path("data") / "s3kg.duckdb",
    show_default=True,
    help="With an endpoint: the DuckDB file that caches its answers.",
)
@click.option("--out", type=_PATH, required=True, help="Parquet file to write.")
@endpoint_options
def label_cmd(
    statements: Path,
    local_model: str | None,
    calibrate: bool,
    batch_size: int,
    db_path: Path,
    out: Path,
    **endpoint: Any,
) -> None:
    """Ask the target LLM whether each statement is True, False, or I don't know.

    Locally, the three answers are scored after the prompt (no sampling). Through an
    endpoint, replies are parsed strictly; anything else is kept as unparsable, never guessed.
    """
    from ..factuality.labels import LocalLabeler, label_counts, label_with_client
    from ..factuality.statements import read_statements, write_statements

    check_output(out)
    table = read_statements(statements, ("statement_id", "statement"))
    with StageBar() as bar:
        if local_model is not None:
            labeler = LocalLabeler(local_model, batch_size=batch_size, calibrate=calibrate)
            labelled = labeler.label(table, progress=partial(bar.update, "labelling"))
        else:
            from ._common import llm_client

            labelled = label_with_client(
                table, llm_client(db_path, endpoint), progress=partial(bar.update, "labelling")
            )
    write_statements(labelled, out)
    counts = ", ".join(f"{k} {v}" for k, v in label_counts(labelled).items())
    click.echo(f"labelled {len(labelled)} statements: {counts}; wrote {out}")


def _layers(text: str | None) -> list[int] | None:
    if text is None or text.strip().lower() == "all":
        return None
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise click.BadParameter(
            f"a comma-separated list of layers or 'all'; got {text!r}"
        ) from exc


@factuality.command("hidden")
@click.argument("statements", type=_EXISTING)
@click.option(
    "--model",
    default="smollm2",
    show_default=True,
    help="The target LLM: smollm2 (packaged) or a local model folder.",
)
@click.option("--layers", default="all", show_default=True, help="Comma-separated layers or all.")
@click.option(
    "--pooling",
    type=click.Choice(["last", "mean", "both"]),
    default="last",
    show_default=True,
    help="last: the last prompt token's state; mean: the mean over the statement's tokens.",
)
@click.option("--batch-size", type=click.IntRange(1), default=16, show_default=True)
@click.option(
    "--workers",
    type=click.IntRange(0),
    default=0,
    show_default=True,
    help="Ray Data workers (each loads the model once); 0: in this process, no Ray.",
)
@click.option(
    "--ray-address",
    default="local",
    show_default=True,
    help="local (start a local Ray cluster) or the address of a running cluster.",
)
@click.option("--out", type=_PATH, required=True, help="Parquet file (no Ray) or folder (Ray).")
def hidden_cmd(
    statements: Path,
    model: str,
    layers: str,
    pooling: str,
    batch_size: int,
    workers: int,
    ray_address: str,
    out: Path,
) -> None:
    """Read the target LLM's hidden states for every statement (one row per statement)."""
    from ..factuality.hidden import HiddenStateExtractor, hidden_table, write_hidden
    from ..factuality.statements import read_statements

    check_output(out, folder=workers > 0)
    table = read_statements(statements, ("statement_id", "statement"))
    poolings = ("last", "mean") if pooling == "both" else (pooling,)
    chosen = _layers(layers)
    if workers > 0:
        from ..factuality.ray_jobs import extract_hidden_ray

        report = extract_hidden_ray(
            table,
            out,
            model=model,
            layers=chosen,
            pooling=poolings,
            workers=workers,
            address=ray_address,
            batch_size=batch_size,
        )
        click.echo(f"hidden states: {report.summary()}")
        return
    extractor = HiddenStateExtractor(model, layers=chosen, pooling=poolings, batch_size=batch_size)
    with StageBar() as bar:
        features = extractor.extract(
            [str(s) for s in table["statement"]], progress=partial(bar.update, "hidden states")
        )
    write_hidden(hidden_table(table["statement_id"].tolist(), features, extractor.layers), out)
    read = list(extractor.layers)
    contiguous = read == list(range(read[0], read[-1] + 1))
    named = f"{read[0]}..{read[-1]}" if contiguous and len(read) > 2 else ",".join(map(str, read))
    click.echo(
        f"hidden states of {len(table)} statements, layers {named}, "
        f"pooling {'+'.join(poolings)}; wrote {out}"
    )


@factuality.command("train")
@click.argument("statements", type=_EXISTING)
@click.argument("hidden", type=_EXISTING)
@click.option("--layer", type=click.IntRange(0), default=None, help="Train on this layer.")
@click.option(
    "--layer-sweep",
    is_flag=True,
    help="Train one judge per stored layer and keep the best on validation accuracy.",
)
@click.option("--pooling", type=click.Choice(["last", "mean"]), default="last", show_default=True)
@click.option("--hidden-dim", type=click.IntRange(1), default=256, show_default=True)
@click.option("--max-epochs", type=click.IntRange(1), default=200, show_default=True)
@click.option("--model-name", default="", help="Name of the target LLM, kept with the judge.")
@click.option("--seed", type=int, default=0, show_default=True, help="Judge training seed.")
@click.option("--split-seed", type=int, default=0, show_default=True, help="Seeds the fact split.")
@click.option("--out", type=_PATH, required=True, help="Folder for the judge.")
def train_cmd(
    statements: Path,
    hidden: Path,
    layer: int | None,
    layer_sweep: bool,
    pooling: str,
    hidden_dim: int,
    max_epochs: int,
    model_name: str,
    seed: int,
    split_seed: int,
    out: Path,
) -> None:
    """Train the judge (LayerNorm, Linear, ReLU, Linear) to predict the LLM's own labels.

    Splits by fact (60/20/20 train/validation/test), early-stops on validation. Give --layer,
    or --layer-sweep to pick the layer by validation accuracy (the test split is never used).
    """
    from dataclasses import replace

    from ..evaluation.factuality import load_labelled, pick_layer, sweep_layers, train_judge
    from ..factuality.judge import JudgeConfig

    if (layer is None) == (not layer_sweep):
        raise click.UsageError("give exactly one of --layer and --layer-sweep")
    check_output(out, folder=True)
    table = load_labelled(statements, hidden)
    config = JudgeConfig(
        input_dim=1,
        hidden_dim=hidden_dim,
        max_epochs=max_epochs,
        seed=seed,
        split_seed=split_seed,
        model=model_name,
    )
    sweep: list[dict[str, Any]] = []
    if layer_sweep:
        with StageBar() as bar:
            sweep = sweep_layers(
                table,
                hidden,
                config=config,
                pooling=pooling,
                progress=partial(bar.update, "layers"),
            )
        layer = pick_layer(sweep)
        for row in sweep:
            click.echo(f"layer {row['layer']:>3}: validation accuracy {row['val_accuracy']:.3f}")
    if layer is None:
        raise click.UsageError("no layer to train on")
    config = replace(config, extra={"layer_sweep": sweep} if sweep else {})
    judge = train_judge(table, hidden, layer, config, pooling=pooling)
    judge.save(out)
    history = judge.history
    accuracy = history.best_val_accuracy if history else float("nan")
    click.echo(
        f"judge on layer {layer} ({pooling}), {len(table)} labelled statements: validation "
        f"accuracy {accuracy:.3f}; wrote {out}"
    )


@factuality.command("evaluate")
@click.argument("statements", type=_EXISTING)
@click.argument("hidden", type=_EXISTING)
@click.argument("judge_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--json", "json_out", type=_PATH, required=True, help="JSON file to write.")
@click.option(
    "--buckets",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Entity-degree quantile buckets of the breakdown.",
)
@click.option(
    "--db",
    "db_path",
    type=_PATH,
    default=None,
    help="Also store the evaluation in this DuckDB file (table factuality_evals).",
)
@click.option(
    "--name", default=None, help="Name of the stored evaluation (default: the JSON stem)."
)
def evaluate_cmd(
    statements: Path,
    hidden: Path,
    judge_dir: Path,
    json_out: Path,
    buckets: int,
    db_path: Path | None,
    name: str | None,
) -> None:
    """Evaluate the judge on the held-out test facts against majority and logistic regression.

    Writes n_test, judge_accuracy, majority_accuracy, logreg_accuracy, correctness,
    truthfulness, informativeness (estimated from the judge's predictions; llm_* from the
    LLM's own labels) and layer, with breakdowns by relation and entity degree.
    """
    from ..evaluation.factuality import evaluate_judge, load_labelled
    from ..factuality.judge import Judge
    from ..factuality.results import json_safe

    check_output(json_out, option="--json")
    judge = Judge.load(judge_dir)
    table = load_labelled(statements, hidden)
    sweep = judge.config.extra.get("layer_sweep", [])
    report = evaluate_judge(table, hidden, judge, n_buckets=buckets, sweep=sweep)
    data = report.to_dict()
    write_json_atomic(json_out, json_safe(data))
    if db_path is not None:
        from ..factuality.results import FactualityEval, save_evaluation

        save_evaluation(
            db_path,
            FactualityEval(
                name=name or json_out.stem,
                model=judge.config.model,
                layer=report.layer,
                n_test=report.n_test,
                summary={k: v for k, v in data.items() if k != "breakdown"},
                breakdown=report.breakdown,
            ),
        )
    click.echo(
        f"layer {report.layer}, {report.n_test} test statements: judge {report.judge_accuracy:.3f}"
        f", majority {report.majority_accuracy:.3f}, logreg {report.logreg_accuracy:.3f}; "
        f"correctness {data['correctness']:.3f}, truthfulness {data['truthfulness']:.3f}, "
        f"informativeness {data['informativeness']:.3f}; wrote {json_out}"
    )


COMMANDS: tuple[click.Command, ...] = (factuality,)
"""The commands this module adds to ``s3kg``."""
