"""Tests of s3kg_core.stats: every interval, its old figures pinned, and its properties.

The pinned figures were computed with the functions these replaced, on main before the move
(in today's modules: ``analysis.compare.paired_bootstrap`` and ``normal_interval``,
``analysis.leaderboard.mean_interval`` (1,999 resamples), ``report.build.mean_interval``
(9,999), ``evaluation.metrics.bootstrap_ci``, ``annotation.agreement.bootstrap_interval``): the
same inputs and seeds give the same floats.
"""

from __future__ import annotations

import doctest
import inspect
import math

import numpy as np
import pytest
from scipy import stats

import s3kg_core.stats as stats_module
from s3kg_core.errors import ConfigError
from s3kg_core.evaluation.metrics import auroc, bootstrap_ci, max_f1
from s3kg_core.stats import (
    DEFAULT_RESAMPLES,
    NORMAL_FROM,
    MeanInterval,
    mean_interval,
    normal_interval,
    paired_bootstrap,
    percentile_bootstrap,
    proportion_interval,
    run_interval,
)


def test_the_module_doctests_pass():
    result = doctest.testmod(stats_module)
    assert result.attempted >= 10 and result.failed == 0


def test_one_default_number_of_resamples():
    assert DEFAULT_RESAMPLES == 9999
    defaults = [
        inspect.signature(fn).parameters[name].default
        for fn, name in [
            (paired_bootstrap, "resamples"),
            (mean_interval, "resamples"),
            (percentile_bootstrap, "resamples"),
            (bootstrap_ci, "n"),
            (run_interval, "resamples"),
        ]
    ]
    assert defaults == [DEFAULT_RESAMPLES] * 5


# -- the old figures, pinned ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def pinned():
    """The inputs the old figures were computed on (one generator, drawn in this order)."""
    rng = np.random.default_rng(2024)
    x = rng.uniform(0.2, 0.9, 40)
    y = np.clip(x + rng.normal(-0.02, 0.05, 40), 0, 1)
    scores = np.r_[np.ones(25), np.zeros(25)] * 0.25 + rng.normal(0.4, 0.2, 50)
    labels = np.r_[np.ones(25, np.int64), np.zeros(25, np.int64)]
    units = rng.random(30)
    return x, y, scores, labels, units


def test_paired_bootstrap_reproduces_compare_s_figures(pinned):
    x, y, *_ = pinned
    d = paired_bootstrap(y, x, seed=0)
    assert (d.n, d.method, d.confidence) == (40, "BCa", 0.95)
    assert (d.baseline_mean, d.new_mean, d.difference) == (
        0.5194001557059256, 0.5030395850607771, -0.016360570645148526,
    )  # fmt: skip
    assert (d.low, d.high) == (-0.03027649344527636, -0.002633379660903638)
    d = paired_bootstrap(y, x, resamples=999, seed=3)
    assert (d.low, d.high) == (-0.03137733943196117, -0.0025534949818801717)
    d = paired_bootstrap(y, x, normal_from=10)
    assert (d.low, d.high, d.method) == (-0.030503695423063006, -0.002217445867234047, "normal")


def test_normal_interval_reproduces_its_figures():
    assert normal_interval(0.5, 0.2, 1600) == (0.4902001800772997, 0.5097998199227003)
    assert normal_interval(0.42, 0.13, 77, confidence=0.9) == (
        0.3956316992225149, 0.44436830077748507,
    )  # fmt: skip


def test_mean_interval_reproduces_the_leaderboard_s_and_the_report_s(pinned):
    x, *_ = pinned
    # the leaderboard's (1,999 resamples until issue 58) and the report's (9,999, now both's)
    assert mean_interval(x, resamples=1999) == (
        0.5194001557059256, 0.46160975260498965, 0.5862358787368832,
    )  # fmt: skip
    assert mean_interval(x, resamples=999, seed=3) == (
        0.5194001557059256, 0.461265470050117, 0.5853080404551787,
    )  # fmt: skip
    assert mean_interval(x) == MeanInterval(
        0.5194001557059256, 0.4600586437635582, 0.5866285152690284
    )


def test_bootstrap_ci_reproduces_its_figures(pinned):
    *_, scores, labels, _ = pinned
    assert bootstrap_ci(auroc, scores, labels, n=1000, seed=0) == (0.80152, 0.9968)
    assert bootstrap_ci(max_f1, scores, labels, n=200, seed=1) == (
        0.8507872340425533, 0.9796118447378951,
    )  # fmt: skip

    def gap(s: np.ndarray, y: np.ndarray) -> float:  # no batched form: one resample at a time
        return float(np.mean(s[y == 1]) - np.mean(s[y == 0]))

    assert bootstrap_ci(gap, scores, labels, n=300, seed=2, level=0.9) == (
        0.21615706854511843, 0.3769494232288786,
    )  # fmt: skip


