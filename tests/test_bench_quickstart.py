"""bench.speed.bench_quickstart: the README's own-data block, read from the README and run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.speed.bench_quickstart import SECTION, main, quickstart_lines

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_block_is_found_and_ends_with_the_dashboard():
    lines = quickstart_lines((REPO / "README.md").read_text(encoding="utf-8"))
    assert lines[0].startswith("s3kg import pubmedqa") and "--limit 40" in lines[0]
    assert any(line.startswith("s3kg collect") and "--local smollm2" in line for line in lines)
    assert lines[-1].startswith("s3kg dashboard")
    assert all("#" not in line for line in lines)  # the times after each line are cut


def test_only_the_first_block_of_the_section_is_read_and_comment_lines_are_skipped():
    text = (
        "## Quick start 1\n```bash\ns3kg demo\n```\n"
        f"{SECTION}: mine\n\n```bash\n# a note\ns3kg a --x 'b c'   # 3 s\n\ns3kg b\n```\n"
        "```bash\ns3kg later\n```\n"
    )
    assert quickstart_lines(text) == ["s3kg a --x 'b c'", "s3kg b"]


def test_a_readme_without_the_section_is_refused():
    with pytest.raises(ValueError, match="Quick start 2"):
        quickstart_lines("## Quick start 1\n```bash\ns3kg demo\n```\n")


def _readme(tmp_path: Path, block: str) -> Path:
    path = tmp_path / "README.md"
    path.write_text(f"{SECTION}: yours\n\n```bash\n{block}```\n", encoding="utf-8")
    return path


def test_the_lines_run_in_a_fresh_folder_and_are_timed_and_the_dashboard_is_not(tmp_path, capsys):
    readme = _readme(
        tmp_path,
        "s3kg --version   # 1 s\ns3kg llm --help\ns3kg dashboard --db r.duckdb   # serves\n",
    )
    out = tmp_path / "qs.json"
    code = main(["--readme", str(readme), "--data-dir", str(tmp_path), "--json", str(out)])
    assert code == 0
    figures = json.loads(out.read_text(encoding="utf-8"))["figures"]
    assert [r["line"] for r in figures["lines"]] == ["s3kg --version", "s3kg llm --help"]
    assert all(r["exit"] == 0 and r["seconds"] >= 0 for r in figures["lines"])
    assert figures["not_timed"] == ["s3kg dashboard --db r.duckdb"]
    assert figures["cache"] == "fresh"
    assert "total" in capsys.readouterr().out


def test_a_failing_line_stops_the_run_with_exit_1(tmp_path, capsys):
    readme = _readme(tmp_path, "s3kg no-such-command\ns3kg --version\n")
    assert main(["--readme", str(readme), "--data-dir", str(tmp_path)]) == 1
    assert "s3kg --version" not in capsys.readouterr().out
