"""Tests of dashboard/triple_diff.py."""

from __future__ import annotations

import doctest

import dashboard.triple_diff as module


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0
