"""The plotly figures of the Overview, Failure analysis and Run comparison pages.

Pure functions from DataFrames to figures, so their traces can be tested without a browser.
One run is one (dataset, model, temperature, extractor): every figure gives each run its own
bar or box, never one summed over temperatures. Every name that reaches a figure (models,
datasets, extractors, questions) goes through :func:`dashboard.escape.plotly_frame` first.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from dashboard.escape import plotly_frame, plotly_text

__all__ = [
    "COMPARISON_BARS",
    "LONG_COLOURS",
    "RUN_COLOURS",
    "SCORE_COLOURS",
    "SCORE_NAMES",
    "TAU_COLOURS",
    "TOP_RUNS",
    "comparison_figure",
    "distribution_figure",
    "leaderboard_figure",
    "run_labels",
    "tau_figure",
    "temperature_figure",
    "top_runs",
]

SCORE_NAMES = {"gold_sim": "GoldSim", "ctx_sim": "CtxSim", "cus": "CUS"}
"""Column -> the name a reader sees."""

# Okabe & Ito's palette for colour-blind readers; extra and missing (the pair read most) are
# vermillion and blue, which no colour vision confuses. Roles swapped is orange with its own
# pattern (orange and vermillion are near for some readers: the pattern tells them apart).
TAU_COLOURS = {
    "relation mismatch": "#009E73",
    "entity mismatch": "#CC79A7",
    "roles swapped": "#E69F00",
    "extra": "#D55E00",
    "missing": "#0072B2",
}
_TAU_PATTERNS = {
    "relation mismatch": "",
    "entity mismatch": ".",
    "roles swapped": "-",
    "extra": "/",
    "missing": "x",
}
RUN_COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000"]
"""Okabe & Ito's colours, yellow left out (unreadable on white): the first lines of a chart."""
LONG_COLOURS = RUN_COLOURS + [c for c in px.colors.qualitative.Dark24 if c not in RUN_COLOURS]
"""31 colours for charts of many lines (Okabe & Ito's first, then plotly's Dark24); a chart of
runs names each run on its axis instead of giving it a colour."""
SCORE_COLOURS = {"GoldSim": "#E69F00", "CtxSim": "#56B4E9", "CUS": "#0072B2"}
"""One colour per score in the leaderboard chart (the axis names the runs)."""
TOP_RUNS = 12
"""Runs per dataset the Overview's run chart shows until the reader asks for all."""
_ROW_PX = 22  # height of one run's row in a horizontal chart
_RUN_KEYS = ["dataset", "model", "temperature", "extractor"]
_FONT = {"size": 14}
_TICK_CHARS = 32  # longer names are cut in ticks and legends (hovers show them whole)
_TITLE_CHARS = 48  # and in facet titles


def run_labels(frame: pd.DataFrame, sep: str = " · ", extractor_sep: str = "<br>") -> pd.Series:
    """One short label per row's run: the model and temperature, the extractor if it varies.

    Labels are escaped for plotly (:func:`plotly_text`); ``sep`` joins the model and the
    temperature (``"<br>"``: two lines); ``extractor_sep`` goes before the extractor (its own
    line by default);
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
            label += f"{extractor_sep}{plotly_text(_short(str(row.extractor), _TICK_CHARS))}"
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


def top_runs(board: pd.DataFrame, n: int | None, metric: str = "cus") -> pd.DataFrame:
    """The ``n`` runs of each dataset with the best mean ``metric`` (``None``: every run).

    Examples
    --------
    >>> b = pd.DataFrame({"dataset": ["d", "d", "e"], "cus": [0.2, 0.5, 0.1]})
    >>> top_runs(b, 1)["cus"].tolist()
    [0.5, 0.1]
    """
    if n is None:
        return board
    ranked = board.sort_values(["dataset", metric], ascending=[True, False], kind="stable")
    return ranked.groupby("dataset", sort=False).head(n)


def _rows_height(labels: pd.DataFrame, per_row: int, floor: int, extra: int) -> int:
    """A horizontal chart's height: one row per run of the largest dataset, per dataset."""
    if labels.empty:
        return floor
    per_dataset = labels.groupby("dataset").size()
    return max(floor, int(per_dataset.max()) * per_row * len(per_dataset) + extra)


