"""bench/speed/bench_reference.py: the figures its --json writes (the docs render them)."""

from __future__ import annotations

import pytest

from bench.speed.bench_reference import figures


def test_figures_of_a_run():
    fig = figures(
        encoder="minilm", threads=1, n_sample=10, n_all=100, t_ref=20.0,
        t_sample={"onnx": [1.2, 1.0], "torch": [2.0, 2.5]}, t_all={"onnx": 5.0},
        starts={"reference": [6.0, 5.0], "onnx": [1.0], "torch": [5.0]},
        agreement={"onnx": (0.0, 1e-7), "torch": (0.0, 2e-7)},
    )  # fmt: skip
    ref, onnx, torch = fig["reference"], fig["backends"]["onnx"], fig["backends"]["torch"]
    assert ref["ms_per_pair"] == 2000 and ref["all_seconds_extrapolated"] == 200
    assert ref["start_seconds"] == 5.0
    assert onnx["sample_seconds"] == 1.0 and onnx["ratio_sample"] == 20  # the best of two runs
    assert onnx["ratio_all"] == 40 and onnx["all_ms_per_pair"] == 50
    assert onnx["ratio_sample_with_start"] == pytest.approx(25 / 2)
    assert onnx["ratio_all_with_start"] == pytest.approx(205 / 6)
    assert torch["ratio_all"] is None and torch["ratio_all_with_start"] is None  # --no-all
    assert torch["max_abs_d_sbert"] == 2e-7


def test_without_the_start_there_are_no_start_ratios():
    fig = figures(
        encoder="minilm", threads=None, n_sample=4, n_all=8, t_ref=4.0, t_sample={"torch": [1.0]},
        t_all={"torch": 2.0}, starts={"reference": [], "torch": []},
        agreement={"torch": (0.0, 0.0)},
    )  # fmt: skip
    run = fig["backends"]["torch"]
    assert fig["reference"]["start_seconds"] is None and run["start_seconds"] is None
    assert run["ratio_sample_with_start"] is None and run["ratio_all"] == 4


def test_other_modes_get_their_own_ratios_against_the_same_reference():
    fig = figures(
        encoder="minilm", threads=1, n_sample=10, n_all=100, t_ref=20.0,
        t_sample={"onnx": [1.0]}, t_all={"onnx": 5.0}, starts={"reference": [], "onnx": []},
        agreement={"onnx": (0.0, 0.0)},
        modes={"ot": {"backend": "onnx", "sample_seconds": [2.5, 2.0], "all_seconds": 8.0},
               "hybrid": {"backend": "onnx", "sample_seconds": [1.5]}},
    )  # fmt: skip
    ot, hybrid = fig["modes"]["ot"], fig["modes"]["hybrid"]
    assert ot["sample_seconds"] == 2.0 and ot["ratio_sample"] == 10  # the best of two runs
    assert ot["ratio_all"] == 25 and ot["all_ms_per_pair"] == 80 and ot["backend"] == "onnx"
    assert hybrid["ratio_all"] is None and hybrid["all_seconds"] is None  # --no-all
    assert "modes" not in figures(
        encoder="minilm", threads=1, n_sample=10, n_all=100, t_ref=20.0,
        t_sample={"onnx": [1.0]}, t_all={}, starts={"reference": [], "onnx": []},
        agreement={"onnx": (0.0, 0.0)},
    )  # fmt: skip
