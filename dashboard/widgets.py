"""The sidebar every page shares: database, score signature, alpha, and the import action."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import navigation
from dashboard.data import reads, writes
from dashboard.data.database import View, clear_caches, db_path, db_stamp, writer
from dashboard.escape import code, md
from dashboard.url_state import ALPHA_STEP
from s3kg_core.config import IMPORT_ROOT_ENV, import_root
from s3kg_core.errors import S3KGError
from s3kg_core.scoring.result import DEFAULT_ALPHA
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.importing import import_s3kg_release
from s3kg_core.tables import csv_safe_frame

__all__ = [
    "Controls",
    "csv_bytes",
    "csv_download",
    "demo_check_line",
    "error_line",
    "errors_as_lines",
    "file_download",
    "finish_pending",
    "first_start",
    "inside_import_root",
    "keyed_selectbox",
    "live_alpha",
    "page_setup",
    "partial_note",
    "sidebar",
    "signature_labels",
]

_RELEASE_DEFAULT = str(Path("..") / "shared" / "data" / "s3kg_release" / "qa")


@dataclass(frozen=True)
class Controls:
    """What the sidebar chose."""

    path: Path
    stamp: int
    signature: str | None
    alpha: float
    alpha_slot: Any = None  # sidebar(live_alpha=True): where live_alpha() draws the slider

    @property
    def view(self) -> View:
        """The database, its stamp and the signature chosen: the key of every cached read."""
        return View(self.path, self.stamp, self.signature)


def page_setup(title: str) -> None:
    """Page config and title; builds the demo database on the very first start."""
    navigation.ensure_navigation()
    st.set_page_config(page_title=f"{title} · S3KG Workbench", layout="wide")
    st.title(title)
    path = db_path()
    if not path.exists():
        first_start(path)


def first_start(path: Path) -> None:
    """Build the demo database at ``path``, each step shown with the seconds since the start.

    GraphEval's checks are left for the Hallucinations page's first visit
    (:func:`finish_pending`), so the first page shows sooner.
    """
    started = time.perf_counter()
    label = f"First start: building the demo database {code(path)}"
    with st.status(label, expanded=True) as box:

        def step(line: str) -> None:
            elapsed = time.perf_counter() - started
            box.update(label=f"First start ({elapsed:.0f} s): {md(line)}")
            st.text(f"{elapsed:5.1f} s  {line}")

        built = writes.ensure_database(path, on_step=step, defer_grapheval=True)
        seconds = time.perf_counter() - started
        st.text(f"{seconds:5.1f} s  done")
        done = (
            f"Built the demo database {code(path)} in {seconds:.0f} s"
            if built
            else f"Another start built the demo database {code(path)} first: using it"
        )
        box.update(
            label=done,
            state="complete",
            expanded=False,
        )


def demo_check_line(checked: int, seconds: float) -> str:
    """The line the first visit's GraphEval step ends with.

    Examples
    --------
    >>> demo_check_line(60, 41.6)
    'Checked 60 demo answers in 42 s'
    >>> demo_check_line(0, 0.4)  # another start (a second tab, a restart) had checked them
    'GraphEval had already checked the demo answers'
    """
    if checked == 0:
        return "GraphEval had already checked the demo answers"
    return f"Checked {checked} demo answers in {seconds:.0f} s"


def finish_pending(path: Path) -> None:
    """Run the demo build's pending GraphEval step, with its progress, if there is one."""
    if "grapheval" not in writes.demo_pending(View(path, db_stamp(path))):
        return
    started = time.perf_counter()
    with st.status(
        "First visit: GraphEval checks every demo answer's triples against its context",
        expanded=True,
    ) as box:
        bar = st.progress(0.0)

        def progress(stage: str, done: int, total: int) -> None:
            bar.progress(done / total if total else 1.0, text=f"{md(stage)}: {done} of {total}")

        checked = writes.finish_demo(path, progress=progress)
        box.update(
            label=demo_check_line(checked, time.perf_counter() - started),
            state="complete",
            expanded=False,
        )


def error_line(exc: BaseException) -> str:
    r"""A library error as one line of Markdown (whitespace collapsed, escaped).

    Examples
    --------
    >>> from s3kg_core.errors import DatabaseLockedError
    >>> error_line(DatabaseLockedError("database *a*.duckdb is locked\nby PID 7"))
    'database \\*a\\*\\.duckdb is locked by PID 7'
    """
    return md(" ".join(str(exc).split()))


