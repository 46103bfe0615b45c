"""Tests of s3kg_core.scoring.result: blend, alpha checks, modes, ScoreResult."""

import json
import math

import numpy as np
import pytest

from s3kg_core.errors import ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.result import MODES, ScoreResult, blend, check_alpha

# -- blend and alpha -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("s_wl", "s_sbert", "alpha", "mode", "expected"),
    [
        (1.0, 0.0, 0.25, "paper", 0.75),  # paper: alpha weights the embedding side
        (1.0, 0.0, 0.25, "kgx", 0.25),  # kgx: alpha weights the WL side
        (0.2, 0.8, 0.0, "paper", 0.2),
        (0.2, 0.8, 0.0, "kgx", 0.8),
        (0.2, 0.8, 1.0, "paper", 0.8),
        (0.2, 0.8, 1.0, "kgx", 0.2),
        (0.4, 0.9, 0.5, "paper", 0.65),
        (0.4, 0.9, 0.5, "kgx", 0.65),
        (0.6, 0.1, 0.3, "paper", 0.7 * 0.6 + 0.3 * 0.1),
        (0.6, 0.1, 0.3, "kgx", 0.3 * 0.6 + 0.7 * 0.1),
        (1.0, 0.0, 0.25, "hybrid", 0.75),  # hybrid: alpha weights the embedding side
    ],
)
def test_blend_table(s_wl, s_sbert, alpha, mode, expected):
    assert blend(s_wl, s_sbert, alpha, mode) == pytest.approx(expected, abs=1e-12)


def test_blend_default_mode_is_paper():
    assert blend(1.0, 0.0, 0.25) == pytest.approx(0.75)


def test_blend_works_on_arrays():
    s_wl = np.array([0.0, 0.5, 1.0])
    s_sbert = np.array([1.0, 0.5, 0.0])
    np.testing.assert_allclose(blend(s_wl, s_sbert, 0.2, "paper"), [0.2, 0.5, 0.8])
    np.testing.assert_allclose(blend(s_wl, s_sbert, 0.2, "kgx"), [0.8, 0.5, 0.2])


@pytest.mark.parametrize("alpha", [-0.01, 1.01, math.nan, math.inf, "0.5", None, [0.5]])
def test_bad_alpha_raises_config_error(alpha):
    with pytest.raises(ConfigError, match="alpha must be a number in"):
        check_alpha(alpha)
    with pytest.raises(ConfigError):
        blend(0.5, 0.5, alpha)


@pytest.mark.parametrize("alpha", [0, 0.0, 1, 1.0, 0.5, np.float64(0.25)])
def test_alpha_bounds_are_inclusive(alpha):
    check_alpha(alpha)  # no exception
    assert 0.0 <= blend(0.3, 0.7, alpha) <= 1.0


# Regression (fixed): check_alpha (types.py:148) tests isinstance(alpha, int | float), so NumPy
# scalars that are not Python float subclasses (np.float32, np.int64) are rejected with the false
# message 'alpha must be a number in [0, 1]'; numbers.Real would accept them.
@pytest.mark.parametrize("alpha", [np.float32(0.5), np.int64(1)])
def test_numpy_scalar_alpha_is_a_number(alpha):
    check_alpha(alpha)
    assert blend(1.0, 0.0, alpha) == pytest.approx(1.0 - float(alpha))


def test_blend_rejects_unknown_mode():
    with pytest.raises(ConfigError, match="mode must be one of"):
        blend(0.5, 0.5, 0.5, mode="average")  # type: ignore[arg-type]


def test_modes_constant():
    # text: issue 19; wwl and ot: issue 41
    assert MODES == ("paper", "kgx", "hybrid", "text", "wwl", "ot")


@pytest.mark.parametrize("alpha", [0.0, 0.3, 1.0])
def test_text_mode_blends_like_paper_and_hybrid(alpha):
    """The text mode keeps the paper convention, so stored components re-blend at any alpha."""
    assert blend(0.2, 0.9, alpha, mode="text") == blend(0.2, 0.9, alpha, mode="hybrid")
    assert blend(0.2, 0.9, alpha, mode="text") == pytest.approx((1 - alpha) * 0.2 + alpha * 0.9)


