"""Run comparison: two runs that answered the same questions, question by question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from dashboard import (
    charts,
    compare,
    live_alpha,
    navigation,
    triple_diff,
    url_state,
    views,
    widgets,
    word_diff,
)
from dashboard.data import comparison, reads
from dashboard.escape import code, md
from dashboard.live_alpha import grid_index
from s3kg_core.errors import S3KGError
from s3kg_core.scoring.signature import Signature
from s3kg_core.scoring.tau import TRIPLE_THRESHOLD

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

widgets.page_setup("Run comparison")
url_state.adopt_alpha("compare")
controls = widgets.sidebar()
if controls.signature is None:
    st.info(f"Nothing is scored yet: {code(f's3kg score --db {controls.path}')}.")
    st.stop()
signature = controls.signature  # a str from here on (also inside the fragment)

# Only what the page shows is read: the pairs (one query per results version), the chosen
# pair's scores at alpha (blended and joined in DuckDB) and a page of the question picker.
pairs = comparison.comparable_pairs(controls.view)
runs = reads.load_runs(controls.view)
runs = runs[runs["run_id"].isin({a for a, _ in pairs})]
if not pairs:
    st.info(
        "No two scored runs answered the same questions. Collect a second run of a dataset "
        "(another model or temperature) and score it to compare them here."
    )
    st.stop()

names = {run_id: label for label, run_id in views.run_choices(runs).items()}
first = compare.default_pair(runs, pairs)
assert first is not None
# A link (?a=&b=&item=) opens that pair and question, once; then the widgets rule.
for param, key in url_state.adopt(
    "compare",
    {"a": url_state.parse_id, "b": url_state.parse_id, "item": url_state.parse_id},
).items():
    st.session_state[f"_compare_{param}_choice"] = key
with_partners = {str(a): names[a] for a in sorted({a for a, _ in pairs}) if a in names}
cols: Sequence[DeltaGenerator] = st.columns(2)  # reused for 5 and 4 columns below
with cols[0]:
    run_a = int(
        widgets.keyed_selectbox(
            "Run A (the baseline)", with_partners, key="compare_a", default=str(first[0])
        )
    )
with cols[1]:
    run_b = int(
        widgets.keyed_selectbox(
            "Run B (compared with A)",
            {str(b): names[b] for b in compare.partners(pairs, run_a) if b in names},
            key="compare_b",
            default=str(first[1]),
        )
    )

widgets.partial_note(controls.view, runs, (run_a, run_b))
deltas = comparison.pair_deltas(controls.view, run_a, run_b, controls.alpha)
# the figures follow the slider in the browser (dashboard/live_alpha.py): every stop at once
live_alpha.mount(
    compare.figures(
        comparison.pair_means_grid(controls.view, run_a, run_b), deltas, grid_index(controls.alpha)
    ),
    alpha=controls.alpha,
    key="compare.figures",
)
live_alpha.mount(
    live_alpha.note([None] * len(live_alpha.GRID), compare.PENDING),
    alpha=controls.alpha,
    key="compare.pending",
)
gated = len(deltas) <= compare.CHECK_LIVE_MAX or st.toggle(
    f"Run `s3kg check`'s gates on all {len(deltas):,} shared questions",
    key="compare_run_check",
    help="The paired test of each of CUS, GoldSim and CtxSim and the answers that became "
    "unscorable, as `s3kg check` runs it (its normal approximation from 1,000 questions; a "
    "fraction of a second at a few thousand questions); the result is kept for this pair and "
    "alpha.",
)
if gated:
    latest = reads.signatures(controls.view)[1]
    command = compare.check_command(
        controls.path, run_b, run_a, controls.alpha, None if signature == latest else signature
    )
    try:
        check = comparison.pair_check(controls.view, run_a, run_b, controls.alpha)
    except S3KGError as exc:
        st.error(f"{code(command)} refuses these runs: {md(exc)}")
    else:
        (st.success if check.passed else st.error)(
            compare.verdict(check),
            icon=":material/check_circle:" if check.passed else ":material/cancel:",
        )
        st.markdown(compare.gates_markdown(check))
        st.caption(
            f"The gates {code(command)} runs, from the same function (B the new run, A the "
            f"baseline; its exit status {check.exit_code}). Bootstrap: "
            f"{md(dict(check.facts).get('bootstrap', ''))}. PASS (inconclusive): the interval "
            "reaches past the bound; more questions would tell."
        )
widgets.file_download(
    st,
    "Download the report (HTML)",
    lambda: comparison.run_report(controls.view, controls.alpha, run_b, run_a),
    file_name=f"s3kg-report-run{run_b}-vs-run{run_a}.html",
    mime="text/html",
    key="compare_report",
    help="B against A as `s3kg report --run B --baseline A` writes it: one offline HTML file.",
)

listed_rows = compare.ends(deltas)  # thousands of shared questions at 100,000 answers
table = listed_rows.assign(
    explorer_a=[navigation.case_url("explorer", run_a, i) for i in listed_rows["item_id"]],
    explorer_b=[navigation.case_url("explorer", run_b, i) for i in listed_rows["item_id"]],
)
# The whole width (issue 43: beside the chart, ΔGoldSim, ΔCtxSim and the links ran off the
# right edge at 1280 px); every column's width is set so that they all fit there.
st.dataframe(
    table,
    hide_index=True,
    width="stretch",
    height="auto" if len(table) <= 10 else 390,
    column_order=[
        "ext_id", "question", "d_cus", "d_gold_sim", "d_ctx_sim", "explorer_a", "explorer_b",
        "cus_a", "cus_b",
    ],
    column_config={
        "ext_id": st.column_config.TextColumn("item", width=80),
        "question": st.column_config.TextColumn("question", width=210),
        "d_cus": st.column_config.NumberColumn("ΔCUS", format="%+.3f", width=66),
        "d_gold_sim": st.column_config.NumberColumn("ΔGoldSim", format="%+.3f", width=86),
        "d_ctx_sim": st.column_config.NumberColumn("ΔCtxSim", format="%+.3f", width=80),
        "explorer_a": st.column_config.LinkColumn("in A", display_text="open A", width=66),
        "explorer_b": st.column_config.LinkColumn("in B", display_text="open B", width=66),
        "cus_a": st.column_config.NumberColumn("CUS A", format="%.3f", width=64),
        "cus_b": st.column_config.NumberColumn("CUS B", format="%.3f", width=64),
    },
    key="compare_table",
)  # fmt: skip
left, right = st.columns([5, 2])
with left:
    whole = len(table) == len(deltas)
    st.caption(
        ("Every shared question" if whole else
         f"The {len(table) // 2:,} biggest regressions and {len(table) - len(table) // 2:,} "
         f"biggest improvements of {len(deltas):,} shared questions (all in the download and "
         "the picker below)")
        + f", biggest regression first (B minus A) at alpha {controls.alpha:g}; the links open "
        "the question in the Sample explorer."
    )  # fmt: skip
    widgets.file_download(
        st,
        "Every shared question (CSV)",
        lambda: widgets.csv_bytes(deltas),
        file_name=f"s3kg-run{run_b}-vs-run{run_a}-questions.csv",
        mime="text/csv",
        key="compare_csv",
        on_click="ignore",
    )
with right:
    st.plotly_chart(charts.comparison_figure(deltas), width="stretch", key="compare_chart")
    if len(deltas) > charts.COMPARISON_BARS:
        st.caption(
            f"{charts.COMPARISON_BARS:,} evenly spaced of the {len(deltas):,} questions draw "
            "the curve."
        )
counted = len(deltas) <= compare.LIVE_CHANGES_MAX or st.toggle(
    f"Count the gold triples B lost and gained over all {len(deltas):,} shared questions",
    key="compare_count_changes",
    help="TAU explains every answer of both runs (tens of seconds for thousands of answers); "
    "the result is kept for this pair of runs.",
)
if counted:
    changes = comparison.pair_gold_changes(controls.view, run_a, run_b)
    st.info(triple_diff.pair_summary(changes, len(deltas)), icon=":material/compare_arrows:")


@st.fragment
def one_question() -> None:
    """The question picker and the two answers: picking another reruns only this part."""
    st.subheader("Open a question in both runs")
    PAGE_SIZE = 50  # questions per page of the picker: a pair shares thousands at 100k answers
    pick, find, page_box = st.columns([7, 2, 1], vertical_alignment="bottom")
    search = find.text_input(
        "Search", key="compare_search", placeholder="id or words",
        help="Questions whose id or text holds every word (any case).",
    )  # fmt: skip
    remembered = st.session_state.get("_compare_item_choice")
    placed = (remembered, search, controls.alpha)
    # the question a link opened, or the one kept while alpha moves, opens on its own page
    kept = (
        int(remembered)
        if remembered is not None and st.session_state.get("_compare_item_paged") != placed
        else None
    )
    listed, matches, page = comparison.pair_questions(
        controls.view, run_a, run_b, controls.alpha,
        search, int(st.session_state.get("compare_page", 1)) - 1, PAGE_SIZE, kept,
    )  # fmt: skip
    st.session_state["_compare_item_paged"] = placed
    pages = max(1, -(-matches // PAGE_SIZE))
    st.session_state["compare_page"] = page + 1
    page_box.number_input("Page", 1, pages, key="compare_page", step=1)
    if listed.empty:
        st.info(f"No shared question matches {search!r}.")
        return
    questions = {
        str(r.item_id): f"ΔCUS {r.d_cus:+.3f} · {r.ext_id} · {r.question}"
        for r in listed.itertuples()
    }
    start = page * PAGE_SIZE + 1
    shown = f"{start:,}-{start + len(listed) - 1:,} of {matches:,}" if pages > 1 else f"{matches:,}"
    with pick:
        item_id = int(
            widgets.keyed_selectbox(
                f"Question ({shown}, biggest regression first)",
                questions,
                key="compare_item",
                help="The label's ΔCUS follows alpha; the chosen question stays.",
            )
        )
    url_state.write(
        "compare",
        {"a": str(run_a), "b": str(run_b), "item": str(item_id), "alpha": f"{controls.alpha:g}"},
    )
    row = deltas[deltas["item_id"] == item_id].iloc[0]
    st.text(str(row["question"]))
    cols = st.columns(4)
    with cols[0]:
        navigation.case_link("explorer", f"Explorer · A (CUS {row['cus_a']:.2f})", run_a, item_id)
    with cols[1]:
        navigation.case_link("explorer", f"Explorer · B (CUS {row['cus_b']:.2f})", run_b, item_id)
    with cols[2]:
        navigation.case_link("annotate", "Annotate · A", run_a, item_id)
    with cols[3]:
        navigation.case_link("annotate", "Annotate · B", run_b, item_id)

    answers = {run: reads.item_view(controls.view, run, item_id).answer for run in (run_a, run_b)}
    words = word_diff.word_diff(answers[run_a] or "", answers[run_b] or "")
    st.markdown(
        f"**The two answers**: {words.only_a} words only in A, {words.only_b} only in B, "
        f"{words.shared} in both"
    )
    st.html(word_diff.STYLE + word_diff.LEGEND_HTML)
    texts = st.columns(2)
    for col, side, run in ((texts[0], "A", run_a), (texts[1], "B", run_b)):
        with col:
            st.caption(f"{side}: {md(names[run])}")
            st.html(word_diff.answer_panels(words, side))

    diff = comparison.question_across(controls.view, run_a, run_b, item_id)
    st.markdown(
        f"**Triple by triple**: {len(diff.both)} answer triples in both, {len(diff.only_a)} only "
        f"in A, {len(diff.only_b)} only in B; {sum(f.changed for f in diff.gold)} of "
        f"{len(diff.gold)} gold triples changed TAU category."
    )
    # One above the other, each the whole width (issue 43: side by side, the gold table's
    # "in B" ran off the right edge at 1280 px).
    st.dataframe(
        triple_diff.answer_table(diff),
        hide_index=True,
        width="stretch",
        column_config={
            "in": st.column_config.TextColumn("in", width=70),
            "head": st.column_config.TextColumn("head", width=230),
            "relation": st.column_config.TextColumn("relation", width=180),
            "tail": st.column_config.TextColumn("tail", width=230),
        },
        key="compare_answer_triples",
    )
    st.dataframe(
        triple_diff.gold_table(diff),
        hide_index=True,
        width="stretch",
        column_order=["changed", "gold triple", "in A", "in B"],
        column_config={
            "changed": st.column_config.CheckboxColumn(
                "Δ", width=40, help="TAU's category differs between A and B."
            ),
            "gold triple": st.column_config.TextColumn(width=400),
            "in A": st.column_config.TextColumn(width=140),
            "in B": st.column_config.TextColumn(width=140),
        },
        key="compare_gold_triples",
    )
    st.caption(
        "Answer triples as the scorer keys them (normalised); each gold triple's category is "
        f"TAU's (alignment cosine {TRIPLE_THRESHOLD:g}, a threshold of its own, apart from the "
        "explorer's tau) "
        f"in each run. A: {md(names[run_a])}  \nB: {md(names[run_b])}  \nSignature: "
        f"{code(Signature.blended(signature, controls.alpha))}"
    )


one_question()
# after drawing: this pair's numbers at the slider's other alphas, so a step finds them ready
comparison.warm_pair(
    controls.view, run_a, run_b, controls.alpha, gates=len(deltas) <= compare.CHECK_LIVE_MAX
)
