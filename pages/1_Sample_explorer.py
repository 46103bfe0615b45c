"""Sample explorer: one answer's three KGs, linked, with its scores recomputed at any tau.

The case is a URL (``?run=<run_id>&item=<item_id>&threshold=<t>``, ``threshold`` S3KG's tau;
an old link's ``tau=<t>`` is read too): opening one shows exactly that case, and the page keeps
the URL in step with run, question and tau. Its widgets keep their
values for the whole session (keys ``explorer.<name>``), so leaving the page and coming back
shows the same case.
"""

from __future__ import annotations

import hashlib

import pandas as pd
import streamlit as st

from dashboard import explorer, views, widgets
from dashboard.data import explain, reads, search
from dashboard.escape import code
from dashboard.live_alpha import GRID
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.scored import reblend

RUN, ITEM, THRESHOLD = "explorer.run", "explorer.item", "explorer.tau"
RANGE, ALL, LINK = "explorer.cus_range", "explorer.show_all", "explorer._link"
PICKER, SEARCH, PAGE = "explorer.item_picker", "explorer.search", "explorer.page"
PAGE_SIZE = 50  # questions per page of the picker (searched and paged in DuckDB)


def picker_key(labels: dict[int, str]) -> str:
    """The question picker's widget key: new whenever its labels change (alpha moves the CUS
    in them), because Streamlit keeps showing a keyed selectbox's old label otherwise. The
    chosen question itself lives in ``explorer.item``."""
    digest = hashlib.sha1("\n".join(labels.values()).encode()).hexdigest()[:10]
    return f"{PICKER}.{digest}"


def picked(key: str) -> None:
    st.session_state[ITEM] = st.session_state[key]


def apply_link(runs: list[int]) -> None:
    """A URL the page did not write itself (a shared link) sets run, question and tau."""
    raw = {k: st.query_params.get(k) for k in explorer.LINK_PARAMS}
    params = {k: v for k, v in raw.items() if v is not None}
    if not params or params == st.session_state.get(LINK):
        return
    values, problems = explorer.parse_link(params)
    if "run" in values and values["run"] not in runs:
        problems.append(f"run {values.pop('run')} has no scored KGs here")
    for name, key in (("run", RUN), ("item", ITEM), ("threshold", THRESHOLD)):
        if name in values:
            st.session_state[key] = values[name]
    if "item" in values:
        st.session_state[RANGE] = (0.0, 1.0)  # the linked question must not be filtered out
        st.session_state[SEARCH] = ""
    if "run" in values:
        st.session_state["explorer._run_seen"] = values["run"]  # keep the linked question
    st.session_state["explorer._link_problems"] = problems
    st.session_state[LINK] = params


def write_link(run_id: int, item_id: int, tau: float) -> None:
    params = {"run": str(run_id), "item": str(item_id), "threshold": f"{tau:g}"}
    if {k: st.query_params.get(k) for k in params} != params:
        st.query_params.update(params)
    if "tau" in st.query_params:  # an old link's name of the threshold: written anew above
        del st.query_params["tau"]
    st.session_state[LINK] = params


def step(options: list[int], offset: int, last_page: int, previous: list[int]) -> None:
    """Prev / next: the question before or after the current one in the listed order, across
    pages (``previous``: the page before's questions)."""
    before, after = explorer.neighbours(options, st.session_state.get(ITEM, options[0]))
    page = int(st.session_state.get(PAGE, 1)) - 1
    if offset < 0 and before is None and page > 0 and previous:
        st.session_state[PAGE], st.session_state[ITEM] = page, previous[-1]
    elif offset > 0 and after is None and page < last_page:
        st.session_state[PAGE], st.session_state[ITEM] = page + 2, None
    else:
        target = before if offset < 0 else after
        if target is not None:
            st.session_state[ITEM] = target


def new_search() -> None:
    """A new search or range starts at the first page, on its lowest CUS."""
    st.session_state[PAGE] = 1
    st.session_state[ITEM] = None


def question_options(answers: pd.DataFrame) -> dict[int, str]:
    return {
        int(r.item_id): explorer.question_label(str(r.ext_id), str(r.question), float(r.cus))
        for r in answers.itertuples()
    }


CASE, DRAWN = "explorer._case", "explorer._drawn"


