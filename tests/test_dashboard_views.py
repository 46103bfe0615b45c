"""Tests of dashboard/views.py: selectbox labels, the texts block and the explorer's score block.

The blocks are rendered by ``streamlit.testing`` from small functions; the graphs block is
covered with the real demo database in test_dashboard_pages.py and the browser tests.
"""

from __future__ import annotations

import pandas as pd
import pytest
from dashboard_helpers import app_metrics, live_blocks, live_note
from streamlit.testing.v1 import AppTest

from dashboard import views
from dashboard.data.reads import ItemView
from dashboard.escape import md


def test_run_choices_name_each_run_and_map_to_its_id():
    runs = pd.DataFrame(
        {
            "run_id": [3, 7],
            "dataset": ["mesaqa", "pubmedqa"],
            "model": ["gemma", "llama"],
            "temperature": [0.0, 0.7],
            "extractor": ["offline", "llm"],
        }
    )
    assert views.run_choices(runs) == {"gemma": 3, "llama": 7}
    same = runs.assign(model="SmolLM2-135M-Instruct")
    assert views.run_choices(same) == {
        "SmolLM2-135M-Instruct · T=0 · offline · mesaqa": 3,
        "SmolLM2-135M-Instruct · T=0.7 · llm · pubmedqa": 7,
    }
    assert views.run_choices(same.assign(label=["a", "b"])) == {"a": 3, "b": 7}


def test_item_choices_never_carry_a_score():
    # a label that changed with alpha made Streamlit drop the user's choice
    answers = pd.DataFrame({"item_id": [2, 10], "cus": [0.4, 0.9]})
    assert views.item_choices(answers) == {"item 2": 2, "item 10": 10}


def _texts_block() -> None:
    from dashboard import views
    from dashboard.data.reads import ItemView

    view = ItemView(
        run_id=1,
        item_id=1,
        ext_id="q1",
        question="What does **aspirin** treat?",
        context="Aspirin treats <b>pain</b>.",
        gold="pain",
        answer="",
        answer_status="failed: *HTTP 500*",
        kgs={},
        details={},
        tau=None,
    )
    views.texts(view)


def test_texts_show_model_strings_as_text_and_an_empty_answer_as_empty():
    at = AppTest.from_function(_texts_block).run()
    assert not at.exception
    shown = [t.value for t in at.text]
    assert shown == ["[q1] What does **aspirin** treat?", "pain", "(empty)",
                     "Aspirin treats <b>pain</b>."]  # fmt: skip
    titles = [m.value for m in at.markdown]
    # the status is escaped in the Markdown title: no italics made of the model's asterisks
    assert titles[2] == f"**Model answer ({md('failed: *HTTP 500*')})**"
    assert "\\*HTTP 500\\*" in titles[2]


def _score_block() -> None:
    import streamlit as st

    from dashboard import views
    from dashboard.live_alpha import GRID

    tau = st.session_state.get("tau", 0.65)
    gold_status = st.session_state.get("gold_status", "ok")
    stored = {
        "gold_sim": 0.5, "ctx_sim": 0.6, "cus": 0.545,
        "gold_s_wl": 0.2, "gold_s_sbert": 0.8, "ctx_s_wl": 0.3, "ctx_s_sbert": 0.9,
        "gold_status": gold_status, "ctx_status": "ok",
    }  # fmt: skip
    live = {
        "gold_sim": 0.55 if tau != 0.65 else 0.5, "ctx_sim": 0.6, "cus": 0.574,
        "gold_s_wl": 0.3, "gold_s_sbert": 0.8, "ctx_s_wl": 0.3, "ctx_s_sbert": 0.9,
    }  # fmt: skip
    views.explorer_scores(
        [stored] * len(GRID), [live] * len(GRID), alpha=0.5, tau=tau, stored_tau=0.65,
        signature="mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:4",
    )  # fmt: skip


def _metrics(at: AppTest) -> dict[str, tuple[str, str]]:
    """The explorer's scores as the browser shows them at the server's alpha: value, delta."""
    shown = app_metrics(at, "explorer.scores")
    return {k: (v, shown[f"{k} delta"]) for k, v in shown.items() if not k.endswith(" delta")}


def _help(at: AppTest, label: str) -> str:
    block = live_blocks(at)["explorer.scores"]
    item = next(i for i in block["items"] if i["label"] == label)
    return item["help"] if isinstance(item["help"], str) else item["help"][block["at"]]


def test_scores_at_the_stored_tau_read_as_stored():
    at = AppTest.from_function(_score_block).run()
    assert not at.exception
    metrics = _metrics(at)
    assert metrics["GoldSim"] == ("0.500", "as stored")
    assert metrics["CUS"] == ("0.574", "as stored")
    assert metrics["S_WL gold / ctx"] == ("0.30 / 0.30", "as stored")
    line = live_note(at, "explorer.signature")
    assert line == "alpha 0.5 (sidebar) · Signature mode:ot|enc:minilm@0.1.0|tau:0.65|K:5|" \
        "align:yes|norm:lemma|version:4|alpha:0.5"  # fmt: skip


def test_scores_at_another_tau_show_the_change_against_the_stored_value():
    at = AppTest.from_function(_score_block)
    at.session_state["tau"] = 0.8
    at.run()
    metrics = _metrics(at)
    assert metrics["GoldSim"] == ("0.550", "+0.050 vs 0.500")
    assert metrics["CtxSim"] == ("0.600", "+0.000 vs 0.600")
    assert metrics["S_WL gold / ctx"] == ("0.30 / 0.30", "vs 0.20 / 0.30")
    assert "at tau 0.8 and alpha 0.5" in _help(at, "GoldSim")


def test_an_unscorable_side_names_its_reason_under_the_metric():
    at = AppTest.from_function(_score_block)
    at.session_state["gold_status"] = "empty_kg_2"
    at.run()
    metrics = {k: d for k, (_, d) in _metrics(at).items()}
    assert metrics["GoldSim"] == "gold KG empty"
    assert metrics["CUS"] == "gold KG empty"
    assert metrics["CtxSim"] == "as stored"


def test_a_renamed_status_names_its_kg_under_the_metric_and_in_the_tooltip():
    """Issue 31: statuses name the KG (``answer_kg_empty``), and the tooltip says it in words."""
    at = AppTest.from_function(_score_block)
    at.session_state["gold_status"] = "answer_kg_empty"
    at.run()
    metrics = {k: d for k, (_, d) in _metrics(at).items()}
    assert metrics["GoldSim"] == metrics["CUS"] == "answer KG empty"
    assert "the answer KG is empty" in _help(at, "GoldSim")


@pytest.mark.parametrize(
    ("status", "shown"),
    [("unparseable_kg_1", "answer KG unparseable"), ("something_new", "not scored")],
)
def test_an_unknown_status_reads_not_scored(status, shown):
    at = AppTest.from_function(_score_block)
    at.session_state["gold_status"] = status
    at.run()
    assert _metrics(at)["GoldSim"][1] == shown


def test_item_view_is_the_shape_the_blocks_read():
    # the blocks read these fields; a renamed field would fail here before a page breaks
    fields = set(ItemView.__dataclass_fields__)
    assert {"ext_id", "question", "context", "gold", "answer", "answer_status"} <= fields
