"""Copy the dashboard screenshots the docs show from the browser tests' artefacts, made smaller.

``tests/test_dashboard_browser.py`` saves screenshots of every page at 1440x900 under
``test-artefacts/dashboard/`` (``$S3KG_TEST_ARTEFACTS``). The docs show the first screen of a
few of them (:data:`PICTURES`), cut to the first 900 pixels without the sidebar, scaled to
:data:`WIDTH` and written as 128-colour PNGs into ``docs/img/`` (about 50-100 KB each).

Usage::

    python -m pytest tests/test_dashboard_browser.py   # makes the artefacts
    python scripts/docs_screenshots.py                 # refreshes docs/img/
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from PIL import Image

__all__ = ["PICTURES", "SIDEBAR", "WIDTH", "shrink"]

REPO = Path(__file__).resolve().parents[1]
WIDTH = 1080
HEIGHT = 900  # the first screen at 1440x900
SIDEBAR = 300
"""Pixels left out on the left: the sidebar (at 1440 px), which names the browser test's temporary
database file; the docs show the page itself."""
PICTURES = {
    "overview.png": "overview_leaderboard_1440x900.png",
    "sample-explorer.png": "explorer_1440x900.png",
    "failure-analysis.png": "failure_analysis_demo_first_screen.png",
    "annotate.png": "annotate_view_1440x900.png",
    "benchmarks.png": "benchmarks_demo_first_screen.png",
    "factuality.png": "factuality_demo_first_screen.png",
    "run-comparison.png": "run_comparison_first_screen.png",
    "hallucinations.png": "hallucinations_first_screen.png",
}
"""docs/img/NAME -> the browser tests' screenshot it is made from."""


def shrink(
    source: Path, target: Path, width: int = WIDTH, height: int = HEIGHT, left: int = SIDEBAR
) -> Path:
    """``source``'s first ``height`` pixels right of ``left``, scaled to ``width``, 128 colours.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> Image.new("RGB", (1440, 2000), "white").save(folder / "big.png")
    >>> Image.open(shrink(folder / "big.png", folder / "small.png")).size
    (1080, 853)
    """
    image = Image.open(source).convert("RGB")
    w, h = image.size
    image = image.crop((left, 0, w, min(h, height)))
    image = image.resize(
        (width, round(image.height * width / (w - left))), Image.Resampling.LANCZOS
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(target, optimize=True)
    return target


def main(argv: list[str] | None = None) -> int:
    """Refresh docs/img/ from the artefacts; 1 when one of them is missing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Path(os.environ.get("S3KG_TEST_ARTEFACTS", REPO / "test-artefacts")) / "dashboard"
    parser.add_argument("--artefacts", type=Path, default=default, help="the screenshots' folder")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "img")
    args = parser.parse_args(argv)
    missing = [s for s in PICTURES.values() if not (args.artefacts / s).is_file()]
    if missing:
        print(f"not in {args.artefacts}: {', '.join(missing)} (run the browser tests)")
        return 1
    for name, source in PICTURES.items():
        out = shrink(args.artefacts / source, args.out / name)
        print(f"{out}: {out.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
