"""Annotate: judge what TAU said of an answer, pair by pair, by key; adjudicate; agreement.

Every decision is saved the moment it is made (the verdict log), with undo; nothing is saved
that the annotator did not decide. A case opens from the URL (``?run=&item=``); a name in the
URL (``?annotator=``) is offered and must be confirmed. With an annotation task the page shows
the annotator's queue, dealt out across TAU's categories, and opens on their next undone answer;
under the pair, each category's precision so far with its interval.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import annotate, annotate_data, annotate_views, navigation, views, widgets
from dashboard.data import database, explain, reads, tau_cases
from dashboard.escape import code, md
from dashboard.explorer import MAX_NODES, marked_by_lemmas
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.scored import reblend

widgets.page_setup("Annotate alignments")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: {code(f's3kg score --db {controls.path}')}.")
    st.stop()
state = st.session_state
signature: str = controls.signature
path = controls.path

VIEWS = {"annotate": "Annotate", "adjudicate": "Adjudicate", "agreement": "Agreement"}
if "annotate_view" not in state:
    state["annotate_view"] = str(st.query_params.get("view", "annotate"))
    if state["annotate_view"] not in VIEWS:
        state["annotate_view"] = "annotate"
top = st.columns([1.6, 2.6, 3.8], vertical_alignment="bottom")
chosen_view = top[2].segmented_control(
    "View",
    list(VIEWS),
    format_func=VIEWS.__getitem__,
    key="annotate_view",
    required=True,
)
view_name = str(chosen_view or "annotate")
url_run, url_item = annotate.case_from_query(st.query_params, state)
annotator = annotate_views.name_bar(top[0], st.query_params)

tasks = annotate_data.tasks(path, database.db_stamp(path))
task_labels = {"": "No task: any answer"} | {
    str(t["task_id"]): f"task {t['task_id']}"
    + (f" · {t['name']}" if t["name"] else "")
    + f" · {', '.join(t['annotators'])}"
    for t in tasks
}
mine = [str(t["task_id"]) for t in tasks if annotator and annotator in t["annotators"]]
with top[1]:
    task_choice = widgets.keyed_selectbox(
        "Task",
        task_labels,
        key="annotate_task",
        default=mine[-1] if mine else (str(tasks[-1]["task_id"]) if tasks else ""),
        help="An annotation task (`s3kg annotate assign`): your queue, and the scope of "
        "adjudication and agreement.",
    )
task_id = int(task_choice) if task_choice else None
st.query_params["view"] = view_name
if annotator:
    st.query_params["annotator"] = annotator

if view_name == "adjudicate":
    annotate_views.adjudication(path, annotator, task_id)
    st.stop()
if view_name == "agreement":
    annotate_views.agreement(path, task_id)
    annotate_views.download(path)
    st.stop()

# --- Annotate: which answer -------------------------------------------------------------------
texts = reads.item_questions(controls.view).set_index("item_id")
questions, ext_ids = texts["question"], texts["ext_id"]
queue_task = task_id if annotator and task_choice in mine else None
pick = st.columns([5.4, 2.6], vertical_alignment="bottom")
if queue_task is not None:
    stamp, the_task = database.db_stamp(path), int(queue_task)
    queue = annotate_data.queue(path, stamp, the_task, annotator)
    progress = annotate_data.queue_progress(path, stamp, the_task, annotator)
    labels = {
        f"{q.run_id}:{q.item_id}": annotate.queue_label(
            q.position,
            q.run_id,
            q.item_id,
            q.decided,
            q.units,
            str(questions.get(q.item_id, "")),
            str(ext_ids.get(q.item_id, "")),
            q.categories,
        )
        for q in queue
    }
    if url_run is not None and f"{url_run}:{url_item}" in labels:
        state["_annotate_queue_item_choice"] = f"{url_run}:{url_item}"
    start = progress.next_item or (queue[0].run_id, queue[0].item_id)
    with pick[0]:
        chosen = widgets.keyed_selectbox(
            f"Your queue in task {queue_task} (dealt out across TAU's categories; opens on "
            "your next undone answer)",
            labels,
            key="annotate_queue_item",
            default=f"{start[0]}:{start[1]}",
        )
    pick[1].markdown(f"**{md(progress.line())}**")
    run_id, item_id = (int(x) for x in chosen.split(":"))

    def next_item() -> tuple[int, int] | None:
        after = annotate_data.queue_progress(
            path, database.db_stamp(path), the_task, annotator, after=(run_id, item_id)
        )
        return after.next_item

    def go_to(run: int, item: int) -> None:
        state["_annotate_queue_item_choice"] = f"{run}:{item}"

else:
    if task_id is not None and annotator:
        st.caption(f"{md(annotator)} has no queue in task {task_id}: any answer can be judged.")
    runs = reads.load_runs(controls.view)
    runs = runs[runs["run_id"].isin(reads.scored_runs(controls.view))]
    if runs.empty:
        st.info("No run has scores under the chosen signature.")
        st.stop()
    run_labels = {str(v): k for k, v in views.run_choices(runs).items()}
    if url_run is not None and str(url_run) in run_labels:
        state["_annotate_run_choice"] = str(url_run)
        state["_annotate_item_choice"] = str(url_item)
    with pick[1]:
        run_id = int(widgets.keyed_selectbox("Run", run_labels, key="annotate_run"))
    answers = reblend(reads.run_components(controls.view, run_id), controls.alpha)
    answers = answers.sort_values(["cus", "item_id"], kind="stable")
    order = [int(i) for i in answers["item_id"]]
    found = tau_cases.run_unit_counts(controls.view, run_id, order)
    counts = {i: found.counts.get(i, 0 if i not in found.with_kgs else None) for i in order}
    item_labels = {
        str(i): annotate.item_label(
            i, counts[i], float(cus), str(questions.get(i, "")), str(ext_ids.get(i, ""))
        )
        for i, cus in zip(order, answers["cus"], strict=True)
    }
    if found.pending:
        st.caption(
            f"TAU explains this run's answers from the lowest CUS up: {found.pending:,} of "
            f"{len(found.with_kgs):,} are still being explained in the background (their "
            "labels say so until the page is drawn again)."
        )
    first = annotate.first_with_units(order, {i: c or 0 for i, c in counts.items()})
    with pick[0]:
        item_id = int(
            widgets.keyed_selectbox(
                "Answer (lowest CUS first; opens on the first with something to judge)",
                item_labels,
                key="annotate_item",
                default=str(first if first is not None else order[0]),
                help="Item · question id (type it to find the answer) · how many things TAU said "
                "of it · CUS at the sidebar's alpha · question.",
            )
        )

    def next_item() -> tuple[int, int] | None:
        # an answer not explained yet may have something to judge: it is explained on opening
        nxt = annotate.next_in_order(
            order, item_id, {i: 1 if c is None else c for i, c in counts.items()}
        )
        return None if nxt is None or nxt == item_id else (run_id, int(nxt))

    def go_to(run: int, item: int) -> None:
        state["_annotate_item_choice"] = str(item)


st.query_params.update({"run": str(run_id), "item": str(item_id)})
annotate.note_case(state, run_id, item_id)

view = reads.item_view(controls.view, run_id, item_id)
gold_kg, answer_kg = view.kgs.get("gold"), view.kgs.get("answer")
if queue_task is not None:
    units = annotate_data.item_units(path, queue_task, run_id, item_id)
else:
    units = annotate.units_from_tau(
        run_id,
        item_id,
        tau_cases.tau_item(controls.view, run_id, item_id) if item_id in found.with_kgs else {},
        gold_kg.triples if gold_kg else (),
        answer_kg.triples if answer_kg else (),
    )
st.markdown(f"**Question** · {md(view.ext_id)} · {md(view.question)}")
annotate_views.forget_verdicts()  # a full run reads the decisions again
held = tuple(c for q in queue for c in q.categories) if queue_task is not None else ()
annotate_views.decision_panel(
    annotate_views.Case(
        path, annotator, run_id, item_id, tuple(units), task_id, next_item, go_to, held
    )
)
annotate_views.added_pairs(path, annotator, run_id, item_id, gold_kg, answer_kg, task_id)

st.subheader("The answer's graphs")
stored_tau = Signature.parse(signature).tau
case = explain.explorer_case(controls.view, run_id, item_id, stored_tau)
switch, note = st.columns([1.4, 6.6], vertical_alignment="center")
note.caption(
    "**Red edges**: the gold and answer triples of TAU's pairs above (TAU pairs triples by "
    f"sentence cosine; the badges show the stored entity alignment at tau {stored_tau:g})."
)
show_all = switch.toggle(
    "Whole KGs",
    key="annotate_whole_kgs",
    help=f"KGs of more than {MAX_NODES} nodes show their matched triples, TAU's pairs and their "
    "neighbours; switch on to draw every node.",
)
paired = [u for u in units if u.gold is not None and u.answer is not None]
marks: dict[str, Any] = {"gold": [u.gold for u in paired], "answer": [u.answer for u in paired]}
views.explorer_graphs(
    case,
    view.kg_statuses,
    show_all=show_all,
    state_key=f"annotate:{run_id}:{item_id}",
    marked=marked_by_lemmas(case.triples, marks),
)
links = st.columns([2, 5])
with links[0]:
    navigation.case_link("explorer", "Open in the Sample explorer", run_id, item_id)
with st.expander("Question, gold answer, model answer and context"):
    views.texts(view)
