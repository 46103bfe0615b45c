"""The ``s3kg`` command line: thin commands over the library.

Each command builds the library object, calls one method, and turns library errors into a
one-line message and a non-zero exit status.
"""

from __future__ import annotations

import collections
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import click

from ._version import __version__
from .errors import S3KGError
from .types import DEFAULT_MODE, MODES

__all__ = ["cli", "main"]

F = TypeVar("F", bound=Callable[..., Any])


def _friendly_errors(func: F) -> F:
    """Turn :class:`S3KGError` into ``Error: <message>`` and exit status 1."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except S3KGError as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="s3kg")
def cli() -> None:
    """S3KG Workbench: evaluate LLM answers by comparing knowledge graphs."""


def _scoring_options(func: F) -> F:
    """The options that define a score: encoder, mode, alpha, tau, K."""
    options = [
        click.option(
            "--encoder",
            default="minilm",
            show_default=True,
            help="minilm, mpnet, or the path of a local sentence-transformers model directory.",
        ),
        click.option(
            "--mode",
            type=click.Choice(list(MODES)),
            default=DEFAULT_MODE,
            show_default=True,
            help="hybrid (the default: best mean AUROC on the labelled pair sets): paper mode "
            "with S_WL the mean of the relation-aware directed WL kernel and a relation-agnostic "
            "undirected one. paper: relation-aware directed WL on normalised labels. Both weight "
            "the embedding side by alpha. kgx: the authors' released implementation, alpha "
            "weights the WL side.",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0.0, 1.0),
            default=0.5,
            show_default=True,
            help="Blend weight (see --mode for its side).",
        ),
        click.option(
            "--tau",
            type=click.FloatRange(0.0, 1.0),
            default=0.65,
            show_default=True,
            help="Soft alignment threshold (cosine).",
        ),
        click.option(
            "--wl-iterations",
            type=click.IntRange(1, 50),
            default=5,
            show_default=True,
            help="WL refinement rounds K (labels of rounds 0..K are counted).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.group()
def pairs() -> None:
    """Score pairs of knowledge graphs you already have."""


@pairs.command("score")
@click.argument("input_csv", type=click.Path(exists=True, dir_okay=False, path_type=Path))
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
@_scoring_options
@_friendly_errors
def pairs_score(
    input_csv: Path,
    output: Path,
    mode: str,
    no_align: bool,
    encoder: str,
    alpha: float,
    tau: float,
    wl_iterations: int,
) -> None:
    """Score every row of INPUT_CSV (columns id,kg_1,kg_2; others are ignored).

    Each KG cell is a JSON or Python-literal list of [head, relation, tail] lists. KG 1 is the
    reference (it drives the matching), KG 2 the candidate. A row that cannot be scored gets
    scores 0 and a status saying why (empty_kg_1, unparseable_kg_2, ...); the run goes on.
    """
    from .kgio import read_pairs_csv
    from .s3kg import KGScorer, S3KGConfig

    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
        align=not no_align,
    )
    rows = list(read_pairs_csv(input_csv))
    scorer = KGScorer(encoder, config)
    live = [r for r in rows if r.status == "ok"]
    started = time.perf_counter()
    with _StageBar() as bar:
        results = scorer.score_pairs([(r.kg_1, r.kg_2) for r in live], progress=bar.update)
    elapsed = time.perf_counter() - started
    by_row = {id(r): res for r, res in zip(live, results, strict=True)}
    _write_csv_atomic(
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
    if replaced := sum(1 for r in rows if r.replaced_bytes):
        notes.append(f"{replaced} rows with non-UTF-8 bytes replaced")
    mean = f"{statistics.fmean(ok_scores):.4f}" if ok_scores else "n/a"
    click.echo(
        f"scored {statuses.get('ok', 0)}/{len(rows)} pairs"
        + (f" ({problems})" if problems else "")
        + f" in {elapsed:.1f}s ({len(live) / max(elapsed, 1e-9):.1f} pairs/s); "
        + f"mean s3kg {mean}"
        + (f"; {'; '.join(notes)}" if notes else "")
        + f"; wrote {output}; signature {scorer.signature}|alpha:{alpha:g}"
    )


DB_OPTION = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("data") / "s3kg.duckdb",
    show_default=True,
    help="The DuckDB file.",
)


@cli.group("import")
def import_group() -> None:
    """Import datasets and model runs into the database."""


@import_group.command("s3kg-release")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
@DB_OPTION
@_friendly_errors
def import_release(directory: Path, db_path: Path) -> None:
    """Import every *.csv of DIRECTORY: the S3KG authors' released QA runs with their KGs.

    Dataset and model come from the file name (mesaqa_gemma-7b-it.csv: dataset mesaqa, model
    gemma-7b-it). Re-importing a file replaces what it wrote before.
    """
    from .importers import import_s3kg_release
    from .store import Store

    for report in import_s3kg_release(Store(db_path), directory):
        click.echo(report.summary())
        for problem in report.problems:
            click.echo(f"  {problem}")


@import_group.command("pubmedqa")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@DB_OPTION
@click.option("--dataset", default="pubmedqa_pqal", show_default=True, help="Dataset name.")
@_friendly_errors
def import_pqa(path: Path, db_path: Path, dataset: str) -> None:
    """Import PubMedQA's ori_pqal.json (question, joined contexts, long answer)."""
    from .importers import import_pubmedqa
    from .store import Store

    click.echo(import_pubmedqa(Store(db_path), path, dataset=dataset).summary())


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
@_friendly_errors
def import_csv(
    path: Path,
    db_path: Path,
    mapping: str,
    dataset: str | None,
    model: str | None,
    temperature: float,
) -> None:
    """Import a CSV or JSONL file (.jsonl / .ndjson) through a column mapping."""
    from .importers import import_table, parse_mapping
    from .store import Store

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


