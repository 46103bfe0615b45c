r"""Knowledge-graph pictures for the dashboard: the linked document, offline.

:func:`linked_graphs_html` draws one or more KGs side by side (gold, answer and context in the
Sample explorer, Failure analysis and Annotate; the answer KG alone on the Hallucinations page)
and, optionally, a triple table, as one self-contained HTML page for ``st.iframe``. Node
skeletons come from :mod:`dashboard.graph_layout` (deterministic); the page's script packs them for
its frame and vis-network draws them. Its
script is pyvis's bundled copy of vis-network 9.1.2, inlined, so nothing is fetched from another
host. It never imports streamlit, so it is tested without a browser.

Notes
-----
Safety of label text: every label, title and note reaches the page as JSON inside ``<script>``
with ``<``, ``>`` and ``&`` written as ``\u003c``, ``\u003e`` and ``\u0026`` (no label can
close the script or open a tag), and the page's script puts text on the page with
``textContent`` / ``innerText`` only; vis-network draws labels on the canvas as plain text.
A page that would still load anything from the network raises :class:`GraphRenderError`.
"""

from __future__ import annotations

import html
import json
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from dashboard.graph_layout import GraphLayout, label_box, layout_graph
from s3kg_core.errors import GraphRenderError
from s3kg_core.resources import package_path

__all__ = [
    "HIGHLIGHT_COLOUR",
    "LINKED_STYLE",
    "PALETTE",
    "UNMATCHED_COLOUR",
    "GraphPanel",
    "LinkedDocument",
    "LinkedRow",
    "LinkedStyle",
    "PanelEdge",
    "PanelNode",
    "badge_text",
    "contrast_with_white",
    "linked_graphs_html",
    "short_label",
]

#: Twelve colour-blind-safe colours (Okabe-Ito without its black and yellow, then Paul Tol's
#: "muted" set without its sand), in an order that keeps neighbours apart. Each has a contrast of
#: at least 2.2:1 against white, so no aligned node fades into the page; the badges (``E1``,
#: ``E2``, ...) tell entities apart where colours repeat or look alike.
PALETTE: tuple[str, ...] = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#d55e00",
    "#cc79a7",
    "#56b4e9",
    "#332288",
    "#999933",
    "#882255",
    "#44aa99",
    "#aa4499",
    "#117733",
)
HIGHLIGHT_COLOUR = "#d62728"
UNMATCHED_COLOUR = "#c8c8c8"
_HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
# Anything in the finished page that would still load a remote resource.
_REMOTE_ANY = re.compile(
    r"<(?:script|link|img|iframe|source|embed)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//",
    re.I,
)


def _check_colour(colour: object, what: str) -> None:
    if not isinstance(colour, str) or not _HEX.fullmatch(colour):
        raise GraphRenderError(f"{what} must be a hex colour like '#1f77b4'; got {colour!r:.40}")


# -- the linked document: three KGs and a triple table, one page -------------------------------


@dataclass(frozen=True)
class LinkedStyle:
    """Sizes of the linked document, in CSS pixels at scale 1 (see :func:`linked_graphs_html`).

    The browser draws each picture at the largest of ``scales`` at which its labels fit the
    frame without overlapping (boxes with room between them first, then tightly packed rows),
    as a last resort at ``last_scale`` with the fewest overlaps, never smaller: node labels show
    at ``node_font * last_scale`` pixels or more and edge labels at ``edge_font * last_scale``,
    12.9 and 10.3 px with the defaults (13.5 and 10.8 px wherever ``min(scales)`` suffices;
    at 14 px the entity labels came out at 12.04 to 12.6 px and OCR read 92 % of them, issue 58).
    Only a picture of more than ``max_nodes`` nodes (a whole KG the user asked for) may go down
    to ``big_scales``. An edge shows its relation whole, on lines of at most ``edge_wrap``
    pixels, up to ``edge_label_chars`` characters (:func:`short_label`; the tooltip has it
    whole). The triple table shows every row up to
    ``table_max_px`` high, then scrolls, a line above it saying which rows show; the frame is
    sized to its content (``height`` is the estimate for ``table_rows`` rows of ``row_px``).
    """

    node_font: int = 15
    edge_font: int = 12
    badge_font: int = 12
    node_wrap: int = 150
    edge_wrap: int = 110
    canvas_px: int = 470
    scales: tuple[float, ...] = (1.15, 1.05, 0.97, 0.9)
    last_scale: float = 0.86
    big_scales: tuple[float, ...] = (0.8, 0.7, 0.6, 0.5)
    max_nodes: int = 40
    max_stretch: float = 2.0
    edge_px: float = 120.0
    margin_px: float = 8.0
    pad_px: int = 8
    gap_px: int = 18
    table_rows: int = 8
    row_px: int = 27
    table_max_px: int = 620
    edge_label_chars: int = 48
    doc_width_px: int = 980
    min_share: float = 0.22
    empty_share: float = 0.19
    font_face: str = "Arial, Liberation Sans, Helvetica, sans-serif"


