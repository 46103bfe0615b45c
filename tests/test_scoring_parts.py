"""Tests of s3kg_core.scoring.parts: triples compared part by part, entities with their roles."""

from __future__ import annotations

import numpy as np
import pytest

from s3kg_core.scoring.parts import (
    ENTITY_WEIGHT,
    FLOOR,
    SYMBOL_MISMATCH,
    PartVectors,
    part_similarity,
    role_agreement,
    role_contexts,
    symbol_id,
)

V = np.eye(6)
H, R, T, OTHER, R2 = V[[0]], V[[1]], V[[2]], V[[3]], V[[4]]


def _parts(h: np.ndarray, r: np.ndarray, t: np.ndarray, **kw: object) -> PartVectors:
    return PartVectors(h, r, t, **kw)  # type: ignore[arg-type]


def test_identical_triples_score_one_and_a_swap_scores_the_floor() -> None:
    fact = _parts(H, R, T)
    assert part_similarity(fact, fact)[0, 0] == pytest.approx(1.0)
    swapped = part_similarity(fact, _parts(T, R, H))[0, 0]
    assert swapped == pytest.approx(FLOOR ** (2 * ENTITY_WEIGHT))


def test_one_wrong_part_costs_by_its_weight() -> None:
    fact = _parts(H, R, T)
    wrong_tail = part_similarity(fact, _parts(H, R, OTHER))[0, 0]
    wrong_relation = part_similarity(fact, _parts(H, R2, T))[0, 0]
    assert wrong_tail == pytest.approx(FLOOR**ENTITY_WEIGHT)
    assert wrong_relation == pytest.approx(FLOOR ** (1 - 2 * ENTITY_WEIGHT))
    assert wrong_tail < wrong_relation < 1.0  # an entity weighs more than the relation


def test_a_symmetric_relation_is_also_read_crossed() -> None:
    sym = np.array([True])
    fact = _parts(H, R, T, symmetric=sym)
    assert part_similarity(fact, _parts(T, R, H))[0, 0] == pytest.approx(1.0)
    assert part_similarity(_parts(H, R, T), _parts(T, R, H, symmetric=sym))[0, 0] == (
        pytest.approx(1.0)
    )


def test_symbolic_relations_compare_as_symbols() -> None:
    alike = np.array([[1.0, 0.1, 0, 0, 0, 0]])  # two role names an encoder embeds alike
    a = _parts(H, R, T, symbols=("argument zero",))
    b = _parts(H, alike, T, symbols=("argument one",))
    same = _parts(H, alike, T, symbols=("argument zero",))
    assert part_similarity(a, b)[0, 0] == pytest.approx(SYMBOL_MISMATCH ** (1 - 2 * ENTITY_WEIGHT))
    assert part_similarity(a, same)[0, 0] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("relation", "symbol"),
    [
        ("argument zero", "argument zero"),
        ("op1", "op1"),
        ("snt2", "snt2"),
        ("mod", "mod"),
        ("prep-in", "prep-in"),
        ("discover", None),
        ("location", None),
        ("model", None),
    ],
)
def test_symbol_id(relation: str, symbol: str | None) -> None:
    assert symbol_id(relation) == symbol


def test_take_and_rows_keep_every_field() -> None:
    p = PartVectors(V[:3], V[1:4], V[2:5], np.array([True, False, True]), ("a", None, "c"))
    t = p.take([2, 0])
    assert np.array_equal(t.heads, V[[2, 0]]) and t.symbols == ("c", "a")
    assert t.symmetric is not None and t.symmetric.tolist() == [True, True]
    r = p.rows(slice(1, 3))
    assert len(r) == 2 and r.symbols == (None, "c")


def test_role_contexts_give_the_subject_plus_and_the_object_minus() -> None:
    parts = _parts(H, R, T)
    ctx = role_contexts(3, [(0, 0, 1)], parts)
    assert ctx[0].tolist() == R[0].tolist()
    assert ctx[1].tolist() == (-R[0]).tolist()
    assert not ctx[2].any()  # an entity in no triple has no roles


def test_role_contexts_leave_out_symbols_and_treat_symmetric_relations_alike() -> None:
    sym = _parts(H, R, T, symmetric=np.array([True]))
    ctx = role_contexts(2, [(0, 0, 1)], sym)
    assert ctx[0].tolist() == ctx[1].tolist() == R[0].tolist()
    amr = _parts(H, R, T, symbols=("argument zero",))
    assert not role_contexts(2, [(0, 0, 1)], amr).any()


def test_role_agreement() -> None:
    subject, obj, none = R, -R, np.zeros((1, 6))
    assert role_agreement(subject, subject)[0, 0] == pytest.approx(1.0)
    assert role_agreement(subject, obj, weight=0.8)[0, 0] == pytest.approx(0.2)
    assert role_agreement(subject, none)[0, 0] == 1.0
    assert role_agreement(none, obj)[0, 0] == 1.0
