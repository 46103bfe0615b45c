"""Annotate: confirm or reject TAU's triple alignments, add the ones it missed.

Nothing is saved that the annotator did not decide: every proposed pair starts undecided.
A case opens from the URL (``?run=&item=``, plus ``?annotator=``).
"""

from __future__ import annotations

import math

import streamlit as st

from dashboard import annotate, data, views, widgets
from s3kg_core.scoring.agreement import pairwise_agreement, percent_agreement, tau_quality
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import reblend

widgets.page_setup("Annotate alignments")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: `s3kg score --db {controls.path}`.")
    st.stop()
state = st.session_state
annotate.from_query(st.query_params, state)

frame = reblend(
    data.load_components(controls.path, controls.stamp, controls.signature), controls.alpha
)
runs = data.load_runs(controls.path, controls.stamp)
runs = runs[runs["run_id"].isin(frame["run_id"].unique())]
run_options = views.run_choices(runs)
if "annotate.run_id" in state:  # a case from the URL (or "next with pairs")
    wanted = state.pop("annotate.run_id")
    state["annotate_run"] = next((k for k, v in run_options.items() if v == wanted), None)
if state.get("annotate_run") not in run_options:
    state["annotate_run"] = next(iter(run_options))
if "annotator" not in state:
    state["annotator"] = state.get("annotate.name", "")


def _remember_name() -> None:
    state["annotate.name"] = state["annotator"].strip()


top = st.columns([2, 4, 2.2, 1.4], vertical_alignment="bottom")
annotator = (
    top[0]
    .text_input(
        "Your name",
        key="annotator",
        on_change=_remember_name,
        help="Saved with every verdict; kept in the page's address (?annotator=) across reloads.",
    )
    .strip()
)
run_id = run_options[top[1].selectbox("Run", list(run_options), key="annotate_run")]
tau = data.tau_run(controls.path, controls.stamp, controls.signature, run_id)
order = [int(i) for i in frame[frame["run_id"] == run_id].sort_values("cus")["item_id"]]
labels = annotate.item_labels(order, tau)
by_id = {v: k for k, v in labels.items()}
if "annotate.item_id" in state:
    state["annotate_item"] = by_id.get(state.pop("annotate.item_id"))
if state.get("annotate_item") not in labels:  # open on an answer TAU proposed pairs for
    first = annotate.first_with_pairs(order, tau)
    state["annotate_item"] = by_id[first] if first is not None else next(iter(labels))
item_id = labels[
    top[2].selectbox(
        "Answer (lowest CUS first)",
        list(labels),
        key="annotate_item",
        help="The number of pairs TAU proposed for each answer.",
    )
]


def _go_next() -> None:
    nxt = annotate.next_with_pairs(order, tau, item_id)
    if nxt is not None:
        state["annotate_item"] = by_id[nxt]


top[3].button(
    "Next with pairs →",
    key="annotate_next",
    on_click=_go_next,
    disabled=annotate.first_with_pairs(order, tau) is None,
    help="The next answer (in the list's order) that TAU proposed pairs for.",
)
st.query_params.update({"run": str(run_id), "item": str(item_id)})
if annotator:
    st.query_params["annotator"] = annotator
    state["annotate.name"] = annotator

view = data.item_view(controls.path, controls.stamp, run_id, item_id, controls.signature)
stamp = data.db_stamp(controls.path)
mine_run = data.annotations(controls.path, stamp, run_id)
mine_run = mine_run[mine_run["annotator"] == annotator]
mine = mine_run[mine_run["item_id"] == item_id]
saved = annotate.saved_verdicts(mine)
result = tau.get(item_id, {"aligned": []})
st.caption(annotate.progress(tau, mine_run, item_id).line(annotator or "You (enter your name)"))
st.markdown(f"**Question** [{view.ext_id}] {view.question}")

gold_kg, answer_kg = view.kgs.get("gold"), view.kgs.get("answer")
raw_gold = annotate.raw_labels(gold_kg.triples if gold_kg else ())
raw_answer = annotate.raw_labels(answer_kg.triples if answer_kg else ())
proposed = annotate.pair_rows(result, saved, raw_gold, raw_answer)
st.subheader(f"TAU's proposed alignments ({len(proposed)})")
if proposed.empty:
    st.info(
        "TAU proposed no pair for this answer: add one below if it missed any, or go to the "
        "next answer with pairs."
    )
    edited = proposed
else:
    edited = st.data_editor(
        proposed,
        column_config={
            "verdict": st.column_config.SelectboxColumn(
                "your verdict",
                options=["confirm", "reject"],
                required=False,
                width="small",
                help="Empty until you decide; only decided pairs are saved.",
            ),
            "gold as extracted": st.column_config.TextColumn("gold triple (as extracted)"),
            "answer as extracted": st.column_config.TextColumn("answer triple (as extracted)"),
            "cosine": st.column_config.NumberColumn("cosine", format="%.3f", width="small"),
            "gold": st.column_config.TextColumn(
                "gold (lemmas)", help="The normalised labels TAU compared."
            ),
            "answer": st.column_config.TextColumn(
                "answer (lemmas)", help="The normalised labels TAU compared."
            ),
            "_gold": None,
            "_answer": None,
        },
        disabled=["gold as extracted", "answer as extracted", "cosine", "gold", "answer"],
        hide_index=True,
        width="stretch",
        key=f"editor_{run_id}_{item_id}",
    )
