"""The benchmark commands of ``s3kg``: ``bench pairs``, ``bench bamboo`` and ``bench direction``.

Added to the main group by :mod:`s3kg_core.cli`; thin over
:func:`s3kg_core.evaluation.pairs.run_pair_benchmark`,
:func:`s3kg_core.evaluation.bamboo.run_bamboo` and
:func:`s3kg_core.evaluation.direction.run_direction`.
"""

from __future__ import annotations

import dataclasses
import shlex
import time
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from ..encoders.backend import backend_of_name, split_spec
from ..evaluation.bamboo import SPLITS
from ..evaluation.direction import SPLITS as DIRECTION_SPLITS
from ..evaluation.pairs import PROTOCOLS
from ..scoring.result import DEFAULT_ALPHA, DEFAULT_MODE, MODES
from ._common import (
    ENCODER_HELP,
    FiniteRange,
    StageBar,
    backend_option,
    check_output,
    endpoint_options,
    llm_client,
    scoring_options,
    write_json_atomic,
)
from .evidence import BenchOutputs

__all__ = ["COMMANDS"]


@click.group()
def bench() -> None:
    """Measure how well scores agree with human labels (S3KG and baselines)."""


def _methods(value: str | None) -> list[str] | None:
    if value is None:
        return None
    names = [m.strip() for m in value.split(",") if m.strip()]
    if not names:
        raise click.BadParameter("give at least one method name", param_hint="--methods")
    return names


def _table(result: Any) -> str:
    """The methods of one :class:`~s3kg_core.evaluation.pairs.BenchResult` as a text table."""
    lines = [
        f"{result.dataset} (n={result.n}"
        + (f" test pairs, {result.n_dev} dev" if result.protocol == "dev-test" else "")
        + f", encoder {result.encoder}, mode {result.mode}, triples {result.triples})",
        f"  {'method':<14} {'F1':>6} {'95% CI':>14} {'AUROC':>7} {'95% CI':>14} {'alpha':>6}",
    ]
    for name, m in result.methods.items():
        alpha = f"{m.alpha:.1f}" if m.alpha is not None else "-"
        lines.append(
            f"  {name:<14} {m.f1:>6.3f} [{m.f1_ci.low:.3f}, {m.f1_ci.high:.3f}] "
            f"{m.auroc:>7.3f} [{m.auroc_ci.low:.3f}, {m.auroc_ci.high:.3f}] {alpha:>6}"
        )
    return "\n".join(lines)


@bench.command("pairs")
@click.option(
    "--dataset",
    required=True,
    help="A pair set name (e.g. paws_wiki_400), a CSV path, or 'all' for every set.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder holding s3kg_release/benchmarks/ "
    "(default: $S3KG_DATA_DIR, else ../shared/data).",
)
@click.option("--encoder", default="minilm", show_default=True, help=ENCODER_HELP)
@click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default=DEFAULT_MODE,
    show_default=True,
    help="Mode of the s3kg method (see `s3kg score --help`); s3kg@paper, s3kg@kgx and "
    "s3kg@hybrid are each mode whatever this says.",
)
@click.option(
    "--protocol",
    type=click.Choice(list(PROTOCOLS)),
    default="dev-test",
    show_default=True,
    help="dev-test: alpha chosen on each set's declared dev pairs (~30%, by a hash of the "
    "pair id), every figure on the test pairs. same: alpha chosen and reported on all pairs, "
    "as in the paper's table (optimistic).",
)
@click.option(
    "--triples",
    type=click.Choice(["released", "offline", "llm"]),
    default="released",
    show_default=True,
    help="released: the KGs in the file; offline: re-extract both texts with the offline "
    "extractor; llm: re-extract both texts through the endpoint (single-text prompt).",
)
@click.option(
    "--methods",
    default=None,
    help="Comma-separated methods, e.g. s3kg,s3kg@kgx,rouge1 (default: s3kg, the three "
    "s3kg@<mode> variants and every baseline but s3kg_kgx).",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(1, 100_000),
    default=1000,
    show_default=True,
    help="Bootstrap resamples per 95% interval.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed.")