def leaderboard_figure(board: pd.DataFrame, height: int | None = None) -> go.Figure:
    """GoldSim, CtxSim and CUS of each run as horizontal bars, one facet row per dataset.

    The y axis names each run (model, temperature, the extractor where it varies), best CUS on
    top; the three scores are grouped bars (never stacked) in three colours
    (:data:`SCORE_COLOURS`), named in the legend above the plot. At 40 runs every run keeps its
    own row and name, where a colour per run could not be told apart. ``board`` is
    :func:`dashboard.data.reads.ranked`' frame: one row per run; the height grows with the runs
    unless ``height`` is given. Built with graph objects (plotly express took 0.3 s a step).
    """
    ordered = board.sort_values("cus", kind="stable")  # plotly draws the first row at the bottom
    shown = _shown(ordered).assign(run=run_labels(ordered, extractor_sep=" · "))
    datasets = list(dict.fromkeys(sorted(shown["dataset_shown"]))) or [""]
    fig = make_subplots(
        rows=len(datasets), cols=1, row_titles=datasets, vertical_spacing=0.25 / len(datasets)
    )
    hover = (
        "%{y}<br>%{fullData.name}: %{x:.3f}<br>model: %{customdata[0]}<br>temperature: "
        "%{customdata[1]}<br>extractor: %{customdata[2]}<br>answers: %{customdata[3]}"
        "<extra></extra>"
    )
    for row, dataset in enumerate(datasets, start=1):
        part = shown[shown["dataset_shown"] == dataset]
        custom = part[["model", "temperature", "extractor", "n"]].to_numpy(dtype=object)
        # the last trace is drawn at the top of each run's group: GoldSim on top, as listed
        for column, name in reversed(SCORE_NAMES.items()):
            fig.add_trace(
                go.Bar(
                    x=part[column], y=part["run"], name=name, orientation="h",
                    marker_color=SCORE_COLOURS[name], legendgroup=name, showlegend=row == 1,
                    text=part[column].map("{:.2f}".format), textposition="outside",
                    cliponaxis=False, textfont_size=12, constraintext="none",
                    customdata=custom, hovertemplate=hover,
                ),
                row=row, col=1,
            )  # fmt: skip
    legend = {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0, "traceorder": "reversed"}
    rows = height or _rows_height(board, 3 * 12 + 6, 260, 90)
    fig.update_layout(
        barmode="group", bargap=0.2, height=rows, font=_FONT, legend=legend,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
    )  # fmt: skip
    fig.update_xaxes(range=[0, 1.08])
    return _horizontal(fig)


def _horizontal(fig: go.Figure) -> go.Figure:
    """Each facet row its own runs on the y axis, its title at the right, no axis titles."""
    fig.update_yaxes(matches=None, title_text="", automargin=True)
    fig.update_xaxes(title_text="")
    fig.for_each_annotation(lambda a: a.update(textangle=90, xshift=4))
    fig.update_layout(margin_r=34)  # room for the facet titles: never cut at the right edge
    return fig


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
        color_discrete_sequence=LONG_COLOURS,
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