decided = annotate.decisions(edited)
withdrawn = [
    (g, a)
    for g, a in zip(proposed["_gold"], proposed["_answer"], strict=True)
    if annotate.pair_key(g, a) in saved
    and saved[annotate.pair_key(g, a)] in ("confirm", "reject")
    and (g, a) not in {(dg, da) for dg, da, _ in decided}
]

st.markdown("**Add an alignment TAU missed**")
gold_options = {annotate.show(k): annotate.triple_key(k) for k in raw_gold}
answer_options = {annotate.show(k): annotate.triple_key(k) for k in raw_answer}
pending_key = f"annotate.added_{run_id}_{item_id}"
pending: list[tuple[str, str]] = state.setdefault(pending_key, [])
add = st.columns([4, 4, 1.2], vertical_alignment="bottom")
new_gold = add[0].selectbox("Gold triple", list(gold_options), key="add_gold", index=None)
new_answer = add[1].selectbox("Answer triple", list(answer_options), key="add_answer", index=None)
if add[2].button("Add pair", key="add_pair", disabled=new_gold is None or new_answer is None):
    pair = (gold_options[str(new_gold)], answer_options[str(new_answer)])
    if pair not in pending:
        pending.append(pair)
stored_adds = annotate.added_pairs(mine)
for n, (g, a) in enumerate([*stored_adds, *pending]):
    is_stored = n < len(stored_adds)
    row = st.columns([8, 1.2], vertical_alignment="center")
    row[0].text(
        f"+ {annotate.show(annotate.pair_key(g, a)[0])}  <->  "
        f"{annotate.show(annotate.pair_key(g, a)[1])}" + ("" if is_stored else "   (not saved yet)")
    )
    if row[1].button("Remove", key=f"annotate_remove_{run_id}_{item_id}_{n}"):
        if is_stored:
            data.withdraw_annotations(controls.path, [(run_id, item_id, annotator, g, a)])
        else:
            pending.remove((g, a))
        st.rerun()

unsaved = (
    len(decided)
    + len(pending)
    + len(withdrawn)
    - sum(saved.get(annotate.pair_key(g, a)) == v for g, a, v in decided)
)
save = st.columns([1.6, 6], vertical_alignment="center")
if save[0].button("Save my verdicts", type="primary", key="save", disabled=not annotator):
    rows = [(run_id, item_id, annotator, g, a, v) for g, a, v in decided] + [
        (run_id, item_id, annotator, g, a, "add") for g, a in pending
    ]
    n = data.save_annotations(controls.path, rows)
    taken_back = data.withdraw_annotations(
        controls.path, [(run_id, item_id, annotator, g, a) for g, a in withdrawn]
    )
    state[pending_key] = []
    undecided = len(proposed) - len(decided)
    if n or taken_back:
        st.success(
            f"Saved {n} verdicts by {annotator}"
            + (f", withdrew {taken_back}" if taken_back else "")
            + f"; {undecided} proposed pairs left undecided (not saved)."
        )
    else:
        st.info("Nothing to save: you have not decided any pair or added one.")
save[1].caption(
    "Enter your name to save."
    if not annotator
    else f"{unsaved} change(s) not saved yet."
    if unsaved
    else "Everything you decided is saved."
)

st.subheader("The answer's graphs")
config = Signature.parse(controls.signature).config_kwargs()
gold_map, ctx_map, note = views.alignment_maps(controls, view, config, float(config["tau"]))
views.three_graphs(view, gold_map, ctx_map, st.iframe, height=380)
with st.expander("Question, gold answer, model answer and context"):
    views.texts(view)

st.subheader("Agreement and TAU quality (all annotators, decided verdicts only)")
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
        f"{compared} pairs judged by two or more",
        delta_color="off",
    )
    for col, (label, name) in zip(
        cols[1:],
        (("TAU precision", "precision"), ("TAU recall", "recall"), ("TAU F1", "f1")),
        strict=True,
    ):
        value = quality[name]
        col.metric(label, "n/a" if math.isnan(value) else f"{value:.3f}")
    pairs = pairwise_agreement(records)
    if pairs:
        st.dataframe([vars(p) for p in pairs], hide_index=True, width="stretch", key="pairwise")
    st.caption(
        f"From {int(quality['decided'])} decided verdicts by {everything['annotator'].nunique()} "
        f"annotators: {int(quality['confirm'])} confirmed, {int(quality['reject'])} rejected, "
        f"{int(quality['add'])} added. Pairs nobody decided count nowhere."
    )
