"""Tests of s3kg_core.cli.check: `s3kg check`'s exit codes, output files and usage errors."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from s3kg_core import SCORING_VERSION
from s3kg_core.cli import cli


def _invoke(*args: str | Path):
    return CliRunner().invoke(cli, ["check", *(str(a) for a in args)])


def _error_line(result, code: int = 2) -> str:
    """The one ``Error: ...`` line of a refused check (no traceback)."""
    assert result.exit_code == code, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_a_passing_check_exits_0_and_writes_junit_and_markdown(check_store, tmp_path):
    junit, summary = tmp_path / "out" / "check.xml", tmp_path / "summary.md"
    result = _invoke(
        "--db", check_store.path, "--run", "steady", "--baseline", "baseline",
        "--resamples", "999", "--junit", junit, "--markdown", summary,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "s3kg check: steady (run 2) against baseline (run 1): passed: 4 gates"
    assert [line.split(":")[0] for line in lines if line.startswith("  PASS")] == [
        "  PASS cus_drop",
        "  PASS gold_sim_drop",
        "  PASS ctx_sim_drop",
        "  PASS new_unscorable",
    ]
    root = ET.parse(junit).getroot()
    assert (root.attrib["tests"], root.attrib["failures"]) == ("4", "0")
    assert summary.read_text(encoding="utf-8").startswith("### ✅ s3kg check passed: 4 gates")


def test_a_failing_check_exits_1(check_store, tmp_path):
    junit = tmp_path / "check.xml"
    result = _invoke(
        "--db", check_store.path, "--run", "3", "--baseline", "baseline", "--resamples", "999",
        "--min-cus", "0.5", "--junit", junit,
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "FAILED: 4 of 5 gates" in result.output.splitlines()[0]
    failed = [
        case.attrib["name"]
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.find("failure") is not None
    ]
    assert failed == ["cus_drop", "gold_sim_drop", "ctx_sim_drop", "min_cus"]


def test_options_move_the_verdict(check_store):
    base = ["--db", check_store.path, "--run", "broken", "--baseline", "baseline"]
    assert _invoke(*base, "--resamples", "999").exit_code == 1  # three became unscorable
    relaxed = _invoke(*base, "--resamples", "999", "--max-new-unscorable", "3")
    assert relaxed.exit_code == 0, relaxed.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--run", "nope", "--baseline", "baseline"], "Error: no run 'nope' (by id or name)"),
        (["--run", "twin", "--baseline", "baseline"], "Error: run name 'twin' fits 2 runs"),
        (["--run", "elsewhere", "--baseline", "baseline"], "Error: the runs answer other"),
        (["--run", "steady"], "Error: nothing to check: name a baseline"),
        (
            ["--run", "steady", "--baseline", "baseline", "--signature", "mode:x"],
            "Error: unknown signature 'mode:x'; the stored signatures",
        ),
    ],
)
def test_input_that_cannot_be_checked_exits_2(check_store, args, message):
    line = _error_line(_invoke("--db", check_store.path, *args))
    assert line.startswith(message), line


def test_a_missing_database_exits_2(tmp_path):
    line = _error_line(_invoke("--db", tmp_path / "no.duckdb", "--run", "a", "--baseline", "b"))
    assert line == f"Error: database {tmp_path / 'no.duckdb'} does not exist"


@pytest.mark.parametrize(
    "args",
    [
        [],  # neither --run nor --pairs
        ["--run", "a", "--pairs", "PAIRS"],
        ["--run", "a", "--min-score", "0.5"],
        ["--pairs", "PAIRS", "--baseline", "b"],
    ],
)
def test_usage_errors_exit_2(tmp_path, args):
    pairs = tmp_path / "p.csv"
    pairs.write_text("id,s3kg,status\na,0.5,ok\n", encoding="utf-8")
    result = _invoke(*[str(pairs) if a == "PAIRS" else a for a in args])
    assert result.exit_code == 2, result.output
    assert "Usage:" in result.output


def test_pair_files_on_the_command_line(tmp_path):
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    rows = [(f"p{i}", 0.2 + 0.05 * (i % 10)) for i in range(30)]
    old.write_text("id,s3kg,status\n" + "".join(f"{i},{s},ok\n" for i, s in rows), "utf-8")
    new.write_text("id,s3kg,status\n" + "".join(f"{i},{s - 0.2},ok\n" for i, s in rows), "utf-8")
    summary = tmp_path / "s.md"
    result = _invoke("--pairs", new, "--baseline-pairs", old, "--resamples", "999",
                     "--markdown", summary)  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "FAIL s3kg_drop: -0.2000" in result.output
    assert "S3KG drop" in summary.read_text(encoding="utf-8")
    same = _invoke("--pairs", old, "--baseline-pairs", old, "--resamples", "999")
    assert same.exit_code == 0, same.output
    bad = tmp_path / "bad.csv"
    bad.write_text("id,score\n1,2\n", "utf-8")
    assert _error_line(_invoke("--pairs", bad, "--min-score", "0.1")).startswith(
        "Error: bad.csv: not an `s3kg pairs score` output"
    )


def test_an_output_that_cannot_be_written_is_refused_before_the_work(check_store, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", "utf-8")
    result = _invoke("--db", check_store.path, "--run", "steady", "--baseline", "baseline",
                     "--junit", blocker / "check.xml")  # fmt: skip
    assert _error_line(result).startswith("Error: cannot write ")
    assert "s3kg check:" not in result.output


def test_missing_pair_rows_fail_unless_allowed(tmp_path):
    # regression (issue 44, 4): 1 of the baseline's 100 rows passed, `new_failed: 0 of 1 shared`
    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    rows = [(f"p{i}", 0.2 + 0.05 * (i % 10)) for i in range(100)]
    old.write_text("id,s3kg,status\n" + "".join(f"{i},{s},ok\n" for i, s in rows), "utf-8")
    new.write_text("id,s3kg,status\np0,0.2,ok\n", "utf-8")
    result = _invoke("--pairs", new, "--baseline-pairs", old, "--resamples", "999")
    assert result.exit_code == 1, result.output
    assert "  FAIL new_failed: 99 of 100 in the baseline; " in result.output
    allowed = _invoke(
        "--pairs", new, "--baseline-pairs", old, "--resamples", "999", "--allow-missing"
    )
    assert allowed.exit_code == 0, allowed.output
    assert "  PASS new_failed: 0 of 1 shared; " in allowed.output


def test_a_binary_or_out_of_range_pairs_file_is_one_short_line(tmp_path):
    # regression (issue 44, 10): thousands of garbage characters; s3kg = 5 was accepted
    binary = tmp_path / "bin.csv"
    binary.write_bytes(bytes(range(1, 256)).replace(b"\n", b"").replace(b"\r", b"") * 80)
    line = _error_line(_invoke("--pairs", binary, "--min-score", "0.1"))
    assert len(line) < 200 and line.isprintable()
    five = tmp_path / "five.csv"
    five.write_text("id,s3kg,status\na,5,ok\n", "utf-8")
    assert _error_line(_invoke("--pairs", five, "--min-score", "0.1")) == (
        "Error: five.csv: row 1 (id 'a'): s3kg 5 is outside [0, 1]: not an `s3kg pairs score` "
        "output"
    )


@pytest.mark.parametrize(("given", "named"), [((), "0.3"), (("--alpha", "0.7"), "0.7")])
def test_the_printout_markdown_and_junit_name_the_alpha_issue_58(
    check_store, tmp_path, given, named
):
    """Issue 58: the printout, --markdown and --junit ended their signature at ``version:N``,
    without the alpha the scores were blended at (the stored one, 0.3 here, or --alpha's)."""
    from store_helpers import reblended_copy

    db = reblended_copy(check_store, tmp_path / "check.duckdb", 0.3)
    junit, summary = tmp_path / "check.xml", tmp_path / "summary.md"
    result = _invoke(
        "--db", db, "--run", "steady", "--baseline", "baseline", "--resamples", "999",
        "--junit", junit, "--markdown", summary, *given,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = [line for line in result.output.splitlines() if "signature:" in line]
    assert len(printed) == 1 and printed[0].endswith(f"|version:{SCORING_VERSION}|alpha:{named}")
    assert f"|alpha:{named}`" in summary.read_text(encoding="utf-8")
    properties = {
        p.attrib["name"]: p.attrib["value"] for p in ET.parse(junit).getroot().iter("property")
    }
    assert properties["signature"].endswith(f"|alpha:{named}")