@contextmanager
def errors_as_lines() -> Iterator[None]:
    """Show a library error raised inside as one line and a Retry button, not a traceback.

    For what a page cannot prevent: a database another process holds locked (past the read's
    15 s of retries), one on a read-only or full disk, a damaged file. ``app.py`` runs every
    page inside it. Retry reruns the page; every choice made (widgets, the URL) is kept in the
    session.
    """
    try:
        yield
    except S3KGError as exc:
        st.error(error_line(exc))
        st.button("Retry", key="error_retry", help="Run the page again; your choices are kept.")


def partial_note(
    view: View, runs: Any, run_ids: Iterable[int] | None = None
) -> dict[int, tuple[int, int]]:
    """Say which of the runs shown are only partly scored, so their numbers are not read as final.

    A run is partial while ``s3kg score`` writes it, or after it was stopped. One short warning
    naming each partial run (model, temperature, run id) and how many of its answers are scored;
    nothing when every run shown is complete. ``runs`` is :func:`dashboard.data.reads.load_runs`'s
    frame, ``run_ids`` the runs the page shows (default: all). Returns the partial runs among
    them: ``run_id -> (scored, scorable)``.
    """
    shown = set(runs["run_id"].astype(int)) if run_ids is None else {int(r) for r in run_ids}
    partial = {run: counts for run, counts in reads.partial_runs(view).items() if run in shown}
    if partial:
        names = {
            int(r.run_id): f"{r.model} T={float(r.temperature):g} (run {int(r.run_id)})"
            for r in runs.itertuples()
        }
        listed = "; ".join(
            f"{md(names.get(run, f'run {run}'))}: {scored} of {scorable} answers scored"
            for run, (scored, scorable) in sorted(partial.items())
        )
        st.warning(
            f"**Partial run{'s' * (len(partial) > 1)}**: {listed} (`s3kg score` in progress, or "
            "stopped). The numbers are those of the scored answers only.",
            icon=":material/hourglass_top:",
        )
    return partial


def csv_bytes(frame: Any) -> bytes:
    r"""A DataFrame as the CSV a download gives: UTF-8, no index, no cell a formula.

    Every text cell that a spreadsheet would run (``=2+5``, ``@SUM(1)``) is escaped by
    :func:`s3kg_core.tables.csv_safe_frame`.

    Examples
    --------
    >>> import pandas as pd
    >>> csv_bytes(pd.DataFrame({"run": ["=cmd|' /C calc'!A0"], "cus": [0.5]}))
    b"run,cus\n'=cmd|' /C calc'!A0,0.5\n"
    """
    return str(csv_safe_frame(frame).to_csv(index=False)).encode("utf-8")


def csv_download(container: Any, label: str, frame: Any, file_name: str, key: str) -> None:
    """A download button in ``container`` for ``frame`` as CSV (:func:`csv_bytes`).

    The tables' own CSV export is off (``client.disableDataExport``: Streamlit writes its
    cells as they are), so a page offers its tables' data through this button.
    """
    container.download_button(
        label,
        csv_bytes(frame),
        file_name=file_name,
        mime="text/csv",
        key=key,
        width="stretch",
        on_click="ignore",
    )


def file_download(container: Any, label: str, data: Any, file_name: str, **options: Any) -> None:
    """A download button for a file the library writes with its own escaping.

    The HTML report (every string escaped by :mod:`s3kg_core.report.html`) and the
    annotation export (formula cells escaped by :mod:`s3kg_core.annotation.exchange`); a page's
    table goes through :func:`csv_download`, or here as a callable giving :func:`csv_bytes` when
    it is large. ``data`` may be a callable, run only on a click.
    ``options`` go to ``st.download_button`` (``mime``, ``key``, ``help``, ...).
    """
    container.download_button(label, data, file_name=file_name, **options)


def _persist(key: str, default: float) -> float:
    """Keep a slider's value across pages (Streamlit drops widget state of unseen pages)."""
    store_key = f"_{key}_value"
    if store_key not in st.session_state:
        st.session_state[store_key] = default
    # Set on every run: under st.navigation a page's slider is a new widget, which would
    # otherwise start at its minimum while the old page's value is still in the session.
    st.session_state[key] = st.session_state[store_key]
    return float(st.session_state[store_key])


def _remember(key: str) -> None:
    st.session_state[f"_{key}_value"] = st.session_state[key]


_SIGNATURE_FIELDS = {
    "mode": "mode",
    "encoder": "enc",
    "tau": "tau",
    "wl_iterations": "K",
    "align": "align",
    "normalization": "norm",
    "version": "version",
}


