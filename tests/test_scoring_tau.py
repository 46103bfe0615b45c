"""Tests of s3kg_core.scoring.tau: the triplet analysis unit."""

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_triples
from s3kg_core.scoring.tau import (
    COMPONENT_THRESHOLD,
    LOWEST_FRACTION,
    TAU_CATEGORIES,
    TRIPLE_THRESHOLD,
    TauResult,
    TripletAnalyzer,
    lowest_fraction,
    tau_analyse,
)


@pytest.fixture(scope="module")
def tau() -> TripletAnalyzer:
    return TripletAnalyzer("minilm")


GOLD = [
    ["Renzo", "won_against", "Thomas"],
    ["Renzo", "won_in", "finals"],
    ["Renzo", "born_in", "Italy"],
    ["aspirin", "reduces", "fever"],
]
ANSWER = [
    ["Thomas", "won_against", "Renzo"],  # roles swapped
    ["Renzo", "won_in", "finals"],  # aligned
    ["aspirin", "causes", "fever"],  # relation mismatch
    ["Renzo", "owns", "a yacht"],  # extra
]


def test_worked_example_categories(tau):
    r = tau.analyse(GOLD, ANSWER)
    assert r.counts() == {
        "aligned": 1,
        "relation_mismatch": 1,
        "entity_mismatch": 0,
        "roles_swapped": 1,
        "extra": 1,
        "missing": 1,
    }
    assert r.aligned[0].gold == Triple("renzo", "win in", "final")
    assert [(m.kind, m.parts) for m in r.roles_swapped] == [("roles", "swapped")]
    assert r.roles_swapped[0].answer == Triple("thomas", "win against", "renzo")
    assert r.relation_mismatch[0].gold.relation == "reduce"
    assert r.relation_mismatch[0].answer.relation == "cause"
    assert r.extra == (Triple("renzo", "own", "a yacht"),)
    assert r.missing == (Triple("renzo", "born in", "italy"),)
    assert (r.triple_threshold, r.component_threshold) == (0.76, 0.76)
    assert r.encoder.startswith("minilm@")


def test_categories_are_the_result_fields_counted_in_order():
    r = TauResult(missing=(Triple("a", "r", "b"),))
    assert tuple(r.counts()) == TAU_CATEGORIES
    assert all(isinstance(r.to_dict()[c], list) for c in TAU_CATEGORIES)
    assert r.counts()["missing"] == 1 and sum(r.counts().values()) == 1


def test_literal_mode_counts_sentence_matches_as_aligned():
    # Without component verification the swapped and the opposite-verb pairs have sentence
    # cosine >= 0.76 with MiniLM, so they count as aligned: the reason verification is default.
    r = TripletAnalyzer("minilm", verify_components=False).analyse(GOLD, ANSWER)
    assert r.counts()["aligned"] == 3
    assert r.counts()["entity_mismatch"] == r.counts()["relation_mismatch"] == 0
    assert r.counts()["roles_swapped"] == 0


def test_entity_mismatch_on_one_side(tau):
    r = tau.analyse([["paris", "capital_of", "france"]], [["paris", "capital_of", "germany"]])
    kinds = [(m.kind, m.parts) for m in (*r.entity_mismatch, *r.relation_mismatch)]
    assert kinds == [("entity", "tail")]
    assert not r.extra and not r.missing


