"""bench/experiments/pairs_paired.py: the paired AUROC difference of two methods on one set."""

from __future__ import annotations

import numpy as np

from bench.experiments.pairs_paired import paired_auroc


def test_one_method_against_itself_differs_by_nothing():
    rng = np.random.default_rng(3)
    y = np.r_[np.ones(40, int), np.zeros(40, int)]
    s = rng.random(80)
    d = paired_auroc(s, s, y, resamples=200)
    assert d == {"difference": 0.0, "low": 0.0, "high": 0.0}


def test_pairing_sees_a_small_steady_gain():
    # the same noisy scores, the new method a little better on every positive: the paired
    # interval is above 0
    rng = np.random.default_rng(5)
    y = np.r_[np.ones(100, int), np.zeros(100, int)]
    old = rng.random(200) + 0.3 * y
    new = old + 0.05 * y
    d = paired_auroc(new, old, y, resamples=500)
    assert d["difference"] > 0
    assert 0 < d["low"] <= d["difference"] <= d["high"]


def test_a_worse_method_has_its_interval_below_zero():
    y = np.r_[np.ones(50, int), np.zeros(50, int)]
    good = np.r_[np.linspace(0.5, 1, 50), np.linspace(0, 0.5, 50)]
    d = paired_auroc(good[::-1].copy(), good, y, resamples=300)
    assert d["high"] < 0
