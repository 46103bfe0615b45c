"""s3kg_core.evaluation.metrics: max-F1, AUROC, bootstrap intervals, sweeps, balanced accuracy.

The golden test pins every figure to what the hand-written metrics gave before they moved onto
scikit-learn and scipy (``tests/golden/evaluation_metrics_nine_sets.json``), within 1e-12, on
the nine released pair sets.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from s3kg_core.errors import ConfigError, InputFormatError
from s3kg_core.evaluation import (
    AlphaPoint,
    ThresholdF1,
    alpha_sweep,
    auroc,
    best_alpha,
    bootstrap_ci,
    max_f1,
)
from s3kg_core.evaluation.metrics import (
    DEFAULT_ALPHAS,
    balanced_accuracy,
    best_threshold,
    sweep,
    threshold_report,
)
from s3kg_core.scoring.result import blend

EPS = 1e-12


def brute_max_f1(scores, labels) -> tuple[float, float]:
    """Reference: try every distinct score as the threshold, keep the highest best one."""
    best = (-1.0, math.nan)
    for t in sorted(set(scores), reverse=True):
        predicted = [s >= t for s in scores]
        tp = sum(p and y for p, y in zip(predicted, labels, strict=True))
        f1 = 2 * tp / (sum(predicted) + sum(labels))
        if f1 > best[0]:
            best = (f1, t)
    return best


def brute_auroc(scores, labels) -> float:
    """Reference: the share of (positive, negative) pairs ordered right, ties counting half."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg))
    return wins / (len(pos) * len(neg))


# -- max-F1 and AUROC on small tables ----------------------------------------------------------


@pytest.mark.parametrize(
    ("scores", "labels", "f1", "threshold", "auc"),
    [
        # perfect separation
        ([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0], 1.0, 0.8, 1.0),
        # reversed: the best F1 predicts everything positive
        ([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0], 2 * 2 / (4 + 2), 0.1, 0.0),
        # all equal: one threshold, all positive; AUROC is chance
        ([0.5, 0.5, 0.5, 0.5], [1, 0, 0, 0], 2 * 1 / (4 + 1), 0.5, 0.5),
        ([0.3] * 6, [1, 1, 1, 0, 0, 0], 2 * 3 / (6 + 3), 0.3, 0.5),
        # a tied positive/negative pair is never split, whichever comes first in the input
        ([0.9, 0.5, 0.5, 0.1], [1, 1, 0, 0], 0.8, 0.5, 0.875),
        ([0.9, 0.5, 0.5, 0.1], [1, 0, 1, 0], 0.8, 0.5, 0.875),
        # several thresholds give F1 = 2/3: the highest one is reported
        ([0.9, 0.7, 0.6, 0.1], [1, 0, 0, 1], 2 / 3, 0.9, 0.5),
        # booleans as labels
        ([0.2, 0.7], [False, True], 1.0, 0.7, 1.0),
    ],
)
def test_max_f1_and_auroc_table(scores, labels, f1, threshold, auc):
    result = max_f1(scores, labels)
    assert result.f1 == pytest.approx(f1, abs=EPS)
    assert result.threshold == threshold
    assert auroc(scores, labels) == pytest.approx(auc, abs=EPS)
    assert (result.f1, result.threshold) == pytest.approx(brute_max_f1(scores, labels), abs=EPS)


def test_precision_recall_at_threshold():
    r = max_f1([0.9, 0.8, 0.7, 0.2, 0.1], [1, 0, 1, 1, 0])
    # t = 0.2: predicted 4, tp 3 -> P 3/4, R 1, F1 6/7 (beats t = 0.7: P 2/3, R 2/3)
    assert (r.precision, r.recall, r.threshold) == (0.75, 1.0, 0.2)
    assert r.f1 == pytest.approx(6 / 7)
    assert float(r) == r.f1
    assert ThresholdF1.from_dict(r.to_dict()) == r


