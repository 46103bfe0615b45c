"""Failure analysis: TAU on the lowest-scoring answers, triple by triple."""

from __future__ import annotations

import json

import plotly.express as px
import streamlit as st

from dashboard import data, views, widgets
from s3kg_core.kg import Triple

CATEGORIES = ["relation_mismatch", "entity_mismatch", "extra", "missing"]

widgets.page_setup("Failure analysis (TAU)")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: `s3kg score --db {controls.path}`.")
    st.stop()

cols = st.columns(2)
target = cols[0].radio(
    "Rank answers by",
    ["cus", "gold_sim", "ctx_sim"],
    horizontal=True,
    key="tau_target",
    help="ctx_sim explains the answer against the context KG, the others against the gold KG.",
)
percent = cols[1].slider("Lowest share of each run (%)", 1, 50, 5, key="tau_percent")
cases = data.tau_live(
    controls.path, controls.stamp, controls.signature, target, percent / 100, controls.alpha
)
st.caption(
    f"{len(cases)} answers: the lowest {percent} % of each run by {target} at alpha "
    f"{controls.alpha:g}. Triples align at sentence cosine >= 0.76; parts match at >= 0.76."
)
if cases.empty:
    st.info("No answers in range.")
    st.stop()

per_model = cases.groupby(["dataset", "model", "temperature"], as_index=False)[CATEGORIES].sum()
long = per_model.melt(
    id_vars=["dataset", "model", "temperature"],
    value_vars=CATEGORIES,
    var_name="category",
    value_name="triples",
)
long["run"] = long["model"] + " T=" + long["temperature"].map("{:g}".format)
fig = px.bar(long, x="run", y="triples", color="category", facet_col="dataset", facet_col_wrap=3)
st.plotly_chart(fig, width="stretch", key="tau_bars")
st.dataframe(per_model, hide_index=True, width="stretch", key="tau_table")

st.subheader("Cases")
labels = {  # no score in the label: it changes with alpha and would reset the choice
    i: f"{r.dataset} · {r.model} · T={r.temperature:g} · item {r.item_id}"
    for i, r in cases.iterrows()
}
by_label = {label: i for i, label in labels.items()}
case = cases.loc[
    by_label[st.selectbox(f"Case (lowest {target} first)", list(by_label), key="tau_case")]
]
st.caption(f"{target} {case['score']:.3f} at alpha {controls.alpha:g}")
result = json.loads(case["result"])
reference = "context" if target == "ctx_sim" else "gold"

left, right = st.columns(2)
with left:
    st.markdown("**Aligned pairs**")
    st.dataframe(
        [
            {reference: " | ".join(a["gold"]), "answer": " | ".join(a["answer"]),
             "cosine": round(a["similarity"], 3), "via": a["via"]}
            for a in result["aligned"]
        ],
        width="stretch",
        key="tau_aligned",
    )  # fmt: skip
    st.markdown("**Mismatches**")
    mismatches = [
        {
            "kind": kind.replace("_", " "),
            reference: " | ".join(m["gold"]),
            "answer": " | ".join(m["answer"]),
            "differs in": ", ".join(m["parts"]),
        }
        for kind in ("relation_mismatch", "entity_mismatch")
        for m in result[kind]
    ]
    if mismatches:
        st.dataframe(mismatches, width="stretch", key="tau_mismatch")
    else:
        st.caption("none")
with right:
    st.markdown("**Extra answer triples** (no counterpart: possible hallucinations)")
    st.dataframe(
        [{"triple": " | ".join(t)} for t in result["extra"]], width="stretch", key="tau_extra"
    )
    st.markdown(f"**Missing {reference} triples** (not covered by the answer)")
    st.dataframe(
        [{"triple": " | ".join(t)} for t in result["missing"]], width="stretch", key="tau_missing"
    )

view = data.item_view(
    controls.path, controls.stamp, int(case["run_id"]), int(case["item_id"]), controls.signature
)
residual_answer = [Triple(*t) for t in result["extra"]] + [
    Triple(*m["answer"]) for k in ("relation_mismatch", "entity_mismatch") for m in result[k]
]
residual_reference = [Triple(*t) for t in result["missing"]] + [
    Triple(*m["gold"]) for k in ("relation_mismatch", "entity_mismatch") for m in result[k]
]
gold_map = view.details.get("gold", {}).get("entity_map", {})
ctx_map = view.details.get("context", {}).get("entity_map", {})
st.caption("Residual triples (mismatched, extra, missing) are drawn in red.")
views.three_graphs(
    view,
    gold_map,
    ctx_map,
    st.iframe,
    highlight={"answer": residual_answer, reference: residual_reference},
)
