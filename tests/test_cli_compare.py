"""Tests of s3kg_core.cli.compare: `s3kg compare`'s printout, its JSON and its errors."""

from __future__ import annotations

import json

from click.testing import CliRunner

from s3kg_core.analysis.compare import compare_runs
from s3kg_core.cli import cli
from s3kg_core.scoring.signature import Signature
from s3kg_core.stages.scored import blend_alpha


def _invoke(*args: object):
    return CliRunner().invoke(cli, ["compare", *(str(a) for a in args)])


def test_compare_prints_each_scores_change_and_the_verdict(check_store):
    result = _invoke("--db", check_store.path, "--run", "worse", "--baseline", "baseline")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "s3kg compare: worse (run 3) against baseline (run 1)"
    want = compare_runs(check_store, "worse", "baseline")
    for line, (score, d) in zip(lines[1:4], want.differences.items(), strict=True):
        assert line == (
            f"  {score}: {d.baseline_mean:.4f} -> {d.new_mean:.4f}, change {d.difference:+.4f} "
            f"(95% interval {d.low:+.4f} to {d.high:+.4f}): clearly lower"
        )
    assert lines[4] == f"  mean CUS against the baseline: {want.verdict().text()}"
    assert want.verdict().text().startswith("clearly lower (paired bootstrap over ")
    signature = Signature.blended(want.signature, blend_alpha(check_store, want.signature, None))
    assert f"  signature: {signature}" in lines and signature.endswith("|alpha:0.5")
    assert lines[-1] == (
        "  bootstrap: paired, 9999 resamples, seed 0, 95% intervals, the normal approximation "
        "from 1000 paired values"
    )


def test_the_other_way_round_is_clearly_higher_and_json_says_the_same(check_store):
    result = _invoke(
        "--db", check_store.path, "--run", "baseline", "--baseline", "worse", "--alpha", "0.3",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    want = compare_runs(check_store, "baseline", "worse", alpha=0.3)
    assert data["verdict"] == want.verdict().text() and data["verdict"].startswith("clearly higher")
    assert data["test"] == want.verdict().test()
    assert (data["new"]["name"], data["baseline"]["name"]) == ("baseline", "worse")
    assert data["signature"].endswith("|alpha:0.3") and data["resamples"] == 9999
    assert data["differences"]["cus"]["low"] == want.differences["cus"].low
    assert {d["verdict"] for d in data["differences"].values()} == {"clearly higher"}


def test_runs_that_cannot_be_compared_are_one_line_errors(check_store, tmp_path):
    for args, message in [
        (["--run", "steady", "--baseline", "elsewhere"], "answer other datasets"),
        (["--run", "steady", "--baseline", "nobody"], "no run 'nobody'"),
        (["--run", "steady", "--baseline", "steady"], "name one run"),
    ]:
        result = _invoke("--db", check_store.path, *args)
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0]
    missing = _invoke("--db", tmp_path / "none.duckdb", "--run", "1", "--baseline", "2")
    assert missing.exit_code == 1 and "does not exist" in missing.output
    assert not (tmp_path / "none.duckdb").exists()
    usage = _invoke("--db", check_store.path, "--run", "1")
    assert usage.exit_code == 2 and "--baseline" in usage.output
