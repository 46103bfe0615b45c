"""Record the offline extractor's KGs of every demo text in ``data/demo/kgs.jsonl``; commit it.

The demo build (:func:`s3kg_core.demo.build_demo`) takes its KGs from this file while its
fingerprint (the extractor's name, a digest of ``s3kg_core/extract/offline.py`` and the spaCy
version) is the live extractor's, so the dashboard's first start loads no spaCy. The KGs are
exactly what the extractor gives (``tests/test_demo.py`` checks that a build from this file and
a build that extracts store identical KGs and scores). Run it again whenever the offline
extractor, spaCy or the demo texts change; a stale file is ignored (the build extracts).

Usage::

    python scripts/make_demo_kgs.py [--out data/demo/kgs.jsonl]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv: list[str] | None = None) -> int:
    """Extract every demo text with the offline extractor and write the recorded-KG file."""
    from s3kg_core.demo import DEMO_DIR, KGS_FILE, demo_texts
    from s3kg_core.extract.factory import make_extractor
    from s3kg_core.extract.recorded import fingerprint, record_kgs

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-dir", type=Path, default=DEMO_DIR)
    parser.add_argument("--out", type=Path, default=None, help=f"default: DEMO_DIR/{KGS_FILE}")
    args = parser.parse_args(argv)
    out = args.out or args.demo_dir / KGS_FILE
    started = time.perf_counter()
    extractor = make_extractor("offline")
    n = record_kgs(extractor, demo_texts(args.demo_dir), out)
    print(
        f"recorded {n} texts' KGs by {fingerprint(extractor)} in {out} "
        f"({time.perf_counter() - started:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
