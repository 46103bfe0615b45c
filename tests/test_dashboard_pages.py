"""Every dashboard page driven by streamlit.testing on the real demo database.

The session fixture builds the demo database exactly as a first start does (``ensure_database``
on a missing file: import, offline extraction, MiniLM scoring, TAU), so the embedded default
is tested too.
"""

from __future__ import annotations

import duckdb
from store_helpers import REPO
from streamlit.testing.v1 import AppTest

from dashboard import factuality

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
    assert len(at.get("plotly_chart")) == 1  # lazy tabs: only the open tab's chart is built
    at.session_state["overview_charts"] = "Distributions"
    at.run()
    at.radio(key="dist_metric").set_value("ctx_sim").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1


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


def _annotations(db) -> list[tuple]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT annotator, item_id, verdict FROM annotations ORDER BY annotation_id"
        ).fetchall()
    finally:
        con.close()


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _annotate(name: str = "", **query: str) -> AppTest:
    at = AppTest.from_file(str(PAGES["annotate"]), default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if name:
        at.text_input(key="annotator").set_value(name).run()
    return at


def test_saving_untouched_proposals_stores_no_verdict(db):
    # Regression (issue 16): every proposed pair started as "confirm" and Save stored them all,
    # so a second annotator who touched nothing saved 7 confirmations and pushed percent
    # agreement to 85.7 % and TAU precision to 0.929. Undecided pairs are never saved.
    at = _annotate("bob")
    assert at.selectbox(key="annotate_item").value.endswith("pairs")  # an answer with pairs
    _button(at, "save").click().run()
    assert not at.exception
    assert _annotations(db) == []
    assert any("Nothing to save" in i.value for i in at.info)
    assert any("decided 0 of" in c.value for c in at.caption)


def test_annotate_opens_on_an_answer_with_pairs_and_steps_to_the_next(db):
    at = _annotate()
    first = at.selectbox(key="annotate_item").value
    assert "no pairs" not in first  # the lowest-CUS answer of the demo has none
    seen = [first]
    for _ in range(3):
        _button(at, "annotate_next").click().run()
        assert not at.exception
        seen.append(at.selectbox(key="annotate_item").value)
    assert all("no pairs" not in s for s in seen) and len(set(seen)) == 4
    assert at.query_params["item"] == seen[-1].split()[1]  # the case is in the URL


def test_annotate_opens_the_case_and_the_annotator_of_the_url(db):
    at = AppTest.from_file(str(PAGES["overview"]), default_timeout=180)
    at.switch_page("pages/3_Annotate.py")
    for key, value in {"run": "2", "item": "5", "annotator": "ann"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="annotate_item").value.startswith("item 5 ")
    assert at.selectbox(key="annotate_run").value.endswith("run 2")
    assert at.text_input(key="annotator").value == "ann"
    assert not _button(at, "save").disabled
    # Streamlit forgets a widget's state when its page is left; the name comes back
    at.query_params.clear()
    at.switch_page("app.py").run()
    at.switch_page("pages/3_Annotate.py").run()
    assert not at.exception
    assert at.text_input(key="annotator").value == "ann"
    assert at.query_params["annotator"] == "ann"


def test_an_added_pair_is_saved_as_add_and_can_be_removed(db):
    at = _annotate("ann")
    at.selectbox(key="add_gold").select_index(0).run()
    at.selectbox(key="add_answer").select_index(0).run()
    _button(at, "add_pair").click().run()
    assert any("not saved yet" in t.value for t in at.text)
    _button(at, "save").click().run()
    assert not at.exception
    assert [v for _, _, v in _annotations(db)] == ["add"]  # the proposals stay undecided
    assert any("Saved 1 verdicts by ann" in s.value for s in at.success)
    removes = [b for b in at.button if b.key.startswith("annotate_remove_")]
    assert len(removes) == 1
    removes[0].click().run()
    assert not at.exception and _annotations(db) == []


def test_agreement_counts_decided_verdicts_only(db):
    for name in ("ann", "bob"):
        at = _annotate(name)
        at.selectbox(key="add_gold").select_index(0).run()
        at.selectbox(key="add_answer").select_index(0).run()
        _button(at, "add_pair").click().run()
        _button(at, "save").click().run()
        assert not at.exception
    assert _metric(at, "Percent agreement") == "100.0%"
    assert _metric(at, "TAU precision") == "n/a"  # nobody confirmed or rejected a proposal
    assert any("From 2 decided verdicts by 2 annotators" in c.value for c in at.caption)


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


def _drop_bench_rows(db) -> None:
    con = duckdb.connect(str(db))
    try:
        con.execute("DELETE FROM bench_results")
    finally:
        con.close()


def test_benchmarks_page_labels_the_demos_precomputed_results(db):
    at = _app("bench")
    assert any("Precomputed by the S3KG Workbench project" in i.value for i in at.info)
    table = _frame_with(at, "method", "F1", "AUROC", "alpha")
    assert {"s3kg", "s3kg@kgx", "rouge1"} <= set(table["method"])
    assert any("do not carry" in c.value for c in at.caption)  # no ROC curves: figures only
    assert any("carry figures only" in c.value for c in at.caption)


def test_benchmarks_page_says_how_to_fill_it_when_empty(db):
    _drop_bench_rows(db)
    at = _app("bench")
    assert any("s3kg bench pairs" in i.value for i in at.info)


def test_benchmarks_page_shows_tables_curves_and_wrong_pairs(db, minilm):
    from test_bench_runner import separable_rows

    _drop_bench_rows(db)
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
    assert [w.value for w in at.warning] == [factuality.DEMO_NOTE]  # unrelated to the questions
    assert at.selectbox(key="fact_eval").options  # both demo evaluations to choose from
    assert len(at.get("plotly_chart")) >= 3
    at.selectbox(key="fact_eval").select_index(1).run()
    assert not at.exception
