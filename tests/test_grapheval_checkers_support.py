"""s3kg_core.grapheval.checkers.support: features, calibration file, hand-made examples."""

from __future__ import annotations

import json

import pytest
from grapheval_helpers import CONTEXT

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.support import (
    CALIBRATION_FILE,
    FEATURES,
    SupportChecker,
    load_calibration,
)
from s3kg_core.kg import Triple


@pytest.fixture(scope="module")
def checker(one_torch_thread, minilm) -> SupportChecker:
    return SupportChecker(minilm)


@pytest.fixture(scope="module")
def hand(one_torch_thread, minilm) -> SupportChecker:
    return SupportChecker(minilm, calibration=None)


@pytest.mark.parametrize("name", ["checker", "hand"])
def test_wrong_year_is_less_supported_than_the_stated_fact(name, request):
    c = request.getfixturevalue(name)
    good, bad = c.check(
        [Triple("Eiffel Tower", "is in", "Paris"), Triple("Eiffel Tower", "opened in", "1899")],
        CONTEXT,
    )
    assert good < bad
    if name == "hand":  # the dev-calibrated weights put this one just under 0.5
        assert good < 0.5 < bad


def test_features_catch_numbers_negation_and_entities(hand):
    ctx = "Aspirin does not cause fever. The drug was approved in 1950 in Germany."
    feats = hand.features_many(
        [
            (
                [
                    "Aspirin causes fever",
                    "The drug was approved in 1960",
                    "Ibuprofen was approved in Japan",
                ],
                ctx,
            )
        ]
    )[0]
    named = [dict(zip(FEATURES, row, strict=True)) for row in feats]
    assert named[0]["negation_mismatch"] == 1.0
    assert named[1]["num_absent_context"] == 1.0 and named[1]["num_absent_window"] == 1.0
    assert named[2]["entity_absent"] > 0 and named[2]["token_absent_context"] > 0
    assert all(0.0 <= v <= 1.0 for row in named for v in row.values())


def test_number_words_match_digits(hand):
    [[f]] = hand.features_many([(["The team won two games"], "The team won 2 games.")])
    assert f[FEATURES.index("num_absent_context")] == 0.0


def test_empty_context_and_no_triples(checker):
    assert checker.check([Triple("a", "b", "c")], "") == [1.0]
    assert checker.check([], CONTEXT) == []


def test_signature_names_encoder_and_calibration(checker, hand):
    assert "encoder:minilm@" in checker.signature
    assert "calibration:hand" in hand.signature
    if CALIBRATION_FILE.exists():
        assert "calibration:dev-" in checker.signature


def test_packaged_calibration_was_fitted_on_dev_only():
    if not CALIBRATION_FILE.exists():
        pytest.skip("no packaged calibration")
    data = json.loads(CALIBRATION_FILE.read_text())
    assert "dev" in data["split"] and set(data["data"]) == {"summeval", "qags_c", "qags_x"}
    assert data["features"] == list(FEATURES)


def test_malformed_calibration_file_is_a_checker_error(tmp_path):
    bad = tmp_path / "cal.json"
    bad.write_text(json.dumps({"triple": {"intercept": 0, "weights": {"bogus": 1}}, "raw": {}}))
    with pytest.raises(CheckerError, match=r"unknown features|malformed"):
        load_calibration(bad)
    bad.write_text("{not json")
    with pytest.raises(CheckerError, match="not JSON"):
        load_calibration(bad)
