"""Tests of dashboard/run_page.py."""

from __future__ import annotations

import doctest

import dashboard.run_page as module


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0
