"""Tests of dashboard/charts.py: one bar or box per run, escaped names, readable colours."""

from __future__ import annotations

import doctest
import json

import pandas as pd
import pytest

import dashboard.charts as charts_module
from dashboard.charts import (
    TAU_COLOURS,
    comparison_figure,
    distribution_figure,
    leaderboard_figure,
    run_labels,
    tau_figure,
    temperature_figure,
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
    by_run = {trace.name: trace for trace in fig.data}
    assert list(by_run) == [f"{MODEL} · T=0", f"{MODEL} · T=0.7"]  # one trace per run
    for name, (gold, ctx, cus) in zip(by_run, [(0.55, 0.50, 0.52), (0.45, 0.51, 0.48)],
                                      strict=True):  # fmt: skip
        assert list(by_run[name].x) == ["GoldSim", "CtxSim", "CUS"]
        assert list(by_run[name].y) == pytest.approx([gold, ctx, cus])
    assert all(max(t.y) <= 1.0 for t in fig.data)
    assert fig.layout.yaxis.range[0] == 0 and fig.layout.yaxis.range[1] <= 1.05
    assert fig.layout.legend.orientation == "h"  # the runs are named above the plot


def test_every_run_is_its_own_bar_when_extractors_differ():
    frame = pd.concat([board(), board().assign(extractor="llm:gpt", cus=[0.3, 0.2])])
    fig = leaderboard_figure(frame.reset_index(drop=True))
    names = [t.name for t in fig.data]
    assert len(names) == len(set(names)) == 4
    cus = sorted(t.y[2] for t in fig.data)
    assert cus == pytest.approx([0.2, 0.3, 0.48, 0.52])
    assert any("<br>llm:gpt" in n for n in names)


def test_each_dataset_is_a_facet_titled_by_its_name():
    frame = pd.concat([board(dataset="a"), board(dataset="b")]).reset_index(drop=True)
    fig = leaderboard_figure(frame)
    assert sorted(a.text for a in fig.layout.annotations) == ["a", "b"]
    assert fig.layout.xaxis.matches is None and fig.layout.xaxis2.matches is None


def test_the_distribution_has_one_box_per_run():
    rows = [
        {"dataset": "demo", "model": MODEL, "temperature": t, "extractor": EXTRACTOR,
         "item_id": i, "cus": 0.5}
        for t in (0.0, 0.7)
        for i in range(3)
    ]  # fmt: skip
    fig = distribution_figure(pd.DataFrame(rows), "cus")
    assert sorted(set(fig.data[0].x)) == [f"{MODEL} · T=0", f"{MODEL} · T=0.7"]


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
    rows = hostile.assign(item_id=1, run_id=1)
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
    per_run = board().assign(relation_mismatch=[1, 0], entity_mismatch=[0, 2], extra=[3, 1],
                             missing=[4, 4])  # fmt: skip
    fig = tau_figure(per_run, ["relation_mismatch", "entity_mismatch", "extra", "missing"])
    assert fig.layout.barmode == "relative"  # counts add up
    by_name = {t.name: t for t in fig.data}
    assert list(by_name) == ["relation mismatch", "entity mismatch", "extra", "missing"]
    assert list(by_name["extra"].y) == [3, 1] and list(by_name["missing"].y) == [4, 4]
    assert by_name["extra"].marker.color == TAU_COLOURS["extra"] == "#D55E00"
    assert by_name["missing"].marker.color == TAU_COLOURS["missing"] == "#0072B2"
    assert len(set(TAU_COLOURS.values())) == 4
    # not by colour alone: each category has its own fill pattern too
    shapes = {t.name: t.marker.pattern.shape for t in fig.data}
    assert len(set(shapes.values())) == 4
    # regression: the legend sat under the plot, over the ticks' second line (the temperature)
    assert "<br>T=0.7" in " ".join(by_name["extra"].x)
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


def test_long_names_are_cut_in_legends_and_titles_but_whole_in_hovers():
    long_model = "/models/" + "Meta-Llama-3.1-8B-Instruct-" * 3 + "Q4_K_M.gguf"
    long_dataset = "a-dataset-with-a-very-long-name-" * 3
    fig = leaderboard_figure(board(model=long_model, dataset=long_dataset))
    for trace in fig.data:
        shown = trace.name.split(" · T=")[0]
        assert len(shown) == 32 and shown.endswith("…")
        assert all(long_model in str(row) for row in trace.customdata)  # the hover: whole
    assert [a.text for a in fig.layout.annotations] == [long_dataset[:47] + "…"]
