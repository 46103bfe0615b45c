"""The finished sets of a killed benchmark run (s3kg_core.evaluation.resume.PartialResults)."""

from __future__ import annotations

import json

import pytest

from s3kg_core.evaluation.resume import PARTIAL_SUFFIX, PartialResults

OPTIONS = {"encoder": "minilm", "mode": "paper", "methods": ["s3kg"], "seed": 0, "db": None}


def test_the_file_sits_beside_the_json_and_is_created_on_the_first_set(tmp_path):
    partial = PartialResults(tmp_path / "all.json", OPTIONS)
    assert partial.path == tmp_path / f"all.json{PARTIAL_SUFFIX}"
    assert partial.path.name == "all.json.partial.jsonl"
    assert not partial.path.exists() and partial.get("toy_a", 8) is None
    partial.add("toy_a", 8, {"n": 8, "methods": {}})
    assert partial.path.exists()


def test_the_file_format_is_one_json_line_per_set(tmp_path):
    partial = PartialResults(tmp_path / "all.json", OPTIONS)
    partial.add("toy_a", 8, {"n": 8})
    partial.add("toy_b", 5, {"n": 5})
    rows = [json.loads(line) for line in partial.path.read_text().splitlines()]
    assert rows == [
        {"dataset": "toy_a", "pairs": 8, "options": OPTIONS, "result": {"n": 8}},
        {"dataset": "toy_b", "pairs": 5, "options": OPTIONS, "result": {"n": 5}},
    ]
    assert list(rows[0]) == ["dataset", "pairs", "options", "result"]


def test_a_rerun_with_the_same_options_gets_the_finished_sets(tmp_path):
    PartialResults(tmp_path / "all.json", OPTIONS).add("toy_a", 8, {"n": 8, "f1": 0.5})
    again = PartialResults(tmp_path / "all.json", dict(OPTIONS))
    assert again.get("toy_a", 8) == {"n": 8, "f1": 0.5}
    assert again.get("toy_b", 5) is None


@pytest.mark.parametrize(
    ("name", "pairs", "options"),
    [
        ("toy_a", 9, OPTIONS),  # the set changed size
        ("toy_a", 8, {**OPTIONS, "seed": 1}),  # other options
        ("toy_a", 8, {k: v for k, v in OPTIONS.items() if k != "db"}),  # an option missing
        ("other", 8, OPTIONS),
    ],
)
def test_another_size_or_other_options_are_scored_again(tmp_path, name, pairs, options):
    PartialResults(tmp_path / "o.json", OPTIONS).add("toy_a", 8, {"n": 8})
    assert PartialResults(tmp_path / "o.json", options).get(name, pairs) is None


def test_options_compare_as_they_read_back_from_json(tmp_path):
    tuple_options = {"methods": ("s3kg", "rouge1"), "alpha": 0.5}
    PartialResults(tmp_path / "o.json", tuple_options).add("toy_a", 8, {"n": 8})
    again = PartialResults(tmp_path / "o.json", {"methods": ["s3kg", "rouge1"], "alpha": 0.5})
    assert again.options == {"methods": ["s3kg", "rouge1"], "alpha": 0.5}
    assert again.get("toy_a", 8) == {"n": 8}


def test_lines_cut_by_a_kill_or_malformed_are_skipped(tmp_path):
    path = tmp_path / "o.json.partial.jsonl"
    good = {"dataset": "toy_a", "pairs": 8, "options": OPTIONS, "result": {"n": 8}}
    path.write_text(
        "\n".join(
            [
                json.dumps({"dataset": "toy_b", "pairs": 5, "options": OPTIONS}),  # no result
                json.dumps({**good, "pairs": "many"}),  # not a count
                "[1, 2]",  # not an object
                json.dumps(good),
                json.dumps({**good, "dataset": "toy_c"})[:-7],  # cut short
            ]
        )
    )
    partial = PartialResults(tmp_path / "o.json", OPTIONS)
    assert partial.get("toy_a", 8) == {"n": 8}
    assert partial.get("toy_b", 5) is None and partial.get("toy_c", 8) is None


def test_a_set_added_is_appended_after_what_a_killed_run_left(tmp_path):
    first = PartialResults(tmp_path / "o.json", OPTIONS)
    first.add("toy_a", 8, {"n": 8})
    second = PartialResults(tmp_path / "o.json", OPTIONS)
    second.add("toy_b", 5, {"n": 5})
    assert second.get("toy_b", 5) == {"n": 5}
    names = [json.loads(line)["dataset"] for line in second.path.read_text().splitlines()]
    assert names == ["toy_a", "toy_b"]
    third = PartialResults(tmp_path / "o.json", OPTIONS)
    assert third.get("toy_a", 8) == {"n": 8} and third.get("toy_b", 5) == {"n": 5}


def test_remove_deletes_the_file_and_tolerates_its_absence(tmp_path):
    partial = PartialResults(tmp_path / "o.json", OPTIONS)
    partial.remove()  # nothing there yet
    partial.add("toy_a", 8, {"n": 8})
    partial.remove()
    assert not partial.path.exists()
    assert PartialResults(tmp_path / "o.json", OPTIONS).get("toy_a", 8) is None