#: The default :class:`LinkedStyle`.
LINKED_STYLE = LinkedStyle()

_NEUTRAL_BORDER = "#9a9a9a"
_NEUTRAL_FILL = "#f3f3f3"
_VIS_JS = ("lib", "vis-9.1.2", "vis-network.min.js")
_ASSETS = package_path("dashboard", "assets")


@dataclass(frozen=True)
class PanelNode:
    """A node of a linked picture.

    Attributes
    ----------
    id
        Unique within its picture (the normalised label).
    label
        The text drawn (raw, as in the KG); vis-network draws it on the canvas as text.
    colour
        Fill, ``#rrggbb``.
    badges
        The answer entities it stands for (``("E3",)``); empty for an unmatched node.
    title
        Tooltip text (shown with ``innerText``).
    """

    id: str
    label: str
    colour: str = UNMATCHED_COLOUR
    badges: tuple[str, ...] = ()
    title: str = ""


@dataclass(frozen=True)
class PanelEdge:
    """An edge of a linked picture: one triple, ``triple`` indexing :attr:`GraphPanel.triples`.

    ``marked`` draws it in :data:`HIGHLIGHT_COLOUR`, thicker, whatever is highlighted (the
    Annotate page marks the triples of TAU's proposed pairs).
    """

    source: str
    target: str
    label: str
    triple: int
    marked: bool = False


@dataclass(frozen=True)
class GraphPanel:
    """One picture of the linked document.

    Attributes
    ----------
    key
        ``"gold"``, ``"answer"`` or ``"context"`` (the table's columns refer to these).
    title, subtitle, note
        Header texts (escaped: they are set with ``textContent``).
    nodes, edges
        What is drawn, in order.
    triples
        Every triple of the KG as ``(head id, relation, tail id, head label, tail label)``, drawn
        or not; edges and table rows index into it.
    empty
        Shown instead of a picture when there is no node.
    """

    key: str
    title: str
    subtitle: str
    nodes: tuple[PanelNode, ...]
    edges: tuple[PanelEdge, ...]
    triples: tuple[tuple[str, str, str, str, str], ...]
    note: str = ""
    empty: str = "no triples"


@dataclass(frozen=True)
class LinkedRow:
    """A row of the triple table: an answer triple and its matches.

    Attributes
    ----------
    links
        Panel key -> index into that panel's ``triples`` (``None``: no match there).
    matches
        ``"gold"`` / ``"context"`` -> ``{"other", "cosine", "exact", "parts", "partners",
        "aligned"}`` (see :class:`dashboard.explorer.TripleMatch`; ``other`` indexes the
        panel's ``triples``), or ``None``. ``parts``, ``partners`` and ``aligned`` follow the
        answer triple as shown; where the scorer read it turned round they are reversed and
        ``"reading"`` is its key (``"alexander fleming discover penicillin"``).
    number
        The number the table shows for the row (default: its position, from 1).
    """

    links: dict[str, int | None]
    matches: dict[str, dict[str, Any] | None]
    number: int | None = None


@dataclass(frozen=True)
class LinkedDocument:
    """The page and the height its frame needs."""

    html: str
    height: int