def test_alignment_is_one_to_one(tau):
    r = tau.analyse(
        [["marie curie", "discovered", "radium"]],
        [["marie curie", "discovered", "radium"], ["marie curie", "found", "radium"]],
    )
    assert len(r.aligned) == 1
    assert r.aligned[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert len(r.extra) == 1


@pytest.mark.parametrize(
    ("gold", "answer", "expected"),
    [
        ([], [["a", "r", "b"]], {"extra": 1, "missing": 0}),
        ([["a", "r", "b"]], [], {"extra": 0, "missing": 1}),
        ([], [], {"extra": 0, "missing": 0}),
        ([["a", "", "b"]], [["  ", "r", "b"]], {"extra": 0, "missing": 0}),
    ],
)
def test_empty_sides(tau, gold, answer, expected):
    counts = tau.analyse(gold, answer).counts()
    assert {k: counts[k] for k in expected} == expected
    assert counts["aligned"] == 0


def test_many_equals_one_by_one(tau):
    items = [(GOLD, ANSWER), (GOLD[:1], ANSWER[:1]), ([], ANSWER)]
    many = tau.analyse_many(items)
    single = [TripletAnalyzer("minilm").analyse(g, a) for g, a in items]
    for a, b in zip(many, single, strict=True):
        assert a.counts() == b.counts()
        assert [m.answer for m in a.entity_mismatch] == [m.answer for m in b.entity_mismatch]
        assert [m.answer for m in a.roles_swapped] == [m.answer for m in b.roles_swapped]
        assert a.extra == b.extra and a.missing == b.missing


def test_round_trip_through_dict(tau):
    r = tau.analyse(GOLD, ANSWER)
    assert TauResult.from_dict(r.to_dict()) == r


def test_thresholds_are_validated():
    with pytest.raises(ConfigError, match="triple_threshold"):
        TripletAnalyzer("minilm", triple_threshold=1.5)
    with pytest.raises(ConfigError, match="component_threshold"):
        tau_analyse([], [], component_threshold=-0.1)


def test_opposite_verbs_with_high_sentence_cosine_are_relation_mismatches(tau):
    r = tau.analyse([["marie curie", "discovered", "radium"]], [["marie curie", "found", "radium"]])
    assert [(m.kind, m.parts) for m in r.relation_mismatch] == [("relation", "relation")]
    assert r.relation_mismatch[0].similarity >= 0.76


def test_parts_match_below_sentence_threshold_aligns_via_components(tau):
    strict = TripletAnalyzer("minilm", triple_threshold=0.999, cache=tau.cache)
    pair = ([["Marie_Curie", "discovered", "radium"]], [["Marie Curie", "discovered", "Radium."]])
    assert [a.via for a in tau.analyse(*pair).aligned] == ["sentence"]
    assert [a.via for a in strict.analyse(*pair).aligned] == ["components"]


@pytest.mark.parametrize(
    ("scores", "fraction", "expected"),
    [
        ([0.9, 0.1, 0.5, 0.1], 0.5, [1, 3]),
        ([0.9, 0.1, 0.5], 0.05, [1]),
        (list(range(100)), 0.05, [0, 1, 2, 3, 4]),
        ([0.3] * 4, 0.25, [0]),
        ([], 0.05, []),
    ],
)
def test_lowest_fraction(scores, fraction, expected):
    assert lowest_fraction(scores, fraction) == expected


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_lowest_fraction_rejects_bad_fraction(fraction):
    with pytest.raises(ConfigError):
        lowest_fraction([0.1], fraction)


# -- blocked similarities: the same result as the dense walk, in linear memory (issue 28) --------


class _PlaneEncoder:
    """Unit vectors in 3 dimensions, seeded by the text: many pairs near any threshold."""

    name = "plane@test"

    def encode(self, texts):
        import hashlib

        import numpy as np

        out = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).normal(size=3)
            out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)


