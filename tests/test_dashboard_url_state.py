"""Tests of dashboard/url_state.py."""

from __future__ import annotations

import doctest

import dashboard.url_state as module
from dashboard.url_state import ALPHA_STEP, parse_alpha


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_alpha_moves_in_steps_of_a_tenth_and_a_link_is_rounded_to_them():
    """Regression (issue 43.11): the slider moved by 0.05, so 0.5 -> 0.2 took six presses."""
    assert ALPHA_STEP == 0.1
    assert [parse_alpha(t) for t in ("0.2", "0.62", "0.66", "1", "0")] == [0.2, 0.6, 0.7, 1.0, 0.0]
