"""The built wheel, installed in a fresh virtual environment, works outside the repository.

The wheel is built as a user's ``python -m build`` builds it (sdist first, the wheel from the
unpacked sdist, so MANIFEST.in and the package data are both checked). The fresh environment
gets exactly the distributions that the wheel's own metadata asks for (``Requires-Dist`` with
the ``dashboard`` extra, followed transitively), linked from the shared environment, where the
lock installed them: no network, a few seconds, and a dependency missing from pyproject.toml is
missing there too (its import fails). ``pip check`` then proves the set consistent. Every command
runs from a folder outside the repository, without ``PYTHONPATH``: only the installed package is
importable.

About 100 s on two busy cores (the build ~5 s, the demo's first start most of the rest), so the
module is marked slow; ``.ci/run`` runs it by itself (``make test-wheel``).
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from email.parser import Parser
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import CHROMIUM, free_port
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
EXTRAS = ("dashboard",)
SITE = Path(sysconfig.get_paths()["purelib"])


def _requirements(dist_meta: Any, extras: tuple[str, ...]) -> list[Requirement]:
    """The requirements of a distribution's metadata that apply with ``extras`` requested."""
    wanted = []
    for text in dist_meta.get_all("Requires-Dist") or []:
        req = Requirement(text)
        if req.marker is None or any(
            req.marker.evaluate({"extra": extra}) for extra in ("", *extras)
        ):
            wanted.append(req)
    return wanted


def dependency_closure(wheel: Path, extras: tuple[str, ...]) -> dict[str, metadata.Distribution]:
    """Every distribution the wheel needs (with ``extras``), from this environment's installs.

    Fails the test if one is not installed here or its version does not meet a requirement.
    """
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        root = Parser().parsestr(zf.read(name).decode("utf-8"))
    installed = {canonicalize_name(d.metadata["Name"]): d for d in metadata.distributions()}
    needed: dict[str, metadata.Distribution] = {}
    todo = [(req, "the wheel") for req in _requirements(root, extras)]
    while todo:
        req, why = todo.pop()
        key = canonicalize_name(req.name)
        dist = installed.get(key)
        if dist is None:
            pytest.fail(f"{req} (needed by {why}) is not installed in the test environment")
        if not req.specifier.contains(dist.version, prereleases=True):
            pytest.fail(f"{req} (needed by {why}): {dist.version} is installed")
        if key in needed and not req.extras:
            continue
        first = key not in needed
        needed[key] = dist
        if first or req.extras:
            todo.extend((r, key) for r in _requirements(dist.metadata, tuple(req.extras)))
    return needed


def link_distributions(dists: dict[str, metadata.Distribution], site: Path) -> int:
    """Link each distribution's installed files (its RECORD) into ``site``; return links made.

    A top-level folder that one distribution owns is linked whole; one that several share (a
    namespace package) is made here and filled the same way, one level down.
    """
    owners: dict[tuple[str, ...], set[str]] = {}
    for key, dist in dists.items():
        if dist.files is None:
            pytest.fail(f"{key} has no RECORD: cannot tell its files")
        for file in dist.files:
            parts = Path(file).parts
            if not parts or parts[0] in ("..", "__pycache__") or parts[-1].endswith(".pyc"):
                continue
            for depth in range(1, len(parts) + 1):
                owners.setdefault(parts[:depth], set()).add(key)
    made = 0
    for parts, keys in sorted(owners.items()):
        parent = parts[:-1]
        if parent and len(owners[parent]) == 1:
            continue  # inside a folder already linked whole
        target = site.joinpath(*parts)
        source = SITE.joinpath(*parts)
        if len(keys) > 1 and source.is_dir():
            target.mkdir(exist_ok=True)
        elif not target.exists() and (source.exists() or source.is_symlink()):
            target.symlink_to(source)
            made += 1
    return made


