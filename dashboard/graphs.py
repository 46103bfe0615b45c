r"""Knowledge-graph pictures for the dashboard: alignment colours and offline pyvis HTML.

Scoring aligns the answer KG (T1) to the gold KG and to the context KG. This module colours the
aligned entities alike in the three pictures (:func:`alignment_colours`), turns triples into
vis-network node and edge lists (:func:`kg_network_data`), renders them as one self-contained
HTML document (:func:`kg_html`) and draws a small legend (:func:`legend_html`). It never imports
streamlit, so it is tested without a browser; a page shows the result with
``streamlit.components.v1.html(kg_html(...), height=height_px + 20)``.

Notes
-----
Safety of label text, as found in pyvis 0.3.2 and its bundled vis-network 9.1.2:

* Node and edge data reach the page through pyvis's template as ``{{nodes|tojson}}``. Jinja's
  ``tojson`` writes ``<``, ``>``, ``&`` and ``'`` as ``\u003c``, ``\u003e``, ``\u0026`` and
  ``\u0027``, so no label can close the ``<script>`` element or open a tag, and JavaScript
  still reads the original characters.
* vis-network draws ``label`` on the canvas, as plain text.
* A string ``title`` (the hover tooltip) is shown by vis-network 9.1.2 with ``innerText``, as
  text. But pyvis switches to its own popup, which sets ``innerHTML = title``, as soon as any node
  title contains the substring ``href``; unescaped, a label like ``<a href=x onclick=...>`` would
  then become markup (and edge tooltips would break). The offline template here disables that
  popup, so vis-network's text tooltip is always used, and titles are ``html.escape``-d as well,
  in case a future template brings an HTML sink back. The cost: a label with ``&``, ``<``, ``>``
  or quotes shows the entities in its tooltip (``AT&amp;T``); the drawn label is unaffected.
* pyvis's template loads Bootstrap from a CDN even with ``cdn_resources="in_line"``. This module
  renders a copy of the template with every ``http(s)`` ``<link>``/``<script src>`` removed (the
  Bootstrap classes it used only style a card border), and refuses to return a page that would
  still fetch anything (:class:`GraphRenderError`).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from dashboard.graph_layout import GraphLayout, label_box, layout_graph, pack_components
from s3kg_core.errors import GraphRenderError
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_label

__all__ = [
    "HIGHLIGHT_COLOUR",
    "LINKED_STYLE",
    "PALETTE",
    "UNMATCHED_COLOUR",
    "GraphColours",
    "GraphPanel",
    "LinkedDocument",
    "LinkedRow",
    "LinkedStyle",
    "PanelEdge",
    "PanelNode",
    "alignment_colours",
    "contrast_with_white",
    "kg_html",
    "kg_network_data",
    "legend_html",
    "linked_graphs_html",
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
_EDGE_COLOUR = "#7f7f7f"
_EDGE_WIDTH = 1.5
_HIGHLIGHT_WIDTH = 4.0

_HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_TEMPLATE_NAME = "s3kg_offline_template.html"
# Tags in pyvis's template that fetch from the network (Bootstrap, CDN fallbacks).
_REMOTE_LINK = re.compile(r"<link\b[^>]*\bhref\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.I)
_REMOTE_SCRIPT = re.compile(
    r"<script\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^>]*>\s*</script\s*>", re.I
)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\{\{\s*heading\s*\}\}</h1>\s*</center>", re.I)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# pyvis turns on a popup that sets ``innerHTML = title`` when a node title contains "href".
_LINK_POPUP = re.compile(r"\{%\s*if\s+tooltip_link\s*%\}")
# Anything in the finished page that would still load a remote resource.
_REMOTE_ANY = re.compile(
    r"<(?:script|link|img|iframe|source|embed)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//",
    re.I,
)

_VIS_OPTIONS: dict[str, Any] = {
    "physics": {
        "enabled": True,
        "solver": "barnesHut",
        "barnesHut": {
            "gravitationalConstant": -6000,
            "centralGravity": 0.3,
            "springLength": 140,
            "springConstant": 0.04,
            "damping": 0.3,
            "avoidOverlap": 0.2,
        },
        "stabilization": {"enabled": True, "iterations": 250, "updateInterval": 50, "fit": True},
        "minVelocity": 1.0,
    },
    "nodes": {"shape": "dot", "size": 14, "font": {"size": 14}},
    "edges": {
        "smooth": {"enabled": True, "type": "continuous"},
        "font": {"size": 11, "align": "middle"},
        "arrows": {"to": {"enabled": True, "scaleFactor": 0.6}},
    },
    "interaction": {"hover": True, "tooltipDelay": 150},
}


@dataclass(frozen=True)
class GraphColours:
    """Node colours of the three pictures, keyed by normalised entity label.

    Attributes
    ----------
    answer, gold, context
        Normalised entity label -> ``#rrggbb``. A label that is absent is drawn grey.
    """

    answer: dict[str, str] = field(default_factory=dict)
    gold: dict[str, str] = field(default_factory=dict)
    context: dict[str, str] = field(default_factory=dict)


def alignment_colours(
    answer: Sequence[Triple],
    gold_map: Mapping[str, str | None],
    context_map: Mapping[str, str | None],
    *,
    lemmatize: bool = True,
) -> GraphColours:
    """Give every aligned answer entity a colour, and its gold and context partners the same.

    Parameters
    ----------
    answer
        The answer's triples (T1), raw labels.
    gold_map, context_map
        Normalised answer entity label -> normalised label of the gold (context) entity it was
        aligned to, or ``None`` (an empty string counts as ``None``). Keys that are not entities
        of ``answer`` are ignored.
    lemmatize
        The normalisation the scores used (see :func:`s3kg_core.normalize.normalize_label`).

    Returns
    -------
    GraphColours
        Answer entities with a partner in either graph get the next colour of :data:`PALETTE`
        (cycled when it runs out) in order of first appearance, heads before tails. A gold or
        context label that several answer entities map to keeps the first one's colour.

    Examples
    --------
    >>> answer = [Triple("Marie Curie", "discovered", "radium"), Triple("radium", "is", "metal")]
    >>> c = alignment_colours(answer, {"marie curie": "curie", "radium": None},
    ...                       {"radium": "radium element"})
    >>> c.answer
    {'marie curie': '#0072b2', 'radium': '#e69f00'}
    >>> c.gold, c.context
    ({'curie': '#0072b2'}, {'radium element': '#e69f00'})
    """
    colours = GraphColours()
    for triple in answer:
        t = Triple.from_any(triple)
        for raw in (t.head, t.tail):
            label = normalize_label(raw, lemmatize=lemmatize, role="entity")
            if not label or label in colours.answer:
                continue
            gold = gold_map.get(label)
            context = context_map.get(label)
            if not gold and not context:
                continue
            colour = PALETTE[len(colours.answer) % len(PALETTE)]
            colours.answer[label] = colour
            if gold:
                colours.gold.setdefault(gold, colour)
            if context:
                colours.context.setdefault(context, colour)
    return colours


def kg_network_data(
    triples: Sequence[Triple],
    colours: Mapping[str, str],
    *,
    highlight: Collection[Triple] = (),
    unmatched: str = UNMATCHED_COLOUR,
    lemmatize: bool = True,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Turn triples into vis-network node and edge dicts (the data :func:`kg_html` draws).

    Parameters
    ----------
    triples
        The graph's triples, raw labels. A triple with an empty normalised part is skipped; of
        triples equal after normalisation the first is kept.
    colours
        Normalised entity label -> ``#rgb`` / ``#rrggbb``; other nodes get ``unmatched``.
    highlight
        Triples to draw red and thick, compared after normalisation.
    unmatched
        Colour of nodes without an entry in ``colours``.
    lemmatize
        The normalisation the scores used.

    Returns
    -------
    tuple of (list of dict, list of dict)
        Nodes ``{"id", "label", "title", "color"}`` (id: normalised label; label: first raw
        label seen; title: that label HTML-escaped) in order of first appearance, and edges
        ``{"from", "to", "label", "title", "color", "width"}`` with the raw relation. Edges
        between the same two nodes get increasingly curved ``smooth`` settings (self-loops
        growing ``selfReference`` sizes) so that every relation stays visible.

    Raises
    ------
    GraphRenderError
        If a colour is not a hex colour.

    Examples
    --------
    >>> nodes, edges = kg_network_data([Triple("Cats", "chase", "mice")], {"cat": "#e69f00"})
    >>> [(n["id"], n["label"], n["color"]) for n in nodes]
    [('cat', 'Cats', '#e69f00'), ('mouse', 'mice', '#c8c8c8')]
    >>> [(e["from"], e["label"], e["to"], e["color"]) for e in edges]
    [('cat', 'chase', 'mouse', '#7f7f7f')]
    """
    _check_colour(unmatched, "unmatched")
    for label, colour in colours.items():
        _check_colour(colour, f"colours[{label!r}]")
    marked = {_norm_triple(Triple.from_any(t), lemmatize) for t in highlight}

    nodes: dict[str, dict[str, Any]] = {}
    edges: list[dict[str, Any]] = []
    seen: set[tuple[str, str, str]] = set()
    parallel: dict[tuple[str, str], int] = {}
    for item in triples:
        raw = Triple.from_any(item)
        key = _norm_triple(raw, lemmatize)
        if not all(key) or key in seen:
            continue
        seen.add(key)
        head, _, tail = key
        for node_id, label in ((head, raw.head), (tail, raw.tail)):
            if node_id not in nodes:
                nodes[node_id] = {
                    "id": node_id,
                    "label": label,
                    "title": html.escape(label),
                    "color": colours.get(node_id, unmatched),
                }
        hot = key in marked
        edge: dict[str, Any] = {
            "from": head,
            "to": tail,
            "label": raw.relation,
            "title": html.escape(raw.relation),
            "color": HIGHLIGHT_COLOUR if hot else _EDGE_COLOUR,
            "width": _HIGHLIGHT_WIDTH if hot else _EDGE_WIDTH,
        }
        pair = (min(head, tail), max(head, tail))
        rank = parallel.get(pair, 0)
        parallel[pair] = rank + 1
        if head == tail:
            edge["selfReference"] = {"size": 20 + 12 * rank}
        elif rank:
            edge["smooth"] = {"enabled": True, "type": "curvedCW", "roundness": 0.2 * rank}
        edges.append(edge)
    return list(nodes.values()), edges


