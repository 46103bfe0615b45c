"""The demo's precomputed benchmark results: the shipped file, storing it, and its exporter."""

from __future__ import annotations

import importlib.util
import json

import pytest
from store_helpers import REPO

from s3kg_core import SCORING_VERSION
from s3kg_core.errors import InputFormatError
from s3kg_core.evaluation.demo_results import (
    BENCH_FILE,
    BENCH_FORMAT,
    is_precomputed,
    read_bench_file,
    store_demo_bench,
)
from s3kg_core.evaluation.pairs import load_bench_results
from s3kg_core.store.schema import BENCH_COLUMNS
from s3kg_core.store.store import Store

PER_PAIR = ("ids", "labels", "scores")


def test_the_shipped_file_holds_the_projects_figures_and_nothing_of_the_pairs():
    content = read_bench_file()
    assert content["format"] == BENCH_FORMAT
    # the default mode at this scoring version
    assert content["signature"].startswith("mode:ot|enc:minilm@0.1.0")
    assert content["signature"].endswith(f"|version:{SCORING_VERSION}")
    assert "s3kg bench pairs" in content["command"] and "--bootstrap 200" in content["command"]
    rows = content["rows"]
    methods = {r["method"] for r in rows}
    assert {"s3kg", "s3kg@hybrid", "s3kg@kgx", "rouge1", "bertscore"} <= methods
    assert len(content["datasets"]) == 9 and len(rows) == 9 * len(methods)
    assert all(k not in r["detail"] for r in rows for k in PER_PAIR)
    # the same figures as the separate ot/hybrid run in evidence/pairs_ot.json (test AUROC,
    # dev-test protocol, MiniLM), to the third decimal
    ot = json.loads((REPO / "evidence" / "pairs_ot.json").read_text())["figures"]["sets"]
    for method, mode in (("s3kg", "ot"), ("s3kg@hybrid", "hybrid")):
        shipped = {r["dataset"]: r["auroc"] for r in rows if r["method"] == method}
        assert shipped.keys() == ot.keys()
        for name, auroc in shipped.items():
            assert abs(auroc - ot[name][mode]["auroc"]) < 2e-3, (method, name)
    assert {r["detail"]["protocol"] for r in rows} == {"dev-test"}


def test_the_demo_rows_are_stored_marked_and_a_run_of_ones_own_replaces_them(tmp_path):
    store = Store(tmp_path / "b.duckdb")
    n = store_demo_bench(store)
    rows = load_bench_results(store)
    assert n == len(rows) == len(read_bench_file()["rows"])
    assert all(is_precomputed(r["detail"]) for r in rows)
    mark = rows[0]["detail"]["precomputed"]
    assert mark["generated_by"] == "scripts/make_demo_bench.py" and mark["created"]
    # a later `s3kg bench pairs --db` row of the same key replaces the precomputed one
    mine = {**rows[0], "detail": json.dumps({"protocol": "same"})}
    with store.transaction() as con:
        store.put_bench_results(con, [tuple(mine[c] for c in BENCH_COLUMNS)])
    again = load_bench_results(store)
    assert len(again) == n and sum(not is_precomputed(r["detail"]) for r in again) == 1


def test_a_missing_file_stores_nothing_and_a_bad_one_is_a_clear_error(tmp_path):
    store = Store(tmp_path / "b.duckdb")
    assert store_demo_bench(store, tmp_path / "none.json") == 0
    bad = tmp_path / "bad.json"
    for text, message in (
        ("not json", "cannot read"),
        ('{"format": "other"}', "format"),
        (json.dumps({"format": BENCH_FORMAT, "rows": [{"dataset": "x"}]}), "row 1 lacks"),
    ):
        bad.write_text(text, encoding="utf-8")
        with pytest.raises(InputFormatError, match=message):
            store_demo_bench(store, bad)


def test_the_exporter_drops_per_pair_data_and_writes_a_readable_file(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "make_demo_bench", REPO / "scripts" / "make_demo_bench.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    source = Store(tmp_path / "src.duckdb")
    row = {**read_bench_file()["rows"][0]}
    row["detail"] = json.dumps({**row["detail"], "ids": [1], "labels": [0], "scores": [0.2]})
    with source.transaction() as con:
        source.put_bench_results(con, [tuple(row[c] for c in BENCH_COLUMNS)])
    out = tmp_path / "bench_results.json"
    assert script.main(["--db", str(source.path), "--command", "s3kg bench pairs --x", "--out",
                        str(out), "--created", "2026-01-02"]) == 0  # fmt: skip
    written = read_bench_file(out)
    assert written["created"] == "2026-01-02" and written["command"] == "s3kg bench pairs --x"
    assert [r["method"] for r in written["rows"]] == [row["method"]]
    assert all(k not in written["rows"][0]["detail"] for k in PER_PAIR)
    assert BENCH_FILE.name == out.name
