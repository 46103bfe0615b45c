"""Overview: the leaderboard of every scored run in the database, one bar per run."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, data, widgets
from dashboard.escape import code
from s3kg_core.stages.results import reblend

CHARTS = ("By run", "By temperature", "Distributions")

widgets.page_setup("S3KG Workbench")
controls = widgets.sidebar(live_alpha=True)

st.markdown(
    "**GoldSim**: answer KG vs gold KG · **CtxSim**: answer KG vs context KG (both S3KG) · "
    "**CUS**: their harmonic mean · all follow **alpha** (sidebar)."
)
runs = data.load_runs(controls.path, controls.stamp)
if controls.signature is None:
    st.info(
        "Nothing is scored yet. Score the stored runs with "
        f"{code(f's3kg score --db {controls.path}')}, then reload."
    )
    st.dataframe(runs, hide_index=True, width="stretch", key="overview_runs")
    st.stop()

components = data.load_components(controls.path, controls.stamp, controls.signature)
stored_signature = controls.signature
partial = widgets.partial_note(controls.path, controls.stamp, stored_signature, runs)


def scores(alpha: float) -> None:
    """Everything on the page that alpha changes: one fragment with the slider."""
    frame = reblend(components, alpha)
    board = data.mark_partial(data.leaderboard(frame), runs, partial)
    signature = f"{stored_signature}|alpha:{alpha:g}"

    cols = st.columns(4)
    cols[0].metric("Runs scored", int(frame["run_id"].nunique()))
    cols[1].metric("Answers scored", len(frame))
    cols[2].metric("Mean CUS", f"{frame['cus'].mean():.3f}")
    cols[3].metric("Datasets", int(frame["dataset"].nunique()))

    head, button = st.columns([4, 1], vertical_alignment="bottom")
    head.subheader("Leaderboard")
    widgets.csv_download(
        button,
        "Leaderboard (CSV)",
        board.assign(signature=signature),
        file_name="s3kg_leaderboard.csv",
        key="leaderboard_csv",
    )
    st.dataframe(
        board.sort_values("cus", ascending=False),
        hide_index=True,
        width="stretch",
        column_config={
            "n": st.column_config.NumberColumn("answers"),
            **{
                m: st.column_config.NumberColumn(name, format="%.4f")
                for m, name in charts.SCORE_NAMES.items()
            },
        },
        key="leaderboard",
    )
    st.caption(f"Signature of every number on this page: {code(signature)}")

    # One chart at a time: only the chosen one is built on each alpha step.
    chart = st.segmented_control(
        "Chart", CHARTS, default=CHARTS[0], key="overview_chart", label_visibility="collapsed"
    )
    if chart == "By temperature":
        st.plotly_chart(charts.temperature_figure(board), width="stretch", key="lines")
        st.caption("Runs with a single temperature show as points.")
    elif chart == "Distributions":
        metric = st.radio(
            "Score",
            list(charts.SCORE_NAMES),
            format_func=charts.SCORE_NAMES.get,
            horizontal=True,
            key="dist_metric",
        )
        st.plotly_chart(charts.distribution_figure(frame, metric), width="stretch", key="dist")
    else:
        st.plotly_chart(charts.leaderboard_figure(board, height=330), width="stretch", key="bars")
        st.caption(
            "One bar per run (model, temperature, extractor) and score. Compare two runs "
            "question by question on **Run comparison**; open the worst answers on "
            "**Failure analysis**."
        )


widgets.live_alpha(controls, scores)

with st.expander(f"Runs in the database ({len(runs)})"):
    st.dataframe(runs, hide_index=True, width="stretch", key="overview_runs")
