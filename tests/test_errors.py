"""Every exception class of the library and the dashboard lives in s3kg_core/errors.py."""

from __future__ import annotations

import ast
import builtins
import inspect
from pathlib import Path

import pytest

from s3kg_core import errors

REPO = Path(__file__).resolve().parents[1]
ERRORS_PY = REPO / "s3kg_core" / "errors.py"
SCANNED = ("s3kg_core", "dashboard")


def _base_name(node: ast.expr) -> str:
    """``Foo`` for ``Foo``, ``Foo`` for ``mod.Foo``, ``""`` for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _classes() -> list[tuple[Path, str, list[str]]]:
    found = []
    for folder in SCANNED:
        for path in sorted((REPO / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found.append((path, node.name, [_base_name(b) for b in node.bases]))
    return found


def _exception_classes() -> list[tuple[Path, str]]:
    """Classes deriving from BaseException, followed by name through the scanned modules."""
    classes = _classes()
    exceptions = {
        name
        for name in dir(builtins)
        if isinstance(getattr(builtins, name), type)
        and issubclass(getattr(builtins, name), BaseException)
    }
    # A base imported from elsewhere (``requests.HTTPError``) counts by its name's ending.
    exceptions |= {
        base
        for _, _, bases in classes
        for base in bases
        if base.endswith(("Error", "Exception", "Warning"))
    }
    changed = True
    while changed:
        changed = False
        for _, name, bases in classes:
            if name not in exceptions and any(b in exceptions for b in bases):
                exceptions.add(name)
                changed = True
    return [(path, name) for path, name, _ in classes if name in exceptions]


def test_every_exception_class_is_defined_in_errors_py() -> None:
    outside = [
        f"{path.relative_to(REPO)}: {name}"
        for path, name in _exception_classes()
        if path != ERRORS_PY
    ]
    assert outside == [], "move these to s3kg_core/errors.py: " + ", ".join(outside)


def test_the_walk_sees_every_class_of_errors_py() -> None:
    # The scan above is only as good as its inheritance walk: it must find all of errors.py.
    seen = {name for path, name in _exception_classes() if path == ERRORS_PY}
    assert seen == set(errors.__all__)


def _error_classes() -> list[type[BaseException]]:
    return [
        obj
        for _, obj in inspect.getmembers(errors, inspect.isclass)
        if obj.__module__ == errors.__name__
    ]


def test_all_lists_every_class() -> None:
    assert sorted(errors.__all__) == sorted(cls.__name__ for cls in _error_classes())


@pytest.mark.parametrize("cls", _error_classes(), ids=lambda cls: cls.__name__)
def test_each_error_derives_from_s3kg_error_and_has_a_docstring(
    cls: type[BaseException],
) -> None:
    assert issubclass(cls, errors.S3KGError)
    doc = cls.__doc__ or ""
    assert doc.strip(), f"{cls.__name__} has no docstring"
    assert "\n" not in doc.strip(), f"{cls.__name__}: the docstring should be one line"


@pytest.mark.parametrize(
    ("name", "bases"),
    [
        ("GraphRenderError", (errors.S3KGError, ValueError)),
        ("ServeError", (errors.EndpointError,)),
    ],
)
def test_moved_errors_keep_their_bases(name: str, bases: tuple[type, ...]) -> None:
    assert getattr(errors, name).__bases__ == bases
