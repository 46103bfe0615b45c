"""``s3kg_core.launch``: the command that serves the installed dashboard."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

from s3kg_core.errors import ConfigError, InstallError
from s3kg_core.launch import DEMO_DB_NAME, STREAMLIT_OPTIONS, dashboard_launch

REPO = Path(__file__).resolve().parents[1]


def _flat(table: dict[str, object], prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def test_the_options_are_those_of_the_repository_config() -> None:
    """An installed dashboard has no .streamlit/config.toml: the launch passes the same settings."""
    shipped = _flat(tomllib.loads((REPO / ".streamlit" / "config.toml").read_text("utf-8")))
    shipped.pop("server.folderWatchBlacklist")  # no repository folders to leave unwatched
    as_flags = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in shipped.items()}
    assert as_flags == STREAMLIT_OPTIONS


def test_the_command_serves_the_package_app_on_localhost(tmp_path: Path) -> None:
    launch = dashboard_launch(tmp_path / "runs.duckdb", port=8765)
    app = Path(launch.argv[4])
    assert app.name == "app.py" and app.is_file()
    assert app == (REPO / "app.py").resolve()  # in a checkout: the repository's own app
    assert "--server.address=127.0.0.1" in launch.argv and "--server.port=8765" in launch.argv
    assert "--browser.gatherUsageStats=false" in launch.argv
    assert launch.environment({"PATH": "/bin"}) == {
        "PATH": "/bin",
        "S3KG_DB": str(tmp_path / "runs.duckdb"),
    }


def test_demo_opens_the_cache_folder_and_default_the_configured_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("S3KG_DB", str(tmp_path / "mine.duckdb"))
    assert dashboard_launch(demo=True).db == tmp_path / "cache" / DEMO_DB_NAME
    assert dashboard_launch().db == tmp_path / "mine.duckdb"


def test_db_and_demo_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--db or --demo"):
        dashboard_launch(tmp_path / "x.duckdb", demo=True)


def test_without_streamlit_it_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "streamlit" else real(name, *a),
    )
    with pytest.raises(InstallError, match=r"s3kg-workbench\[dashboard\]"):
        dashboard_launch()
