"""The evidence file format: writing with provenance, reading, validation, figure paths."""

from __future__ import annotations

import copy
import doctest
import json
import subprocess

import pytest

import docsgen.evidence as evidence_io
from docsgen.evidence import (
    FORMAT,
    EvidenceError,
    command_line,
    figure,
    git_commit,
    load_all,
    read_evidence,
    validate,
    write_evidence,
)


def test_doctests():
    result = doctest.testmod(evidence_io)
    assert result.attempted > 0 and result.failed == 0


def test_written_file_carries_its_provenance(tmp_path):
    path = tmp_path / "sub" / "x.json"
    written = write_evidence(
        path, {"sets": {"mrpc": {"auroc": 0.6}}}, title="t", command="python x.py --json X",
        signature="mode:hybrid",
    )  # fmt: skip
    content = read_evidence(path)
    assert content == written
    prov = content["provenance"]
    assert prov["command"] == "python x.py --json X" and prov["signature"] == "mode:hybrid"
    assert prov["machine"]["cores"] >= 1 and prov["machine"]["cpu"]
    assert prov["date"][:4].isdigit() and prov["transcribed"] is None
    # this checkout's commit, as git names it
    head = subprocess.run(
        ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
        cwd=evidence_io.REPO, check=True,
    ).stdout.strip()  # fmt: skip
    assert prov["commit"].removesuffix("-dirty") == head
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]  # no temporary file left


def test_transcribed_figures_say_where_they_came_from(tmp_path):
    write_evidence(
        tmp_path / "t.json", {"a": 1}, title="t", command="c", date="2026-11-30", commit="abc",
        machine_info={"cores": 2, "cpu": "AMD EPYC"},
        transcribed={"from": "bench/README.md", "run": "2026-11-30"},
    )  # fmt: skip
    prov = read_evidence(tmp_path / "t.json")["provenance"]
    assert prov["transcribed"] == {"from": "bench/README.md", "run": "2026-11-30"}
    assert prov["machine"] == {"cores": 2, "cpu": "AMD EPYC"} and prov["commit"] == "abc"


GOOD = {
    "format": FORMAT,
    "title": "t",
    "provenance": {
        "command": "c", "signature": None, "machine": {"cores": 2, "cpu": "x"},
        "date": "2026-12-01", "commit": "abc", "transcribed": None,
    },
    "figures": {"a": 1},
}  # fmt: skip


def _broken(path: str, value: object) -> dict:
    content = copy.deepcopy(GOOD)
    *parents, last = path.split("/")
    node = content
    for step in parents:
        node = node[step]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return content


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("format", "other", "not an evidence file"),
        ("title", KeyError, "no 'title'"),
        ("figures", {}, "'figures' is empty"),
        ("provenance/command", "  ", "'command' is empty"),
        ("provenance/commit", KeyError, "provenance has no 'commit'"),
        ("provenance/date", "yesterday", "not YYYY-MM-DD"),
        ("provenance/machine", {"cores": 2}, "'cores' and 'cpu'"),
        ("provenance/machine", {"cores": "2", "cpu": "x"}, "'cores' and 'cpu'"),
        ("provenance/transcribed", {"from": "x"}, "'from' and 'run'"),
    ],
)
def test_validation_names_what_is_wrong(path, value, message):
    assert validate(copy.deepcopy(GOOD)) == GOOD
    with pytest.raises(EvidenceError, match=message):
        validate(_broken(path, value), "x.json")


def test_reading_a_file_that_is_not_json_is_an_evidence_error(tmp_path):
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(EvidenceError, match=r"bad\.json"):
        load_all(tmp_path)
    with pytest.raises(EvidenceError, match=r"missing\.json"):
        read_evidence(tmp_path / "missing.json")


def test_figure_paths():
    ev = {"x": {"figures": {"sets": {"mrpc": {"ci": [0.5, 0.7]}}, "n": 3}}}
    assert figure(ev, "x/n") == 3
    assert figure(ev, "x/sets/mrpc/ci/0") == 0.5
    assert figure(ev, "x") == ev["x"]["figures"]
    for bad, message in [
        ("y/n", "no evidence file y.json"),
        ("x/sets/mrpc/ci/2", "no '2' in x/sets/mrpc/ci"),
        ("x/n/deeper", "no 'deeper' in x/n"),
    ]:
        with pytest.raises(EvidenceError, match=message):
            figure(ev, bad)


def test_a_bench_script_is_recorded_as_the_module_it_runs_as():
    # the scripts run as `python -m bench.speed.x` (they no longer edit sys.path), so the
    # command an evidence file records is that one, not `python bench/speed/x.py`
    script = str(evidence_io.REPO / "bench" / "experiments" / "bench_variants.py")
    assert command_line([script, "--json", "e.json"]) == (
        "python -m bench.experiments.bench_variants --json e.json"
    )
    assert command_line([str(evidence_io.REPO / "scripts" / "render_evidence.py"), "--check"]) == (
        "python scripts/render_evidence.py --check"
    )


def test_command_line_and_commit_outside_a_checkout(tmp_path):
    assert command_line(["/elsewhere/x.py", "--a", "b c"]) == "python /elsewhere/x.py --a 'b c'"
    assert git_commit(tmp_path) == "unknown"


def test_the_committed_evidence_files_are_all_in_the_format():
    files = load_all()
    assert len(files) >= 15
    for name, content in files.items():
        prov = content["provenance"]
        # figures copied from a notebook say so, and from which run
        if prov["transcribed"] is not None:
            assert prov["transcribed"]["from"] and prov["transcribed"]["run"], name
        json.dumps(content)  # plain JSON data


def test_update_keeps_other_figures_and_the_transcribed_note(tmp_path):
    from docsgen.evidence import update_evidence

    path = tmp_path / "x.json"
    tr = {"from": "bench/README.md", "run": "2026-12-02"}
    write_evidence(path, {"dbs": {"1": {"s": 1}}, "n": 3}, title="t", command="c", commit="a",
                   transcribed=tr)  # fmt: skip
    ev = update_evidence(path, ["dbs", "2"], {"s": 2}, title="t", command="d", commit="b")
    assert ev["figures"] == {"dbs": {"1": {"s": 1}, "2": {"s": 2}}, "n": 3}
    assert ev["provenance"]["command"] == "d" and ev["provenance"]["transcribed"] == tr
    assert read_evidence(path) == ev
    with pytest.raises(EvidenceError, match="figures/n is not an object"):
        update_evidence(path, ["n", "x"], 1, title="t", command="d", commit="b")
    with pytest.raises(EvidenceError, match="no key"):
        update_evidence(path, [], 1, title="t", command="d", commit="b")
