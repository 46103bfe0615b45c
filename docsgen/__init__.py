"""The tables the docs show, each rendered from files under ``evidence/``.

``scripts/render_evidence.py`` writes each view's output between its markers and checks that
the docs hold what it would write. The views live by subject in :mod:`.quality`,
:mod:`.checkers`, :mod:`.direction` and :mod:`.speed`; importing this package registers them
all in :data:`VIEWS`.
"""

from __future__ import annotations

from . import checkers, direction, quality, speed
from .base import SCANNED, SETS, VIEWS, View

__all__ = ["SCANNED", "SETS", "VIEWS", "View", "checkers", "direction", "quality", "speed"]