@dataclass
class Installed:
    """The fresh environment with the wheel in it, and a working folder outside the repo."""

    venv: Path
    work: Path
    env: dict[str, str]
    wheel: Path

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """Run a command of the environment's ``bin`` in the working folder."""
        return subprocess.run(
            [str(self.venv / "bin" / args[0]), *args[1:]],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    base = tmp_path_factory.mktemp("wheel")
    assert not base.resolve().is_relative_to(REPO)
    dist = base / "dist"
    # no PYTHONPATH: the repository (and the egg-info a build leaves there) must not be seen
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTHON", "S3KG_", "VIRTUAL_ENV", "STREAMLIT_"))
    }
    env |= {"HOME": str(base / "home"), "S3KG_CACHE_DIR": str(base / "cache")}
    build = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = dist.glob("*.whl")
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = Path(
        subprocess.run(
            [
                str(venv / "bin" / "python"),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    dists = dependency_closure(wheel, EXTRAS)
    assert {"duckdb", "torch", "streamlit"} <= set(dists), sorted(dists)
    assert "pytest" not in dists and "grakel" not in dists, "dev tools leaked into the extras"
    link_distributions(dists, site)
    pip = [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python")]
    subprocess.run(
        [*pip, "install", "--quiet", "--no-deps", "--no-index", str(wheel)],
        check=True,
        timeout=120,
        env=env,
    )
    check = subprocess.run([*pip, "check"], capture_output=True, text=True, check=False, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    work = base / "work"
    work.mkdir()
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    yield Installed(venv, work, env, wheel)


def test_the_wheel_carries_the_demo_the_app_and_its_pages() -> None:
    """The repository's app.py, pages/ and data/demo/ are what the wheel carries (no copies)."""
    # the links that put them in the packages, so the build below copies the real files
    assert (REPO / "dashboard" / "app.py").resolve() == REPO / "app.py"
    assert (REPO / "dashboard" / "pages").resolve() == REPO / "pages"
    assert (REPO / "s3kg_core" / "demo_data").resolve() == REPO / "data" / "demo"


def test_installed_wheel_runs_help_pairs_score_and_the_demo_dashboard(
    installed: Installed,
) -> None:
    with zipfile.ZipFile(installed.wheel) as zf:
        names = set(zf.namelist())
    for page in (REPO / "pages").glob("*.py"):
        assert f"dashboard/pages/{page.name}" in names
    for demo in (REPO / "data" / "demo").iterdir():
        assert f"s3kg_core/demo_data/{demo.name}" in names
    assert {"dashboard/app.py", "dashboard/assets/linked_graphs.js"} <= names

    where = installed.run(
        "python", "-c", "import s3kg_core, dashboard; print(s3kg_core.__file__, dashboard.__file__)"
    )
    assert where.returncode == 0, where.stderr
    assert str(REPO) not in where.stdout and str(installed.venv) in where.stdout

    helped = installed.run("s3kg", "--help")
    assert helped.returncode == 0, helped.stderr
    assert "dashboard" in helped.stdout and "pairs" in helped.stdout

    pairs = installed.work / "pairs.csv"
    pairs.write_text(
        "id,kg_1,kg_2\n"
        'p1,"[[""cat"",""chase"",""mouse""]]","[[""cats"",""chase"",""mice""]]"\n'
        'p2,"[[""paris"",""capital of"",""france""]]","[]"\n',
        encoding="utf-8",
    )
    scored = installed.run("s3kg", "pairs", "score", "pairs.csv", "--output", "out.csv")
    assert scored.returncode == 0, scored.stderr[-3000:]
    with (installed.work / "out.csv").open(encoding="utf-8") as fh:
        rows = {row["id"]: row for row in csv.DictReader(fh)}
    assert rows["p1"]["status"] == "ok" and float(rows["p1"]["s3kg"]) > 0.9, rows
    assert rows["p2"]["status"] == "empty_kg_2" and float(rows["p2"]["s3kg"]) == 0.0, rows

    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}: the dashboard half is not checked")
    port = free_port()
    log = installed.work / "dashboard.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(installed.venv / "bin" / "s3kg"), "dashboard", "--demo", "--port", str(port)],
            cwd=installed.work,
            env=installed.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_for_overview(f"http://127.0.0.1:{port}", proc, log)
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    built = Path(installed.env["S3KG_CACHE_DIR"]) / "demo.duckdb"
    assert built.is_file(), log.read_text(errors="replace")[-3000:]
    assert not (installed.work / "data").exists(), "--demo wrote into the working folder"


def _wait_for_overview(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Open the dashboard in headless Chromium until the Overview shows the demo's numbers."""
    from playwright.sync_api import sync_playwright

    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            pytest.fail(f"s3kg dashboard exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"no server after 120 s:\n{log.read_text()[-3000:]}")
        time.sleep(0.25)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page()
            foreign: list[str] = []
            page.on(
                "request",
                lambda r: (
                    None
                    # the page's own blob: URLs (a custom component's script) are local too
                    if r.url.startswith((url, "data:", f"blob:{url}"))
                    else foreign.append(r.url)
                ),
            )
            page.goto(url, timeout=60_000)
            page.get_by_text("Mean CUS", exact=True).wait_for(timeout=150_000)
            assert not foreign, foreign
        finally:
            browser.close()
