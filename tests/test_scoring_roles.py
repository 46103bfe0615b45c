"""Tests of s3kg_core.scoring.roles: a relation's canonical reading (passive, inverse, symmetric).

Tables of ``(normalised relation, expected reading)`` in the style of sacrebleu's tests, and the
properties the ``ot`` mode and TAU rely on: a base reads as itself, every inverse in the table
reads as its base turned round, and a symmetric triple is never turned.
"""

from __future__ import annotations

import pytest

from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_label, normalize_triple
from s3kg_core.scoring.roles import (
    ACTIVE_BY,
    INVERSES,
    SYMMETRIC,
    RelationReading,
    read_relation,
    read_triple,
)


def _norm(relation: str) -> str:
    return normalize_label(relation, role="relation")


@pytest.mark.parametrize(
    ("relation", "base", "flipped", "rule"),
    [
        ("discovered by", "discover", True, "passive"),
        ("was discovered by", "discover", True, "passive"),
        ("has been killed by", "kill", True, "passive"),
        ("got killed by", "kill", True, "passive"),
        ("written_by", "write", True, "passive"),
        ("is the child of", "parent of", True, "inverse"),
        ("daughter of", "parent of", True, "inverse"),
        ("works for", "employ", True, "inverse"),
        ("lost to", "defeat", True, "inverse"),
        ("younger than", _norm("older than"), True, "inverse"),
        ("belongs to", "own", True, "inverse"),
        ("has capital", "capital of", True, "have-of"),
        ("has a member", "member of", True, "have-of"),
        ("ARG0-of", "argument zero", True, "amr inverse"),
        ("ARG1", "argument one", False, "as is"),
        ("was succeeded by", "precede", False, "inverse passive"),
        ("is followed by", "precede", False, "inverse passive"),
        ("has won", "win", False, "as is"),  # a perfect, not a possession
        ("discovered", "discover", False, "as is"),
        ("is the parent of", "parent of", False, "as is"),
        ("stands by", "stand by", False, "as is"),  # a phrasal verb, not a passive
        ("lives in", "live in", False, "as is"),
        ("theory by", "theory by", False, "as is"),  # a noun before "by": no passive
    ],
)
def test_read_relation(relation: str, base: str, flipped: bool, rule: str) -> None:
    r = read_relation(_norm(relation))
    assert (r.base, r.flipped, r.rule) == (base, flipped, rule)


@pytest.mark.parametrize(
    ("relation", "symmetric"),
    [
        ("borders", True),
        ("is married to", True),
        ("interacts with", True),
        ("is a sibling of", True),
        ("collaborated with", True),
        ("is", True),  # the bare copula, written either way round by extractors
        ("killed", False),
        ("is the parent of", False),
        ("discovered by", False),
    ],
)
def test_symmetric_relations(relation: str, symmetric: bool) -> None:
    assert read_relation(_norm(relation)).symmetric is symmetric


def test_every_inverse_in_the_table_reads_as_its_base_turned_round() -> None:
    for inverse, base in INVERSES.items():
        r = read_relation(_norm(inverse))
        assert (r.base, r.flipped) == (_norm(base), True), inverse


@pytest.mark.parametrize("base", sorted({*INVERSES.values(), *SYMMETRIC}))
def test_a_base_reads_as_itself(base: str) -> None:
    r = read_relation(_norm(base))
    assert (r.base, r.flipped) == (_norm(base), False)
    assert read_relation(r.base) == r  # reading twice changes nothing


def test_active_phrasal_verbs_are_not_passives() -> None:
    for verb in ACTIVE_BY:
        assert not read_relation(f"{verb} by").flipped


def test_a_passive_and_its_active_read_as_one_triple() -> None:
    active = normalize_triple(Triple("Alexander Fleming", "discovered", "penicillin"))
    passive = normalize_triple(Triple("Penicillin", "was discovered by", "Alexander Fleming"))
    assert read_triple(active).triple == read_triple(passive).triple
    assert read_triple(passive).flipped and not read_triple(active).flipped


def test_a_swap_reads_as_a_different_triple() -> None:
    fact = read_triple(normalize_triple(Triple("Brutus", "killed", "Caesar")))
    swap = read_triple(normalize_triple(Triple("Caesar", "killed", "Brutus")))
    old_order = read_triple(normalize_triple(Triple("Brutus", "was killed by", "Caesar")))
    assert fact.triple != swap.triple
    assert old_order.triple == swap.triple  # the passive with the old order is the swap


def test_a_symmetric_triple_reads_the_same_both_ways() -> None:
    one = read_triple(normalize_triple(Triple("Spain", "borders", "France")))
    two = read_triple(normalize_triple(Triple("France", "borders", "Spain")))
    assert one.triple == two.triple == Triple("france", "border", "spain")
    assert one.symmetric and one.flipped and one.rule == "symmetric"
    assert not two.flipped and two.rule == "as is"


def test_the_reading_is_a_plain_value() -> None:
    r = read_relation("discover by")
    assert r == RelationReading("discover", True, "passive", False)
    assert hash(r) == hash(RelationReading("discover", True, "passive", False))


def test_the_copula_is_read_both_ways_but_keeps_its_written_order() -> None:
    # the report and the explorer show keys: "a metal be radium" read oddly (issue 57)
    r = read_triple(normalize_triple(Triple("radium", "is", "a metal")))
    assert r.triple == Triple("radium", "be", "a metal")
    assert r.symmetric and not r.flipped
