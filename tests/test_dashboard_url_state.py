"""Tests of dashboard/url_state.py."""

from __future__ import annotations

import doctest

import dashboard.url_state as module


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0
