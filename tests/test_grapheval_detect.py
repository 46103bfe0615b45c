"""s3kg_core.grapheval.detect: aggregation of verdicts, the GraphEval object, degenerate answers."""

from __future__ import annotations

import re

import pytest
from grapheval_helpers import CONTEXT

from s3kg_core.errors import GraphEvalError
from s3kg_core.extract.base import ItemTexts, TextKG
from s3kg_core.grapheval.checkers.base import Checker, Verdict
from s3kg_core.grapheval.detect import Detection, GraphEval, detect, detection_from_verdicts
from s3kg_core.kg import Triple


class YearChecker(Checker):
    """Unsupported iff the claim has a 4-digit year not in the context; 'SKIP' is not judged."""

    name = "year"

    def _check(self, jobs, raw):
        out = []
        for claims, ctx in jobs:
            vs = []
            for c in claims:
                if "SKIP" in c.text:
                    vs.append(Verdict(None, "skipped on purpose"))
                    continue
                years = re.findall(r"\b\d{4}\b", c.text)
                vs.append(Verdict(0.9 if any(y not in ctx for y in years) else 0.1))
            out.append(vs)
        return out


class ListExtractor:
    """Splits an answer on ' ; ' into 'h|r|t' triples; 'FAIL' fails the extraction."""

    name = "list"

    def extract(self, items: list[ItemTexts]) -> list[dict[str, TextKG]]:
        out = []
        for item in items:
            text = item.answer or ""
            if "FAIL" in text:
                out.append({"answer": TextKG(status="failed: scripted")})
                continue
            parts = [p.split("|") for p in text.split(" ; ") if p.count("|") == 2]
            out.append({"answer": TextKG(tuple(Triple(*p) for p in parts))})
        return out


GOOD = Triple("Eiffel Tower", "is in", "Paris")
BAD = Triple("Eiffel Tower", "opened in", "1899")


def test_detect_flags_the_unsupported_triple_and_keeps_every_probability():
    d = detect([GOOD, BAD], CONTEXT, YearChecker(), answer="It opened in 1899.")
    assert d.inconsistent is True and d.flagged == (1,) and d.flagged_triples == [BAD]
    assert d.probabilities == pytest.approx((0.1, 0.9))
    assert d.raw_probability == pytest.approx(0.9) and d.raw_inconsistent is True
    assert d.status == "ok" and d.checker.startswith("checker:year")
    assert Detection.from_dict(d.to_dict()) == d


def test_no_triples_is_a_defined_consistent_result_with_a_reason():
    d = detect([], CONTEXT, YearChecker())
    assert d.inconsistent is False and d.status == "no_triples" and "no triples" in d.reason


def test_unjudged_triples_are_reasons_never_zero():
    d = detect([GOOD, Triple("SKIP", "r", "t")], CONTEXT, YearChecker())
    assert d.status == "partial" and d.probabilities[1] is None
    assert d.reasons == {"1": "skipped on purpose"} and d.inconsistent is False
    all_skipped = detect([Triple("SKIP", "r", "t")], CONTEXT, YearChecker())
    assert all_skipped.inconsistent is None and all_skipped.status == "unjudged"


def test_exactly_half_is_not_flagged():
    d = detection_from_verdicts([GOOD], [Verdict(0.5)])
    assert d.inconsistent is False and d.flagged == ()


def test_mismatched_lengths_raise():
    with pytest.raises(GraphEvalError):
        detection_from_verdicts([GOOD], [])


def test_grapheval_batches_many_answers_with_raw_mode():
    ge = GraphEval(YearChecker(), ListExtractor(), batch_answers=2)
    answers = [
        "Eiffel Tower|is in|Paris",
        "Eiffel Tower|opened in|1899 ; Eiffel Tower|is in|Paris",
        "",
        "FAIL",
        "Eiffel Tower|opened in|1889",
    ]
    ds = ge.detect_many(answers, [CONTEXT] * len(answers), raw=True)
    assert [d.inconsistent for d in ds] == [False, True, False, None, False]
    assert [d.status for d in ds] == ["ok", "ok", "no_triples", "extraction_failed", "ok"]
    assert "scripted" in ds[3].reason and ds[3].raw_probability is not None
    assert ds[1].flagged == (0,)


def test_grapheval_with_known_kgs_and_bad_lengths():
    ge = GraphEval(YearChecker(), ListExtractor())
    [d] = ge.detect_kgs([[BAD]], [CONTEXT])
    assert d.inconsistent is True and d.raw_probability is None
    with pytest.raises(GraphEvalError):
        ge.detect_many(["a"], [])
    with pytest.raises(GraphEvalError):
        GraphEval("not a checker")  # type: ignore[arg-type]


def test_default_extractor_is_offline_and_real():
    ge = GraphEval(YearChecker())
    d = ge.detect("The Eiffel Tower opened in 1899.", CONTEXT)
    assert d.inconsistent is True and ge.extractor.name.startswith("offline:")


def test_another_aggregator_decides_the_verdict_and_the_default_is_graphevals():
    from s3kg_core.grapheval.aggregate import DEFAULT_AGGREGATOR, MeanAggregator

    triples = [Triple("a", "r", "b"), Triple("c", "r", "d"), Triple("e", "r", "f")]
    verdicts = [Verdict(0.9), Verdict(0.1), Verdict(0.2)]
    graph_eval = detection_from_verdicts(triples, verdicts)
    assert graph_eval == detection_from_verdicts(triples, verdicts, aggregator=DEFAULT_AGGREGATOR)
    assert graph_eval.inconsistent is True and graph_eval.flagged == (0,)
    mean = detection_from_verdicts(triples, verdicts, aggregator=MeanAggregator())
    assert mean.inconsistent is False and mean.flagged == (0,)  # the triple is still shown
    assert mean.status == "ok"
    low = detection_from_verdicts(triples, verdicts, aggregator=MeanAggregator(0.3))
    assert low.inconsistent is True
    ge = GraphEval(YearChecker(), ListExtractor(), aggregator=MeanAggregator())
    d = ge.detect("Tower|opened in|1899 ; Tower|is in|Paris 1889 ; Tower|has|1889 lights", CONTEXT)
    assert d.probabilities == (0.9, 0.1, 0.1) and d.inconsistent is False
    assert detect(
        list(d.triples), CONTEXT, YearChecker(), aggregator=MeanAggregator(0.3)
    ).inconsistent