@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_on_tied_random_scores(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    scores = rng.integers(0, 6, size=n) / 5  # few distinct values: many ties
    labels = rng.integers(0, 2, size=n)
    labels[:2] = [0, 1]
    s, y = scores.tolist(), labels.tolist()
    result = max_f1(scores, labels)
    assert (result.f1, result.threshold) == pytest.approx(brute_max_f1(s, y), abs=EPS)
    assert auroc(scores, labels) == pytest.approx(brute_auroc(s, y), abs=EPS)
    # invariant to the order of the pairs
    perm = rng.permutation(n)
    assert max_f1(scores[perm], labels[perm]) == result


def test_scores_are_not_rescaled():
    # a monotone transform leaves F1 and AUROC unchanged; the threshold follows the scores
    scores, labels = np.array([0.2, 0.9, 0.4, 0.6]), [0, 1, 1, 0]
    a, b = max_f1(scores, labels), max_f1(10 * scores - 3, labels)
    assert a.f1 == b.f1
    assert b.threshold == pytest.approx(10 * a.threshold - 3)
    assert auroc(scores, labels) == auroc(np.exp(scores), labels)


# -- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize("labels", [[1, 1, 1], [0, 0, 0]])
@pytest.mark.parametrize("fn", [max_f1, auroc])
def test_single_class_is_a_clear_error(fn, labels):
    with pytest.raises(InputFormatError, match=r"all 3 labels are .* need both classes"):
        fn([0.1, 0.5, 0.9], labels)


def test_single_class_in_bootstrap_and_sweep():
    with pytest.raises(InputFormatError, match="both classes"):
        bootstrap_ci(auroc, [0.1, 0.2], [1, 1], n=5)
    with pytest.raises(InputFormatError, match="both classes"):
        alpha_sweep([0.1, 0.2], [0.3, 0.4], [0, 0], "paper")


@pytest.mark.parametrize(
    ("scores", "labels", "pattern"),
    [
        ([0.1, 0.2, 0.3], [0, 1], "got 3 scores but 2 labels"),
        ([], [], "empty"),
        ([0.1, math.nan, 0.3, math.nan, 0.5], [0, 1, 0, 1, 0], "2 of 5 scores are NaN"),
        ([0.1, math.inf, 0.3], [0, 1, 0], "1 of 3 scores are infinite"),
        ([0.1, 0.2, 0.3], [0, 1, 2], "labels must be 0 or 1"),
        ([0.1, 0.2], [0.5, 1.0], "labels must be 0 or 1"),
        ([0.1, 0.2], ["0", "1"], "labels must be 0 or 1"),
        ([[0.1, 0.2]], [[0, 1]], "one-dimensional"),
        (["a", "b"], [0, 1], "scores must be numbers"),
    ],
)
@pytest.mark.parametrize("fn", [max_f1, auroc])
def test_bad_input(fn, scores, labels, pattern):
    with pytest.raises(InputFormatError, match=pattern):
        fn(scores, labels)


# -- bootstrap ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy_pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(42)
    labels = np.r_[np.ones(30, np.int64), np.zeros(30, np.int64)]
    scores = labels * 0.3 + rng.normal(0.4, 0.2, size=60)
    return scores, labels


@pytest.mark.parametrize("fn", [auroc, max_f1])
def test_bootstrap_contains_point_and_is_seeded(noisy_pairs, fn):
    scores, labels = noisy_pairs
    point = float(fn(scores, labels))
    low, high = bootstrap_ci(fn, scores, labels, n=200, seed=7)
    assert 0.0 <= low <= point <= high <= 1.0
    assert low < high
    assert bootstrap_ci(fn, scores, labels, n=200, seed=7) == (low, high)
    assert bootstrap_ci(fn, scores, labels, n=200, seed=8) != (low, high)


def test_bootstrap_level_widens(noisy_pairs):
    scores, labels = noisy_pairs
    narrow = bootstrap_ci(auroc, scores, labels, n=200, level=0.5)
    wide = bootstrap_ci(auroc, scores, labels, n=200, level=0.99)
    assert wide.low <= narrow.low <= narrow.high <= wide.high
    assert wide.high - wide.low > narrow.high - narrow.low


def test_bootstrap_is_stratified():
    # 2 positives among 20: an unstratified resample would often miss them
    labels = np.r_[np.ones(2, np.int64), np.zeros(18, np.int64)]
    scores = np.linspace(0, 1, 20)
    seen: list[tuple[int, int]] = []

    def count(s: np.ndarray, y: np.ndarray) -> float:
        seen.append((int(y.sum()), len(y)))
        return auroc(s, y)

    bootstrap_ci(count, scores, labels, n=50, seed=0)
    assert seen == [(2, 20)] * 50


def test_bootstrap_perfect_separation_is_degenerate():
    assert bootstrap_ci(auroc, [0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0], n=50) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [({"n": 0}, "n .* must be an integer >= 1"), ({"n": 2.5}, "integer"),
     ({"level": 1.0}, r"level must be in \(0, 1\)"), ({"level": 0}, "level")],
)  # fmt: skip
def test_bootstrap_bad_options(kwargs, pattern):
    with pytest.raises(ConfigError, match=pattern):
        bootstrap_ci(auroc, [0.1, 0.9], [0, 1], **kwargs)


