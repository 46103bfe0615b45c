"""Tests of dashboard.graphs: shared entity colours and the vis-network graph data."""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import re
import time

import pytest

from dashboard.graphs import (
    HIGHLIGHT_COLOUR,
    LINKED_STYLE,
    PALETTE,
    UNMATCHED_COLOUR,
    GraphColours,
    GraphPanel,
    LinkedRow,
    PanelEdge,
    PanelNode,
    alignment_colours,
    contrast_with_white,
    kg_html,
    kg_network_data,
    legend_html,
    linked_graphs_html,
)
from s3kg_core.errors import GraphRenderError
from s3kg_core.kg import Triple

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "</script><script>alert(1)</script>"
LINK = "<a href=javascript:alert(1)>click</a>"
REMOTE = re.compile(
    r"<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*[\"']?\s*(?:https?:)?//", re.I
)


def payload(page: str, name: str) -> list[dict[str, object]]:
    """The JSON handed to ``new vis.DataSet`` for ``nodes`` or ``edges``."""
    match = re.search(rf"{name} = new vis\.DataSet\((.*?)\);\n", page)
    assert match is not None, f"no {name} DataSet in the page"
    data: list[dict[str, object]] = json.loads(match.group(1))
    return data


# --- alignment_colours -------------------------------------------------------------------------


def test_colours_shared_partner_takes_first_colour() -> None:
    answer = [Triple("Paris", "capital of", "France"), Triple("Lutetia", "old name of", "Paris")]
    c = alignment_colours(answer, {"paris": "paris", "lutetia": "paris", "france": None}, {})
    assert c.answer == {"paris": PALETTE[0], "lutetia": PALETTE[1]}
    assert c.gold == {"paris": PALETTE[0]}
    assert c.context == {}


def test_colours_gold_and_context_share_the_answer_colour() -> None:
    answer = [Triple("Marie Curie", "discovered", "radium")]
    c = alignment_colours(
        answer, {"marie curie": "curie", "radium": None}, {"radium": "ra", "marie curie": "marie"}
    )
    assert c.answer == {"marie curie": PALETTE[0], "radium": PALETTE[1]}
    assert c.gold == {"curie": PALETTE[0]}
    assert c.context == {"marie": PALETTE[0], "ra": PALETTE[1]}


def test_colours_without_partners_are_empty() -> None:
    answer = [Triple("a", "r", "b")]
    assert alignment_colours(answer, {"a": None, "b": ""}, {}) == GraphColours()
    assert alignment_colours([], {"a": "a"}, {"a": "a"}) == GraphColours()


def test_colours_ignore_keys_that_are_not_answer_entities() -> None:
    c = alignment_colours([Triple("a", "r", "b")], {"zzz": "a", "b": "bee"}, {})
    assert c.answer == {"b": PALETTE[0]} and c.gold == {"bee": PALETTE[0]}


def test_colours_cycle_the_palette() -> None:
    n = len(PALETTE) + 3
    answer = [Triple(f"e{i}", "r", f"e{i + 1}") for i in range(n - 1)]
    mapping: dict[str, str | None] = {f"e{i}": f"g{i}" for i in range(n)}
    c = alignment_colours(answer, mapping, {})
    assert list(c.answer) == [f"e{i}" for i in range(n)]
    assert list(c.answer.values()) == [PALETTE[i % len(PALETTE)] for i in range(n)]
    assert c.gold[f"g{len(PALETTE)}"] == PALETTE[0]


def test_colours_are_deterministic_by_first_appearance() -> None:
    answer = [Triple("B", "r", "A"), Triple("A", "r", "C")]
    mapping: dict[str, str | None] = {"a": "x", "b": "y", "c": "z"}
    first = alignment_colours(answer, mapping, {})
    assert first == alignment_colours(answer, dict(reversed(mapping.items())), {})
    assert list(first.answer) == ["b", "a", "c"]
    assert first.answer == {"b": PALETTE[0], "a": PALETTE[1], "c": PALETTE[2]}


def test_colours_normalise_the_answer_labels() -> None:
    c = alignment_colours([Triple("Big_Cities", "have", "x")], {"big city": "town"}, {})
    assert c.answer == {"big city": PALETTE[0]}


# --- kg_network_data ---------------------------------------------------------------------------


def test_network_data_nodes_edges_and_colours() -> None:
    triples = [Triple("Cats", "chase", "mice"), Triple("cat", "eat", "Fish")]
    nodes, edges = kg_network_data(triples, {"cat": "#123abc"})
    assert [n["id"] for n in nodes] == ["cat", "mouse", "fish"]
    assert [n["label"] for n in nodes] == ["Cats", "mice", "Fish"]
    assert [n["color"] for n in nodes] == ["#123abc", UNMATCHED_COLOUR, UNMATCHED_COLOUR]
    assert [(e["from"], e["to"], e["label"]) for e in edges] == [
        ("cat", "mouse", "chase"),
        ("cat", "fish", "eat"),
    ]
    assert all(e["color"] != HIGHLIGHT_COLOUR for e in edges)