@click.option(
    "--json",
    "json_path",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Where to write the results (one object, or a list of them for --dataset all).",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also store the results in this DuckDB file (table bench_results).",
)
@endpoint_options
@backend_option
def bench_pairs(
    dataset: str,
    data_dir: Path | None,
    encoder: str,
    mode: str,
    protocol: str,
    triples: str,
    methods: str | None,
    bootstrap: int,
    seed: int,
    json_path: Path,
    db_path: Path | None,
    **endpoint: Any,
) -> None:
    """Score labelled pair sets with S3KG and baselines; report max-F1 and AUROC.

    S3KG's alpha is swept over 0.0, 0.1, ..., 1.0; under --protocol dev-test the best alpha by
    AUROC on the dev pairs is reported on the test pairs, under same the best by F1 on all
    pairs. Intervals are percentile bootstrap 95% intervals, resampled per class.

    Each finished set is kept in OUT.partial.jsonl (and stored in --db at once), so a killed
    run, rerun with the same options, scores only the sets it had not finished.
    """
    from ..config import default_data_dir
    from ..errors import ConfigError, InputFormatError
    from ..evaluation.pair_sets import BENCHMARKS_SUBDIR, list_pair_sets, load_pair_set
    from ..evaluation.pairs import BenchResult, run_pair_benchmark, store_bench_result
    from ..evaluation.resume import PARTIAL_SUFFIX, PartialResults
    from ..extract.factory import make_extractor
    from ..llm.client import endpoint_configured

    # before the work (and before the database is opened), not after it
    check_output(json_path, Path(f"{json_path}{PARTIAL_SUFFIX}"), option="--json")
    wanted = _methods(methods)
    extractor = None
    if triples == "llm":
        if not endpoint_configured(endpoint["base_url"], endpoint["model"]):
            raise ConfigError(
                "--triples llm needs an endpoint: pass --base-url and --model (or set "
                "OPENAI_BASE_URL and S3KG_MODEL)"
            )
        extractor = make_extractor("llm", client=llm_client(db_path, endpoint), prompt="single")
    if dataset == "all":
        names: list[str] = list_pair_sets(data_dir)
        if not names:
            raise InputFormatError(
                f"no pair sets under {(data_dir or default_data_dir()) / BENCHMARKS_SUBDIR}; "
                "pass --data-dir "
                "or set S3KG_DATA_DIR"
            )
    else:
        names = [dataset]
    pair_sets = [load_pair_set(name, data_dir) for name in names]
    for ps in pair_sets:
        if bad := ps.replaced_rows:
            shown = ", ".join(map(str, bad[:10])) + (f" and {len(bad) - 10} more" * (len(bad) > 10))
            click.echo(f"{ps.name}: non-UTF-8 text replaced with U+FFFD in data rows {shown}")
    options = {
        "encoder": encoder, "mode": mode, "methods": wanted, "bootstrap": bootstrap,
        "seed": seed, "triples": triples, "protocol": protocol,
        "db": str(db_path) if db_path is not None else None,
        "model": endpoint.get("model") if triples == "llm" else None,
    }  # fmt: skip
    partial = PartialResults(json_path, options)
    payloads: list[dict[str, Any]] = []
    stored = 0
    store = None
    if db_path is not None:
        from ..store.store import Store

        store = Store(db_path)
    for pair_set in pair_sets:
        done = partial.get(pair_set.name, len(pair_set.ids))
        if done is not None:
            payloads.append(done)
            click.echo(_table(BenchResult.from_json(done)))
            click.echo(f"  (resumed from {partial.path})")
            continue
        with StageBar() as bar:
            result = run_pair_benchmark(
                pair_set,
                encoder=encoder,
                mode=mode,  # type: ignore[arg-type]
                methods=wanted,
                bootstrap=bootstrap,
                seed=seed,
                triples=triples,
                protocol=protocol,  # type: ignore[arg-type]
                extractor=extractor,
                progress=bar.update,
            )
        click.echo(_table(result))
        if store is not None:  # stored at once: a killed run keeps its finished sets
            stored += store_bench_result(store, result)
        payloads.append(result.to_json())
        partial.add(pair_set.name, len(pair_set.ids), payloads[-1])
    write_json_atomic(json_path, payloads if dataset == "all" else payloads[0])
    partial.remove()
    note = f"wrote {json_path}"
    if db_path is not None:
        note += f"; stored {stored} rows in {db_path}"
    click.echo(note)


