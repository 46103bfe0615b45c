"""s3kg_core.grapheval.checkers.base: the Checker base: validation, batching, verdicts."""

from __future__ import annotations

import pytest

from s3kg_core.errors import CheckerError
from s3kg_core.grapheval.checkers.base import EMPTY_CONTEXT, Checker, Claim, Verdict, triple_claim
from s3kg_core.kg import Triple


class Recording(Checker):
    name = "recording"

    def __init__(self, batch_size: int = 2, wrong: bool = False) -> None:
        super().__init__(batch_size)
        self.calls: list[list[tuple[list[str], str]]] = []
        self.wrong = wrong

    def _check(self, jobs, raw):
        self.calls.append([([c.text for c in claims], ctx) for claims, ctx in jobs])
        if self.wrong:
            return [[Verdict(0.5)] for _ in jobs]
        return [[Verdict(0.1 * len(c.text) % 1.0) for c in claims] for claims, _ in jobs]


def test_batches_are_split_and_reassembled_in_order():
    checker = Recording(batch_size=2)
    triples = [Triple(f"h{i}", "r", "t") for i in range(5)]
    verdicts = checker.judge_many([(triples, "ctx"), (triples[:1], "other")])
    assert [len(v) for v in verdicts] == [5, 1]
    [call] = checker.calls
    assert [len(claims) for claims, _ in call] == [2, 2, 1, 1]
    assert call[0][0] == ["h0 r t", "h1 r t"]


def test_empty_context_never_calls_the_model_and_says_why():
    checker = Recording()
    out = checker.judge([("a", "b", "c")], "  \n")
    assert out == [Verdict(1.0, EMPTY_CONTEXT)] and checker.calls == []


def test_no_triples_gives_no_verdicts():
    assert Recording().check([], "context") == []


@pytest.mark.parametrize(
    "job",
    [("not a list of triples", "ctx"), ([("a", "b")], "ctx"), ([("a", "b", "c")], None)],
)
def test_bad_input_is_a_checker_error(job):
    with pytest.raises(CheckerError):
        Recording().judge_many([job])


def test_wrong_count_from_a_subclass_is_caught():
    with pytest.raises(CheckerError, match="verdicts for 2 claims"):
        Recording(wrong=True).judge([("a", "b", "c"), ("d", "e", "f")], "ctx")


@pytest.mark.parametrize("p", [-0.1, 1.5, float("nan")])
def test_verdict_probability_bounds(p):
    with pytest.raises(CheckerError):
        Verdict(p)


def test_verdict_without_probability_needs_a_reason():
    with pytest.raises(CheckerError):
        Verdict(None)
    assert not Verdict(None, "skipped").judged


def test_claims_and_raw_text():
    assert triple_claim(Triple("New_York", "located_in", "USA")) == "New York located in USA"
    assert Claim.of(Triple("a", "b", "c")).triple == Triple("a", "b", "c")
    checker = Recording()
    assert checker.check_text("whole answer", "ctx").probability == pytest.approx(0.2)


def test_batch_size_must_be_positive():
    with pytest.raises(CheckerError):
        Recording(batch_size=0)
