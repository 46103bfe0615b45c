"""``s3kg_core.resources``: files inside the installed packages."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from s3kg_core.errors import InstallError
from s3kg_core.resources import package_path


def test_the_demo_the_app_and_vis_network_are_found() -> None:
    assert package_path("s3kg_core", "demo_data", "answers.jsonl").is_file()
    assert package_path("dashboard", "app.py").is_file()
    assert package_path("dashboard", "pages", "0_Overview.py").is_file()
    vis = package_path("pyvis", "templates", "lib", "vis-9.1.2", "vis-network.min.js")
    assert vis.stat().st_size > 100_000


def test_a_package_inside_a_zip_is_refused_with_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "zipped.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("zipped_pkg_for_test/__init__.py", "")
        zf.writestr("zipped_pkg_for_test/data.json", "{}")
    monkeypatch.syspath_prepend(str(archive))
    try:
        with pytest.raises(InstallError, match="inside an archive"):
            package_path("zipped_pkg_for_test", "data.json")
    finally:
        sys.modules.pop("zipped_pkg_for_test", None)


def test_a_missing_package_is_named() -> None:
    with pytest.raises(InstallError, match="no_such_pkg_xyz is not installed"):
        package_path("no_such_pkg_xyz")
