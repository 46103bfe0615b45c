"""Tests of s3kg_core.demo: the demo build from data/demo/, its recorded KGs, its deferred step.

``demo_db`` (conftest) is the build a first start makes: the recorded KGs of
``data/demo/kgs.jsonl``. The module's ``extracted`` build ignores that file (spaCy extracts every
text) and leaves GraphEval pending: both must store the same KGs, scores and TAU rows.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import duckdb
import pytest

from s3kg_core.demo import (
    DEMO_DIR,
    KGS_FILE,
    DemoReport,
    build_demo,
    demo_texts,
    finish_demo,
    pending_steps,
)
from s3kg_core.extract.factory import make_extractor
from s3kg_core.extract.recorded import load_recorded, text_key
from s3kg_core.store.store import Store


def rows(path: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory, minilm) -> tuple[Path, list[str]]:
    path = tmp_path_factory.mktemp("demo_extracted") / "demo.duckdb"
    steps: list[str] = []
    report = build_demo(path, use_recorded_kgs=False, grapheval=False, on_step=steps.append)
    assert report.kgs == "extracted" and report.pending == ("grapheval",)
    return path, steps


def test_the_shipped_kgs_are_the_live_extractors_and_cover_every_demo_text():
    # Fails after an edit of the offline extractor (or spaCy): run scripts/make_demo_kgs.py.
    recorded = load_recorded(DEMO_DIR / KGS_FILE, make_extractor("offline"))
    assert {text_key(t) for t in demo_texts()} <= set(recorded.kgs)


COMPARED = {
    "kgs": "SELECT * FROM kgs ORDER BY ALL",
    "scores": "SELECT * EXCLUDE (scored_at) FROM scores ORDER BY ALL",
    "tau": "SELECT run_id, item_id, signature, result FROM tau_results ORDER BY ALL",
    "runs": "SELECT run_id, model, temperature, extractor FROM runs ORDER BY ALL",
    "embeddings": "SELECT encoder, text, vector FROM embeddings ORDER BY encoder, text",
}


@pytest.mark.parametrize("table", sorted(COMPARED))
def test_the_shipped_kg_build_equals_the_from_scratch_build(demo_db, extracted, table):
    ours, scratch = rows(demo_db, COMPARED[table]), rows(extracted[0], COMPARED[table])
    assert ours and ours == scratch


def test_the_build_says_each_step_as_it_starts(extracted):
    steps = extracted[1]
    assert steps[0].startswith("Importing 30 demo questions and 60 answers")
    assert any(s.startswith("Extracting KGs with spaCy") for s in steps)
    assert [s.split()[0] for s in steps[1:]] == ["Extracting", "Loading", "TAU:", "Factuality"]


def test_a_deferred_grapheval_step_is_pending_until_finish_demo(demo_db, extracted, minilm):
    path = extracted[0]
    assert pending_steps(Store(path)) == ("grapheval",)
    assert rows(path, "SELECT count(*) FROM grapheval_results") == [(0,)]
    reports = finish_demo(Store(path), encoder=minilm)
    assert sum(r.written for r in reports) == 60 and pending_steps(Store(path)) == ()
    sql = "SELECT * EXCLUDE (created_at) FROM grapheval_results ORDER BY ALL"
    assert rows(path, sql) == rows(demo_db, sql)  # the same as a build that ran it at once
    assert sum(r.written for r in finish_demo(Store(path), encoder=minilm)) == 0  # resumable


def test_a_stale_kg_file_is_ignored_and_the_build_extracts(tmp_path, minilm):
    # A demo folder whose kgs.jsonl was recorded by another extractor version: not used.
    demo = tmp_path / "demo"
    demo.mkdir()
    questions = (DEMO_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    (demo / "questions.jsonl").write_text("\n".join(questions) + "\n", encoding="utf-8")
    ids = {json.loads(q)["id"] for q in questions}
    answers = [
        line
        for line in (DEMO_DIR / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["id"] in ids
    ]
    (demo / "answers.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")
    lines = (DEMO_DIR / KGS_FILE).read_text(encoding="utf-8").splitlines()
    header = {**json.loads(lines[0]), "fingerprint": "offline:old|code:0000"}
    (demo / KGS_FILE).write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    report = build_demo(tmp_path / "d.duckdb", demo, encoder=minilm, grapheval=False)
    assert report.kgs == "extracted" and report.scored == len(answers)


def small_demo(folder: Path, questions: int = 2) -> Path:
    """A demo folder with the first ``questions`` demo questions, their answers and the KGs."""
    folder.mkdir()
    lines = (DEMO_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines()[:questions]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ids = {json.loads(q)["id"] for q in lines}
    answers = [
        line
        for line in (DEMO_DIR / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["id"] in ids
    ]
    (folder / "answers.jsonl").write_text("\n".join(answers) + "\n", encoding="utf-8")
    (folder / KGS_FILE).write_text((DEMO_DIR / KGS_FILE).read_text(encoding="utf-8"))
    return folder


def test_a_second_build_at_once_never_replaces_the_first_and_its_saved_verdict(tmp_path, minilm):
    # Issue 44, item 2: two `s3kg dashboard --demo` on one cache folder. The second build used
    # to os.replace its file over the first's, losing a verdict saved into it meanwhile.
    from s3kg_core.annotation.log import Decision, current_verdicts, save_decision

    demo, path = small_demo(tmp_path / "demo"), tmp_path / "cache" / "demo.duckdb"
    at_install, go_on = threading.Event(), threading.Event()

    def hold_before_install(line: str) -> None:
        if line.startswith("Factuality"):  # the last step before the install
            at_install.set()
            assert go_on.wait(60)

    second: list[DemoReport] = []
    thread = threading.Thread(
        target=lambda: second.append(
            build_demo(path, demo, encoder=minilm, grapheval=False, on_step=hold_before_install)
        )
    )
    thread.start()
    try:
        assert at_install.wait(120)  # the second build is under way ...
        first = build_demo(path, demo, encoder=minilm, grapheval=False)  # ... the first finishes
        store = Store(path)
        save_decision(store, Decision("ann", 1, 1, ("a", "b", "c"), ("a", "b", "d"), "reject"))
    finally:
        go_on.set()
        thread.join(120)
    assert second, "the second build failed"
    with Store(path).connect() as con:
        kept = current_verdicts(con)
    assert kept["verdict"].tolist() == ["reject"]  # the verdict is still there ...
    assert first.installed and second[0].installed is False  # ... the later build discarded
    assert sorted(p.name for p in path.parent.iterdir()) == ["demo.duckdb"]  # no leftovers
