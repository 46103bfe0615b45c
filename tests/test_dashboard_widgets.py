"""Tests of dashboard/widgets.py: signature labels, select boxes that keep their choice."""

from __future__ import annotations

import doctest

from streamlit.testing.v1 import AppTest

import dashboard.widgets as widgets_module
from dashboard.widgets import demo_check_line, signature_labels

BASE = "mode:hybrid|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:lemma|version:0.1.0"


def test_the_module_doctests_pass():
    assert doctest.testmod(widgets_module).failed == 0


def test_one_signature_is_labelled_by_mode_encoder_and_tau():
    assert signature_labels([BASE]) == {BASE: "hybrid · minilm · tau 0.65"}
    onnx = BASE.replace("minilm@0.1.0", "minilm@0.1.0+onnx")
    # regression: "hybrid · minilm@0.1.0+onnx · tau 0.65" was cut in the sidebar
    assert signature_labels([onnx]) == {onnx: "hybrid · minilm+onnx · tau 0.65"}
    assert all(len(label) <= 31 for label in signature_labels([onnx]).values())


def test_a_version_is_named_where_only_it_tells_encoders_apart():
    newer = BASE.replace("minilm@0.1.0", "minilm@0.2.0")
    assert signature_labels([BASE, newer]) == {BASE: "minilm@0.1.0", newer: "minilm@0.2.0"}


def test_several_signatures_are_labelled_by_what_differs():
    kgx = BASE.replace("mode:hybrid", "mode:kgx").replace("align:yes", "align:no")
    mpnet = BASE.replace("minilm@0.1.0", "mpnet@0.2.0")
    labels = signature_labels([BASE, kgx, mpnet])
    assert labels == {
        BASE: "hybrid · minilm · align yes",
        kgx: "kgx · minilm · align no",
        mpnet: "hybrid · mpnet · align yes",
    }
    assert all(len(label) <= 36 for label in labels.values())  # fits the sidebar


def test_a_signature_that_does_not_parse_keeps_its_text():
    assert signature_labels([BASE, "odd"]) == {BASE: "hybrid · minilm · tau 0.65",
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


def test_a_first_start_shows_its_steps_and_leaves_grapheval_to_the_hallucinations_page(
    tmp_path, monkeypatch, minilm
):
    # Regression (issue 16): the first start showed one fixed spinner line, no title, no
    # steps, no elapsed time, and ran GraphEval before the first page could show.
    from store_helpers import REPO

    from s3kg_core.demo import pending_steps
    from s3kg_core.store.store import Store

    path = tmp_path / "fresh" / "s3kg.duckdb"
    monkeypatch.setenv("S3KG_DB", str(path))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "S3KG Workbench"
    status = at.get("status")[0]
    assert status.proto.label.startswith("Built the demo database") and status.proto.label.endswith(
        " s"
    )
    lines = [t.value for t in at.text]
    assert any(line.endswith("Importing 30 demo questions and 60 answers") for line in lines)
    assert any("recorded in kgs.jsonl" in line for line in lines), lines  # no spaCy
    assert any(line.split()[-1] == "done" for line in lines)
    assert [float(line.split()[0]) for line in lines] == sorted(
        float(line.split()[0]) for line in lines
    )  # elapsed seconds, in order
    assert pending_steps(Store(path, read_only=True)) == ("grapheval",)

    at.switch_page("pages/5_Hallucinations.py").run()
    assert not at.exception, [e.value for e in at.exception]
    labels = [e.proto.label for e in at.get("status")]
    assert any(label.startswith("Checked 60 demo answers") for label in labels), labels
    assert pending_steps(Store(path, read_only=True)) == ()
    assert not any("No GraphEval results" in i.value for i in at.info)
    at.switch_page("pages/5_Hallucinations.py").run()  # a second visit checks nothing again
    assert not any(e.proto.label.startswith("Checked") for e in at.get("status"))


def test_csv_bytes_escapes_formulas_in_cells_and_headers():
    """Regression (issue 28, item 8): the Overview's CSV download wrote `=2+5` as it was."""
    import csv
    import io

    import pandas as pd

    frame = pd.DataFrame(
        {"run": ["=2+5", "@SUM(1)", "+SUM(1)", "ok"], "cus": [0.1, -0.2, 0.3, 0.4]}
    ).assign(**{"=x": "y"})
    rows = list(csv.reader(io.StringIO(widgets_module.csv_bytes(frame).decode("utf-8"))))
    assert rows[0] == ["run", "cus", "'=x"]
    assert [r[0] for r in rows[1:]] == ["'=2+5", "'@SUM(1)", "'+SUM(1)", "ok"]
    assert [r[1] for r in rows[1:]] == ["0.1", "-0.2", "0.3", "0.4"]


def test_every_page_downloads_csv_through_the_escaping_widget():
    """One path for the dashboard's CSV downloads: widgets.csv_download (csv_bytes)."""
    from pathlib import Path

    root = Path(widgets_module.__file__).resolve().parents[1]
    sources = [*root.glob("pages/*.py"), *root.glob("dashboard/*.py"), root / "app.py"]
    direct = [
        p.name
        for p in sources
        if p.name != "widgets.py"
        and (".to_csv(" in (t := p.read_text(encoding="utf-8")) or "download_button(" in t)
    ]
    assert direct == []


def test_the_first_visit_line_never_says_it_checked_zero_answers():
    """Regression: a second start found the demo's GraphEval step done by the first and said
    "Checked 0 demo answers in 1 s"; it now says the answers had been checked already."""
    assert demo_check_line(0, 1.2) == "GraphEval had already checked the demo answers"
    assert demo_check_line(60, 41.6) == "Checked 60 demo answers in 42 s"
