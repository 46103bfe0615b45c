"""Tests of the direction suite (s3kg_core.evaluation.direction): facts, variants, the accuracy
math, drawn facts, and scoring with the real MiniLM."""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from pathlib import Path

import pytest

from s3kg_core.errors import ConfigError, InputFormatError
from s3kg_core.evaluation.direction import (
    CHANGE_FAMILIES,
    FAMILIES,
    KEEP_FAMILIES,
    DirectionPair,
    DirectionResult,
    Fact,
    accuracy,
    draw_facts,
    evaluate,
    facts_file,
    load_facts,
    load_suite,
    passive_of,
    report,
    run_direction,
    split_metrics,
)
from s3kg_core.evaluation.pair_sets import BENCHMARKS_SUBDIR
from s3kg_core.evaluation.splits import direction_split
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import KGScorer

T = Triple

FULL = Fact(
    "t-full", "science", "Fleming", "discovered", "penicillin",
    passive="was discovered by", inverse="was found out by", synonym="found",
    replacement="insulin", replaces="tail", context=T("penicillin", "is a", "antibiotic"),
)  # fmt: skip
SYMMETRIC = Fact(
    "t-sym", "geography", "France", "borders", "Spain",
    passive="is bordered by", symmetric=True, replacement="Portugal",
)  # fmt: skip
NO_PASSIVE = Fact(
    "t-inv", "family", "Ann", "is the parent of", "Bo",
    inverse="is the child of", replacement="Cy", replaces="head",
)  # fmt: skip
CTX = T("penicillin", "is a", "antibiotic")


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        (FULL, {
            "passive": [T("penicillin", "was discovered by", "Fleming"), CTX],
            "inverse": [T("penicillin", "was found out by", "Fleming"), CTX],
            "synonym": [T("Fleming", "found", "penicillin"), CTX],
            "swap": [T("penicillin", "discovered", "Fleming"), CTX],
            "passive_old_order": [T("Fleming", "was discovered by", "penicillin"), CTX],
            "entity_replaced": [T("Fleming", "discovered", "insulin"), CTX],
        }),
        (SYMMETRIC, {
            "passive": [T("Spain", "is bordered by", "France")],
            "symmetric": [T("Spain", "borders", "France")],
            "entity_replaced": [T("France", "borders", "Portugal")],
        }),
        (NO_PASSIVE, {
            "inverse": [T("Bo", "is the child of", "Ann")],
            "swap": [T("Bo", "is the parent of", "Ann")],
            "entity_replaced": [T("Cy", "is the parent of", "Bo")],
        }),
    ],
    ids=["all-families-with-context", "symmetric", "no-passive-head-replaced"],
)  # fmt: skip
def test_each_family_builds_exactly_its_triples(fact, expected):
    variants = fact.variants()
    assert {k: list(v) for k, v in variants.items()} == expected
    assert list(variants) == [f for f in FAMILIES if f in expected]  # the families' order
    assert fact.reference() == ((fact.triple, CTX) if fact.context else (fact.triple,))


def test_a_symmetric_fact_has_no_swap_or_old_order_passive():
    # its swap and its passive in the old order both keep the meaning
    assert {"swap", "passive_old_order"}.isdisjoint(SYMMETRIC.variants())
    assert "symmetric" not in FULL.variants()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"passive": None, "synonym": None, "inverse": None}, "no variant keeps its meaning"),
        ({"replacement": "Penicillin"}, "the replacement is the tail itself"),
        ({"replaces": "relation"}, "replaces must be 'head' or 'tail'"),
        ({"head": "  "}, "head must be a non-empty string"),
        ({"source": "guessed"}, "source must be one of written, drawn"),
        ({"synonym": ""}, "synonym must be a non-empty string"),
    ],
)
def test_an_invalid_fact_is_refused_with_what_to_fix(fields, message):
    data = {**FULL.__dict__, **fields}
    with pytest.raises(InputFormatError, match=message):
        Fact(**data)


