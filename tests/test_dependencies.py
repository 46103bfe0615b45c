"""Tests of s3kg_core.dependencies: the install hint for a module that is not installed."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from s3kg_core.dependencies import (
    DISTRIBUTION,
    EXTRA,
    PACKAGE,
    install_hint,
    missing_dependency,
)
from s3kg_core.errors import InstallError, MissingDependencyError

REPO = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _names(requirements: list[str]) -> set[str]:
    """The distribution names of requirement strings, normalised (``ray[data]>=2`` -> ``ray``)."""
    return {
        re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements
    }


def _dist(module: str) -> str:
    return DISTRIBUTION.get(module, module.replace("_", "-"))


def test_the_extras_table_is_pyprojects():
    # each module the table gives an extra is a distribution of that extra in pyproject.toml
    extras = _project()["optional-dependencies"]
    wrong = [
        f"{module} -> {extra}"
        for module, extra in EXTRA.items()
        if _dist(module) not in _names(extras[extra])
    ]
    assert not wrong, wrong


def test_the_renamed_distributions_exist_in_pyproject():
    project = _project()
    every = _names(project["dependencies"])
    for requirements in project["optional-dependencies"].values():
        every |= _names(requirements)
    assert not [d for d in DISTRIBUTION.values() if d not in every]


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("streamlit", 'pip install "s3kg-workbench[dashboard]"'),
        ("ray.data", 'pip install "s3kg-workbench[ray]"'),
        ("accelerate", 'pip install "s3kg-workbench[training]"'),
        ("lemminflect", "pip install lemminflect (a dependency of s3kg-workbench"),
        ("sentence_transformers", "pip install sentence-transformers (a dependency"),
        ("torch", "download.pytorch.org/whl/cpu"),
    ],
)
def test_install_hint(module, expected):
    assert expected in install_hint(module)


def test_missing_dependency_is_a_named_install_error():
    err = missing_dependency(ModuleNotFoundError("No module named 'sklearn'", name="sklearn"))
    assert isinstance(err, MissingDependencyError) and isinstance(err, InstallError)
    assert str(err) == (
        f"the package scikit-learn is not installed: pip install scikit-learn "
        f"(a dependency of {PACKAGE}: pip install {PACKAGE})"
    )


@pytest.mark.parametrize("name", [None, "", "s3kg_core.gone", "dashboard.gone"])
def test_a_module_of_the_project_is_not_a_dependency(name):
    assert missing_dependency(ModuleNotFoundError("x", name=name)) is None
