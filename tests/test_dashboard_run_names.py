"""Tests of dashboard/run_names.py: one label per run that tells same-named runs apart."""

from __future__ import annotations

import doctest

import pandas as pd

import dashboard.run_names as module
from dashboard.run_names import run_label_map


def _runs(**columns: list) -> pd.DataFrame:
    base = {
        "run_id": [1, 2],
        "model": ["SmolLM2-135M-Instruct"] * 2,
        "temperature": [0.0, 0.7],
        "extractor": ["offline"] * 2,
        "dataset": ["demo"] * 2,
    }
    return pd.DataFrame({**base, **columns})


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_the_demo_runs_read_apart_by_temperature():
    """Regression (issue 31): both demo runs read "SmolLM2-135M-Instruct" on the Overview."""
    assert run_label_map(_runs()) == {
        1: "SmolLM2-135M-Instruct · T=0",
        2: "SmolLM2-135M-Instruct · T=0.7",
    }


def test_a_display_name_alone_when_no_other_run_has_it():
    labels = run_label_map(_runs(model=["baseline", "SmolLM2-135M-Instruct"]))
    assert labels == {1: "baseline", 2: "SmolLM2-135M-Instruct"}


def test_only_the_settings_that_differ_are_added_then_the_id():
    labels = run_label_map(_runs(temperature=[0.0, 0.0], extractor=["offline", "llm"]))
    assert labels == {1: "SmolLM2-135M-Instruct · offline", 2: "SmolLM2-135M-Instruct · llm"}
    labels = run_label_map(_runs(temperature=[0.0, 0.0]))
    assert labels == {1: "SmolLM2-135M-Instruct · run 1", 2: "SmolLM2-135M-Instruct · run 2"}


def test_labels_are_distinct_even_when_a_name_looks_like_another_s_label():
    runs = pd.DataFrame(
        {"run_id": [1, 2, 3], "model": ["m", "m", "m · T=0"], "temperature": [0.0, 0.7, 0.0]}
    )
    labels = run_label_map(runs)
    assert len(set(labels.values())) == 3
    assert labels[2] == "m · T=0.7"


def test_labels_are_plain_text_never_rewritten():
    hostile = "<b>x</b> **y**"
    assert run_label_map(_runs(model=[hostile, "other"]))[1] == hostile