def linked_graphs_html(
    panels: Sequence[GraphPanel],
    rows: Sequence[LinkedRow],
    *,
    tau: float,
    hint: str = "",
    columns: Sequence[tuple[str, str]] = (),
    state_key: str = "",
    style: LinkedStyle = LINKED_STYLE,
    should_stop: Callable[[], bool] | None = None,
    no_match: str = "no triple to match",
) -> LinkedDocument:
    """Render pictures side by side and a triple table as one offline, linked HTML document.

    Hovering or clicking a node highlights it and every node with one of its badges in all
    pictures, and the table rows that touch them; hovering or clicking a row highlights its
    triples in the pictures. Each component's skeleton is computed here
    (:mod:`dashboard.graph_layout`) and packed in the browser for the real frame size, so the
    same data always gives the same picture and nothing moves after the first draw
    (vis-network's physics is off).

    Parameters
    ----------
    panels
        The pictures, left to right. Each gets a width in proportion to the room its labels need
        (at least ``style.min_share`` of the row).
    rows
        The triple table (empty: no table).
    tau
        The threshold the alignment was computed at (shown in the table's tooltips).
    hint
        A line of help above the pictures (text).
    no_match
        What a table cell says where an answer triple has no matched triple (text).
    columns
        ``(header, tooltip)`` of the table: number, answer triple, then gold triple, cosine,
        aligned, then context triple, cosine, aligned.
    state_key
        Names the case (``"run:item"``): a node or row clicked in a document is clicked again
        in the next document with the same key (the browser tab's ``sessionStorage``), so a
        new tau keeps the highlight. Empty: nothing is kept.
    style
        Sizes.
    should_stop
        Asked between layout steps; ``True`` stops the work (the page that asked is gone).

    Returns
    -------
    LinkedDocument
        The page and its height. vis-network (pyvis's copy) is inlined; every label reaches the
        page as JSON with ``<``, ``>`` and ``&`` escaped and is shown as text. The page exposes
        ``window.s3kgNetworks`` and ``window.s3kg`` for tests.

    Raises
    ------
    GraphRenderError
        If a colour is not a hex colour, two nodes of a panel share an id, an edge names an
        unknown node or triple, or the page would load anything from the network.
    LayoutCancelled
        If ``should_stop`` said so.

    Examples
    --------
    >>> nodes = (PanelNode("cat", "Cats", PALETTE[0], ("E1",)), PanelNode("mouse", "mice"))
    >>> edges = (PanelEdge("cat", "mouse", "chase", 0),)
    >>> triples = (("cat", "chase", "mouse", "Cats", "mice"),)
    >>> panel = GraphPanel("answer", "Answer KG", "1 triple", nodes, edges, triples)
    >>> doc = linked_graphs_html([panel], [], tau=0.65)
    >>> doc.html.startswith("<!DOCTYPE html>"), "new vis.Network" in doc.html, doc.height > 470
    (True, True, True)
    """
    data_panels = []
    needs = []
    prepared = []
    for panel in panels:
        prepared.append(_prepare_panel(panel, style, should_stop))
        needs.append(_need(panel, style))
    shares = _shares(needs, style.min_share, [not p.nodes for p in panels], style.empty_share)
    for nodes, share, panel in zip(prepared, shares, panels, strict=True):
        data_panels.append(
            {
                "key": panel.key,
                "title": panel.title,
                "subtitle": panel.subtitle,
                "note": panel.note,
                "empty": panel.empty,
                "share": share,
                "nodes": nodes,
                "edges": _edge_data(panel, style.edge_label_chars),
                "triples": [list(t) for t in panel.triples],
            }
        )
    has_note = any(p.note for p in panels)
    table = bool(rows)
    shown_rows = min(len(rows), style.table_rows)
    table_px = (30 + shown_rows * style.row_px) if table else 0
    data = {
        "panels": data_panels,
        "panelKeys": [p.key for p in panels],
        "rows": [
            {"links": r.links, "matches": r.matches, "number": r.number or i + 1}
            for i, r in enumerate(rows)
        ],
        "columns": [list(c) for c in columns],
        "tau": f"{tau:g}",
        "noMatch": no_match,
        "stateKey": state_key,
        "options": {
            "nodeFont": style.node_font,
            "edgeFont": style.edge_font,
            "badgeFont": style.badge_font,
            "nodeWrap": style.node_wrap,
            "edgeWrap": style.edge_wrap,
            "canvasHeight": style.canvas_px,
            "scales": list(style.scales),
            "bigScales": list(style.big_scales),
            "minScale": min(style.scales),
            "lastScale": style.last_scale,
            "maxNodes": style.max_nodes,
            "maxStretch": style.max_stretch,
            "margin": style.margin_px,
            "pad": style.pad_px,
            "gap": style.gap_px,
            "fontFace": style.font_face,
            "markedEdge": HIGHLIGHT_COLOUR,
        },
    }
    body = ['<div id="s3kg-panels"></div>']
    if hint:
        body.append(f'<div id="s3kg-hint">{html.escape(hint)}</div>')
    if table:  # every row, up to table_max_px; past it the box scrolls and the count says so
        body.append(
            '<div id="s3kg-table-count" aria-live="polite"></div>'
            f'<div id="s3kg-table-box" style="max-height:{style.table_max_px}px">'
            '<table id="s3kg-table"></table></div>'
        )
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>knowledge graphs</title>"
        f"<style>{_asset('linked_graphs.css')}</style>"
        f"<script>{_vis_js()}</script>"
        "</head><body>"
        + "".join(body)
        + f"<script>const S3KG_DATA = {_script_json(data)};\n{_asset('linked_graphs.js')}</script>"
        + "</body></html>\n"
    )
    if _REMOTE_ANY.search(page):
        raise GraphRenderError("the linked graphs page would load a remote resource")
    height = (
        (24 if hint else 0)
        + 31
        + (17 if has_note else 0)
        + style.canvas_px
        + 4
        + (table_px + 32 if table else 0)
        + 6
    )
    return LinkedDocument(page, height)


