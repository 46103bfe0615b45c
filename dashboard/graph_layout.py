"""Deterministic, label-aware node skeletons for the dashboard's KG pictures.

vis-network's physics moves nodes on every load and ignores labels, so a dense KG ends up with
labels piled on each other and a different picture each time. This module gives every node its
place once, in Python, so that the picture is the same on every load and does not move when a
slider moves: every weakly connected component is laid out on its own as a *skeleton*
(Kamada-Kawai up to 20 nodes, which starts from a circle and has no random state; a seeded
spring layout above, as Kamada-Kawai's time grows fast; one or two nodes are placed directly),
turned so that its longest axis is horizontal, edges scaled to a length that leaves room for
relation labels. :func:`label_box` estimates the box a label is drawn in.

A node is drawn as its label inside a small rectangle (vis-network's ``box`` shape): the most
compact way to show a label, so a frame holds more nodes at a legible size.

The browser does the rest (``linked_graphs.js``): it packs the components' skeletons in shelves
for the real size of its frame with the label boxes vis-network measured, fills the frame,
pushes overlapping boxes apart and picks the largest scale at which nothing overlaps (see
:mod:`dashboard.graphs`). Packing lives only there: the frame's size and the measured boxes are
only known there. This module imports neither streamlit nor vis-network.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from s3kg_core.errors import LayoutCancelled

__all__ = ["Box", "GraphLayout", "LayoutCancelled", "label_box", "layout_graph", "wrap_lines"]

#: Canvas pixels per character of a 1 px font: a generous average for sans-serif text.
CHAR_EM = 0.55
#: Line height of a wrapped label, in font sizes.
LINE_EM = 1.25
#: Components up to this size get a Kamada-Kawai skeleton, larger ones a seeded spring layout.
_KK_NODES = 20


@dataclass(frozen=True)
class Box:
    """The extent of a node's drawing around its centre, in canvas pixels (all >= 0)."""

    left: float
    right: float
    top: float
    bottom: float

    @property
    def width(self) -> float:
        """Left to right."""
        return self.left + self.right

    @property
    def height(self) -> float:
        """Top to bottom."""
        return self.top + self.bottom


@dataclass(frozen=True)
class GraphLayout:
    """Node skeletons of one KG picture.

    Attributes
    ----------
    component
        Node id -> index of its component (0 is the largest).
    relative
        Node id -> ``(x, y)`` of the component's skeleton (edges about ``edge_px`` long,
        longest axis horizontal) relative to its centroid: what the browser packs and fits to
        its frame.
    """

    component: dict[str, int]
    relative: dict[str, tuple[float, float]]


def wrap_lines(label: str, font_px: float, wrap_px: float) -> list[str]:
    """The lines a label wraps into at ``wrap_px`` (greedy, at spaces, as vis-network does).

    Examples
    --------
    >>> wrap_lines("the gold foil experiment of 1909", 10, 80)
    ['the gold foil', 'experiment of', '1909']
    >>> wrap_lines("short", 10, 100)
    ['short']
    """
    per_line = max(1, int(wrap_px / (CHAR_EM * font_px)))
    lines: list[str] = []
    current = ""
    for word in label.split():
        while len(word) > per_line:  # a word longer than a line is cut, as vis-network does
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:per_line])
            word = word[per_line:]
        candidate = f"{current} {word}" if current else word
        if len(candidate) <= per_line:
            current = candidate
        else:
            lines.append(current)
            current = word
    if current or not lines:
        lines.append(current)
    return lines


@lru_cache(maxsize=8192)
def label_box(
    label: str,
    *,
    font_px: float,
    wrap_px: float,
    padding: tuple[float, float, float, float] = (9.0, 7.0, 5.0, 7.0),
) -> Box:
    """The box of a node drawn as its label inside a rectangle (an estimate).

    Parameters
    ----------
    label
        The node's text.
    font_px, wrap_px
        Font size, and the widest the box may be before the label wraps (vis-network's
        ``widthConstraint.maximum``).
    padding
        Space inside the box around the text: top, right, bottom, left.

    Examples
    --------
    >>> b = label_box("Marie Curie", font_px=14, wrap_px=150)
    >>> round(b.width), round(b.height)
    (99, 32)
    """
    top, right, bottom, left = padding
    lines = wrap_lines(label, font_px, wrap_px - left - right)
    text_w = max(len(line) for line in lines) * CHAR_EM * font_px
    width = min(text_w + left + right, max(wrap_px, left + right + CHAR_EM * font_px))
    height = len(lines) * LINE_EM * font_px + top + bottom
    return Box(width / 2, width / 2, height / 2, height / 2)