def test_bootstrap_nan_metric_is_an_error():
    with pytest.raises(InputFormatError, match="NaN on 5 of 5 resamples"):
        bootstrap_ci(lambda s, y: math.nan, [0.1, 0.9], [0, 1], n=5)


# -- alpha sweep -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def components() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, size=50)
    labels[:2] = [0, 1]
    s_wl = np.clip(0.2 * labels + rng.uniform(0, 0.8, size=50), 0, 1)
    s_sbert = np.clip(0.4 * labels + rng.uniform(0, 0.6, size=50), 0, 1)
    return s_wl, s_sbert, labels


@pytest.mark.parametrize("mode", ["paper", "kgx"])
def test_alpha_sweep_matches_manual_blend(components, mode):
    s_wl, s_sbert, labels = components
    points = alpha_sweep(s_wl, s_sbert, labels, mode)
    assert [p.alpha for p in points] == [round(0.1 * k, 1) for k in range(11)]
    for p in points:
        manual = [
            blend(float(w), float(b), p.alpha, mode) for w, b in zip(s_wl, s_sbert, strict=True)
        ]
        expected = max_f1(manual, labels)
        assert p.f1 == pytest.approx(expected.f1, abs=EPS)
        assert p.threshold == pytest.approx(expected.threshold, abs=EPS)
        assert p.auroc == pytest.approx(auroc(manual, labels), abs=EPS)


def test_alpha_sweep_modes_mirror_each_other(components):
    s_wl, s_sbert, labels = components
    paper = alpha_sweep(s_wl, s_sbert, labels, "paper")
    kgx = alpha_sweep(s_wl, s_sbert, labels, "kgx")
    for p, k in zip(paper, reversed(kgx), strict=True):
        assert p.alpha == pytest.approx(1 - k.alpha)
        assert (p.f1, p.auroc) == pytest.approx((k.f1, k.auroc), abs=1e-9)
    # the ends are the components alone
    assert paper[0].auroc == pytest.approx(auroc(s_wl, labels))
    assert paper[-1].auroc == pytest.approx(auroc(s_sbert, labels))


def test_alpha_sweep_custom_grid_order_and_numpy_grid(components):
    s_wl, s_sbert, labels = components
    points = alpha_sweep(s_wl, s_sbert, labels, "paper", alphas=np.array([0.5, 0.25]))
    assert [p.alpha for p in points] == [0.5, 0.25]
    assert all(type(p.alpha) is float for p in points)
    assert len(DEFAULT_ALPHAS) == 11


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"mode": "other"}, ConfigError, "mode must be one of"),
        ({"alphas": [0.5, 1.5]}, ConfigError, "alpha must be a number in"),
        ({"alphas": []}, ConfigError, "alphas is empty"),
        ({"s_sbert": [0.1, 0.2]}, InputFormatError, "got 4 s_wl values but 2 s_sbert values"),
        ({"s_wl": [0.1, math.nan, 0.2, 0.3]}, InputFormatError, "1 of 4 s_wl values are NaN"),
        ({"labels": [0, 1]}, InputFormatError, "got 4 scores but 2 labels"),
    ],
)
def test_alpha_sweep_bad_input(kwargs, error, pattern):
    args = {
        "s_wl": [0.1, 0.2, 0.3, 0.4],
        "s_sbert": [0.4, 0.3, 0.2, 0.1],
        "labels": [0, 1, 0, 1],
        "mode": "paper",
    }
    with pytest.raises(error, match=pattern):
        alpha_sweep(**(args | kwargs))