def _prepare_panel(
    panel: GraphPanel, style: LinkedStyle, should_stop: Callable[[], bool] | None = None
) -> list[dict[str, Any]]:
    """The node data of a panel: colours, badges, its skeleton and its estimated box."""
    ids = [n.id for n in panel.nodes]
    if len(set(ids)) != len(ids):
        raise GraphRenderError(f"panel {panel.key!r}: two nodes share an id")
    known = set(ids)
    for e in panel.edges:
        if e.source not in known or e.target not in known:
            raise GraphRenderError(f"panel {panel.key!r}: edge {e.label!r} names an unknown node")
        if not 0 <= e.triple < len(panel.triples):
            raise GraphRenderError(f"panel {panel.key!r}: edge {e.label!r} has no triple")
    nodes: list[dict[str, Any]] = []
    for n in panel.nodes:
        _check_colour(n.colour, f"colour of node {n.label!r}")
        badge = badge_text(n.badges)
        coloured = bool(n.badges) or n.colour.lower() != UNMATCHED_COLOUR  # grey: neutral
        nodes.append(
            {
                "id": n.id,
                "label": n.label,
                "title": n.title or n.label,
                "colour": n.colour,
                "border": n.colour if coloured else _NEUTRAL_BORDER,
                "fill": _tint(n.colour) if coloured else _NEUTRAL_FILL,
                "badges": list(n.badges),
                "badgeText": badge,
                "badgeInk": _ink(n.colour),
            }
        )
    # Positions depend on labels and edges only, never on colours or badges: moving tau recolours
    # the nodes but cannot move them.
    layout = _layout(
        tuple(n.id for n in panel.nodes),
        tuple((e.source, e.target) for e in panel.edges),
        style.edge_px,
        should_stop,
    )
    for node in nodes:
        node["comp"] = layout.component[node["id"]]
        rx, ry = layout.relative[node["id"]]
        node["rx"], node["ry"] = round(rx, 2), round(ry, 2)
        box = label_box(node["label"], font_px=style.node_font, wrap_px=style.node_wrap)
        node["bw"], node["bh"] = round(box.right, 2), round(box.bottom, 2)  # for the first draw
    return nodes


_LAYOUTS: OrderedDict[tuple[Any, ...], GraphLayout] = OrderedDict()
_LAYOUTS_KEPT = 128
_LAYOUTS_LOCK = threading.Lock()  # pages of several sessions draw at once


def _layout(
    nodes: tuple[str, ...],
    edges: tuple[tuple[str, str], ...],
    edge_px: float,
    should_stop: Callable[[], bool] | None,
) -> GraphLayout:
    """:func:`~dashboard.graph_layout.layout_graph`, the last 128 layouts kept.

    A tau move or a rerun draws the same KGs again. Not an ``lru_cache``: ``should_stop`` is
    not part of the key.
    """
    key = (nodes, edges, edge_px)
    with _LAYOUTS_LOCK:
        found = _LAYOUTS.get(key)
        if found is not None:
            _LAYOUTS.move_to_end(key)
            return found
    found = layout_graph(list(nodes), list(edges), edge_px=edge_px, should_stop=should_stop)
    with _LAYOUTS_LOCK:
        _LAYOUTS[key] = found
        while len(_LAYOUTS) > _LAYOUTS_KEPT:
            _LAYOUTS.popitem(last=False)
    return found


def _need(panel: GraphPanel, style: LinkedStyle) -> float:
    """The room a panel's labels take: the sum of its node boxes' areas, margins included."""
    total = 0.0
    for n in panel.nodes:
        box = label_box(n.label, font_px=style.node_font, wrap_px=style.node_wrap)
        total += (box.width + style.margin_px) * (box.height + style.margin_px)
    return total


