"""Tests of dashboard/charts.py: one bar or box per run, escaped names, readable colours."""

from __future__ import annotations

import doctest
import json

import numpy as np
import pandas as pd
import pytest
from oracle_helpers import score_histograms

import dashboard.charts as charts_module
from dashboard.charts import (
    TAU_COLOURS,
    comparison_figure,
    distribution_figure,
    leaderboard_figure,
    run_labels,
    tau_figure,
    temperature_figure,
    top_runs,
)

MODEL = "SmolLM2-135M-Instruct"
EXTRACTOR = "offline:en_core_web_sm"
HOSTILE = "<b>B0LD</b> <a href='http://127.0.0.1:9/'>L1NK</a>"


def board(model: str = MODEL, dataset: str = "demo") -> pd.DataFrame:
    """The demo's two runs: one model at T=0 and T=0.7, CUS about 0.5 each."""
    return pd.DataFrame(
        {
            "dataset": [dataset, dataset],
            "model": [model, model],
            "temperature": [0.0, 0.7],
            "extractor": [EXTRACTOR, EXTRACTOR],
            "n": [30, 30],
            "gold_sim": [0.55, 0.45],
            "ctx_sim": [0.50, 0.51],
            "cus": [0.52, 0.48],
        }
    )


def test_the_module_doctests_pass():
    assert doctest.testmod(charts_module).failed == 0


def test_regression_two_temperature_runs_of_one_model_are_two_bars_not_one_stack():
    # The "By model" chart had x=model: the T=0 and T=0.7 runs stacked into one bar of
    # 0.52 + 0.48, clipped at 1.0, while the table said about 0.5.
    fig = leaderboard_figure(board())
    assert fig.layout.barmode == "group"
    by_score = {trace.name: trace for trace in fig.data}
    assert sorted(by_score) == ["CUS", "CtxSim", "GoldSim"]  # one trace per score
    for name, values in (("GoldSim", [0.45, 0.55]), ("CtxSim", [0.51, 0.50]),
                         ("CUS", [0.48, 0.52])):  # fmt: skip
        assert by_score[name].orientation == "h"
        assert list(by_score[name].y) == [f"{MODEL} · T=0.7", f"{MODEL} · T=0"]  # best on top
        assert list(by_score[name].x) == pytest.approx(values)
    assert all(max(t.x) <= 1.0 for t in fig.data)
    assert fig.layout.xaxis.range[0] == 0 and fig.layout.xaxis.range[1] <= 1.1
    assert fig.layout.legend.orientation == "h"  # the scores are named above the plot


def test_every_run_is_its_own_bar_when_extractors_differ():
    frame = pd.concat([board(), board().assign(extractor="llm:gpt", cus=[0.3, 0.2])])
    fig = leaderboard_figure(frame.reset_index(drop=True))
    cus = next(t for t in fig.data if t.name == "CUS")
    assert len(cus.y) == len(set(cus.y)) == 4
    assert sorted(cus.x) == pytest.approx([0.2, 0.3, 0.48, 0.52])
    assert any(" · llm:gpt" in n for n in cus.y)


def forty_runs(datasets: int = 1) -> pd.DataFrame:
    """40 runs per dataset: 8 models x 5 temperatures, CUS spread over (0.2, 0.8)."""
    rows = [
        {"dataset": f"data{d}", "model": f"model-{m}", "temperature": t / 4,
         "extractor": EXTRACTOR, "n": 5000, "gold_sim": 0.5, "ctx_sim": 0.5,
         "cus": 0.2 + 0.6 * (m * 5 + t) / 40, "run_id": 100 * d + m * 5 + t}
        for d in range(datasets) for m in range(8) for t in range(5)
    ]  # fmt: skip
    return pd.DataFrame(rows)


