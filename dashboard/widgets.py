"""The sidebar every page shares: database, score signature, alpha, and the import action."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard import data

__all__ = ["Controls", "first_start", "live_alpha", "page_setup", "sidebar"]

_RELEASE_DEFAULT = str(Path("..") / "shared" / "data" / "s3kg_release" / "qa")


@dataclass(frozen=True)
class Controls:
    """What the sidebar chose."""

    path: Path
    stamp: int
    signature: str | None
    alpha: float
    alpha_slot: Any = None  # sidebar(live_alpha=True): where live_alpha() draws the slider


def page_setup(title: str) -> None:
    """Page config and title; builds the demo database on the very first start."""
    st.set_page_config(page_title=f"{title} · S3KG Workbench", layout="wide")
    path = data.db_path()
    if not path.exists():
        first_start(path)
    st.title(title)
    if data.finish_demo_later(path):
        _finishing_note(path)


def first_start(path: Path) -> None:
    """Build the demo database, each step shown with the seconds since the start."""
    started = time.perf_counter()
    with st.status(f"First start: building the demo database `{path}`", expanded=True) as box:

        def step(line: str) -> None:
            elapsed = time.perf_counter() - started
            box.update(label=f"First start ({elapsed:.0f} s): {line}")
            st.text(f"{elapsed:5.1f} s  {line}")

        data.ensure_database(path, on_step=step, defer_grapheval=True)
        seconds = time.perf_counter() - started
        st.text(f"{seconds:5.1f} s  done")
        box.update(
            label=f"Built the demo database `{path}` in {seconds:.0f} s",
            state="complete",
            expanded=False,
        )


@st.fragment(run_every=2.0)
def _finishing_note(path: Path) -> None:
    """While the demo's GraphEval step runs in the background: say so; rerun once it is done."""
    if data.demo_finishing(path):
        st.caption(
            "The demo's GraphEval checks (Hallucinations page) are running in the background; "
            "they show there when done."
        )
    else:
        st.rerun(scope="app")


def _persist(key: str, default: float) -> float:
    """Keep a slider's value across pages (Streamlit drops widget state of unseen pages)."""
    store_key = f"_{key}_value"
    if store_key not in st.session_state:
        st.session_state[store_key] = default
    if key not in st.session_state:
        st.session_state[key] = st.session_state[store_key]
    return float(st.session_state[store_key])


def _remember(key: str) -> None:
    st.session_state[f"_{key}_value"] = st.session_state[key]


def sidebar(live_alpha: bool = False) -> Controls:
    """Render the shared sidebar and return its choices.

    ``live_alpha=True``: the page draws the alpha slider with :func:`live_alpha`, in a
    fragment with the blocks that depend on it.
    """
    path = data.db_path()
    stamp = data.db_stamp(path)
    with st.sidebar:
        st.caption(f"Database: `{path}`")
        sigs, latest = data.signatures(path, stamp)
        signature = None
        if sigs:
            default = sigs.index(latest) if latest in sigs else 0
            signature = st.selectbox(
                "Score signature",
                sigs,
                index=default,
                key="signature",
                help="Encoder, mode, tau, K, normalisation and version of the stored scores. "
                "Publish it with any number you quote.",
            )
        alpha_slot = None
        if live_alpha:  # the slider is drawn here by live_alpha()'s fragment
            alpha_slot = st.container()
            alpha = _persist("alpha", 0.5)
        else:
            alpha = _alpha_slider()
        with st.expander("Import the S3KG authors' released runs"):
            folder = st.text_input("Folder", value=_RELEASE_DEFAULT, key="release_folder")
            if st.button("Import", key="release_import"):
                _import_release(path, Path(folder))
    return Controls(
        path=path, stamp=stamp, signature=signature, alpha=float(alpha), alpha_slot=alpha_slot
    )


def _alpha_slider() -> float:
    """The sidebar's alpha slider (in the current container), its value kept across pages."""
    _persist("alpha", 0.5)
    return float(
        st.slider(
            "alpha",
            0.0,
            1.0,
            step=0.05,
            key="alpha",
            on_change=_remember,
            args=("alpha",),
            help="Blend of the stored components, recomputed instantly. Hybrid and paper "
            "mode: (1 - alpha) S_WL + alpha S_SBERT; kgx mode: alpha S_WL + (1 - alpha) S_SBERT.",
        )
    )


def live_alpha(controls: Controls, render: Callable[[float], None]) -> None:
    """Draw ``render(alpha)`` and the sidebar's alpha slider as one ``st.fragment``.

    Moving alpha then reruns only this fragment: the slider and what ``render`` draws (the
    blocks that depend on alpha), not the page around them. Needs
    ``sidebar(live_alpha=True)``, which leaves the slider's place in the sidebar to this
    fragment; with a plain ``sidebar()`` it just calls ``render(controls.alpha)``. Call it
    once per page. Everything else on the page keeps the alpha of the last full run (so a
    list sorted by score does not reshuffle under the reader while alpha moves).
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


def _import_release(path: Path, folder: Path) -> None:
    from s3kg_core.errors import S3KGError
    from s3kg_core.stages.importing import import_s3kg_release

    if not folder.is_dir():
        st.error(f"{folder} is not a folder")
        return
    try:
        with data.writer(path) as store:
            reports = import_s3kg_release(store, folder)
    except S3KGError as exc:
        st.error(str(exc))
        return
    rows = sum(r.items for r in reports)
    st.success(
        f"Imported {len(reports)} runs ({rows} answers). Score them with "
        f"`s3kg score --db {path}` (the dashboard shows them once scored)."
    )
    data.clear_caches()
