"""What the ``s3kg`` command modules share: option sets, error handling, progress, outputs.

Each command builds the library object, calls one method, and turns library errors into a
one-line message and a non-zero exit status (:func:`as_click`, which the top
``s3kg`` group applies to every command).

Outputs are checked before the work (:func:`check_output`: never the database or its
``.wal``, then :func:`check_writable`, which refuses any DuckDB database whatever its name
through :func:`s3kg_core.atomic.check_replaceable`) and written atomically
(:func:`write_atomic`); a write that fails anyway saves the output in the system's temporary
folder and says where, so finished work is never lost to an output error. CSV cells are
written through :func:`s3kg_core.tables.csv_safe_row` (no cell a spreadsheet would run as a
formula).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from functools import wraps
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import click

from ..atomic import check_replaceable, replacing
from ..config import DB_ENV, DEFAULT_DB, default_db
from ..encoders.backend import BACKEND_ENV, BACKENDS, DEFAULT_BACKEND, with_backend
from ..errors import OutputError, OutputIsDatabaseError, S3KGError
from ..failures import StageFailures
from ..names import printable
from ..scoring.result import DEFAULT_ALPHA, DEFAULT_MODE, DEFAULT_TAU, MODES
from ..tables import csv_safe_row

__all__ = [
    "BACKEND_HELP",
    "DB_OPTION",
    "ENCODER_HELP",
    "EXIT_ALL_FAILED",
    "EXIT_SOME_FAILED",
    "EXIT_STATUS_HELP",
    "FiniteRange",
    "OutputIsDatabaseError",
    "StageBar",
    "as_click",
    "backend_option",
    "check_output",
    "check_writable",
    "endpoint_options",
    "existing_db",
    "exit_on_failures",
    "llm_client",
    "scored_options",
    "scoring_options",
    "write_atomic",
    "write_csv_atomic",
    "write_json_atomic",
]


F = TypeVar("F", bound=Callable[..., Any])


class FiniteRange(click.FloatRange):
    """``click.FloatRange`` that refuses NaN and reads ``-0`` as ``0``.

    Click's comparisons with NaN are all false, so ``--alpha nan`` passed its range (and made
    ``s3kg check`` pass every gate with ``+nan``). ``--alpha -0.0`` is the same number as
    ``0``, but it was printed and signed as ``alpha:-0``: a second signature for the same
    scores.

    Examples
    --------
    >>> FiniteRange(0.0, 1.0).convert("0.5", None, None)
    0.5
    >>> FiniteRange(0.0, 1.0).convert("-0.0", None, None)
    0.0
    >>> FiniteRange(0.0, 1.0).convert("nan", None, None)
    Traceback (most recent call last):
    ...
    click.exceptions.BadParameter: 'nan' is not a number.
    """

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if isinstance(rv, float) and math.isnan(rv):
            self.fail(f"{value!r} is not a number.", param, ctx)
        return rv + 0.0 if isinstance(rv, float) else rv  # -0.0 + 0.0 is 0.0


def as_click(exc: S3KGError) -> click.ClickException:
    r"""``Error: <message>``, exit status 1 (or the error's own ``exit_code``, 2 for a usage error).

    The message is :func:`~s3kg_core.names.printable`: a control or formatting character in a
    path or an id it names (an ESC in a file name) is shown as its escape, never sent to the
    terminal.

    Examples
    --------
    >>> as_click(OutputIsDatabaseError("--out x is the database x")).exit_code
    2
    >>> print(as_click(OutputError("cannot write a\x1b]0;t\x07.csv")).message)
    cannot write a\x1b]0;t\x07.csv
    """
    err = click.ClickException(printable(str(exc)))
    # click reads the exit status from the instance; the class default is 1
    err.exit_code = int(getattr(exc, "exit_code", 1))  # type: ignore[misc]
    return err


EXIT_SOME_FAILED = 3
"""Exit status of a stage that finished but stored some of its items as failed."""

EXIT_ALL_FAILED = 1
"""Exit status of a stage that tried items and stored every one as failed (as for an error)."""

EXIT_STATUS_HELP = (
    "Exit status: 0 when nothing failed; 3 when some items failed (stored with their reason, "
    "retried by a rerun); 1 when all the items tried failed, or on an error; 2 on a usage "
    "error. A failure is said on stderr: how many, and where to look."
)
"""The epilog of the commands whose exit status follows :func:`exit_on_failures`."""


def exit_on_failures(failures: Iterable[StageFailures]) -> None:
    """Say each stage's failures on stderr and exit with the worst status; return if none.

    The status is :data:`EXIT_ALL_FAILED` when a stage failed on every item it tried, else
    :data:`EXIT_SOME_FAILED` when one failed on some (see :data:`EXIT_STATUS_HELP`).
    """
    failed = [f for f in failures if f.some_failed]
    if not failed:
        return
    for f in failed:
        click.echo(f"Error: {f.message()}", err=True)
    raise click.exceptions.Exit(
        EXIT_ALL_FAILED if any(f.all_failed for f in failed) else EXIT_SOME_FAILED
    )


ENCODER_HELP = (
    "minilm, mpnet, minilm-static (a static model distilled from MiniLM, ~100x faster, coarser: "
    "for screening bulk runs), or the path of a local sentence-transformers model directory."
)

BACKEND_HELP = (
    f"Runtime of the encoder: torch, onnx (onnxruntime) or openvino, fp32; the latter two run "
    f"an ONNX export made once into the cache folder. Default: ${BACKEND_ENV}, else "
    f"{DEFAULT_BACKEND}. It is part of the score signature (enc:minilm@0.1.0+onnx; torch adds "
    "nothing). A backend that cannot load falls back to torch with a warning. minilm-static has "
    "none."
)


def backend_option(func: F) -> F:
    """Add ``--backend`` and fold it into the command's ``encoder`` argument (``minilm+onnx``).

    Apply it below the ``--encoder`` option (nearer the function). Where ``encoder`` is
    ``None`` (the encoder of a stored signature), the backend is that signature's too.
    """

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        backend = kwargs.pop("backend", None)
        if backend is not None and kwargs.get("encoder") is not None:
            kwargs["encoder"] = with_backend(kwargs["encoder"], backend)
        return func(*args, **kwargs)

    option = click.option(
        "--backend", type=click.Choice(list(BACKENDS)), default=None, help=BACKEND_HELP
    )
    return option(wrapper)  # type: ignore[return-value]


def scored_options(func: F) -> F:
    """Which stored scores to read: ``--signature``, ``--alpha`` (re-blend), ``--empty``."""
    options = [
        click.option("--signature", default=None, help="Scores to use (default: the latest)."),
        click.option(
            "--alpha",
            type=FiniteRange(0.0, 1.0),
            default=None,
            help="Re-blend at this alpha (default: as scored).",
        ),
        click.option(
            "--empty",
            type=click.Choice(["zero", "drop"]),
            default="zero",
            show_default=True,
            help="Answers with an empty or unparseable KG: score 0 and count, or leave out of "
            "the means (as the authors' QA scripts do).",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def scoring_options(func: F) -> F:
    """The options that define a score: encoder and its backend, mode, alpha, tau, K."""
    func = backend_option(func)
    options = [
        click.option(
            "--encoder",
            default="minilm",
            show_default=True,
            help=ENCODER_HELP,
        ),
        click.option(
            "--mode",
            type=click.Choice(list(MODES)),
            default=DEFAULT_MODE,
            show_default=True,
            help="ot (the default: best on BAMBOO and on the labelled pair sets together): "
            "S_WL from the triples matched by optimal transport (n:m, a T2 over twice T1's size "
            "capped), their best-match cosine and hybrid's WL kernel; S_SBERT from the entity "
            "labels matched by optimal transport. hybrid (the earlier default): paper mode "
            "with S_WL the mean of the relation-aware directed WL kernel and a relation-agnostic "
            "undirected one. paper: relation-aware directed WL on normalised labels. Both weight "
            "the embedding side by alpha. kgx: the authors' released implementation, alpha "
            "weights the WL side; like their code it aligns labels by plain argmax, so two "
            "labels that embed identically collapse and a KG can score below 1 against itself "
            '(e.g. [["😀","r","💧"]]: S_WL 0.154). text: hybrid with the two texts too (not '
            "for `pairs score`, which has no texts): S_SBERT mixes the texts' embedding cosine "
            "(weight 0.8) with the triples', and a pair with an empty KG scores the texts' "
            "cosine instead of 0. wwl: Wasserstein Weisfeiler-Lehman: label vectors "
            "contextualised over the directed, relation-labelled edges and matched n:m by "
            "optimal transport over both whole graphs (symmetric); S_WL the structural "
            "transport, S_SBERT the labels'; good on BAMBOO, behind hybrid on the pair sets.",
        ),
        click.option(
            "--alpha",
            type=FiniteRange(0.0, 1.0),
            default=DEFAULT_ALPHA,
            show_default=True,
            help="Blend weight (see --mode for its side).",
        ),
        click.option(
            "--tau",
            type=FiniteRange(0.0, 1.0),
            default=DEFAULT_TAU,
            show_default=True,
            help="Soft alignment threshold (cosine).",
        ),
        click.option(
            "--wl-iterations",
            type=click.IntRange(1, 50),
            default=None,
            help="WL refinement rounds K (labels of rounds 0..K are counted); default: 5, "
            "and 1 round of contextualisation in wwl mode.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


DB_OPTION = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=DB_ENV,
    default=DEFAULT_DB,
    show_default=True,
    show_envvar=True,
    help="The DuckDB file.",
)


def existing_db(db_path: Path) -> Path:
    """``db_path``, or a one-line error if it does not exist yet."""
    if not db_path.exists():
        raise click.ClickException(
            f"database {db_path} does not exist; import data first "
            f"(`s3kg import ... --db {db_path}`)"
        )
    return db_path


class StageBar:
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

    def __enter__(self) -> StageBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.close()


def check_writable(path: Path) -> Path:
    """Fail now, before any work, if ``path`` cannot be written; return ``path``.

    ``path`` must not be a folder, nor what :func:`~s3kg_core.atomic.check_replaceable`
    refuses (a device, a FIFO, a DuckDB database by its header whatever its name, a database's
    ``.wal``, a file another process locks); its folder must be one or be one that can be made
    (the nearest existing ancestor is a folder, and writable); and when the folder exists, a
    file must be creatable in it (a probe file, removed at once). Nothing is left behind.

    Parameters
    ----------
    path
        The output file a command will write.

    Returns
    -------
    Path
        ``path``, unchanged.

    Raises
    ------
    OutputIsDatabaseError
        ``path`` is a database (exit status 2).
    OutputError
        Saying why, e.g. ``cannot write a.csv/out.csv: a.csv is a file, not a folder``.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> check_writable(folder / "new" / "out.csv") == folder / "new" / "out.csv"
    True
    >>> _ = (folder / "a.csv").write_text("x")
    >>> check_writable(folder / "a.csv" / "out.csv")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.OutputError: cannot write .../a.csv/out.csv: .../a.csv is a file, not a folder
    """
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder; name a file in it")
    check_replaceable(path)  # never a device, a FIFO or a database (whatever its name)
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: {folder} is a file, not a folder")
    if folder != path.parent:  # the folders below it are made by the write
        if not os.access(folder, os.W_OK | os.X_OK):
            raise OutputError(f"cannot write {path}: cannot make folders in {folder}")
        return path
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".probe")
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from exc
    os.close(fd)
    os.unlink(probe)
    return path


def _same_file(a: Path, b: Path) -> bool:
    """Whether writing ``a`` writes ``b``.

    The same file (symlinks followed, hard links, a case-insensitive folder), or the same name
    up to case in the same folder (so a file that does not exist yet, such as the ``.wal``, is
    caught too, on any file system).
    """
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:  # one of them does not exist (yet)
        pass
    try:
        ra, rb = a.resolve(), b.resolve()
    except (OSError, RuntimeError):  # a symlink loop: never the database
        return False
    if ra == rb:
        return True
    if ra.name.casefold() != rb.name.casefold():
        return False
    if ra.parent == rb.parent:
        return True
    try:
        return os.path.samefile(ra.parent, rb.parent)
    except OSError:
        return False


def check_output(
    *paths: Path | None,
    option: str = "--out",
    folder: bool = False,
    databases: Iterable[Path | None] = (),
) -> None:
    """Refuse an output that would overwrite the database; then :func:`check_writable`.

    The databases protected are the command's ``--db`` (its ``db_path`` parameter, when it has
    one) and the default one (``$S3KG_DB``, else ``data/s3kg.duckdb``), each with its ``.wal``.
    A path is refused when it resolves to one of them: the same file through a symlink, a hard
    link or a relative path, or the same name up to case in the same folder. Call it before any
    work and before the database is opened, so a refused command changes nothing.

    Parameters
    ----------
    paths
        The files (or, with ``folder``, folders) the command will write; ``None`` is skipped.
    option
        The option that named them, for the message.
    folder
        The outputs are folders: only the database checks are made.
    databases
        More database files to protect (a parent command's ``--db``).

    Raises
    ------
    OutputIsDatabaseError
        One line, exit status 2: ``--out runs.duckdb is the database runs.duckdb; writing it
        would destroy the database: name another file``.
    OutputError
        From :func:`check_writable`.

    Examples
    --------
    >>> import tempfile
    >>> db = Path(tempfile.mkdtemp()) / "runs.duckdb"
    >>> with click.Context(click.Command("x"), obj=None) as ctx:
    ...     ctx.params["db_path"] = db
    ...     check_output(db.parent / "out.csv")
    ...     check_output(db.parent / "RUNS.duckdb.WAL")
    Traceback (most recent call last):
    ...
    s3kg_core.errors.OutputIsDatabaseError: --out .../RUNS.duckdb.WAL is the database's ...
    """
    ctx = click.get_current_context(silent=True)
    protected = [Path(db) for db in databases if db is not None] + [default_db()]
    if ctx is not None and isinstance(ctx.params.get("db_path"), str | Path):
        protected.insert(0, Path(ctx.params["db_path"]))
    for path in paths:
        if path is None:
            continue
        for db in protected:
            for target, what in ((db, "the database"), (Path(f"{db}.wal"), "the database's")):
                if _same_file(Path(path), target):
                    name = f"write-ahead log {target}" if what.endswith("'s") else f"{target}"
                    raise OutputIsDatabaseError(
                        f"{option} {path} is {what} {name}; writing it would destroy the "
                        f"database: name another {'folder' if folder else 'file'}"
                    )
        if not folder:
            check_writable(Path(path))
        elif not Path(path).is_dir():
            check_replaceable(path)  # a folder to be: never over a database file


def _save_elsewhere(path: Path, text: str, newline: str | None) -> Path | None:
    """Save ``text`` in the system's temporary folder; its path, or ``None`` if that fails."""
    try:
        fd, saved = tempfile.mkstemp(prefix=f"s3kg-{path.stem}-", suffix=path.suffix)
        with os.fdopen(fd, "w", newline=newline, encoding="utf-8") as fh:
            fh.write(text)
    except OSError:
        return None
    return Path(saved)


def write_atomic(path: Path, write: Callable[[Any], None], newline: str | None = None) -> None:
    """Call ``write(file)``, then put what it wrote at ``path`` atomically (no half-written file).

    The text is made in memory, then written to a temporary file beside ``path`` that is renamed
    into place. If that fails (a full disk, a folder that is a file), the text is saved in the
    system's temporary folder instead and the error names that file.

    Raises
    ------
    OutputError
        If ``path`` cannot be written; the message says where the output was saved instead.
    """
    buffer = io.StringIO()
    write(buffer)
    text = buffer.getvalue()
    try:
        with replacing(path) as tmp, tmp.open("w", newline=newline, encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        saved = _save_elsewhere(path, text, newline)
        where = f"the output is saved in {saved}" if saved else "it could not be saved elsewhere"
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}; {where}") from exc


def write_csv_atomic(path: Path, header: list[str], rows: Any) -> None:
    """Write a CSV atomically (see :func:`write_atomic`); no cell a formula (``csv_safe_row``)."""

    def write(fh: Any) -> None:
        writer = csv.writer(fh)
        writer.writerow(csv_safe_row(header))
        writer.writerows(csv_safe_row(row) for row in rows)

    write_atomic(path, write, newline="")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write indented JSON atomically (see :func:`write_atomic`)."""
    write_atomic(path, lambda fh: fh.write(json.dumps(data, indent=2) + "\n"))


def endpoint_options(func: F) -> F:
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
            help="The most requests in flight at once. The client starts with one and adds "
            "more only while the server answers them without queueing; timeouts, 429 and 503 "
            "halve it.",
        ),
        click.option(
            "--rpm",
            type=FiniteRange(0, min_open=True),
            default=None,
            help="Most requests per minute (default: no limit).",
        ),
        click.option(
            "--timeout",
            type=FiniteRange(0, min_open=True),
            default=None,
            help="Seconds a request may take in all before it is retried (default: 60 + 0.5 "
            "per token of --max-tokens, for slow local servers).",
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


def llm_client(db_path: Path | None, endpoint: dict[str, Any], *, refresh: bool = False) -> Any:
    """The LLM client of the endpoint options; responses cached in ``db_path`` (else memory).

    With ``refresh``, cached replies are not served (new ones replace them).
    """
    from ..llm.client import LLMClient, LLMSettings, MemoryCache

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
        return LLMClient(settings, cache=MemoryCache(), refresh=refresh)
    from ..llm.cache import StoreCache
    from ..store.store import Store

    return LLMClient(settings, cache=StoreCache(Store(db_path), settings), refresh=refresh)