def _field_text(name: str, value: object) -> str:
    if name in ("mode", "encoder"):
        return str(value)
    if name == "align":
        value = "yes" if value else "no"
    elif name == "tau":
        value = f"{float(value):g}"  # type: ignore[arg-type]
    return f"{_SIGNATURE_FIELDS[name]} {value}"


def signature_labels(signatures: Sequence[str]) -> dict[str, str]:
    """Short select-box labels of stored signatures: what tells each apart from the others.

    One signature is labelled by its mode, encoder and tau; several by the fields in which
    they differ (``Signature.differences``). Encoders are named without their version unless
    only the version tells them apart. A signature that does not parse keeps its text.

    Examples
    --------
    >>> a = "mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0"
    >>> signature_labels([a])[a]
    'hybrid · minilm · tau 0.65'
    >>> onnx = a.replace("minilm@0.1.0", "minilm@0.1.0+onnx")
    >>> signature_labels([onnx])[onnx]
    'hybrid · minilm+onnx · tau 0.65'
    >>> b = a.replace("hybrid", "kgx").replace("0.65", "0.7")
    >>> signature_labels([a, b])[b]
    'kgx · tau 0.7'
    """
    parsed: dict[str, Signature] = {}
    for text in signatures:
        try:
            parsed[text] = Signature.parse(text)
        except S3KGError:
            continue
    found = list(parsed.values())
    differing: set[str] = set()
    for sig in found[1:]:
        differing |= set(found[0].differences(sig)) - {"alpha"}
    names = [n for n in _SIGNATURE_FIELDS if n in differing] or ["mode", "encoder", "tau"]
    # "minilm+onnx" for "minilm@0.1.0+onnx" (the sidebar cuts longer labels), unless only the
    # version tells two encoders apart
    encoders = {str(sig.encoder) for sig in found}
    short = len({_without_version(e) for e in encoders}) == len(encoders)
    labels: dict[str, str] = {}
    for text in signatures:
        one = parsed.get(text)
        label = (
            text
            if one is None
            else " · ".join(
                _without_version(str(one.encoder)) if n == "encoder" and short
                else _field_text(n, getattr(one, n))
                for n in names
            )
        )  # fmt: skip
        labels[text] = label if label not in labels.values() else text
    return labels


def _without_version(encoder: str) -> str:
    name, _, rest = encoder.partition("@")
    backend = rest.partition("+")[2]
    return f"{name}+{backend}" if backend else name


def keyed_selectbox(
    label: str,
    options: Mapping[str, str],
    key: str,
    *,
    default: str | None = None,
    help: str | None = None,
) -> str:
    """A select box over ``options`` (value -> shown label) that keeps its choice by value.

    The shown labels may change from run to run (a score in them follows alpha): the choice is
    remembered by its value (in ``st.session_state["_<key>_choice"]``, which also survives a
    move to another page), so a label that changes never resets it. Returns the chosen value:
    the remembered one, else ``default``, else the first.
    """
    values = list(options)
    store_key = f"_{key}_choice"
    remembered = st.session_state.get(store_key)
    index = values.index(default) if default in values else 0
    if remembered in values:
        # Set through the session state on every run, so the browser is sent the value and
        # shows its current label (it would keep showing the label it last sent otherwise).
        st.session_state[key] = remembered
        index = 0

    def remember() -> None:
        st.session_state[store_key] = st.session_state[key]

    chosen = st.selectbox(
        label,
        values,
        index=index,
        format_func=lambda v: options.get(v, str(v)),
        key=key,
        help=help,
        on_change=remember,
    )
    if chosen not in options:  # a stale label from the browser: fall back to the remembered one
        chosen = values[index]
    st.session_state[store_key] = chosen
    return str(chosen)