def _dense_reference(tau: TripletAnalyzer, gold, answer) -> dict:
    """TAU as it was before the blocks: the whole similarity matrix, every residual pair sorted."""
    import numpy as np

    from s3kg_core.kg import as_triples
    from s3kg_core.normalize import normalize_triples
    from s3kg_core.scoring.roles import read_triple

    g = normalize_triples(as_triples(gold), lemmatize=tau.lemmatize)
    a = normalize_triples(as_triples(answer), lemmatize=tau.lemmatize)
    rg, ra = [read_triple(t) for t in g], [read_triple(t) for t in a]
    out = {"aligned": [], "relation": [], "entity": [], "roles": []}
    left_g, left_a = set(range(len(g))), set(range(len(a)))

    def record(i, j, s, kind, via):
        if kind is None or kind[0] == "aligned":
            out["aligned"].append((g[i], a[j], via))
        else:
            out[kind[0]].append((g[i], a[j], kind[1]))
        left_g.discard(i)
        left_a.discard(j)

    if g and a:
        m = tau.cache.matrix
        sim = m[tau.cache.rows([t.triple.sentence() for t in rg])] @ m[tau.cache.rows(
            [t.triple.sentence() for t in ra])].T  # fmt: skip
        rows, cols = np.nonzero(sim >= tau.triple_threshold)
        used_r, used_c = set(), set()
        for k in np.lexsort((cols, rows, -sim[rows, cols])):
            i, j = int(rows[k]), int(cols[k])
            if i not in used_r and j not in used_c:
                used_r.add(i)
                used_c.add(j)
                record(i, j, float(sim[i, j]), tau._classify(rg[i], ra[j]), "sentence")
        for _, i, j in sorted((-float(sim[i, j]), i, j) for i in left_g for j in left_a):
            if i in left_g and j in left_a and (kind := tau._classify(rg[i], ra[j])) is not None:
                record(i, j, 0.0, kind, "components")
    out["extra"] = [a[j] for j in sorted(left_a)]
    out["missing"] = [g[i] for i in sorted(left_g)]
    return out


def _as_reference(r: TauResult) -> dict:
    return {
        "aligned": [(x.gold, x.answer, x.via) for x in r.aligned],
        "relation": [(m.gold, m.answer, m.parts) for m in r.relation_mismatch],
        "entity": [(m.gold, m.answer, m.parts) for m in r.entity_mismatch],
        "roles": [(m.gold, m.answer, m.parts) for m in r.roles_swapped],
        "extra": list(r.extra),
        "missing": list(r.missing),
    }


@pytest.mark.parametrize("small_blocks", [False, True])
def test_blocked_walk_equals_the_dense_walk(monkeypatch, small_blocks):
    """Seeded random KGs over a small vocabulary (ties, shared entities, crowded rows); with
    tiny blocks and two to four kept candidates per row every refill path runs."""
    import random

    import s3kg_core.scoring.tau as tau_module

    if small_blocks:
        monkeypatch.setattr(tau_module, "_TOP", 2)
        monkeypatch.setattr(tau_module, "_TOP_MAX", 4)
        monkeypatch.setattr(tau_module, "_BLOCK_CELLS", 7)
    rng = random.Random(28)
    entities = ["a", "b", "c", "d", "e", "f", "g", "h"]
    relations = ["r", "s", "t", "u"]
    for thresholds in [(0.76, 0.76), (0.3, 0.5), (0.9, 0.2)]:
        tau = TripletAnalyzer(
            _PlaneEncoder(), triple_threshold=thresholds[0], component_threshold=thresholds[1]
        )
        for _ in range(40):
            kgs = [
                [[rng.choice(entities), rng.choice(relations), rng.choice(entities)]
                 for _ in range(rng.randint(0, 14))]
                for _ in range(2)
            ]  # fmt: skip
            assert _as_reference(tau.analyse(*kgs)) == _dense_reference(tau, *kgs)


def test_memory_grows_with_the_kgs_not_with_their_product():
    """Regression (issue 28, item 5): TAU built the whole gold x answer similarity matrix (and
    every residual pair as a Python tuple): 8,000-triple chains took 1.44 GB, 20,000 were
    killed at 9.3 GB. 3,000-triple chains here: the dense matrix alone is 36 MB."""
    import tracemalloc

    n = 3000
    gold = [[f"station {i}", "connects to", f"station {i + 1}"] for i in range(n)]
    answer = [
        [f"station {i}", "is far from" if i % 4 == 1 else "connects to", f"depot {i + 1}"]
        if i % 2 else [f"station {i + 1}", "connects to", f"station {i}"]
        for i in range(n)
    ]  # fmt: skip
    tau = TripletAnalyzer(_PlaneEncoder(), lemmatize=False)
    tau.analyse(gold[:2], answer[:2])  # warm up imports
    tau.cache.add(  # encoded before measuring: the cache is linear anyway
        s for t in (*gold, *answer) for s in (" ".join(t), *t)
    )
    tracemalloc.start()
    result = tau.analyse(gold, answer)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sum(result.counts().values()) > n
    assert peak < 30e6, f"peak {peak / 1e6:.0f} MB"