def main() -> None:
    widgets.page_setup("Sample explorer")
    controls = widgets.sidebar(live_alpha=True)
    runs = reads.load_runs(controls.view)
    runs = runs[runs["with_kgs"] > 0]
    if runs.empty or controls.signature is None:
        st.info(
            "No run with KGs and scores yet: `s3kg extract` and "
            f"{code(f's3kg score --db {controls.path}')}."
        )
        st.stop()
    assert controls.signature is not None
    scored = set(reads.scored_runs(controls.view))
    run_labels = {v: k for k, v in views.run_choices(runs).items()}
    run_ids = [r for r in run_labels if r in scored]
    if not run_ids:
        st.info("No run has scores under the chosen signature.")
        st.stop()
    stored_tau = Signature.parse(controls.signature).tau

    apply_link(run_ids)
    for problem in st.session_state.pop("explorer._link_problems", []):
        st.warning(f"Link: {problem}")
    if st.session_state.get(RUN) not in run_ids:
        st.session_state[RUN] = run_ids[0]
    st.session_state.setdefault(THRESHOLD, stored_tau)
    st.session_state.setdefault(RANGE, (0.0, 1.0))
    st.session_state.setdefault(ALL, False)
    st.session_state[DRAWN] = None  # this full run draws what the controls choose

    def controls_and_scores(alpha: float) -> None:
        """The picker, tau and the scores: everything alpha changes, in one fragment.

        Moving alpha reruns only this block (the graphs document below, about half a megabyte,
        is not sent again); choosing another case here reruns the whole page.
        """
        case_key = top_block(controls, run_ids, run_labels, stored_tau, alpha)
        drawn = st.session_state.get(DRAWN)
        if drawn is not None and drawn != case_key:
            st.rerun()  # another case: the graphs and texts below must follow
        st.session_state[CASE] = case_key

    widgets.live_alpha(controls, controls_and_scores)
    run_id, item_id, tau, show_all = st.session_state[CASE]
    widgets.partial_note(controls.view, runs, [run_id])
    st.session_state[DRAWN] = st.session_state[CASE]
    view = reads.item_view(controls.view, int(run_id), int(item_id))
    case = explain.explorer_case(controls.view, int(run_id), int(item_id), tau)
    views.explorer_graphs(
        case, view.kg_statuses, show_all=bool(show_all), state_key=f"{int(run_id)}:{int(item_id)}"
    )
    views.explorer_transport(case)
    how = "as stored" if abs(tau - stored_tau) < 1e-9 else "recomputed (deltas: against the stored)"
    st.caption(
        f"Scores at tau {tau:g}: {how}, from the stored embeddings ({case.encoded} strings "
        "encoded), under the signature above the graphs."
    )
    views.explorer_texts(view, case)