def test_percentile_bootstrap_reproduces_agreement_s_figures(pinned):
    *_, units = pinned
    assert percentile_bootstrap(lambda i: float(units[i].mean()), 30, resamples=1000) == (
        0.3518969874218403, 0.5717329896338483, 1000,
    )  # fmt: skip

    def defined_with_unit_0(i: np.ndarray) -> float:
        return float(units[i].mean()) if 0 in i else math.nan

    assert percentile_bootstrap(defined_with_unit_0, 30, resamples=500, seed=4, confidence=0.9) == (
        0.3573843125832576, 0.5406190391580585, 332,
    )  # fmt: skip


# -- properties ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_interval_contains_its_point_estimate(seed):
    rng = np.random.default_rng(seed)
    x = rng.beta(2, 3, 80)
    y = np.clip(x + rng.normal(0.01, 0.05, 80), 0, 1)
    mean, low, high = mean_interval(x, resamples=999, seed=seed)
    assert low < mean < high
    d = paired_bootstrap(y, x, resamples=999, seed=seed)
    assert d.low < d.difference < d.high
    low, high = normal_interval(x.mean(), x.std(ddof=1), x.size)
    assert low < x.mean() < high
    low, high, used = percentile_bootstrap(lambda i: float(x[i].mean()), x.size, resamples=999)
    assert low < x.mean() < high and used == 999


def test_every_interval_narrows_with_more_values():
    rng = np.random.default_rng(5)
    small, large = rng.beta(2, 3, 30), rng.beta(2, 3, 600)

    m_small, m_large = mean_interval(small, resamples=999), mean_interval(large, resamples=999)
    assert m_large.high - m_large.low < (m_small.high - m_small.low) / 2
    n_small = normal_interval(small.mean(), small.std(ddof=1), small.size)
    n_large = normal_interval(large.mean(), large.std(ddof=1), large.size)
    assert n_large[1] - n_large[0] < (n_small[1] - n_small[0]) / 2
    p_small = percentile_bootstrap(lambda i: float(small[i].mean()), small.size, resamples=999)
    p_large = percentile_bootstrap(lambda i: float(large[i].mean()), large.size, resamples=999)
    assert p_large.high - p_large.low < (p_small.high - p_small.low) / 2


