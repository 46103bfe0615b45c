"""Tests of s3kg_core.cli.annotate: `s3kg annotate ...` and `s3kg annotations ...`."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from store_helpers import build_store

from s3kg_core.annotation.log import Decision, save_decision
from s3kg_core.annotation.tasks import item_units, queue
from s3kg_core.cli import cli
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def _one_line_error(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


@pytest.fixture(scope="module")
def blank(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "blank.duckdb"
    build_store(path, n_items=4, n_triples=2, seed=11)
    return path


@pytest.fixture(scope="module")
def annotated(blank, tmp_path_factory, minilm):
    """A task of 3 answers for ann and bob (overlap 2), every unit decided by both; they
    disagree on the first unit of each answer."""
    path = tmp_path_factory.mktemp("annotated") / "a.duckdb"
    shutil.copy(blank, path)
    result = _invoke(
        "annotate", "assign", "--db", path, "--annotators", "ann, bob", "--overlap", "2",
        "--sample", "3", "--seed", "1", "--name", "pilot",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    store = Store(path)
    with store.connect() as con:
        keys = [(q.run_id, q.item_id) for q in queue(con, 1, "ann")]
        units = [u for key in keys for u in item_units(con, 1, *key)]
    for who in ("ann", "bob"):
        for u in units:
            verdict = "reject" if (who == "bob" and u.unit == 0) else "confirm"
            decision = Decision(who, u.run_id, u.item_id, u.gold, u.answer, verdict, task_id=1)
            save_decision(store, decision)
    return path, result.output, len(units)


def test_assign_makes_a_balanced_task_and_says_so(annotated):
    _, output, n_units = annotated
    line = output.strip()
    assert line.startswith(
        f"task 1: 3 answers of 8 eligible, {n_units} units, each answer seen by 2"
    )
    assert "items per annotator: ann 3, bob 3; tau|enc:minilm@" in line
    assert line.endswith("|threshold:default")


def test_tasks_and_progress_report_each_queue(annotated):
    path, _, n_units = annotated
    result = _invoke("annotate", "tasks", "--db", path)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("task 1 (pilot): 3 answers, overlap 2, made ")
    assert lines[1:] == [
        f"  ann: 3 of 3 done ({n_units} of {n_units} units)",
        f"  bob: 3 of 3 done ({n_units} of {n_units} units)",
    ]
    result = _invoke("annotate", "progress", "--db", path, "--task", "1", "--annotator", "ann")
    assert result.output.strip() == (
        f"ann, your queue: 3 of 3 done ({n_units} of {n_units} units); all done"
    )


def test_agreement_prints_and_writes_kappa_alpha_and_tau_quality(annotated, tmp_path):
    path, _, n_units = annotated
    out = tmp_path / "agreement.json"
    result = _invoke(
        "annotate", "agreement", "--db", path, "--task", "1", "--bootstrap", "100", "--json", out
    )
    assert result.exit_code == 0, result.output
    assert result.output.startswith("agreement (task 1; 95% bootstrap intervals):")
    assert "kappa  ann vs bob" in result.output and "TAU against the final labels" in result.output
    assert "recall is untested" in result.output
    report = json.loads(out.read_text())
    overall = report["agreement"][0]
    assert (overall["method"], overall["category"], overall["units"]) == (
        "krippendorff_alpha",
        "all",
        n_units,
    )
    assert report["tau"]["recall_tested"] is False
    # issue 58: each category's precision with its interval, in the text and in the JSON
    # (bob rejected the first unit of each answer, ann confirmed it: ties count nowhere)
    from s3kg_core.annotation.quality import category_precision

    found = category_precision(Store(path, read_only=True), task_id=1)
    lines = result.output.splitlines()
    start = lines.index(
        "TAU's precision by category (the share of its judged units the final labels "
        "confirm; 95% Wilson intervals):"
    )
    judged = 0
    for line, (name, e) in zip(lines[start + 1 :], found.items(), strict=False):
        assert line.split()[0] == name
        want = "n/a (nothing judged yet)" if not e.n else (
            f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}] of {e.n}"
        )  # fmt: skip
        assert line.endswith(want), line
        written = report["tau"]["confirmed"][name]
        assert (written["n"], written["method"]) == (e.n, "wilson")
        if e.n:
            judged += 1
            assert (written["value"], written["low"], written["high"]) == (e.value, e.low, e.high)
    assert judged >= 1


def test_disagreements_list_the_units_labelled_differently(annotated):
    path, _, _ = annotated
    result = _invoke("annotate", "disagreements", "--db", path, "--task", "1")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "3 pairs with disagreeing labels"
    assert all("(ann: confirm, bob: reject)" in line for line in lines[1:])


@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_export_and_import_through_the_command_line(annotated, blank, tmp_path, fmt):
    path, _, n_units = annotated
    out = tmp_path / f"log.{fmt}"
    result = _invoke("annotations", "export", "--db", path, "--format", fmt, "--out", out)
    assert result.output.strip() == f"wrote {2 * n_units} rows to {out}"
    target = tmp_path / "target.duckdb"
    shutil.copy(blank, target)
    result = _invoke("annotations", "import", out, "--db", target)
    assert result.exit_code == 0, result.output
    # the target has no task 1: the rows are kept, without the task
    assert result.output.strip() == (
        f"{2 * n_units} rows read: {2 * n_units} added, 0 already there; "
        f"{2 * n_units} rows name a task this database does not have (kept without it)"
    )
    again = _invoke("annotations", "import", out, "--db", target)
    assert again.output.startswith(f"{2 * n_units} rows read: 0 added, {2 * n_units} already")


def test_the_database_is_never_an_export_target(annotated):
    path, _, _ = annotated
    before = path.read_bytes()
    # one line and exit status 2, as every output that is the database (issue 28, item 1)
    result = _invoke("annotations", "export", "--db", path, "--format", "csv", "--out", path)
    assert result.exit_code == 2 and result.output.count("\n") == 1
    assert result.output.startswith(f"Error: --out {path} is the database {path}; ")
    wal = path.parent / f"{path.name}.wal"
    result = _invoke("annotate", "agreement", "--db", path, "--json", wal)
    assert result.exit_code == 2 and "is the database's write-ahead log" in result.output
    assert not wal.exists()
    assert path.read_bytes() == before


def test_bad_requests_are_one_line_errors(annotated, blank, tmp_path):
    path, _, _ = annotated
    error = _one_line_error(
        _invoke("annotate", "assign", "--db", path, "--annotators", "ann,\u202eecila")
    )
    assert "U+202E" in error
    error = _one_line_error(
        _invoke("annotate", "assign", "--db", path, "--annotators", "ann", "--overlap", "2")
    )
    assert "overlap must be between 1 and the number of annotators (1)" in error
    error = _one_line_error(_invoke("annotate", "agreement", "--db", path, "--task", "5"))
    assert "no annotation task 5" in error
    missing = _invoke("annotate", "tasks", "--db", tmp_path / "none.duckdb")
    assert missing.exit_code == 1 and "does not exist" in missing.output
    with Store(path).connect() as con:
        assert len(aq.tasks(con)) == 1
    usage = _invoke("annotate", "assign", "--db", path, "--annotators", " , ")
    assert usage.exit_code == 2 and "at least one name" in usage.output


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"uid": "u", "gold_triple": "nope"}', "line 1"),
        ("[1, 2, 3]", "line 1 is not a JSON object"),
        ('{"a": ' * 100_000, "line 1 is nested too deeply"),
    ],
    ids=["no-columns", "list", "deep"],
)
def test_a_bad_import_is_one_line_and_exit_2(blank, tmp_path, line, message):
    # regression (issue 44, item 5): tracebacks (TypeError, RecursionError), exit 1
    out = tmp_path / "bad.jsonl"
    out.write_text(line + "\n", encoding="utf-8")
    target = tmp_path / "t.duckdb"
    shutil.copy(blank, target)
    result = _invoke("annotations", "import", out, "--db", target)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    if message != "line 1":
        assert message in lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--annotators", "ann,ann\u200b"], "U+200B (an invisible formatting character)"),
        (["--annotators", "ann", "--name", "t" * 40_000], "a task's name is at most 200"),
        (["--annotators", "ann", "--name", "t\x1b[2J"], "a task's name cannot hold control"),
    ],
    ids=["zero-width-annotator", "long-task", "esc-task"],
)
def test_names_follow_the_rule_of_every_name(annotated, args, message):
    # regression (issue 44, item 7): two annotators printed alike; a 40,000-character task name
    path, _, _ = annotated
    before = len(_tasks(path))
    error = _one_line_error(_invoke("annotate", "assign", "--db", path, *args))
    assert message in error
    assert len(_tasks(path)) == before


def _tasks(path):
    with Store(path).connect() as con:
        return aq.tasks(con)
