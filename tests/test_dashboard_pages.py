"""Every dashboard page driven by streamlit.testing on the real demo database.

The session fixture builds the demo database exactly as a first start does (``ensure_database``
on a missing file: import, offline extraction, MiniLM scoring, TAU), so the embedded default
is tested too.
"""

from __future__ import annotations

import duckdb
from store_helpers import REPO
from streamlit.testing.v1 import AppTest

PAGES = {
    "overview": REPO / "app.py",
    "sample": REPO / "pages" / "1_Sample_explorer.py",
    "tau": REPO / "pages" / "2_Failure_analysis.py",
    "annotate": REPO / "pages" / "3_Annotate.py",
    "factuality": REPO / "pages" / "6_Factuality.py",
}


def _app(page: str) -> AppTest:
    at = AppTest.from_file(str(PAGES[page]), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _frame_with(at: AppTest, *columns: str):
    """The first dataframe shown with all these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_the_demo_database_holds_two_scored_smollm2_runs(demo_db):
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        runs = con.execute("SELECT model, temperature, extractor FROM runs ORDER BY 2").fetchall()
        n_scores = con.execute("SELECT count(*) FROM scores").fetchall()[0][0]
        n_items = con.execute("SELECT count(*) FROM items").fetchall()[0][0]
        evals = con.execute("SELECT name, model FROM factuality_evals ORDER BY 1").fetchall()
    finally:
        con.close()
    assert [(m, t) for m, t, _ in runs] == [
        ("SmolLM2-135M-Instruct", 0.0),
        ("SmolLM2-135M-Instruct", 0.7),
    ]
    assert all(e.startswith("offline:") for _, _, e in runs)
    assert n_items == 30 and n_scores == 60
    # the factuality judge's evaluations of the real SmolLM2 run (data/demo/factuality_eval.json)
    assert [n for n, _ in evals] == ["smollm2-findkg-calibrated", "smollm2-findkg-raw"]


def test_overview_leaderboard_follows_the_alpha_slider(db):
    at = _app("overview")
    assert _metric(at, "Answers scored") == "60"
    before = _metric(at, "Mean CUS")
    board = _frame_with(at, "model", "n", "gold_sim", "ctx_sim", "cus")
    assert len(board) == 2 and set(board["model"]) == {"SmolLM2-135M-Instruct"}
    at.sidebar.slider(key="alpha").set_value(1.0).run()
    assert not at.exception
    after = _metric(at, "Mean CUS")
    assert after != before
    assert any("alpha:1" in c.value for c in at.caption)
    at.radio(key="dist_metric").set_value("ctx_sim").run()
    assert not at.exception


def test_alpha_is_kept_when_moving_to_another_page(db):
    at = _app("overview")
    at.sidebar.slider(key="alpha").set_value(0.8).run()
    assert at.session_state["_alpha_value"] == 0.8


def test_sample_explorer_recomputes_alignment_when_tau_moves(db):
    at = _app("sample")
    assert any("Alignment as stored" in c.value for c in at.caption)
    items = at.selectbox(key="explorer_item")
    items.select_index(len(items.options) - 1).run()  # the best answer
    assert not at.exception
    at.slider(key="explorer_tau").set_value(0.9).run()
    assert not at.exception
    assert any("recomputed at tau 0.9" in c.value for c in at.caption)
    run = at.selectbox(key="explorer_run")
    run.select_index(len(run.options) - 1).run()
    assert not at.exception


def test_failure_analysis_counts_categories_and_opens_cases(db):
    at = _app("tau")
    table = _frame_with(at, "relation_mismatch", "extra")
    assert {"relation_mismatch", "entity_mismatch", "extra", "missing"} <= set(table.columns)
    assert table[["extra", "missing"]].to_numpy().sum() > 0
    at.slider(key="tau_percent").set_value(20).run()
    assert not at.exception
    assert any("answers: the lowest 20 %" in c.value for c in at.caption)
    at.radio(key="tau_target").set_value("ctx_sim").run()
    assert not at.exception
    case = at.selectbox(key="tau_case")
    case.select_index(len(case.options) - 1).run()
    assert not at.exception


def test_annotations_are_saved_and_agreement_is_reported(db):
    at = _app("annotate")
    save = next(b for b in at.button if b.key == "save")
    assert save.disabled  # no name yet
    at.text_input(key="annotator").set_value("ann").run()
    at.selectbox(key="add_gold").select_index(0).run()
    at.selectbox(key="add_answer").select_index(0).run()
    next(b for b in at.button if b.key == "add_pair").click().run()
    assert not at.exception
    next(b for b in at.button if b.key == "save").click().run()
    assert not at.exception
    assert any("Saved" in s.value and "ann" in s.value for s in at.success)
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT annotator, verdict FROM annotations").fetchall()
    finally:
        con.close()
    assert rows and {a for a, _ in rows} == {"ann"} and ("ann", "add") in rows
    assert any(m.label == "TAU precision" for m in at.metric)
    # a second annotator's verdicts on the same answer: agreement becomes defined
    at.text_input(key="annotator").set_value("bob").run()
    at.selectbox(key="add_gold").select_index(0).run()
    at.selectbox(key="add_answer").select_index(0).run()
    next(b for b in at.button if b.key == "add_pair").click().run()
    next(b for b in at.button if b.key == "save").click().run()
    assert not at.exception
    assert _metric(at, "Percent agreement") == "100.0%"


def test_importing_the_released_runs_from_the_sidebar(db, shared_data):
    folder = shared_data / "s3kg_release" / "qa" / "small"
    at = _app("overview")
    at.sidebar.text_input(key="release_folder").set_value(str(folder)).run()
    at.sidebar.button(key="release_import").click().run()
    assert not at.exception
    assert any("Imported" in s.value for s in at.sidebar.success)
    con = duckdb.connect(str(db), read_only=True)
    try:
        n_runs = con.execute("SELECT count(*) FROM runs").fetchall()[0][0]
    finally:
        con.close()
    assert n_runs > 2


def test_a_missing_folder_is_a_clear_error(db, tmp_path):
    at = _app("overview")
    at.sidebar.text_input(key="release_folder").set_value(str(tmp_path / "nope")).run()
    at.sidebar.button(key="release_import").click().run()
    assert any("is not a folder" in e.value for e in at.sidebar.error)


PAGES["bench"] = REPO / "pages" / "4_Benchmarks.py"


def test_benchmarks_page_says_how_to_fill_it_when_empty(db):
    at = _app("bench")
    assert any("s3kg bench pairs" in i.value for i in at.info)


def test_benchmarks_page_shows_tables_curves_and_wrong_pairs(db, minilm):
    from test_bench_runner import separable_rows

    from s3kg_core.bench.datasets import PairSet
    from s3kg_core.bench.runner import run_pair_benchmark, store_bench_result
    from s3kg_core.store.store import Store

    rows = separable_rows()
    rows[0]["label"] = "0" if rows[0]["label"] == "1" else "1"  # one pair every method gets wrong
    pairs = PairSet.from_rows("toy_pairs", rows)
    for mode in ("paper", "kgx"):
        result = run_pair_benchmark(
            pairs,
            encoder=minilm,
            mode=mode,
            methods=["s3kg", f"s3kg@{mode}", "rouge1"],
            bootstrap=50,
            protocol="same",
        )
        store_bench_result(Store(db), result)
    at = _app("bench")
    assert not at.info
    table = _frame_with(at, "method", "F1", "AUROC", "alpha")
    assert set(table["method"]) == {"s3kg", "s3kg@kgx", "rouge1"}
    assert any("best by F1 on the same pairs" in c.value for c in at.caption)
    wrong = _frame_with(at, "id", "label", "score", "predicted", "error")
    assert len(wrong) >= 1
    at.selectbox(key="bench_method").select_index(1).run()
    assert not at.exception
    at.selectbox(key="bench_setting").select_index(1).run()
    assert not at.exception


def test_factuality_page_shows_the_demo_evaluations(db):
    at = _app("factuality")
    assert not at.info
    assert at.selectbox(key="fact_eval").options  # both demo evaluations to choose from
    assert len(at.get("plotly_chart")) >= 3
    at.selectbox(key="fact_eval").select_index(1).run()
    assert not at.exception
