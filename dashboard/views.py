"""Rendering blocks the pages share: labels, texts, the three graphs, the explorer's blocks.

The sample explorer's blocks (``explorer_*``) draw one question recomputed at a tau: its scores
beside the stored ones, the linked graphs document and the texts with aligned entities marked.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from dashboard import live_alpha, live_explorer
from dashboard.data import writes
from dashboard.data.reads import ItemView
from dashboard.escape import code, md
from dashboard.run_names import run_label_map
from s3kg_core.errors import ConfigError
from s3kg_core.scoring.signature import Signature
from s3kg_core.store.run_queries import MAX_RUN_NAME

if TYPE_CHECKING:
    from pathlib import Path

    from dashboard.explorer import CaseScores

__all__ = [
    "TRANSPORT_AT",
    "TRANSPORT_BELOW",
    "explorer_graphs",
    "explorer_scores",
    "explorer_texts",
    "explorer_transport",
    "item_choices",
    "run_choices",
    "session_gone",
    "texts",
]


def run_choices(runs: pd.DataFrame) -> dict[str, int]:
    """Selectbox labels of runs, mapped to their ids.

    Plain labels rather than a format function, so that streamlit.testing can select them.
    The label is the run's ``label`` column (:func:`dashboard.data.reads.load_runs`: the same run
    reads the same on every page), or :func:`dashboard.run_names.run_label_map` of ``runs``.
    """
    ids = [int(r) for r in runs["run_id"]]
    if "label" in runs:
        return dict(zip(runs["label"].astype(str), ids, strict=True))
    labels = run_label_map(runs)
    return {labels[run]: run for run in ids}


def rename_run_form(path: Path, run_id: int, current: str) -> None:
    """A form that renames run ``run_id`` (its display name, as ``--name`` gives one).

    On save the name is stored (:func:`dashboard.data.writes.rename_run`), the page reruns with it
    on every picker and table, and ``st.session_state["run.renamed"]`` holds it for a notice; a name
    the store refuses is an ``st.error`` and nothing changes.
    """
    with st.form(key=f"run.rename_form.{run_id}", border=False):
        name = st.text_input(
            "Display name",
            value=current,
            max_chars=MAX_RUN_NAME,
            key=f"run.rename_text.{run_id}",
            help="Shown on every page instead of the model's name; links keep the run's id.",
        )
        saved = st.form_submit_button("Save name", key=f"run.rename_save.{run_id}")
    if not saved:
        return
    try:
        stored = writes.rename_run(path, run_id, name)
    except ConfigError as exc:
        st.error(md(str(exc)))
        return
    st.session_state["run.renamed"] = stored
    st.rerun()


def item_choices(answers: pd.DataFrame) -> dict[str, int]:
    """Selectbox labels of a run's answers, mapped to their item ids.

    The label is the item alone, never its score: a score changes with alpha, and a label that
    changes would make Streamlit drop the user's choice when the slider moves.
    """
    return {f"item {int(r.item_id)}": int(r.item_id) for r in answers.itertuples()}


def texts(view: ItemView) -> None:
    """Question, then context, gold answer and model answer side by side (as plain text)."""
    st.markdown("**Question**")
    st.text(f"[{view.ext_id}] {view.question}")
    cols = st.columns(3)
    for col, title, body in (
        (cols[0], "Gold answer", view.gold),
        (cols[1], f"Model answer ({md(view.answer_status)})", view.answer),
        (cols[2], "Context", view.context),
    ):
        with col:
            st.markdown(f"**{title}**")
            st.text(body or "(empty)")


def explorer_scores(
    stored: Sequence[Mapping[str, Any]],
    live: Sequence[Mapping[str, float]],
    *,
    alpha: float,
    tau: float,
    stored_tau: float,
    signature: str,
) -> None:
    """GoldSim, CtxSim, CUS and the components at ``tau``, and the signature, following alpha.

    Two live blocks (:mod:`dashboard.live_alpha`): each score over its stored value, and the
    signature the scores are blended under. ``stored`` is the answer's stored row re-blended
    at each stop of the slider, ``live`` the same numbers recomputed at ``tau``
    (:func:`dashboard.live_explorer.figures`); ``alpha`` is the server's. Every metric always
    has its second line ("as stored" at the stored tau), so moving tau never changes the
    block's height and nothing below it moves.
    """
    live_alpha.mount(
        live_explorer.figures(stored, live, tau=tau, stored_tau=stored_tau),
        alpha=alpha,
        key="explorer.scores",
    )
    # the signature of the scores shown, at the alpha shown (it moves with the slider)
    lines = [
        f"alpha {stop:g} (sidebar) · Signature {Signature.blended(signature, stop)}"
        for stop in live_alpha.GRID
    ]
    live_alpha.mount(
        live_alpha.note(lines, live_explorer.PENDING, caption=True),
        alpha=alpha,
        key="explorer.signature",
    )


def explorer_graphs(
    case: CaseScores,
    statuses: Mapping[str, str],
    *,
    show_all: bool,
    state_key: str = "",
    marked: Mapping[str, Collection[int]] | None = None,
) -> dict[str, Any]:
    """The gold, answer and context KGs and the triple table, linked, in one frame.

    ``marked`` (source -> triple indices) draws those triples as red edges. Returns what was
    drawn: ``{"panels": ..., "rows": ..., "height": ...}`` (for tests).
    """
    from dashboard.explorer import TABLE_COLUMNS, linked_view
    from dashboard.graph_layout import LayoutCancelled
    from dashboard.graphs import linked_graphs_html

    panels, rows = linked_view(case, statuses, show_all=show_all, marked=marked)
    try:
        doc = linked_graphs_html(
            panels,
            rows,
            tau=case.tau,
            columns=TABLE_COLUMNS,
            state_key=state_key,
            hint=(
                f"Same badge and colour: one entity, aligned at tau {case.tau:g} (grey: not "
                "aligned). Hover or click a node or a table row to highlight it in all three "
                "graphs."
            ),
            should_stop=session_gone(),
            no_match=(
                "no triple pick: wwl transports nodes (see the transport plan)"
                if case.gold.mode == "wwl"
                else "no triple to match"
            ),
        )
    except LayoutCancelled:
        st.stop()  # nobody is left to see the picture
    # the frame fits its content: every row of the triple table (issue 43: 8 rows' worth of
    # height, and rows of two lines, showed 1 of 2 in an 84 px box)
    st.iframe(doc.html, height="content", alt="Gold, answer and context KGs, linked")
    return {"panels": panels, "rows": rows, "height": doc.height}


#: How the transport plan's table marks a flow below tau, and one at or above it.
TRANSPORT_BELOW, TRANSPORT_AT = "✗ below tau", "✓ at or above"


def _transport_mark_colour(mark: str) -> str:
    return "color: #b00020; font-weight: 600" if mark == TRANSPORT_BELOW else "color: #117733"


def explorer_transport(case: CaseScores) -> None:
    """In ``wwl`` and ``ot`` mode, the entity transport plan: where each entity's mass goes."""
    from dashboard.explorer import transport_rows

    rows = transport_rows(case)
    if not rows:
        return
    mode = case.gold.mode
    if mode == "wwl":
        title = "Transport plan (wwl mode): the n:m alignment behind the colours"
        colours = "An entity's colour above is that of the partner it sends most of its mass to."
    else:
        title = f"Transport plan ({mode} mode): the n:m alignment of the entity labels"
        colours = (
            "It makes S_SBERT; the colours above are the WL kernel's alignment at tau "
            f"{case.tau:g}."
        )
    tau = case.tau  # the scorer's threshold for this case (the page's tau)
    with st.expander(title):
        st.caption(
            "Each answer entity carries an equal share of the answer graph's mass; the optimal "
            "transport sends it to one or several entities of the gold or context graph. "
            f"{colours} The transport must place every entity's whole mass, so a flow whose "
            f"two labels' cosine is below tau ({tau:g}) is forced there, not a match: "
            f"{TRANSPORT_BELOW}."
        )
        frame = pd.DataFrame(rows)
        marks = [TRANSPORT_BELOW if below else TRANSPORT_AT for below in frame["below_tau"]]
        frame = frame.drop(columns="below_tau").assign(vs_tau=marks)
        frame = frame[["comparison", "entity", "partner", "cosine", "vs_tau", "share"]]
        st.dataframe(
            frame.style.map(_transport_mark_colour, subset=["vs_tau"]),
            hide_index=True,
            width="stretch",
            column_config={
                "comparison": st.column_config.TextColumn("comparison", width="small"),
                "entity": st.column_config.TextColumn("answer entity"),
                "partner": st.column_config.TextColumn("gold / context entity"),
                "cosine": st.column_config.NumberColumn(
                    "cosine", format="%.2f", width="small",
                    help="Cosine of the two entity labels (the vectors the scorer used).",
                ),
                "vs_tau": st.column_config.TextColumn(
                    f"vs tau {tau:g}", width="small",
                    help=f"Below tau {tau:g}: the plan forced the flow; the labels do not match.",
                ),
                "share": st.column_config.ProgressColumn(
                    "share of its mass", format="percent", min_value=0.0, max_value=1.0
                ),
            },
        )  # fmt: skip


def explorer_texts(view: ItemView, case: CaseScores) -> None:
    """Question, gold answer, model answer and context in tabs, aligned entities marked."""
    from dashboard.explorer import mark_text, text_marks

    status = view.answer_status or "no status"
    tabs = st.tabs(["Question", "Gold answer", f"Model answer ({code(status)})", "Context"])
    for tab, body, source in (
        (tabs[0], f"[{view.ext_id}] {view.question}", None),
        (tabs[1], view.gold, "gold"),
        (tabs[2], view.answer, "answer"),
        (tabs[3], view.context, "context"),
    ):
        with tab:
            marked = mark_text(body or "(empty)", text_marks(case, source) if source else {})
            st.html(f'<div style="white-space:pre-wrap;line-height:1.7">{marked}</div>')


def session_gone() -> Callable[[], bool]:
    """A check that says whether the browser session running this script has gone away.

    Streamlit lets a script run to its end after its browser tab closes; long work (a layout)
    asks this between steps and stops. Outside a running server it always says no.
    """
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None or not Runtime.exists():
        return lambda: False
    runtime, session = Runtime.instance(), ctx.session_id
    return lambda: not runtime.is_active_session(session)
