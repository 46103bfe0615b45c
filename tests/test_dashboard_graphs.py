"""Tests of dashboard.graphs: the palette and the linked document (offline, escaped, laid out)."""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import re

import pytest

from dashboard.graph_layout import LayoutCancelled, label_box
from dashboard.graphs import (
    HIGHLIGHT_COLOUR,
    LINKED_STYLE,
    PALETTE,
    UNMATCHED_COLOUR,
    GraphPanel,
    LinkedRow,
    PanelEdge,
    PanelNode,
    badge_text,
    contrast_with_white,
    linked_graphs_html,
)
from s3kg_core.errors import GraphRenderError

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(1)</script>"
LINK = "<a href=javascript:alert(1)>click</a>"
REMOTE = re.compile(
    r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", re.I
)


# --- the palette ---------------------------------------------------------------------------------


def test_palette_has_twelve_colours_none_fading_into_white() -> None:
    assert len(PALETTE) >= 12 and len(set(PALETTE)) == len(PALETTE)
    assert all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in PALETTE)
    assert min(contrast_with_white(c) for c in PALETTE) >= 2.2
    assert contrast_with_white("#f0e442") < 2.2  # Okabe-Ito's yellow would: it is left out
    assert UNMATCHED_COLOUR not in PALETTE


# --- the linked document ---------------------------------------------------------------------


def linked_data(page: str) -> dict[str, object]:
    """The JSON handed to the linked document's script."""
    match = re.search(r"const S3KG_DATA = (\{.*?\});\n", page)
    assert match is not None
    data: dict[str, object] = json.loads(match.group(1))
    return data


def panel(key: str, labels: list[str], badges: dict[str, str] | None = None) -> GraphPanel:
    """A chain over ``labels``; ``badges``: label -> badge (coloured by PALETTE order)."""
    badges = badges or {}
    colours = {b: PALETTE[i] for i, b in enumerate(sorted(set(badges.values())))}
    nodes = tuple(
        PanelNode(
            lb.lower(),
            lb,
            colours[badges[lb]] if lb in badges else UNMATCHED_COLOUR,
            (badges[lb],) if lb in badges else (),
            f"tooltip of {lb}",
        )
        for lb in labels
    )
    triples = tuple(
        (a.lower(), f"rel {i}", b.lower(), a, b)
        for i, (a, b) in enumerate(itertools.pairwise(labels))
    )
    edges = tuple(PanelEdge(t[0], t[2], t[1], i) for i, t in enumerate(triples))
    return GraphPanel(key, key.title(), f"{len(triples)} triples", nodes, edges, triples)


