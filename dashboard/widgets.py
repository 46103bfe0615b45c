"""The sidebar every page shares: database, score signature, alpha, and the import action."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from dashboard import data

__all__ = ["Controls", "page_setup", "sidebar"]

_RELEASE_DEFAULT = str(Path("..") / "shared" / "data" / "s3kg_release" / "qa")


@dataclass(frozen=True)
class Controls:
    """What the sidebar chose."""

    path: Path
    stamp: int
    signature: str | None
    alpha: float


def page_setup(title: str) -> None:
    """Page config and title; builds the demo database on the very first start."""
    st.set_page_config(page_title=f"{title} · S3KG Workbench", layout="wide")
    path = data.db_path()
    if not path.exists():
        with st.spinner(
            f"First start: building the demo database {path} (offline KG extraction and scoring "
            "of the demo answers; about a minute)..."
        ):
            data.ensure_database(path)
        st.toast(f"Built the demo database {path}")
    st.title(title)


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


def sidebar() -> Controls:
    """Render the shared sidebar and return its choices."""
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
        _persist("alpha", 0.5)
        alpha = st.slider(
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
        with st.expander("Import the S3KG authors' released runs"):
            folder = st.text_input("Folder", value=_RELEASE_DEFAULT, key="release_folder")
            if st.button("Import", key="release_import"):
                _import_release(path, Path(folder))
    return Controls(path=path, stamp=stamp, signature=signature, alpha=float(alpha))


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
