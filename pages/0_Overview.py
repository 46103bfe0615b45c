"""Overview: every scored run ranked within its dataset, with intervals, verdicts against #1 and
rank changes."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dashboard import charts, leaderboard, live_alpha, live_board, navigation, url_state, widgets
from dashboard.data import reads
from dashboard.escape import code, md
from dashboard.live_alpha import GRID
from s3kg_core.analysis.leaderboard import REFERENCE_ALPHA
from s3kg_core.scoring.signature import Signature
from s3kg_core.stats import DEFAULT_RESAMPLES, NORMAL_FROM

CHARTS = ("By run", "By temperature", "Distributions")

widgets.page_setup("S3KG Workbench")
url_state.adopt_alpha("overview")
controls = widgets.sidebar(live_alpha=True)

st.caption(
    "**GoldSim**: answer KG vs gold KG · **CtxSim**: answer KG vs context KG (both S3KG) · "
    "**CUS**: their harmonic mean · all follow **alpha** (sidebar)."
)
runs = reads.load_runs(controls.view)
if controls.signature is None:
    st.info(
        "Nothing is scored yet. Score the stored runs with "
        f"{code(f's3kg score --db {controls.path}')}, then reload."
    )
    st.dataframe(runs, hide_index=True, width="stretch", key="overview_runs")
    st.stop()

stored_signature = controls.signature
partial = widgets.partial_note(controls.view, runs)
summary = reads.run_summaries(controls.view, REFERENCE_ALPHA)

DATASETS = sorted(summary["dataset"].astype(str).unique())
ALL = "All datasets"
found = url_state.adopt(
    "overview",
    {
        "dataset": lambda v: v if v in DATASETS else ALL,
        "by": lambda v: v if v in charts.SCORE_NAMES else "cus",
    },
)
if "dataset" in found:
    st.session_state["overview.dataset"] = found["dataset"]
if "by" in found:
    st.session_state["overview.by"] = found["by"]
st.session_state.setdefault("overview.by", "cus")


def columns(metric: str) -> dict[str, dict[str, Any]]:
    """The leaderboard's columns in the order shown: label, help and width (every column fits
    at 1280 px, issue 43: the run's label names its model and settings, the link its page, and
    the CSV holds every column)."""
    name = charts.SCORE_NAMES[metric]
    out: dict[str, dict[str, Any]] = {
        "rank": {"label": "#", "width": 36, "align": "right"},
        "change": {
            "label": "Δrank",
            "width": 54,
            "help": "Places gained (▲) or lost (▼) since alpha 0.5.",
        },
        "run": {
            "label": "run",
            "help": "The run's name, and its settings where runs share one (its "
            "model, temperature and extractor: the run page and the CSV).",
        },
        "mean": {"label": name, "width": 62, "align": "right", "help": f"The run's mean {name}."},
        "interval": {
            "label": "95% interval",
            "width": 100,
            "help": f"The 95% bootstrap interval of the mean {name}.",
        },
        "verdict": {
            "label": "vs #1",
            "width": 126,
            "help": f"The run's mean {name} against the dataset's #1: clearly lower, or no "
            "clear difference. By the paired bootstrap over the questions both answered (as "
            "the Run comparison and s3kg check); only for a run that answered other questions, "
            "by whether the two 95% intervals overlap. The note under the table names the test.",
        },
        "n": {"label": "answers", "width": 62, "align": "right"},
        **{
            m: {"label": label, "width": 58, "align": "right", "help": f"The run's mean {label}."}
            for m, label in charts.SCORE_NAMES.items()
            if m != metric
        },
        "scoring": {"label": "scoring", "width": 110},
        "run_page": {"label": "details", "width": 70},
    }
    return out  # fmt: skip


def scores(alpha: float) -> None:
    """Everything on the page that alpha changes: one fragment with the slider."""
    signature = Signature.blended(stored_signature, alpha)
    metric = st.session_state["overview.by"]
    whole = reads.ranked(controls.view, alpha, metric)
    # every number below at every stop of the slider: the browser shows the slider's stop
    # while it moves, this rerun follows on release (issue 60, dashboard/live_alpha.py)
    frames = live_board.stops(whole, reads.means_grid(controls.view, GRID), alpha, metric)
    live_alpha.mount(
        live_board.metrics_block(whole, frames, len(DATASETS)), alpha=alpha, key="live.metrics"
    )
    head, pick, by, button = st.columns([3, 3, 2, 2], vertical_alignment="bottom")
    head.subheader("Leaderboard")
    with pick:
        dataset = st.selectbox(
            "Dataset", [ALL, *DATASETS], key="overview.dataset",
            help="Runs are ranked within their dataset only.",
        )  # fmt: skip
    with by:
        metric = st.selectbox(
            "Rank by", list(charts.SCORE_NAMES), format_func=charts.SCORE_NAMES.__getitem__,
            key="overview.by",
        )  # fmt: skip
    url_state.write(
        "overview",
        {
            "dataset": None if dataset == ALL else dataset,
            "by": None if metric == "cus" else metric,
            "alpha": f"{alpha:g}",
        },
    )
    board = whole
    shown = leaderboard.table(board, runs, partial, metric, alpha)
    if dataset != ALL:
        shown = shown[shown["dataset"] == dataset]
        board = board[board["dataset"] == dataset]

    widgets.csv_download(
        button,
        "Leaderboard (CSV)",
        shown.drop(columns="run_page").assign(signature=signature),
        file_name="s3kg_leaderboard.csv",
        key="leaderboard_csv",
    )
    live_alpha.mount(
        live_board.note_block(frames, None if dataset == ALL else [dataset]),
        alpha=alpha,
        key="live.note",
    )
    for name, group in shown.groupby("dataset", sort=True):
        if dataset == ALL and len(DATASETS) > 1:
            st.markdown(f"**{md(name)}** · {len(group)} runs")
        live_alpha.mount(
            live_board.table_block(
                group, frames, metric, partial=bool((group["scoring"] != "complete").any()),
                columns=columns(metric),
            ),
            alpha=alpha,
            key=f"leaderboard.{name}",
        )  # fmt: skip
        tests = leaderboard.test_note(group)
        if tests:
            st.markdown(tests)
        paired = group[group["test"].str.startswith("paired")]
        if not paired.empty:  # the next click: the first run below #1 against it
            navigation.params_link(
                "compare",
                f"{md(paired['run'].iloc[0])} against #1, question by question",
                {"a": str(group["run_id"].iloc[0]), "b": str(paired["run_id"].iloc[0]),
                 "alpha": f"{alpha:g}"},
                icon=":material/compare_arrows:",
            )  # fmt: skip
    st.caption(
        f"Ranked by mean {charts.SCORE_NAMES[metric]} within each dataset, with its 95% "
        f"bootstrap interval (BCa, {DEFAULT_RESAMPLES:,} resamples, seed 0; for a run of "
        f"{NORMAL_FROM:,} answers or more its normal approximation, mean ± 1.96 standard "
        "errors, which the bootstrap's matches at that size), the one `s3kg cus` and "
        "`s3kg report` show. **vs #1**: the paired test with the same settings. Δrank: against "
        f"alpha 0.5. Signature of every number on this page: {code(signature)}"
    )

    # One chart at a time: only the chosen one is built on each alpha step.
    means = reads.mark_partial(board, runs, partial)
    chart = st.segmented_control(
        "Chart", CHARTS, default=CHARTS[0], key="overview_chart", label_visibility="collapsed"
    )
    if chart == "By temperature":
        st.plotly_chart(charts.temperature_figure(means), width="stretch", key="lines")
        st.caption("Runs with a single temperature show as points.")
    elif chart == "Distributions":
        dist = st.radio(
            "Score",
            list(charts.SCORE_NAMES),
            format_func=charts.SCORE_NAMES.get,
            horizontal=True,
            key="dist_metric",
        )
        hist = reads.score_histograms(
            controls.view, alpha, dist,
            None if dataset == ALL else dataset,
        )  # fmt: skip
        st.plotly_chart(charts.distribution_figure(hist, dist), width="stretch", key="dist")
        st.caption(
            f"Each row: one run's answers in 20 bins of {charts.SCORE_NAMES[dist]}; the darker, "
            "the larger the share of its answers (hover for the count)."
        )
    else:
        crowded = bool((means.groupby("dataset").size() > charts.TOP_RUNS).any())
        every = crowded and st.toggle(
            "Show all runs",
            key="overview.all_runs",
            help=f"The chart shows the {charts.TOP_RUNS} runs with the best mean CUS of each "
            "dataset; switch on for every run (the table above lists them all).",
        )
        top = None if every or not crowded else charts.TOP_RUNS
        st.plotly_chart(
            charts.leaderboard_figure(charts.top_runs(means, top)), width="stretch", key="bars"
        )
        st.caption(
            "Each row one run (best mean CUS on top), its three scores side by side"
            + (f"; the best {top} runs of each dataset" if top else "")
            + ". Compare two runs question by question on **Run comparison**; open the worst "
            "answers on **Failure analysis**."
        )


widgets.live_alpha(controls, scores)

with st.expander(f"Runs in the database ({len(runs)})"):
    st.dataframe(runs, hide_index=True, width="stretch", key="overview_runs")
