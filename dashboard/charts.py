"""The plotly figures of the Overview, Failure analysis and Run comparison pages.

Pure functions from DataFrames to figures, so their traces can be tested without a browser.
One run is one (dataset, model, temperature, extractor): every figure gives each run its own
bar or box, never one summed over temperatures. Every name that reaches a figure (models,
datasets, extractors, questions) goes through :func:`dashboard.escape.plotly_frame` first.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from dashboard.escape import plotly_frame, plotly_text

__all__ = [
    "RUN_COLOURS",
    "SCORE_NAMES",
    "TAU_COLOURS",
    "comparison_figure",
    "distribution_figure",
    "leaderboard_figure",
    "run_labels",
    "tau_figure",
    "temperature_figure",
]

SCORE_NAMES = {"gold_sim": "GoldSim", "ctx_sim": "CtxSim", "cus": "CUS"}
"""Column -> the name a reader sees."""

# Okabe & Ito's palette for colour-blind readers; extra and missing (the pair read most) are
# vermillion and blue, which no colour vision confuses.
TAU_COLOURS = {
    "relation mismatch": "#009E73",
    "entity mismatch": "#CC79A7",
    "extra": "#D55E00",
    "missing": "#0072B2",
}
_TAU_PATTERNS = {"relation mismatch": "", "entity mismatch": ".", "extra": "/", "missing": "x"}
RUN_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]
"""One colour per run (Okabe & Ito, yellow left out: it is unreadable on white)."""
_RUN_KEYS = ["dataset", "model", "temperature", "extractor"]
_FONT = {"size": 14}
_TICK_CHARS = 32  # longer names are cut in ticks and legends (hovers show them whole)
_TITLE_CHARS = 48  # and in facet titles


def run_labels(frame: pd.DataFrame, sep: str = " · ") -> pd.Series:
    """One short label per row's run: the model and temperature, the extractor if it varies.

    Labels are escaped for plotly (:func:`plotly_text`); ``sep`` joins the model and the
    temperature (``"<br>"``: two lines); the extractor goes on its own line;
    a name longer than 32 characters is cut with an ellipsis (the hovers show it whole).
    Two runs that would get one label (one display name, temperature and extractor) each get
    their run id too, so a chart never draws them as one.

    Examples
    --------
    >>> f = pd.DataFrame({"model": ["m", "m"], "temperature": [0.0, 0.7],
    ...                   "extractor": ["x", "x"]})
    >>> run_labels(f).tolist()
    ['m · T=0', 'm · T=0.7']
    >>> run_labels(f.assign(temperature=0.0, run_id=[3, 4])).tolist()
    ['m · T=0 · run 3', 'm · T=0 · run 4']
    """
    several = frame["extractor"].nunique() > 1 if "extractor" in frame else False
    labels = []
    for row in frame.itertuples(index=False):
        model = plotly_text(_short(str(row.model), _TICK_CHARS))
        label = f"{model}{sep}T={float(row.temperature):g}"
        if several:
            label += f"<br>{plotly_text(_short(str(row.extractor), _TICK_CHARS))}"
        labels.append(label)
    if "run_id" in frame:
        per_label: dict[str, set[int]] = {}
        for label, run in zip(labels, frame["run_id"], strict=True):
            per_label.setdefault(label, set()).add(int(run))
        labels = [
            f"{label} · run {int(run)}" if len(per_label[label]) > 1 else label
            for label, run in zip(labels, frame["run_id"], strict=True)
        ]
    return pd.Series(labels, index=frame.index, dtype=object)


def _shown(frame: pd.DataFrame, *, legend: Sequence[str] = ()) -> pd.DataFrame:
    """``frame`` for plotly express: names escaped, and cut in ``<name>_shown`` columns.

    ``dataset_shown`` (the facet titles) and ``<column>_shown`` of each ``legend`` column
    hold the cut names; the columns themselves hold the whole names, for the hovers.
    """
    out = frame.copy()
    if "dataset" in out:
        out["dataset_shown"] = out["dataset"].map(
            lambda v: plotly_text(_short(str(v), _TITLE_CHARS))
        )
    for column in legend:
        out[f"{column}_shown"] = out[column].map(lambda v: plotly_text(_short(str(v), _TICK_CHARS)))
    return plotly_frame(out, [c for c in ("dataset", "model", "extractor") if c in out])


def _facet_titles(fig: go.Figure) -> go.Figure:
    """``dataset=demo`` facet titles -> ``demo`` (the value is already escaped)."""
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
    return fig


def _layout(fig: go.Figure, height: int, top: int = 40, **more: object) -> go.Figure:
    fig.update_layout(
        height=height,
        font=_FONT,
        margin={"l": 10, "r": 10, "t": top, "b": 10},
        legend_title_text="",
        **more,
    )
    fig.update_xaxes(matches=None, title_text="")  # each dataset shows its own runs only
    return _facet_titles(fig)


def leaderboard_figure(board: pd.DataFrame, height: int = 380) -> go.Figure:
    """GoldSim, CtxSim and CUS of each run, side by side (grouped, never stacked), per dataset.

    One bar per run and score: the scores on the x axis, each run its own colour, named in
    the legend above the plot (read at first sight, where tick labels under the plot would be
    below the fold). ``board`` is :func:`dashboard.data.leaderboard`'s frame: one row per run.
    """
    shown = _shown(board).assign(run=run_labels(board))
    long = shown.melt(
        id_vars=["run", "dataset_shown", *_RUN_KEYS, "n"]
        + (["run_id"] if "run_id" in shown else []),
        value_vars=list(SCORE_NAMES),
        var_name="score",
        value_name="mean",
    )
    long["score"] = long["score"].map(SCORE_NAMES)
    fig = px.bar(
        long,
        x="score",
        y="mean",
        color="run",
        barmode="group",
        facet_col="dataset_shown",
        facet_col_wrap=3,
        text_auto=".2f",
        color_discrete_sequence=RUN_COLOURS,
        category_orders={"score": list(SCORE_NAMES.values())},
        hover_data={
            "model": True,
            "temperature": True,
            "extractor": True,
            "n": True,
            "run": False,
            "dataset_shown": False,
        },
        labels={"mean": "mean score", "n": "answers", "score": ""},
        range_y=[0, 1.05],
    )
    fig.update_traces(textposition="outside", cliponaxis=False)
    # the legend (the runs) on top, above the facet titles
    legend = {"orientation": "h", "y": 1.08, "yanchor": "bottom", "x": 0}
    return _layout(fig, height, top=80, legend=legend)


def temperature_figure(board: pd.DataFrame, height: int = 380) -> go.Figure:
    """Mean CUS against temperature, one line per model and extractor, per dataset."""
    shown = _shown(board.sort_values("temperature"), legend=["model", "extractor"])
    fig = px.line(
        shown,
        x="temperature",
        y="cus",
        color="model_shown",
        line_dash="extractor_shown",
        facet_col="dataset_shown",
        facet_col_wrap=3,
        markers=True,
        hover_data={
            "n": True,
            "model": True,
            "extractor": True,
            "model_shown": False,
            "extractor_shown": False,
            "dataset_shown": False,
        },
        labels={"cus": "mean CUS", "n": "answers"},
        range_y=[0, 1],
    )
    fig = _layout(fig, height)
    fig.update_xaxes(title_text="temperature")
    return fig


def distribution_figure(frame: pd.DataFrame, metric: str, height: int = 380) -> go.Figure:
    """Per-answer ``metric`` of each run as a box, coloured by dataset."""
    shown = _shown(frame).assign(run=run_labels(frame))
    fig = px.box(
        shown,
        x="run",
        y=metric,
        color="dataset_shown",
        points="all",
        hover_data={
            "item_id": True,
            "model": True,
            "temperature": True,
            "dataset": True,
            "dataset_shown": False,
        },
        labels={metric: SCORE_NAMES.get(metric, metric), "item_id": "item"},
        range_y=[0, 1],
    )
    return _layout(fig, height)


def tau_figure(per_run: pd.DataFrame, categories: Sequence[str], height: int = 330) -> go.Figure:
    """TAU's residual triples per run, stacked by category (counts add up: stacking is right).

    ``per_run`` has the run columns and one count column per category (``extra``, ...).
    """
    shown = _shown(per_run).assign(run=run_labels(per_run, sep="<br>"))
    long = shown.melt(
        id_vars=["run", "dataset_shown", *_RUN_KEYS],
        value_vars=list(categories),
        var_name="category",
        value_name="triples",
    )
    long["category"] = long["category"].str.replace("_", " ")
    fig = px.bar(
        long,
        x="run",
        y="triples",
        color="category",
        pattern_shape="category",
        pattern_shape_map=_TAU_PATTERNS,
        color_discrete_map=TAU_COLOURS,
        category_orders={"category": list(TAU_COLOURS)},
        facet_col="dataset_shown",
        facet_col_wrap=3,
        hover_data={
            "model": True,
            "temperature": True,
            "extractor": True,
            "run": False,
            "dataset_shown": False,
        },
        labels={"triples": "triples in the cases"},
    )
    # the legend above the facet titles: below the plot it covered the ticks' second line
    # (the temperature), so two runs of one model could not be told apart
    legend = {"orientation": "h", "y": 1.08, "yanchor": "bottom", "x": 0}
    return _layout(fig, height, top=80, legend=legend)


def comparison_figure(deltas: pd.DataFrame, height: int = 330) -> go.Figure:
    """The change in CUS of every shared question (B minus A), biggest regression first.

    ``deltas`` is :func:`dashboard.compare.question_deltas`'s frame.
    """
    shown = deltas.assign(
        question=deltas["question"].map(lambda q: plotly_text(_short(str(q), 80))),
        change=["worse" if d < 0 else "better" if d > 0 else "same" for d in deltas["d_cus"]],
        rank=range(1, len(deltas) + 1),
    )
    fig = px.bar(
        shown,
        x="rank",
        y="d_cus",
        color="change",
        color_discrete_map={"worse": "#D55E00", "better": "#0072B2", "same": "#999999"},
        category_orders={"change": ["worse", "same", "better"]},
        hover_data={"item_id": True, "question": True, "cus_a": ":.3f", "cus_b": ":.3f",
                    "rank": False, "change": False, "d_cus": ":+.3f"},
        labels={"d_cus": "ΔCUS (B − A)", "item_id": "item", "cus_a": "CUS A", "cus_b": "CUS B",
                "rank": "questions, biggest regression first"},
    )  # fmt: skip
    fig.update_layout(
        height=height,
        font=_FONT,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"title_text": "", "orientation": "h", "y": 1.12, "x": 0},
        bargap=0.15,
    )
    fig.update_xaxes(showticklabels=False)
    return fig


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
