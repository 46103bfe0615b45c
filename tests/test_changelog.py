"""CHANGELOG.md keeps up with the package and scoring versions."""

from __future__ import annotations

import re
from pathlib import Path

from s3kg_core import SCORING_VERSION, __version__

CHANGELOG = Path(__file__).resolve().parents[1] / "CHANGELOG.md"


def releases() -> list[str]:
    text = CHANGELOG.read_text(encoding="utf-8")
    return re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)


def test_the_newest_release_is_the_package_version() -> None:
    names = releases()
    assert names[0] == "Unreleased"
    assert names[1] == __version__, (
        f"CHANGELOG.md's newest release is {names[1]}, not {__version__}"
    )


def test_the_scoring_version_is_listed_under_scores() -> None:
    assert f"Scoring version **{SCORING_VERSION}**" in CHANGELOG.read_text(encoding="utf-8")
