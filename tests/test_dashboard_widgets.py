"""Tests of dashboard/widgets.py: signature labels, select boxes that keep their choice."""

from __future__ import annotations

import doctest

from streamlit.testing.v1 import AppTest

import dashboard.widgets as widgets_module
from dashboard.widgets import signature_labels

BASE = "mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0"


def test_the_module_doctests_pass():
    assert doctest.testmod(widgets_module).failed == 0


def test_one_signature_is_labelled_by_mode_encoder_and_tau():
    assert signature_labels([BASE]) == {BASE: "hybrid · minilm@0.1.0 · tau 0.65"}


def test_several_signatures_are_labelled_by_what_differs():
    kgx = BASE.replace("mode:hybrid", "mode:kgx").replace("align:yes", "align:no")
    mpnet = BASE.replace("minilm@0.1.0", "mpnet@0.2.0")
    labels = signature_labels([BASE, kgx, mpnet])
    assert labels == {
        BASE: "hybrid · minilm@0.1.0 · align yes",
        kgx: "kgx · minilm@0.1.0 · align no",
        mpnet: "hybrid · mpnet@0.2.0 · align yes",
    }
    assert all(len(label) <= 36 for label in labels.values())  # fits the sidebar


def test_a_signature_that_does_not_parse_keeps_its_text():
    assert signature_labels([BASE, "odd"]) == {BASE: "hybrid · minilm@0.1.0 · tau 0.65",
                                               "odd": "odd"}  # fmt: skip


def _scored_choice() -> None:
    import streamlit as st

    from dashboard import widgets

    shift = st.slider("shift", 0, 10, 0, key="shift")
    options = {key: f"{key} · score {score + shift}" for key, score in (("a", 1), ("b", 2))}
    st.text(widgets.keyed_selectbox("Case", options, key="case", default="a"))


def test_a_choice_survives_labels_that_change():
    at = AppTest.from_function(_scored_choice)
    at.run()
    assert at.text[0].value == "a"
    at.selectbox(key="case").select_index(1).run()
    assert at.text[0].value == "b"
    at.slider(key="shift").set_value(5).run()  # every label changes
    assert at.text[0].value == "b"
    assert at.selectbox(key="case").options == ["a · score 6", "b · score 7"]
