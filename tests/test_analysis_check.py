"""Tests of s3kg_core.analysis.check: the gates on runs built to pass and to fail, and on pair
files."""

from __future__ import annotations

import doctest
import math
from pathlib import Path

import pytest
from store_helpers import CHECK_ITEMS

import s3kg_core.analysis.check as check_module
from s3kg_core.analysis.check import (
    EXIT_FAILED,
    EXIT_PASSED,
    REGRESSION_COLUMNS,
    CheckSettings,
    check_pairs,
    check_runs,
    read_pair_scores,
)
from s3kg_core.errors import ComparisonError, ConfigError, InputFormatError, RunSelectionError
from s3kg_core.store.store import Store

FAST = CheckSettings(resamples=999)


def _gates(result):
    return {g.name: g for g in result.gates}


def test_the_module_doctests_pass():
    result = doctest.testmod(check_module)
    assert result.attempted >= 1 and result.failed == 0


def test_a_steady_run_passes_every_gate(check_store):
    result = check_runs(check_store, "steady", "baseline", settings=FAST)
    gates = _gates(result)
    assert list(gates) == ["cus_drop", "gold_sim_drop", "ctx_sim_drop", "new_unscorable"]
    assert result.passed and result.exit_code == EXIT_PASSED
    cus = result.comparison.differences["cus"]
    assert -0.02 < cus.difference < 0  # a small drop, within the bound
    assert gates["cus_drop"].value == pytest.approx(cus.difference)
    assert result.verdict() == "passed: 4 gates"
    assert result.lines()[0] == (
        "s3kg check: steady (run 2) against baseline (run 1): passed: 4 gates"
    )
    facts = dict(result.facts)
    assert facts["questions compared"] == str(CHECK_ITEMS)
    assert facts["dataset"] == "trial"
    assert facts["bootstrap"] == (
        "paired, 999 resamples, seed 0, 95% intervals, the normal approximation from 1000 "
        "paired values"
    )
    # the verdict every surface gives the two runs (issue 58): the cus_drop gate's interval
    assert facts["mean CUS against the baseline"] == result.comparison.verdict().text()
    assert result.comparison.verdict().test() == (
        f"paired bootstrap over {CHECK_ITEMS} shared questions"
    )
    assert f"  mean CUS against the baseline: {result.comparison.verdict().text()}" in (
        result.lines()
    )


def test_a_worse_run_fails_the_drop_gates(check_store):
    result = check_runs(check_store, "worse", "baseline", settings=FAST)
    gates = _gates(result)
    assert [g.name for g in result.failed] == ["cus_drop", "gold_sim_drop", "ctx_sim_drop"]
    assert result.exit_code == EXIT_FAILED
    assert result.verdict() == "FAILED: 3 of 4 gates"
    cus = result.comparison.differences["cus"]
    assert cus.high < -0.02  # the rule: the whole interval below -max_drop
    assert gates["cus_drop"].measured.startswith(f"{cus.difference:+.4f} (95% interval ")
    assert gates["cus_drop"].rule == (
        "the whole 95% interval is below -0.02 (a drop larger than 0.02)"
    )
    assert list(result.regressions.columns) == list(REGRESSION_COLUMNS)
    assert len(result.regressions) == 10  # the ten worst
    assert result.regressions["change"].is_monotonic_increasing
    worst = result.comparison.deltas.iloc[0]
    assert result.regressions.iloc[0]["id"] == worst["ext_id"]
    assert "FAIL cus_drop: " in "\n".join(result.lines())


def test_the_drop_bound_is_what_decides(check_store):
    # the steady run's CUS interval reaches below -0.02 but not all of it: inconclusive, passes;
    # a bound of 0.001 under the whole interval fails it
    steady = check_runs(check_store, "steady", "baseline", settings=FAST)
    interval = steady.comparison.differences["cus"]
    assert interval.low < -0.02 <= interval.high
    assert _gates(steady)["cus_drop"].inconclusive
    assert "inconclusive" in _gates(steady)["cus_drop"].detail
    tight = CheckSettings(resamples=999, max_drop=-interval.high / 2, max_gold_drop=1.0)
    result = check_runs(check_store, "steady", "baseline", settings=tight)
    assert [g.name for g in result.failed] == ["cus_drop"]
    loose = CheckSettings(resamples=999, max_drop=1.0)
    assert check_runs(check_store, "worse", "baseline", settings=loose).passed


