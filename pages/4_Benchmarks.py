"""Benchmarks: does each score agree with human labels? Stored by `s3kg bench pairs --db`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st
from sklearn.metrics import roc_curve

from dashboard import widgets
from dashboard.data import evaluations
from dashboard.escape import code, md, plotly_frame
from s3kg_core.config import default_data_dir
from s3kg_core.evaluation.demo_results import is_precomputed
from s3kg_core.evaluation.pair_sets import list_pair_sets

widgets.page_setup("Benchmarks")
controls = widgets.sidebar(alpha=False)
results = evaluations.bench_results(controls.view)
if results.empty:
    st.info(
        "No benchmark results in this database yet. Run for example "
        f"{code(f's3kg bench pairs --dataset all --json bench.json --db {controls.path}')} "
        "(the S3KG authors' labelled pair sets, from ../shared/data or --data-dir)."
    )
    st.stop()

st.markdown(
    "Max-F1 over a threshold sweep and AUROC of every method against the pairs' human labels, "
    "with bootstrap 95 % intervals. `s3kg` is S3KG in the run's mode (the setting below); "
    "`s3kg@<mode>` is S3KG in that mode (`s3kg@hybrid`, `s3kg@kgx`, ...)."
)
precomputed = [d["precomputed"] for d in results["detail"] if is_precomputed(d)]
live_sets = list_pair_sets()
if precomputed:
    mark = precomputed[0]
    own = len(results) - len(precomputed)
    st.info(
        "**Precomputed project results.** The S3KG Workbench project's own figures on the "
        f"{results['dataset'].nunique()} public labelled pair sets (the S3KG authors' released "
        f"benchmarks), computed with s3kg {md(mark.get('s3kg_version', '?'))} on "
        f"{md(mark.get('created', '?'))} and shipped with the demo "
        "(`data/demo/bench_results.json`). Figures only: no pair, text or per-pair score."
        + (f" {own} of the {len(results)} rows are results computed here." if own else ""),
        icon=":material/inventory_2:",
    )
    command = f"Computed with {code(mark.get('command', 's3kg bench pairs'))}. "
else:
    command = ""
if live_sets:
    st.caption(
        f"{command}The pair sets are here ({code(default_data_dir())}): compute live results "
        f"with {code(f's3kg bench pairs --dataset all --json bench.json --db {controls.path}')}; "
        "they replace the rows of the same set, encoder, mode and method."
    )
elif precomputed:
    st.caption(
        f"{command}To compute results here you need the pair sets (`../shared/data`, or "
        "`s3kg bench pairs --data-dir`)."
    )
settings = sorted(
    {(r.encoder, r.mode, r.triples) for r in results.itertuples()}, key=lambda t: tuple(map(str, t))
)
labels = {f"{e} · {m} mode · {t} triples": (e, m, t) for e, m, t in settings}
encoder, mode, triples = labels[st.selectbox("Setting", list(labels), key="bench_setting")]
chosen = results[
    (results.encoder == encoder) & (results["mode"] == mode) & (results.triples == triples)
]

st.subheader("AUROC per dataset and method")
pivot = chosen.pivot_table(index="method", columns="dataset", values="auroc")
pivot["mean"] = pivot.mean(axis=1)
pivot.columns = [  # short set names, so that the nine sets fit the page's width
    str(c).removesuffix("_400").replace("semantic_kg_", "sk_").replace("_ranked_faithfulness", "")
    for c in pivot.columns
]
st.dataframe(pivot.sort_values("mean", ascending=False).round(3), width="stretch")

dataset = st.selectbox("Dataset", sorted(chosen.dataset.unique()), key="bench_dataset")
rows = chosen[chosen.dataset == dataset].sort_values("auroc", ascending=False)
first = rows.iloc[0].detail if len(rows) else {}
if first.get("protocol") == "dev-test":
    st.caption(
        f"Figures on the {int(rows.iloc[0].n)} test pairs; S3KG's alpha was chosen by AUROC on "
        f"the {md(first.get('n_dev', '?'))} declared dev pairs (split "
        f"{md(first.get('split', '?'))})."
    )
else:
    st.caption(
        f"Figures on all {int(rows.iloc[0].n) if len(rows) else 0} pairs; S3KG's alpha is the "
        "best by F1 on the same pairs (optimistic by that choice)."
    )
table = pd.DataFrame(
    {
        "method": rows.method,
        "F1": rows.f1.round(3),
        "F1 95% CI": [
            f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(rows.f1_lo, rows.f1_hi, strict=True)
        ],
        "AUROC": rows.auroc.round(3),
        "AUROC 95% CI": [
            f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(rows.auroc_lo, rows.auroc_hi, strict=True)
        ],
        "alpha": rows.alpha,
        "threshold": rows.threshold.round(3),
        "source": [
            "project (precomputed)" if is_precomputed(d) else "this database" for d in rows.detail
        ],
    }
)
st.dataframe(table, hide_index=True, width="stretch")

cols = st.columns(2)
with cols[0]:
    variants = rows[rows.method.str.startswith("s3kg@")]
    if variants.empty:  # results stored before the s3kg@<mode> methods: one curve per mode
        variants = results[
            (results.dataset == dataset)
            & (results.method == "s3kg")
            & (results.encoder == encoder)
            & (results.triples == triples)
        ].assign(method=lambda f: "s3kg@" + f["mode"])
    sweeps = [
        {"variant": r.method, **p}
        for r in variants.itertuples()
        for p in r.detail.get("alpha_sweep", [])
    ]
    if sweeps:
        sweep = pd.DataFrame(sweeps).melt(
            id_vars=["variant", "alpha"], value_vars=["f1", "auroc"], var_name="metric"
        )
        fig = px.line(
            plotly_frame(sweep, ["variant"]),
            x="alpha",
            y="value",
            color="variant",
            line_dash="metric",
            markers=True,
        )
        fig.update_layout(title="S3KG alpha sweep", yaxis_range=[0, 1])
        st.plotly_chart(fig, width="stretch", key="bench_sweep")
with cols[1]:
    curves = []
    for r in rows.itertuples():
        scores, truth = r.detail.get("scores"), r.detail.get("labels")
        if scores and truth and len(set(truth)) == 2:
            fpr, tpr, _ = roc_curve(np.asarray(truth), np.asarray(scores))
            curves.append(pd.DataFrame({"method": r.method, "FPR": fpr, "TPR": tpr}))
    if curves:
        fig = px.line(plotly_frame(pd.concat(curves), ["method"]), x="FPR", y="TPR", color="method")
        fig.update_layout(title="ROC curves", xaxis_range=[0, 1], yaxis_range=[0, 1])
        st.plotly_chart(fig, width="stretch", key="bench_roc")
    else:
        st.caption(
            "ROC curves need per-pair scores, which these results do not carry: run "
            + code(f"s3kg bench pairs --dataset {dataset} --json bench.json --db {controls.path}")
            + " here."
        )

st.subheader("Pairs a method gets wrong (at its max-F1 threshold)")
method = st.selectbox("Method", rows.method.tolist(), key="bench_method")
row = rows[rows.method == method].iloc[0]
detail = row.detail
if not detail.get("scores"):
    st.caption(
        "This result carries no per-pair scores"
        + (
            " (the project's precomputed results are figures only)"
            if is_precomputed(detail)
            else ""
        )
        + f": run the benchmark here with {code('--db')} to see the pairs."
    )
else:
    pairs = pd.DataFrame(
        {
            "id": [str(i) for i in detail["ids"]],
            "label": detail["labels"],
            "score": detail["scores"],
        }
    )
    pairs["predicted"] = (pairs.score >= row.threshold).astype(int)
    wrong = pairs[pairs.predicted != pairs.label].copy()
    wrong["error"] = np.where(wrong.label == 1, "false negative", "false positive")
    texts = evaluations.bench_texts(dataset)
    if texts is not None:
        wrong = wrong.merge(texts, on="id", how="left")
    st.caption(f"{len(wrong)} of {len(pairs)} pairs misclassified by {md(method)}.")
    st.dataframe(wrong.round({"score": 3}), hide_index=True, width="stretch")