def test_the_json_form_round_trips_and_refuses_unknown_keys():
    for fact in (FULL, SYMMETRIC, NO_PASSIVE):
        assert Fact.from_dict(json.loads(json.dumps(fact.to_dict()))) == fact
    with pytest.raises(InputFormatError, match="unknown key"):
        Fact.from_dict({**FULL.to_dict(), "synonim": "found"})
    with pytest.raises(InputFormatError, match=r"missing key\(s\) replacement"):
        Fact.from_dict({k: v for k, v in FULL.to_dict().items() if k != "replacement"})
    with pytest.raises(InputFormatError, match=r"context must be \[head, relation, tail\]"):
        Fact.from_dict({**FULL.to_dict(), "context": ["a", "b"]})


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "cannot read the direction facts"),
        ('{"format": "other", "facts": []}', "not a facts file"),
        ('{"format": "s3kg-direction-facts-v1", "facts": {}}', "'facts' must be a list"),
    ],
)
def test_a_bad_facts_file_is_a_clear_error(tmp_path, content, message):
    path = tmp_path / "facts.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        load_facts(path)


def test_two_facts_with_one_id_are_refused(tmp_path):
    path = tmp_path / "facts.json"
    facts = [FULL.to_dict(), {**SYMMETRIC.to_dict(), "id": FULL.id}]
    path.write_text(json.dumps({"format": "s3kg-direction-facts-v1", "facts": facts}))
    with pytest.raises(InputFormatError, match="used twice: t-full"):
        load_facts(path)


# -- the packaged facts ----------------------------------------------------------------------------


def test_the_packaged_facts_cover_the_domains_and_families():
    facts = load_facts()
    assert facts_file().name == "direction_facts.json" and facts_file().is_file()
    assert len(facts) >= 150 and len({f.id for f in facts}) == len(facts)
    domains = Counter(f.domain for f in facts)
    for domain in ("science", "history", "medicine", "business", "family"):
        assert 28 <= domains[domain] <= 35, (domain, domains[domain])
    assert 25 <= sum(f.symmetric for f in facts) <= 40
    assert 0.28 < sum(f.context is not None for f in facts) / len(facts) < 0.45
    family_counts = Counter(fam for f in facts for fam in f.variants())
    assert all(family_counts[fam] >= 25 for fam in FAMILIES), family_counts
    for f in facts:  # every fact compares at least one keeping and one changing variant
        families = set(f.variants())
        assert families & set(KEEP_FAMILIES) and families & set(CHANGE_FAMILIES), f.id
        assert f.source == "written"


def test_the_facts_file_ships_in_the_wheel():
    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"s3kg_core.evaluation" = ["direction_facts.json"]' in text


# -- the suite and its split -------------------------------------------------------------------


def test_the_split_is_by_fact_and_the_sides_partition_the_suite():
    whole = load_suite("all", drawn=False)
    dev, test = load_suite("dev", drawn=False), load_suite("test", drawn=False)
    assert {f.id for f in dev.facts} | {f.id for f in test.facts} == {f.id for f in whole.facts}
    assert not {f.id for f in dev.facts} & {f.id for f in test.facts}
    assert {p.split for p in dev.pairs} == {"dev"} and {p.split for p in test.pairs} == {"test"}
    assert len(dev) + len(test) == len(whole)
    assert 0.4 < len(dev.facts) / len(whole.facts) < 0.6
    # the same facts on the same side in every build, whatever the order of the facts
    again = load_suite("dev", drawn=False, facts=list(load_facts())[::-1])
    assert sorted(f.id for f in again.facts) == sorted(f.id for f in dev.facts)
    assert whole.subset("dev").pairs == dev.pairs
    with pytest.raises(ConfigError, match="holds the dev facts only"):
        dev.subset("test")
    with pytest.raises(ConfigError, match="split must be one of dev, test, all"):
        load_suite("train")


def test_the_pairs_are_the_variants_against_the_reference():
    suite = load_suite("all", drawn=False, facts=[FULL, NO_PASSIVE])
    assert [(p.fact_id, p.family) for p in suite.pairs] == [
        ("t-full", f) for f in FULL.variants()
    ] + [("t-inv", f) for f in NO_PASSIVE.variants()]
    a, b, family, fact_id = suite.pairs[0].as_tuple()
    assert (a, b, family, fact_id) == (FULL.reference(), FULL.variants()["passive"], "passive",
                                       "t-full")  # fmt: skip
    assert suite.kg_pairs()[0] == (a, b)
    assert suite.texts()[0] == (
        "Fleming discovered penicillin. penicillin is a antibiotic.",
        "penicillin was discovered by Fleming. penicillin is a antibiotic.",
    )
    assert suite.counts() == {"written": 2, "drawn": 0}
    assert suite.drawn_note == "drawn facts not asked for"


