"""bench.experiments.bamboo_role_misses: role-confusion misses by what the other graph has."""

from __future__ import annotations

import json

import pytest
from bamboo_helpers import write_fake_bamboo

from bench.experiments.bamboo_role_misses import KINDS, main, miss_kind
from s3kg_core.kg import Triple

ORIGINAL = [("move", "arg1", "this"), ("move", "arg2", "trend")]
SWAPPED = [("move", "arg1", "trend"), ("move", "arg2", "this")]


def test_a_swap_the_other_graph_holds_exactly_agrees_with_it():
    other = [("move", "arg0", "this"), ("move", "arg1", "trend")]
    assert miss_kind(SWAPPED, ORIGINAL, other) == "swap agrees"
    assert miss_kind(ORIGINAL, SWAPPED, other) == "original agrees"


def test_with_no_exact_triple_the_halves_decide():
    # no triple of either is in the other graph; (move, this) as head and tail is, for the swap
    other = [("move", "arg0", "this")]
    assert miss_kind(ORIGINAL, SWAPPED, other) == miss_kind(SWAPPED, ORIGINAL, other)
    other = [("move", "arg2", "x")]  # (move, arg2) as head and relation: both have it
    assert miss_kind(SWAPPED, ORIGINAL, other) == "no evidence"
    other = [("move", "arg1", "that"), ("trend", "mod", "new")]
    assert miss_kind(SWAPPED, ORIGINAL, other) == "no evidence"
    other = [("move", "arg9", "trend")]  # (move, trend): arg2 in the original, arg1 in the swap
    assert miss_kind(SWAPPED, ORIGINAL, other) == "no evidence"


def test_a_graph_the_other_graph_shares_nothing_with_is_no_evidence():
    assert miss_kind(SWAPPED, ORIGINAL, [("say", "arg0", "he")]) == "no evidence"
    assert miss_kind(SWAPPED, ORIGINAL, []) == "no evidence"


def test_a_swap_the_conversion_removes_is_identical_and_case_does_not_count():
    upper = [("Move", "ARG1", "This"), ("move", "arg2", "TREND")]
    assert miss_kind(upper, ORIGINAL, [("say", "arg0", "he")]) == "identical"


def test_triples_are_read_as_well_as_tuples():
    swapped = [Triple(*t) for t in SWAPPED]
    original = [Triple(*t) for t in ORIGINAL]
    other = [Triple("move", "arg0", "this"), Triple("move", "arg1", "trend")]
    assert miss_kind(swapped, original, other) == "swap agrees"


def test_every_kind_is_one_of_the_kinds():
    cases = [
        (SWAPPED, ORIGINAL, [("move", "arg1", "trend")]),
        (ORIGINAL, SWAPPED, [("move", "arg1", "trend")]),
        (SWAPPED, ORIGINAL, []),
        (ORIGINAL, ORIGINAL, []),
    ]
    assert {miss_kind(*c) for c in cases} == set(KINDS)


def test_the_script_sorts_every_miss_of_a_bamboo_folder_and_writes_evidence(
    tmp_path, capsys, minilm
):
    write_fake_bamboo(tmp_path)
    out = tmp_path / "misses.json"
    assert main(["--data-dir", str(tmp_path), "--datasets", "sts,para", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "graph ceiling" in printed and "para" in printed
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["format"] == "s3kg-evidence-v1"
    for name in ("sts", "para"):
        fig = data["figures"]["datasets"][name]
        assert fig["cases"] == 2
        assert fig["misses"] == sum(fig["kinds"].values())
        assert fig["misses"] == sum(len(v) for v in fig["ids"].values())
        assert fig["accuracy"] == pytest.approx(100.0 * (2 - fig["misses"]) / 2)
        assert fig["accuracy"] <= fig["graph_ceiling"] <= 100.0
