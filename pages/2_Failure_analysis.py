"""Failure analysis: TAU on the lowest-scoring answers, triple by triple."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import charts, live_alpha, live_tau, navigation, views, widgets
from dashboard.data import explain, reads, tau_cases
from dashboard.escape import code, md
from dashboard.explorer import marked_by_lemmas
from dashboard.live_alpha import GRID
from s3kg_core.scoring.signature import Signature

ANSWER_SHOWN = 400  # characters of the case's answer beside its counts; the rest in an expander

CATEGORIES = ["relation_mismatch", "entity_mismatch", "roles_swapped", "extra", "missing"]
MISMATCHES = ("relation_mismatch", "entity_mismatch", "roles_swapped")
CASE_LIMIT = 1000  # cases listed in the picker (the lowest first); the chart counts them all
PROGRESS_EVERY = 1.0  # seconds between looks at a background explanation's progress

widgets.page_setup("Failure analysis (TAU)")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: {code(f's3kg score --db {controls.path}')}.")
    st.stop()

cols = st.columns(2)
target = cols[0].radio(
    "Rank answers by",
    ["cus", "gold_sim", "ctx_sim"],
    format_func=charts.SCORE_NAMES.get,
    horizontal=True,
    key="tau_target",
    help="CtxSim explains the answer against the context KG, the others against the gold KG.",
)
percent = cols[1].slider("Lowest share of each run (%)", 1, 50, 5, key="tau_percent")
view_of = (controls.view, target, percent / 100, controls.alpha)
found = tau_cases.tau_cases(*view_of)
cases = found.frame


@st.fragment(run_every=PROGRESS_EVERY)
def progress() -> None:
    """The background explanation's progress; the whole page again once it is done."""
    pending = tau_cases.tau_pending(*view_of)
    if pending == 0:
        st.rerun()
    done = found.picked - pending
    st.progress(
        done / found.picked,
        text=f"Explaining the lowest {percent} % of each run: {done:,} of {found.picked:,} "
        "answers done. "
        + (
            f"Below: the {found.picked - found.pending:,} explained when the page was drawn; "
            "it fills in when all are."
            if found.picked > found.pending
            else "The cases show when all are."
        ),
    )


if found.pending:
    progress()
if cases.empty:
    if not found.pending:
        st.info("No answers in range.")
    st.stop()
cases = (
    cases.merge(reads.item_questions(controls.view), on="item_id", how="left")
    .sort_values(["score", "run_id", "item_id"], kind="stable")
    .reset_index(drop=True)
)
name = charts.SCORE_NAMES[target]
first = json.loads(cases["result"].iloc[0])
tau = float(Signature.parse(controls.signature).tau)
st.caption(
    (
        f"{len(cases):,} of {found.picked:,} answers explained so far"
        if found.pending
        else f"{len(cases):,} answers"
    )
    + f": the lowest {percent} % of each run by {name} at alpha "
    f"{controls.alpha:g}. TAU pairs whole triples when their sentence embeddings reach cosine "
    f"{first['triple_threshold']:g} (its triple threshold; parts match at "
    f"{first['component_threshold']:g}); the Sample explorer's tau {tau:g} is S3KG's threshold "
    "for aligning single entity and relation labels, another step (docs: The scores, S3KG step 4)."
)

widgets.partial_note(
    controls.view, reads.load_runs(controls.view), cases["run_id"].astype(int).unique()
)
per_run = cases.groupby(["dataset", "model", "temperature", "extractor"], as_index=False)[
    CATEGORIES
].sum()
# half the width: at [2, 3] the run names and the legend left the bars ~70 px at 1280 px
left, right = st.columns(2)
with left:
    st.plotly_chart(charts.tau_figure(per_run, CATEGORIES), width="stretch", key="tau_bars")
    # issue 60: the counts per run at every stop of the slider, shown by the browser as it
    # moves (the stops TAU has explained; a background job explains the others)
    live_alpha.mount(
        live_alpha.note(
            [f"Per run at alpha {stop:g}: the lowest {percent} % by {name}" for stop in GRID],
            live_tau.PENDING,
            caption=True,
        ),
        alpha=controls.alpha,
        key="tau.counts_line",
    )
    live_alpha.mount(
        live_tau.table(tau_cases.grid_counts(controls.view, target, percent / 100, GRID),
                       CATEGORIES),
        alpha=controls.alpha,
        key="tau.counts",
    )  # fmt: skip