def kg_html(
    triples: Sequence[Triple],
    colours: Mapping[str, str],
    *,
    highlight: Collection[Triple] = (),
    height_px: int = 420,
    unmatched: str = UNMATCHED_COLOUR,
    lemmatize: bool = True,
    empty_message: str = "no triples",
) -> str:
    """Render a KG as a complete, offline HTML document (pyvis, vis-network inlined).

    Parameters
    ----------
    triples, colours, highlight, unmatched, lemmatize
        As in :func:`kg_network_data`.
    height_px
        Height of the drawing in pixels (the width is 100 %).
    empty_message
        Text shown, escaped, instead of a drawing when there is no triple to draw.

    Returns
    -------
    str
        The page. It loads nothing from the network, and no label text becomes markup.

    Raises
    ------
    GraphRenderError
        If ``height_px`` is not a positive integer, a colour is not a hex colour, or the pyvis
        template would still load a remote resource.

    Examples
    --------
    >>> page = kg_html([Triple("Cats", "chase", "mice")], {})
    >>> page.startswith("<!DOCTYPE html>"), "new vis.DataSet" in page
    (True, True)
    >>> "no triples" in kg_html([], {})
    True
    """
    if isinstance(height_px, bool) or not isinstance(height_px, int) or height_px <= 0:
        raise GraphRenderError(f"height_px must be a positive integer; got {height_px!r}")
    nodes, edges = kg_network_data(
        triples, colours, highlight=highlight, unmatched=unmatched, lemmatize=lemmatize
    )
    if not nodes:
        return _empty_page(empty_message, height_px)

    from pyvis.network import Network  # type: ignore[import-untyped]

    net = Network(height=f"{height_px}px", width="100%", directed=True, cdn_resources="in_line")
    net.templateEnv = _template_env()
    net.path = _TEMPLATE_NAME
    for node in nodes:
        options = {k: v for k, v in node.items() if k != "id"}
        net.add_node(node["id"], **options)
    for edge in edges:
        options = {k: v for k, v in edge.items() if k not in ("from", "to")}
        net.add_edge(edge["from"], edge["to"], **options)
    net.set_options(json.dumps(_VIS_OPTIONS))
    page = str(net.generate_html())
    if _REMOTE_ANY.search(page):
        raise GraphRenderError(
            "the pyvis template would load a remote resource; this pyvis version is not "
            "supported offline (tested with pyvis 0.3.2)"
        )
    return page