def test_forty_runs_get_forty_run_named_ticks_in_the_run_and_tau_charts():
    """Issue 33: 40 runs coloured from a 7-colour list could not be matched to their bars; the
    TAU chart's two-line ticks overlapped from 10 runs. Each run now has its own named row."""
    runs = forty_runs()
    fig = leaderboard_figure(runs)
    ticks = set(next(t for t in fig.data if t.name == "CUS").y)
    assert len(ticks) == 40
    assert fig.layout.height >= 40 * 30  # a row per run, never squeezed
    tau = runs.assign(relation_mismatch=1, entity_mismatch=2, extra=3, missing=4)
    fig = tau_figure(tau, ["relation_mismatch", "entity_mismatch", "extra", "missing"])
    assert all(len(set(t.y)) == 40 and t.orientation == "h" for t in fig.data)
    assert not any("<br>" in label for t in fig.data for label in t.y)  # one line each
    assert fig.layout.height >= 40 * 20


def test_top_runs_keeps_the_best_of_each_dataset_and_the_chart_facets_per_dataset():
    runs = forty_runs(datasets=2)
    top = top_runs(runs, 12)
    assert top.groupby("dataset").size().tolist() == [12, 12]
    assert top.groupby("dataset")["cus"].min().round(2).tolist() == [0.62, 0.62]
    assert top_runs(runs, None) is runs
    fig = leaderboard_figure(top)
    assert sorted(a.text for a in fig.layout.annotations) == ["data0", "data1"]
    assert fig.layout.yaxis.matches is None and fig.layout.yaxis2.matches is None


def test_each_dataset_is_a_facet_titled_by_its_name():
    frame = pd.concat([board(dataset="a"), board(dataset="b")]).reset_index(drop=True)
    fig = leaderboard_figure(frame)
    assert sorted(a.text for a in fig.layout.annotations) == ["a", "b"]
    assert fig.layout.yaxis.matches is None and fig.layout.yaxis2.matches is None


def answers(runs: int = 2, per_run: int = 3) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"dataset": "demo", "model": MODEL, "temperature": t / 10, "extractor": EXTRACTOR,
             "run_id": t + 1, "item_id": i, "cus": i / per_run}
            for t in range(runs)
            for i in range(per_run)
        ]
    )  # fmt: skip


def test_the_distribution_is_a_histogram_row_per_run_not_a_point_per_answer():
    """Issue 33: the box plot sent every answer (8.8 MB at 100,000 answers)."""
    rows = answers(runs=2, per_run=3)
    hist = score_histograms(rows, "cus", bins=10)
    assert len(hist) == 2 * 10 and hist.groupby("run_id")["answers"].sum().tolist() == [3, 3]
    fig = distribution_figure(hist, "cus")
    assert sorted(set(fig.data[0].y)) == [f"{MODEL} · T=0", f"{MODEL} · T=0.1"]
    big = score_histograms(answers(runs=20, per_run=5000), "cus")
    assert len(distribution_figure(big, "cus").to_json()) < 40_000


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _unescaped(fig) -> list[str]:
    return [s for s in _strings(json.loads(fig.to_json())) if "B0LD" in s and "<b>" in s]


def test_names_reach_every_figure_escaped():
    hostile = board(model=HOSTILE, dataset=HOSTILE).assign(extractor=HOSTILE)
    tau = hostile.assign(relation_mismatch=1, entity_mismatch=0, extra=2, missing=3)
    rows = score_histograms(hostile.assign(item_id=1, run_id=[1, 2]), "cus")
    deltas = pd.DataFrame(
        {"item_id": [1], "ext_id": [HOSTILE], "question": [HOSTILE], "cus_a": [0.5],
         "cus_b": [0.4], "d_cus": [-0.1]}
    )  # fmt: skip
    figures = [
        leaderboard_figure(hostile),
        temperature_figure(hostile),
        distribution_figure(rows, "cus"),
        tau_figure(tau, ["relation_mismatch", "entity_mismatch", "extra", "missing"]),
        comparison_figure(deltas),
    ]
    for fig in figures:
        text = fig.to_json()
        assert "B0LD" in text  # the name is shown ...
        assert _unescaped(fig) == []  # ... as text
        assert "&lt;b&gt;B0LD" in text


