"""Annotation tasks (s3kg_core.annotation.tasks): answers, assignment, TAU units, queues."""

from __future__ import annotations

import json
import shutil

import pytest
from store_helpers import build_store

from s3kg_core.annotation.log import Decision, now, save_decision, undo_last
from s3kg_core.annotation.tasks import (
    Unit,
    create_task,
    extracted_forms,
    item_units,
    queue,
    queue_progress,
    task_progress,
    units_of,
)
from s3kg_core.errors import AnnotationError, AnnotatorNameError, ConfigError
from s3kg_core.kg import Triple
from s3kg_core.scoring.tau import TripletAnalyzer
from s3kg_core.store import annotation_queries as aq
from s3kg_core.store.store import Store

pytestmark = pytest.mark.usefixtures("one_torch_thread")

NAMES = ["ann", "bob", "cy"]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """Two runs of five answers with KGs (no scores: TAU runs on the encoder given)."""
    path = tmp_path_factory.mktemp("tasks") / "template.duckdb"
    build_store(path, n_items=5, n_triples=3, seed=7)
    return path


@pytest.fixture(scope="module")
def tasked(template, tmp_path_factory, minilm):
    """The template with one task: 6 of the 10 answers, overlap 2, seed 3."""
    path = tmp_path_factory.mktemp("tasked") / "s.duckdb"
    shutil.copy(template, path)
    store = Store(path)
    report = create_task(store, NAMES, 2, sample=6, seed=3, name="pilot", encoder=minilm)
    return store, report


@pytest.fixture
def fresh(tasked, tmp_path):
    """A private copy of the tasked database (for tests that write)."""
    store, report = tasked
    path = tmp_path / "s.duckdb"
    shutil.copy(store.path, path)
    return Store(path), report


def test_a_task_assigns_each_answer_to_overlap_annotators_in_balance(tasked):
    store, report = tasked
    assert (report.task_id, report.items, report.eligible, report.overlap) == (1, 6, 10, 2)
    assert report.loads == {"ann": 4, "bob": 4, "cy": 4}
    assert report.tau_signature.startswith("tau|enc:minilm@")
    assert report.tau_signature.endswith("|triple:0.76|component:0.76|threshold:default")
    with store.connect() as con:
        items = aq.task_items(con, 1)
        task = aq.task(con, 1)
    seen: dict[tuple[int, int], list[str]] = {}
    for row in items:
        seen.setdefault((row["run_id"], row["item_id"]), []).append(row["annotator"])
    assert len(seen) == 6 and all(len(who) == 2 for who in seen.values())
    settings = json.loads(task["settings"])
    assert task["name"] == "pilot" and task["annotators"] == tuple(NAMES)
    assert (
        settings["sample"] == 6
        and settings["seed"] == 3
        and settings["tau"] == report.tau_signature
    )


def test_the_units_are_tau_s_explanation_of_each_answer(tasked, minilm):
    store, _ = tasked
    with store.connect() as con:
        keys = sorted({(r["run_id"], r["item_id"]) for r in aq.task_items(con, 1)})
        kgs = store.load_kgs(con)
        units = {k: item_units(con, 1, *k) for k in keys}
    analyzer = TripletAnalyzer(minilm)
    for run, item in keys:
        gold, answer = kgs[(run, item, "gold")].triples, kgs[(run, item, "answer")].triples
        result = analyzer.analyse(gold, answer)
        assert units[(run, item)] == units_of(run, item, result, gold, answer)
        assert len(units[(run, item)]) == sum(result.counts().values())
        for unit in units[(run, item)]:
            assert [u for u in units[(run, item)]].index(unit) == unit.unit
            if unit.gold is not None:  # the extracted triple normalises to the compared one
                assert unit.gold_extracted and all(
                    tuple(extracted_forms([Triple(*t)])) == (unit.gold,)
                    for t in unit.gold_extracted
                )


def test_the_same_seed_makes_the_same_task(template, tasked, tmp_path, minilm):
    path = tmp_path / "again.duckdb"
    shutil.copy(template, path)
    again = Store(path)
    create_task(again, NAMES, 2, sample=6, seed=3, encoder=minilm)
    store, _ = tasked
    with store.connect() as con:
        want = aq.task_items(con, 1), aq.task_units(con, 1)
    with again.connect() as con:
        assert (aq.task_items(con, 1), aq.task_units(con, 1)) == want