def legend_html(
    colours: Mapping[str, str],
    *,
    labels: Mapping[str, str] | None = None,
    unmatched: str = UNMATCHED_COLOUR,
    highlight: str = HIGHLIGHT_COLOUR,
    max_items: int = 20,
) -> str:
    """A small HTML legend: one swatch per matched entity, then grey and red.

    Parameters
    ----------
    colours
        Normalised entity label -> hex colour, for example ``GraphColours.answer``.
    labels
        Optional normalised label -> text to show (for example the raw label).
    unmatched, highlight
        The colours :func:`kg_html` uses for unmatched nodes and highlighted triples.
    max_items
        At most this many entity swatches; the rest are counted as "+N more".

    Returns
    -------
    str
        An HTML fragment; every text is ``html.escape``-d.

    Raises
    ------
    GraphRenderError
        If a colour is not a hex colour.

    Examples
    --------
    >>> print(legend_html({"a<b": "#e69f00"}, max_items=5))  # doctest: +ELLIPSIS
    <div class="s3kg-legend" ...>a&lt;b</span>...unmatched...highlighted triple</span></div>
    """
    shown = list(colours.items())[: max(max_items, 0)]
    items = [(colour, (labels or {}).get(label, label)) for label, colour in shown]
    rest = len(colours) - len(shown)
    items += [(unmatched, "unmatched"), (highlight, "highlighted triple")]
    parts = []
    for colour, text in items:
        _check_colour(colour, f"legend colour of {text!r}")
        parts.append(
            '<span style="display:inline-block;margin-right:12px;white-space:nowrap">'
            f'<span style="display:inline-block;width:11px;height:11px;border-radius:50%;'
            f'background:{colour};margin-right:4px;vertical-align:middle"></span>'
            f"{html.escape(text)}</span>"
        )
    if rest > 0:
        parts.insert(len(shown), f"<span>+{rest} more</span> ")
    return (
        '<div class="s3kg-legend" style="font:12px sans-serif;line-height:1.8">'
        + "".join(parts)
        + "</div>"
    )


