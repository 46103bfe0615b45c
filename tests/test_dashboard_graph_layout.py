"""Tests of dashboard.graph_layout: deterministic node skeletons and label boxes.

The components are packed in the browser (``linked_graphs.js``), the one packing there is: its
tests are in test_dashboard_browser.py (``test_the_browser_packs_components_for_its_frame``).
"""

from __future__ import annotations

import doctest
import itertools
import math
import random

import pytest

import dashboard.graph_layout as layout_module
from dashboard.graph_layout import LayoutCancelled, label_box, layout_graph, wrap_lines


def random_kg(seed: int, n: int) -> tuple[list[str], list[tuple[str, str]]]:
    rng = random.Random(seed)
    nodes = [f"entity number {i}" for i in range(n)]
    edges = [(nodes[rng.randrange(i)], nodes[i]) for i in range(1, n) if rng.random() < 0.8]
    return nodes, edges


def test_the_module_doctests_pass() -> None:
    result = doctest.testmod(layout_module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize(
    ("label", "wrap", "lines"),
    [
        ("short", 100, ["short"]),
        ("two words", 1000, ["two words"]),
        ("a rather long label of many words", 100, ["a rather", "long label", "of many", "words"]),
        ("supercalifragilistic", 60, ["superca", "lifragi", "listic"]),  # a long word is cut
        ("", 100, [""]),
    ],
)
def test_wrap_lines(label: str, wrap: float, lines: list[str]) -> None:
    assert wrap_lines(label, 14, wrap) == lines


def test_label_box_grows_with_the_label_and_wraps() -> None:
    short = label_box("atom", font_px=14, wrap_px=150)
    long = label_box("the University of Manchester in 1909", font_px=14, wrap_px=150)
    assert short.width < long.width <= 150
    assert long.height > short.height  # wrapped onto two lines
    assert short.left == short.right and short.top == short.bottom  # centred on the node


@pytest.mark.parametrize("seed", range(6))
def test_layout_is_deterministic_and_edges_have_the_target_length(seed: int) -> None:
    nodes, edges = random_kg(seed, 12 + 6 * seed)  # up to 42 nodes: both skeleton kinds
    first = layout_graph(nodes, edges, edge_px=120.0)
    again = layout_graph(list(nodes), list(edges), edge_px=120.0)
    assert first == again
    assert set(first.relative) == set(nodes) == set(first.component)
    for c in set(first.component.values()):  # each skeleton centred on its centroid
        members = [n for n in nodes if first.component[n] == c]
        assert abs(sum(first.relative[n][0] for n in members)) < 1e-6 * len(members) + 1e-6
    big = [(a, b) for a, b in edges if first.component[a] == 0]
    if len(big) >= 2:  # the median edge of a laid-out component is edge_px long
        lengths = sorted(math.dist(first.relative[a], first.relative[b]) for a, b in big)
        assert lengths[len(lengths) // 2] == pytest.approx(120.0, rel=0.02)


def test_components_are_numbered_largest_first_by_first_appearance() -> None:
    nodes = ["a", "b", "c", "d", "e", "f"]
    edges = [("a", "b"), ("c", "d"), ("d", "e")]
    lay = layout_graph(nodes, edges)
    assert lay.component == {"c": 0, "d": 0, "e": 0, "a": 1, "b": 1, "f": 2}


def test_skeletons_lie_with_their_longest_axis_horizontal() -> None:
    chain = [f"n{i}" for i in range(6)]
    edges = list(itertools.pairwise(chain))
    lay = layout_graph(chain, edges)
    xs = [lay.relative[n][0] for n in chain]
    ys = [lay.relative[n][1] for n in chain]
    assert max(xs) - min(xs) > 3 * (max(ys) - min(ys))
    assert lay.relative["n0"][0] < 0  # the first node on the left: the sign is fixed


def test_direction_and_repeated_edges_do_not_change_the_layout() -> None:
    nodes = ["a", "b", "c"]
    one = layout_graph(nodes, [("a", "b"), ("b", "c")])
    other = layout_graph(nodes, [("b", "a"), ("c", "b"), ("a", "b")])
    assert one.relative == other.relative


def test_a_layout_stops_when_asked_between_components() -> None:
    """Issue 28.5: the server laid out on for minutes after the browser left. The caller's
    check runs before each component; the work stops at the first "stop"."""
    nodes, edges = random_kg(1, 30)
    asked: list[int] = []

    def stop_after_two() -> bool:
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(LayoutCancelled, match="after 2 of"):
        layout_graph(nodes, edges, should_stop=stop_after_two)
    assert len(asked) == 3
    assert layout_graph(nodes, edges, should_stop=lambda: False) == layout_graph(nodes, edges)
