"""dashboard/live_alpha.py: live blocks, their payload as a page sends it (issue 60).

The browser side (the block follows a drag of the slider before the server hears it, and ends
on the server's numbers) is checked in tests/test_dashboard_browser.py.
"""

from __future__ import annotations

import json
import math
import textwrap

import pytest
from streamlit.testing.v1 import AppTest

from dashboard import live_alpha
from dashboard.url_state import ALPHA_STEP
from s3kg_core.errors import ConfigError


def test_the_grid_is_the_sliders_stops():
    assert live_alpha.GRID[0] == 0.0 and live_alpha.GRID[-1] == 1.0
    assert len(live_alpha.GRID) == round(1 / ALPHA_STEP) + 1
    assert all(live_alpha.grid_index(a) == k for k, a in enumerate(live_alpha.GRID))
    assert live_alpha.grid_index(0.1 + 0.2) == 3  # 0.30000000000000004: the slider's float


@pytest.mark.parametrize("alpha", [0.55, -0.1, 1.1, math.nan])
def test_an_alpha_off_the_grid_is_refused(alpha):
    with pytest.raises(ConfigError, match="not a stop"):
        live_alpha.grid_index(alpha)


def test_cells_carry_numbers_and_nan_as_none():
    assert live_alpha.cell(0.5, decimals=3) == {"v": 0.5, "d": 3}
    assert live_alpha.cell([0.1, math.nan], decimals=4) == {"v": [0.1, None], "d": 4}
    assert json.dumps(live_alpha.cell(math.nan, decimals=1))  # valid JSON: no NaN


def test_an_unknown_kind_is_refused_before_anything_is_drawn():
    with pytest.raises(ConfigError, match="one of metrics, note, table"):
        live_alpha.mount({"kind": "chart"}, alpha=0.5, key="x")


def test_a_page_sends_the_block_with_the_grid_and_the_servers_stop(tmp_path):
    page = tmp_path / "page.py"
    page.write_text(
        textwrap.dedent(
            """
            from dashboard import live_alpha
            block = live_alpha.table(
                [{"key": "run", "label": "run"}],
                [{"id": 1, "order": [1] * 11, "cells": {"run": {"t": "<b>x</b>"}}}],
                label="t",
            )
            live_alpha.mount(block, alpha=0.7, key="live.t")
            live_alpha.mount(live_alpha.note([None] * 11, "wait {alpha}"), alpha=0.7, key="n")
            """
        ),
        encoding="utf-8",
    )
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception
    blocks = [el for el in at.main if getattr(el, "type", None) == "bidi_component"]
    assert len(blocks) == 2
    data = json.loads(blocks[0].proto.json)
    assert data["kind"] == "table" and data["at"] == 7 and data["grid"] == list(live_alpha.GRID)
    assert data["rows"][0]["cells"]["run"] == {"t": "<b>x</b>"}  # text: set as text, not markup
    assert blocks[0].proto.component_name == "s3kg.live_alpha"
    assert "textContent" in blocks[0].proto.js_content
    assert "innerHTML" not in blocks[0].proto.js_content  # nothing the data holds is markup
    assert json.loads(blocks[1].proto.json)["pending"] == "wait {alpha}"


def test_the_module_doctests_pass():
    import doctest

    assert doctest.testmod(live_alpha).failed == 0