def sidebar(*, alpha: bool = True, live_alpha: bool = False) -> Controls:
    """Render the shared sidebar and return its choices.

    ``alpha=False`` on pages where alpha changes nothing: the slider is not shown there, and
    the value chosen elsewhere is kept (and returned). ``live_alpha=True`` keeps the slider's
    place in the sidebar for :func:`live_alpha`, which draws it in one fragment with the blocks
    that depend on it.
    """
    path = db_path()
    stamp = db_stamp(path)
    with st.sidebar:
        st.caption(f"Database: {code(path)}")
        sigs, latest = reads.signatures(View(path, stamp))
        signature = None
        if sigs:
            labels = signature_labels(sigs)
            if "_signature_choice" not in st.session_state and latest in labels:
                st.session_state["_signature_choice"] = latest
            current = st.session_state.get("_signature_choice", sigs[0])
            full = current if current in labels else sigs[0]
            signature = keyed_selectbox(
                "Score signature",
                labels,
                key="signature",
                help="Encoder, mode, tau, K, normalisation and version of the stored scores; "
                "the list shows what tells them apart. Publish the full signature with any "
                f"number you quote: {code(full)}",
            )
        slot = None
        if alpha and live_alpha:
            slot = st.container()
            value = _persist("alpha", DEFAULT_ALPHA)
        elif alpha:
            value = _alpha_slider()
        else:
            value = float(st.session_state.get("_alpha_value", DEFAULT_ALPHA))
        with st.expander("Import the S3KG authors' released runs"):
            folder = st.text_input(
                "Folder",
                value=_RELEASE_DEFAULT,
                key="release_folder",
                help=f"A folder inside {code(import_root())}, the import folder (set "
                f"{code(IMPORT_ROOT_ENV)} to use another).",
            )
            if st.button("Import", key="release_import"):
                _import_release(path, Path(folder))
    return Controls(
        path=path, stamp=stamp, signature=signature, alpha=float(value), alpha_slot=slot
    )


def _alpha_slider() -> float:
    _persist("alpha", DEFAULT_ALPHA)
    return float(
        st.slider(
            "alpha",
            0.0,
            1.0,
            step=ALPHA_STEP,
            key="alpha",
            on_change=_remember,
            args=("alpha",),
            help="Blend of the stored components, recomputed instantly. Every mode but kgx "
            "(ot, the default, included): (1 - alpha) S_WL + alpha S_SBERT; kgx mode: alpha "
            "S_WL + (1 - alpha) S_SBERT.",
        )
    )


def live_alpha(controls: Controls, render: Callable[[float], None]) -> None:
    """Draw the sidebar's alpha slider and ``render(alpha)`` as one ``st.fragment``.

    Moving alpha then reruns only the slider and what ``render`` draws (the blocks that depend
    on alpha), not the page around them. Needs ``sidebar(live_alpha=True)``, which keeps the
    slider's place in the sidebar; after a plain ``sidebar()`` it calls
    ``render(controls.alpha)``. Call it once per page.
    """
    if controls.alpha_slot is None:
        render(controls.alpha)
        return
    _alpha_fragment(controls.alpha_slot, render)


@st.fragment
def _alpha_fragment(slot: Any, render: Callable[[float], None]) -> None:
    with slot:
        alpha = _alpha_slider()
    render(alpha)


def inside_import_root(folder: Path, root: Path | None = None) -> str | None:
    """Why ``folder`` may not be imported from the dashboard, or ``None`` when it may.

    It must lie inside ``root`` (default :func:`s3kg_core.config.import_root`) once symlinks and
    ``..`` are resolved, be a folder, and every ``*.csv`` in it must resolve inside ``root`` too
    (a symlink to a file elsewhere is refused). Nothing outside ``root`` is listed or named.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "qa").mkdir()
    >>> inside_import_root(root / "qa", root) is None
    True
    >>> inside_import_root(root / "qa" / ".." / "..", root).startswith("Only folders inside")
    True
    """
    root = (root or import_root()).expanduser().resolve()
    where = (
        f"Only folders inside the import folder {code(root)} can be imported here (set "
        f"{code(IMPORT_ROOT_ENV)} to use another); "
    )
    try:
        target = folder.expanduser().resolve()
    except (OSError, RuntimeError):
        return where + "this one is not."
    if not target.is_relative_to(root):
        return where + "this one is not."
    if not target.is_dir():
        return f"{code(folder)} is not a folder"
    for csv_file in sorted(target.glob("*.csv")):
        if not csv_file.resolve().is_relative_to(root):
            return where + f"{code(csv_file.name)} in it links to a file elsewhere."
    return None


def _import_release(path: Path, folder: Path) -> None:
    refused = inside_import_root(folder)
    if refused is not None:
        st.error(refused)
        return
    try:
        with writer(path) as store:
            reports = import_s3kg_release(store, folder)
    except S3KGError as exc:
        st.error(md(exc))
        return
    rows = sum(r.items for r in reports)
    st.success(
        f"Imported {len(reports)} runs ({rows} answers). Score them with "
        f"{code(f's3kg score --db {path}')} (the dashboard shows them once scored)."
    )
    clear_caches()