def _bamboo_command(params: dict[str, Any], encoder_name: str) -> str:
    """The ``s3kg bench bamboo`` command line of a run, from its parsed options.

    Every scoring option is written out (``--tau`` and ``--backend`` too: a default may change,
    and ``$S3KG_ENCODER_BACKEND`` may have chosen the backend), so the line reruns the same
    scores; ``--backend`` is the one the encoder ran on (``encoder_name``, as in the signature).
    """
    words = ["s3kg", "bench", "bamboo", "--split", params["split"]]
    words += ["--mode", params["mode"], "--encoder", split_spec(params["encoder"])[0]]
    words += ["--backend", backend_of_name(encoder_name)]
    words += ["--alpha", f"{params['alpha']:g}", "--tau", f"{params['tau']:g}"]
    if params["wl_iterations"] is not None:  # None: the mode's own default
        words += ["--wl-iterations", str(params["wl_iterations"])]
    for option, key in (("--data-dir", "data_dir"), ("--json", "json_path")):
        if params[key] is not None:
            words += [option, str(params[key])]
    if params["evidence_path"] is not None:
        words += ["--evidence", str(params["evidence_path"])]
    return shlex.join(words)


@bench.command("bamboo")
@click.option(
    "--split",
    type=click.Choice(list(SPLITS)),
    default="dev",
    show_default=True,
    help="The BAMBOO split (the shared data folder holds train and dev; test is kept for an "
    "outside evaluation).",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder holding bamboo/ (default: $S3KG_DATA_DIR, else ../shared/data).",
)
@scoring_options
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also write the result (the 12 figures of S3KG, S_WL and S_SBERT, the means, the "
    "settings and timings) as JSON.",
)
@click.option(
    "--evidence",
    "evidence_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also add the result to this evidence file (evidence/bamboo.json) as ours/<mode>/"
    "<split>, with the command, signature, machine, date and commit; other entries are kept. "
    "Complete runs only: with a figure missing nothing is written. Needs a source checkout "
    "(docsgen/evidence.py).",
)
def bench_bamboo(
    split: str,
    data_dir: Path | None,
    encoder: str,
    mode: str,
    alpha: float,
    tau: float,
    wl_iterations: int,
    json_path: Path | None,
    evidence_path: Path | None,
) -> None:
    """Score the BAMBOO meaning-graph benchmark (AMR pairs) and report its 12 figures.

    Every pair of AMR graphs (bamboo/<dataset>/<task>/{src,tgt}.<split>.amr, converted to
    triples as `s3kg pairs score SRC.amr TGT.amr` converts them) is scored with src as KG 1.
    As the benchmark's own evaluation does: Pearson's r x100 with the human scores for main,
    reify and syno of STS, SICK and PARA; for role_confusion the share of pairs of pairs in
    which the original graph scores strictly higher than its role-swapped version, x100; and
    the arithmetic mean of the 12 figures. Figures are given for S3KG at --alpha and for S_WL
    and S_SBERT alone. A task whose files are missing is reported as not available, and the
    mean is then that of the others; with no task to score the command fails and writes
    nothing.
    """
    from ..evaluation.bamboo import load_bamboo, run_bamboo
    from ..scoring.s3kg import KGScorer, S3KGConfig

    outputs = BenchOutputs(json_path, evidence_path)  # before the work, not after it
    started = time.perf_counter()
    data = load_bamboo(split, data_dir)
    load_seconds = time.perf_counter() - started
    absent = [(t.name, t.missing or "no graph pairs") for t in data.tasks if not len(t)]
    if len(absent) == len(data.tasks):
        raise click.ClickException(
            f"nothing to score: none of the {len(absent)} BAMBOO tasks of the {split} split has "
            f"graph pairs in {data.root} ({_reasons(absent)}); nothing was written"
        )
    outputs.require_complete([f"{name}: {why}" for name, why in absent])  # before the scoring
    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
    )
    scorer = KGScorer(encoder, config)
    with StageBar() as bar:
        result = run_bamboo(scorer, data=data, progress=bar.update)
    result = dataclasses.replace(result, load_seconds=load_seconds)
    click.echo(result.table())
    outputs.write(
        result.to_dict(),
        [((result.mode, result.split), result.to_dict())],
        section="ours",
        title="BAMBOO (AMR graph similarity): our 12 figures and their mean, per mode and "
        "split (s3kg bench bamboo)",
        command=_bamboo_command(click.get_current_context().params, result.encoder),
        signature=result.signature,
        missing=[
            f"{f.dataset}/{f.task} of {component}: {f.note or 'not available'}"
            for component, figures in result.figures.items()
            for f in figures
            if f.value is None
        ],
    )


