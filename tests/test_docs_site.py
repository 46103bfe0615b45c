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
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
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


@contextmanager
def _serve(folder: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving ``folder`` from a thread while the block runs."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    """The built site, served locally for the module."""
    with _serve(site) as url:
        yield url


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@dataclass
class Visit:
    """What loading pages in Chromium asked for: requests to other hosts, failures, pictures."""

    outside: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    broken_images: list[str] = field(default_factory=list)


def _visit(page: Any, base: str, names: list[str]) -> Visit:
    """Open ``base/name`` for every name, recording every request to a host but ``base``'s."""
    local = urlsplit(base).netloc
    seen = Visit()

    def note(request: Any) -> None:
        url = urlsplit(request.url)
        if url.scheme not in ("data", "blob", "about") and url.netloc != local:
            seen.outside.append(url.geturl())

    page.on("request", note)

    def failed(request: Any) -> None:
        # a request cut short by the next page.goto (favicon, search worker) is not a failure
        if "ERR_ABORTED" not in str(request.failure):
            seen.failed.append(f"{request.url} ({request.failure})")

    page.on("requestfailed", failed)
    page.on(
        "response",
        lambda r: seen.failed.append(f"{r.url} ({r.status})") if r.status >= 400 else None,
    )
    for name in names:
        response = page.goto(f"{base}/{name}", wait_until="load")
        assert response is not None and response.ok, f"{name}: {response}"
        seen.broken_images += [
            f"{name}: {src}"
            for src in page.eval_on_selector_all(
                "img",
                "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0))"
                ".map(i => i.getAttribute('src'))",
            )
        ]
    return seen


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
    # Sphinx roles of the docstrings are code spans (scripts/griffe_rst.py); the CLI's
    # defaults are click's own text, not mkdocs-click's table of click 8.5's sentinels
    for page in _pages(site):
        html = (site / page).read_text(encoding="utf-8")
        assert ":class:`" not in html and ":func:`" not in html, page
        assert "Sentinel.UNSET" not in html, page


def test_the_evidence_tables_are_rendered(site):
    papers = (site / "papers.html").read_text(encoding="utf-8")
    assert "<table>" in papers and "evidence/cus_gap.json" in papers


SEARCH_MS = 120_000
"""How long the search may take to show a result: Material builds its index in a Web Worker
when the box opens, which took over 30 s on a 2-core machine running four test processes."""

_INDEX_READ = """() => {
  const meta = document.querySelector('.md-search-result__meta');
  return meta !== null && !/Initializing search/.test(meta.textContent);
}"""
"""Material's search has read its index: its line no longer says "Initializing search"."""


def _search(page: Any, query: str) -> Any:
    """Open the search box, type ``query`` once the index is read, and wait for a result.

    Regression: a query typed before Material's Web Worker has read the index is never run, so
    the served site's check waited its whole 120 s for a result under load and failed; the
    result locator is returned (possibly empty, for the caller's message).
    """
    page.keyboard.press("s")  # Material's shortcut opens the search box
    page.wait_for_function(_INDEX_READ, timeout=SEARCH_MS)
    page.locator("input.md-search__input").press_sequentially(query)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(timeout=SEARCH_MS)
    return results


needs_chromium = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"no Chromium at {CHROMIUM}")


@needs_chromium
def test_every_page_loads_offline_in_chromium(site, served):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with chromium(viewport=(1280, 800)) as page:
        seen = _visit(page, served, _pages(site))
        # the search works from the local index, in the browser
        page.goto(f"{served}/index.html", wait_until="load")
        results = _search(page, "signature")
        assert results.count() > 0, page.locator(".md-search-result").inner_text()
    assert not seen.outside, f"requests to other hosts: {sorted(set(seen.outside))}"
    assert not seen.failed, f"failed requests: {sorted(set(seen.failed))}"
    assert not seen.broken_images, f"pictures that did not load: {seen.broken_images}"


@needs_chromium
def test_the_search_works_from_file_without_a_server(site):
    # issue 43: site/index.html opened from disk searched nothing (no search/search_index.js,
    # and the search's Web Worker cannot start from file://); the offline plugin writes the
    # index as a script and the vendored iframe-worker shim runs the worker, with no CDN
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    assert (site / "search" / "search_index.js").is_file()
    outside: list[str] = []
    with chromium(viewport=(1280, 800)) as page:
        page.on(
            "request",
            lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None,
        )
        page.goto((site / "api" / "scoring.html").as_uri(), wait_until="load")
        results = _search(page, "signature")
        assert results.count() > 0, page.locator(".md-search-result").inner_text()
    assert not outside, f"requests that are not files: {sorted(set(outside))}"


@needs_chromium
def test_the_check_sees_a_web_font_and_a_missing_picture(tmp_path):
    # The check above can fail: a page that asks for a web font (what Material does without
    # `font: false`) and a picture that is not there are both caught.
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    (tmp_path / "page.html").write_text(
        '<html><head><link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'
        '</head><body><img src="img/none.png"></body></html>',
        encoding="utf-8",
    )
    with _serve(tmp_path) as base, chromium(viewport=(800, 600)) as page:
        seen = _visit(page, base, ["page.html"])
    assert [urlsplit(u).netloc for u in seen.outside] == ["fonts.googleapis.com"]
    assert seen.broken_images == ["page.html: img/none.png"]
    assert [f.rsplit("/", 1)[1] for f in seen.failed if "none.png" in f] == ["none.png (404)"]