def test_a_queue_is_done_item_by_item_and_skip_counts(fresh):
    store, _ = fresh
    with store.connect() as con:
        mine = queue(con, 1, "ann")
        first = queue_progress(con, 1, "ann")
    assert [q.position for q in mine] == [0, 1, 2, 3] and not any(q.done for q in mine)
    assert first.line() == "your queue: 0 of 4 done"
    assert first.next_item == (mine[0].run_id, mine[0].item_id)
    with store.connect() as con:
        units = item_units(con, 1, *first.next_item)
    for n, unit in enumerate(units):
        verdict = "skip" if n == 0 else "confirm"
        entry = save_decision(
            store,
            Decision("ann", unit.run_id, unit.item_id, unit.gold, unit.answer, verdict, task_id=1),
        )
        # the log takes the unit's category and extracted triples from the task
        assert entry.category == unit.category
        assert (entry.gold_extracted, entry.answer_extracted) == (
            unit.gold_extracted,
            unit.answer_extracted,
        )
    with store.connect() as con:
        after = queue_progress(con, 1, "ann")
        bob = queue_progress(con, 1, "bob")
    assert after.line() == "your queue: 1 of 4 done"
    assert after.next_item == (mine[1].run_id, mine[1].item_id)
    assert after.units_decided == len(units)
    assert bob.done == 0  # ann's decisions are hers
    undo_last(store, "ann")
    with store.connect() as con:
        assert queue_progress(con, 1, "ann").done == 0


def test_next_item_follows_the_current_one_and_wraps(fresh):
    store, _ = fresh
    with store.connect() as con:
        keys = [(q.run_id, q.item_id) for q in queue(con, 1, "bob")]
        assert queue_progress(con, 1, "bob", after=keys[1]).next_item == keys[2]
        assert queue_progress(con, 1, "bob", after=keys[-1]).next_item == keys[0]
        assert queue_progress(con, 1, "bob", after=(99, 99)).next_item == keys[0]
        everyone = task_progress(con, 1)
    assert [p.annotator for p in everyone] == NAMES
    assert [p.total for p in everyone] == [4, 4, 4]


def test_someone_outside_the_task_has_an_empty_queue(fresh):
    store, _ = fresh
    with store.connect() as con:
        progress = queue_progress(con, 1, "zed")
    assert (progress.done, progress.total, progress.next_item) == (0, 0, None)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"annotators": ["ann"], "overlap": 2}, AnnotationError, "between 1 and"),
        ({"annotators": ["ann", "a\x00"], "overlap": 1}, AnnotatorNameError, "U\\+0000"),
        ({"annotators": ["ann"], "overlap": 1, "run_ids": [9]}, AnnotationError, "run\\(s\\) 9"),
        (
            {"annotators": ["ann"], "overlap": 1, "threshold": "calibrated"},
            ConfigError,
            "calibrate",
        ),
    ],
)
def test_bad_tasks_are_named_errors_and_write_nothing(fresh, minilm, kwargs, error, message):
    store, _ = fresh
    with pytest.raises(error, match=message):
        create_task(store, encoder=minilm, **kwargs)
    with store.connect() as con:
        assert len(aq.tasks(con)) == 1


def test_an_unknown_task_is_a_named_error(fresh):
    store, _ = fresh
    with store.connect() as con, pytest.raises(AnnotationError, match="no annotation task 7"):
        queue_progress(con, 7, "ann")


def test_a_given_threshold_makes_other_units_and_is_in_the_signature(fresh, minilm):
    store, _ = fresh
    report = create_task(store, ["ann"], 1, sample=6, seed=3, encoder=minilm, threshold=0.99)
    assert report.tau_signature.endswith("|triple:0.99|component:0.76|threshold:given")
    with store.connect() as con:
        strict = aq.task_units(con, report.task_id)
        loose = aq.task_units(con, 1)
    aligned = lambda rows: sum(r["category"] == "aligned" for r in rows)  # noqa: E731
    assert aligned(strict) <= aligned(loose)
    assert {(r["run_id"], r["item_id"]) for r in strict} == {
        (r["run_id"], r["item_id"]) for r in loose
    }


# Regression: with --task, pairs added on the task's answers were left out (they are no task
# unit), so TAU's recall against a task's labels was always "untested".
def test_a_task_s_labels_include_the_pairs_added_on_its_answers(fresh):
    from s3kg_core.annotation.log import final_labels, judgements
    from s3kg_core.annotation.quality import annotation_report

    store, _ = fresh
    with store.connect() as con:
        mine = [(q.run_id, q.item_id) for q in queue(con, 1, "ann")]
        outside = next(
            (r, i) for r, i in aq.eligible_items(con) if (r, i) not in
            {(t["run_id"], t["item_id"]) for t in aq.task_items(con, 1)}
        )  # fmt: skip
    added = (("x", "r", "y"), ("x", "s", "y"))
    save_decision(store, Decision("ann", *mine[0], *added, "add", task_id=1))
    save_decision(store, Decision("ann", *outside, *added, "add"))
    with store.connect() as con:
        labels = final_labels(con, task_id=1)
        rows = judgements(con, task_id=1)
    assert labels[["run_id", "item_id", "label"]].values.tolist() == [[*mine[0], "add"]]
    assert [(j.unit[:2], j.value) for j in rows] == [(mine[0], "add")]
    report = annotation_report(store, task_id=1, bootstrap=0)
    assert report.quality.false_negative == 1 and report.quality.recall_tested