def _reasons(absent: list[tuple[str, str]], shown: int = 3) -> str:
    """``name: why`` of the first ``shown`` tasks, and how many more."""
    text = "; ".join(f"{name}: {why}" for name, why in absent[:shown])
    return text + (f"; and {len(absent) - shown} more" if len(absent) > shown else "")


def _mode_list(value: str | None) -> list[str] | None:
    """``--modes``: the comma-separated modes, each one of :data:`MODES`, in the order given."""
    if value is None:
        return None
    names = list(dict.fromkeys(m.strip() for m in value.split(",") if m.strip()))
    if not names:
        raise click.BadParameter("give at least one mode", param_hint="--modes")
    if unknown := [m for m in names if m not in MODES]:
        raise click.BadParameter(
            f"unknown mode(s) {', '.join(unknown)}; choose from {', '.join(MODES)}",
            param_hint="--modes",
        )
    return names


def _direction_command(params: dict[str, Any], modes: list[str], encoder_name: str) -> str:
    """The ``s3kg bench direction`` command line of a run, from its parsed options.

    ``--backend`` is always written, the one the encoder ran on (``encoder_name``), as
    ``$S3KG_ENCODER_BACKEND`` may have chosen it.
    """
    words = ["s3kg", "bench", "direction", "--split", params["split"]]
    if params["modes"] is not None:
        words += ["--modes", ",".join(modes)]
    else:
        words += ["--mode", modes[0]]
    words += ["--encoder", split_spec(params["encoder"])[0]]
    words += ["--backend", backend_of_name(encoder_name)]
    if params["alpha"] != DEFAULT_ALPHA:
        words += ["--alpha", f"{params['alpha']:g}"]
    if not params["drawn"]:
        words.append("--no-drawn")
    for option, key in (
        ("--data-dir", "data_dir"), ("--json", "json_path"), ("--evidence", "evidence_path")
    ):  # fmt: skip
        if params[key] is not None:
            words += [option, str(params[key])]
    return shlex.join(words)