def test_one_value_has_no_interval_and_equal_values_a_zero_width_one():
    assert np.isnan(mean_interval([0.3]).low) and np.isnan(mean_interval([0.3]).high)
    assert mean_interval([0.3]).mean == 0.3
    assert mean_interval([0.3, 0.3, 0.3]) == (0.3, 0.3, 0.3)
    assert all(math.isnan(v) for v in normal_interval(0.3, 0.0, 1))
    assert normal_interval(0.3, 0.0, 2000) == (0.3, 0.3)
    assert percentile_bootstrap(lambda i: 0.5, 1, resamples=10) == (0.5, 0.5, 10)
    assert percentile_bootstrap(lambda i: math.nan, 3, resamples=10)[2] == 0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: mean_interval([]), "one or more values"),
        (lambda: mean_interval([[0.1, 0.2]]), "one or more values"),
        (lambda: mean_interval([0.1, 0.2], confidence=1.0), "confidence must be between"),
        (lambda: normal_interval(0.5, 0.1, 100, confidence=0.0), "confidence must be between"),
        (lambda: percentile_bootstrap(lambda i: 0.0, 0), "one or more units"),
        (lambda: percentile_bootstrap(lambda i: 0.0, [3, 0]), "one or more units"),
        (lambda: percentile_bootstrap(lambda i: 0.0, 3, resamples=0), "integer >= 1"),
        (lambda: percentile_bootstrap(lambda i: 0.0, 3, resamples=True), "integer >= 1"),
        (lambda: percentile_bootstrap(lambda i: 0.0, 3, confidence=1.5), "confidence"),
    ],
)
def test_bad_options_are_named_errors(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


def test_percentile_bootstrap_resamples_within_each_group_and_batched_agrees():
    seen: list[tuple[int, int]] = []
    a, b = np.arange(2.0), np.arange(10.0, 28.0)

    def statistic(i: np.ndarray, j: np.ndarray) -> float:
        seen.append((len(i), len(j)))
        assert i.max() < 2 and j.max() < 18
        return float(a[i].sum() + b[j].mean())

    one = percentile_bootstrap(statistic, (2, 18), resamples=600, seed=9)
    assert seen == [(2, 18)] * 600

    def batched(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        assert i.shape[1] == 2 and j.shape[1] == 18 and len(i) <= 250
        return a[i].sum(axis=1) + b[j].mean(axis=1)

    assert percentile_bootstrap(statistic, (2, 18), resamples=600, seed=9, batched=batched) == one


# -- the paired bootstrap ------------------------------------------------------------------------


def _samples(n: int, shift: float, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    old = rng.uniform(0.3, 0.9, n)
    return np.clip(old + shift + rng.normal(0, 0.05, n), 0, 1), old


def test_the_interval_is_scipy_s_paired_bootstrap_and_seeded():
    new, old = _samples(60, -0.03)
    d = paired_bootstrap(new, old, resamples=2000, seed=5)
    reference = stats.bootstrap(
        (new, old),
        lambda x, y, axis: np.mean(x, axis=axis) - np.mean(y, axis=axis),
        paired=True,
        vectorized=True,
        n_resamples=2000,
        method="BCa",
        rng=np.random.default_rng(5),
    ).confidence_interval
    assert (d.low, d.high) == pytest.approx((reference.low, reference.high), abs=1e-12)
    assert d.difference == pytest.approx(float(np.mean(new - old)))
    assert (d.n, d.method, d.metric) == (60, "BCa", "cus")
    assert paired_bootstrap(new, old, resamples=2000, seed=5) == d  # same seed, same interval
    assert paired_bootstrap(new, old, resamples=2000, seed=6) != d


def test_the_interval_covers_a_known_shift_and_narrows_with_more_questions():
    small = paired_bootstrap(*_samples(30, -0.05), resamples=999)
    large = paired_bootstrap(*_samples(600, -0.05), resamples=999)
    for d in (small, large):
        assert d.low < -0.05 < d.high
    assert large.high - large.low < (small.high - small.low) / 2


def test_from_normal_from_questions_the_interval_is_the_bootstraps_normal_approximation():
    """Issue 33: a BCa bootstrap of 5,000 shared questions took 0.8 s of the Run comparison's
    first visit; from ``normal_from`` questions the interval is its normal approximation."""
    new, old = _samples(2000, -0.05)
    fast = paired_bootstrap(new, old, resamples=1999, normal_from=1000)
    slow = paired_bootstrap(new, old, resamples=1999)
    diff = np.asarray(new) - np.asarray(old)
    want = normal_interval(diff.mean(), diff.std(ddof=1), 2000)
    assert fast.method == "normal" and slow.method == "BCa"
    assert (fast.low, fast.high) == pytest.approx(want, abs=1e-12)
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=2e-3)
    assert fast.difference == slow.difference
    # fewer questions keep the bootstrap
    assert paired_bootstrap(new[:999], old[:999], resamples=199, normal_from=1000).method == "BCa"


def test_a_runs_interval_is_the_bootstrap_below_normal_from_and_the_normal_one_from_it():
    """Issue 58 (item 2): one interval of a run's mean for every surface; the report's (9,999
    resamples) and the Overview's (1,999) were two."""
    rng = np.random.default_rng(3)
    small = rng.uniform(0, 1, 30)
    mean, std = float(small.mean()), float(small.std(ddof=1))
    assert run_interval(30, mean, std, small) == tuple(mean_interval(small)[1:])
    assert run_interval(30, mean, std, small, resamples=499, seed=2) == tuple(
        mean_interval(small, resamples=499, seed=2)[1:]
    )
    large = rng.uniform(0, 1, NORMAL_FROM)
    mean, std = float(large.mean()), float(large.std(ddof=1))
    assert run_interval(NORMAL_FROM, mean, std, None) == normal_interval(mean, std, NORMAL_FROM)
    assert run_interval(NORMAL_FROM, mean, std, large) == normal_interval(mean, std, NORMAL_FROM)
    assert run_interval(NORMAL_FROM, mean, std, large, normal_from=None) == tuple(
        mean_interval(large)[1:]
    )
    with pytest.raises(ConfigError, match="needs its 30 values"):
        run_interval(30, 0.5, 0.1, None)
    with pytest.raises(ConfigError, match="got 29"):
        run_interval(30, 0.5, 0.1, small[:29])


def test_a_constant_change_and_a_single_question():
    d = paired_bootstrap([0.5, 0.25, 1.0], [0.5, 0.25, 1.0])
    assert (d.difference, d.low, d.high, d.method) == (0.0, 0.0, 0.0, "constant")
    one = paired_bootstrap([0.2], [0.5])
    assert one.method == "none" and np.isnan(one.low) and np.isnan(one.high)
    assert one.to_dict()["low"] is None


@pytest.mark.parametrize(
    "new",
    [[1e-300, 0, 0, 0, 0, 0, 0, 0], [0.0, float("nan"), 1.0]],
    ids=["ties", "nan"],
)
def test_a_degenerate_bca_warns_nobody(new, recwarn):
    # regression (issue 44, 10): scipy's DegenerateDataWarning reached `s3kg check`'s stderr
    import warnings

    warnings.simplefilter("always")
    d = paired_bootstrap(new, [0.0] * len(new), resamples=999)
    assert d.method == "percentile"
    noisy = (stats.DegenerateDataWarning, RuntimeWarning)
    assert not [w for w in recwarn if issubclass(w.category, noisy)]


@pytest.mark.parametrize(
    ("new", "old", "kwargs", "message"),
    [
        ([0.1, 0.2], [0.1], {}, "one length"),
        ([], [], {}, "no paired values"),
        ([0.1, 0.2], [0.2, 0.1], {"confidence": 1.0}, "confidence must be between"),
    ],
)
def test_bad_samples_are_refused(new, old, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        paired_bootstrap(new, old, **kwargs)


# -- the mean's interval -------------------------------------------------------------------------


def test_the_mean_s_interval_is_scipys_bootstrap_of_the_mean():
    values = np.random.default_rng(7).uniform(0.1, 0.3, 40)
    mean, low, high = mean_interval(values, resamples=999, seed=3)
    want = stats.bootstrap(
        (values,), np.mean, n_resamples=999, method="BCa", rng=np.random.default_rng(3)
    ).confidence_interval
    assert mean == pytest.approx(values.mean())
    assert (low, high) == pytest.approx((want.low, want.high), abs=1e-12)
    # the same interval as the paired bootstrap against zeros
    d = paired_bootstrap(values, np.zeros_like(values), resamples=999, seed=3)
    assert (d.difference, d.low, d.high) == (mean, low, high)


def test_the_mean_s_interval_is_seeded():
    x = np.random.default_rng(3).random(50)
    assert mean_interval(x, resamples=999) == mean_interval(x, resamples=999)
    assert mean_interval(x, resamples=999, seed=1) != mean_interval(x, resamples=999)


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5])
def test_the_normal_interval_refuses_a_confidence_outside_0_1(confidence: float):
    with pytest.raises(ConfigError, match="confidence"):
        normal_interval(0.5, 0.1, 100, confidence=confidence)


# -- the percentile bootstrap --------------------------------------------------------------------


def test_the_percentile_bootstrap_leaves_out_resamples_where_the_statistic_is_undefined():
    def statistic(idx):
        return float("nan") if 0 not in idx else 1.0

    low, high, used = percentile_bootstrap(statistic, 5, resamples=200, seed=0)
    assert (low, high) == (1.0, 1.0) and 0 < used < 200
    assert percentile_bootstrap(lambda idx: float("nan"), 3, resamples=10)[2] == 0


# -- the proportion's interval (Wilson) ----------------------------------------------------------


@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611),
     (1, 29, 0.0061, 0.1718)],
)  # fmt: skip
def test_the_proportion_s_interval_is_newcombe_s_wilson_score_interval(successes, n, low, high):
    """R. G. Newcombe, Statistics in Medicine 17 (1998) 857-872, Table I, method 3 (score)."""
    p, lo, hi = proportion_interval(successes, n)
    assert p == successes / n
    assert (round(lo, 4), round(hi, 4)) == (low, high)


