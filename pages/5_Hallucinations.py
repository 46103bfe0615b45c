"""Hallucinations: GraphEval's flagged triples of an answer, in its text, its KG and a table."""

from __future__ import annotations

import streamlit as st

from dashboard import hallucinations, views, widgets
from dashboard.data import database, evaluations, reads
from dashboard.escape import code, md
from dashboard.graph_layout import LayoutCancelled
from dashboard.graphs import linked_graphs_html
from s3kg_core.grapheval.detect import THRESHOLD
from s3kg_core.scoring.s3kg import S3KGConfig
from s3kg_core.scoring.signature import Signature

widgets.page_setup("Hallucinations")
widgets.finish_pending(database.db_path())  # a fresh demo's GraphEval step runs on the first visit
controls = widgets.sidebar(alpha=False)
overview = evaluations.grapheval_overview(controls.view)
if overview.empty:
    st.info(
        "No GraphEval results in this database yet. Check every answer of its runs against its "
        f"context with {code(f's3kg grapheval detect --db {controls.path} --checker support')} "
        "(offline; "
        "`--checker nli --nli-model DIR` or `--checker llm` with an endpoint also work)."
    )
    st.stop()

st.markdown(
    "GraphEval (Sansford et al., 2024) checks each triple of an answer's knowledge graph against "
    "the question's context. A triple is **flagged** when the checker's probability that the "
    "context does not support it exceeds 0.5; an answer with a flagged triple is "
    "**inconsistent**."
)
runs = reads.load_runs(controls.view)
runs = runs[runs["run_id"].isin(set(overview["run_id"]))]
run_options = views.run_choices(runs)
run_id = run_options[st.selectbox("Run", list(run_options), key="halluc_run")]

setups = overview[overview["run_id"] == run_id]
setup_options = {
    f"{r.checker} checker · {r.extractor} KGs": (str(r.checker), str(r.extractor))
    for r in setups.itertuples()
}
if len(setup_options) > 1:
    label = st.selectbox("Checker and extractor", list(setup_options), key="halluc_setup")
else:
    label = next(iter(setup_options))
checker, extractor = setup_options[label]
setup = setups[(setups["checker"] == checker) & (setups["extractor"] == extractor)].iloc[0]
st.caption(
    f"Checker {code(checker)} on {code(extractor)} answer KGs · signature "
    f"{code(setup['signature'])}"
)
offer = evaluations.trained_checker_offer()
if offer is not None and "trained" not in set(setups["checker"]):
    ask = st.columns([2.6, 5.4], vertical_alignment="center")
    ask[1].caption(
        f"Made by `s3kg grapheval train-checker`, in the cache folder: {md(offer)}. Its figures "
        "on the test articles are in bench/README.md."
    )
    if ask[0].button(
        "Check with the trained checker", key="halluc_trained", icon=":material/fact_check:"
    ):
        with st.status("Checking every answer with the trained checker", expanded=True) as box:
            bar = st.progress(0.0)

            def progress(stage: str, done: int, total: int) -> None:
                bar.progress(done / total if total else 1.0, text=f"{md(stage)}: {done} of {total}")

            checked = evaluations.check_with_trained(controls.view, int(run_id), progress=progress)
            box.update(label=f"Checked {checked} answers", state="complete", expanded=False)
        st.session_state["halluc_setup"] = f"trained checker · {extractor} KGs"
        st.rerun()

checks = evaluations.grapheval_results(controls.view, int(run_id), checker, extractor)
counts = hallucinations.check_counts(checks)
cols = st.columns(4)
cols[0].metric("Answers checked", counts["answers"])
cols[1].metric("Inconsistent", counts["inconsistent"])
cols[2].metric("Flagged triples", f"{counts['flagged_triples']} of {counts['triples']}")
cols[3].metric("Corrected", counts["corrected"])
if counts["unjudged"]:
    st.caption(f"{counts['unjudged']} answers have no verdict (the checker judged none of them).")

table = hallucinations.answer_table(checks)
with st.expander("Every answer of this run", expanded=False):
    st.dataframe(table, hide_index=True, width="stretch")

only_flagged = st.checkbox("Inconsistent answers only", key="halluc_only_flagged")
shown = table[table["verdict"] == "inconsistent"] if only_flagged else table
if shown.empty:
    st.info("No inconsistent answer in this run.")
    st.stop()
shown = shown.sort_values(["flagged", "item_id"], ascending=[False, True])
item_options = views.item_choices(shown)
item_id = item_options[
    st.selectbox("Answer (most flagged triples first)", list(item_options), key="halluc_item")
]
check = next(c for c in checks if c.item_id == item_id)
detection = check.detection

st.subheader(f"Item {item_id}")
verdict = hallucinations.verdict_text(check, md)
if detection.inconsistent is None:
    st.warning(verdict)
elif detection.inconsistent:
    st.error(verdict)
else:
    st.success(verdict)
if check.raw_probability is not None:
    raw_verdict = "unsupported" if check.raw_probability > 0.5 else "supported"
    st.caption(
        f"Raw mode (the whole answer checked against the context at once): P(unsupported) "
        f"{check.raw_probability:.3f}, {raw_verdict}."
    )

flagged = hallucinations.flagged_pairs(detection)
left, right = st.columns(2)
with left:
    st.markdown("**Answer** (flagged triples' words highlighted; hover for the triple)")
    st.html(hallucinations.highlight_html(check.answer, flagged))
with right:
    if check.corrected_answer is not None:
        correction = check.correction or {}
        st.markdown(f"**Corrected answer** ({md(correction.get('method', 'correction'))})")
        st.html(hallucinations.highlight_html(check.corrected_answer, []))
        rouge = correction.get("rouge") or {}
        believed = correction.get("believed_corrected")
        notes = [f"{md(k)} {float(v):.3f}" for k, v in sorted(rouge.items())]
        if believed is not None:
            notes.append("believed corrected" if believed else "still flagged after correction")
        if correction.get("error"):
            notes.append(f"error: {md(correction['error'])}")
        if notes:
            st.caption(" · ".join(notes))
    else:
        st.markdown("**Corrected answer**")
        st.caption(
            "Not corrected yet. GraphCorrect fixes each flagged triple with an LLM and edits the "
            f"answer: {code(hallucinations.correct_command(controls.path, int(run_id), checker))}."
        )
with st.expander("Context", expanded=False):
    st.text(check.context or "(empty)")

# the verdicts first, the picture after: the reasons are within reach without scrolling past it
st.markdown("**Every triple**")
st.table(hallucinations.triple_table_shown(detection))  # wrapped: nothing cut at 1280 px

# the answer's entities keyed as the chosen signature's scorer keys them (default config: none)
keys = None
if controls.signature is not None:
    keys = S3KGConfig(**Signature.parse(controls.signature).config_kwargs())
try:
    doc = linked_graphs_html(
        [hallucinations.answer_panel(detection, keys)],
        [],
        tau=THRESHOLD,
        hint=f"Red edges: flagged triples (P(unsupported) > {THRESHOLD:g}); red nodes: their "
        "entities; grey: everything else. Hover a node to light up its triples.",
        should_stop=views.session_gone(),
    )
except LayoutCancelled:
    st.stop()  # the browser session is gone: nobody to draw for
st.iframe(doc.html, height=doc.height, alt="The answer KG, flagged triples in red")

fixes = hallucinations.correction_fixes(check.correction)
if not fixes.empty:
    st.markdown("**Triple fixes of the correction**")
    st.dataframe(fixes, hide_index=True, width="stretch")
