"""Run details: one run's name, model, endpoint and settings, what it cost, how its stages went."""

from __future__ import annotations

import streamlit as st

from dashboard import live_alpha, live_board, navigation, run_page, url_state, views, widgets
from dashboard.data import reads
from dashboard.escape import code, md
from dashboard.live_alpha import GRID, grid_index
from s3kg_core.stages.scored import reblend

widgets.page_setup("Run details")
url_state.adopt_alpha("run")
controls = widgets.sidebar()
runs = reads.load_runs(controls.view)
if runs.empty:
    st.info(f"No runs yet: import or collect one ({code('s3kg import --help')}).")
    st.stop()

labels = {str(run_id): label for label, run_id in views.run_choices(runs).items()}
found = url_state.adopt("run", {"run": url_state.parse_id})
if "run" in found:
    if found["run"] in labels:
        st.session_state["_run.run_choice"] = found["run"]
    else:
        st.warning(f"The link names run {md(found['run'])}, which this database does not have.")
pick, rename = st.columns([5, 1], vertical_alignment="bottom")
with pick:
    run_id = int(widgets.keyed_selectbox("Run", labels, key="run.run"))
url_state.write("run", {"run": str(run_id), "alpha": f"{controls.alpha:g}"})
with rename.popover("Rename", icon=":material/edit:", width="stretch"):
    current = runs.loc[runs["run_id"] == run_id, "model"]
    views.rename_run_form(controls.path, run_id, str(current.iloc[0]) if len(current) else "")
if renamed := st.session_state.pop("run.renamed", None):
    st.toast(f"Run {run_id} is now called {md(renamed)}.", icon=":material/edit:")

summary = reads.run_summary(controls.view, run_id)
if summary is None:  # removed since the list was read
    st.error(f"Run {run_id} is not in the database any more.")
    st.stop()
info = summary.info

board = None
worst = None
if controls.signature is not None:
    ranked = reads.ranked(controls.view, controls.alpha, "cus")
    mine = ranked[ranked["run_id"] == run_id]
    board = None if mine.empty else mine.iloc[0]
    if board is not None:
        frame = reads.run_components(controls.view, run_id)
        blended = reblend(frame, controls.alpha)
        worst = int(blended.sort_values(["cus", "item_id"]).iloc[0]["item_id"])

scored = int(board["n"]) if board is not None else 0
answers = (
    f"{summary.usage['answers']:,}",
    f"{scored:,} of them scored under the sidebar's signature.",
)
usage = run_page.usage_metrics(summary.usage)
if board is not None:  # the figures follow the slider in the browser (dashboard/live_alpha.py)
    frames = live_board.stops(ranked, reads.means_grid(controls.view, GRID), controls.alpha, "cus")
    against = board["verdict"]
    live_alpha.mount(
        run_page.figures(
            run_id, frames, grid_index(controls.alpha), answers=answers, usage=usage[0],
            verdict=against.text() if against is not None else None,
        ),
        alpha=controls.alpha,
        key="run.figures",
    )  # fmt: skip
else:
    cols = st.columns(4)
    cols[0].metric("Answers", answers[0], help=answers[1])
    cols[1].metric("Mean CUS", "—", help="Not scored under the sidebar's signature.")
    cols[2].metric("Rank in dataset", "—")
    cols[3].metric(usage[0][0], usage[0][1], help=usage[0][2])
leader = None  # the dataset's #1, when this run is not it
if board is not None and board["verdict"] is not None:
    leader = int(ranked.loc[ranked["dataset"] == board["dataset"], "run_id"].iloc[0])
    st.caption(
        f"Mean CUS against #1 of {md(board['dataset'])}: {md(board['verdict'].text())}, "
        "as the Overview says."
    )

left, right = st.columns([3, 2])
with left:
    st.subheader("Who and how")
    st.dataframe(
        run_page.identity(info, controls.signature, controls.alpha),
        hide_index=True,
        width="stretch",
        column_config={
            "field": st.column_config.TextColumn("setting", width="medium"),
            "value": st.column_config.TextColumn("value", width="large"),
        },
        key="run.identity",
    )
    st.dataframe(
        run_page.usage_table(summary.usage),
        hide_index=True,
        width="stretch",
        key="run.usage",
    )
with right:
    st.subheader("How its stages went")
    st.dataframe(
        run_page.status_table(summary.answer_statuses, "answer status"),
        hide_index=True,
        width="stretch",
        key="run.answer_statuses",
    )
    if summary.finish_reasons:
        st.dataframe(
            run_page.status_table(summary.finish_reasons, "generation stopped"),
            hide_index=True,
            width="stretch",
            key="run.finish_reasons",
        )
    st.dataframe(
        summary.kg_statuses,
        hide_index=True,
        width="stretch",
        column_config={"source": "KG of", "status": "KG status", "kgs": "KGs"},
        key="run.kg_statuses",
    )
    if not summary.scored.empty:
        st.dataframe(
            run_page.scored_table(summary.scored, controls.alpha),
            hide_index=True,
            width="stretch",
            column_config={
                "signature": st.column_config.TextColumn("score signature", width="medium"),
                "scored": "answers scored",
                "not_ok": st.column_config.NumberColumn(
                    "empty KG", help="Scored 0 for an empty or unparseable KG."
                ),
            },
            key="run.scored",
        )

links = st.columns(3)
if worst is not None:
    with links[0]:
        navigation.case_link(
            "explorer", "Its lowest-CUS answer in the Sample explorer", run_id, worst
        )
with links[1]:
    if leader is not None and board is not None and board["verdict"].paired:
        navigation.params_link(
            "compare",
            "Compare it with #1, question by question",
            {"a": str(leader), "b": str(run_id), "alpha": f"{controls.alpha:g}"},
        )
    else:
        navigation.params_link(
            "compare",
            "Compare it with another run",
            {"a": str(run_id), "alpha": f"{controls.alpha:g}"},
        )
with links[2]:
    navigation.params_link(
        "overview",
        "Its dataset's leaderboard",
        {"dataset": str(info["dataset"]), "alpha": f"{controls.alpha:g}"},
        icon=":material/leaderboard:",
    )
