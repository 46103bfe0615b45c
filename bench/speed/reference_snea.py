"""The S3KG authors' released scoring procedure, re-implemented for timing comparisons only.

This follows the published procedure step by step, with its cost profile: each triple of T1 is
encoded on its own, and for every one of them every triple of T2 is encoded again, one call per
string; labels and the mean-embedding score are encoded per pair; the WL kernel is grakel's. It
is not library code: s3kg_core's ``mode="kgx"`` computes the same numbers (the tests check it
against an independent re-run of the procedure) without the repeated encoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx
import numpy as np
from grakel import Graph
from grakel.kernels import WeisfeilerLehman


def _encode(model: Any, texts: Sequence[str]) -> np.ndarray:
    out = model.encode(list(texts), convert_to_numpy=True, show_progress_bar=False)
    return np.asarray(out, dtype=np.float64)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-8))


def _graph(triples: Sequence[Sequence[str]]) -> nx.Graph:
    g = nx.Graph()
    for s, p, o in triples:
        g.add_edge(s.lower(), o.lower(), relation=p.lower())
        g.nodes[s.lower()]["label"] = s.lower()
        g.nodes[o.lower()]["label"] = o.lower()
    return g


def _mapping(
    model: Any, labels_1: list[str], labels_2: list[str], prefix: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Soft label mapping of each graph: G2 labels get ids, G1 labels take one at cosine >= 0.65."""
    if not labels_1 or not labels_2:
        return {}, {}
    e1, e2 = _encode(model, labels_1), _encode(model, labels_2)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True) + 1e-8
    e2 /= np.linalg.norm(e2, axis=1, keepdims=True) + 1e-8
    sim = e1 @ e2.T
    map_1 = {}
    for i, label in enumerate(labels_1):
        j = int(np.argmax(sim[i]))
        map_1[label] = f"{prefix}_{j}" if sim[i, j] >= 0.65 else label
    return map_1, {label: f"{prefix}_{j}" for j, label in enumerate(labels_2)}


def reference_score(
    model: Any, t1: Sequence[Sequence[str]], t2: Sequence[Sequence[str]], alpha: float = 0.5
) -> tuple[float, float, float]:
    """Return ``(s_wl, s_sbert, score)`` the way the released code computes them."""
    t1 = [list(t) for t in t1 if len(t) == 3]
    t2 = [list(t) for t in t2 if len(t) == 3]
    if not t1 or not t2:
        return 0.0, 0.0, 0.0
    picked: list[list[str]] = []
    for triple in t1:  # one encode call per string, T2 re-encoded for every T1 triple
        v1 = _encode(model, [" ".join(triple)])[0]
        best = max(
            ((_cos(v1, _encode(model, [" ".join(o)])[0]), o) for o in t2), key=lambda x: x[0]
        )
        if best[1] not in picked:
            picked.append(best[1])
    g1, g2 = _graph(t1), _graph(picked)
    nodes_1 = list(dict.fromkeys(nx.get_node_attributes(g1, "label").values()))
    nodes_2 = list(dict.fromkeys(nx.get_node_attributes(g2, "label").values()))
    rels_1 = list(dict.fromkeys(nx.get_edge_attributes(g1, "relation").values()))
    rels_2 = list(dict.fromkeys(nx.get_edge_attributes(g2, "relation").values()))
    ent_1, ent_2 = _mapping(model, nodes_1, nodes_2, "node")
    rel_1, rel_2 = _mapping(model, rels_1, rels_2, "rel")
    map_1, map_2 = {**ent_1, **rel_1}, {**ent_2, **rel_2}  # merged as the released code does

    def grakel_graph(g: nx.Graph, mapping: dict[str, str]) -> Graph:
        labels = {n: mapping.get(d["label"], d["label"]) for n, d in g.nodes(data=True)}
        edges = {(u, v): 1 for u, v in g.edges()}
        return Graph(edges, node_labels=labels)

    k = WeisfeilerLehman(n_iter=5, normalize=True).fit_transform(
        [grakel_graph(g1, map_1), grakel_graph(g2, map_2)]
    )
    s_wl = float(k[0, 1])
    m1 = _encode(model, [" ".join(t) for t in t1]).mean(axis=0)
    m2 = _encode(model, [" ".join(t) for t in picked]).mean(axis=0)
    s_sbert = float(np.clip(_cos(m1, m2), 0.0, 1.0))
    return s_wl, s_sbert, alpha * s_wl + (1 - alpha) * s_sbert