# -- ScoreResult -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "alpha", "expected_score"),
    [("paper", 0.5, 0.7), ("kgx", 0.5, 0.7), ("paper", 0.2, 0.58), ("kgx", 0.2, 0.82)],
)
def test_score_result_score_follows_mode_and_alpha(mode, alpha, expected_score):
    r = ScoreResult(s_wl=0.5, s_sbert=0.9, alpha=alpha, mode=mode)
    assert r.score == pytest.approx(expected_score, abs=1e-12)
    # re-blending uses the stored components, whatever alpha the result was made with
    assert r.blend(0.0) == pytest.approx(0.5 if mode == "paper" else 0.9, abs=1e-12)
    assert r.blend(1.0) == pytest.approx(0.9 if mode == "paper" else 0.5, abs=1e-12)


def test_score_result_round_trips_through_json():
    r = ScoreResult(
        s_wl=0.123456789012345,
        s_sbert=0.987654321098765,
        alpha=0.3,
        mode="kgx",
        status="ok",
        matched=(Triple("a", "r", "b"), Triple("b", "s", "c")),
        entity_map={"a": "a", "x": None},
        relation_map={"r": "r", "t": None},
        signature="mode:kgx|enc:minilm@0.1.0|tau:0.65|K:5|align:yes|norm:kgx-lower|version:0.1.0",
        n_triples_1=2,
        n_triples_2=3,
    )
    data = json.loads(json.dumps(r.to_dict()))
    assert data["score"] == pytest.approx(r.score)
    assert data["matched"] == [["a", "r", "b"], ["b", "s", "c"]]
    assert ScoreResult.from_dict(data) == r


def test_score_result_from_dict_ignores_a_stale_score():
    data = ScoreResult(s_wl=0.5, s_sbert=0.9, alpha=0.5).to_dict()
    data["score"] = 0.0  # derived; a stale value must not win
    assert ScoreResult.from_dict(data).score == pytest.approx(0.7)


def test_score_result_defaults_and_ok():
    r = ScoreResult(s_wl=0.0, s_sbert=0.0, status="empty_kg_1")
    assert not r.ok
    assert r.score == 0.0
    assert r.mode == "paper"
    assert r.alpha == 0.5
    assert ScoreResult(s_wl=1.0, s_sbert=1.0).ok


def test_score_result_blend_rejects_bad_alpha():
    with pytest.raises(ConfigError):
        ScoreResult(s_wl=0.5, s_sbert=0.5).blend(2.0)


def test_the_defaults_and_checks_of_mode_alpha_and_tau_live_in_one_place():
    """Issue 61: alpha 0.5 was written in 7 places, tau 0.65 in 4, the mode check in 5."""
    import pytest

    from s3kg_core.errors import ConfigError
    from s3kg_core.scoring.align import soft_align
    from s3kg_core.scoring.result import (
        DEFAULT_ALPHA,
        DEFAULT_TAU,
        check_mode,
        check_tau,
    )
    from s3kg_core.scoring.s3kg import S3KGConfig

    config = S3KGConfig()
    assert (config.alpha, config.tau) == (DEFAULT_ALPHA, DEFAULT_TAU) == (0.5, 0.65)
    assert inspect_default(soft_align, "tau") == DEFAULT_TAU
    for bad in (-0.1, 1.5, "0.5", float("nan")):
        with pytest.raises(ConfigError, match="tau must be a number in"):
            check_tau(bad)
    with pytest.raises(ConfigError, match="mode must be one of paper, kgx, hybrid, text, wwl, ot"):
        check_mode("fast")
    with pytest.raises(ConfigError, match="mode must be one of"):
        S3KGConfig(mode="fast")  # type: ignore[arg-type]


def inspect_default(fn, name):
    import inspect

    return inspect.signature(fn).parameters[name].default
