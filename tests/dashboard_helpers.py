"""Helpers of the dashboard's browser and AppTest tests: read metrics, screenshots, values.

Starting the dashboard on a free port and driving it with headless Chromium is
:mod:`browser_helpers` (shared with the dashboard's benchmarks); its names are imported here.
"""

from __future__ import annotations

import json
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
    """The displayed value of the ``st.metric`` (or live metric, dashboard/live_alpha.py)
    whose label is ``label``."""
    live = page.locator('[data-testid="s3kgLiveMetric"]').filter(
        has=page.locator(".label", has_text=label)
    )
    if live.count():
        return str(live.locator(".value").first.inner_text()).strip()
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


def live_blocks(at: Any) -> dict[str, dict[str, Any]]:
    """The live blocks (dashboard/live_alpha.py) an AppTest page mounted: key -> payload.

    The key is the one the page gave (``live.metrics``, ``leaderboard.demo``)."""
    out = {}
    for el in at.get("bidi_component"):
        out[str(el.proto.id).split("-", 2)[-1]] = json.loads(el.proto.json)
    return out


def _server_cell(c: dict[str, Any], at: int) -> Any:
    """A live cell's value at the server's stop: a number, an interval's bounds, or a text."""
    if "r" in c:
        return tuple(c["r"][at] if isinstance(c["r"][0], list) else c["r"])
    if "v" in c:
        return c["v"][at] if isinstance(c["v"], list) else c["v"]
    return c["t"][at] if isinstance(c["t"], list) else c["t"]


def app_metric(at: Any, label: str) -> str:
    """The value of the metric labelled ``label`` on an AppTest page (``st.metric`` or a live
    metric, formatted as the browser shows it at the server's alpha)."""
    for m in at.metric:
        if m.label == label:
            return str(m.value)
    for block in live_blocks(at).values():
        for item in block.get("items", []) if block["kind"] == "metrics" else []:
            if item["label"] == label:
                value = _server_cell(item["cell"], block["at"])
                return f"{value:.{item['cell']['d']}f}" if "v" in item["cell"] else str(value)
    raise LookupError(f"no metric labelled {label!r}")


def app_metrics(at: Any, key: str) -> dict[str, str]:
    """The live metrics block mounted with ``key``, at the server's alpha: label -> value, as
    the browser shows them (``<label> delta`` -> the line under a value that has one)."""
    block = live_blocks(at)[key]
    k, out = block["at"], {}
    for item in block["items"]:
        c = item["cell"]
        value = _server_cell(c, k)
        out[item["label"]] = f"{value:.{c['d']}f}" if "v" in c else str(value)
        if "delta" in item:
            out[f"{item['label']} delta"] = str(_server_cell(item["delta"], k))
    return out


def live_note(at: Any, key: str) -> str | None:
    """The text of the live note mounted with ``key``, at the server's alpha."""
    block = live_blocks(at)[key]
    text = block["texts"][block["at"]]
    return None if text is None else str(text)


def live_table(at: Any, key: str) -> Any:
    """The live table mounted with ``key`` at the server's alpha: a DataFrame in its order,
    one column per key (numbers as numbers, an interval as its bounds, the rest as text) and
    ``<key>_title`` for a cell's tooltip."""
    import pandas as pd

    block = live_blocks(at)[key]
    k = block["at"]
    rows = sorted(block["rows"], key=lambda r: (r["order"][k], r["id"]))
    return pd.DataFrame(
        [
            {
                "run_id": r["id"],
                **{c: _server_cell(cell, k) for c, cell in r["cells"].items()},
                **{
                    f"{c}_title": cell["title"] for c, cell in r["cells"].items() if "title" in cell
                },
            }
            for r in rows
        ]
    )


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
    """Wait until no background TAU explanation (a ``tau-prefetch``, ``tau-run`` or
    ``tau-grid`` job) runs."""
    from dashboard.data import background

    deadline = time.monotonic() + timeout
    groups = ("tau-prefetch", "tau-run", "tau-grid")
    for job in [j for g in groups for j in background.jobs(g)]:
        job.thread.join(timeout=max(0.0, deadline - time.monotonic()))
