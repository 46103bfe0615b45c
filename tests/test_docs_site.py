"""The docs site (mkdocs.yml, docs/): built with ``--strict`` once, then read in headless Chromium.

The build is what ``make docs`` runs, into a temporary folder. Every page is opened from a local
HTTP server and must load with no request to any other host (no web fonts, CDN scripts or
analytics), its pictures drawn, and the site search must answer from the local index.
"""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from dashboard_helpers import CHROMIUM, REPO, chromium

BUILD_TIMEOUT_S = 300


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once for the module exactly as ``make docs`` builds it (strict)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed")
    out = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"mkdocs build --strict failed:\n{proc.stderr[-4000:]}"
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving the built site (a thread, stopped after the module)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        pass


def _pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def test_the_site_has_every_page(site):
    pages = set(_pages(site))
    expected = {
        "index.html",
        "getting-started.html",
        "own-data.html",
        "scores.html",
        "dashboard.html",
        "papers.html",
        "evidence.html",
        "cli.html",
        "api/scoring.html",
        "api/stages.html",
        "api/grapheval.html",
        "contributing.html",
        "changelog.html",
    }
    assert expected <= pages, f"missing pages: {sorted(expected - pages)}"
    # the CLI reference is generated from click: every command group has its section
    cli = (site / "cli.html").read_text(encoding="utf-8")
    for command in ("s3kg-pairs-score", "s3kg-score", "s3kg-tau", "s3kg-dashboard", "s3kg-llm"):
        assert f'id="{command}"' in cli, command
    # the API pages are generated from the docstrings
    api = (site / "api" / "scoring.html").read_text(encoding="utf-8")
    assert "KGScorer" in api and "score_pairs" in api and "Contextual Understanding" in api


def test_the_evidence_tables_are_rendered(site):
    papers = (site / "papers.html").read_text(encoding="utf-8")
    assert "<table>" in papers and "evidence/cus_gap.json" in papers


@pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}")
def test_every_page_loads_offline_in_chromium(site, served):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    local = urlsplit(served).netloc
    outside: list[str] = []
    failed: list[str] = []
    broken_images: list[str] = []
    with chromium(viewport=(1280, 800)) as page:

        def note(request: object) -> None:
            url = urlsplit(request.url)  # type: ignore[attr-defined]
            if url.scheme not in ("data", "blob", "about") and url.netloc != local:
                outside.append(url.geturl())

        page.on("request", note)
        page.on("requestfailed", lambda r: failed.append(r.url))
        for name in _pages(site):
            response = page.goto(f"{served}/{name}", wait_until="load")
            assert response is not None and response.ok, f"{name}: {response}"
            broken_images += [
                f"{name}: {src}"
                for src in page.eval_on_selector_all(
                    "img",
                    "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0))"
                    ".map(i => i.getAttribute('src'))",
                )
            ]
        # the search works from the local index, in the browser
        page.goto(f"{served}/index.html", wait_until="load")
        page.keyboard.press("s")  # Material's shortcut opens the search box
        page.locator("input.md-search__input").fill("signature")
        results = page.locator(".md-search-result__item")
        results.first.wait_for(timeout=30_000)
        assert results.count() > 0
    assert not outside, f"requests to other hosts: {sorted(set(outside))}"
    assert not failed, f"failed requests: {sorted(set(failed))}"
    assert not broken_images, f"pictures that did not load: {broken_images}"