# -- the accuracy math -------------------------------------------------------------------------


def _pairs(fact: Fact) -> list[DirectionPair]:
    return [DirectionPair(fact, f, fact.reference(), kg) for f, kg in fact.variants().items()]


# FULL's families: passive, inverse, synonym (keep); swap, passive_old_order, entity_replaced
@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ([0.9, 0.9, 0.9, 0.1, 0.1, 0.1], 1.0),
        ([0.1, 0.1, 0.1, 0.9, 0.9, 0.9], 0.0),
        ([0.5] * 6, 0.5),  # every comparison a tie: half each
        ([0.5, 0.5 + 1e-12, 0.5, 0.5, 0.5, 0.5], 0.5),  # within the tolerance: a tie
        ([0.9, 0.6, 0.3, 0.6, 0.2, 0.95], (2 + 1.5 + 1) / 9),  # 0.6 against 0.6: a tie
    ],
)
def test_accuracy_counts_wins_and_half_ties_over_keep_change_pairs(scores, expected):
    acc, n = accuracy(_pairs(FULL), scores)
    assert n == 9
    assert acc == pytest.approx(expected)


def test_accuracy_pools_the_comparisons_of_every_fact_and_only_within_a_fact():
    pairs = _pairs(FULL) + _pairs(NO_PASSIVE)  # 3 x 3 and 1 x 2 comparisons
    # FULL all right; NO_PASSIVE all wrong: its keeping variant is below its own changing ones,
    # though above FULL's changing ones (which it is never compared with)
    scores = [0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.3, 0.4, 0.5]
    assert accuracy(pairs, scores) == (pytest.approx(9 / 11), 11)
    assert accuracy([], []) == (None, 0)
    with pytest.raises(InputFormatError, match="2 scores for 6 pairs"):
        accuracy(_pairs(FULL), [0.1, 0.2])
    with pytest.raises(InputFormatError, match="finite"):
        accuracy(_pairs(SYMMETRIC), [0.1, math.nan, 0.3])


def test_split_metrics_give_family_means_and_the_groups():
    facts = [FULL, SYMMETRIC, NO_PASSIVE]
    pairs = [p for f in facts for p in _pairs(f)]
    known = {"passive": 0.8, "inverse": 0.7, "synonym": 0.9, "symmetric": 0.6, "swap": 0.4,
             "passive_old_order": 0.5, "entity_replaced": 0.3}  # fmt: skip
    scores = [known[p.family] for p in pairs]
    m = split_metrics(pairs, scores)
    assert (m.split, m.facts, m.pairs, m.comparisons) == ("all", 3, len(pairs), 9 + 2 + 2)
    assert m.accuracy == 1.0
    assert m.family_means == pytest.approx(known)
    assert m.family_pairs == {"passive": 2, "inverse": 2, "synonym": 1, "symmetric": 1,
                              "swap": 2, "passive_old_order": 1, "entity_replaced": 3}  # fmt: skip
    keep = [s for p, s in zip(pairs, scores, strict=True) if p.keeps]
    assert m.preserving_mean == pytest.approx(sum(keep) / len(keep))
    assert m.changing_mean == pytest.approx((0.4 * 2 + 0.5 + 0.3 * 3) / 6)
    assert sorted(m.by_domain) == ["family", "geography", "science"]
    assert m.by_domain["geography"].comparisons == 2 and m.by_domain["geography"].facts == 1
    assert list(m.by_source) == ["written"]
    # one side only: the other facts are left out
    side = direction_split(FULL.id)
    only = split_metrics(pairs, scores, side)
    assert only.facts == sum(direction_split(f.id) == side for f in facts)
    assert split_metrics([], [], "dev").accuracy is None