def test_answers_that_became_unscorable_fail_their_gate(check_store):
    result = check_runs(check_store, "broken", "baseline", settings=FAST)
    gate = _gates(result)["new_unscorable"]
    assert not gate.passed and gate.value == 3.0
    assert gate.measured == f"3 of {CHECK_ITEMS} in the baseline"
    assert gate.detail == (
        "0001: answer_kg_empty; 0002: answer_kg_empty; 0003: kg_extraction_failed"
    )
    assert result.unscorable["id"].tolist() == ["0001", "0002", "0003"]
    allowed = CheckSettings(resamples=999, max_new_unscorable=3)
    assert _gates(check_runs(check_store, "broken", "baseline", settings=allowed))[
        "new_unscorable"
    ].passed


def test_min_cus_with_and_without_a_baseline(check_store):
    alone = check_runs(check_store, "worse", settings=CheckSettings(min_cus=0.5))
    assert [g.name for g in alone.gates] == ["min_cus"]
    gate = alone.gates[0]
    assert not gate.passed and gate.value < 0.5
    assert gate.measured.endswith(f"over {CHECK_ITEMS} scored answers")
    assert alone.comparison is None and alone.regressions.empty
    assert alone.title == "worse (run 3)"
    ok = check_runs(check_store, "baseline", settings=CheckSettings(min_cus=0.5))
    assert ok.passed and ok.gates[0].value > 0.5
    both = check_runs(
        check_store, "steady", "baseline", settings=CheckSettings(resamples=999, min_cus=0.99)
    )
    assert [g.name for g in both.failed] == ["min_cus"]


def test_the_empty_policy_moves_the_means(check_store):
    zero = check_runs(check_store, "broken", settings=CheckSettings(min_cus=0.0))
    drop = check_runs(check_store, "broken", settings=CheckSettings(min_cus=0.0), empty="drop")
    assert drop.gates[0].value > zero.gates[0].value
    assert dict(drop.facts)["empty KGs"] == "left out (--empty drop)"


