"""TAU against the final labels, and the annotation report (s3kg_core.annotation.quality)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from s3kg_core.annotation.log import CATEGORIES, Decision, adjudicate, save_decision
from s3kg_core.annotation.quality import annotation_report, category_precision, tau_quality
from s3kg_core.stats import proportion_interval
from s3kg_core.store.store import Store


def _labels(*rows: tuple[str | None, str | None, str]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["category", "label", "source"])


def test_precision_recall_f1_count_confirmed_rejected_and_added_pairs():
    labels = _labels(
        *[("aligned", "confirm", "majority")] * 6,
        *[("aligned", "reject", "majority")] * 2,
        *[(None, "add", "adjudicated")] * 2,
        ("relation_mismatch", "confirm", "majority"),  # no alignment: counts in its share only
        ("missing", "reject", "majority"),
        ("aligned", None, "tie"),
    )
    q = tau_quality(labels, bootstrap=300, seed=1)
    assert (q.true_positive, q.false_positive, q.false_negative) == (6, 2, 2)
    assert q.precision.value == pytest.approx(0.75) and q.precision.n == 8
    assert q.recall.value == pytest.approx(0.75) and q.recall.n == 8
    assert q.f1.value == pytest.approx(0.75)
    for e in (q.precision, q.recall, q.f1):
        assert 0 <= e.low <= e.value <= e.high <= 1
    assert q.recall_tested
    assert q.confirmed["aligned"].value == pytest.approx(0.75)
    assert q.confirmed["relation_mismatch"].value == 1.0
    assert q.confirmed["missing"].value == 0.0 and q.confirmed["extra"].n == 0
    assert q.labels == {"majority": 10, "adjudicated": 2, "tie": 1}
    assert any("tied labels" in n for n in q.notes())
    assert q == tau_quality(labels, bootstrap=300, seed=1)  # seeded


def test_recall_is_flagged_untested_when_nobody_added_a_pair():
    q = tau_quality(_labels(*[("aligned", "confirm", "majority")] * 3), bootstrap=50)
    assert q.recall.value == 1.0 and not q.recall_tested
    assert any(n.startswith("recall is untested") for n in q.notes())
    assert q.to_dict()["recall_tested"] is False


def test_no_labels_give_undefined_figures_not_errors():
    q = tau_quality(_labels(), bootstrap=50)
    assert math.isnan(q.precision.value) and math.isnan(q.recall.value)
    assert q.to_dict()["precision"]["value"] is None


def test_the_report_of_a_store_puts_agreement_beside_tau_quality(tmp_path):
    store = Store(tmp_path / "r.duckdb")
    pairs = [(("a", "r", str(i)), ("a", "s", str(i))) for i in range(6)]
    ann = ["confirm", "confirm", "reject", "confirm", "reject", "confirm"]
    bob = ["confirm", "reject", "reject", "confirm", "reject", "confirm"]
    for who, verdicts in (("ann", ann), ("bob", bob)):
        for (g, a), v in zip(pairs, verdicts, strict=True):
            save_decision(store, Decision(who, 1, 1, g, a, v, category="aligned"))
    save_decision(store, Decision("ann", 1, 1, ("x", "r", "y"), ("x", "q", "y"), "add"))
    adjudicate(store, "judge", 1, 1, *pairs[1], "confirm", category="aligned")
    report = annotation_report(store, bootstrap=200, seed=0)
    alpha, kappa = report.agreement[0], report.agreement[1]
    assert (alpha.method, alpha.category, alpha.units) == ("krippendorff_alpha", "all", 6)
    assert (kappa.method, kappa.annotators) == ("cohen_kappa", ("ann", "bob"))
    assert [r.category for r in report.agreement if r.method == "krippendorff_alpha"] == [
        "all", "aligned", "relation_mismatch", "entity_mismatch", "roles_swapped", "extra",
        "missing",
    ]  # fmt: skip
    missing = next(r for r in report.agreement if r.category == "missing")
    assert math.isnan(missing.value) and "no unit" in missing.reason
    q = report.quality
    assert (q.true_positive, q.false_positive, q.false_negative) == (4, 2, 1)
    text = "\n".join(report.lines())
    assert "alpha" in text and "ann vs bob" in text and "recall" in text
    assert report.to_dict()["tau"]["false_negative"] == 1


def test_each_category_s_precision_has_a_wilson_interval_from_its_first_judged_unit():
    """Issue 58: after a few decisions every category's precision has an interval."""
    labels = _labels(
        ("aligned", "confirm", "majority"),
        *[("extra", "confirm", "majority")] * 3,
        ("extra", "reject", "majority"),
        ("missing", "skip", "majority"),  # a skip judges nothing
    )
    q = tau_quality(labels, bootstrap=0)
    one = q.confirmed["aligned"]
    assert (one.value, one.n, one.method) == (1.0, 1, "wilson")
    assert (one.low, one.high) == proportion_interval(1, 1)[1:] and one.low < 0.25
    extra = q.confirmed["extra"]
    assert (extra.value, extra.low, extra.high) == proportion_interval(3, 4) and extra.n == 4
    assert q.confirmed["missing"].n == 0 and math.isnan(q.confirmed["missing"].value)
    assert list(q.confirmed) == list(CATEGORIES)
    # TAU's precision is the aligned category's, with the same interval: one number
    assert (q.precision.value, q.precision.low, q.precision.high) == (one.value, one.low, one.high)
    assert q.f1.method == "bootstrap" and math.isnan(q.f1.low)  # no resamples asked for
    assert q.to_dict()["confirmed"]["extra"]["method"] == "wilson"


def test_category_precision_is_the_report_s_and_every_category_is_printed(tmp_path):
    store = Store(tmp_path / "r.duckdb")
    for n, verdict in enumerate(["confirm", "confirm", "reject"]):
        save_decision(store, Decision("ann", 1, 1, ("a", "r", str(n)), ("a", "s", str(n)), verdict,
                                      category="entity_mismatch"))  # fmt: skip
    save_decision(store, Decision("ann", 1, 1, None, ("x", "r", "y"), "reject", category="extra"))
    found = category_precision(store)
    report = annotation_report(store, bootstrap=50)
    assert found == report.quality.confirmed
    assert found["entity_mismatch"].value == pytest.approx(2 / 3)
    lines = report.lines()
    start = next(i for i, line in enumerate(lines) if line.startswith("TAU's precision by cat"))
    rows = lines[start + 1 : start + 1 + len(CATEGORIES)]
    low, high = found["entity_mismatch"].low, found["entity_mismatch"].high
    assert rows[2] == f"  entity_mismatch   0.667 [{low:.3f}, {high:.3f}] of 3"
    assert rows[4] == "  extra             0.000 [0.000, 0.793] of 1"
    assert rows[0] == "  aligned           n/a (nothing judged yet)"