def test_evaluate_with_a_fake_scorer_reports_every_side_and_each_variant():
    suite = load_suite("all", drawn=False, facts=[FULL, SYMMETRIC, NO_PASSIVE])

    def fake(pairs):
        return [0.9 if p.family == "passive" else 0.7 if p.keeps else 0.2 for p in pairs]

    result = evaluate(fake, "all", suite=suite)
    assert sorted(result.metrics) == ["all", "dev", "test"]
    assert result.metrics["all"].accuracy == 1.0
    assert result.per_fact()["t-sym"] == {"passive": 0.9, "symmetric": 0.7,
                                          "entity_replaced": 0.2}  # fmt: skip
    assert result.facts == {"written": 3, "drawn": 0} and result.mode == "fake"
    back = DirectionResult.from_dict(json.loads(json.dumps(result.to_dict(scores=True))))
    assert back.metrics == result.metrics and back.per_fact() == result.per_fact()
    one = evaluate(fake, direction_split("t-full"), suite=suite)
    assert list(one.metrics) == [direction_split("t-full")]
    with pytest.raises(InputFormatError, match="one per pair"):
        evaluate(lambda pairs: [0.5], "all", suite=suite)


def test_report_has_a_row_per_mode_and_the_note():
    suite = load_suite("all", drawn=False, facts=[FULL, SYMMETRIC])
    results = [evaluate(lambda ps: [0.5] * len(ps), "all", suite=suite)]
    text = report(results)
    assert "Direction suite, all facts: 2 facts (2 written, 0 drawn), 11 comparisons" in text
    assert "note: drawn facts not asked for" in text
    assert report([]) == "no results"


# -- drawn facts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relation", "joiner", "expected"),
    [
        ("asked", " ", "asked by"),
        ("increases", "_", "increased_by"),
        ("include", " ", "included by"),
        ("wrote", " ", "written by"),
        ("Eats", " ", "eaten by"),
        ("preached_in", " ", None),  # not one word
        ("condition", " ", None),  # a noun as well, in its base form
        ("borders", " ", None),  # symmetric
        ("married", " ", None),
        ("is", " ", None),  # an auxiliary
        ("died", " ", None),  # intransitive
        ("playing", " ", None),  # a participle
        ("member_of", " ", None),
    ],
)
def test_passive_of_makes_the_passive_of_one_transitive_verb(relation, joiner, expected):
    assert passive_of(relation, joiner) == expected


COLUMNS = ["id", "paragraph_1", "kg_1", "paragraph_2", "kg_2", "label"]


def _write_set(data_dir: Path, name: str, kgs: list[list[list[str]]]) -> None:
    folder = data_dir / BENCHMARKS_SUBDIR
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / f"{name}.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for i, kg in enumerate(kgs):
            writer.writerow({"id": str(i), "paragraph_1": "a", "kg_1": json.dumps(kg),
                             "paragraph_2": "b", "kg_2": "[]", "label": str(i % 2)})  # fmt: skip


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    _write_set(root, "toy_a", [
        [["Fleming", "discovered", "penicillin"], ["penicillin", "member_of", "antibiotics"]],
        [["Curie", "discovered", "polonium"], ["Curie", "discovered", "radium"]],
        [["Bees", "pollinate", "flowers"], ["France", "borders", "Spain"]],
        [["Cats", "eat", "Cats"], ["Newton", "wrote", "Principia"]],
    ])  # fmt: skip
    _write_set(root, "toy_b", [
        [["Ann_Lee", "founded", "Shakers"], ["Shakers", "built", "barns"]],
    ])  # fmt: skip
    return root


def test_drawn_facts_are_one_verb_triples_taken_round_robin(data_dir):
    facts = draw_facts(data_dir)
    kept = {(f.head, f.relation, f.tail) for f in facts}
    discovered = {("Fleming", "discovered", "penicillin"), ("Curie", "discovered", "polonium"),
                  ("Curie", "discovered", "radium")}  # fmt: skip
    assert kept - discovered == {
        ("Bees", "pollinate", "flowers"), ("Newton", "wrote", "Principia"),
        ("Ann_Lee", "founded", "Shakers"), ("Shakers", "built", "barns"),
    }  # fmt: skip
    assert len(kept & discovered) == 2  # at most two triples of one relation per set
    assert [f.domain for f in facts][:4] == ["toy_a", "toy_b", "toy_a", "toy_b"]
    for f in facts:
        assert f.source == "drawn" and f.id.startswith(f"drawn-{f.domain}-")
        # the set's own style: toy_a writes relations with underscores (member_of), toy_b not
        assert f.passive == passive_of(f.relation, "_" if f.domain == "toy_a" else " ")
        assert not f.symmetric and f.inverse is None and f.synonym is None
        others = [g for g in facts if g.id != f.id]
        assert f.replacement in {getattr(g, f.replaces) for g in others}  # another drawn triple
        assert f.replacement.casefold() not in {f.head.casefold(), f.tail.casefold()}
        assert set(f.variants()) == {"passive", "swap", "passive_old_order", "entity_replaced"}
    assert draw_facts(data_dir) == facts  # deterministic
    assert len(draw_facts(data_dir, limit=3)) == 3
    assert draw_facts(data_dir, limit=0) == ()


