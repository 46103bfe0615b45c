"""Tests of s3kg_core.statuses: an answer's score statuses named by the KG they are about."""

from __future__ import annotations

import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.statuses import LEGACY_STATUSES, describe_status, role_status, short_status


@pytest.mark.parametrize(
    ("pair", "reference", "stored"),
    [
        ("ok", "gold", "ok"),
        ("empty_kg_1", "gold", "answer_kg_empty"),
        ("empty_kg_1", "context", "answer_kg_empty"),
        ("empty_kg_2", "gold", "gold_kg_empty"),
        ("empty_kg_2", "context", "context_kg_empty"),
        ("empty_kgs", "gold", "answer_and_gold_kgs_empty"),
        ("unparseable_kg_2", "context", "context_kg_unparseable"),
        ("oversized_kg_1", "gold", "answer_kg_oversized"),
        ("gold_kg_empty", "gold", "gold_kg_empty"),  # already new: kept
        ("not_scored", "context", "not_scored"),  # unknown: kept
    ],
)
def test_pair_statuses_get_the_name_of_their_kg(pair, reference, stored):
    assert role_status(pair, reference) == stored


def test_no_new_name_mentions_a_kg_by_number():
    """Regression (issue 31): ``empty_kg_1`` in ``gold_status`` read as "the gold KG is empty"."""
    for names in LEGACY_STATUSES.values():
        assert not any(new.endswith(("_1", "_2")) for new in names.values())
        assert len(set(names.values())) == len(names)


def test_every_new_name_has_words_for_a_tooltip_and_a_metric():
    for names in LEGACY_STATUSES.values():
        for new in names.values():
            assert describe_status(new).startswith("the ") and "KG" in describe_status(new)
            assert short_status(new) not in ("", "not scored")
    assert describe_status("gold_kg_empty") == "the gold KG is empty"
    assert short_status("answer_kg_empty") == "answer KG empty"


def test_an_unknown_reference_is_refused():
    with pytest.raises(ConfigError, match="reference must be one of"):
        role_status("empty_kg_1", "answer")  # type: ignore[arg-type]