def test_a_handful_of_equal_outcomes_gets_a_wide_interval_not_a_point():
    """Why not the bootstrap: three confirmations bootstrap to "1.000 to 1.000"."""
    ones = np.ones(3)
    assert percentile_bootstrap(lambda i: float(ones[i].mean()), 3, resamples=50)[:2] == (1, 1)
    p, low, high = proportion_interval(3, 3)
    assert p == 1.0 and high == 1.0 and 0.4 < low < 0.5
    for n in range(1, 40):  # inside [0, 1], around the proportion, narrowing with n
        for k in (0, n // 3, n):
            p, low, high = proportion_interval(k, n)
            assert 0.0 <= low <= p <= high <= 1.0 and high - low > 0
    assert proportion_interval(2, 4, confidence=0.8)[1] > proportion_interval(2, 4)[1]
    assert all(math.isnan(v) for v in proportion_interval(0, 0))


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [((3, 2), {}, "0 <= successes <= n"), ((-1, 2), {}, "0 <= successes <= n"),
     ((1.5, 2), {}, "0 <= successes <= n"), ((True, 2), {}, "0 <= successes <= n"),
     ((1, 2), {"confidence": 1.0}, "confidence")],
)  # fmt: skip
def test_a_bad_proportion_is_a_named_error(args, kwargs, message):
    with pytest.raises(ConfigError, match=message):
        proportion_interval(*args, **kwargs)