def test_without_the_data_folder_the_suite_says_it_runs_on_the_written_facts(tmp_path):
    suite = load_suite("dev", data_dir=tmp_path / "none")
    assert suite.counts()["drawn"] == 0 and suite.counts()["written"] > 60
    where = tmp_path / "none" / BENCHMARKS_SUBDIR
    assert suite.drawn_note.startswith(f"no pair sets under {where}")
    assert "the written facts only" in suite.drawn_note


def test_the_suite_adds_the_drawn_facts_with_their_source(data_dir):
    suite = load_suite("all", data_dir=data_dir)
    assert suite.drawn_note == ""
    counts = suite.counts()
    assert counts["drawn"] == len(draw_facts(data_dir)) and counts["written"] == len(load_facts())
    m = evaluate(lambda ps: [0.5] * len(ps), "all", suite=suite).metrics["all"]
    assert list(m.by_source) == ["written", "drawn"]
    assert m.by_source["drawn"].facts == counts["drawn"]
    assert m.by_source["drawn"].comparisons == 3 * counts["drawn"]  # passive x 3 changing


@pytest.mark.shared_data
def test_the_shared_pair_sets_give_a_hundred_facts_from_every_set(shared_data):
    facts = draw_facts(shared_data)
    assert len(facts) == 100
    assert len(Counter(f.domain for f in facts)) == 9
    assert all(f.passive and f.passive.endswith("by") for f in facts)


# -- scoring with the real encoder ---------------------------------------------------------------


def test_one_score_pairs_call_per_mode_and_one_cache_for_all_modes(counting_minilm, monkeypatch):
    calls: list[int] = []
    real = KGScorer.score_pairs

    def counted(self, pairs, **kw):
        pairs = list(pairs)
        calls.append(len(pairs))
        return real(self, pairs, **kw)

    monkeypatch.setattr(KGScorer, "score_pairs", counted)
    facts = [FULL, SYMMETRIC, NO_PASSIVE]
    results = run_direction(["paper", "hybrid"], encoder=counting_minilm, drawn=False, facts=facts)
    n = sum(len(f.variants()) for f in facts)
    assert calls == [n, n]
    encoded = counting_minilm.texts
    assert len(encoded) == len(set(encoded))  # every string encoded once, for both modes
    assert [r.mode for r in results] == ["paper", "hybrid"]
    assert results[0].signature.startswith("mode:paper|enc:minilm") and "|alpha:0.5" in (
        results[0].signature
    )
    for r in results:
        assert len(r.scores) == n and all(v.status == "ok" for v in r.scores)
        assert all(0.0 <= v.s_wl <= 1.0 and 0.0 <= v.s_sbert <= 1.0 for v in r.scores)


def test_a_keeping_variant_equal_to_the_reference_scores_one(minilm):
    # a synonym that is the relation itself: the variant is the reference, which scores 1
    same = Fact("t-same", "x", "Fleming", "discovered", "penicillin", synonym="discovered",
                replacement="insulin")  # fmt: skip
    result = evaluate(KGScorer(minilm, mode="paper"), "all",
                      suite=load_suite(facts=[same], drawn=False))  # fmt: skip
    scores = result.per_fact()["t-same"]
    assert scores["synonym"] == pytest.approx(1.0)
    assert scores["swap"] < 1.0 and scores["entity_replaced"] < 1.0


def test_text_mode_gets_the_facts_written_out(minilm):
    result = evaluate(KGScorer(minilm, mode="text"), "all",
                      suite=load_suite(facts=[FULL], drawn=False))  # fmt: skip
    assert result.mode == "text" and len(result.scores) == len(FULL.variants())
    assert result.metrics["all"].accuracy is not None


def test_run_direction_refuses_no_mode_and_an_unknown_one():
    with pytest.raises(ConfigError, match="at least one mode"):
        run_direction([])
    with pytest.raises(ConfigError, match="mode must be one of"):
        run_direction(["ot", "nope"])
