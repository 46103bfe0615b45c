"""Annotate: confirm or reject TAU's triple alignments, add the ones it missed.

Nothing is saved that the annotator did not decide: every proposed pair starts undecided (or at
this annotator's own saved verdict). A case opens from the URL (``?run=&item=``); the
annotator's name is kept in it (``?annotator=``) across reloads.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import streamlit as st

from dashboard import annotate, data, navigation, views, widgets
from dashboard.escape import code, md
from dashboard.explorer import MAX_NODES, marked_by_lemmas
from s3kg_core.annotation.names import normalize_annotator
from s3kg_core.errors import AnnotatorNameError
from s3kg_core.scoring.agreement import pairwise_agreement, percent_agreement, tau_quality
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.results import reblend

widgets.page_setup("Annotate alignments")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: {code(f's3kg score --db {controls.path}')}.")
    st.stop()
state = st.session_state
signature: str = controls.signature

frame = reblend(data.load_components(controls.path, controls.stamp, signature), controls.alpha)
runs = data.load_runs(controls.path, controls.stamp)
runs = runs[runs["run_id"].isin(frame["run_id"].unique())]
if runs.empty:
    st.info("No run has scores under the chosen signature.")
    st.stop()
run_labels = {str(v): k for k, v in views.run_choices(runs).items()}

# A case named by the URL (a link from Failure analysis, a bookmark, a reload) opens first.
url_run, url_item = annotate.case_from_query(st.query_params, state)
if url_run is not None and str(url_run) in run_labels:
    state["_annotate_run_choice"] = str(url_run)
    state["_annotate_item_choice"] = str(url_item)
if "annotate.name" not in state:
    state["annotate.name"] = str(st.query_params.get("annotator", "")).strip()
state["annotator"] = state["annotate.name"]  # the widget is new each time the page is opened


def _remember_name() -> None:
    state["annotate.name"] = state["annotator"].strip()


top = st.columns([1.4, 6.6], vertical_alignment="bottom")
annotator = (
    top[0]
    .text_input(
        "Your name",
        key="annotator",
        on_change=_remember_name,
        placeholder="needed to save",
        help="Saved with every verdict; kept in the page's address (?annotator=) across reloads.",
    )
    .strip()
)
if annotator:  # one spelling per person; control and bidi-override characters are refused
    try:
        annotator = normalize_annotator(annotator)
    except AnnotatorNameError as exc:
        st.error(md(str(exc)))
        annotator = ""
with top[1]:
    run_id = int(widgets.keyed_selectbox("Run", run_labels, key="annotate_run"))
answers = frame[frame["run_id"] == run_id].sort_values(["cus", "item_id"], kind="stable")
order = [int(i) for i in answers["item_id"]]
tau = data.tau_run(controls.path, controls.stamp, signature, run_id)
questions = data.item_questions(controls.path, controls.stamp).set_index("item_id")["question"]
item_labels = {
    str(i): annotate.item_label(
        i, len(tau.get(i, {}).get("aligned", [])), float(cus), str(questions.get(i, ""))
    )
    for i, cus in zip(order, answers["cus"], strict=True)
}
first = annotate.first_with_pairs(order, tau)
pick = st.columns([6.6, 1.4], vertical_alignment="bottom")
with pick[0]:
    item_id = int(
        widgets.keyed_selectbox(
            "Answer (lowest CUS first; opens on the first with TAU pairs)",
            item_labels,
            key="annotate_item",
            default=str(first if first is not None else order[0]),
            help="Item · how many pairs TAU proposed · CUS at the sidebar's alpha · question.",
        )
    )


def _go_next() -> None:
    nxt = annotate.next_with_pairs(order, tau, item_id)
    if nxt is not None:
        state["_annotate_item_choice"] = str(nxt)


pick[1].button(
    "Next with pairs",
    key="annotate_next",
    icon=":material/skip_next:",
    on_click=_go_next,
    disabled=first is None,
    help="The next answer in the list that TAU proposed pairs for.",
    width="stretch",
)
st.query_params.update({"run": str(run_id), "item": str(item_id)})
if annotator:
    st.query_params["annotator"] = annotator
elif "annotator" in st.query_params:
    del st.query_params["annotator"]
annotate.note_case(state, run_id, item_id)

view = data.item_view(controls.path, controls.stamp, run_id, item_id, signature)
mine_run = data.annotations(controls.path, data.db_stamp(controls.path), run_id)
mine_run = mine_run[mine_run["annotator"] == annotator] if annotator else mine_run.iloc[:0]
mine = mine_run[mine_run["item_id"] == item_id]
saved = annotate.saved_verdicts(mine)
result = tau.get(item_id, {"aligned": []})
gold_kg, answer_kg = view.kgs.get("gold"), view.kgs.get("answer")
raw_gold = annotate.raw_labels(gold_kg.triples if gold_kg else ())
raw_answer = annotate.raw_labels(answer_kg.triples if answer_kg else ())
pairs = annotate.proposed_pairs(result, saved, raw_gold, raw_answer)

who = hashlib.sha1(annotator.encode()).hexdigest()[:10]  # widgets per annotator: no carry-over
case = f"{run_id}_{item_id}_{who}"
verdict_keys = [f"annotate_verdict_{case}_{n}" for n in range(len(pairs))]
pending_key = f"annotate.pending_{case}"
pending: list[tuple[str, str]] = state.setdefault(pending_key, [])

st.caption(
    annotate.progress(tau, mine_run, item_id).line(md(annotator))
    if annotator
    else "Enter your name to annotate: what you decide is saved under it."
)
st.markdown(f"**Question** · {md(view.ext_id)} · {md(view.question)}")

st.subheader("TAU's proposed alignments")
if not pairs:
    st.info(
        "TAU proposed no pair for this answer: add one below if it missed any, or go to the "
        "next answer with pairs."
    )
else:
    st.caption(
        f"{len(pairs)} pair{'' if len(pairs) == 1 else 's'}. Each starts undecided; click "
        "confirm or reject (click again to undecide). Only decided pairs are saved. Triples "
        "as extracted, then the lemmas TAU compared."
    )
    widths = [1.9, 4, 4, 0.7]
    head = st.columns(widths)
    for col, title in zip(
        head,
        ("**Your verdict**", "**Gold triple**", "**Answer triple**", "**Cosine**"),
        strict=True,
    ):
        col.markdown(title)
    for n, pair in enumerate(pairs):
        row = st.columns(widths, vertical_alignment="center")
        with row[0]:
            st.segmented_control(
                f"Verdict on pair {n + 1}",
                list(annotate.DECISIONS),
                default=pair.saved if verdict_keys[n] not in state else None,
                key=verdict_keys[n],
                label_visibility="collapsed",
                disabled=not annotator,
            )
        for col, side, lemmas in (
            (row[1], "gold", pair.gold),
            (row[2], "answer", pair.answer),
        ):
            col.markdown(f"{md(pair.raw_text(side))}  \n:gray[lemmas: {md(annotate.show(lemmas))}]")
        row[3].markdown(f"{pair.cosine:.3f}")

chosen: list[Any] = [state.get(k) for k in verdict_keys]
pending_changes = annotate.changes(pairs, chosen, pending)


def _option(lemmas: tuple[str, ...], raw: list[Any]) -> str:
    text = " ; ".join(annotate.show(t.to_list()) for t in raw)
    lemma = annotate.show(lemmas)
    return lemma if not text or text.lower() == lemma else f"{text}  →  {lemma}"


gold_options = {_option(k, v): annotate.triple_key(k) for k, v in raw_gold.items()}
answer_options = {_option(k, v): annotate.triple_key(k) for k, v in raw_answer.items()}


def _add_pair() -> None:
    pair = (gold_options[state["add_gold"]], answer_options[state["add_answer"]])
    if pair not in pending and pair not in annotate.added_pairs(mine):
        pending.append(pair)
    state["add_gold"] = state["add_answer"] = None


stored_adds = annotate.added_pairs(mine)
with st.expander(
    f"Add an alignment TAU missed ({len(stored_adds) + len(pending)} added)",
    expanded=bool(stored_adds or pending),
):
    add = st.columns([4, 4, 1.1], vertical_alignment="bottom")
    new_gold = add[0].selectbox("Gold triple", list(gold_options), key="add_gold", index=None)
    new_answer = add[1].selectbox(
        "Answer triple", list(answer_options), key="add_answer", index=None
    )
    add[2].button(
        "Add pair",
        key="add_pair",
        on_click=_add_pair,
        disabled=new_gold is None or new_answer is None or not annotator,
        width="stretch",
    )
    for n, (g, a) in enumerate([*stored_adds, *pending]):
        is_stored = n < len(stored_adds)
        gold_t, answer_t = annotate.pair_key(g, a)
        row = st.columns([8, 1.1], vertical_alignment="center")
        row[0].text(
            f"+ {annotate.show(gold_t or ())}  <->  {annotate.show(answer_t or ())}"
            + ("   (saved)" if is_stored else "   (not saved yet)")
        )
        if row[1].button("Remove", key=f"annotate_remove_{case}_{n}", width="stretch"):
            if is_stored:
                data.withdraw_annotations(controls.path, [(run_id, item_id, annotator, g, a)])
            else:
                pending.remove((g, a))
            st.rerun()


def _save() -> None:
    current = annotate.changes(pairs, [state.get(k) for k in verdict_keys], pending)
    n = data.save_annotations(
        controls.path, [(run_id, item_id, annotator, g, a, v) for g, a, v in current.save]
    )
    taken_back = data.withdraw_annotations(
        controls.path, [(run_id, item_id, annotator, g, a) for g, a in current.withdraw]
    )
    state[pending_key] = []
    undecided = sum(state.get(k) not in annotate.DECISIONS for k in verdict_keys)
    state["annotate.saved_message"] = (n, taken_back, undecided)


save = st.columns([1.6, 6], vertical_alignment="center")
save[0].button(
    "Save my verdicts",
    type="primary",
    key="save",
    on_click=_save,
    disabled=not annotator,
    width="stretch",
)
message = state.pop("annotate.saved_message", None)
if message is not None:
    n, taken_back, undecided = message
    if n or taken_back:
        save[1].success(
            f"Saved {n} verdicts by {md(annotator)}"
            + (f", withdrew {taken_back}" if taken_back else "")
            + f"; {undecided} proposed pairs left undecided (not saved)."
        )
    else:
        save[1].info("Nothing to save: you have not decided any pair or added one.")
else:
    save[1].caption(
        "Enter your name to save."
        if not annotator
        else f"{len(pending_changes)} change(s) not saved yet."
        if len(pending_changes)
        else "Everything you decided is saved."
    )

st.subheader("The answer's graphs")
stored_tau = Signature.parse(signature).tau
case = data.explorer_case(controls.path, controls.stamp, signature, run_id, item_id, stored_tau)
switch, note = st.columns([1.4, 6.6], vertical_alignment="center")
note.caption(
    "**Red edges**: the gold and answer triples of TAU's proposed pairs above (TAU pairs "
    "triples by sentence cosine; the badges show the stored entity alignment at tau "
    f"{stored_tau:g})."
)
show_all = switch.toggle(
    "Whole KGs",
    key="annotate_whole_kgs",
    help=f"KGs of more than {MAX_NODES} nodes show their matched triples, TAU's pairs and their "
    "neighbours; switch on to draw every node.",
)
views.explorer_graphs(
    case,
    view.kg_statuses,
    show_all=show_all,
    state_key=f"annotate:{run_id}:{item_id}",
    marked=marked_by_lemmas(
        case.triples, {"gold": [p.gold for p in pairs], "answer": [p.answer for p in pairs]}
    ),
)
links = st.columns([2, 5])
with links[0]:
    navigation.case_link("explorer", "Open in the Sample explorer", run_id, item_id)
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
        delta_arrow="off",
        help="Share of (pair, two annotators) judgements that agree, over the pairs that two or "
        "more annotators decided.",
    )
    for col, (label, name) in zip(
        cols[1:],
        (("TAU precision", "precision"), ("TAU recall", "recall"), ("TAU F1", "f1")),
        strict=True,
    ):
        value = quality[name]
        col.metric(label, "n/a" if math.isnan(value) else f"{value:.3f}")
    agreement = pairwise_agreement(records)
    if agreement:
        st.dataframe([vars(p) for p in agreement], hide_index=True, width="stretch", key="pairwise")
    st.caption(
        f"From {int(quality['decided'])} decided verdicts by {everything['annotator'].nunique()} "
        f"annotators: {int(quality['confirm'])} confirmed, {int(quality['reject'])} rejected, "
        f"{int(quality['add'])} added. Pairs nobody decided count nowhere."
    )