def test_best_alpha():
    points = [
        AlphaPoint(0.0, 0.70, 0.3, 0.80),
        AlphaPoint(0.1, 0.75, 0.4, 0.78),
        AlphaPoint(0.2, 0.75, 0.5, 0.82),  # ties 0.1 on F1, wins on AUROC
        AlphaPoint(0.3, 0.74, 0.5, 0.90),
        AlphaPoint(0.4, 0.74, 0.5, 0.90),  # a full tie: the first one stays
    ]
    assert best_alpha(points).alpha == 0.2
    assert best_alpha(points, by="f1") is points[2]
    assert best_alpha(points, by="auroc").alpha == 0.3
    assert AlphaPoint.from_dict(points[1].to_dict()) == points[1]


def test_best_alpha_on_a_sweep(components):
    s_wl, s_sbert, labels = components
    points = alpha_sweep(s_wl, s_sbert, labels, "paper")
    best = best_alpha(points)
    assert best.f1 == max(p.f1 for p in points)
    assert best_alpha(points, by="auroc").auroc == max(p.auroc for p in points)


@pytest.mark.parametrize(("points", "by"), [([], "f1"), ([AlphaPoint(0.5, 1, 0.5, 1)], "recall")])
def test_best_alpha_errors(points, by):
    with pytest.raises(ConfigError):
        best_alpha(points, by=by)