def top_block(
    controls: widgets.Controls,
    run_ids: list[int],
    run_labels: dict[int, str],
    stored_tau: float,
    alpha: float,
) -> tuple[int, int, float, bool]:
    """Run, question, prev / next, filter, tau and the scores at ``alpha``; the case chosen."""
    assert controls.signature is not None
    # the run column fits "SmolLM2-135M-Instruct · T=0.7" at 1280 px (dashboard.run_names)
    top = st.columns([4.2, 4.6, 0.6, 0.6, 1.2], vertical_alignment="bottom")
    run_id = top[0].selectbox(
        "Run", run_ids, format_func=run_labels.__getitem__, key=RUN, persist_state="session"
    )
    components = reads.run_components(controls.view, run_id)
    answers = reblend(components, alpha)
    if st.session_state.get("explorer._run_seen") != run_id:  # another run: its worst answer
        if st.session_state.get("explorer._run_seen") is not None:
            st.session_state[ITEM] = None
        st.session_state["explorer._run_seen"] = run_id
        st.session_state[PAGE] = 1
    lo, hi = st.session_state[RANGE]
    text = str(st.session_state.get(SEARCH, "")).strip()
    at = (controls.view, int(run_id), alpha)
    wanted = st.session_state.get(ITEM)
    placed = (wanted, run_id, alpha, text, lo, hi)
    if wanted is not None and st.session_state.get("explorer._placed") != placed:
        # a linked question, or the one kept while alpha moves, opens on its own page
        position = search.question_position(*at, int(wanted), text, lo, hi)
        if position is not None:
            st.session_state[PAGE] = position // PAGE_SIZE + 1
        st.session_state["explorer._placed"] = placed
    page = max(0, int(st.session_state.get(PAGE, 1)) - 1)
    rows, total = search.question_page(*at, text, lo, hi, page, PAGE_SIZE)
    if rows.empty and page > 0:
        page, st.session_state[PAGE] = 0, 1
        rows, total = search.question_page(*at, text, lo, hi, 0, PAGE_SIZE)
    pages = max(1, -(-total // PAGE_SIZE))
    st.session_state[PAGE] = page + 1
    with top[4].popover("Find", help="Search the questions, filter by CUS, go to a page."):
        st.text_input(
            "Search", key=SEARCH, on_change=new_search, placeholder="id or words",
            help="Questions whose id or text holds every word (any case).",
        )  # fmt: skip
        st.slider(
            "CUS range", 0.0, 1.0, step=0.05, key=RANGE, persist_state="session",
            on_change=new_search,
        )  # fmt: skip
        st.number_input("Page", 1, pages, key=PAGE, step=1)
        st.caption(f"{total} of {len(answers)} questions; page {page + 1} of {pages}")
    if rows.empty:
        st.info(f"No question of this run matches (CUS {lo:g} to {hi:g}, search {text!r}).")
        st.stop()
    labels = question_options(rows)
    order = list(labels)
    if st.session_state.get(ITEM) not in labels:
        missing = st.session_state.get(ITEM)
        if missing is not None and missing not in set(answers["item_id"]):
            st.warning(f"Question {missing} is not in this run; showing the lowest CUS first.")
        st.session_state[ITEM] = order[0]
    key = picker_key(labels)
    st.session_state[key] = st.session_state[ITEM]
    first = page * PAGE_SIZE + 1
    shown = f"{first}-{first + len(order) - 1} of {total}" if pages > 1 else f"{total}"
    item_id = top[1].selectbox(
        f"Question ({shown}, lowest CUS first)",
        order,
        format_func=labels.__getitem__,
        key=key,
        on_change=picked,
        args=(key,),
    )
    previous = (
        list(search.question_page(*at, text, lo, hi, page - 1, PAGE_SIZE)[0]["item_id"])
        if page > 0
        else []
    )
    before, after = explorer.neighbours(order, item_id)
    top[2].button(
        "◀",
        key="explorer.prev",
        on_click=step,
        args=(order, -1, pages - 1, previous),
        disabled=before is None and page == 0,
        width="stretch",
        help="Previous: the question with the next lower CUS",
    )
    top[3].button(
        "▶",
        key="explorer.next",
        on_click=step,
        args=(order, 1, pages - 1, previous),
        disabled=after is None and page == pages - 1,
        width="stretch",
        help="Next: the question with the next higher CUS",
    )

    second = st.columns([1.7, 7.3], vertical_alignment="top")
    with second[0]:
        tau = st.slider(
            f"tau (stored: {stored_tau:g})",
            0.0,
            1.0,
            step=0.01,
            key=THRESHOLD,
            persist_state="session",
            help="Soft-alignment threshold. Moving it recomputes this question's alignment, "
            "S_WL, S_SBERT, GoldSim, CtxSim and CUS from the stored embeddings.",
        )
        show_all = st.toggle(
            "Whole KGs",
            key=ALL,
            persist_state="session",
            help=f"KGs of more than {explorer.MAX_NODES} nodes show their matched triples and "
            "their neighbours; switch on to draw every node.",
        )
    tau = round(float(tau), 2)
    write_link(int(run_id), int(item_id), tau)
    case = explain.explorer_case(controls.view, int(run_id), int(item_id), tau)
    # every stop of the slider at once: the scores follow a drag in the browser (issue 60)
    mine = components[components["item_id"] == item_id]
    stored = [reblend(mine, stop).iloc[0].to_dict() for stop in GRID]
    with second[1]:
        views.explorer_scores(
            stored, [case.scores(stop) for stop in GRID], alpha=alpha, tau=tau,
            stored_tau=stored_tau, signature=controls.signature,
        )  # fmt: skip
    return int(run_id), int(item_id), tau, bool(show_all)


main()