def test_linked_document_is_offline_and_inlines_vis_network_once() -> None:
    doc = linked_graphs_html([panel("gold", ["a", "b"]), panel("answer", ["c", "d"])], [], tau=0.6)
    assert doc.html.startswith("<!DOCTYPE html>")
    assert doc.html.count("vis-network") >= 1 and doc.html.count("new vis.Network(") == 1
    assert not REMOTE.search(doc.html)
    assert not re.search(r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=", doc.html, re.I)
    assert "window.s3kgNetworks" in doc.html and "window.s3kg = " in doc.html


def test_marked_edges_reach_the_page_with_their_colour() -> None:
    p = panel("gold", ["a", "b", "c"])
    edges = (p.edges[0], dataclasses.replace(p.edges[1], marked=True))
    p = dataclasses.replace(p, edges=edges)
    doc = linked_graphs_html([p], [], tau=0.6)
    data = linked_data(doc.html)
    assert [e["marked"] for e in data["panels"][0]["edges"]] == [False, True]
    assert data["options"]["markedEdge"] == HIGHLIGHT_COLOUR
    assert "e.marked" in doc.html  # the page's edge style reads the flag


@pytest.mark.parametrize("payload", [IMG, SCRIPT, LINK, "</style><b>x</b>", "a & b \u2028 c"])
def test_linked_document_never_turns_text_into_markup(payload: str) -> None:
    p = panel("answer", [payload, "ok"], {payload: "E1"})
    p = GraphPanel(p.key, payload, payload, p.nodes, p.edges, p.triples, note=payload)
    rows = [LinkedRow({"answer": 0}, {"gold": None, "context": None})]
    doc = linked_graphs_html([p], rows, tau=0.6, hint=payload, columns=[(payload, payload)])
    body = doc.html.split("<script>", 1)[0] + doc.html.rsplit("</script>", 1)[1]
    assert payload not in doc.html.replace(html.escape(payload), "") or payload.isalnum()
    for bad in ("<img", "<a href", "<b>x", "</script><script>"):
        assert bad not in body and bad not in doc.html.rsplit("<script>", 1)[1]
    data = linked_data(doc.html)
    panels = data["panels"]
    assert isinstance(panels, list)
    assert panels[0]["title"] == payload and panels[0]["nodes"][0]["label"] == payload
    assert data["columns"] == [[payload, payload]]


def test_linked_document_positions_do_not_depend_on_colours_or_badges() -> None:
    labels = ["Marie Curie", "radium", "Nobel Prize", "Pierre Curie", "polonium", "Poland"]
    plain = linked_data(linked_graphs_html([panel("gold", labels)], [], tau=0.6).html)
    badged = linked_data(
        linked_graphs_html(
            [panel("gold", labels, {"radium": "E2", "Poland": "E7"})], [], tau=0.9
        ).html
    )

    def places(data: dict[str, object]) -> list[tuple[object, ...]]:
        nodes = data["panels"][0]["nodes"]  # type: ignore[index]
        return [(n["id"], n["rx"], n["ry"], n["comp"], n["bw"], n["bh"]) for n in nodes]

    assert places(plain) == places(badged)
    node = {n["id"]: n for n in badged["panels"][0]["nodes"]}  # type: ignore[index]
    assert node["radium"]["badgeText"] == "E2" and node["marie curie"]["badgeText"] == ""
    assert node["radium"]["border"] == PALETTE[0] and node["radium"]["fill"] != PALETTE[0]


def test_a_node_of_several_answer_entities_names_every_one_as_the_table_does() -> None:
    """Issue 58 (item 5): the node's badge said "E2+3" ("E2 and 3 more") where the triple
    table's chip said "E2+E3+E5+E15". The page draws the badge and writes the chip from one
    text, badge_text's."""
    p = panel("gold", ["charter", "king"])
    several = dataclasses.replace(p.nodes[0], badges=("E2", "E3", "E5", "E15"))
    p = dataclasses.replace(p, nodes=(several, p.nodes[1]))
    doc = linked_graphs_html([p], [], tau=0.6)
    node = linked_data(doc.html)["panels"][0]["nodes"][0]  # type: ignore[index]
    assert node["badges"] == ["E2", "E3", "E5", "E15"]
    assert node["badgeText"] == badge_text(several.badges) == "E2+E3+E5+E15"
    script = doc.html.rsplit("<script>", 1)[1]
    assert 'el("b", null, n.badgeText)' in script  # the chip writes the drawn text
    assert "n.badges.join" not in script


def test_linked_document_widths_follow_the_room_labels_need() -> None:
    small = panel("answer", ["a", "b"])
    big = panel("context", [f"a long entity label {i}" for i in range(30)])
    data = linked_data(linked_graphs_html([small, big], [], tau=0.6).html)
    shares = [p["share"] for p in data["panels"]]  # type: ignore[attr-defined,index]
    assert shares[0] == LINKED_STYLE.min_share and shares[1] == pytest.approx(1 - shares[0])
    options = data["options"]
    assert options["lastScale"] * options["nodeFont"] >= 12  # type: ignore[index]
    assert options["lastScale"] * options["edgeFont"] >= 10  # type: ignore[index]
    assert options["lastScale"] <= options["minScale"]  # type: ignore[index]


def test_linked_document_height_makes_room_for_the_table() -> None:
    p = panel("answer", ["a", "b", "c"])
    without = linked_graphs_html([p], [], tau=0.6)
    rows = [LinkedRow({"answer": i}, {"gold": None, "context": None}) for i in range(2)]
    with_rows = linked_graphs_html([p], rows, tau=0.6)
    assert with_rows.height > without.height > LINKED_STYLE.canvas_px
    assert 'id="s3kg-table"' in with_rows.html and 'id="s3kg-table"' not in without.html


def test_a_relation_is_whole_on_its_edge_up_to_its_cap_and_always_in_its_tooltip() -> None:
    """Issue 58 (item 5): an edge showed 18 characters of its relation ("inoculating..." for
    "inoculating against", "killed large..." for "killed large share of"); a relation is now
    whole, on lines of at most edge_wrap px, up to 48 characters (the page lays it out with
    the size it measures); only a longer one is cut, and its tooltip is whole."""
    p = panel("gold", ["a", "b", "c", "d"])
    text = "a relation of more than forty-eight characters, cut at a word"
    labels = ("inoculating against", "killed large share of", text)
    edges = tuple(dataclasses.replace(e, label=lb) for e, lb in zip(p.edges, labels, strict=True))
    doc = linked_graphs_html([dataclasses.replace(p, edges=edges)], [], tau=0.6)
    shown = linked_data(doc.html)["panels"][0]["edges"]
    assert [(e["label"], e["title"]) for e in shown] == [
        ("inoculating against", "inoculating against"),
        ("killed large share of", "killed large share of"),
        ("a relation of more than forty-eight\u2026", text),
    ]
    assert all(len(e["label"]) <= LINKED_STYLE.edge_label_chars == 48 for e in shown)
    assert linked_data(doc.html)["options"]["edgeWrap"] == LINKED_STYLE.edge_wrap  # type: ignore[index]


def test_the_table_shows_every_row_up_to_its_cap_with_a_count() -> None:
    """Issue 43 (item 6): the table's box was 30 px + 27 px a row for up to 8 rows, so rows of
    two lines hid (1 of 2 showed in 84 px); now the box is capped only at table_max_px and a
    line says how many rows show."""
    p = panel("answer", ["a", "b", "c"])
    rows = [LinkedRow({"answer": i}, {"gold": None, "context": None}) for i in range(2)]
    page = linked_graphs_html([p], rows, tau=0.6).html
    assert f'style="max-height:{LINKED_STYLE.table_max_px}px"' in page
    assert 'id="s3kg-table-count"' in page and LINKED_STYLE.table_max_px >= 400


def test_linked_document_rejects_bad_panels() -> None:
    good = panel("gold", ["a", "b"])
    bad_colour = GraphPanel("gold", "t", "s", (PanelNode("a", "a", "red"),), (), ())
    twice = GraphPanel("gold", "t", "s", (PanelNode("a", "a"), PanelNode("a", "A")), (), ())
    stray = GraphPanel("gold", "t", "s", good.nodes, (PanelEdge("a", "zzz", "r", 0),), good.triples)
    no_triple = GraphPanel(
        "gold", "t", "s", good.nodes, (PanelEdge("a", "b", "r", 5),), good.triples
    )
    for broken in (bad_colour, twice, stray, no_triple):
        with pytest.raises(GraphRenderError):
            linked_graphs_html([broken], [], tau=0.6)


def test_linked_document_of_sixty_nodes_gives_every_node_its_place_and_box() -> None:
    labels = [f"entity {i}" for i in range(60)]
    doc = linked_graphs_html([panel("context", labels)], [], tau=0.6)
    nodes = linked_data(doc.html)["panels"][0]["nodes"]  # type: ignore[index]
    assert len(nodes) == 60
    # distinct places within each component's skeleton (the browser packs the components)
    assert len({(n["comp"], n["rx"], n["ry"]) for n in nodes}) == 60
    box = label_box("entity 7", font_px=LINKED_STYLE.node_font, wrap_px=LINKED_STYLE.node_wrap)
    seven = next(n for n in nodes if n["label"] == "entity 7")
    assert (seven["bw"], seven["bh"]) == (round(box.right, 2), round(box.bottom, 2))
    assert "x" not in seven  # no position from Python: only the browser knows its frame


def test_linked_document_layout_stops_when_the_page_is_gone() -> None:
    labels = [f"an entity no other test draws {i}" for i in range(12)]  # not a cached layout
    asked: list[int] = []

    def gone() -> bool:
        asked.append(1)
        return True

    with pytest.raises(LayoutCancelled):
        linked_graphs_html([panel("gold", labels)], [], tau=0.5, should_stop=gone)
    assert asked == [1]
