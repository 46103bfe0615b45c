"""Tests of s3kg_core.report.svg: the charts are well-formed SVG, escaped, and honest."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

from s3kg_core.report.svg import histogram_svg, interval_svg

NS = "{http://www.w3.org/2000/svg}"


def test_histogram_bars_count_the_values():
    svg = ET.fromstring(histogram_svg({"a": [0.0, 0.01, 0.5, 0.99, 1.0]}, bins=4))
    titles = [
        r.find(f"{NS}title").text for r in svg.iter(f"{NS}rect") if r.find(f"{NS}title") is not None
    ]
    assert titles == ["a: 2 in [0.00, 0.25)", "a: 1 in [0.50, 0.75)", "a: 2 in [0.75, 1.00)"]


def test_labels_are_escaped_and_parse():
    hostile = '</svg><script>alert(1)</script>"'
    for svg in (
        histogram_svg({hostile: [0.5]}, title=hostile),
        interval_svg([(hostile, 0.1, 0.0, 0.2)], title=hostile),
    ):
        root = ET.fromstring(svg)  # well-formed: the label did not close anything
        assert not list(root.iter(f"{NS}script")) and "<script>" not in svg
        assert hostile in "".join(root.itertext())


def test_interval_rows_without_an_interval_draw_the_point_only():
    svg = ET.fromstring(interval_svg([("one", 0.3, math.nan, math.nan), ("two", 0.5, 0.4, 0.6)]))
    assert len(list(svg.iter(f"{NS}circle"))) == 2
    assert len(list(svg.iter(f"{NS}line"))) == 2  # the second row's interval and the axis


def test_changes_get_a_zero_line_and_red_drops():
    svg = interval_svg([("CUS", -0.04, -0.12, 0.01)], zero=True)
    root = ET.fromstring(svg)
    assert [c.get("fill") for c in root.iter(f"{NS}circle")] == ["#dc2626"]
    assert any(line.get("stroke-dasharray") for line in root.iter(f"{NS}line"))


def test_the_change_axis_ticks_are_evenly_spaced_round_values():
    """Issue 43 (item 11): the report's change axis read -0.04, -0.01, +0.02 ... (a quarter of
    the padded span each); its ticks are now multiples of a round step, 0 among them."""
    svg = interval_svg(
        [("CUS", -0.0443, -0.1244, 0.0114), ("GoldSim", -0.04, -0.12, 0.02)], zero=True
    )
    root = ET.fromstring(svg)
    axis = max(float(t.get("y")) for t in root.iter(f"{NS}text"))
    ticks = [float(t.text) for t in root.iter(f"{NS}text") if float(t.get("y")) == axis]
    steps = {round(b - a, 6) for a, b in itertools.pairwise(ticks)}
    assert len(ticks) >= 3 and len(steps) == 1 and 0.0 in ticks
    (step,) = steps
    assert step in (0.01, 0.02, 0.025, 0.05, 0.1)
    assert all(abs(t / step - round(t / step)) < 1e-6 for t in ticks)
