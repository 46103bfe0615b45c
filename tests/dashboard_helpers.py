"""Helpers of the dashboard's browser and AppTest tests: read metrics, screenshots, values.

Starting the dashboard on a free port and driving it with headless Chromium is
:mod:`browser_helpers` (shared with the dashboard's benchmarks); its names are imported here.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from browser_helpers import (  # noqa: F401 (the tests import them from here)
    APP_IDLE,
    CHROMIUM,
    STATUS_WIDGET,
    Server,
    chromium,
    free_port,
    new_context,
    streamlit_server,
    wait_idle,
)

REPO = Path(__file__).resolve().parents[1]
EXCEPTION = '[data-testid="stException"]'


def metric_value(page: Any, label: str) -> str:
    """The displayed value of the ``st.metric`` whose label is ``label``."""
    metric = page.locator('[data-testid="stMetric"]').filter(
        has=page.locator('[data-testid="stMetricLabel"]', has_text=label)
    )
    return str(metric.locator('[data-testid="stMetricValue"]').first.inner_text()).strip()


def screenshot(page: Any, path: Path) -> Path:
    """A screenshot of the whole page, including what Streamlit's inner scroller hides.

    Streamlit scrolls inside ``stMain``, not the document, so ``full_page=True`` alone stops at
    the viewport: the viewport is made as tall as the content for the shot, then restored.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size or {"width": 1400, "height": 1000}
    height = page.evaluate(
        "() => Math.max(...['stMain', 'stSidebarContent', 'stAppViewContainer'].map("
        'id => document.querySelector(`[data-testid="${id}"]`)?.scrollHeight || 0))'
    )
    tall = max(int(size["height"]), min(int(height) + 40, 12_000))
    if tall != size["height"]:
        page.set_viewport_size({"width": size["width"], "height": tall})
        page.wait_for_timeout(500)
    try:
        page.screenshot(path=str(path), full_page=True)
    finally:
        if tall != size["height"]:
            page.set_viewport_size(size)
    return path


def wait_for_value(page: Any, read: Any, expected: str, timeout_ms: float = 60_000) -> str:
    """Poll ``read()`` until it returns ``expected`` (or time runs out); return the last value."""
    deadline = time.monotonic() + timeout_ms / 1000
    value = read()
    while value != expected and time.monotonic() < deadline:
        page.wait_for_timeout(200)
        value = read()
    return str(value)


# -- streamlit.testing (AppTest) readers ---------------------------------------------------------


def app_metric(at: Any, label: str) -> str:
    """The value of the metric labelled ``label`` on an AppTest page."""
    return next(m.value for m in at.metric if m.label == label)


def app_frame_with(at: Any, *columns: str) -> Any:
    """The first dataframe an AppTest page shows with all these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def hold_tau(monkeypatch: Any) -> Any:
    """Make TAU's ``analyse_many`` wait until the returned event is set (60 s at most)."""
    import threading

    from s3kg_core.scoring.tau import TripletAnalyzer

    release = threading.Event()
    real = TripletAnalyzer.analyse_many

    def held(self: Any, pairs: Any) -> Any:
        release.wait(timeout=60)
        return real(self, pairs)

    monkeypatch.setattr(TripletAnalyzer, "analyse_many", held)
    return release


def prefetch_done(timeout: float = 120.0) -> None:
    """Wait until no background TAU explanation (a ``tau-prefetch`` or ``tau-run`` job) runs."""
    from dashboard.data import background

    deadline = time.monotonic() + timeout
    for job in [*background.jobs("tau-prefetch"), *background.jobs("tau-run")]:
        job.thread.join(timeout=max(0.0, deadline - time.monotonic()))