def test_a_kg_past_the_limits_is_not_analysed_and_says_why(monkeypatch):
    import s3kg_core.limits as limits

    monkeypatch.setattr(limits, "MAX_TRIPLES", 3)
    tau = TripletAnalyzer(_PlaneEncoder())
    big = [["a", "r", f"b{i}"] for i in range(4)]
    over, fine = tau.analyse_many([(big, big[:1]), (big[:1], big[:1])])
    assert over.status == "oversized_gold" and sum(over.counts().values()) == 0
    assert fine.status == "ok" and fine.counts()["aligned"] == 1
    assert tau.analyse(big[:1], [["a", "r", "x" * 1001]]).status == "oversized_answer"
    assert TauResult.from_dict(over.to_dict()) == over


def test_tau_s_defaults_are_one_named_constant_each_read_everywhere():
    # issue 42: 0.76 was written 5 times (and read back through __kwdefaults__), the lowest
    # fraction 0.05 six times; every default now reads scoring.tau's constants
    import inspect

    from s3kg_core.annotation.calibrate import fit_threshold
    from s3kg_core.cli.pipeline import run_cmd
    from s3kg_core.cli.store import tau_cmd
    from s3kg_core.stages.run import TauSettings
    from s3kg_core.stages.tau import resolve_threshold, tau_store

    def default(fn, name):
        return inspect.signature(fn).parameters[name].default

    def option(command, name):
        return next(p.default for p in command.params if p.name == name)

    analyzer = inspect.signature(TripletAnalyzer.__init__).parameters
    assert analyzer["triple_threshold"].default is TRIPLE_THRESHOLD
    assert analyzer["component_threshold"].default is COMPONENT_THRESHOLD
    assert default(tau_analyse, "triple_threshold") is TRIPLE_THRESHOLD
    assert default(fit_threshold, "default") is TRIPLE_THRESHOLD
    assert resolve_threshold(None, None, "m") == (TRIPLE_THRESHOLD, "default")  # type: ignore[arg-type]
    assert default(lowest_fraction, "fraction") is LOWEST_FRACTION
    assert default(tau_store, "fraction") is LOWEST_FRACTION
    assert TauSettings().fraction is LOWEST_FRACTION
    assert option(tau_cmd, "fraction") is LOWEST_FRACTION
    assert option(run_cmd, "fraction") is LOWEST_FRACTION


# -- roles: a passive or inverse triple states the gold fact; a swapped one does not ------------


@pytest.mark.parametrize(
    ("gold", "answer", "rule"),
    [
        (
            ["alexander fleming", "discover", "penicillin"],
            ["Penicillin", "discovered by", "Alexander Fleming"],
            "passive",
        ),
        (["marie curie", "parent of", "irene"], ["Irene", "child of", "Marie Curie"], "inverse"),
        (["acme", "employ", "bob"], ["Bob", "works for", "Acme"], "inverse"),
        (["irene", "child of", "marie curie"], ["Marie Curie", "parent of", "Irene"], "inverse"),
    ],
)
def test_a_passive_or_inverse_triple_is_aligned(tau, gold, answer, rule):
    """Regression: ``(penicillin, discovered by, alexander fleming)`` was not aligned with
    ``(alexander fleming, discover, penicillin)``."""
    r = tau.analyse([gold], [answer])
    assert r.counts()["aligned"] == 1, r.counts()
    assert r.aligned[0].rule == rule
    assert r.aligned[0].answer == normalize_triples([Triple.from_any(answer)])[0]  # as written


