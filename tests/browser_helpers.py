"""Start the Streamlit dashboard on a free port and drive it with headless Chromium.

The harness of the dashboard's browser tests (``tests/dashboard_helpers.py`` re-exports it) and
of its speed benchmarks (``bench/speed/bench_dashboard.py``, ``bench_explorer.py``,
``bench_first_start.py``, ...), which import it as ``tests.browser_helpers`` when run from the
repository root. Playwright never downloads a browser here: it launches the system Chromium
(``/usr/bin/chromium`` unless ``$S3KG_CHROMIUM`` names another), and callers skip when there is
none. Also the Annotate page's keyboard steps (:func:`focused_pair`, :func:`press_for_next_pair`).
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "APP_IDLE",
    "CHROMIUM",
    "REPO",
    "STATUS_WIDGET",
    "Server",
    "chromium",
    "focused_pair",
    "free_port",
    "new_context",
    "press_for_next_pair",
    "streamlit_server",
    "wait_for_pair",
    "wait_idle",
]

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("S3KG_CHROMIUM", "/usr/bin/chromium"))

# Streamlit marks its root element with the script state; "notRunning" once a run has finished.
APP_IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
STATUS_WIDGET = '[data-testid="stStatusWidget"]'
_PAIR = re.compile(r"^Pair (\d+) of (\d+)$")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    """A running ``streamlit run app.py``: its base URL, process and log file."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    started: float

    def log_tail(self, chars: int = 4000) -> str:
        """The end of the server's combined stdout and stderr."""
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return int(resp.status) == 200
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def streamlit_server(
    db: Path,
    log: Path,
    *,
    timeout: float = 120.0,
    extra_env: dict[str, str] | None = None,
    first_start: bool = False,
) -> Iterator[Server]:
    """Run the dashboard on ``db`` (``S3KG_DB``) until the block ends, then kill its group.

    Yields once ``/_stcore/health`` answers 200. ``db`` must exist, or the dashboard would build
    the demo database; ``first_start=True`` asks for exactly that (``db`` must not exist).
    """
    if first_start and db.exists():
        raise FileExistsError(f"{db} exists; a first start builds a new demo database")
    if not first_start and not db.exists():
        raise FileNotFoundError(f"{db} does not exist; the dashboard would build the demo DB")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "S3KG_DB": str(db),
        "PYTHONPATH": str(REPO),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        # No file watcher: the server runs one snapshot of the code (edits made while it runs
        # do not rerun pages), and a busy tree cannot overflow inotify.
        "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none",
        "STREAMLIT_SERVER_RUN_ON_SAVE": "false",
        **(extra_env or {}),
    }
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Server(url=url, proc=proc, log=log, started=started)
    try:
        deadline = time.monotonic() + timeout
        while not _healthy(url):
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.log_tail()}")
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"streamlit not healthy after {timeout:g} s:\n{server.log_tail()}"
                )
            time.sleep(0.25)
        yield server
    finally:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server's process group: TERM, then KILL after a grace period."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


# CSS animations run to their end at once (what Playwright's screenshots do with
# ``animations="disabled"``): a spinner or Streamlit's running indicator otherwise repaints the
# page 60 times a second for as long as a test waits (0.7 CPU-s of Chromium per 10 s of a
# spinner, nothing with this style), on a machine whose cores the other test processes need.
# End events still fire and every element shows in its final style; transitions are untouched.
_STILL_ANIMATIONS = """
(() => {
  const css = '*, *::before, *::after { animation-duration: 0s !important; '
    + 'animation-delay: 0s !important; animation-iteration-count: 1 !important; }';
  const add = () => {
    const style = document.createElement('style');
    style.textContent = css;
    (document.head || document.documentElement).appendChild(style);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', add);
  else add();
})();
"""


def new_context(browser: Any, viewport: tuple[int, int], *, still: bool = True) -> Any:
    """A new browser context (a fresh session) of ``viewport``; ``still``: CSS animations are
    run to their end at once in every frame of it (a benchmark of what a user waits for may
    keep them)."""
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    if still:
        context.add_init_script(_STILL_ANIMATIONS)
    return context


@contextmanager
def chromium(viewport: tuple[int, int] = (1400, 1000), *, still: bool = True) -> Iterator[Any]:
    """A fresh page in headless system Chromium (never a downloaded browser); ``still``: see
    :func:`new_context`."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        raise FileNotFoundError(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            yield new_context(browser, viewport, still=still).new_page()
        finally:
            browser.close()


def wait_idle(page: Any, timeout_ms: float = 120_000, settle_ms: float = 750) -> None:
    """Wait until Streamlit has finished running the script and the page stays idle.

    Idle means: the app view is there, the app's script state is ``notRunning``, and the status
    widget ("Running...") is gone, all unchanged for ``settle_ms``.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout_ms)
    quiet_since: float | None = None
    while True:
        idle = page.locator(APP_IDLE).count() > 0 and not page.locator(STATUS_WIDGET).is_visible()
        now = time.monotonic()
        if idle:
            quiet_since = quiet_since or now
            if (now - quiet_since) * 1000 >= settle_ms:
                return
        else:
            quiet_since = None
        if now > deadline:
            state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
            raise TimeoutError(f"Streamlit still busy after {timeout_ms:g} ms (state {state!r})")
        page.wait_for_timeout(100)


def focused_pair(page: Any) -> tuple[int, int] | None:
    """The focused pair the Annotate page shows: ``(k, n)`` of "Pair k of n" (``None``: none)."""
    found = page.locator('[data-testid="stMain"] strong').filter(has_text=_PAIR)
    if not found.count():
        return None
    match = _PAIR.match(found.first.inner_text().strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def wait_for_pair(page: Any, expected: int, timeout_ms: float = 60_000) -> None:
    """Wait until the Annotate page focuses pair ``expected``."""
    page.locator('[data-testid="stMain"] strong').filter(
        has_text=re.compile(rf"^Pair {expected} of \d+$")
    ).first.wait_for(timeout=timeout_ms)


def press_for_next_pair(page: Any, key: str, expected: int, timeout_ms: float = 60_000) -> float:
    """Press ``key`` and wait until pair ``expected`` is focused; the seconds it took."""
    start = time.perf_counter()
    page.keyboard.press(key)
    wait_for_pair(page, expected, timeout_ms)
    return time.perf_counter() - start
