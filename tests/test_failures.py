"""Tests of s3kg_core.failures: what a stage stored as failed, and the exit status rule."""

from __future__ import annotations

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.failures import StageFailures


@pytest.mark.parametrize(
    ("failed", "tried", "some", "all_"),
    [(0, 0, False, False), (0, 5, False, False), (2, 5, True, False), (5, 5, True, True)],
)
def test_some_and_all_failed(failed, tried, some, all_):
    f = StageFailures("collect", failed, tried, "requests", "the answers table")
    assert (f.some_failed, f.all_failed) == (some, all_)


def test_message_names_the_count_the_place_and_what_to_do():
    f = StageFailures("grapheval detect", 3, 4, "answers", "grapheval_results", outcome="unjudged")
    assert f.message() == (
        "grapheval detect: 3 of 4 answers unjudged (see grapheval_results); rerun to retry them"
    )


def test_combine_sums_the_passes_of_one_stage():
    a = StageFailures("detect", 1, 2, "answers", "t")
    b = StageFailures("detect", 2, 2, "answers", "t")
    both = StageFailures.combine([a, b])
    assert (both.failed, both.tried, both.all_failed) == (3, 4, False)
    assert StageFailures.combine([b, b]).all_failed
    with pytest.raises(ConfigError, match="at least one"):
        StageFailures.combine([])
    with pytest.raises(ConfigError, match="one stage"):
        StageFailures.combine([a, StageFailures("extract", 0, 1, "KGs", "t")])
