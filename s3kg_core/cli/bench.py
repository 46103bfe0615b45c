"""The benchmark commands of ``s3kg``: ``bench pairs``.

Added to the main group by :mod:`s3kg_core.cli`; thin over
:func:`s3kg_core.evaluation.pairs.run_pair_benchmark`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..evaluation.pairs import PROTOCOLS
from ..scoring.result import DEFAULT_MODE, MODES
from ._common import (
    ENCODER_HELP,
    StageBar,
    backend_option,
    check_output,
    endpoint_options,
    llm_client,
    write_json_atomic,
)

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


COMMANDS: tuple[click.Command, ...] = (bench,)
"""The commands this module adds to ``s3kg``."""
