"""Sample explorer: one answer's texts and its three KGs side by side, aligned nodes coloured."""

from __future__ import annotations

from functools import partial

import streamlit as st

from dashboard import data, views, widgets
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import reblend

widgets.page_setup("Sample explorer")
controls = widgets.sidebar(live_alpha=True)
runs = data.load_runs(controls.path, controls.stamp)
runs = runs[runs["with_kgs"] > 0]
if runs.empty or controls.signature is None:
    st.info(
        f"No run with KGs and scores yet: `s3kg extract` and `s3kg score --db {controls.path}`."
    )
    st.stop()

components = data.load_components(controls.path, controls.stamp, controls.signature)
frame = reblend(components, controls.alpha)
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
widgets.live_alpha(controls, partial(views.item_score_strip, components, run_id, item_id))
views.texts(view)

gold_map, ctx_map, note = views.alignment_maps(controls, view, config, tau)
st.caption(note)
views.three_graphs(view, gold_map, ctx_map, st.iframe)