@pytest.mark.parametrize("fn", [auroc, max_f1])
def test_bootstrap_fast_path_matches_the_public_metric(noisy_pairs, fn):
    scores, labels = noisy_pairs
    fast = bootstrap_ci(fn, scores, labels, n=100, seed=5)
    slow = bootstrap_ci(lambda s, y: float(fn(s, y)), scores, labels, n=100, seed=5)
    assert fast == pytest.approx(slow, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_resampled_auroc_matches_sklearn_with_ties(seed):
    # the bootstrap's AUROC is scipy's Mann-Whitney U on whole chunks of resamples
    from sklearn.metrics import roc_auc_score

    from s3kg_core.evaluation.metrics import _auroc_batch

    rng = np.random.default_rng(seed)
    pos = rng.integers(0, 4, size=(6, 12)) / 3.0
    neg = rng.integers(0, 4, size=(6, 9)) / 3.0
    y = np.r_[np.ones(12), np.zeros(9)]
    expected = [roc_auc_score(y, np.r_[p, q]) for p, q in zip(pos, neg, strict=True)]
    assert _auroc_batch(pos, neg) == pytest.approx(expected, abs=1e-12)


# -- balanced accuracy, thresholds chosen on dev, the thresholded report --------------------------


def test_balanced_accuracy_table():
    assert balanced_accuracy([1, 0, 1, 0], [1, 0, 1, 0]) == 1.0
    assert balanced_accuracy([1, 1, 1, 0], [1, 1, 1, 1]) == 0.5
    assert balanced_accuracy(np.array([1, 1, 0, 0]), np.array([1, 0, 0, 0])) == 0.75
    with pytest.raises(InputFormatError, match="both classes; every label is 1"):
        balanced_accuracy([1, 1], [0, 1])
    with pytest.raises(InputFormatError, match="2 labels but 1 predictions"):
        balanced_accuracy([1, 0], [1])


def test_the_dev_threshold_is_the_best_and_the_lowest_of_equals():
    scores, labels = [0.9, 0.7, 0.6, 0.3, 0.2], [0, 0, 1, 1, 1]  # label 1 = consistent
    assert best_threshold(scores, labels) == 0.6  # > 0.6 flags exactly the two inconsistent
    # every threshold in [0.3, 0.6) is as good: ties keep the lowest candidate
    assert best_threshold([0.9, 0.2], [0, 1]) == 0.2
    assert best_threshold([0.123456, 0.9], [1, 0]) == 0.1235  # candidates to 4 decimals


def test_threshold_report_per_kind_and_one_class():
    report = threshold_report([1, 0, 0], [0.9, 0.8, 0.1], ["support", "swap", "number"])
    assert report["accuracy"] == pytest.approx(2 / 3, abs=1e-3)
    assert report["accuracy_by_kind"] == {"number": 1.0, "support": 1.0, "swap": 0.0}
    assert report["balanced_accuracy"] == 0.75 and report["auroc"] == 1.0
    assert threshold_report([1, 1], [0.9, 0.2]) == {"n": 2, "accuracy": 0.5}
    assert threshold_report([], []) == {"n": 0}


def test_a_general_sweep_equals_the_blend_sweep(components):
    s_wl, s_sbert, labels = components
    blended = sweep(lambda a: (1 - a) * s_wl + a * s_sbert, labels)
    assert blended == alpha_sweep(s_wl, s_sbert, labels, "paper")
    with pytest.raises(ConfigError, match="alphas is empty"):
        sweep(lambda a: s_wl, labels, alphas=[])


# -- golden figures on the nine released pair sets ------------------------------------------------

GOLDEN = Path(__file__).parent / "golden" / "evaluation_metrics_nine_sets.json"


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _flat(value: object, path: str = "") -> dict[str, float]:
    """Every number of nested dicts and lists, by its path."""
    if isinstance(value, dict):
        return {
            k: v for key, item in value.items() for k, v in _flat(item, f"{path}/{key}").items()
        }
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{path}/{i}").items()}
    return {path: float(value)}  # type: ignore[arg-type]


@pytest.mark.shared_data
def test_figures_on_the_nine_pair_sets_equal_the_hand_written_metrics(shared_data):
    from s3kg_core.evaluation.pair_sets import list_pair_sets, load_pair_set
    from s3kg_core.evaluation.splits import dev_mask

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["sets"]
    assert sorted(golden) == list_pair_sets(shared_data)
    for name, expected in golden.items():
        ps = load_pair_set(name, shared_data)
        text = np.array(
            [_jaccard(_words(a), _words(b)) for a, b in zip(ps.text_1, ps.text_2, strict=True)]
        )
        kg = np.array(
            [
                _jaccard({str(t) for t in a}, {str(t) for t in b})
                for a, b in zip(ps.kg_1, ps.kg_2, strict=True)
            ]
        )
        y, dev = ps.labels, dev_mask(name, ps.ids)
        got: dict[str, object] = {}
        for score_name, s in (("text_jaccard", text), ("kg_jaccard", kg)):
            for side, idx in (("all", np.arange(len(y))), ("test", np.flatnonzero(~dev))):
                got[f"{score_name}:{side}"] = {
                    **max_f1(s[idx], y[idx]).to_dict(),
                    "auroc": auroc(s[idx], y[idx]),
                }
            # the intervals on the test side (the golden file has them on all pairs too)
            got[f"{score_name}:test"] |= {  # type: ignore[operator]
                "f1_ci": list(bootstrap_ci(max_f1, s[idx], y[idx], n=40, seed=0)),
                "auroc_ci": list(bootstrap_ci(auroc, s[idx], y[idx], n=200, seed=0)),
            }
        # kgx mode's sweep mirrors paper mode's (test_alpha_sweep_modes_mirror_each_other)
        points = alpha_sweep(kg[dev], text[dev], y[dev], "paper")
        got["sweep:paper:dev"] = [p.to_dict() for p in points]
        got["best:paper:auroc"] = best_alpha(points, by="auroc").to_dict()
        got["best:paper:f1"] = best_alpha(points).to_dict()
        expected = {
            key: (
                {k: v for k, v in value.items() if "_ci" not in k or key.endswith(":test")}
                if isinstance(value, dict)
                else value
            )
            for key, value in expected.items()
            if key in got
        }
        flat, want = _flat(got), _flat(expected)
        assert flat.keys() == want.keys()
        off = {k: (flat[k], want[k]) for k in want if abs(flat[k] - want[k]) > 1e-12}
        assert not off, f"{name}: {off}"
