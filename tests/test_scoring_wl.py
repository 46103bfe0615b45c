"""Tests of s3kg_core.scoring.wl: WL features and kernel, paper and kgx variants.

The kgx variant is checked bit for bit against the authors' released pipeline (networkx +
grakel); the paper variant against a naive re-implementation of docs/scores.md's S3KG step 5
written here.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from s3kg_core.errors import ConfigError
from s3kg_core.kgio import read_pairs_csv
from s3kg_core.scoring.wl import WLLabeler, kgx_graph, wl_features, wl_kernel

PROPERTY = settings(
    max_examples=60,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

BENCHMARK_KG_FILES = [
    "paws_wiki_400_KGs.csv",
    "mrpc_400_KGs.csv",
    "sts12_400_KGs.csv",
    "pubmedqa_ranked_faithfulness_400_KGs.csv",
    "semantic_kg_codex_400_KGs.csv",
    "semantic_kg_combined_400_KGs.csv",
    "semantic_kg_findkg_400_KGs.csv",
    "semantic_kg_globi_400_KGs.csv",
    "semantic_kg_oregano_400_KGs.csv",
]


# -- reference implementations (test helpers, not library code) ----------------------------------


def _grakel_wl(edges_1, labels_1, edges_2, labels_2, n_iter: int = 5) -> float:
    """grakel's WeisfeilerLehman(normalize=True) on two graphs given as oriented edge lists."""
    from grakel import Graph
    from grakel.kernels import WeisfeilerLehman

    def to_grakel(edges, labels):
        pairs = {(u, v): 1 for u, _, v in edges}
        return Graph(pairs, node_labels={n: labels[n] for e in pairs for n in e})

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel = WeisfeilerLehman(n_iter=n_iter, normalize=True)
        return float(
            kernel.fit_transform([to_grakel(edges_1, labels_1), to_grakel(edges_2, labels_2)])[0, 1]
        )