with right:
    listed = cases.head(CASE_LIMIT)
    case_keys = [f"{r.run_id}:{r.item_id}" for r in listed.itertuples()]
    labels = {
        k: f"{name} {r.score:.3f} · {r.model} T={r.temperature:g} · {r.ext_id} · {r.question}"
        for k, r in zip(case_keys, listed.itertuples(), strict=True)
    }
    chosen = widgets.keyed_selectbox(
        f"Case (lowest {name} first"
        + (f"; the {CASE_LIMIT:,} lowest of {len(cases):,})" if len(cases) > CASE_LIMIT else ")"),
        labels,
        key="tau_case",
        help="Score · run · item · question. The score follows alpha; the chosen case stays. "
        "Type to search. The Sample explorer and Search reach every answer.",
    )
    case = cases.iloc[case_keys.index(chosen)]
    run_id, item_id = int(case["run_id"]), int(case["item_id"])
    result = json.loads(case["result"])
    reference = "context" if target == "ctx_sim" else "gold"
    view = reads.item_view(controls.view, run_id, item_id)
    counts = [
        ("aligned", len(result["aligned"]), f"{reference} and answer triples TAU paired"),
        ("relation", len(result["relation_mismatch"]), "relation mismatches"),
        ("entity", len(result["entity_mismatch"]), "entity mismatches"),
        (
            "roles swapped",
            len(result["roles_swapped"]),
            f"{reference} triples stated with head and tail exchanged",
        ),
        ("extra", len(result["extra"]), "answer triples with no counterpart"),
        ("missing", len(result["missing"]), f"{reference} triples the answer lacks"),
    ]
    # two rows of three: in one row of six every label was cut ("swap…", "relati…" at 1440 px;
    # "ali…" at 1280); "relation mismatch" is cut at 1280 even in a row of three
    for row in (counts[:3], counts[3:]):
        for col, (label, n, about) in zip(st.columns(3), row, strict=True):
            col.metric(label, n, help=about)
    links = st.columns([5, 4])  # both labels whole at 1280 px (half the page is the chart)
    with links[0]:
        navigation.case_link(
            "explorer", "Open in the Sample explorer", run_id, item_id, icon=":material/hub:"
        )
    with links[1]:
        navigation.case_link(
            "annotate", "Annotate this answer", run_id, item_id, icon=":material/edit_note:"
        )
    if pd.notna(case["question"]):
        st.markdown(f"**Question** {md(case['question'])}")
    answer = view.answer.strip()
    if len(answer) <= ANSWER_SHOWN:
        st.markdown(f"**Answer** {md(answer)}" if answer else "**Answer** :gray[(empty)]")
    else:
        st.markdown(f"**Answer** {md(answer[:ANSWER_SHOWN].rstrip())}…")
        with st.expander(f"The whole answer ({len(answer):,} characters)"):
            st.markdown(md(answer))
    st.caption(
        f"{md(case['dataset'])} · {md(case['model'])} · T={case['temperature']:g} · "
        f"{md(case['extractor'])} · run {run_id} · item {item_id}"
    )


def _triple(parts: list[str]) -> str:
    return md(" | ".join(parts))


def _table(rows: list[dict[str, object]], empty: str) -> None:
    """Triples in full, wrapped (``st.table`` renders Markdown: every cell is escaped)."""
    if rows:
        st.table(pd.DataFrame(rows))
    else:
        st.caption(empty)


st.subheader("Triples of this case")
left, right = st.columns(2)
with left:
    st.markdown(
        f"**Aligned pairs** ({reference} ↔ answer, sentence cosine; *via* names the rule that "
        "read a passive or inverse wording turned round)"
    )
    _table(
        [
            {reference: _triple(a["gold"]), "answer": _triple(a["answer"]),
             "cosine": f"{a['similarity']:.3f}",
             "via": md(" · ".join(filter(None, (a["via"], a.get("rule")))))}
            for a in result["aligned"]
        ],
        "none",
    )  # fmt: skip
    st.markdown(
        "**Mismatches** (head and tail match but the relation differs, or vice versa; roles "
        "swapped: head and tail exchanged)"
    )
    _table(
        [
            {
                "kind": kind.replace("_", " "),
                reference: _triple(m["gold"]),
                "answer": _triple(m["answer"]),
                "differs in": md(m["parts"]),
            }
            for kind in MISMATCHES
            for m in result[kind]
        ],
        "none",
    )
with right:
    st.markdown("**Extra answer triples** (no counterpart: possible hallucinations)")
    _table([{"triple": _triple(t)} for t in result["extra"]], "none")
    st.markdown(f"**Missing {reference} triples** (not covered by the answer)")
    _table([{"triple": _triple(t)} for t in result["missing"]], "none")

residual = {
    "answer": [*result["extra"]] + [m["answer"] for k in MISMATCHES for m in result[k]],
    reference: [*result["missing"]] + [m["gold"] for k in MISMATCHES for m in result[k]],
}
stored_tau = Signature.parse(controls.signature).tau
case_kgs = explain.explorer_case(controls.view, run_id, item_id, stored_tau)
st.caption(
    f"**Red edges**: the residual triples above (mismatched, roles swapped, extra, missing "
    f"{reference}). The "
    f"badges show S3KG's entity alignment at tau {stored_tau:g}."
)
views.explorer_graphs(
    case_kgs,
    view.kg_statuses,
    show_all=False,
    state_key=f"tau:{run_id}:{item_id}",
    marked=marked_by_lemmas(case_kgs.triples, residual),
)
# after drawing: the answers the next share steps add are explained in the background
tau_cases.prefetch_tau(
    controls.view, target, controls.alpha, tau_cases.prefetch_share(percent / 100)
)
tau_cases.prefetch_grid(controls.view, target, percent / 100, GRID)  # the live counts' stops
