"""s3kg_core.grapheval.checkers.llm: the LLM checker against the scripted local server."""

from __future__ import annotations

import pytest
from fake_openai import Reply, fake_openai
from grapheval_helpers import CONTEXT, scripted_llm

from s3kg_core.errors import CheckerError, LLMResponseError
from s3kg_core.grapheval.checkers.llm import LLMChecker, parse_verdicts
from s3kg_core.kg import Triple
from s3kg_core.llm.client import LLMClient, LLMSettings, MemoryCache


def _checker(url: str, **kw) -> LLMChecker:
    client = LLMClient(
        LLMSettings(model="toy", base_url=url, timeout=2.0, max_retries=1), cache=MemoryCache()
    )
    return LLMChecker(client, **kw)


GOOD = Triple("Eiffel Tower", "is in", "Paris")
BAD = Triple("Eiffel Tower", "opened in", "1899")


def test_one_prompt_per_batch_and_verdicts_in_order():
    with fake_openai(scripted_llm) as server:
        checker = _checker(server.base_url, batch_size=2)
        probs = checker.check([GOOD, BAD, GOOD], CONTEXT)
        assert server.count("Statements:") == 2
    assert probs == pytest.approx([0.1, 0.9, 0.1])


def test_garbled_output_gives_no_probability_and_a_reason():
    with fake_openai(scripted_llm) as server:
        verdicts = _checker(server.base_url).judge([GOOD, BAD], CONTEXT + " GARBLED")
    assert [v.probability for v in verdicts] == [None, None]
    assert all(v.reason.startswith("unparseable reply") for v in verdicts)


def test_missing_verdicts_are_recorded_per_triple():
    with fake_openai(scripted_llm) as server:
        verdicts = _checker(server.base_url).judge([GOOD, BAD], CONTEXT + " HALF")
    assert verdicts[0].probability == pytest.approx(0.1)
    assert verdicts[1].probability is None and "statement 2" in verdicts[1].reason


def test_http_500_is_recorded_not_raised():
    with fake_openai(scripted_llm) as server:
        verdicts = _checker(server.base_url).judge([GOOD], CONTEXT + " SERVERERROR")
    assert verdicts[0].probability is None and "HTTP 500" in verdicts[0].reason


def test_raw_mode_sends_the_whole_answer():
    with fake_openai(scripted_llm) as server:
        verdict = _checker(server.base_url).check_text("The tower is in Paris", CONTEXT)
        assert "1. The tower is in Paris" in server.requests[0][1]["messages"][1]["content"]
    assert verdict.probability == pytest.approx(0.1)


def test_refusal_is_a_reason():
    with fake_openai(lambda body, n: Reply(text=None, refusal="no")) as server:
        [v] = _checker(server.base_url).judge([GOOD], CONTEXT)
    assert v.probability is None and "refused" in v.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdicts": [{"id": 1, "supported": true, "confidence": 1}]}', [0.0]),
        ('{"verdicts": [{"id": 1, "supported": "no", "confidence": 70}]}', [0.7]),
        ('{"verdicts": [{"id": 1, "supported": false, "confidence": 0.2}]}', [0.5]),
        ('{"verdicts": [{"id": 1, "supported": "maybe"}]}', [None]),
        ("[{'id': 1, 'supported': false,},]", [1.0]),
    ],
)
def test_verdict_parsing_table(text, expected):
    verdicts, _ = parse_verdicts(text, 1)
    assert [v.probability for v in verdicts] == expected


def test_unrepairable_reply_raises_for_the_caller():
    with pytest.raises(LLMResponseError):
        parse_verdicts("{not json", 1)


def test_client_must_be_an_llm_client():
    with pytest.raises(CheckerError):
        LLMChecker("http://localhost")  # type: ignore[arg-type]


def test_a_reply_cut_off_by_the_token_limit_keeps_its_complete_verdicts():
    """Regression: SmolLM2 ran out of tokens inside its third verdict, and the whole reply was
    unparseable, so no triple was judged; now the complete verdicts count and the rest say why."""
    cut = (
        'JSON: {"verdicts": [{"id": 1, "supported": true, "confidence": 0.9}, '
        '{"id": 2, "supported": false, "confidence": 0.8}, {"id": 3, "supported": tr'
    )
    with fake_openai(lambda body, n: Reply(text=cut)) as server:
        verdicts = _checker(server.base_url).judge([GOOD, BAD, GOOD], CONTEXT)
    assert [v.probability for v in verdicts[:2]] == pytest.approx([0.1, 0.8])
    assert verdicts[2].probability is None
    assert verdicts[2].reason == "the reply was cut off before statement 3"


def test_an_unparseable_reply_is_not_cached_so_a_rerun_asks_again():
    """Regression: the client cached the unparseable reply, so ``grapheval detect`` rerun on
    an "unjudged" answer (checked again, its summary says) got the same garbage back from the
    cache without asking the model."""
    good = '{"verdicts": [{"id": 1, "supported": true, "confidence": 0.9}]}'
    with fake_openai(lambda body, n: Reply(text="I cannot say." if n == 1 else good)) as server:
        checker = _checker(server.base_url)
        first = checker.judge([GOOD], CONTEXT)
        again = checker.judge([GOOD], CONTEXT)
        third = checker.judge([GOOD], CONTEXT)  # now served from the cache
        assert len(server.requests) == 2
    assert first[0].probability is None and first[0].reason.startswith("unparseable reply")
    assert again[0].probability == third[0].probability == pytest.approx(0.1)