def _authors_pure_wl(kg_1, kg_2) -> float:
    """The authors' released pure-WL procedure, as they wrote it: networkx + grakel."""
    from grakel import Graph
    from grakel.kernels import WeisfeilerLehman

    def nx_graph(triples):
        g = nx.Graph()
        for t in triples:
            s, p, o = t.head.lower(), t.relation.lower(), t.tail.lower()
            g.add_edge(s, o, relation=p)
            g.nodes[s]["label"] = s
            g.nodes[o]["label"] = o
        return g

    def to_grakel(g):
        return Graph(
            {(u, v): 1 for u, v in g.edges()},
            node_labels={n: d["label"] for n, d in g.nodes(data=True)},
            edge_labels={(u, v): d["relation"] for u, v, d in g.edges(data=True)},
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kernel = WeisfeilerLehman(n_iter=5, normalize=True)
        return float(
            kernel.fit_transform([to_grakel(nx_graph(kg_1)), to_grakel(nx_graph(kg_2))])[0, 1]
        )


def _ours_pure_kgx(kg_1, kg_2) -> float:
    """What KGScorer(mode="kgx", align=False) hands to the WL kernel."""

    def side(triples):
        edges = [(t.head.lower(), t.relation.lower(), t.tail.lower()) for t in triples]
        return kgx_graph(edges), {n: n for h, _, t in edges for n in (h, t)}

    e1, l1 = side(kg_1)
    e2, l2 = side(kg_2)
    return wl_kernel(e1, l1, e2, l2, 5, variant="kgx")


def _naive_paper_wl(edges_1, labels_1, edges_2, labels_2, k: int) -> float:
    """docs/scores.md step 5 literally: nested-tuple labels, no compression, cosine of counts."""

    def features(edges, labels):
        current = {n: ("label", lab) for n, lab in labels.items()}
        counts = Counter((0, lab) for lab in current.values())
        for it in range(1, k + 1):
            around = {n: [] for n in labels}
            for h, r, t in edges:
                around[h].append(("out", r, current[t]))
                around[t].append(("in", r, current[h]))
            current = {n: (current[n], tuple(sorted(around[n]))) for n in labels}
            counts.update((it, lab) for lab in current.values())
        return counts

    f1, f2 = features(edges_1, labels_1), features(edges_2, labels_2)
    if not f1 or not f2:
        return 0.0
    dot = sum(c * f2[key] for key, c in f1.items())
    return dot / math.sqrt(sum(c * c for c in f1.values()) * sum(c * c for c in f2.values()))


# -- strategies ------------------------------------------------------------------------------------


@st.composite
def graphs(draw, *, unique_labels: bool = False, max_nodes: int = 5, max_edges: int = 6):
    """A small directed multigraph: (edges as (head, relation, tail) node keys, node labels)."""
    n = draw(st.integers(min_value=2, max_value=max_nodes))
    nodes = [f"n{i}" for i in range(n)]
    if unique_labels:
        names = draw(st.permutations([f"L{i}" for i in range(n)]))
        labels = dict(zip(nodes, names, strict=True))
    else:
        labels = {v: draw(st.sampled_from("ABC")) for v in nodes}
    node = st.sampled_from(nodes)
    edges = draw(
        st.lists(st.tuples(node, st.sampled_from(["p", "q"]), node), min_size=1, max_size=max_edges)
    )
    return edges, labels


def _on_edges(edges, labels):
    """Node labels restricted to the nodes that occur in ``edges`` (what a KG's graph has)."""
    return {n: labels[n] for h, _, t in edges for n in (h, t)}


# -- golden values, computed by hand ---------------------------------------------------------------

AB = {"a": "A", "b": "B"}
STAR = {"x": "X", "a": "A", "b": "B"}
COPIES = {"a1": "A", "b1": "B", "a2": "A", "b2": "B"}


@pytest.mark.parametrize(
    ("edges_1", "labels_1", "edges_2", "labels_2", "k", "variant", "expected"),
    [
        # identical single edge
        ([("a", "r", "b")], AB, [("a", "r", "b")], AB, 5, "paper", 1.0),
        # reversed edge: only the two iteration-0 labels agree, 2 of 2 * 6 features each
        ([("a", "r", "b")], AB, [("b", "r", "a")], AB, 5, "paper", 2 / 12),
        ([("a", "r", "b")], AB, [("b", "r", "a")], AB, 1, "paper", 2 / 4),
        ([("a", "r", "b")], AB, [("b", "r", "a")], AB, 0, "paper", 1.0),
        # kgx walks the edge from its first endpoint: reversed, nothing beyond iteration 0 agrees
        ([("a", "r", "b")], AB, [("b", "r", "a")], AB, 5, "kgx", 2 / 12),
        # another relation: the paper variant sees it, kgx is relation-blind
        ([("a", "p", "b")], AB, [("a", "q", "b")], AB, 5, "paper", 2 / 12),
        ([("a", "p", "b")], AB, [("a", "q", "b")], AB, 5, "kgx", 1.0),
        # star x->a, x->b against x->a: paper shares X, A, B at iteration 0 and A at iteration 1
        (
            [("x", "r", "a"), ("x", "r", "b")],
            STAR,
            [("x", "r", "a")],
            {"x": "X", "a": "A"},
            5,
            "paper",
            3 / math.sqrt(18 * 12),
        ),
        # kgx: the sink A has no out-edge, so its label agrees at every iteration (2 + 5 shared)
        (
            [("x", "r", "a"), ("x", "r", "b")],
            STAR,
            [("x", "r", "a")],
            {"x": "X", "a": "A"},
            5,
            "kgx",
            7 / math.sqrt(18 * 12),
        ),
        # two disjoint copies of a graph against one copy: counts are proportional, cosine 1
        (
            [("a1", "r", "b1"), ("a2", "r", "b2")],
            COPIES,
            [("a", "r", "b")],
            AB,
            5,
            "paper",
            1.0,
        ),
        # no label in common
        ([("a", "r", "b")], AB, [("a", "r", "b")], {"a": "C", "b": "D"}, 5, "paper", 0.0),
        # an empty graph scores 0, never NaN
        ([], {}, [("a", "r", "b")], AB, 5, "paper", 0.0),
        ([], {}, [], {}, 5, "kgx", 0.0),
        # struct: direction and relation labels do not count, so a flipped edge scores 1
        ([("a", "r", "b")], AB, [("b", "s", "a")], AB, 5, "struct", 1.0),
        # ... but parallel edges do: only the 2 labels of iteration 0 agree, of 12 per graph
        ([("a", "r", "b"), ("a", "s", "b")], AB, [("a", "r", "b")], AB, 5, "struct", 2 / 12),
    ],
)
def test_wl_kernel_golden(edges_1, labels_1, edges_2, labels_2, k, variant, expected):
    got = wl_kernel(edges_1, labels_1, edges_2, labels_2, k, variant=variant)
    assert got == pytest.approx(expected, abs=1e-12)


def test_wl_features_counts_every_iteration():
    labeler = WLLabeler()
    counts = wl_features([("a", "r", "b")], AB, 3, labeler)
    assert sum(counts.values()) == 2 * 4  # two nodes, iterations 0..3
    assert len(counts) == 8  # A and B never share a label
    # the same graph with the same labeler gets exactly the same features
    assert wl_features([("a", "r", "b")], AB, 3, labeler) == counts


def test_wl_features_rejects_an_unknown_variant():
    with pytest.raises(ConfigError, match="paper, struct or kgx"):
        wl_features([], {"a": "A"}, 1, WLLabeler(), variant="grakel")  # type: ignore[arg-type]


def test_wl_features_rejects_negative_iterations():
    with pytest.raises(ConfigError, match="iterations must be >= 0"):
        wl_features([("a", "r", "b")], AB, -1, WLLabeler())
    with pytest.raises(ConfigError):
        wl_kernel([("a", "r", "b")], AB, [("a", "r", "b")], AB, -1)


def test_wl_labeler_assigns_consecutive_ids():
    labeler = WLLabeler()
    assert [labeler(s) for s in ["x", (0, "y"), "x", (0, "y"), 3]] == [0, 1, 0, 1, 2]


# -- kgx_graph -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ([("b", "r", "a"), ("a", "s", "b"), ("c", "t", "a")], [("b", "s", "a"), ("a", "t", "c")]),
        # the written direction does not matter once both endpoints are known
        ([("a", "r", "b"), ("b", "r", "a")], [("a", "r", "b")]),
        # the last relation written wins, as networkx keeps the last edge attributes
        ([("a", "r", "b"), ("a", "s", "b"), ("b", "t", "a")], [("a", "t", "b")]),
        # self-loops are kept
        ([("a", "r", "a"), ("a", "s", "b")], [("a", "r", "a"), ("a", "s", "b")]),
        ([], []),
    ],
)
def test_kgx_graph_table(edges, expected):
    assert kgx_graph(edges) == expected