def _norm_triple(t: Triple, lemmatize: bool) -> tuple[str, str, str]:
    return (
        normalize_label(t.head, lemmatize=lemmatize, role="entity"),
        normalize_label(t.relation, lemmatize=lemmatize, role="relation"),
        normalize_label(t.tail, lemmatize=lemmatize, role="entity"),
    )


def _check_colour(colour: object, what: str) -> None:
    if not isinstance(colour, str) or not _HEX.fullmatch(colour):
        raise GraphRenderError(f"{what} must be a hex colour like '#1f77b4'; got {colour!r:.40}")


def _empty_page(message: str, height_px: int) -> str:
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>knowledge graph</title>'
        "</head><body>"
        f'<div style="height:{height_px}px;display:flex;align-items:center;'
        "justify-content:center;font-family:sans-serif;color:#666;"
        f'border:1px solid lightgray">{html.escape(message)}</div>'
        "</body></html>\n"
    )


@lru_cache(maxsize=1)
def _template_env() -> jinja2.Environment:
    """The pyvis template directory plus an offline copy of its page template."""
    import pyvis  # type: ignore[import-untyped]

    directory = Path(pyvis.__file__).parent / "templates"
    source = (directory / "template.html").read_text(encoding="utf-8")
    source = _REMOTE_SCRIPT.sub("", _REMOTE_LINK.sub("", source))
    source = _HTML_COMMENT.sub("", _EMPTY_HEADING.sub("", source))
    source = _LINK_POPUP.sub("{% if false %}", source)
    source = "<!DOCTYPE html>\n" + source
    loader = jinja2.ChoiceLoader(
        [jinja2.DictLoader({_TEMPLATE_NAME: source}), jinja2.FileSystemLoader(str(directory))]
    )
    return jinja2.Environment(loader=loader, autoescape=True)