def test_roles_swapped_pairs_are_units_of_their_own():
    from s3kg_core.scoring.tau import Mismatch, TauResult

    swap = Mismatch(Triple("brutus", "kill", "caesar"), Triple("caesar", "kill", "brutus"),
                    "roles", "swapped", 0.97)  # fmt: skip
    units = units_of(1, 2, TauResult(roles_swapped=(swap,)), [], [])
    assert [(u.category, u.gold, u.answer) for u in units] == [
        ("roles_swapped", ("brutus", "kill", "caesar"), ("caesar", "kill", "brutus"))
    ]
    Decision("ann", 1, 2, units[0].gold, units[0].answer, "confirm", category="roles_swapped")


# -- the queue dealt out across TAU's categories (issue 58) -------------------------------------

# An answer's units by category, in the task's stored order: the first ten answers hold only
# extra and missing triples (the annotators labelled those and saw no aligned pair).
HAND_MADE = [
    *[("extra", "missing")] * 10,
    ("aligned", "extra"),
    ("relation_mismatch", "missing"),
    ("entity_mismatch",),
    ("aligned", "roles_swapped"),
]


@pytest.fixture
def handmade(tmp_path):
    """A real database with a task made before the queue was dealt out by category: ann and
    bob both hold every answer, in the stored order of :data:`HAND_MADE`."""
    store = build_store(tmp_path / "h.duckdb", n_items=len(HAND_MADE), n_triples=2, seed=5)
    with store.transaction() as con:
        keys = sorted(aq.eligible_items(con))[: len(HAND_MADE)]
        settings = json.dumps({"seed": 0, "items": len(keys)})
        task = aq.insert_task(con, name="old", created_at=now(), annotators=["ann", "bob"],
                              overlap=2, settings=settings)  # fmt: skip
        aq.insert_task_items(
            con, task, [(who, n, *key) for who in ("ann", "bob") for n, key in enumerate(keys)]
        )
        units = [
            Unit(*key, n, category,
                 None if category == "extra" else ("g", category, str(n)),
                 None if category == "missing" else ("a", category, str(n)), (), (), None)
            for key, categories in zip(keys, HAND_MADE, strict=True)
            for n, category in enumerate(categories)
        ]  # fmt: skip
        aq.insert_task_units(con, task, [u.to_row() for u in units])
    return store, task, keys


def test_a_queue_deals_its_answers_out_across_tau_s_categories(handmade):
    store, task, keys = handmade
    with store.connect() as con:
        ann, bob = queue(con, task, "ann"), queue(con, task, "bob")
    assert ann == bob  # the same answers: the same order, so their first decisions overlap
    assert [q.position for q in ann] == list(range(len(keys)))
    assert sorted((q.run_id, q.item_id) for q in ann) == keys
    first = [(q.run_id, q.item_id) for q in ann[:5]]
    assert first == [keys[10], keys[11], keys[12], keys[13], keys[0]]
    held = {c for q in ann[:3] for c in q.categories}
    assert held == {"aligned", "extra", "missing", "relation_mismatch", "entity_mismatch"}
    assert ann[0].categories == ("aligned", "extra") and ann[0].units == 2
    assert {c for q in ann[:5] for c in q.categories} == {c for cs in HAND_MADE for c in cs}


def test_decisions_made_before_keep_their_answers_done_and_never_next(handmade):
    """A task annotated in the stored order opens the new order on its first undone answer."""
    store, task, keys = handmade
    with store.connect() as con:
        done = keys[:2]  # ann judged the first two stored answers, in the old order
        judged = [u for key in done for u in item_units(con, task, *key)]
    for u in judged:
        save_decision(store, Decision("ann", u.run_id, u.item_id, u.gold, u.answer, "reject",
                                      task_id=task))  # fmt: skip
    with store.connect() as con:
        mine = queue(con, task, "ann")
        progress = queue_progress(con, task, "ann")
        walked, after = [], None
        for _ in range(len(mine)):
            after = queue_progress(con, task, "ann", after=after).next_item
            walked.append(after)
    assert [(q.run_id, q.item_id) for q in mine if q.done] == [keys[0], keys[1]]
    assert (progress.done, progress.units_decided) == (2, len(judged))
    assert progress.next_item == (mine[0].run_id, mine[0].item_id) == keys[10]
    assert not set(done) & set(walked)  # "next" never re-shows a decided answer
    assert set(walked) == set(keys) - set(done)
    from s3kg_core.annotation.quality import category_precision

    found = category_precision(store, task_id=task)  # the old decisions keep their meaning
    assert (found["extra"].n, found["missing"].n, found["aligned"].n) == (2, 2, 0)
    assert found["extra"].value == 0.0


def test_a_made_task_s_queues_cover_their_categories_first(tasked):
    store, _ = tasked
    with store.connect() as con:
        for name in NAMES:
            mine = queue(con, 1, name)
            present = {c for q in mine for c in q.categories}
            assert present and {c for q in mine[: len(present)] for c in q.categories} == present