def test_the_same_wording_on_both_sides_has_no_rule(tau):
    r = tau.analyse(
        [["penicillin", "discovered by", "fleming"]], [["penicillin", "discovered by", "fleming"]]
    )
    assert r.counts()["aligned"] == 1 and r.aligned[0].rule == ""


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        (["brutus", "killed", "caesar"], ["caesar", "killed", "brutus"]),
        (
            ["alexander fleming", "discover", "penicillin"],
            ["Alexander Fleming", "discovered by", "Penicillin"],
        ),
        (["marie curie", "parent of", "irene"], ["Marie Curie", "child of", "Irene"]),
    ],
)
def test_a_swapped_triple_is_roles_swapped(tau, gold, answer):
    """Regression: a swap was an entity mismatch with parts "swapped"."""
    r = tau.analyse([gold], [answer])
    assert r.counts() == {
        "aligned": 0,
        "relation_mismatch": 0,
        "entity_mismatch": 0,
        "roles_swapped": 1,
        "extra": 0,
        "missing": 0,
    }
    assert (r.roles_swapped[0].kind, r.roles_swapped[0].parts) == ("roles", "swapped")


def test_a_swap_whose_sentences_align_is_still_roles_swapped(tau):
    gold, answer = ["Renzo", "won_against", "Thomas"], ["Thomas", "won_against", "Renzo"]
    r = tau.analyse([gold], [answer])
    assert r.roles_swapped[0].similarity >= tau.triple_threshold  # aligned by sentence first
    assert r.counts()["roles_swapped"] == 1 and r.counts()["aligned"] == 0


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        (["france", "borders", "spain"], ["Spain", "borders", "France"]),
        (["pierre", "married to", "marie"], ["Marie", "is married to", "Pierre"]),
    ],
)
def test_a_symmetric_relation_read_both_ways_is_aligned(tau, gold, answer):
    r = tau.analyse([gold], [answer])
    assert r.counts()["aligned"] == 1 and r.counts()["roles_swapped"] == 0
    assert "symmetric" in r.aligned[0].rule


def test_roles_swapped_round_trips_through_dict(tau):
    r = tau.analyse(
        [["brutus", "killed", "caesar"], ["fleming", "discover", "penicillin"]],
        [["caesar", "killed", "brutus"], ["penicillin", "discovered by", "fleming"]],
    )
    d = r.to_dict()
    assert d["counts"]["roles_swapped"] == 1 and len(d["roles_swapped"]) == 1
    assert d["aligned"][0]["rule"] == "passive"
    assert TauResult.from_dict(d) == r


def test_an_old_stored_dict_reads_its_swapped_entity_mismatches_as_roles_swapped():
    old = {
        "aligned": [{"gold": ["a", "r", "b"], "answer": ["a", "r", "b"], "similarity": 1.0}],
        "relation_mismatch": [],
        "entity_mismatch": [
            {"gold": ["d", "r", "e"], "answer": ["e", "r", "d"], "kind": "entity",
             "parts": "swapped", "similarity": 0.97},
            {"gold": ["d", "r", "e"], "answer": ["d", "r", "f"], "kind": "entity",
             "parts": "tail", "similarity": 0.8},
        ],
        "extra": [],
        "missing": [],
    }  # fmt: skip
    r = TauResult.from_dict(old)
    assert [m.parts for m in r.entity_mismatch] == ["tail"]
    assert [(m.answer, m.kind, m.parts) for m in r.roles_swapped] == [
        (Triple("e", "r", "d"), "roles", "swapped")
    ]
    assert r.aligned[0].rule == "" and r.counts()["roles_swapped"] == 1


@pytest.mark.parametrize(
    ("gold", "answer"),
    [
        # the demo's false swaps (issue 57): a copula written either way round, and an agentless
        # passive whose relation is the gold one and a preposition
        (["first people", "is", "Edmund Hillary"], ["Edmund Hillary", "is", "first people"]),
        (["photosynthesis", "releases", "oxygen"], ["oxygen", "released during", "photosynthesis"]),
    ],
)
def test_a_copula_or_an_agentless_passive_read_crossed_is_no_swap(tau, gold, answer):
    r = tau.analyse(gold=[gold], answer=[answer])
    assert not r.roles_swapped
