"""S3KG Workbench: the overview and leaderboard of every scored run in the database."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import data, views, widgets

widgets.page_setup("S3KG Workbench")
controls = widgets.sidebar(live_alpha=True)

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

widgets.live_alpha(
    controls,
    partial(
        views.scores_overview,
        data.load_components(controls.path, controls.stamp, controls.signature),
        controls.signature,
    ),
)