@PROPERTY
@given(graphs())
def test_kgx_graph_matches_networkx_graph_edges(graph):
    # Same unordered pairs, same orientation (networkx yields each edge from the endpoint added
    # first) and the same relation (the last one written). The list order may differ from
    # networkx's adjacency order; the kernel sorts neighbours, so order is immaterial.
    edges, _ = graph
    g = nx.Graph()
    for h, r, t in edges:
        g.add_edge(h, t, relation=r)
    expected = {(u, d["relation"], v) for u, v, d in g.edges(data=True)}
    got = kgx_graph(edges)
    assert len(got) == len(expected)
    assert set(got) == expected


# -- bit-for-bit against grakel --------------------------------------------------------------------


@PROPERTY
@given(graphs(), graphs(), st.integers(min_value=1, max_value=5))  # grakel needs n_iter >= 1
def test_kgx_kernel_equals_grakel_on_small_graphs(g1, g2, k):
    e1 = kgx_graph(g1[0])
    e2 = kgx_graph(g2[0])
    l1, l2 = _on_edges(e1, g1[1]), _on_edges(e2, g2[1])
    ours = wl_kernel(e1, l1, e2, l2, k, variant="kgx")
    assert ours == pytest.approx(_grakel_wl(e1, l1, e2, l2, n_iter=k), abs=1e-12)


@pytest.mark.shared_data
@pytest.mark.parametrize("name", BENCHMARK_KG_FILES)
def test_kgx_pure_wl_equals_authors_pipeline_on_released_pairs(benchmarks_kgs: Path, name):
    path = benchmarks_kgs / name
    if not path.exists():
        pytest.skip(f"{path} is missing")
    checked = 0
    for row in read_pairs_csv(path):
        if row.status != "ok" or not row.kg_1 or not row.kg_2:
            continue
        ours = _ours_pure_kgx(row.kg_1, row.kg_2)
        ref = _authors_pure_wl(row.kg_1, row.kg_2)
        assert ours == pytest.approx(ref, abs=1e-12), f"{name} id {row.id}"
        checked += 1
    assert checked >= 370  # every released set has at least 378 scoreable pairs


