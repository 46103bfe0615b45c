"""s3kg_core.grapheval.checkers.nli: the NLI checker on a tiny random BERT the test saves."""

from __future__ import annotations

import pytest
from grapheval_helpers import CONTEXT, make_tiny_nli

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.nli import NLIChecker, entailment_index
from s3kg_core.kg import Triple


@pytest.fixture(scope="module")
def tiny_nli(tmp_path_factory) -> NLIChecker:
    return NLIChecker(make_tiny_nli(tmp_path_factory.mktemp("nli") / "tiny"), batch_size=2)


def test_probabilities_have_the_right_shape_and_range(tiny_nli):
    triples = [
        Triple("Eiffel Tower", "is in", "Paris"),
        Triple("Eiffel Tower", "opened in", "1899"),
    ]
    probs = tiny_nli.check(triples, CONTEXT)
    assert len(probs) == 2 and all(p is not None and 0.0 <= p <= 1.0 for p in probs)
    assert tiny_nli.name == "nli:tiny" and "entail:entailment" in tiny_nli.signature


def test_long_contexts_are_windowed_and_take_the_best_window(tiny_nli):
    long_context = " ".join(["the river of london was built by iron ."] * 40) + " " + CONTEXT
    assert len(tiny_nli.tokenizer(long_context)["input_ids"]) > tiny_nli.max_length
    [verdict] = tiny_nli.judge([Triple("eiffel tower", "is in", "paris")], long_context)
    windows = tiny_nli._entailment([long_context], ["eiffel tower is in paris"])
    assert verdict.probability == pytest.approx(1 - windows[0], abs=1e-6)
    # the best window is at least as good as the first window alone
    first = tiny_nli._entailment(
        [" ".join(long_context.split()[:20])], ["eiffel tower is in paris"]
    )
    assert windows[0] >= first[0] - 1e-6


def test_raw_mode_and_empty_context(tiny_nli):
    assert 0.0 <= tiny_nli.check_text("the tower opened in 1889", CONTEXT).probability <= 1.0
    assert tiny_nli.check([("a", "b", "c")], "") == [1.0]


def test_missing_directory_is_a_checker_error(tmp_path):
    with pytest.raises(CheckerError, match="does not exist"):
        NLIChecker(tmp_path / "nothing")


def test_two_label_hhem_like_model(tmp_path):
    checker = NLIChecker(make_tiny_nli(tmp_path / "hhem", {0: "hallucinated", 1: "consistent"}))
    assert checker.entail == 1
    assert 0.0 <= checker.check([("a", "b", "c")], CONTEXT)[0] <= 1.0


def test_a_model_without_an_entailment_label_is_refused(tmp_path):
    with pytest.raises(CheckerError, match="which label means entailment"):
        NLIChecker(make_tiny_nli(tmp_path / "x", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}))


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({0: "ENTAILMENT", 1: "NEUTRAL", 2: "CONTRADICTION"}, 0),
        ({0: "contradiction", 1: "entailment"}, 1),
        ({0: "not_entailment", 1: "entailment"}, 1),
        ({0: "supported", 1: "unsupported"}, 0),
    ],
)
def test_entailment_label_table(labels, expected):
    assert entailment_index(labels) == expected