@bench.command("direction")
@click.option(
    "--mode",
    type=click.Choice(list(MODES)),
    default=DEFAULT_MODE,
    show_default=True,
    help="The scorer's mode (see `s3kg score --help`); --modes runs several.",
)
@click.option(
    "--modes",
    default=None,
    help="Comma-separated modes, e.g. ot,hybrid,paper,wwl,kgx: each scores the whole suite "
    "in one batch, all on one encoder and one embedding cache (instead of --mode).",
)
@click.option(
    "--split",
    type=click.Choice(list(DIRECTION_SPLITS)),
    default="dev",
    show_default=True,
    help="Which facts: dev or test (half each, by a hash of the fact id), or all: the "
    "figures of dev, of test and of all facts together.",
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="The shared data folder holding s3kg_release/benchmarks/, whose KGs give the drawn "
    "facts (default: $S3KG_DATA_DIR, else ../shared/data); without it the suite runs on the "
    "packaged facts only, and says so.",
)
@click.option(
    "--drawn/--no-drawn",
    default=True,
    show_default=True,
    help="Add up to 100 facts drawn from the labelled pair sets' KGs (when the data folder "
    "has them).",
)
@click.option("--encoder", default="minilm", show_default=True, help=ENCODER_HELP)
@backend_option
@click.option(
    "--alpha",
    type=FiniteRange(0.0, 1.0),
    default=DEFAULT_ALPHA,
    show_default=True,
    help="Blend weight of every mode (see `s3kg score --help` for its side in each mode).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also write every mode's result as JSON: the figures and every variant's score "
    "(fact id, family, split, S3KG, S_WL, S_SBERT).",
)
@click.option(
    "--evidence",
    "evidence_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also add the figures to this evidence file (evidence/direction.json) as modes/<mode>/"
    "<split>, with the command, signature, machine, date and commit; other entries are kept. "
    "Needs a source checkout (docsgen/evidence.py).",
)
def bench_direction(
    mode: str,
    modes: str | None,
    split: str,
    data_dir: Path | None,
    drawn: bool,
    encoder: str,
    alpha: float,
    json_path: Path | None,
    evidence_path: Path | None,
) -> None:
    """Score facts reworded against facts changed: who did what to whom, per mode.

    Every fact (the packaged hand-written ones, and up to 100 single triples drawn from the
    labelled pair sets' KGs) is a reference KG, scored against its variants: passive (tail,
    passive, head), inverse (tail, inverse, head), synonym (head, synonym, tail) and, for a
    symmetric relation, the swap keep the meaning; the swap of an asymmetric relation, the
    passive with the old order (head, passive, tail) and a wrong entity change it. Accuracy is
    the share of (keeping, changing) variant pairs of a fact in which the keeping one scores
    higher (ties count half), over every fact. The table gives per mode the accuracy, the mean
    of the variants that keep the meaning, each family's mean and the mean of those that change
    it, then the accuracy per domain and source.
    """
    from ..evaluation.direction import report, run_direction

    ctx = click.get_current_context()
    chosen = _mode_list(modes)
    if chosen is not None and ctx.get_parameter_source("mode") is ParameterSource.COMMANDLINE:
        raise click.UsageError("give --mode or --modes, not both")
    run_modes = chosen if chosen is not None else [mode]
    outputs = BenchOutputs(json_path, evidence_path)  # before the work, not after it
    with StageBar() as bar:
        results = run_direction(
            run_modes,
            encoder=encoder,
            alpha=alpha,
            split=split,
            data_dir=data_dir,
            drawn=drawn,
            progress=bar.update,
        )
    click.echo(report(results))
    entries = []
    for result in results:
        payload = result.to_dict()
        del payload["facts"]  # the run's; each side's own count and sources replace it
        for side, metrics in payload.pop("metrics").items():
            entries.append(((result.mode, side), {**payload, **metrics}))
    outputs.write(
        [r.to_dict(scores=True) for r in results],
        entries,
        section="modes",
        title="Direction suite: a fact reworded (passive, inverse, synonym, symmetric swap) "
        "against a fact changed (swap, passive with the old order, a wrong entity), per mode "
        "and split (s3kg bench direction)",
        command=_direction_command(ctx.params, run_modes, results[0].encoder),
        signature=results[0].signature,
    )


COMMANDS: tuple[click.Command, ...] = (bench,)
"""The commands this module adds to ``s3kg``."""
