"""Chance-corrected annotator agreement (s3kg_core.annotation.agreement)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s3kg_core.annotation.agreement import (
    Judgement,
    agreement_report,
    cohen_kappa,
    krippendorff_alpha,
)
from s3kg_core.errors import InputFormatError

# -- chance-corrected agreement: published worked examples, then properties -------------------

# Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Example C: four
# observers, twelve units, missing values; the published nominal alpha is 0.743.
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _reliability_data(data: dict[str, list]) -> list[Judgement]:
    return [
        Judgement(unit, who, str(v))
        for who, values in data.items()
        for unit, v in enumerate(values)
        if v is not None
    ]


def _two_raters(both_yes: int, a_only: int, b_only: int, both_no: int) -> list[Judgement]:
    pairs = (
        [("yes", "yes")] * both_yes
        + [("yes", "no")] * a_only
        + [("no", "yes")] * b_only
        + [("no", "no")] * both_no
    )
    return [
        Judgement(i, who, v)
        for i, pair in enumerate(pairs)
        for who, v in zip("AB", pair, strict=True)
    ]


def test_alpha_matches_krippendorff_s_published_example():
    result = krippendorff_alpha(_reliability_data(KRIPPENDORFF_2011), bootstrap=0)
    assert result.value == pytest.approx(0.743, abs=5e-4)
    # unit 12 has one value only: not pairable, so 11 units count
    assert result.units == 11 and result.annotators == ("A", "B", "C", "D")


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # Wikipedia, "Cohen's kappa": the worked example (p_o 0.7, p_e 0.5) ...
        ((20, 5, 10, 15), 0.4),
        # ... and "same percentages but different numbers" (p_o 0.6 in both)
        ((45, 15, 25, 15), 0.1304),
        ((25, 35, 5, 35), 0.2593),
    ],
)
def test_kappa_matches_the_published_worked_examples(table, kappa):
    result = cohen_kappa(_two_raters(*table), "A", "B", bootstrap=0)
    assert result.value == pytest.approx(kappa, abs=5e-5)
    assert result.units == sum(table)


def test_bootstrap_intervals_are_seeded_and_hold_the_estimate():
    rows = _two_raters(20, 5, 10, 15)
    one = cohen_kappa(rows, "A", "B", bootstrap=150, seed=3)
    assert one == cohen_kappa(rows, "A", "B", bootstrap=150, seed=3)
    assert one != cohen_kappa(rows, "A", "B", bootstrap=150, seed=4)
    assert one.low < one.value < one.high and one.resamples == 150
    alpha = krippendorff_alpha(_reliability_data(KRIPPENDORFF_2011), bootstrap=150, seed=3)
    assert -1 <= alpha.low < alpha.value < alpha.high <= 1
    wider = cohen_kappa(rows, "A", "B", bootstrap=150, seed=3, confidence=0.99)
    assert wider.low <= one.low and wider.high >= one.high


def test_undefined_coefficients_are_nan_with_a_reason():
    same = [Judgement(u, w, "confirm") for u in range(4) for w in ("A", "B")]
    alpha = krippendorff_alpha(same, bootstrap=50)
    assert math.isnan(alpha.value) and "same" in alpha.reason and alpha.resamples == 0
    kappa = cohen_kappa(same, "A", "B", bootstrap=50)
    assert math.isnan(kappa.value) and "undefined" in kappa.reason
    apart = [Judgement(0, "A", "x"), Judgement(1, "B", "y")]
    assert "no unit has labels from two" in krippendorff_alpha(apart).reason
    assert "no unit in common" in cohen_kappa(apart, "A", "B").reason
    assert krippendorff_alpha([]).to_dict()["value"] is None


def test_an_annotator_labelling_a_unit_twice_is_an_input_error():
    with pytest.raises(InputFormatError, match="twice"):
        krippendorff_alpha([Judgement(0, "A", "x"), Judgement(0, "A", "y")])


def test_the_report_gives_alpha_and_every_pair_s_kappa_per_category():
    rows = [
        Judgement(0, "A", "confirm", "aligned"),
        Judgement(0, "B", "confirm", "aligned"),
        Judgement(0, "C", "reject", "aligned"),
        Judgement(1, "A", "reject", "aligned"),
        Judgement(1, "B", "reject", "aligned"),
        Judgement(2, "A", "confirm", "extra"),
        Judgement(2, "C", "reject", "extra"),
    ]
    report = agreement_report(rows, categories=["aligned", "extra", "missing"], bootstrap=0)
    got = [(r.category, r.method, r.annotators) for r in report]
    assert got == [
        ("all", "krippendorff_alpha", ("A", "B", "C")),
        ("all", "cohen_kappa", ("A", "B")),
        ("all", "cohen_kappa", ("A", "C")),
        ("all", "cohen_kappa", ("B", "C")),
        ("aligned", "krippendorff_alpha", ("A", "B", "C")),
        ("aligned", "cohen_kappa", ("A", "B")),
        ("aligned", "cohen_kappa", ("A", "C")),
        ("aligned", "cohen_kappa", ("B", "C")),
        ("extra", "krippendorff_alpha", ("A", "C")),
        ("extra", "cohen_kappa", ("A", "C")),
        ("missing", "krippendorff_alpha", ()),
    ]
    assert report[0].value == krippendorff_alpha(rows, bootstrap=0).value


_labels = st.lists(st.sampled_from(["confirm", "reject", "add"]), min_size=3, max_size=3)


@settings(max_examples=40, deadline=None)
@given(table=st.lists(_labels, min_size=2, max_size=12), data=st.data())
def test_alpha_does_not_depend_on_names_of_values_annotators_or_units(table, data):
    rows = [
        Judgement(u, f"a{i}", v) for u, labels in enumerate(table) for i, v in enumerate(labels)
    ]
    base = krippendorff_alpha(rows, bootstrap=0).value
    rename = dict(
        zip(["confirm", "reject", "add"], data.draw(st.permutations(["p", "q", "r"])), strict=True)
    )
    who = dict(zip(["a0", "a1", "a2"], data.draw(st.permutations(["x", "y", "z"])), strict=True))
    shuffled = data.draw(st.permutations(rows))
    moved = [Judgement(("u", j.unit), who[j.annotator], rename[j.value]) for j in shuffled]
    other = krippendorff_alpha(moved, bootstrap=0).value
    assert (math.isnan(base) and math.isnan(other)) or other == pytest.approx(base, abs=1e-12)
    assert math.isnan(base) or -1.0 <= base <= 1.0
