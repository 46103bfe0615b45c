"""s3kg_core.evaluation.baselines: ranges, identity, ordering, empty texts, the registry."""

from __future__ import annotations

import os

import numpy as np
import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.evaluation import PairSet
from s3kg_core.evaluation.baselines import (
    BASELINES,
    baseline_signature,
    run_baselines,
    s3kg_components,
)
from s3kg_core.scoring.result import blend

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

KG_A = '[["Renzo Furlan", "won against", "Thomas Johansson"], ["Renzo Furlan", "won in", "finals"]]'
KG_B = (
    '[["Thomas Johansson", "won against", "Renzo Furlan"], '
    '["Thomas Johansson", "won in", "finals"]]'
)
KG_C = '[["the bakery", "sells", "sourdough bread"], ["sourdough bread", "costs", "four euros"]]'
TEXT_A = "Renzo Furlan won against Thomas Johansson in the finals."
TEXT_B = "Thomas Johansson won against Renzo Furlan in the finals."
TEXT_C = "The small bakery on the corner sells sourdough bread for four euros."

IDENTICAL, SWAPPED, UNRELATED, EMPTY_2, BLANK_1 = range(5)


@pytest.fixture(scope="module")
def pairs() -> PairSet:
    rows = [
        (TEXT_A, KG_A, TEXT_A, KG_A, "1"),  # identical
        (TEXT_A, KG_A, TEXT_B, KG_B, "0"),  # same words, roles swapped
        (TEXT_A, KG_A, TEXT_C, KG_C, "0"),  # unrelated
        (TEXT_A, KG_A, "", "[]", "0"),  # empty candidate text and KG
        ("   ", "[]", TEXT_C, KG_C, "0"),  # blank reference text and KG
    ]
    return PairSet.from_rows(
        "toy",
        [
            {"id": str(i), "paragraph_1": t1, "kg_1": k1, "paragraph_2": t2, "kg_2": k2, "label": y}
            for i, (t1, k1, t2, k2, y) in enumerate(rows)
        ],
    )


@pytest.fixture(scope="module")
def all_scores(pairs: PairSet) -> dict[str, np.ndarray]:
    return run_baselines(pairs)


def test_run_baselines_returns_every_name_with_one_score_per_pair(all_scores, pairs) -> None:
    assert list(all_scores) == list(BASELINES)
    for name, scores in all_scores.items():
        assert scores.shape == (len(pairs),), name
        assert scores.dtype == np.float64, name


@pytest.mark.parametrize("name", list(BASELINES))
def test_scores_in_unit_range_never_nan(all_scores, name) -> None:
    scores = all_scores[name]
    assert not np.isnan(scores).any()
    assert ((scores >= 0.0) & (scores <= 1.0)).all(), scores


@pytest.mark.parametrize("name", list(BASELINES))
def test_identical_pair_scores_one(all_scores, name) -> None:
    assert all_scores[name][IDENTICAL] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("name", list(BASELINES))
def test_identical_beats_unrelated(all_scores, name) -> None:
    scores = all_scores[name]
    assert scores[IDENTICAL] > scores[UNRELATED]


@pytest.mark.parametrize("name", list(BASELINES))
def test_empty_or_blank_side_scores_zero(all_scores, name) -> None:
    assert all_scores[name][EMPTY_2] == 0.0
    assert all_scores[name][BLANK_1] == 0.0


@pytest.mark.parametrize("name", ["rouge1", "rouge2", "bleu"])
def test_unrelated_text_scores_low_on_ngram_overlap(all_scores, name) -> None:
    assert all_scores[name][UNRELATED] < 0.25


def test_bag_of_words_misses_swapped_roles_but_wl_sees_them(all_scores) -> None:
    assert all_scores["rouge1"][SWAPPED] == pytest.approx(1.0)
    assert all_scores["wl_kernel"][SWAPPED] < 0.9


def test_s3kg_kgx_is_the_kgx_blend_of_its_components(pairs, all_scores) -> None:
    s_wl, s_sbert = s3kg_components(pairs, "kgx")
    assert all_scores["s3kg_kgx"] == pytest.approx(blend(s_wl, s_sbert, 0.5, mode="kgx"))
    assert s_wl[EMPTY_2] == s_sbert[EMPTY_2] == 0.0


def test_subset_in_requested_order(pairs, all_scores) -> None:
    out = run_baselines(pairs, ["bleu", "rouge1"])
    assert list(out) == ["bleu", "rouge1"]
    assert out["bleu"] == pytest.approx(all_scores["bleu"])


def test_unknown_name_raises_config_error_listing_known_names(pairs) -> None:
    with pytest.raises(ConfigError, match=r"rouge1.*bertscore.*s3kg_kgx") as info:
        run_baselines(pairs, ["rouge1", "meteor"])
    assert "'meteor'" in str(info.value)


def test_signature_names_settings_and_versions() -> None:
    assert baseline_signature("bleu").startswith("bleu|tok:13a")
    assert "align:no" in baseline_signature("wl_kernel")
    assert "align:yes" in baseline_signature("s3kg_kgx")
    assert "rescale:no" in baseline_signature("bertscore")
    with pytest.raises(ConfigError):
        baseline_signature("meteor")
