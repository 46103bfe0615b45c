"""s3kg_core.grapheval.aggregate: the rules from triple probabilities to an answer's verdict."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s3kg_core.errors import GraphEvalError
from s3kg_core.grapheval.aggregate import (
    AGGREGATORS,
    DEFAULT_AGGREGATOR,
    THRESHOLD,
    MaxAggregator,
    MeanAggregator,
    make_aggregator,
)

probability = st.floats(0.0, 1.0, allow_nan=False)
judged_or_not = st.one_of(st.none(), probability)


@pytest.mark.parametrize(
    ("aggregator", "probabilities", "score", "inconsistent", "flagged"),
    [
        # GraphEval's rule: any triple over 0.5
        (DEFAULT_AGGREGATOR, [0.2, 0.7], 0.7, True, (1,)),
        (DEFAULT_AGGREGATOR, [0.2, 0.5], 0.5, False, ()),  # 0.5 is not over 0.5
        (DEFAULT_AGGREGATOR, [0.9, None, 0.1], 0.9, True, (0,)),  # unjudged triples left out
        (MeanAggregator(), [0.2, 0.7], 0.45, False, (1,)),  # flagged, yet the mean passes not
        (MeanAggregator(0.4), [0.2, 0.7], 0.45, True, (1,)),
        (MaxAggregator(0.8), [0.2, 0.7], 0.7, False, ()),
        # defined results: no triple -> consistent; no triple judged -> no verdict
        (DEFAULT_AGGREGATOR, [], 0.0, False, ()),
        (MeanAggregator(), [], 0.0, False, ()),
        (DEFAULT_AGGREGATOR, [None, None], None, None, ()),
        (MeanAggregator(0.1), [None], None, None, ()),
    ],
)
def test_aggregator_table(aggregator, probabilities, score, inconsistent, flagged):
    got = aggregator.score(probabilities)
    assert got == (pytest.approx(score) if score is not None else None)
    assert aggregator.inconsistent(probabilities) is inconsistent
    assert aggregator.flagged(probabilities) == flagged


@given(st.lists(judged_or_not, max_size=12))
def test_max_at_one_half_is_any_triple_over_one_half(probabilities):
    judged = [p for p in probabilities if p is not None]
    expected = None if probabilities and not judged else any(p > THRESHOLD for p in judged)
    assert DEFAULT_AGGREGATOR.inconsistent(probabilities) == expected
    assert bool(DEFAULT_AGGREGATOR.flagged(probabilities)) == bool(expected)


@given(st.lists(probability, min_size=1, max_size=12), st.sampled_from(sorted(AGGREGATORS)))
def test_scores_lie_between_the_least_and_most_unsupported_triple(probabilities, name):
    score = make_aggregator(name).score(probabilities)
    assert min(probabilities) - 1e-12 <= score <= max(probabilities) + 1e-12
    # the mean never flags an answer the max would not
    t = 0.3
    if MeanAggregator(t).inconsistent(probabilities):
        assert MaxAggregator(t).inconsistent(probabilities)


def test_names_thresholds_signatures():
    assert make_aggregator("any") is DEFAULT_AGGREGATOR == MaxAggregator(0.5)
    assert make_aggregator("mean", 0.3) == MeanAggregator(0.3) != MaxAggregator(0.3)
    assert MeanAggregator().with_threshold(0.25) == MeanAggregator(0.25)
    assert DEFAULT_AGGREGATOR.signature == "agg:max>0.5"
    assert len({MaxAggregator(0.5), MaxAggregator(0.5), MeanAggregator(0.5)}) == 2
    for bad in (-0.1, 1.5, math.nan):
        with pytest.raises(GraphEvalError, match=r"threshold must be in \[0, 1\]"):
            MaxAggregator(bad)
    with pytest.raises(GraphEvalError, match="unknown aggregator 'median'"):
        make_aggregator("median")
    with pytest.raises(GraphEvalError, match="use 'max' to move it"):
        make_aggregator("any", 0.3)


def test_equal_means_stay_equal_so_ties_stay_ties():
    # Regression: bench_trained_checker took the mean with numpy's pairwise sum, whose rounding
    # set 14 equal triples above one (0.39871791425913095 against 0.3987179142591309) and broke
    # a true tie in the KG mean-triple AUROC (qags_c sample of 20: 0.702; with ties, 0.707)
    p = 0.3987179142591309
    assert MeanAggregator().score([p] * 14) == MeanAggregator().score([p]) == p