def test_network_data_highlight_compares_normalised() -> None:
    triples = [Triple("Cats", "chase", "mice"), Triple("cat", "eat", "Fish")]
    _, edges = kg_network_data(triples, {}, highlight=[Triple("cat", "chases", "mouse")])
    assert edges[0]["color"] == HIGHLIGHT_COLOUR
    assert edges[1]["color"] != HIGHLIGHT_COLOUR
    assert edges[0]["width"] > edges[1]["width"]


def test_network_data_custom_unmatched_colour() -> None:
    nodes, _ = kg_network_data([Triple("a", "r", "b")], {"a": "#00ff00"}, unmatched="#999")
    assert [n["color"] for n in nodes] == ["#00ff00", "#999"]


def test_network_data_keeps_every_parallel_relation() -> None:
    triples = [
        Triple("a", "r1", "b"),
        Triple("a", "r2", "b"),
        Triple("b", "r3", "a"),
        Triple("a", "loop1", "a"),
        Triple("a", "loop2", "a"),
    ]
    _, edges = kg_network_data(triples, {})
    assert [e["label"] for e in edges] == ["r1", "r2", "r3", "loop1", "loop2"]
    curves = [e.get("smooth", {}).get("roundness") for e in edges[:3]]
    assert curves[0] is None and len(set(curves)) == 3
    sizes = [e["selfReference"]["size"] for e in edges[3:]]
    assert sizes[0] != sizes[1]


def test_network_data_drops_duplicates_and_empty_parts() -> None:
    triples = [Triple("A", "likes", "B"), Triple("a", "like", "b"), Triple("___", "r", "x")]
    nodes, edges = kg_network_data(triples, {})
    assert [n["id"] for n in nodes] == ["a", "b"]
    assert [e["label"] for e in edges] == ["likes"]


def test_network_data_escapes_titles_but_not_labels() -> None:
    nodes, edges = kg_network_data([Triple(IMG, SCRIPT, "AT&T")], {})
    assert nodes[0]["label"] == IMG and nodes[0]["title"] == "&lt;img src=x onerror=alert(1)&gt;"
    assert nodes[1]["title"] == "AT&amp;T"
    assert edges[0]["label"] == SCRIPT and "<" not in str(edges[0]["title"])


@pytest.mark.parametrize("bad", ["red;background:url(x)", "#12", "", None])
def test_network_data_rejects_bad_colours(bad: object) -> None:
    with pytest.raises(GraphRenderError, match="hex colour"):
        kg_network_data([Triple("a", "r", "b")], {"a": bad})  # type: ignore[dict-item]


# --- kg_html -----------------------------------------------------------------------------------


def test_html_contains_every_label_relation_and_colour() -> None:
    triples = [Triple("Cats", "chase", "mice"), Triple("cat", "eat", "Fish")]
    page = kg_html(triples, {"cat": "#123abc"}, highlight=[triples[1]], height_px=300)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    nodes, edges = payload(page, "nodes"), payload(page, "edges")
    assert {n["label"] for n in nodes} == {"Cats", "mice", "Fish"}
    assert {n["id"]: n["color"] for n in nodes} == {
        "cat": "#123abc",
        "mouse": UNMATCHED_COLOUR,
        "fish": UNMATCHED_COLOUR,
    }
    assert {(e["from"], e["label"], e["to"]) for e in edges} == {
        ("cat", "chase", "mouse"),
        ("cat", "eat", "fish"),
    }
    assert [e["color"] for e in edges] == ["#7f7f7f", HIGHLIGHT_COLOUR]
    assert all(e["arrows"] == "to" for e in edges)
    assert "height: 300px" in page


def test_html_keeps_parallel_edges() -> None:
    page = kg_html([Triple("a", "r1", "b"), Triple("a", "r2", "b"), Triple("b", "r3", "a")], {})
    assert [e["label"] for e in payload(page, "edges")] == ["r1", "r2", "r3"]


def test_html_loads_nothing_from_the_network() -> None:
    page = kg_html([Triple("a", "r", "b")], {})
    assert not REMOTE.search(page)
    assert "<link" not in page
    assert "cdn.jsdelivr" not in page and "cdnjs" not in page
    assert "new vis.Network" in page and "vis.DataSet" in page
    assert "stabilization" in payload_options(page)["physics"]


