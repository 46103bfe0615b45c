"""Factuality: what an LLM knows about KG facts, estimated by a judge on its hidden states."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import streamlit as st

from dashboard import factuality, widgets
from dashboard.data import evaluations
from dashboard.escape import code

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

widgets.page_setup("Factuality")
controls = widgets.sidebar(alpha=False)
evals = evaluations.factuality_evals(controls.view)
if evals.empty:
    st.info(
        "No factuality evaluation in this database yet. Build statements from a KG, label them "
        "with the target LLM, read its hidden states, train the judge and evaluate it:\n\n"
        "`s3kg factuality build ...` → `s3kg factuality label ...` → "
        "`s3kg factuality hidden ...` → `s3kg factuality train ...` → "
        f"{code(f's3kg factuality evaluate ... --json eval.json --db {controls.path}')} "
        "(see `s3kg factuality --help`)."
    )
    st.stop()

st.markdown(
    "GraphEval's factuality check (Liu et al., 2024): the target LLM labels KG statements "
    "TRUE, FALSE or I don't know; a small judge network reads the LLM's hidden states of each "
    "statement and learns to predict those labels, so millions of facts can be checked without "
    "generating text. Accuracies are on held-out test facts against the LLM's own labels."
)
choices = factuality.evaluation_choices(evals)
label = st.selectbox("Evaluation", list(choices), key="fact_eval")
row = evals[evals["name"] == choices[label]].iloc[0]
if note := factuality.demo_note(str(row["name"])):
    st.warning(note, icon=":material/info:")
summary, breakdown = row["summary"], row["breakdown"]
source = summary.get("source")
st.text(
    f"Evaluation {row['name']} · target model {row['model']}"
    + (f"\n{source}" if isinstance(source, str) and source else "")
)

acc = factuality.accuracies(summary)


def _fmt(value: float) -> str | None:
    return None if math.isnan(value) else f"{value:.3f}"


cols: Sequence[DeltaGenerator] = st.columns(3)  # reused for three uneven columns below
judge = acc["judge"]
majority = acc["majority class"]
cols[0].metric(
    "Judge accuracy",
    _fmt(judge),
    delta=None if math.isnan(judge) or math.isnan(majority) else f"{judge - majority:+.3f}",
    help="Delta: against the majority class.",
)
cols[1].metric("Majority class", _fmt(majority))
cols[2].metric("Logistic regression", _fmt(acc["logistic regression"]))
cols = st.columns([1, 1, 3])
cols[0].metric("Test statements", int(row["n_test"]))
cols[1].metric("Layer", int(row["layer"]))
model = factuality.markdown_literal(row["model"])
cols[2].metric("Model", model, help=f"The target LLM: {model}")
st.caption(factuality.label_counts_text(summary))

st.subheader("Correctness, truthfulness, informativeness")
scores = factuality.scores_frame(summary)
facts = scores[scores["level"] == factuality.LEVELS["facts"]]
metric_cols = st.columns(3)
for col, metric in zip(metric_cols, factuality.METRICS, strict=True):
    part = facts[facts["metric"] == metric].set_index("source")["value"]
    own = float(part.get(factuality.SOURCES["llm"], math.nan))
    estimate = float(part.get(factuality.SOURCES["judge"], math.nan))
    col.metric(f"{metric.capitalize()} · LLM's own labels", _fmt(own))
    col.metric(
        f"{metric.capitalize()} · judge's estimate",
        _fmt(estimate),
        delta=None if math.isnan(own) or math.isnan(estimate) else f"{estimate - own:+.3f}",
        delta_color="off",
        help="Delta: the judge's estimate minus the value from the LLM's own labels.",
    )
level = st.radio(
    "Level",
    list(factuality.LEVELS.values()),
    horizontal=True,
    key="fact_level",
    help="Per fact (Liu et al.): a fact counts as correct only if the model affirms it and "
    "rejects its corruptions; truthful if it never affirms a falsehood (IDK is truthful); "
    "informative if it never answers IDK. Per statement: the share of statements answered "
    "right, not wrongly, and not IDK.",
)
st.plotly_chart(factuality.scores_figure(scores, level), width="stretch", key="fact_scores")

sweep = factuality.sweep_frame(summary, int(row["layer"]))
if not sweep.empty:
    st.subheader("Layer choice")
    st.plotly_chart(factuality.sweep_figure(sweep), width="stretch", key="fact_sweep")
    best = int(sweep.loc[sweep["val_accuracy"].idxmax(), "layer"])
    if best == int(row["layer"]):
        st.caption(
            f"The judge reads layer {best}, the best by validation accuracy (the test split is "
            "never used to choose it)."
        )
    else:
        st.caption(
            f"The judge reads layer {int(row['layer'])}; the sweep's best by validation "
            f"accuracy is layer {best}."
        )

st.subheader("Breakdowns")
metric = st.selectbox("Metric", list(factuality.METRICS), key="fact_metric")
MIN_FACTS = 5
by: Literal["relation", "degree"]
for by, title, key in (
    ("relation", "by relation type", "fact_by_relation"),
    (
        "degree",
        "by entity degree (quantile buckets of the mean head and tail degree)",
        "fact_by_degree",
    ),
):
    frame = factuality.breakdown_frame(breakdown, by)
    if frame.empty:
        st.caption(f"No breakdown {title} stored for this evaluation.")
        continue
    st.plotly_chart(
        factuality.breakdown_figure(frame, metric, f"{metric.capitalize()} {title}"),
        width="stretch",
        key=key,
    )
    tiny = factuality.small_groups(frame, MIN_FACTS)
    if tiny:
        names = ", ".join(factuality.markdown_literal(k) for k in tiny)
        st.caption(
            f"Fewer than {MIN_FACTS} test facts behind: {names}. Their bars move by a whole "
            "fact's share at a time; do not read much into them."
        )
    with st.expander(f"Table {title.split(' (')[0]}", expanded=False):
        table = frame.pivot_table(
            index=["order", "key", "n_facts"], columns=["source", "metric"], values="value"
        )
        table = table.reset_index(level="order", drop=True)
        table.columns = [f"{m} · {s}" for s, m in table.columns]
        st.dataframe(
            table.round(3).reset_index(), hide_index=True, width="stretch", key=f"{key}_table"
        )
