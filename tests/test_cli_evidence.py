"""Tests of the bench commands' ``--json`` and ``--evidence`` files (s3kg_core.cli.evidence)."""

from __future__ import annotations

import datetime
import json

import pytest

from docsgen.evidence import read_evidence
from s3kg_core.cli.evidence import BenchOutputs
from s3kg_core.errors import OutputError


def test_neither_file_writes_nothing_and_says_nothing(capsys):
    BenchOutputs(None, None).write(
        {"r": 1}, [(("a",), {"r": 1})], section="s", title="t", command="c", signature="sig"
    )
    assert capsys.readouterr().out == ""


def test_json_and_evidence_are_written_and_named_in_one_line(tmp_path, capsys):
    out, evidence = tmp_path / "out.json", tmp_path / "evidence" / "x.json"
    outputs = BenchOutputs(out, evidence)
    entries = [(("ot", "dev"), {"acc": 0.5}), (("ot", "test"), {"acc": 0.25})]
    outputs.write(
        [{"acc": 0.5}], entries, section="modes", title="t", command="s3kg x", signature="sig"
    )
    assert capsys.readouterr().out == f"wrote {out}; updated {evidence} (modes/ot/dev, ot/test)\n"
    assert json.loads(out.read_text(encoding="utf-8")) == [{"acc": 0.5}]
    ev = read_evidence(evidence)
    entry = ev["figures"]["modes"]["ot"]["test"]
    assert entry["acc"] == 0.25 and entry["command"] == "s3kg x" and entry["commit"]
    assert entry["date"] == datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    assert ev["title"] == "t" and ev["provenance"]["signature"] == "sig"


def test_a_path_below_a_file_is_refused_when_built(tmp_path):
    (tmp_path / "some.csv").write_text("not a folder\n", encoding="utf-8")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        BenchOutputs(None, tmp_path / "some.csv" / "evidence.json")


def test_the_module_doctests_pass():
    import doctest

    import s3kg_core.cli.evidence as module

    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


@pytest.mark.parametrize("content", ['{"figures": {}}\n', "a,b\n1,2\n", "", "[1, 2]\n"])
def test_an_evidence_path_that_is_another_file_is_refused_when_built(tmp_path, content):
    """Regression (issue 59, item 5): the file was first read after the run, in a traceback."""
    other = tmp_path / "results.json"
    other.write_text(content, encoding="utf-8")
    with pytest.raises(OutputError, match=f"^--evidence {other} cannot be updated: "):
        BenchOutputs(None, other)
    assert other.read_text(encoding="utf-8") == content


def test_missing_figures_write_neither_file(tmp_path, capsys):
    """Issue 59, item 2: evidence files are written only with complete figures."""
    from s3kg_core.errors import ConfigError

    out, evidence = tmp_path / "out.json", tmp_path / "x.json"
    outputs = BenchOutputs(out, evidence)
    with pytest.raises(ConfigError, match="--evidence takes complete figures only, and 2 are"):
        outputs.write(
            {"r": None},
            [(("ot", "dev"), {"r": None})],
            section="s", title="t", command="c", signature="sig",
            missing=["sts/main: constant scores", "sick/main: constant scores"],
        )  # fmt: skip
    assert not out.exists() and not evidence.exists() and capsys.readouterr().out == ""
    BenchOutputs(out, None).write(  # without --evidence a partial result is a result
        {"r": None}, [], section="s", title="t", command="c", signature="sig", missing=["x"]
    )
    assert json.loads(out.read_text(encoding="utf-8")) == {"r": None}


def test_an_entry_the_file_cannot_hold_is_one_line(tmp_path):
    from docsgen.evidence import write_evidence

    evidence = tmp_path / "x.json"
    write_evidence(evidence, {"modes": {"ot": 1}}, title="t", command="c", commit="a")
    before = evidence.read_bytes()
    with pytest.raises(OutputError, match=r"^cannot update .*: .*figures/ot is not an object"):
        BenchOutputs(None, evidence).write(
            {}, [(("ot", "dev"), {"r": 1})], section="modes", title="t", command="c",
            signature="s",
        )  # fmt: skip
    assert evidence.read_bytes() == before