def _existing(db_path: Path) -> Path:
    """``db_path``, or a one-line error if it does not exist yet."""
    if not db_path.exists():
        raise click.ClickException(
            f"database {db_path} does not exist; import data first "
            f"(`s3kg import ... --db {db_path}`)"
        )
    return db_path


@cli.command("score")
@DB_OPTION
@_scoring_options
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
@_friendly_errors
def score_cmd(
    db_path: Path,
    encoder: str,
    mode: str,
    alpha: float,
    tau: float,
    wl_iterations: int,
    batch_items: int,
    ray_address: str | None,
    ray_workers: int | None,
) -> None:
    """Score every stored answer: GoldSim, CtxSim and CUS with their components.

    Resumable: answers already scored under the same signature are skipped, so a killed run
    continues where it stopped. Another alpha re-blends the stored components without encoding.
    """
    from .pipeline import score_store
    from .s3kg import S3KGConfig
    from .store import Store

    config = S3KGConfig(
        mode=mode,  # type: ignore[arg-type]
        alpha=alpha,
        tau=tau,
        wl_iterations=wl_iterations,
    )
    with _StageBar() as bar:
        report = score_store(
            Store(_existing(db_path)),
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
        + (f", {report.not_ready} without KGs yet" if report.not_ready else "")
        + (f"; comparisons not scorable: {problems}" if problems else "")
        + f") in {report.seconds:.1f}s, {report.encoded} strings encoded; "
        f"signature {report.signature}|alpha:{alpha:g}"
    )


