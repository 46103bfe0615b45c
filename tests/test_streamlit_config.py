"""The shipped ``.streamlit/config.toml``: what it must keep, read as Streamlit reads it."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from streamlit import config

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / ".streamlit" / "config.toml"


@pytest.fixture()
def streamlit_options(monkeypatch: pytest.MonkeyPatch):
    """Streamlit's options as parsed from the repository's folder (as ``make run`` does)."""
    monkeypatch.chdir(REPO)
    config.get_config_options(force_reparse=True)
    yield config.get_option
    config.get_config_options(force_reparse=True)


def test_the_file_is_valid_toml_with_its_sections() -> None:
    parsed = tomllib.loads(CONFIG.read_text(encoding="utf-8"))
    assert set(parsed) >= {"browser", "server", "client", "runner"}


def test_no_usage_statistics_no_watching_of_the_venv(streamlit_options) -> None:
    assert streamlit_options("browser.gatherUsageStats") is False
    assert ".venv" in streamlit_options("server.folderWatchBlacklist")
    assert streamlit_options("client.toolbarMode") == "minimal"


def test_no_forced_full_collection_after_each_run(streamlit_options) -> None:
    # Regression (issue 16): Streamlit's default gc.collect(2) after every script run took
    # 200-450 ms with the dashboard's heap and held back the last deltas of every alpha step
    # (explorer p50 292 ms -> 124-133 ms without it, bench/speed/bench_first_start.py).
    assert streamlit_options("runner.postScriptGC") is False


def test_listens_on_this_machine_only(streamlit_options) -> None:
    # Regression (issue 28, item 9): Streamlit listened on every interface by default.
    assert streamlit_options("server.address") == "127.0.0.1"


def test_tables_export_no_unescaped_csv(streamlit_options) -> None:
    # Regression (issue 28, item 8): the tables' toolbar wrote cells such as `=2+5` raw; the
    # pages' own CSV buttons escape them (dashboard.widgets.csv_download).
    assert streamlit_options("client.disableDataExport") is True


def test_no_file_watcher(streamlit_options) -> None:
    # Regression (issue 33): the watcher registered inotify watches on the whole checkout despite
    # the blacklist (thousands of "Inotify queue overflowed" lines); a shipped dashboard needs none.
    assert streamlit_options("server.fileWatcherType") == "none"
