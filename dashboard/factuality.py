"""Factuality evaluations for the Factuality page: pure helpers.

:func:`dashboard.data.evaluations.factuality_evals` loads the ``factuality_evals`` rows that
``s3kg factuality evaluate --db`` (and the demo build) wrote. The helpers here are pure: they
turn one evaluation's summary and breakdown (the JSON of
:class:`~s3kg_core.evaluation.factuality.EvaluationReport`) into tidy frames and plotly figures.

Notes
-----
Evaluation names, model names and relation names are untrusted text (command-line arguments,
user KGs). The page shows them in plain-text places (select boxes, tables, ``st.text``), or
through :func:`markdown_literal` where Streamlit renders Markdown (metrics, captions); the
figures escape them with :func:`plot_text`, since plotly reads a few HTML tags in labels.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import plotly.graph_objects as go

from dashboard.escape import md, plotly_text
from s3kg_core.demo import DEMO_DIR
from s3kg_core.errors import ConfigError

__all__ = [
    "LEVELS",
    "METRICS",
    "SOURCES",
    "accuracies",
    "breakdown_figure",
    "breakdown_frame",
    "evaluation_choices",
    "label_counts_text",
    "markdown_literal",
    "plot_text",
    "scores_figure",
    "scores_frame",
    "small_groups",
    "sweep_figure",
    "sweep_frame",
]

METRICS = ("correctness", "truthfulness", "informativeness")
"""Liu et al.'s three metrics, in the order the page shows them."""

SOURCES = {"llm": "LLM's own labels", "judge": "judge's estimate"}
"""Whose answers a metric is computed from: the LLM's labels, or the judge's predictions."""

LEVELS = {"facts": "per fact (paper)", "statements": "per statement"}
"""Fact-level scores (Liu et al.) and the statement-level rates reported beside them."""

_SOURCE_COLOURS = {SOURCES["llm"]: "#4c78a8", SOURCES["judge"]: "#f58518"}


def markdown_literal(text: object) -> str:
    r"""``text`` with every Markdown-active character backslash-escaped (:func:`.escape.md`).

    For values Streamlit renders as Markdown (``st.metric``, ``st.caption``): no emphasis,
    link, directive (``:red[...]``), LaTeX or HTML can come from the text.

    Examples
    --------
    >>> markdown_literal("a_b *c* <b>")
    'a\\_b \\*c\\* \\<b\\>'
    """
    return md(text)


def plot_text(text: object) -> str:
    """``text`` for a plotly label or hover (:func:`~dashboard.escape.plotly_text`).

    Examples
    --------
    >>> plot_text("<b>R&D</b>")
    '&lt;b&gt;R&amp;D&lt;/b&gt;'
    """
    return plotly_text(text)


