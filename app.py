"""S3KG Workbench: the overview and leaderboard of every scored run in the database."""

from __future__ import annotations

import plotly.express as px
import streamlit as st

from dashboard import data, widgets
from s3kg_core.stages.results import reblend

widgets.page_setup("S3KG Workbench")
controls = widgets.sidebar()

st.markdown(
    "How well do a model's answers match the **gold answer** (GoldSim) and use the **context** "
    "(CtxSim)? Each is an S3KG comparison of knowledge graphs; **CUS** is their harmonic mean. "
    "Move **alpha** in the sidebar: every number below is recomputed from the stored components."
)
runs = data.load_runs(controls.path, controls.stamp)
with st.expander(f"Runs in the database ({len(runs)})", expanded=controls.signature is None):
    st.dataframe(runs, hide_index=True, width="stretch")

if controls.signature is None:
    st.info(
        "Nothing is scored yet. Score the stored runs with "
        f"`s3kg score --db {controls.path}`, then reload."
    )
    st.stop()

frame = reblend(
    data.load_components(controls.path, controls.stamp, controls.signature), controls.alpha
)
board = data.leaderboard(frame)
signature = f"{controls.signature}|alpha:{controls.alpha:g}"

cols = st.columns(4)
cols[0].metric("Runs scored", int(frame["run_id"].nunique()))
cols[1].metric("Answers scored", len(frame))
cols[2].metric("Mean CUS", f"{frame['cus'].mean():.3f}")
cols[3].metric("Datasets", int(frame["dataset"].nunique()))

st.subheader("Leaderboard")
st.dataframe(
    board.sort_values("cus", ascending=False),
    hide_index=True,
    width="stretch",
    column_config={
        m: st.column_config.NumberColumn(m, format="%.4f") for m in ("gold_sim", "ctx_sim", "cus")
    },
    key="leaderboard",
)
st.caption(f"Signature of every number on this page: `{signature}`")
st.download_button(
    "Download the leaderboard (CSV)",
    board.assign(signature=signature).to_csv(index=False).encode(),
    file_name="s3kg_leaderboard.csv",
    mime="text/csv",
)

long = board.melt(
    id_vars=["dataset", "model", "temperature", "extractor", "n"],
    value_vars=["gold_sim", "ctx_sim", "cus"],
    var_name="score",
    value_name="mean",
)
tabs = st.tabs(["By model", "By temperature", "Distributions"])
with tabs[0]:
    fig = px.bar(
        long,
        x="model",
        y="mean",
        color="score",
        barmode="group",
        facet_col="dataset",
        facet_col_wrap=3,
        hover_data=["temperature", "extractor", "n"],
        range_y=[0, 1],
    )
    st.plotly_chart(fig, width="stretch", key="bars")
with tabs[1]:
    fig = px.line(
        board.sort_values("temperature"),
        x="temperature",
        y="cus",
        color="model",
        line_dash="extractor",
        facet_col="dataset",
        facet_col_wrap=3,
        markers=True,
        range_y=[0, 1],
    )
    st.plotly_chart(fig, width="stretch", key="lines")
    st.caption("Runs with a single temperature show as points.")
with tabs[2]:
    metric = st.radio("Score", ["cus", "gold_sim", "ctx_sim"], horizontal=True, key="dist_metric")
    fig = px.box(frame, x="model", y=metric, color="dataset", points="outliers", range_y=[0, 1])
    st.plotly_chart(fig, width="stretch", key="dist")