# -- the paper variant against a naive re-implementation -----------------------------------------


@PROPERTY
@given(graphs(), graphs(), st.integers(min_value=0, max_value=4))
def test_paper_kernel_equals_naive_reimplementation(g1, g2, k):
    ours = wl_kernel(g1[0], g1[1], g2[0], g2[1], k, variant="paper")
    assert ours == pytest.approx(_naive_paper_wl(g1[0], g1[1], g2[0], g2[1], k), abs=1e-12)


def _every_round(e1, l1, e2, l2, k, variant):  # the kernel with all K rounds run
    labeler = WLLabeler()
    f1 = wl_features(e1, l1, k, labeler, variant=variant)
    f2 = wl_features(e2, l2, k, labeler, variant=variant)
    if not f1 or not f2:
        return 0.0
    dot = sum(c * f2.get(key, 0) for key, c in f1.items())
    n1, n2 = sum(c * c for c in f1.values()), sum(c * c for c in f2.values())
    return min(1.0, float(dot) / math.sqrt(float(n1) * float(n2)))


@pytest.mark.parametrize("variant", ["paper", "struct", "kgx"])
@PROPERTY
@given(graphs(), graphs(), st.integers(min_value=0, max_value=8))
def test_the_kernel_stopping_at_a_stable_partition_equals_every_round_run(variant, g1, g2, k):
    """The kernel stops once a round splits no class and adds the later rounds' equal counts:
    the same float, bit for bit, as running all K rounds."""
    ours = wl_kernel(g1[0], g1[1], g2[0], g2[1], k, variant=variant)
    assert ours == _every_round(g1[0], g1[1], g2[0], g2[1], k, variant)


def test_the_kernel_stops_early_on_a_stable_partition(monkeypatch):
    """Two rounds of a 2-node path split nothing more: K = 50 runs no more rounds than K = 2."""
    calls = []
    labeler_call = WLLabeler.__call__

    def counting(self, signature):
        calls.append(signature)
        return labeler_call(self, signature)

    monkeypatch.setattr(WLLabeler, "__call__", counting)
    edges, labels = [("a", "r", "b")], {"a": "x", "b": "y"}
    wl_kernel(edges, labels, edges, labels, 2)
    two = len(calls)
    calls.clear()
    assert wl_kernel(edges, labels, edges, labels, 50) == 1.0
    assert len(calls) == two


# -- properties of the kernel ----------------------------------------------------------------------

VARIANTS = pytest.mark.parametrize("variant", ["paper", "struct", "kgx"])


@VARIANTS
@PROPERTY
@given(g1=graphs(), g2=graphs())
def test_kernel_is_bounded_and_symmetric(variant, g1, g2):
    # Cosine of two non-negative count vectors: in [0, 1]. Symmetric exactly: the dot product
    # and the squared norms are integers, whatever ids the shared labeler hands out first.
    a = wl_kernel(g1[0], g1[1], g2[0], g2[1], variant=variant)
    b = wl_kernel(g2[0], g2[1], g1[0], g1[1], variant=variant)
    assert 0.0 <= a <= 1.0
    assert a == b


@VARIANTS
@PROPERTY
@given(graphs())
def test_identical_graphs_score_exactly_one(variant, g):
    # Equal count vectors: dot == norm^2 and sqrt of a perfect square is exact in floating point.
    assert wl_kernel(g[0], g[1], g[0], g[1], variant=variant) == 1.0


