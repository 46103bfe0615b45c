"""Rendering blocks the pages share: labels, the score strip, texts, the three graphs."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import pandas as pd
import streamlit as st

from dashboard import data
from dashboard.escape import md
from dashboard.graphs import alignment_colours, kg_html, legend_html
from s3kg_core.kg import Triple

__all__ = [
    "alignment_maps",
    "item_choices",
    "run_choices",
    "score_strip",
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
        st.warning("Not scorable: " + md(", ".join(sorted(statuses))))
    st.caption(f"alpha {alpha:g} (sidebar)")


def texts(view: data.ItemView) -> None:
    """Question, then context, gold answer and model answer side by side (as plain text)."""
    st.markdown("**Question**")
    st.text(f"[{view.ext_id}] {view.question}")
    cols = st.columns(3)
    for col, title, body in (
        (cols[0], "Gold answer", view.gold),
        (cols[1], f"Model answer ({md(view.answer_status)})", view.answer),
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
