"""Annotate: confirm or reject TAU's triple alignments, add the ones it missed."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import data, views, widgets
from dashboard.escape import code, md
from s3kg_core.scoring.agreement import pairwise_agreement, percent_agreement, tau_quality
from s3kg_core.stages.results import reblend

widgets.page_setup("Annotate alignments")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: {code(f's3kg score --db {controls.path}')}.")
    st.stop()

annotator = st.text_input(
    "Your name", key="annotator", help="Entered once per browser session; saved with every verdict."
).strip()
frame = reblend(
    data.load_components(controls.path, controls.stamp, controls.signature), controls.alpha
)
runs = data.load_runs(controls.path, controls.stamp)
runs = runs[runs["run_id"].isin(frame["run_id"].unique())]
run_options = views.run_choices(runs)
run_id = run_options[st.selectbox("Run", list(run_options), key="annotate_run")]
answers = frame[frame["run_id"] == run_id].sort_values("cus")
item_options = views.item_choices(answers)
item_id = item_options[
    st.selectbox("Answer (lowest CUS first)", list(item_options), key="annotate_item")
]
view = data.item_view(controls.path, controls.stamp, run_id, item_id, controls.signature)
views.texts(view)
result = data.tau_item(controls.path, controls.stamp, controls.signature, run_id, item_id)


def key(triple: list[str]) -> str:
    """A triple as stored in the annotations table."""
    return json.dumps(list(triple))


mine = data.annotations(controls.path, data.db_stamp(controls.path), run_id)
mine = mine[(mine["item_id"] == item_id) & (mine["annotator"] == annotator)]
previous = {(r.gold_triple, r.answer_triple): r.verdict for r in mine.itertuples()}

st.subheader("TAU's proposed alignments")
proposed = pd.DataFrame(
    [
        {
            "gold": " | ".join(a["gold"]),
            "answer": " | ".join(a["answer"]),
            "cosine": round(a["similarity"], 3),
            "verdict": previous.get((key(a["gold"]), key(a["answer"])), "confirm"),
            "_gold": key(a["gold"]),
            "_answer": key(a["answer"]),
        }
        for a in result["aligned"]
    ],
    columns=["gold", "answer", "cosine", "verdict", "_gold", "_answer"],
)
edited = st.data_editor(
    proposed,
    column_config={
        "verdict": st.column_config.SelectboxColumn(
            "verdict", options=["confirm", "reject"], required=True
        ),
        "_gold": None,
        "_answer": None,
    },
    disabled=["gold", "answer", "cosine"],
    hide_index=True,
    width="stretch",
    key=f"editor_{run_id}_{item_id}",
)
if proposed.empty:
    st.caption("TAU aligned no pair of this answer.")

st.subheader("Add an alignment TAU missed")
gold_kg = view.kgs.get("gold")
answer_kg = view.kgs.get("answer")
gold_options = (
    {" | ".join(t.to_list()): key(t.to_list()) for t in gold_kg.triples} if gold_kg else {}
)
answer_options = (
    {" | ".join(t.to_list()): key(t.to_list()) for t in answer_kg.triples} if answer_kg else {}
)
added = [(g, a) for (g, a), v in previous.items() if v == "add"] + st.session_state.setdefault(
    f"added_{run_id}_{item_id}", []
)
cols = st.columns(2)
new_gold = cols[0].selectbox("Gold triple", list(gold_options), key="add_gold", index=None)
new_answer = cols[1].selectbox("Answer triple", list(answer_options), key="add_answer", index=None)
if st.button("Add pair", key="add_pair", disabled=new_gold is None or new_answer is None):
    pair = (gold_options[new_gold], answer_options[new_answer])
    st.session_state[f"added_{run_id}_{item_id}"].append(pair)
    added.append(pair)
for g, a in dict.fromkeys(added):
    st.text(f"+ {' | '.join(json.loads(g))}  <->  {' | '.join(json.loads(a))}")

if st.button("Save my verdicts", type="primary", key="save", disabled=not annotator):
    rows = [
        (run_id, item_id, annotator, r["_gold"], r["_answer"], r["verdict"])
        for r in edited.to_dict("records")
    ] + [(run_id, item_id, annotator, g, a, "add") for g, a in dict.fromkeys(added)]
    if rows:
        n = data.save_annotations(controls.path, rows)
        st.session_state[f"added_{run_id}_{item_id}"] = []
        st.success(f"Saved {n} verdicts by {md(annotator)}.")
    else:
        st.info("Nothing to save: TAU aligned no pair here and none was added.")
if not annotator:
    st.caption("Enter your name to save.")

st.subheader("Agreement and TAU quality (all annotations)")
everything = data.annotations(controls.path, data.db_stamp(controls.path))
if everything.empty:
    st.caption("No annotations yet.")
else:
    records = everything.to_dict("records")
    share, compared = percent_agreement(records)
    quality = tau_quality(records)
    cols = st.columns(4)
    cols[0].metric(
        "Percent agreement",
        "n/a" if compared == 0 else f"{share:.1%}",
        f"{compared} pairs",
        delta_color="off",
    )
    cols[1].metric("TAU precision", f"{quality['precision']:.3f}")
    cols[2].metric("TAU recall", f"{quality['recall']:.3f}")
    cols[3].metric("TAU F1", f"{quality['f1']:.3f}")
    pairs = pairwise_agreement(records)
    if pairs:
        st.dataframe([vars(p) for p in pairs], hide_index=True, width="stretch", key="pairwise")
    st.caption(
        f"{len(everything)} verdicts by {everything['annotator'].nunique()} annotators: "
        f"{int(quality['confirm'])} confirmed, {int(quality['reject'])} rejected, "
        f"{int(quality['add'])} added."
    )