def payload_options(page: str) -> dict[str, object]:
    match = re.search(r"var options = (\{.*?\});\n", page, re.S)
    assert match is not None
    options: dict[str, object] = json.loads(match.group(1))
    return options


def test_html_never_turns_labels_into_markup() -> None:
    innocent = kg_html([Triple("x", "y", "z"), Triple("u", "v", "w")], {})
    page = kg_html([Triple(IMG, SCRIPT, "AT&T"), Triple(LINK, "href", "'q\"")], {})
    assert "<img src=x" not in page
    assert "<script>alert" not in page and "</script><script>" not in page
    assert "<a href=javascript" not in page
    assert page.count("</script>") == innocent.count("</script>")
    assert page.count("<script") == innocent.count("<script")
    nodes, edges = payload(page, "nodes"), payload(page, "edges")
    assert [n["label"] for n in nodes] == [IMG, "AT&T", LINK, "'q\""]
    assert [e["label"] for e in edges] == [SCRIPT, "href"]
    assert all("<" not in str(n["title"]) for n in nodes)
    # pyvis's innerHTML popup (switched on by "href" in a title) is disabled
    assert "innerHTML = nodeData" not in page and ".vis-tooltip {" not in page


def test_html_empty_graph_is_a_small_page() -> None:
    page = kg_html([], {})
    assert page.startswith("<!DOCTYPE html>") and "no triples" in page
    assert len(page) < 1000 and "<script" not in page
    only_empty_parts = kg_html([Triple("___", "r", "x")], {}, empty_message="<b>none</b>")
    assert "&lt;b&gt;none&lt;/b&gt;" in only_empty_parts and "<b>" not in only_empty_parts


@pytest.mark.parametrize("height", [0, -5, 1.5, True, "420"])
def test_html_rejects_bad_height(height: object) -> None:
    with pytest.raises(GraphRenderError, match="height_px"):
        kg_html([Triple("a", "r", "b")], {}, height_px=height)  # type: ignore[arg-type]


def test_html_fifty_nodes() -> None:
    triples = [
        Triple(f"Entity {i}", f"rel {i % 4}", f"Entity {(i * 7 + 3) % 50}") for i in range(50)
    ]
    triples += [Triple(f"Entity {i}", "next", f"Entity {i + 1}") for i in range(49)]
    colours = alignment_colours(triples, {f"entity {i}": f"g{i}" for i in range(0, 50, 3)}, {})
    kg_html(triples[:1], {})  # warm the normaliser and the template cache
    start = time.perf_counter()
    page = kg_html(triples, colours.answer, highlight=triples[:5])
    took = time.perf_counter() - start
    nodes, edges = payload(page, "nodes"), payload(page, "edges")
    assert len(nodes) == 50 and len(edges) == 99
    assert sum(e["color"] == HIGHLIGHT_COLOUR for e in edges) == 5
    print(f"\n50-node graph: {took * 1000:.1f} ms, {len(page) / 1024:.0f} KiB of HTML")


# --- legend_html -------------------------------------------------------------------------------


def test_legend_escapes_and_lists_grey_and_red() -> None:
    legend = legend_html({"a<b": "#e69f00", "c": "#56b4e9"}, labels={"c": "C & D"})
    assert "a&lt;b" in legend and "C &amp; D" in legend and "<b" not in legend
    assert UNMATCHED_COLOUR in legend and HIGHLIGHT_COLOUR in legend
    assert legend.index("#e69f00") < legend.index("#56b4e9") < legend.index(UNMATCHED_COLOUR)


def test_legend_caps_items_and_rejects_css() -> None:
    legend = legend_html({f"e{i}": PALETTE[i % len(PALETTE)] for i in range(10)}, max_items=3)
    assert "e2" in legend and "e3" not in legend and "+7 more" in legend
    with pytest.raises(GraphRenderError):
        legend_html({"a": "red;background:url(//x)"})


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
        return [(n["id"], n["x"], n["y"], n["rx"], n["ry"], n["comp"]) for n in nodes]

    assert places(plain) == places(badged)
    node = {n["id"]: n for n in badged["panels"][0]["nodes"]}  # type: ignore[index]
    assert node["radium"]["badgeText"] == "E2" and node["marie curie"]["badgeText"] == ""
    assert node["radium"]["border"] == PALETTE[0] and node["radium"]["fill"] != PALETTE[0]


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


def test_linked_document_of_sixty_nodes_places_every_node() -> None:
    labels = [f"entity {i}" for i in range(60)]
    doc = linked_graphs_html([panel("context", labels)], [], tau=0.6)
    nodes = linked_data(doc.html)["panels"][0]["nodes"]  # type: ignore[index]
    assert len(nodes) == 60 and len({(n["x"], n["y"]) for n in nodes}) == 60
