"""Tests of dashboard/leaderboard.py."""

from __future__ import annotations

import doctest

import dashboard.leaderboard as module
from s3kg_core.analysis.compare import Verdict


def test_the_module_doctests_pass():
    assert doctest.testmod(module).failed == 0


def test_the_swap_note_escapes_run_names_and_datasets():
    import pandas as pd

    hostile = "[x](http://127.0.0.1:9/) *b* <img src=x onerror=alert(1)>"
    board = pd.DataFrame(
        {"dataset": [hostile] * 2, "run_id": [2, 1], "model": [hostile, "a"],
         "temperature": [0.0, 0.7], "rank": [1, 2], "reference_rank": [2, 1]}
    )  # fmt: skip
    note = module.swap_note(board, 0.9)
    assert note is not None and "](http" not in note and "*b*" not in note
    assert "\\[x\\]" in note
    assert module.swap_note(board, 0.5) is None  # at the reference alpha nothing moved


def test_a_new_alpha_that_moves_no_run_says_so():
    """Issue 43 (item 11): when no run changed rank at a new alpha the page said nothing."""
    import pandas as pd

    board = pd.DataFrame(
        {"dataset": ["d"] * 2, "run_id": [2, 1], "model": ["b", "a"],
         "temperature": [0.0, 0.7], "rank": [1, 2], "reference_rank": [1, 2]}
    )  # fmt: skip
    assert module.swap_note(board, 0.8) == "At alpha 0.8 against 0.5: no run changed places."
    assert module.swap_note(board, 0.5) is None


def test_the_table_keeps_the_boards_order_and_marks_partial_runs():
    import pandas as pd

    board = pd.DataFrame(
        {"dataset": ["d", "d", "e"], "rank": [1, 2, 1], "run_id": [3, 1, 2],
         "model": ["m", "m", "n"], "temperature": [0.0, 0.0, 0.7], "extractor": ["x"] * 3,
         "n": [4, 4, 2], "gold_sim": [.5, .4, .3], "ctx_sim": [.5, .4, .3], "cus": [.5, .4, .3],
         "low": [.4, .3, .2], "high": [.6, .5, .4],
         "verdict": [None, Verdict(None, True, 4, "BCa"), None],
         "rank_change": [0, 0, 0], "reference_rank": [1, 2, 1]}
    )  # fmt: skip
    runs = pd.DataFrame({"run_id": [1, 2, 3], "model_id": ["org/m", "n", "other/m"]})
    table = module.table(board, runs, {1: (2, 4)}, "gold_sim", 0.5)
    assert table["run_id"].tolist() == [3, 1, 2]
    assert table["model"].tolist() == ["other/m", "org/m", "n"]
    assert table["run"].tolist() == ["m · run 3", "m · run 1", "n"]  # same name and settings
    labelled = runs.assign(label=["a", "b", "c"])
    assert module.table(board, labelled, {}, "cus", 0.5)["run"].tolist() == ["c", "a", "b"]
    assert table["mean"].tolist() == [0.5, 0.4, 0.3]  # the ranked score's mean (GoldSim)
    assert table["scoring"].tolist() == ["complete", "partial: 2 of 4 scored", "complete"]
    assert list(table.columns) == list(module.TABLE_COLUMNS)
    # the verdict against #1 and the test behind it, one column each (issue 58)
    assert table[["verdict", "test"]].values.tolist() == [
        ["", ""], ["no clear difference", "paired bootstrap over 4 shared questions"], ["", ""],
    ]  # fmt: skip


def test_the_test_note_names_the_test_and_the_runs_judged_without_it():
    """Issue 58: the Overview names the test behind its verdicts, and says where runs that
    answered other questions than #1 were judged by the overlap of intervals."""
    import pandas as pd

    paired, unpaired = (
        "paired bootstrap over 30 shared questions",
        "intervals of different question sets",
    )
    rows = pd.DataFrame(
        {"run": ["lead", "b", "c", "d_e"], "test": ["", paired, unpaired, unpaired]}
    )
    note = module.test_note(rows)
    assert note.startswith("**vs #1**, each run's mean against the dataset's #1: b by the paired")
    assert "c, d\\_e by the intervals of different question sets: they and #1 answered" in note
    assert "only the two 95% intervals compare" in note
    assert module.test_note(rows.iloc[:2]).endswith(
        "by the paired bootstrap over 30 shared questions, as the Run comparison and "
        "`s3kg check` compare two runs."
    )
    assert module.test_note(rows.iloc[:1]) is None
    # the note on other questions follows their clause, whatever the order of the rows
    swapped = module.test_note(rows.iloc[[0, 2, 1, 3]])
    assert swapped == note
