"""scripts/griffe_rst.py: the docs site's rewrite of Sphinx roles in docstrings."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest
from script_helpers import load_script

pytest.importorskip("griffe", reason="the docs extra is not installed")

REPO = Path(__file__).resolve().parents[1]
roles = load_script("griffe_rst")


def test_doctests():
    result = doctest.testmod(roles)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (":class:`KGScorer`", "`KGScorer`"),
        (":meth:`ScoreResult.blend`", "`ScoreResult.blend`"),
        (":data:`~s3kg_core.SCORING_VERSION`", "`SCORING_VERSION`"),
        (":py:func:`s3kg_score` and :mod:`.statements`", "`s3kg_score` and `.statements`"),
        ("``literal`` and `x`, no role", "``literal`` and `x`, no role"),
        (":ref:`a-label`", ":ref:`a-label`"),  # not an object role: left alone
    ],
)
def test_strip_roles(text, expected):
    assert roles.strip_roles(text) == expected


def test_the_extension_rewrites_a_loaded_docstring(tmp_path):
    import griffe

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text(
        'def f():\n    """Calls :func:`~pkg.g` on a :class:`pkg.T`."""\n', encoding="utf-8"
    )
    extensions = griffe.load_extensions(str(REPO / "scripts" / "griffe_rst.py"))
    pkg = griffe.load("pkg", search_paths=[tmp_path], extensions=extensions)
    assert pkg["f"].docstring.value == "Calls `g` on a `pkg.T`."


def test_the_aggregators_table_becomes_markdown():
    # s3kg_core.grapheval.aggregate's docstring holds an RST simple table, one column of it
    # with `|`-free code, another with a role: each row is one Markdown row
    from s3kg_core.grapheval import aggregate

    text = roles.rst_tables(roles.strip_roles(aggregate.__doc__))
    assert "=====" not in text
    assert "| probabilities | score | verdict (``inconsistent``) |" in text
    assert (
        "| none at all (the answer has no triple) | ``0.0`` | ``False``: nothing to flag |" in text
    )


def test_a_cell_with_a_bar_is_escaped_and_a_lone_border_left_alone():
    table = "==  ==\na   b\n==  ==\nx|y z\n==  ==\n"
    assert roles.rst_tables(table).splitlines()[2] == "| x\\|y | z |"
    assert roles.rst_tables("==  ==\nnot a table") == "==  ==\nnot a table"
