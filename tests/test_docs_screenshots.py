"""scripts/docs_screenshots.py: the docs' pictures made from the browser tests' screenshots."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

from PIL import Image
from script_helpers import load_script

REPO = Path(__file__).resolve().parents[1]
shots = load_script("docs_screenshots")


def test_doctests():
    result = doctest.testmod(shots)
    assert result.attempted > 0 and result.failed == 0


def test_main_refreshes_every_picture_and_says_what_is_missing(tmp_path, capsys):
    artefacts, out = tmp_path / "dashboard", tmp_path / "img"
    artefacts.mkdir()
    sources = list(shots.PICTURES.values())
    for name in sources[1:]:
        Image.new("RGB", (1440, 900), "white").save(artefacts / name)
    assert shots.main(["--artefacts", str(artefacts), "--out", str(out)]) == 1
    assert sources[0] in capsys.readouterr().out and not out.exists()
    Image.new("RGB", (1440, 3000), "white").save(artefacts / sources[0])
    assert shots.main(["--artefacts", str(artefacts), "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(shots.PICTURES)
    assert {Image.open(p).size for p in out.iterdir()} == {(1080, 853)}


def test_the_pictures_leave_out_the_sidebar_and_its_temporary_database_path(tmp_path):
    """Regression (issue 43.10): the README's picture showed a pytest temporary path."""
    source = tmp_path / "page.png"
    image = Image.new("RGB", (1440, 900), "white")
    image.paste((255, 0, 0), (0, 0, shots.SIDEBAR, 900))  # the sidebar
    image.save(source)
    out = Image.open(shots.shrink(source, tmp_path / "small.png")).convert("RGB")
    reds = [c for c in out.getdata() if c[0] > 200 and c[1] < 80 and c[2] < 80]
    assert not reds


def test_the_docs_show_exactly_the_pictures_the_script_makes():
    shown = set()
    for page in (REPO / "docs").rglob("*.md"):
        shown |= set(re.findall(r"\]\(img/([\w.-]+)\)", page.read_text(encoding="utf-8")))
    committed = {p.name for p in (REPO / "docs" / "img").iterdir()}
    assert shown == committed == set(shots.PICTURES)