# -- the linked document: three KGs and a triple table, one page -------------------------------


@dataclass(frozen=True)
class LinkedStyle:
    """Sizes of the linked document, in CSS pixels at scale 1 (see :func:`linked_graphs_html`).

    The browser draws each picture at the largest of ``scales`` at which its labels fit the
    frame without overlapping (boxes with room between them first, then tightly packed rows),
    as a last resort at ``last_scale`` with the fewest overlaps, never smaller: node labels show
    at ``node_font * last_scale`` pixels or more and edge labels at ``edge_font * last_scale``,
    12.04 and 10.3 px with the defaults (12.6 and 10.8 px wherever ``min(scales)`` suffices).
    Only a picture of more than ``max_nodes`` nodes (a whole KG the user asked for) may go down
    to ``big_scales``.
    """

    node_font: int = 14
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
    doc_width_px: int = 980
    min_share: float = 0.22
    empty_share: float = 0.19
    font_face: str = "Arial, Liberation Sans, Helvetica, sans-serif"


#: The default :class:`LinkedStyle`.
LINKED_STYLE = LinkedStyle()

_NEUTRAL_BORDER = "#9a9a9a"
_NEUTRAL_FILL = "#f3f3f3"
_VIS_JS = ("lib", "vis-9.1.2", "vis-network.min.js")
_ASSETS = Path(__file__).parent / "assets"


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
        ``"gold"`` / ``"context"`` -> ``{"other", "cosine", "parts", "aligned"}`` (see
        :class:`dashboard.explorer.TripleMatch`), or ``None``.
    """

    links: dict[str, int | None]
    matches: dict[str, dict[str, Any] | None]


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
) -> LinkedDocument:
    """Render pictures side by side and a triple table as one offline, linked HTML document.

    Hovering or clicking a node highlights it and every node with one of its badges in all
    pictures, and the table rows that touch them; hovering or clicking a row highlights its
    triples in the pictures. Node positions are computed here (:mod:`dashboard.graph_layout`)
    and only re-packed in the browser for the real frame size, so the same data always gives
    the same picture and nothing moves after the first draw (vis-network's physics is off).

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
    columns
        ``(header, tooltip)`` of the table: number, answer triple, then gold triple, cosine,
        aligned, then context triple, cosine, aligned.
    state_key
        Names the case (``"run:item"``): a node or row clicked in a document is clicked again
        in the next document with the same key (the browser tab's ``sessionStorage``), so a
        new tau keeps the highlight. Empty: nothing is kept.
    style
        Sizes.

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
        prepared.append(_prepare_panel(panel, style))
        needs.append(_need(panel, style))
    shares = _shares(needs, style.min_share, [not p.nodes for p in panels], style.empty_share)
    for (nodes, layout), share, panel in zip(prepared, shares, panels, strict=True):
        aspect = share * style.doc_width_px / style.canvas_px
        positions = _repack(layout, nodes, style, aspect) if nodes else {}
        data_panels.append(
            {
                "key": panel.key,
                "title": panel.title,
                "subtitle": panel.subtitle,
                "note": panel.note,
                "empty": panel.empty,
                "share": share,
                "nodes": [
                    {**n, "x": positions[n["id"]][0], "y": positions[n["id"]][1]} for n in nodes
                ],
                "edges": _edge_data(panel),
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
        "rows": [{"links": r.links, "matches": r.matches} for r in rows],
        "columns": [list(c) for c in columns],
        "tau": f"{tau:g}",
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
    if table:
        body.append(
            f'<div id="s3kg-table-box" style="max-height:{table_px}px">'
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
        + (table_px + 12 if table else 0)
        + 6
    )
    return LinkedDocument(page, height)


def _prepare_panel(
    panel: GraphPanel, style: LinkedStyle
) -> tuple[list[dict[str, Any]], GraphLayout]:
    """The node data of a panel (colours, sizes, badges) and its layout."""
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
        badge = n.badges[0] if len(n.badges) == 1 else ""
        if len(n.badges) > 1:
            badge = f"{n.badges[0]}+{len(n.badges) - 1}"
        nodes.append(
            {
                "id": n.id,
                "label": n.label,
                "title": n.title or n.label,
                "colour": n.colour,
                "border": n.colour if n.badges else _NEUTRAL_BORDER,
                "fill": _tint(n.colour) if n.badges else _NEUTRAL_FILL,
                "badges": list(n.badges),
                "badgeText": badge,
                "badgeInk": _ink(n.colour),
            }
        )
    # Positions depend on labels and edges only, never on colours or badges: moving tau recolours
    # the nodes but cannot move them.
    layout = _layout(
        tuple((n.id, n.label) for n in panel.nodes),
        tuple((e.source, e.target) for e in panel.edges),
        style,
    )
    for node in nodes:
        node["comp"] = layout.component[node["id"]]
        rx, ry = layout.relative[node["id"]]
        node["rx"], node["ry"] = round(rx, 2), round(ry, 2)
    return nodes, layout


@lru_cache(maxsize=128)
def _layout(
    nodes: tuple[tuple[str, str], ...], edges: tuple[tuple[str, str], ...], style: LinkedStyle
) -> GraphLayout:
    boxes = {
        node_id: label_box(label, font_px=style.node_font, wrap_px=style.node_wrap)
        for node_id, label in nodes
    }
    return layout_graph(
        [n for n, _ in nodes],
        list(edges),
        boxes,
        edge_px=style.edge_px,
        margin_px=style.margin_px,
        aspect=1.0,
    )


def _repack(
    layout: GraphLayout, nodes: list[dict[str, Any]], style: LinkedStyle, aspect: float
) -> dict[str, tuple[float, float]]:
    """The packing for the panel's aspect ratio (the browser repeats it with measured boxes)."""
    boxes = {
        n["id"]: label_box(n["label"], font_px=style.node_font, wrap_px=style.node_wrap)
        for n in nodes
    }
    groups: dict[int, list[tuple[str, tuple[float, float], Any]]] = {}
    for n in nodes:
        groups.setdefault(n["comp"], []).append((n["id"], (n["rx"], n["ry"]), boxes[n["id"]]))
    positions, _, _ = pack_components(
        [groups[i] for i in sorted(groups)], aspect=aspect, gap=style.gap_px
    )
    return positions


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


def _edge_data(panel: GraphPanel) -> list[dict[str, Any]]:
    out = []
    parallel: dict[tuple[str, str], int] = {}
    for i, e in enumerate(panel.edges):
        edge: dict[str, Any] = {
            "id": f"e{i}",
            "from": e.source,
            "to": e.target,
            "label": e.label,
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
    import pyvis

    source = (Path(pyvis.__file__).parent / "templates").joinpath(*_VIS_JS).read_text("utf-8")
    if re.search(r"</script", source, re.I):
        raise GraphRenderError("vis-network's source contains '</script'; it cannot be inlined")
    return source
