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

from s3kg_core.errors import GraphRenderError
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_label

__all__ = [
    "HIGHLIGHT_COLOUR",
    "PALETTE",
    "UNMATCHED_COLOUR",
    "GraphColours",
    "alignment_colours",
    "kg_html",
    "kg_network_data",
    "legend_html",
]

#: Okabe-Ito colour-blind-safe palette without its black (labels sit beside the dots).
PALETTE: tuple[str, ...] = (
    "#e69f00",
    "#56b4e9",
    "#009e73",
    "#f0e442",
    "#0072b2",
    "#d55e00",
    "#cc79a7",
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
    {'marie curie': '#e69f00', 'radium': '#56b4e9'}
    >>> c.gold, c.context
    ({'curie': '#e69f00'}, {'radium element': '#56b4e9'})
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

    from pyvis.network import Network

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
    import pyvis

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
