"""Tests of s3kg_core.cli.report: `s3kg report` writes one HTML file, refuses bad outputs and
bad runs with one line (the scored check database of store_helpers.build_check_store)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from s3kg_core.cli import cli


def _invoke(*args: str | Path):
    return CliRunner().invoke(cli, ["report", *(str(a) for a in args)])


def test_report_against_a_baseline_writes_one_html_file(check_store, tmp_path):
    out = tmp_path / "reports" / "worse.html"
    result = _invoke(
        "--db", check_store.path, "--run", "worse", "--baseline", "baseline", "--out", out,
        "--worst", "3", "--resamples", "999",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"wrote {out} (") and "3 answers shown" in result.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "s3kg check: FAILED: 3 of 4 gates" in page
    assert page.count('<div class="case"') == 3
    assert "worse (run 3) against baseline (run 1)" in page


def test_report_of_one_run_and_its_options(check_store, tmp_path):
    out = tmp_path / "steady.html"
    result = _invoke(
        "--db", check_store.path, "--run", "steady", "--out", out, "--worst", "0",
        "--alpha", "0.2", "--resamples", "999",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "s3kg check" not in page.split("<footer>")[0]  # no baseline, no gates
    assert "|alpha:0.2</code>" in page and page.count('<div class="case"') == 0


def test_out_is_never_the_database(check_store):
    before = Path(check_store.path).stat().st_mtime_ns
    result = _invoke("--db", check_store.path, "--run", "worse", "--out", check_store.path)
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [
        line for line in result.output.strip().splitlines() if line.startswith("Error: ")
    ]
    assert "is the database" in result.output
    assert Path(check_store.path).stat().st_mtime_ns == before


def test_bad_runs_and_databases_are_one_line_errors(check_store, tmp_path):
    out = tmp_path / "r.html"
    for args, message in (
        (["--db", check_store.path, "--run", "nope"], "Error: no run 'nope' (by id or name)"),
        (["--db", check_store.path, "--run", "twin"], "Error: run name 'twin' fits 2 runs"),
        (["--db", tmp_path / "none.duckdb", "--run", "1"], "Error: database"),
    ):
        result = _invoke(*args, "--out", out)
        assert result.exit_code == 1, result.output
        assert result.output.startswith(message) and len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_the_report_names_the_stored_alpha_without_alpha_issue_58(check_store, tmp_path):
    """Issue 58: without --alpha the report's signature ended at ``version:N``: the word alpha
    appeared nowhere in it. It names the alpha the scores are stored with (0.3 here)."""
    from store_helpers import reblended_copy

    db = reblended_copy(check_store, tmp_path / "check.duckdb", 0.3)
    out = tmp_path / "steady.html"
    result = _invoke("--db", db, "--run", "steady", "--baseline", "baseline", "--out", out,
                     "--worst", "0", "--resamples", "999")  # fmt: skip
    assert result.exit_code == 0, result.output
    page = out.read_text(encoding="utf-8")
    assert "|alpha:0.3</code>" in page and "alpha:0.5" not in page
