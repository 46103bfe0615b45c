"""Rendering blocks the pages share: labels, the score strip, texts, the three graphs."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.graphs import alignment_colours, kg_html, legend_html
from s3kg_core.kg import Triple
from s3kg_core.stages.results import reblend

__all__ = [
    "SCORE_COLOURS",
    "alignment_maps",
    "item_choices",
    "item_score_strip",
    "run_choices",
    "score_strip",
    "score_bars",
    "scores_overview",
    "texts",
    "three_graphs",
]


def run_choices(runs: pd.DataFrame) -> dict[str, int]:
    """Selectbox labels of runs, mapped to their ids.

    Plain labels rather than a format function, so that streamlit.testing can select them.
    """
    return {
        f"{r.dataset} · {r.model} · T={r.temperature:g} · {r.extractor} · run {r.run_id}": int(
            r.run_id
        )
        for r in runs.itertuples()
    }


def item_choices(answers: pd.DataFrame) -> dict[str, int]:
    """Selectbox labels of a run's answers, mapped to their item ids.

    The label is the item alone, never its score: a score changes with alpha, and a label that
    changes would make Streamlit drop the user's choice when the slider moves.
    """
    return {f"item {int(r.item_id)}": int(r.item_id) for r in answers.itertuples()}


def score_strip(row: pd.Series, alpha: float) -> None:
    """GoldSim, CtxSim, CUS and their components for one answer."""
    cols = st.columns(5)
    cols[0].metric("GoldSim", f"{row['gold_sim']:.3f}")
    cols[1].metric("CtxSim", f"{row['ctx_sim']:.3f}")
    cols[2].metric("CUS", f"{row['cus']:.3f}")
    cols[3].metric("S_WL gold / ctx", f"{row['gold_s_wl']:.2f} / {row['ctx_s_wl']:.2f}")
    cols[4].metric("S_SBERT gold / ctx", f"{row['gold_s_sbert']:.2f} / {row['ctx_s_sbert']:.2f}")
    statuses = {row["gold_status"], row["ctx_status"]} - {"ok"}
    if statuses:
        st.warning("Not scorable: " + ", ".join(sorted(statuses)))
    st.caption(f"alpha {alpha:g} (sidebar)")


def item_score_strip(components: pd.DataFrame, run_id: int, item_id: int, alpha: float) -> None:
    """:func:`score_strip` of one answer, blended at ``alpha`` from the stored components.

    For :func:`dashboard.widgets.live_alpha`: moving alpha reblends this one row only.
    """
    rows = components[(components["run_id"] == run_id) & (components["item_id"] == item_id)]
    if rows.empty:
        st.info("This answer has no scores under the chosen signature.")
        return
    score_strip(reblend(rows, alpha).iloc[0], alpha)


def texts(view: data.ItemView) -> None:
    """Question, then context, gold answer and model answer side by side (as plain text)."""
    st.markdown("**Question**")
    st.text(f"[{view.ext_id}] {view.question}")
    cols = st.columns(3)
    for col, title, body in (
        (cols[0], "Gold answer", view.gold),
        (cols[1], f"Model answer ({view.answer_status})", view.answer),
        (cols[2], "Context", view.context),
    ):
        with col:
            st.markdown(f"**{title}**")
            st.text(body or "(empty)")


def _triples(view: data.ItemView, source: str) -> tuple[Triple, ...]:
    kg = view.kgs.get(source)
    return kg.triples if kg is not None else ()


def alignment_maps(
    controls: Any, view: data.ItemView, config: dict[str, Any], tau: float
) -> tuple[dict[str, str | None], dict[str, str | None], str]:
    """Entity maps answer -> gold and answer -> context, stored or recomputed at ``tau``."""
    stored = abs(tau - float(config["tau"])) < 1e-9
    if stored and view.details:
        return (
            view.details.get("gold", {}).get("entity_map", {}),
            view.details.get("context", {}).get("entity_map", {}),
            f"Alignment as stored (tau {tau:g}).",
        )
    encoder = data.encoder_of(controls.path, controls.stamp, controls.signature)
    cfg = {**config, "tau": tau}
    answer = _triples(view, "answer")
    gold = data.realign(controls.path, encoder, cfg, answer, _triples(view, "gold"))
    ctx = data.realign(controls.path, encoder, cfg, answer, _triples(view, "context"))
    return (
        gold.entity_map,
        ctx.entity_map,
        f"Alignment recomputed at tau {tau:g} from stored embeddings: GoldSim components "
        f"S_WL {gold.s_wl:.3f}, S_SBERT {gold.s_sbert:.3f}; CtxSim S_WL {ctx.s_wl:.3f}, "
        f"S_SBERT {ctx.s_sbert:.3f}.",
    )


def three_graphs(
    view: data.ItemView,
    gold_map: dict[str, str | None],
    ctx_map: dict[str, str | None],
    render: Callable[..., Any],
    highlight: dict[str, Collection[Triple]] | None = None,
    height: int = 430,
) -> None:
    """The gold, answer and context KGs side by side; aligned entities share a colour."""
    answer = _triples(view, "answer")
    colours = alignment_colours(answer, gold_map, ctx_map)
    cols = st.columns(3)
    for col, source, title, col_map in (
        (cols[0], "gold", "Gold KG", colours.gold),
        (cols[1], "answer", "Answer KG", colours.answer),
        (cols[2], "context", "Context KG", colours.context),
    ):
        with col:
            kg = view.kgs.get(source)
            status = kg.status if kg is not None else "not extracted"
            n = len(kg.triples) if kg is not None else 0
            st.markdown(f"**{title}** · {n} triples")
            if status not in ("ok",):
                st.text(f"status: {status}")
            render(
                kg_html(
                    _triples(view, source),
                    col_map,
                    highlight=(highlight or {}).get(source, ()),
                    height_px=height - 30,
                ),
                height=height,
            )
    st.markdown(legend_html(colours.answer), unsafe_allow_html=True)


SCORE_COLOURS = {"gold_sim": "#0068c9", "ctx_sim": "#83c9ff", "cus": "#ff2b2b"}
"""One colour per score on every chart (Streamlit's first three categorical colours)."""


def score_bars(board: pd.DataFrame) -> Any:
    """Grouped bars of mean GoldSim, CtxSim and CUS per run, one panel per dataset.

    Built with plotly's graph objects rather than plotly express (a fifth of the time: this
    chart is redrawn on every alpha move). Each run is its own group, labelled by model and
    temperature (and extractor, where a dataset has several).
    """
    import math

    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    datasets = sorted(board["dataset"].unique())
    n_cols = max(1, min(3, len(datasets)))
    fig = make_subplots(
        rows=max(1, math.ceil(len(datasets) / n_cols)),
        cols=n_cols,
        shared_yaxes=True,
        subplot_titles=[f"dataset={d}" for d in datasets],
        horizontal_spacing=0.04,
    )
    for i, dataset in enumerate(datasets):
        part = board[board["dataset"] == dataset]
        labels = part["model"] + " · T=" + part["temperature"].map("{:g}".format)
        if part["extractor"].nunique() > 1:
            labels = labels + " · " + part["extractor"]
        for score, colour in SCORE_COLOURS.items():
            fig.add_trace(
                go.Bar(
                    x=labels,
                    y=part[score],
                    name=score,
                    legendgroup=score,
                    showlegend=i == 0,
                    marker_color=colour,
                    customdata=part[["n", "extractor"]].to_numpy(),
                    hovertemplate=f"%{{x}}<br>{score} %{{y:.3f}}<br>n %{{customdata[0]}}"
                    "<br>%{customdata[1]}<extra></extra>",
                ),
                row=i // n_cols + 1,
                col=i % n_cols + 1,
            )
    fig.update_layout(barmode="group", legend_title_text="score", margin={"t": 40})
    fig.update_yaxes(range=[0, 1])
    return fig


def scores_overview(components: pd.DataFrame, signature: str, alpha: float) -> None:
    """The overview's alpha-dependent blocks: headline metrics, leaderboard, charts.

    ``components`` are the stored components (:func:`dashboard.data.load_components`),
    blended here at ``alpha``: draw it inside :func:`dashboard.widgets.live_alpha` and only
    this reruns when alpha moves. The chart tabs run lazily: only the open tab's chart is
    built on each rerun.
    """
    import plotly.express as px

    frame = reblend(components, alpha)
    board = data.leaderboard(frame)
    full_signature = f"{signature}|alpha:{alpha:g}"
    cols = st.columns(4)
    cols[0].metric("Runs scored", int(frame["run_id"].nunique()))
    cols[1].metric("Answers scored", len(frame))
    cols[2].metric("Mean CUS", f"{frame['cus'].mean():.3f}")
    cols[3].metric("Datasets", int(frame["dataset"].nunique()))

    st.subheader("Leaderboard")
    st.dataframe(
        board.sort_values("cus", ascending=False),
        hide_index=True,
        width="stretch",
        column_config={
            m: st.column_config.NumberColumn(m, format="%.4f")
            for m in ("gold_sim", "ctx_sim", "cus")
        },
        key="leaderboard",
    )
    st.caption(f"Signature of every number on this page: `{full_signature}`")
    st.download_button(
        "Download the leaderboard (CSV)",
        board.assign(signature=full_signature).to_csv(index=False).encode(),
        file_name="s3kg_leaderboard.csv",
        mime="text/csv",
        key="leaderboard_csv",
    )

    tabs = st.tabs(
        ["By model", "By temperature", "Distributions"], key="overview_charts", on_change="rerun"
    )
    if tabs[0].open:
        tabs[0].plotly_chart(score_bars(board), width="stretch", key="bars")
    if tabs[1].open:
        fig = px.line(
            board.sort_values("temperature"),
            x="temperature",
            y="cus",
            color="model",
            line_dash="extractor",
            facet_col="dataset",
            facet_col_wrap=3,
            markers=True,
            range_y=[0, 1],
        )
        tabs[1].plotly_chart(fig, width="stretch", key="lines")
        tabs[1].caption("Runs with a single temperature show as points.")
    if tabs[2].open:
        with tabs[2]:
            metric = st.radio(
                "Score", ["cus", "gold_sim", "ctx_sim"], horizontal=True, key="dist_metric"
            )
            fig = px.box(
                frame, x="model", y=metric, color="dataset", points="outliers", range_y=[0, 1]
            )
            st.plotly_chart(fig, width="stretch", key="dist")