@cli.command("tau")
@DB_OPTION
@click.option(
    "--fraction", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.05, show_default=True
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
    help="Encoder to embed triples with (default: the one the scores were made with).",
)
@_friendly_errors
def tau_cmd(
    db_path: Path, fraction: float, target: str, signature: str | None, encoder: str | None
) -> None:
    """Explain the lowest-scoring answers of every run triple by triple (TAU)."""
    from .pipeline import tau_store
    from .store import Store

    report = tau_store(
        Store(_existing(db_path)),
        fraction=fraction,
        target=target,
        signature=signature,
        encoder=encoder,
    )
    counts = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in report.counts.items())
    click.echo(
        f"TAU on {report.analysed} answers (lowest {fraction:g} by {target}): {counts or 'none'}"
    )


@cli.command("cus")
@DB_OPTION
@click.option("--signature", default=None, help="Scores to use (default: the latest).")
@click.option(
    "--alpha",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Re-blend at this alpha (default: as scored).",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the table as a JSON list.",
)
@_friendly_errors
def cus_cmd(
    db_path: Path, signature: str | None, alpha: float | None, json_path: Path | None
) -> None:
    """GoldSim, CtxSim and CUS per dataset x model x temperature (x extractor)."""
    from .pipeline import cus_table, latest_signature
    from .store import Store

    store = Store(db_path, read_only=True)
    signature = signature or latest_signature(store)
    table = cus_table(store, signature=signature, alpha=alpha)
    if table.empty:
        raise click.ClickException(f"no scores in {db_path}: run `s3kg score --db {db_path}`")
    click.echo(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    click.echo(f"signature {signature}" + (f"|alpha:{alpha:g}" if alpha is not None else ""))
    if json_path is not None:
        records = table.to_dict(orient="records")
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")


@cli.command("export")
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), required=True)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--signature", default=None, help="Scores to use (default: the latest).")
@_friendly_errors
def export_cmd(db_path: Path, fmt: str, out: Path, signature: str | None) -> None:
    """Export per-answer results: texts, statuses, components, GoldSim, CtxSim, CUS."""
    from .pipeline import export_results
    from .store import Store

    n = export_results(Store(db_path, read_only=True), out, fmt=fmt, signature=signature)
    click.echo(f"wrote {n} rows to {out}")


class _StageBar:
    """A tqdm progress bar on stderr (terminals only) that follows the stages of a job."""

    _LABELS: ClassVar[dict[str, str]] = {
        "triples": "encoding triples",
        "labels": "encoding labels",
        "pairs": "scoring",
    }

    def __init__(self) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=0, disable=not sys.stderr.isatty(), file=sys.stderr, leave=False)
        self._stage = ""

    def update(self, stage: str, done: int, total: int) -> None:
        """Show ``done`` of ``total`` for ``stage``."""
        if stage != self._stage:
            self._stage = stage
            self._bar.reset(total=total)
            self._bar.set_description(self._LABELS.get(stage, stage))
        self._bar.update(done - self._bar.n)

    def __enter__(self) -> _StageBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()


def _write_atomic(path: Path, write: Callable[[Any], None], newline: str | None = None) -> None:
    """Call ``write(file)`` on a temporary file renamed into place (no half-written output)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline=newline, encoding="utf-8") as fh:
            write(fh)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_csv_atomic(path: Path, header: list[str], rows: Any) -> None:
    """Write a CSV atomically (see :func:`_write_atomic`)."""

    def write(fh: Any) -> None:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)

    _write_atomic(path, write, newline="")


def _write_json_atomic(path: Path, data: Any) -> None:
    """Write indented JSON atomically (see :func:`_write_atomic`)."""
    _write_atomic(path, lambda fh: fh.write(json.dumps(data, indent=2) + "\n"))


def main(argv: list[str] | None = None) -> None:
    """Run the ``s3kg`` command line."""
    cli.main(args=argv, prog_name="s3kg")


from . import cli_bench  # noqa: E402, F401, I001  (registers bench on the group)
from . import cli_llm  # noqa: E402, F401  (registers collect, extract, run on the group)
from . import cli_grapheval  # noqa: E402, F401  (registers grapheval on the group)
from . import cli_factuality  # noqa: E402, F401  (registers factuality on the group)
