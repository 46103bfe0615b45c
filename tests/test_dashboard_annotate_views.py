"""Tests of dashboard/annotate_views.py's pure parts: the agreement table's words."""

from __future__ import annotations

import math

from dashboard.annotate_views import MIN_INTERVAL_UNITS, agreement_table
from s3kg_core.annotation.agreement import Reliability
from s3kg_core.annotation.quality import AnnotationReport, Estimate, TauQuality


def _report(*rows: Reliability) -> AnnotationReport:
    none = Estimate(math.nan, math.nan, math.nan, 0)
    quality = TauQuality(none, none, none, 0, 0, 0, False, {}, {})
    return AnnotationReport(None, list(rows), quality)


def test_one_or_two_units_say_too_few_instead_of_a_degenerate_interval():
    """Regression (issue 31): 1-2 units printed "0.000 [0.000, 0.000]", which reads as certainty."""
    few = Reliability("krippendorff_alpha", "all", ("ann", "bob"), 0.0, 0.0, 0.0, 2, 999)
    many = Reliability("cohen_kappa", "all", ("ann", "bob"), 0.5, 0.25, 0.75, 40, 999)
    undefined = Reliability("cohen_kappa", "extra", ("ann", "bob"), math.nan, math.nan,
                            math.nan, 1, 0, "one label only")  # fmt: skip
    table = agreement_table(_report(few, many, undefined))
    assert table["95% interval"].tolist() == ["too few units", "0.250 to 0.750", ""]
    assert table["Value"].tolist() == ["0.000", "0.500", "n/a"]
    assert MIN_INTERVAL_UNITS == 3