@pytest.mark.parametrize(
    ("new", "baseline", "settings", "error", "message"),
    [
        ("nope", "baseline", FAST, RunSelectionError, "no run 'nope'"),
        ("twin", "baseline", FAST, RunSelectionError, "fits 2 runs"),
        ("elsewhere", "baseline", FAST, ComparisonError, "other datasets"),
        ("steady", None, FAST, ConfigError, "nothing to check"),
    ],
)
def test_input_that_cannot_be_checked(check_store, new, baseline, settings, error, message):
    with pytest.raises(error, match=message):
        check_runs(check_store, new, baseline, settings=settings)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_drop": -0.1}, "max_drop must be"),
        ({"max_gold_drop": math.nan}, "max_gold_drop must be"),
        ({"max_new_unscorable": -1}, "max_new_unscorable"),
        ({"confidence": 1.5}, "confidence"),
        ({"resamples": 10}, "resamples"),
    ],
)
def test_settings_are_checked(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        CheckSettings(**kwargs)


# -- pair files ----------------------------------------------------------------------------------


def _pairs(path: Path, rows: list[tuple[str, float, str]]) -> Path:
    lines = ["id,s_wl,s_sbert,s3kg,status"]
    lines += [f"{i},{s!r},{s!r},{s!r},{status}" for i, s, status in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _scores(n: int, shift: float) -> list[float]:
    return [
        round(min(1.0, max(0.0, 0.3 + 0.4 * ((i * 37) % 11) / 10 + shift)), 4) for i in range(n)
    ]


def test_pair_files_pass_and_fail(tmp_path):
    base = _pairs(tmp_path / "old.csv", [(f"p{i}", s, "ok") for i, s in enumerate(_scores(40, 0))])
    same = _pairs(
        tmp_path / "same.csv", [(f"p{i}", s, "ok") for i, s in enumerate(_scores(40, 0.001))]
    )
    worse_rows = [(f"p{i}", s, "ok") for i, s in enumerate(_scores(40, -0.1))]
    worse_rows[3] = ("p3", 0.0, "empty_kg_2")
    worse = _pairs(tmp_path / "worse.csv", worse_rows)
    ok = check_pairs(same, base, settings=FAST)
    assert ok.passed and [g.name for g in ok.gates] == ["s3kg_drop", "new_failed"]
    bad = check_pairs(worse, base, settings=FAST)
    assert [g.name for g in bad.failed] == ["s3kg_drop", "new_failed"]
    assert bad.unscorable.to_dict("records") == [
        {"id": "p3", "question": "", "baseline": "ok", "new": "empty_kg_2"}
    ]
    assert bad.title == "worse.csv against old.csv"
    assert dict(bad.facts)["pairs compared"] == "40"
    floor = check_pairs(worse, settings=CheckSettings(min_score=0.5))
    assert [g.name for g in floor.gates] == ["min_score"]
    assert floor.gates[0].value == pytest.approx(sum(r[1] for r in worse_rows) / 40)


def test_repeated_ids_pair_row_by_row(tmp_path):
    path = _pairs(tmp_path / "r.csv", [("a", 0.5, "ok"), ("a", 0.7, "ok"), ("b", 0.1, "ok")])
    frame = read_pair_scores(path)
    assert frame[["id", "occurrence"]].values.tolist() == [["a", 0], ["a", 1], ["b", 0]]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,score\n1,0.5\n", "no s3kg, status column"),
        ("id,s3kg,status\n", "no rows to check"),
        ("id,s3kg,status\n1,high,ok\n", "s3kg 'high' is not a number"),
        ("id,s3kg,status\n1,nan,ok\n", "is not finite"),
    ],
)
def test_bad_pair_files_are_refused(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        read_pair_scores(path)


def test_pair_files_sharing_no_id_or_nothing_to_check(tmp_path):
    a = _pairs(tmp_path / "a.csv", [("x", 0.5, "ok")])
    b = _pairs(tmp_path / "b.csv", [("y", 0.5, "ok")])
    with pytest.raises(ComparisonError, match="share no pair id"):
        check_pairs(a, b, settings=FAST)
    with pytest.raises(ConfigError, match="nothing to check"):
        check_pairs(a)


# -- issue 44 item 4: NaN measures and missing questions/rows -------------------------------------


def _copy(check_store, tmp_path):
    import shutil

    from s3kg_core.store.store import Store

    path = tmp_path / "copy.duckdb"
    shutil.copy(check_store.path, path)
    return Store(path)


def test_nan_in_the_stored_scores_fails_the_gates_it_reaches(check_store, tmp_path):
    # regression: gold_sim_drop printed `+nan ... PASS` (a NaN interval never lies below -0.02)
    store = _copy(check_store, tmp_path)
    with store.transaction() as con:
        con.execute(
            "UPDATE scores SET gold_s_wl = 'nan'::DOUBLE WHERE run_id = 2 AND item_id IN "
            "(SELECT item_id FROM items WHERE ext_id = '0004')"
        )
    result = check_runs(store, "steady", "baseline", settings=FAST)
    gates = _gates(result)
    assert [g.name for g in result.failed] == ["cus_drop", "gold_sim_drop"]
    assert result.exit_code == EXIT_FAILED
    gold = gates["gold_sim_drop"]
    assert gold.measured == "not a number: 1 stored scores hold NaN"
    assert gold.detail.startswith("NaN in the stored scores of 0004: the database is damaged")
    assert math.isnan(gold.value)
    assert gates["ctx_sim_drop"].passed
    alone = check_runs(store, "steady", settings=CheckSettings(min_cus=0.0))
    assert not alone.passed and alone.gates[0].measured.startswith("not a number")


def test_questions_the_new_run_did_not_answer_count_against_it(check_store, tmp_path):
    # regression: a run that answered 1 of the baseline's questions passed every gate
    store = _copy(check_store, tmp_path)
    with store.transaction() as con:
        for table in ("answers", "kgs", "triples", "scores"):
            con.execute(
                f"DELETE FROM {table} WHERE run_id = 2 AND item_id NOT IN "
                "(SELECT item_id FROM items WHERE ext_id = '0000')"
            )
    result = check_runs(store, "steady", "baseline", settings=FAST)
    gate = _gates(result)["new_unscorable"]
    assert not gate.passed and result.exit_code == EXIT_FAILED
    assert gate.measured == f"{CHECK_ITEMS - 1} of {CHECK_ITEMS} in the baseline"
    assert gate.detail.startswith("0001: missing; 0002: missing")
    assert set(result.unscorable["new"]) == {"missing"}
    allowed = CheckSettings(resamples=999, allow_missing=True)
    relaxed = check_runs(store, "steady", "baseline", settings=allowed)
    assert _gates(relaxed)["new_unscorable"].measured == "0 of 1 shared"
    assert relaxed.passed


def test_rows_missing_from_a_new_pair_file_count_against_it(tmp_path):
    # regression: 1 of the baseline's 100 rows gave `new_failed: 0 of 1 shared`, exit 0
    rows = [(f"p{i}", s, "ok") for i, s in enumerate(_scores(100, 0))]
    base = _pairs(tmp_path / "old.csv", rows)
    one = _pairs(tmp_path / "one.csv", rows[:1])
    result = check_pairs(one, base, settings=FAST)
    gate = _gates(result)["new_failed"]
    assert not gate.passed and result.exit_code == EXIT_FAILED
    assert gate.measured == "99 of 100 in the baseline"
    assert gate.detail.startswith("p1: missing; p2: missing")
    allowed = check_pairs(one, base, settings=CheckSettings(resamples=999, allow_missing=True))
    assert _gates(allowed)["new_failed"].measured == "0 of 1 shared" and allowed.passed


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("id,s3kg,status\n1,5,ok\n", r"row 1 \(id '1'\): s3kg 5 is outside \[0, 1\]"),
        ("id,s3kg,status\n1,-0.1,ok\n", r"s3kg -0.1 is outside \[0, 1\]"),
    ],
)
def test_scores_outside_0_1_are_refused(tmp_path, text, message):
    # regression: a pairs file with s3kg = 5 was accepted
    path = tmp_path / "bad.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=message):
        read_pair_scores(path)


def test_a_binary_file_is_named_in_one_short_printable_line(tmp_path):
    # regression: `check --pairs` on a binary file echoed thousands of garbage characters
    path = tmp_path / "bin.csv"
    path.write_bytes(bytes(range(1, 256)).replace(b"\n", b"").replace(b"\r", b"") * 40)
    with pytest.raises(InputFormatError) as caught:
        read_pair_scores(path)
    message = str(caught.value)
    assert len(message) < 200 and message.isprintable() and message.endswith("...")


def test_a_check_opens_the_database_once(check_store, monkeypatch):
    """``check_runs`` reads in several steps (runs, signature, scores, statuses); they share one
    connection (``Store.session``), not one each (the Run comparison page runs a check per alpha
    of its slider)."""
    import s3kg_core.store.store as store_module

    opened: list[str] = []
    real = store_module.attached_read_only

    def counting(path):
        opened.append(path)
        return real(path)

    monkeypatch.setattr(store_module, "attached_read_only", counting)
    reader = Store(check_store.path, read_only=True)
    result = check_runs(reader, "steady", "baseline", settings=FAST)
    assert result.passed and opened == [str(check_store.path)]