def test_tau_bars_stack_counts_per_run_in_colour_blind_safe_colours():
    categories = ["relation_mismatch", "entity_mismatch", "roles_swapped", "extra", "missing"]
    per_run = board().assign(relation_mismatch=[1, 0], entity_mismatch=[0, 2],
                             roles_swapped=[2, 0], extra=[3, 1], missing=[4, 4])  # fmt: skip
    fig = tau_figure(per_run, categories)
    assert fig.layout.barmode == "relative"  # counts add up
    by_name = {t.name: t for t in fig.data}
    assert list(by_name) == [
        "relation mismatch", "entity mismatch", "roles swapped", "extra", "missing"
    ]  # fmt: skip
    extra = dict(zip(by_name["extra"].y, by_name["extra"].x, strict=True))
    assert extra == {f"{MODEL} · T=0": 3, f"{MODEL} · T=0.7": 1}
    assert list(by_name["missing"].x) == [4, 4]
    assert by_name["extra"].marker.color == TAU_COLOURS["extra"] == "#D55E00"
    assert by_name["missing"].marker.color == TAU_COLOURS["missing"] == "#0072B2"
    assert by_name["roles swapped"].marker.color == TAU_COLOURS["roles swapped"] == "#E69F00"
    assert len(set(TAU_COLOURS.values())) == 5
    # not by colour alone: each category has its own fill pattern too
    shapes = {t.name: t.marker.pattern.shape for t in fig.data}
    assert len(set(shapes.values())) == 5
    # regression: the legend sat under the plot, over the ticks' second line (the temperature)
    assert f"{MODEL} · T=0.7" in by_name["extra"].y
    assert fig.layout.legend.y >= 1 and fig.layout.legend.yanchor == "bottom"


def test_run_labels_name_the_extractor_only_where_it_varies():
    assert run_labels(board()).tolist() == [f"{MODEL} · T=0", f"{MODEL} · T=0.7"]
    two = board().assign(extractor=["a", "b"])
    assert run_labels(two).tolist() == [f"{MODEL} · T=0<br>a", f"{MODEL} · T=0.7<br>b"]


def test_the_comparison_bars_run_from_the_biggest_regression():
    deltas = pd.DataFrame(
        {"item_id": [3, 1, 2], "ext_id": ["c", "a", "b"], "question": ["?"] * 3,
         "cus_a": [0.9, 0.5, 0.2], "cus_b": [0.1, 0.5, 0.6], "d_cus": [-0.8, 0.0, 0.4]}
    )  # fmt: skip
    fig = comparison_figure(deltas)
    bars = {t.name: (list(t.x), list(t.y)) for t in fig.data}
    assert bars["worse"] == ([1], [pytest.approx(-0.8)])
    assert bars["same"] == ([2], [0.0])
    assert bars["better"] == ([3], [pytest.approx(0.4)])


def test_thousands_of_compared_questions_draw_evenly_spaced_bars():
    """Issue 33: 5,000 shared questions sent 5,000 bars (0.66 MB) on every rerun."""
    n = 5_000
    deltas = pd.DataFrame(
        {"item_id": range(n), "ext_id": [str(i) for i in range(n)], "question": ["?"] * n,
         "cus_a": [0.5] * n, "cus_b": [0.5] * n, "d_cus": np.linspace(-1, 1, n)}
    )  # fmt: skip
    fig = comparison_figure(deltas, bars=100)
    ranks = sorted(x for t in fig.data for x in t.x)
    assert len(ranks) == 100 and ranks[0] == 1 and ranks[-1] == n  # both ends kept
    ys = sorted(y for t in fig.data for y in t.y)
    assert ys[0] == pytest.approx(-1.0) and ys[-1] == pytest.approx(1.0)
    assert len(comparison_figure(deltas.head(50), bars=100).data[0].x) <= 50  # all of a few


def test_long_names_are_cut_in_legends_and_titles_but_whole_in_hovers():
    long_model = "/models/" + "Meta-Llama-3.1-8B-Instruct-" * 3 + "Q4_K_M.gguf"
    long_dataset = "a-dataset-with-a-very-long-name-" * 3
    fig = leaderboard_figure(board(model=long_model, dataset=long_dataset))
    for trace in fig.data:
        shown = trace.y[0].split(" · T=")[0]
        assert len(shown) == 32 and shown.endswith("…")
        assert all(long_model in str(row) for row in trace.customdata)  # the hover: whole
    assert [a.text for a in fig.layout.annotations] == [long_dataset[:47] + "…"]