def distribution_figure(hist: pd.DataFrame, metric: str, height: int | None = None) -> go.Figure:
    """Each run's histogram of ``metric`` as one heat row, one facet row per dataset.

    ``hist`` is :func:`dashboard.data.reads.score_histograms`' frame; the y axis names the runs, the
    colour is the share of the run's answers in the bin (the hover gives the count). A few hundred
    numbers whatever the number of answers.
    """
    datasets = sorted(hist["dataset"].astype(str).unique()) if not hist.empty else []
    fig = make_subplots(
        rows=max(1, len(datasets)),
        cols=1,
        subplot_titles=[plotly_text(_short(d, _TITLE_CHARS)) for d in datasets],
        vertical_spacing=0.12 if len(datasets) > 1 else 0.05,
    )
    name = SCORE_NAMES.get(metric, metric)
    width = 1 / max(1, hist["bin"].nunique()) if not hist.empty else 0.05
    for row, dataset in enumerate(datasets, start=1):
        part = hist[hist["dataset"].astype(str) == dataset]
        labels = run_labels(part, extractor_sep=" · ")
        fig.add_trace(
            go.Heatmap(
                x=part["bin"] + width / 2,
                y=labels,
                z=part["share"],
                customdata=part[["answers"]].to_numpy(),
                coloraxis="coloraxis",
                hovertemplate=(
                    "%{y}<br>" + name + " %{x:.2f} ± " + f"{width / 2:g}"
                    + "<br>%{customdata[0]:.0f} answers (%{z:.0%})<extra></extra>"
                ),
            ),
            row=row,
            col=1,
        )  # fmt: skip
    fig.update_layout(
        coloraxis={"colorscale": "Blues", "colorbar": {"title": {"text": "share"}}},
        height=height or _rows_height(hist.drop_duplicates(_RUN_KEYS), _ROW_PX, 260, 110),
        font=_FONT,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    fig.update_xaxes(range=[0, 1], title_text="")
    fig.update_xaxes(title_text=name, row=max(1, len(datasets)), col=1)
    fig.update_yaxes(automargin=True, type="category")
    return fig


def tau_figure(
    per_run: pd.DataFrame, categories: Sequence[str], height: int | None = None
) -> go.Figure:
    """TAU's residual triples per run, stacked by category (counts add up: stacking is right).

    Horizontal bars, one row per run named on the y axis (one line: model, temperature, the
    extractor where it varies), one facet row per dataset: 40 runs keep 40 readable names,
    where two-line ticks under vertical bars overlapped from 10 runs. ``per_run`` has the run
    columns and one count column per category (``extra``, ...).
    """
    ordered = per_run.assign(_total=per_run[list(categories)].sum(axis=1)).sort_values(
        "_total", kind="stable"
    )
    shown = _shown(ordered).assign(run=run_labels(ordered, extractor_sep=" · "))
    long = shown.melt(
        id_vars=["run", "dataset_shown", *_RUN_KEYS],
        value_vars=list(categories),
        var_name="category",
        value_name="triples",
    )
    long["category"] = long["category"].str.replace("_", " ")
    fig = px.bar(
        long,
        x="triples",
        y="run",
        orientation="h",
        color="category",
        pattern_shape="category",
        pattern_shape_map=_TAU_PATTERNS,
        color_discrete_map=TAU_COLOURS,
        category_orders={
            "category": list(TAU_COLOURS),
            "dataset_shown": sorted(shown["dataset_shown"].unique()),
        },
        facet_row="dataset_shown",
        hover_data={
            "model": True,
            "temperature": True,
            "extractor": True,
            "run": False,
            "dataset_shown": False,
        },
        labels={"triples": "triples in the cases", "run": ""},
    )
    legend = {"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0}
    rows = max(height or 0, _rows_height(per_run, _ROW_PX, 260, 90))
    fig = _layout(fig, rows, top=50, legend=legend)
    return _horizontal(fig)


COMPARISON_BARS = 400
"""Bars of :func:`comparison_figure` at most: past this many questions, evenly spaced ranks
(more than the chart's width in pixels holds; 1,000 bars made an alpha step at 100,000 answers
a fifth slower)."""


def comparison_figure(
    deltas: pd.DataFrame, height: int = 330, bars: int = COMPARISON_BARS
) -> go.Figure:
    """The change in CUS of every shared question (B minus A), biggest regression first.

    ``deltas`` is :func:`dashboard.compare.question_deltas`'s frame. Past ``bars`` questions,
    ``bars`` evenly spaced ranks draw the curve (the first and the last always among them).
    """
    ranked = deltas.assign(rank=range(1, len(deltas) + 1))
    if len(ranked) > bars:
        ranked = ranked.iloc[np.unique(np.linspace(0, len(ranked) - 1, bars).round().astype(int))]
    fig = go.Figure()
    change = np.sign(ranked["d_cus"].to_numpy(dtype=float))
    colours = {"worse": "#D55E00", "same": "#999999", "better": "#0072B2"}
    for name, sign in (("worse", -1), ("same", 0), ("better", 1)):
        part = ranked[change == sign]
        if part.empty:
            continue
        fig.add_trace(
            go.Bar(
                name=name,
                x=part["rank"].to_numpy(),
                y=part["d_cus"].to_numpy(dtype=float),
                marker_color=colours[name],
                customdata=list(  # kept as numbers and text (an array would make all text)
                    zip(
                        part["item_id"].astype(int).tolist(),
                        [plotly_text(_short(str(q), 80)) for q in part["question"]],
                        part["cus_a"].astype(float).tolist(),
                        part["cus_b"].astype(float).tolist(),
                        strict=True,
                    )
                ),
                hovertemplate="ΔCUS (B − A) %{y:+.3f}<br>item %{customdata[0]}<br>"
                "%{customdata[1]}<br>CUS A %{customdata[2]:.3f} · CUS B %{customdata[3]:.3f}"
                "<extra></extra>",
            )
        )
    fig.update_layout(
        height=height,
        font=_FONT,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        legend={"title_text": "", "orientation": "h", "y": 1.12, "x": 0},
        bargap=0.15,
        barmode="relative",
        yaxis_title="ΔCUS (B − A)",
        xaxis_title="questions, by ΔCUS",
    )
    fig.update_xaxes(showticklabels=False)
    return fig


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
