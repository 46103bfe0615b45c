"""docsgen: the cell formats, every view against the committed evidence, and checks that
the transcribed figures agree with the files and runs they were copied from."""

from __future__ import annotations

import doctest
import json
import math
import re
import statistics
from pathlib import Path

import pytest

from docsgen import SETS, VIEWS, base
from docsgen.base import f, sci, span, template, with_ci
from docsgen.evidence import load_all

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def evidence():
    return load_all()


def test_doctests():
    result = doctest.testmod(base)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(
    ("got", "want"),
    [
        (f(None), ""),
        (f(math.nan), ""),
        (f(0.80833), "0.808"),
        (f(1168, ",d"), "1,168"),
        (
            with_ci({"auroc": 0.6, "auroc_ci": [0.5, 0.7], "f1": 0.64}),
            "0.600 [0.500, 0.700] (0.640)",
        ),
        (with_ci({"auroc": 0.6, "f1": 0.64}, f1=False), "0.600"),
        (span([6.6, 7.7]), "6.6-7.7 s"),
        (span([0.5, 0.5]), "0.5 s"),
        (sci(1.6e-7), "1.6e-7"),
        (sci(0.0), "0"),
        (
            template({"text": "{0:.1f} / {1:.1f}-{2:.1f} s", "values": [4.7, 2.0, 2.6]}),
            "4.7 / 2.0-2.6 s",
        ),
    ],
)
def test_cell_formats(got, want):
    assert got == want


@pytest.mark.parametrize("view_id", sorted(VIEWS))
def test_every_view_renders_a_table_from_the_committed_evidence(evidence, view_id):
    v = VIEWS[view_id]
    assert all(s in evidence for s in v.sources)
    out = v.render(evidence)
    assert out.startswith(("| ", "```")), out[:80]
    assert "None" not in out and "nan" not in out.lower().replace("nano", "")
    rows = [line for line in out.splitlines() if line.startswith("|")]
    if rows:  # a table: every row has the header's number of cells
        widths = {len(re.split(r"(?<!\\)\|", r)) for r in rows}
        assert len(widths) == 1, view_id


def test_the_pair_set_evidence_is_the_shipped_demo_run(evidence):
    # evidence/pairs_minilm.json holds exactly data/demo/bench_results.json's figures
    demo = json.loads((REPO / "data" / "demo" / "bench_results.json").read_text())
    fig = evidence["pairs_minilm"]["figures"]
    by_full = {s["dataset"]: s for s in fig["sets"].values()}
    assert sorted(by_full) == sorted(demo["datasets"]) and len(fig["sets"]) == len(SETS)
    for row in demo["rows"]:
        m = by_full[row["dataset"]]["methods"][row["method"]]
        assert m["auroc"] == row["auroc"] and m["f1"] == row["f1"] and m["alpha"] == row["alpha"]
        assert m["auroc_ci"] == [row["auroc_lo"], row["auroc_hi"]]
    hybrid = [s["methods"]["s3kg@hybrid"]["auroc"] for s in fig["sets"].values()]
    assert fig["mean"]["s3kg@hybrid"]["auroc"] == pytest.approx(statistics.mean(hybrid))
    assert evidence["pairs_minilm"]["provenance"]["command"] == demo["command"]


def _mean_close(values, mean, places=3):
    # a mean transcribed to `places` decimals from per-set figures rounded the same way
    assert abs(statistics.mean(values) - mean) <= 1.5 * 10**-places


def test_transcribed_means_agree_with_their_rows(evidence):
    mp = evidence["pairs_mpnet"]["figures"]
    for m in ("s3kg@hybrid", "s3kg@paper", "s3kg@kgx"):
        _mean_close([s["methods"][m]["auroc"] for s in mp["sets"].values()], mp["mean"][m]["auroc"])
    text = evidence["text_mode"]["figures"]
    for enc in ("minilm", "mpnet"):
        for col, mean in text[enc]["mean"].items():
            _mean_close([s[col]["auroc"] for s in text[enc]["sets"].values()], mean["auroc"])
    for enc in ("minilm", "mpnet"):
        var = evidence[f"variants_{enc}"]["figures"]
        for cand, summary in var["summary"].items():
            tests = [x["test_auroc"] for x in var["per_set"][cand].values()]
            _mean_close(tests, summary["mean_test_auroc"])


def test_the_variants_evidence_renders_as_the_script_prints(evidence):
    from s3kg_core.evaluation.variants import report

    fig = evidence["variants_minilm"]["figures"]
    out = VIEWS["variants_minilm"].render(evidence)
    assert out == f"```\nencoder minilm\n{report(fig)}\n```"
    assert "hybrid          0.806      0.790    0.751     0.8      0.789" in out


def test_the_reference_ratios_are_the_runs(evidence):
    # the ratios bench_reference.py printed follow from its seconds (rounded as printed)
    fig = evidence["reference"]["figures"]
    ref = fig["reference"]
    for run in fig["backends"].values():
        assert ref["sample_seconds"] / run["sample_seconds"] == pytest.approx(
            run["ratio_sample"], rel=0.02
        )
        assert ref["all_seconds_extrapolated"] / run["all_seconds"] == pytest.approx(
            run["ratio_all"], rel=0.01
        )


def test_the_alpha_step_renders_every_page_and_an_older_overview_only_file(evidence):
    new = VIEWS["alpha_step"].render(evidence)
    pages = evidence["alpha_step"]["figures"]["pages"]
    assert new.count("in the browser (live block)") == len(pages) >= 3
    # a file written before the pages (the Overview alone, its rows at the top)
    overview = pages["overview"]
    old = {**evidence, "alpha_step": {**evidence["alpha_step"], "figures": {**overview}}}
    rendered = VIEWS["alpha_step"].render(old)
    assert rendered.count("Overview: ") == 2 and "Sample explorer" not in rendered