@VARIANTS
@PROPERTY
@given(g1=graphs(), g2=graphs(), data=st.data())
def test_kernel_is_invariant_under_node_renaming(variant, g1, g2, data):
    # WL only looks at labels, never at node keys: renaming the nodes of one graph (a bijection
    # on keys, labels kept) changes nothing. For kgx the raw edges are renamed *before*
    # kgx_graph, which keeps the first-appearance order and so the orientation.
    edges, labels = g1
    keys = list(labels)
    new_keys = data.draw(st.permutations([f"m{i}" for i in range(len(keys))]))
    rename = dict(zip(keys, new_keys, strict=True))
    edges_r = [(rename[h], r, rename[t]) for h, r, t in edges]
    labels_r = {rename[n]: lab for n, lab in labels.items()}
    if variant == "kgx":
        before = wl_kernel(kgx_graph(edges), labels, kgx_graph(g2[0]), g2[1], variant="kgx")
        after = wl_kernel(kgx_graph(edges_r), labels_r, kgx_graph(g2[0]), g2[1], variant="kgx")
    else:
        before = wl_kernel(edges, labels, g2[0], g2[1], variant="paper")
        after = wl_kernel(edges_r, labels_r, g2[0], g2[1], variant="paper")
    assert after == before


@VARIANTS
@PROPERTY
@given(g1=graphs(), g2=graphs(), data=st.data())
def test_kernel_is_invariant_under_consistent_label_renaming(variant, g1, g2, data):
    # Only equality of labels matters: a bijection applied to the labels of both graphs alike
    # gives the same score.
    perm = dict(zip("ABC", data.draw(st.permutations(["x", "y", "z"])), strict=True))
    before = wl_kernel(g1[0], g1[1], g2[0], g2[1], variant=variant)
    after = wl_kernel(
        g1[0],
        {n: perm[v] for n, v in g1[1].items()},
        g2[0],
        {n: perm[v] for n, v in g2[1].items()},
        variant=variant,
    )
    assert after == before


@PROPERTY
@given(graphs(unique_labels=True), st.data())
def test_paper_variant_is_direction_sensitive(graph, data):
    # With distinct node labels, iteration 1 spells out every node's in- and out-edges, so the
    # features determine the edge multiset. Reversing one edge h->t with h != t changes that
    # multiset, hence the features; both graphs have the same number of nodes, so the count
    # vectors have equal sums and cannot be proportional either: the score is < 1.
    edges, labels = graph
    candidates = [i for i, (h, _, t) in enumerate(edges) if h != t]
    if not candidates:
        edges = [*edges, ("n0", "p", "n1")]
        candidates = [len(edges) - 1]
    i = data.draw(st.sampled_from(candidates))
    h, r, t = edges[i]
    reversed_ = [*edges[:i], (t, r, h), *edges[i + 1 :]]
    assert wl_kernel(edges, labels, reversed_, labels, variant="paper") < 1.0


@PROPERTY
@given(graphs(unique_labels=True), st.data())
def test_paper_variant_sees_relations_kgx_does_not(graph, data):
    # Changing one edge's relation to a new one: the paper variant (edge labels in every
    # signature, distinct node labels) scores < 1; kgx ignores relations and scores exactly 1.
    edges, labels = graph
    i = data.draw(st.integers(min_value=0, max_value=len(edges) - 1))
    h, _, t = edges[i]
    changed = [*edges[:i], (h, "fresh", t), *edges[i + 1 :]]
    assert wl_kernel(edges, labels, changed, labels, variant="paper") < 1.0
    kgx_1, kgx_2 = kgx_graph(edges), kgx_graph(changed)
    assert wl_kernel(kgx_1, labels, kgx_2, labels, variant="kgx") == 1.0


@PROPERTY
@given(graphs(unique_labels=True), st.data())
def test_kgx_ignores_the_written_direction_of_a_late_edge(graph, data):
    # networkx.Graph is undirected: an edge between two nodes that already appeared is oriented
    # by their first appearance, not by how it is written. Writing it h->t or t->h yields the
    # same kgx graph (score 1); the paper variant tells the two apart (distinct labels, h != t).
    edges, labels = graph
    seen = list(dict.fromkeys(n for h, _, t in edges for n in (h, t)))
    assume(len(seen) >= 2)
    h, t = data.draw(st.permutations(seen))[:2]
    forward = [*edges, (h, "p", t)]
    backward = [*edges, (t, "p", h)]
    assert kgx_graph(forward) == kgx_graph(backward)
    assert wl_kernel(kgx_graph(forward), labels, kgx_graph(backward), labels, variant="kgx") == 1.0
    assert wl_kernel(forward, labels, backward, labels, variant="paper") < 1.0