def _shares(
    needs: Sequence[float],
    floor: float,
    empty: Sequence[bool] = (),
    empty_share: float = 0.0,
) -> list[float]:
    """Width shares in proportion to need; they sum to 1.

    None is below ``floor``, or ``empty_share`` for a panel with nothing to draw.
    """
    if not needs:
        return []
    floors = [empty_share if i < len(empty) and empty[i] else floor for i in range(len(needs))]
    total = sum(needs)
    if total <= 0:
        return [round(1.0 / len(needs), 4)] * len(needs)
    shares = [n / total for n in needs]
    for _ in range(len(shares)):
        low = [i for i, s in enumerate(shares) if s < floors[i]]
        if not low:
            break
        rest = [i for i in range(len(shares)) if i not in low]
        fixed = sum(floors[i] for i in low)
        rest_total = sum(needs[i] for i in rest) or 1.0
        shares = [
            floors[i] if i in low else (1 - fixed) * needs[i] / rest_total
            for i in range(len(needs))
        ]
    return [round(s, 4) for s in shares]


def badge_text(badges: Sequence[str]) -> str:
    """How the dashboard writes the answer entities a node stands for, everywhere it does.

    The badge drawn on a node, the triple table's chips, a node's tooltip and the marked
    texts all write a node that stands for several answer entities this one way: every badge,
    joined by ``+`` (issue 58: the node said ``E2+3``, "E2 and 3 more", the table
    ``E2+E3+E5+E15``).

    Examples
    --------
    >>> badge_text(("E2", "E3", "E5", "E15"))
    'E2+E3+E5+E15'
    >>> badge_text(("E7",)), badge_text(())
    ('E7', '')
    """
    return "+".join(badges)


def short_label(label: str, limit: int) -> str:
    """``label`` cut to at most ``limit`` characters at a word's end, ``…`` marking the cut.

    What an edge shows of a relation longer than :attr:`LinkedStyle.edge_label_chars` (48
    characters: two or three lines; every relation of the demo fits); the edge's tooltip keeps
    the whole label. A shorter one is shown whole, wrapped (issue 58: "inoculating..." at 18).

    Examples
    --------
    >>> short_label("killed large share of", 18)
    'killed large…'
    >>> short_label("occurred in", 18)
    'occurred in'
    >>> short_label("photosynthesised", 10)
    'photosynt…'
    """
    text = " ".join(label.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "\u2026"


def _edge_data(panel: GraphPanel, label_chars: int) -> list[dict[str, Any]]:
    out = []
    parallel: dict[tuple[str, str], int] = {}
    for i, e in enumerate(panel.edges):
        edge: dict[str, Any] = {
            "id": f"e{i}",
            "from": e.source,
            "to": e.target,
            "label": short_label(e.label, label_chars),
            "title": e.label,
            "triple": e.triple,
            "marked": e.marked,
        }
        pair = (min(e.source, e.target), max(e.source, e.target))
        rank = parallel.get(pair, 0)
        parallel[pair] = rank + 1
        if e.source == e.target:
            edge["selfReference"] = {"size": 18 + 10 * rank, "angle": 0.8}
        elif rank:
            edge["smooth"] = {"enabled": True, "type": "curvedCW", "roundness": 0.25 * rank}
        out.append(edge)
    return out


def _script_json(data: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``<``, ``>`` or ``&`` survives as such."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _luminance(colour: str) -> float:
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    channels = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast_with_white(colour: str) -> float:
    """WCAG contrast ratio of ``colour`` against white (1 to 21).

    Examples
    --------
    >>> round(contrast_with_white("#000000")), round(contrast_with_white("#ffffff"))
    (21, 1)
    """
    _check_colour(colour, "colour")
    return 1.05 / (_luminance(colour) + 0.05)


def _ink(colour: str) -> str:
    """Black or white, whichever reads better on ``colour``."""
    lum = _luminance(colour)
    return "#111111" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) * 1.4 else "#ffffff"


def _tint(colour: str, amount: float = 0.78) -> str:
    """``colour`` mixed with white (``amount`` of white): a fill that black text reads on."""
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    r, g, b = (
        round(int(h[i : i + 2], 16) + (255 - int(h[i : i + 2], 16)) * amount) for i in (0, 2, 4)
    )
    return f"#{r:02x}{g:02x}{b:02x}"


@lru_cache(maxsize=4)
def _asset(name: str) -> str:
    return (_ASSETS / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _vis_js() -> str:
    """The vis-network that pyvis ships, to inline (it must not close the script element)."""
    source = package_path("pyvis", "templates", *_VIS_JS).read_text("utf-8")
    if re.search(r"</script", source, re.I):
        raise GraphRenderError("vis-network's source contains '</script'; it cannot be inlined")
    return source
