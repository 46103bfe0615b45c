"""bench/speed/bench_alpha_step.py: the figures it prints and writes."""

from __future__ import annotations

import pytest

from bench.speed.bench_alpha_step import percentile, summary


def test_the_summary_is_median_p95_and_max():
    ms = [float(x) for x in range(1, 21)]  # 1 .. 20
    s = summary(ms)
    assert s == {"p50_ms": 10.5, "p95_ms": pytest.approx(19.05), "max_ms": 20.0, "n": 20}


def test_a_single_step_is_its_own_percentiles():
    assert percentile([7.0], 0.95) == 7.0 and summary([7.0])["p50_ms"] == 7.0