def _number(value: Any) -> float:
    """A float, NaN for a missing or non-numeric value (stored NaN is JSON ``null``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return math.nan
    return float(value)


def evaluation_choices(frame: pd.DataFrame) -> dict[str, str]:
    """Select-box labels -> evaluation names, in the frame's order (newest first).

    Examples
    --------
    >>> f = pd.DataFrame({"name": ["a"], "model": ["m"], "layer": [3], "n_test": [80],
    ...                   "run_at": [None]})
    >>> evaluation_choices(f)
    {'a · m · layer 3 · 80 test statements': 'a'}
    """
    out: dict[str, str] = {}
    for row in frame.itertuples(index=False):
        label = f"{row.name} · {row.model} · layer {row.layer} · {row.n_test} test statements"
        if pd.notna(row.run_at):
            label += f" · {pd.Timestamp(row.run_at):%Y-%m-%d %H:%M}"
        out[label] = str(row.name)
    return out


def accuracies(summary: Mapping[str, Any]) -> dict[str, float]:
    """Test accuracy against the LLM's own labels: the judge and its two baselines.

    Examples
    --------
    >>> accuracies({"judge_accuracy": 0.8, "majority_accuracy": 0.5})
    {'judge': 0.8, 'majority class': 0.5, 'logistic regression': nan}
    """
    return {
        "judge": _number(summary.get("judge_accuracy")),
        "majority class": _number(summary.get("majority_accuracy")),
        "logistic regression": _number(summary.get("logreg_accuracy")),
    }


def label_counts_text(summary: Mapping[str, Any]) -> str:
    """The LLM's labels on the test statements and the majority class, as one line.

    Examples
    --------
    >>> label_counts_text({"test_label_counts": {"TRUE": 3, "FALSE": 5, "IDK": 0},
    ...                    "majority_label": "FALSE"})
    "The LLM's own labels of the test statements: TRUE 3 · FALSE 5 · IDK 0; majority class FALSE."
    """
    counts = summary.get("test_label_counts") or {}
    parts = [f"{label} {int(counts.get(label, 0))}" for label in ("TRUE", "FALSE", "IDK")]
    text = f"The LLM's own labels of the test statements: {' · '.join(parts)}"
    if summary.get("majority_label") in ("TRUE", "FALSE", "IDK"):
        text += f"; majority class {summary['majority_label']}"
    return text + "."


def scores_frame(summary: Mapping[str, Any]) -> pd.DataFrame:
    """The three metrics from each source at each level, tidy.

    Reads ``scores_llm`` / ``scores_judge`` when stored; the fact-level values fall back to the
    headline keys (``correctness`` for the judge, ``llm_correctness`` for the LLM).

    Returns
    -------
    pandas.DataFrame
        ``level`` (a :data:`LEVELS` label), ``metric``, ``source`` (a :data:`SOURCES` label),
        ``value`` (NaN where nothing was scored); fact level first, metrics in :data:`METRICS`
        order.

    Examples
    --------
    >>> f = scores_frame({"correctness": 0.1, "llm_correctness": 0.3})
    >>> f[(f.level == "per fact (paper)") & (f.metric == "correctness")].value.tolist()
    [0.3, 0.1]
    """
    rows = []
    for level, label in LEVELS.items():
        for metric in METRICS:
            for source, source_label in SOURCES.items():
                stored = summary.get(f"scores_{source}") or {}
                if level == "facts":
                    key = metric
                    fallback = summary.get(metric if source == "judge" else f"llm_{metric}")
                else:
                    key, fallback = f"statement_{metric}", None
                value = stored.get(key, fallback) if isinstance(stored, Mapping) else fallback
                rows.append(
                    {
                        "level": label,
                        "metric": metric,
                        "source": source_label,
                        "value": _number(value),
                    }
                )
    return pd.DataFrame(rows, columns=["level", "metric", "source", "value"])


def sweep_frame(summary: Mapping[str, Any], layer: int | None = None) -> pd.DataFrame:
    """The layer sweep (validation and train accuracy per layer), the chosen layer marked.

    ``layer`` is the judge's layer (default: the summary's ``layer``).

    Returns
    -------
    pandas.DataFrame
        ``layer``, ``val_accuracy``, ``train_accuracy``, ``chosen``; sorted by layer, empty
        when the evaluation stored no sweep.

    Examples
    --------
    >>> s = {"layer": 2, "layer_sweep": [{"layer": 2, "val_accuracy": 0.7},
    ...                                  {"layer": 1, "val_accuracy": 0.5}]}
    >>> sweep_frame(s).values.tolist()
    [[1, 0.5, nan, False], [2, 0.7, nan, True]]
    """
    columns = ["layer", "val_accuracy", "train_accuracy", "chosen"]
    sweep = summary.get("layer_sweep") or []
    rows = [
        {
            "layer": int(r["layer"]),
            "val_accuracy": _number(r.get("val_accuracy")),
            "train_accuracy": _number(r.get("train_accuracy")),
        }
        for r in sweep
        if isinstance(r, Mapping) and isinstance(r.get("layer"), int)
    ]
    frame = pd.DataFrame(rows, columns=columns[:3])
    frame["chosen"] = frame["layer"] == (summary.get("layer") if layer is None else layer)
    return frame.sort_values("layer", kind="stable").reset_index(drop=True)


def breakdown_frame(
    breakdown: Mapping[str, Any], by: Literal["relation", "degree"]
) -> pd.DataFrame:
    """One evaluation's breakdown by relation or entity-degree bucket, tidy, both sources.

    Parameters
    ----------
    breakdown
        The stored breakdown: ``{"judge_relation": [...], "llm_degree": [...], ...}``, each a
        list of ``{"key", "n_facts", "correctness", "truthfulness", "informativeness"}``.
    by
        ``"relation"`` or ``"degree"``.

    Returns
    -------
    pandas.DataFrame
        ``key``, ``n_facts``, ``source`` (a :data:`SOURCES` label), ``metric``, ``value``,
        ``order`` (the group's position: most facts first for relations, ascending degree for
        buckets, as stored). Empty when nothing is stored for ``by``.

    Examples
    --------
    >>> b = {"llm_relation": [{"key": "Has", "n_facts": 2, "correctness": 0.5,
    ...                        "truthfulness": 1.0, "informativeness": 0.5}]}
    >>> f = breakdown_frame(b, "relation")
    >>> f[f.metric == "correctness"][["key", "n_facts", "source", "value"]].values.tolist()
    [['Has', 2, "LLM's own labels", 0.5]]
    """
    if by not in ("relation", "degree"):
        raise ConfigError(f"by must be 'relation' or 'degree'; got {by!r}")
    rows = []
    order: dict[str, int] = {}
    for source, source_label in SOURCES.items():
        for group in breakdown.get(f"{source}_{by}") or []:
            if not isinstance(group, Mapping) or "key" not in group:
                continue
            key = str(group["key"])
            order.setdefault(key, len(order))
            for metric in METRICS:
                rows.append(
                    {
                        "key": key,
                        "n_facts": int(group.get("n_facts") or 0),
                        "source": source_label,
                        "metric": metric,
                        "value": _number(group.get(metric)),
                        "order": order[key],
                    }
                )
    columns = ["key", "n_facts", "source", "metric", "value", "order"]
    return pd.DataFrame(rows, columns=columns)


def small_groups(frame: pd.DataFrame, min_facts: int = 5) -> list[str]:
    """The groups of a :func:`breakdown_frame` with fewer than ``min_facts`` test facts.

    Examples
    --------
    >>> b = {"llm_relation": [{"key": "A", "n_facts": 9}, {"key": "B", "n_facts": 1}]}
    >>> small_groups(breakdown_frame(b, "relation"))
    ['B']
    """
    if frame.empty:
        return []
    groups = frame.drop_duplicates("key").sort_values("order")
    return [str(k) for k in groups.loc[groups["n_facts"] < min_facts, "key"]]


def _bars(
    frame: pd.DataFrame, x: str, *, text: Sequence[str], hover: Sequence[str]
) -> list[go.Bar]:
    traces = []
    for source, colour in _SOURCE_COLOURS.items():
        mask = (frame["source"] == source).to_numpy()
        part = frame[mask]
        if part.empty:
            continue
        traces.append(
            go.Bar(
                x=part[x].tolist(),
                y=part["value"].tolist(),
                name=source,
                marker_color=colour,
                text=[t for t, m in zip(text, mask, strict=True) if m],
                textposition="outside",
                hovertext=[h for h, m in zip(hover, mask, strict=True) if m],
                hoverinfo="text",
            )
        )
    return traces


def breakdown_figure(frame: pd.DataFrame, metric: str, title: str) -> go.Figure:
    """Grouped bars of ``metric`` per group, the LLM's labels beside the judge's estimate.

    Each bar is labelled with its number of test facts (``n=``), also in the hover; group names
    are escaped (:func:`plot_text`).

    Examples
    --------
    >>> b = {"llm_relation": [{"key": "<b>", "n_facts": 2, "correctness": 0.5}]}
    >>> fig = breakdown_figure(breakdown_frame(b, "relation"), "correctness", "t")
    >>> fig.data[0].x, fig.data[0].text
    (('&lt;b&gt;',), ('n=2',))
    """
    part = frame[frame["metric"] == metric].sort_values(["order", "source"], kind="stable")
    part = part.assign(label=[plot_text(k) for k in part["key"]])
    text = [f"n={n}" for n in part["n_facts"]]
    hover = [
        f"{label}<br>{source}<br>{metric}: "
        + ("n/a" if math.isnan(v) else f"{v:.3f}")
        + f"<br>{n} test facts"
        for label, source, v, n in zip(
            part["label"], part["source"], part["value"], part["n_facts"], strict=True
        )
    ]
    fig = go.Figure(_bars(part, "label", text=text, hover=hover))
    fig.update_layout(
        title=plot_text(title),
        barmode="group",
        yaxis={"title": metric, "range": [0, 1.12]},
        xaxis={"title": None, "type": "category"},
        legend={"title": None, "orientation": "h", "y": -0.25},
        margin={"t": 50},
    )
    return fig


def scores_figure(scores: pd.DataFrame, level: str) -> go.Figure:
    """Grouped bars of the three metrics at ``level``: the LLM's labels and the judge's estimate.

    Examples
    --------
    >>> fig = scores_figure(scores_frame({"correctness": 0.1}), LEVELS["facts"])
    >>> [t.name for t in fig.data]
    ["LLM's own labels", "judge's estimate"]
    """
    part = scores[scores["level"] == level]
    text = ["" if math.isnan(v) else f"{v:.3f}" for v in part["value"]]
    hover = [
        f"{m}<br>{s}: " + ("n/a" if math.isnan(v) else f"{v:.3f}")
        for m, s, v in zip(part["metric"], part["source"], part["value"], strict=True)
    ]
    fig = go.Figure(_bars(part, "metric", text=text, hover=hover))
    fig.update_layout(
        title=f"Factuality {level}",
        barmode="group",
        yaxis={"range": [0, 1.12]},
        legend={"title": None, "orientation": "h", "y": -0.2},
        margin={"t": 50},
    )
    return fig


def sweep_figure(sweep: pd.DataFrame) -> go.Figure:
    """Validation (and train) accuracy per layer, the chosen layer marked by a dashed line.

    Examples
    --------
    >>> s = {"layer": 2, "layer_sweep": [{"layer": 1, "val_accuracy": 0.5},
    ...                                  {"layer": 2, "val_accuracy": 0.7}]}
    >>> fig = sweep_figure(sweep_frame(s))
    >>> [t.name for t in fig.data], fig.layout.shapes[0].x0
    (['validation accuracy', 'train accuracy', 'chosen layer 2'], 2)
    """
    fig = go.Figure()
    for column, name, dash in (
        ("val_accuracy", "validation accuracy", "solid"),
        ("train_accuracy", "train accuracy", "dot"),
    ):
        fig.add_trace(
            go.Scatter(
                x=sweep["layer"].tolist(),
                y=sweep[column].tolist(),
                name=name,
                mode="lines+markers",
                line={"dash": dash},
            )
        )
    chosen = sweep[sweep["chosen"]]
    if not chosen.empty:
        layer = int(chosen["layer"].iloc[0])
        fig.add_vline(x=layer, line_dash="dash", line_color="#888")
        fig.add_trace(
            go.Scatter(
                x=[layer],
                y=chosen["val_accuracy"].tolist(),
                name=f"chosen layer {layer}",
                mode="markers",
                marker={"size": 14, "symbol": "star", "color": "#e45756"},
            )
        )
    fig.update_layout(
        title="Layer sweep: the judge trained on each layer, accuracy on validation",
        xaxis={"title": "layer", "dtick": 1 if len(sweep) <= 16 else None},
        yaxis={"title": "accuracy", "range": [0, 1.05]},
        legend={"title": None, "orientation": "h", "y": -0.25},
        margin={"t": 50},
    )
    return fig


DEMO_NOTE = (
    "About the demo: these evaluations judge SmolLM2 on FinDKG statements (facts from "
    "financial news, with corruptions). They are unrelated to the demo's questions and "
    "answers; they ship with the demo to show the method. Run `s3kg factuality` on your own "
    "KG to judge your model on its facts."
)
"""What the Factuality page says above an evaluation that came with the demo."""


def demo_note(name: str, demo_file: Path | None = None) -> str | None:
    """:data:`DEMO_NOTE` for an evaluation the demo shipped, ``None`` for any other.

    ``name`` is an evaluation's name; the demo's are those of ``data/demo/factuality_eval.json``
    (or ``demo_file``), stored by the demo build.

    Examples
    --------
    >>> demo_note("smollm2-findkg-raw") == DEMO_NOTE, demo_note("my-own-run")
    (True, None)
    """
    return DEMO_NOTE if name in _demo_names(demo_file) else None


def _demo_names(demo_file: Path | None) -> frozenset[str]:
    path = demo_file if demo_file is not None else DEMO_DIR / "factuality_eval.json"
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return frozenset()
    entries = entries if isinstance(entries, list) else [entries]
    return frozenset(str(e.get("name", "")) for e in entries if isinstance(e, dict))


__all__ += ["DEMO_NOTE", "demo_note"]  # added at the end: fewer merge conflicts
