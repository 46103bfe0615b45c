"""scripts/griffe_roles.py: the docs site's rewrite of Sphinx roles in docstrings."""

from __future__ import annotations

import doctest
import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("griffe", reason="the docs extra is not installed")

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("griffe_roles", REPO / "scripts" / "griffe_roles.py")
assert _spec and _spec.loader
roles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(roles)


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
    extensions = griffe.load_extensions(str(REPO / "scripts" / "griffe_roles.py"))
    pkg = griffe.load("pkg", search_paths=[tmp_path], extensions=extensions)
    assert pkg["f"].docstring.value == "Calls `g` on a `pkg.T`."
