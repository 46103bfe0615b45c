"""Sample explorer: one answer's texts and its three KGs side by side, aligned nodes coloured."""

from __future__ import annotations

import streamlit as st

from dashboard import data, views, widgets
from dashboard.escape import code
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import reblend

widgets.page_setup("Sample explorer")
controls = widgets.sidebar()
runs = data.load_runs(controls.path, controls.stamp)
runs = runs[runs["with_kgs"] > 0]
if runs.empty or controls.signature is None:
    st.info(
        "No run with KGs and scores yet: `s3kg extract` and "
        f"{code(f's3kg score --db {controls.path}')}."
    )
    st.stop()

frame = reblend(
    data.load_components(controls.path, controls.stamp, controls.signature), controls.alpha
)
run_options = views.run_choices(runs)
run_id = run_options[st.selectbox("Run", list(run_options), key="explorer_run")]
answers = frame[frame["run_id"] == run_id].sort_values("cus")
if answers.empty:
    st.info("This run has no scores under the chosen signature.")
    st.stop()
item_options = views.item_choices(answers)
item_id = item_options[
    st.selectbox("Question (lowest CUS first)", list(item_options), key="explorer_item")
]
config = Signature.parse(controls.signature).config_kwargs()
tau = st.slider(
    "tau (alignment threshold for this question)",
    0.0,
    1.0,
    value=float(config["tau"]),
    step=0.01,
    key="explorer_tau",
    help="Recomputes this question's alignment from the stored embeddings.",
)
view = data.item_view(controls.path, controls.stamp, int(run_id), int(item_id), controls.signature)
row = answers[answers["item_id"] == item_id].iloc[0]
views.score_strip(row, controls.alpha)
views.texts(view)

gold_map, ctx_map, note = views.alignment_maps(controls, view, config, tau)
st.caption(note)
views.three_graphs(view, gold_map, ctx_map, st.iframe)
