"""Tests of dashboard/escape.py: plotly labels; Markdown and code spans are s3kg_core's."""

from __future__ import annotations

import doctest

import pandas as pd

import dashboard.escape as escape_module
from dashboard.escape import code, md, plotly_frame, plotly_text
from s3kg_core import escape


def test_the_module_doctests_pass():
    result = doctest.testmod(escape_module)
    assert result.attempted >= 2 and result.failed == 0


def test_the_markdown_escapes_are_the_library_s():
    # one home: the dashboard's pages and the library's Markdown outputs escape alike
    assert md is escape.md and code is escape.code


def test_plotly_text_leaves_no_tag():
    assert plotly_text("<b>B</b> & <a href='x'>") == "&lt;b&gt;B&lt;/b&gt; &amp; &lt;a href='x'&gt;"


def test_plotly_frame_escapes_text_columns_only():
    frame = pd.DataFrame({"model": ["<b>m</b>", None], "n": [1, 2], "score": [0.5, float("nan")]})
    out = plotly_frame(frame)
    assert out["model"].tolist()[0] == "&lt;b&gt;m&lt;/b&gt;"
    assert out["model"].isna().tolist() == [False, True]
    assert out["n"].tolist() == [1, 2]
    assert frame["model"].tolist()[0] == "<b>m</b>"  # the input is not changed
    assert plotly_frame(frame, ["model"])["model"].tolist()[0] == "&lt;b&gt;m&lt;/b&gt;"