def layout_graph(
    nodes: Sequence[str],
    edges: Sequence[tuple[str, str]],
    *,
    edge_px: float = 130.0,
    should_stop: Callable[[], bool] | None = None,
) -> GraphLayout:
    """Place the nodes of a KG: every component laid out alone as a skeleton.

    Parameters
    ----------
    nodes
        Node ids in order of first appearance (the order breaks ties, so it fixes the picture).
    edges
        ``(from, to)`` pairs; direction and repeats do not matter for the layout.
    edge_px
        Target length of an edge, in canvas pixels (room for its relation label).
    should_stop
        Asked before each component: ``True`` stops the work (:class:`LayoutCancelled`).

    Returns
    -------
    GraphLayout
        The same skeletons for the same input, always.

    Raises
    ------
    LayoutCancelled
        If ``should_stop`` said so.

    Examples
    --------
    >>> lay = layout_graph(list("abcd"), [("a", "b"), ("b", "c")])
    >>> sorted(lay.component.items())
    [('a', 0), ('b', 0), ('c', 0), ('d', 1)]
    >>> lay == layout_graph(list("abcd"), [("a", "b"), ("b", "c")])
    True
    >>> layout_graph(list("ab"), [], should_stop=lambda: True)
    Traceback (most recent call last):
    ...
    s3kg_core.errors.LayoutCancelled: layout stopped after 0 of 2 components
    """
    order = {n: i for i, n in enumerate(dict.fromkeys(nodes))}
    adjacency: dict[str, set[str]] = {n: set() for n in order}
    for a, b in edges:
        if a in adjacency and b in adjacency and a != b:
            adjacency[a].add(b)
            adjacency[b].add(a)
    components = _components(list(order), adjacency)
    relative: dict[str, tuple[float, float]] = {}
    component: dict[str, int] = {}
    for index, members in enumerate(components):
        if should_stop is not None and should_stop():
            raise LayoutCancelled(f"layout stopped after {index} of {len(components)} components")
        skeleton = _upright(_place_component(members, adjacency, order, edge_px), members)
        sx = sum(x for x, _ in skeleton.values()) / len(skeleton)
        sy = sum(y for _, y in skeleton.values()) / len(skeleton)
        for n in members:
            relative[n] = (skeleton[n][0] - sx, skeleton[n][1] - sy)
            component[n] = index
    return GraphLayout(component, relative)


# -- helpers --------------------------------------------------------------------------------------


def _components(nodes: list[str], adjacency: Mapping[str, set[str]]) -> list[list[str]]:
    """Connected components, largest first, ties by first appearance; members in order."""
    seen: set[str] = set()
    found: list[list[str]] = []
    for start in nodes:
        if start in seen:
            continue
        stack, members = [start], []
        seen.add(start)
        while stack:
            n = stack.pop()
            members.append(n)
            for m in sorted(adjacency[n]):
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        found.append(members)
    position = {n: i for i, n in enumerate(nodes)}
    for members in found:
        members.sort(key=position.__getitem__)
    found.sort(key=lambda c: (-len(c), position[c[0]]))
    return found


def _place_component(
    members: list[str],
    adjacency: Mapping[str, set[str]],
    order: Mapping[str, int],
    edge_px: float,
) -> dict[str, tuple[float, float]]:
    if len(members) == 1:
        return {members[0]: (0.0, 0.0)}
    if len(members) == 2:
        return {members[0]: (0.0, 0.0), members[1]: (edge_px, 0.0)}
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(members)  # in order: the circle KK starts from follows it
    graph.add_edges_from(
        (a, b) for a in members for b in sorted(adjacency[a], key=order.__getitem__) if a < b
    )
    if len(members) <= _KK_NODES:
        raw = nx.kamada_kawai_layout(graph)
    else:
        raw = nx.spring_layout(graph, seed=7, iterations=100)
    # scale so that the median edge has the target length
    lengths = sorted(
        math.dist(raw[a], raw[b]) for a, b in graph.edges if math.dist(raw[a], raw[b]) > 0
    )
    unit = lengths[len(lengths) // 2] if lengths else 1.0
    factor = edge_px / unit
    return {n: (float(raw[n][0]) * factor, float(raw[n][1]) * factor) for n in members}


def _upright(
    placed: dict[str, tuple[float, float]], members: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Turn a component so that its longest axis is horizontal (sign fixed by node order)."""
    if len(members) < 2:
        return placed
    xs = [placed[n][0] for n in members]
    ys = [placed[n][1] for n in members]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    angle = 0.5 * math.atan2(2 * sxy, sxx - syy)
    c, s = math.cos(-angle), math.sin(-angle)
    out = {
        n: ((x - mx) * c - (y - my) * s, (x - mx) * s + (y - my) * c)
        for n, (x, y) in placed.items()
    }
    if out[members[0]][0] > 0:  # the first node on the left
        out = {n: (-x, -y) for n, (x, y) in out.items()}
    return {n: (round(x, 6), round(y, 6)) for n, (x, y) in out.items()}
