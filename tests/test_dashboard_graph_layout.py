"""Tests of dashboard.graph_layout: deterministic, label-aware node positions."""

from __future__ import annotations

import doctest
import itertools
import random

import pytest

import dashboard.graph_layout as layout_module
from dashboard.graph_layout import Box, label_box, layout_graph, pack_components, wrap_lines


def boxes_of(labels: dict[str, str]) -> dict[str, Box]:
    return {n: label_box(lb, font_px=14, wrap_px=150) for n, lb in labels.items()}


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
def test_layout_is_deterministic_and_components_never_overlap(seed: int) -> None:
    nodes, edges = random_kg(seed, 12 + 6 * seed)  # up to 42 nodes: both skeleton kinds
    boxes = boxes_of({n: n for n in nodes})
    first = layout_graph(nodes, edges, boxes)
    again = layout_graph(list(nodes), list(edges), dict(boxes))
    assert first == again
    assert set(first.positions) == set(nodes) == set(first.relative)
    extents = {}
    for n, (x, y) in first.positions.items():
        c, b = first.component[n], boxes[n]
        e = extents.get(c, (x - b.left, x + b.right, y - b.top, y + b.bottom))
        extents[c] = (
            min(e[0], x - b.left),
            max(e[1], x + b.right),
            min(e[2], y - b.top),
            max(e[3], y + b.bottom),
        )
    frames = list(extents.values())
    for i, a in enumerate(frames):
        for b in frames[i + 1 :]:
            assert (
                min(a[1], b[1]) <= max(a[0], b[0]) + 1e-6
                or min(a[3], b[3]) <= max(a[2], b[2]) + 1e-6
            )
    # everything in the packed picture, top-left at (0, 0)
    assert min(x - boxes[n].left for n, (x, _) in first.positions.items()) >= -1e-6
    assert min(y - boxes[n].top for n, (_, y) in first.positions.items()) >= -1e-6
    assert first.area > 0


def test_components_are_numbered_largest_first_by_first_appearance() -> None:
    nodes = ["a", "b", "c", "d", "e", "f"]
    edges = [("a", "b"), ("c", "d"), ("d", "e")]
    lay = layout_graph(nodes, edges, boxes_of({n: n for n in nodes}))
    assert lay.component == {"c": 0, "d": 0, "e": 0, "a": 1, "b": 1, "f": 2}


def test_skeletons_lie_with_their_longest_axis_horizontal() -> None:
    chain = [f"n{i}" for i in range(6)]
    edges = list(itertools.pairwise(chain))
    lay = layout_graph(chain, edges, boxes_of({n: n for n in chain}))
    xs = [lay.relative[n][0] for n in chain]
    ys = [lay.relative[n][1] for n in chain]
    assert max(xs) - min(xs) > 3 * (max(ys) - min(ys))
    assert lay.relative["n0"][0] < 0  # the first node on the left: the sign is fixed


def test_direction_and_repeated_edges_do_not_change_the_layout() -> None:
    nodes = ["a", "b", "c"]
    boxes = boxes_of({n: n for n in nodes})
    one = layout_graph(nodes, [("a", "b"), ("b", "c")], boxes)
    other = layout_graph(nodes, [("b", "a"), ("c", "b"), ("a", "b")], boxes)
    assert one.positions == other.positions


def test_packing_follows_the_frame_shape() -> None:
    comps = [[(f"c{i}", (0.0, 0.0), Box(20, 20, 10, 10))] for i in range(6)]
    wide, w1, h1 = pack_components(comps, aspect=12.0, gap=0)
    tall, w2, h2 = pack_components(comps, aspect=1 / 6, gap=0)
    assert (w1, h1) == (240.0, 20.0) and (w2, h2) == (40.0, 120.0)
    assert len({y for _, y in wide.values()}) == 1
    assert len({x for x, _ in tall.values()}) == 1
    assert pack_components([], aspect=1.0, gap=0) == ({}, 0.0, 0.0)
