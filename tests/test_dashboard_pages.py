"""Every dashboard page driven by streamlit.testing on the real demo database.

The session fixture builds the demo database exactly as a first start does (``ensure_database``
on a missing file: import, offline extraction, MiniLM scoring, TAU), so the embedded default
is tested too.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time

import duckdb
import numpy as np
import pandas as pd
import pytest
from dashboard_helpers import (
    app_frame_with,
    app_metric,
    app_metrics,
    hold_tau,
    live_blocks,
    live_note,
    live_table,
    prefetch_done,
)
from store_helpers import REPO
from streamlit.testing.v1 import AppTest

from s3kg_core.encoders.registry import load_encoder

PAGES = {
    "overview": REPO / "app.py",
    "sample": REPO / "pages" / "1_Sample_explorer.py",
    "failure_analysis": REPO / "pages" / "2_Failure_analysis.py",
    "annotate": REPO / "pages" / "3_Annotate.py",
    "factuality": REPO / "pages" / "6_Factuality.py",
    "compare": REPO / "pages" / "7_Run_comparison.py",
    "run": REPO / "pages" / "8_Run.py",
    "search": REPO / "pages" / "9_Search.py",
}


@pytest.fixture(scope="module")
def shared_demo(demo_db, tmp_path_factory):
    """One copy of the demo database for this module's tests that only read it."""
    import shutil

    return shutil.copy(demo_db, tmp_path_factory.mktemp("pages_read") / "s3kg.duckdb")


@pytest.fixture
def read_db(shared_demo, monkeypatch):
    """The module's shared demo copy, for a test that only reads the database: its pages share
    the cached reads of the tests before it, as one user's page views do (a cold start is what
    :func:`db` gives, and what a test that writes takes). Fails a test that wrote to it."""
    from pathlib import Path

    from dashboard.data.database import db_stamp

    path = Path(shared_demo)
    monkeypatch.setenv("S3KG_DB", str(path))
    before = db_stamp(path)
    yield path
    assert db_stamp(path) == before, "this test wrote to the shared copy: give it `db`"


def _view(db):
    """The dashboard's view of ``db`` under its latest signature."""
    from dashboard.data.database import View, db_stamp
    from s3kg_core.stages.scored import latest_signature
    from s3kg_core.store.store import Store

    return View(db, db_stamp(db), latest_signature(Store(db, read_only=True)))


def _app(page: str) -> AppTest:
    at = AppTest.from_file(str(PAGES[page]), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


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


def test_overview_leaderboard_follows_the_alpha_slider(read_db):
    at = _app("overview")
    assert app_metric(at, "Answers scored") == "60"
    before = app_metric(at, "Mean CUS")
    (board,) = _boards(at)  # the live table at the server's alpha (dashboard/live_alpha.py)
    assert len(board) == 2 and all(r.startswith("SmolLM2-135M-Instruct") for r in board["run"])
    at.sidebar.slider(key="alpha").set_value(1.0).run()
    assert not at.exception
    after = app_metric(at, "Mean CUS")
    assert after != before
    assert any("alpha:1" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 1  # only the chosen chart is built
    at.session_state["overview_chart"] = "Distributions"
    at.run()
    at.radio(key="dist_metric").set_value("ctx_sim").run()
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    # a histogram row per run, not a point per answer (8.8 MB at 100,000 answers: issue 33)
    assert spec["data"][0]["type"] == "heatmap" and len(at.get("plotly_chart")) == 1


def test_the_alpha_sliders_help_gives_the_default_modes_blend(read_db):
    """Regression (issue 41): the help named hybrid, text, paper and kgx, not ot, the default."""
    from s3kg_core.scoring.result import DEFAULT_MODE, WL_MODES

    at = _app("overview")
    help_text = at.sidebar.slider(key="alpha").help
    assert DEFAULT_MODE in help_text
    formula = (
        "alpha S_WL + (1 - alpha) S_SBERT"
        if DEFAULT_MODE in WL_MODES
        else ("(1 - alpha) S_WL + alpha S_SBERT")
    )
    assert formula in help_text


def test_alpha_is_kept_when_moving_to_another_page(read_db):
    at = _app("overview")
    at.sidebar.slider(key="alpha").set_value(0.8).run()
    assert at.session_state["_alpha_value"] == 0.8


def _numbers(values) -> list[float]:
    """A plotly JSON array: a list, or a typed array (``{"bdata": base64, "dtype": ...}``)."""
    if isinstance(values, dict):
        raw = base64.b64decode(values["bdata"])
        return np.frombuffer(raw, dtype=values["dtype"]).astype(float).tolist()
    return [float(v) for v in values]


def test_the_overview_draws_each_temperature_run_as_its_own_bar(read_db):
    at = _app("overview")
    (board,) = _boards(at)  # ranked by CUS: its mean is the CUS
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bars = next(
        f for f in figures if {t["name"] for t in f["data"]} == {"GoldSim", "CtxSim", "CUS"}
    )
    cus = next(t for t in bars["data"] if t["name"] == "CUS")
    runs = dict(zip(cus["y"], _numbers(cus["x"]), strict=True))
    # T=0 and T=0.7: one bar each per score, not one stack; the y axis names the runs
    assert sorted(n.rsplit(" · ", 1)[1] for n in runs) == ["T=0", "T=0.7"]
    assert sorted(runs.values()) == pytest.approx(sorted(board["mean"]))
    assert bars["layout"]["barmode"] == "group"
    assert max(max(_numbers(t["x"])) for t in bars["data"]) < 1.0


def test_the_app_lists_its_pages_overview_first_and_keeps_alpha_across_them(read_db, monkeypatch):
    monkeypatch.delenv("POT_BACKEND_DISABLE_PYTORCH", raising=False)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert os.environ["POT_BACKEND_DISABLE_PYTORCH"] == "1"  # the app's process settings
    assert at.title[0].value == "S3KG Workbench"  # the overview is the default page
    at.sidebar.slider(key="alpha").set_value(0.8).run()
    at.switch_page("pages/7_Run_comparison.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Run comparison"
    assert at.sidebar.slider(key="alpha").value == 0.8
    links = [(p.proto.page, p.proto.query_string) for p in at.get("page_link")]
    assert [page for page, _ in links] == ["Sample_explorer", "Sample_explorer", "Annotate",
                                          "Annotate"]  # fmt: skip
    assert links[0][1].startswith("run=1&item=") and links[1][1].startswith("run=2&item=")
    at.switch_page("pages/4_Benchmarks.py").run()
    assert not at.exception
    assert not [s for s in at.sidebar.slider if s.key == "alpha"]  # alpha changes nothing here
    at.switch_page("pages/2_Failure_analysis.py").run()
    assert at.sidebar.slider(key="alpha").value == 0.8


def test_alpha_shows_only_where_it_changes_something(read_db):
    for name in ("bench", "factuality"):
        at = _app(name)
        assert not [s for s in at.sidebar.slider if s.key == "alpha"], name
    for name in ("overview", "failure_analysis", "compare"):
        at = _app(name)
        assert at.sidebar.slider(key="alpha").value == 0.5, name


def test_the_signature_box_names_what_the_signature_says_in_full_on_hover(read_db):
    at = _app("overview")
    box = at.sidebar.selectbox(key="signature")
    enc = load_encoder("minilm").name  # minilm@0.1.0 and its backend (default onnx: +onnx)
    short = enc.replace("@0.1.0", "")  # the label leaves the version out (the box is narrow)
    assert box.options == [f"ot · {short} · tau 0.65"]
    assert box.value.startswith(f"mode:ot|enc:{enc}|tau:0.65|K:5")
    assert box.value in box.help  # the full text, in the tooltip


# -- the sample explorer ----------------------------------------------------------------------


def _explorer(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(str(PAGES["sample"]), default_timeout=180)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _picker(at: AppTest):
    """The question picker (its widget key changes with its labels)."""
    return next(s for s in at.selectbox if str(s.key).startswith("explorer.item_picker."))


def _shown_case(at: AppTest) -> tuple[int, int, float]:
    assert at.session_state["explorer.item"] == _picker(at).value
    return (
        int(at.selectbox(key="explorer.run").value),
        int(_picker(at).value),
        float(at.slider(key="explorer.tau").value),
    )


def _link(at: AppTest) -> dict[str, str]:
    assert "tau" not in at.query_params  # the threshold's old name: never written
    values = {k: at.query_params[k] for k in ("run", "item", "threshold")}
    return {k: v if isinstance(v, str) else v[0] for k, v in values.items()}


def _explorer_scores(at) -> dict[str, str]:
    """The explorer's five figures as the browser shows them at the server's alpha."""
    shown = app_metrics(at, "explorer.scores")
    return {k: v for k, v in shown.items() if not k.endswith(" delta")}


def _library_scores(db, run: int, item: int, tau: float, minilm) -> dict[str, str]:
    """GoldSim, CtxSim and CUS of one demo answer by the library itself, at ``tau``."""
    from s3kg_core.scoring.cus import cus_score
    from s3kg_core.scoring.s3kg import KGScorer
    from s3kg_core.scoring.signature import Signature
    from s3kg_core.stages.scored import latest_signature
    from s3kg_core.store.store import Store

    store = Store(db, read_only=True)
    config = Signature.parse(latest_signature(store)).config_kwargs()
    with store.connect() as con:
        kgs = Store.load_kgs(con, [run])
    a, g, c = (kgs[(run, item, s)].triples for s in ("answer", "gold", "context"))
    result = cus_score(a, g, c, scorer=KGScorer(minilm, **{**config, "tau": tau}))
    return {
        "GoldSim": f"{result.gold_sim:.3f}",
        "CtxSim": f"{result.ctx_sim:.3f}",
        "CUS": f"{result.cus:.3f}",
        "S_WL gold / ctx": f"{result.gold.s_wl:.2f} / {result.context.s_wl:.2f}",
        "S_SBERT gold / ctx": f"{result.gold.s_sbert:.2f} / {result.context.s_sbert:.2f}",
    }


def test_sample_explorer_opens_on_the_lowest_cus_and_writes_its_link(read_db):
    at = _explorer()
    run, item, tau = _shown_case(at)
    assert tau == 0.65  # the stored signature's tau
    assert _link(at) == {"run": str(run), "item": str(item), "threshold": "0.65"}
    picker = _picker(at)
    assert picker.options[0].startswith("CUS ") and " · demo-" in picker.options[0]
    cus = [float(o.split()[1]) for o in picker.options]
    assert cus == sorted(cus) and len(cus) == 30  # lowest CUS first, every question
    assert any("as stored" in c.value for c in at.caption)
    assert live_note(at, "explorer.signature").startswith("alpha 0.5 (sidebar) · Signature ")
    assert next(b for b in at.button if b.key == "explorer.prev").disabled


def test_sample_explorer_prints_its_signature_with_the_alpha_of_its_scores(read_db):
    """Issue 58 (item 3): the explorer's caption printed the score signature without alpha
    (``...|version:4``) while its scores are blended at the sidebar's alpha. Now the
    signature under the scores ends with the alpha they are blended at, and follows the
    slider (a live line, issue 60: its text at every stop); no caption prints a signature."""
    from dashboard.live_alpha import GRID
    from s3kg_core.scoring.signature import Signature
    from s3kg_core.stages.scored import latest_signature
    from s3kg_core.store.store import Store

    stored = latest_signature(Store(read_db, read_only=True))
    assert stored is not None and "alpha" not in stored
    at = _explorer()
    for alpha in (0.5, 0.8):
        if alpha != 0.5:
            at.sidebar.slider(key="alpha").set_value(alpha).run()
            assert not at.exception
        assert not [c.value for c in at.caption if "version:" in c.value]
        line = live_note(at, "explorer.signature")
        assert line == f"alpha {alpha:g} (sidebar) · Signature {Signature.blended(stored, alpha)}"
        assert line.endswith(f"|alpha:{alpha:g}")
        every = live_blocks(at)["explorer.signature"]["texts"]  # the line at every stop
        assert [t.rsplit("|alpha:", 1)[1] for t in every] == [f"{a:g}" for a in GRID]


def test_sample_explorer_holds_at_every_stop_what_the_server_shows_there(read_db):
    """Issue 60: the explorer's scores follow the slider in the browser, from numbers the page
    sent for every stop. At five alphas (and another tau) the block's numbers at that stop are
    the ones the server draws when the slider is released there, bit for bit."""
    at = _explorer({"run": "2", "item": "9", "threshold": "0.7"})
    first = live_blocks(at)["explorer.scores"]
    for alpha in (0.0, 0.3, 0.5, 0.8, 1.0):
        at.sidebar.slider(key="alpha").set_value(alpha).run()
        assert not at.exception
        now = live_blocks(at)["explorer.scores"]
        k = now["at"]
        assert now["grid"][k] == alpha and _shown_case(at) == (2, 9, 0.7)
        for before, after in zip(first["items"], now["items"], strict=True):
            assert before["cell"] == after["cell"], before["label"]  # every stop, every number
            assert before.get("delta") == after.get("delta")
        stored = now["items"][2]["delta"]["t"][k].rsplit(" vs ", 1)[1]  # the CUS at tau 0.65
        assert _picker(at).format_func(9).startswith(f"CUS {stored} · ")  # the picker agrees


def test_sample_explorer_tau_recomputes_every_score_as_the_library_does(read_db, minilm):
    at = _explorer({"run": "2", "item": "9"})  # an answer with aligned entities
    run, item, _ = _shown_case(at)
    stored = _explorer_scores(at)
    at.slider(key="explorer.tau").set_value(0.8).run()
    assert not at.exception
    shown = _explorer_scores(at)
    expected = _library_scores(read_db, run, item, 0.8, minilm)
    assert shown == expected
    assert shown != stored, "tau 0.8 must change this answer's scores"
    assert _link(at)["threshold"] == "0.8"
    caption = next(c.value for c in at.caption if c.value.startswith("Scores at tau"))
    assert "recomputed" in caption and "(0 strings encoded)" in caption  # no encoder call
    deltas = app_metrics(at, "explorer.scores")
    for label in shown:  # the stored value under each recomputed one
        delta = deltas[f"{label} delta"]
        assert delta.startswith(("+", "-", "vs ")) and stored[label].split(" / ")[0] in delta
    # back to the stored tau: the stored numbers again
    at.slider(key="explorer.tau").set_value(0.65).run()
    assert _explorer_scores(at) == stored


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"run": "2", "item": str(2**127)}, "item is not an item id"),
        ({"run": "2", "item": "9" * 400}, "item is not an item id"),
        ({"run": "2", "item": "9" * 5000}, "item is not an item id"),
        ({"run": "2", "item": "-1"}, "item is not an item id"),
        ({"run": str(2**63), "item": "9"}, "run is not a run id"),
    ],
)
def test_sample_explorer_a_link_id_past_its_column_is_one_warning(read_db, params, problem):
    """Regression (issue 59, item 6): ``?run=3&item=<2**127>`` showed DuckDB's
    ConversionException with the server's paths (a 400-digit item its InvalidInputException).
    The id is checked against its column's range; the page warns and opens a case."""
    at = _explorer(params)  # no exception
    assert f"Link: {problem}" in [w.value for w in at.warning]
    assert not at.error
    run, item, _ = _shown_case(at)
    assert item > 0 and run in (1, 2)


@pytest.mark.parametrize("item", [str(2**127), "9" * 400, "9" * 5000])
def test_annotate_a_link_id_past_its_column_opens_no_case_and_no_error(read_db, item):
    """Regression (issue 59, item 6): the Annotate page handed such an id to DuckDB too."""
    at = _annotate(run="1", item=item)  # no exception
    assert not at.error
    assert _focused(at).startswith("**Pair ")


def test_the_pages_open_a_database_scored_in_wwl_mode(db, minilm):
    """A run scored with ``s3kg score --mode wwl`` (issue 41): its signature is the latest, and
    the explorer explains it from the stored label vectors, encoding nothing."""
    from dashboard.data.database import clear_caches
    from s3kg_core.scoring.s3kg import S3KGConfig
    from s3kg_core.stages.score import score_store
    from s3kg_core.store.store import Store

    report = score_store(Store(db), encoder=minilm, config=S3KGConfig(mode="wwl"))
    assert report.scored == 60 and report.signature.startswith("mode:wwl|")
    clear_caches()
    at = _explorer({"run": "2", "item": "9"})
    caption = next(c.value for c in at.caption if c.value.startswith("Scores at tau"))
    assert "(0 strings encoded)" in caption  # the flows' cosines too: from stored vectors
    assert " · Signature mode:wwl|" in live_note(at, "explorer.signature")
    plan = next(e for e in at.expander if e.label.startswith("Transport plan (wwl mode)"))
    table = plan.dataframe[0].value
    assert set(table["comparison"]) == {"GoldSim", "CtxSim"}
    shares = table.groupby(["comparison", "entity"])["share"].sum()
    assert np.allclose(shares, 1.0)  # each answer entity's whole mass goes somewhere
    _assert_flows_marked_at(table, 0.65)
    at.slider(key="explorer.tau").set_value(0.8).run()  # tau only decides what counts as matched
    assert not at.exception
    plan = next(e for e in at.expander if e.label.startswith("Transport plan (wwl mode)"))
    _assert_flows_marked_at(plan.dataframe[0].value, 0.8)
    for page in ("overview", "failure_analysis", "compare", "run"):
        _app(page)


def _assert_flows_marked_at(table: pd.DataFrame, tau: float) -> None:
    """Every flow of a transport plan's table has its cosine, marked below ``tau`` or not."""
    from dashboard.views import TRANSPORT_AT, TRANSPORT_BELOW

    assert list(table.columns) == ["comparison", "entity", "partner", "cosine", "vs_tau", "share"]
    assert table["cosine"].between(-1, 1).all()
    expected = [TRANSPORT_BELOW if c < tau else TRANSPORT_AT for c in table["cosine"]]
    assert table["vs_tau"].tolist() == expected


def test_the_transport_plan_of_the_default_mode_is_the_entity_labels(read_db):
    """...with each flow's cosine, marked below the page's tau (issue 58: the demo's forced
    flows, "electron spin -> tiny central nucleus" at 0.24, read as matches)."""
    at = _explorer({"run": "1", "item": "6"})  # the demo is scored in the default mode, ot
    plans = [e for e in at.expander if e.label.startswith("Transport plan")]
    assert [e.label for e in plans] == [
        "Transport plan (ot mode): the n:m alignment of the entity labels"
    ]
    table = plans[0].dataframe[0].value
    _assert_flows_marked_at(table, 0.65)
    forced = table[(table["entity"] == "electron spin") & (table["partner"] == "atom")]
    assert len(forced) == 1 and forced["cosine"].iloc[0] < 0.65 and forced["share"].iloc[0] > 0
    assert "below tau (0.65) is forced there, not a match" in plans[0].caption[0].value
    at.slider(key="explorer.tau").set_value(0.3).run()
    _assert_flows_marked_at(
        next(e for e in at.expander if e.label.startswith("Transport plan")).dataframe[0].value,
        0.3,
    )


def test_sample_explorer_opens_a_link_exactly(read_db, minilm):
    at = _explorer({"run": "2", "item": "9", "threshold": "0.7"})
    assert _shown_case(at) == (2, 9, 0.7)
    assert "demo-09" in _picker(at).format_func(9)
    assert _explorer_scores(at) == _library_scores(read_db, 2, 9, 0.7, minilm)
    assert _link(at) == {"run": "2", "item": "9", "threshold": "0.7"}


def test_an_old_explorer_link_with_tau_opens_the_same_case(read_db):
    """Issue 42: the explorer's URL named S3KG's threshold ``tau`` (the word of the TAU
    analysis too); it is ``threshold`` now, and a link written before (``?tau=0.7``) opens
    exactly that case, its URL written anew with ``threshold``."""
    at = _explorer({"run": "2", "item": "9", "tau": "0.7"})
    assert _shown_case(at) == (2, 9, 0.7)
    assert _link(at) == {"run": "2", "item": "9", "threshold": "0.7"}
    assert not [w.value for w in at.warning if "not a" in w.value]


def test_sample_explorer_reports_a_broken_link_and_falls_back(read_db):
    at = _explorer({"run": "77", "item": "[x](javascript:alert(1))", "tau": "2"})
    warnings = " ".join(w.value for w in at.warning)
    assert "run 77" in warnings and "item is not an item id" in warnings
    assert "tau is not a number" in warnings and "javascript" not in warnings
    run, item, tau = _shown_case(at)
    assert tau == 0.65
    assert _link(at) == {"run": str(run), "item": str(item), "threshold": "0.65"}


def test_sample_explorer_prev_and_next_walk_the_listed_order(read_db):
    at = _explorer()
    order = list(_picker(at).options)
    ids = [_picker(at).value]
    for _ in range(2):
        next(b for b in at.button if b.key == "explorer.next").click().run()
        assert not at.exception
        ids.append(_picker(at).value)
    formatted = [_picker(at).format_func(i) for i in ids]
    assert formatted == order[:3]
    assert _link(at)["item"] == str(ids[-1])
    next(b for b in at.button if b.key == "explorer.prev").click().run()
    assert _picker(at).value == ids[1]


def test_sample_explorer_filters_by_cus_and_keeps_state_per_run(read_db):
    at = _explorer()
    at.slider(key="explorer.cus_range").set_value((0.5, 1.0)).run()
    assert not at.exception
    cus = [float(o.split()[1]) for o in _picker(at).options]
    assert cus and min(cus) >= 0.5
    run = at.selectbox(key="explorer.run")
    run.set_value(run.options and 2).run()
    assert not at.exception
    assert _shown_case(at)[0] == 2 and _link(at)["run"] == "2"
    at.toggle(key="explorer.show_all").set_value(True).run()
    assert not at.exception


def test_sample_explorer_searches_its_picker_and_a_run_switch_opens_the_worst_answer(read_db):
    """Issue 33: the picker is a searched, paged query, not a box of every answer."""
    at = _explorer()
    at.text_input(key="explorer.search").set_value("demo-09").run()
    assert not at.exception
    assert [o.split(" · ")[1] for o in _picker(at).options] == ["demo-09"]
    assert _shown_case(at)[1] == 9 and _link(at)["item"] == "9"
    at.text_input(key="explorer.search").set_value("").run()
    run = at.selectbox(key="explorer.run")
    other = 2 if _shown_case(at)[0] == 1 else 1  # the demo's two runs
    run.set_value(other).run()
    assert not at.exception
    options = list(_picker(at).options)
    assert _shown_case(at)[0] == int(other)
    assert _picker(at).format_func(_picker(at).value) == options[0]  # its lowest CUS
    cus = [float(o.split()[1]) for o in options]
    assert cus == sorted(cus)


def test_failure_analysis_counts_categories_and_opens_cases(read_db):
    at = _app("failure_analysis")
    table = live_table(at, "tau.counts")  # the counts per run (issue 60: a live table)
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


def test_failure_cases_are_listed_lowest_score_first_with_their_question(read_db):
    # regression: cases were listed by run and item, so the worst (CUS 0.000) came 8th of 12
    at = _app("failure_analysis")
    at.slider(key="tau_percent").set_value(20).run()
    options = at.selectbox(key="tau_case").options
    assert len(options) == 12
    scores = [float(re.match(r"CUS (\d\.\d{3}) · ", o).group(1)) for o in options]
    assert scores == sorted(scores)
    assert all(re.search(r" · demo-\d\d · \S.*\?$", o) for o in options)  # the question
    # the case opens in the Sample explorer and in Annotate (plain links: no st.navigation)
    run, item = at.selectbox(key="tau_case").value.split(":")
    links = [m.value for m in at.markdown if "](" in m.value]
    assert f"[Open in the Sample explorer](/Sample_explorer?run={run}&item={item})" in links
    assert f"[Annotate this answer](/Annotate?run={run}&item={item})" in links
    caption = next(c.value for c in at.caption if "answers: the lowest" in c.value)
    assert "cosine 0.76" in caption and "tau 0.65" in caption
    # long triples are shown whole (st.table wraps), not cut off in a data grid
    assert at.table


def test_failure_analysis_counts_per_run_follow_alpha_from_every_stop(read_db):
    """Issue 60: the Failure analysis's counts per run at every stop of the slider (a live
    table). At the server's stop they are the chart's counts; once the background job has
    explained every stop's cases, each stop holds what the page computes when the slider is
    released there, bit for bit."""
    import base64
    import json as json_module

    import numpy as np

    from dashboard.live_alpha import GRID

    def values(x):  # plotly sends numbers as typed arrays: {"dtype": ..., "bdata": base64}
        if isinstance(x, dict):
            return np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"]).tolist()
        return list(x)

    at = _app("failure_analysis")
    block = live_blocks(at)["tau.counts"]
    k = block["at"]
    chart = json_module.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    for name in {t["name"] for t in chart}:  # a trace per category (and facet): runs' counts
        live = sum(r["cells"][name.replace(" ", "_")]["v"][k] for r in block["rows"])
        charted = sum(x for t in chart if t["name"] == name for x in values(t["x"]))
        assert live == charted, name
    prefetch_done()  # the grid's job: every stop explained
    at.run()
    first = live_blocks(at)["tau.counts"]
    assert not any(w for r in first["rows"] for c in r["cells"].values() for w in c.get("wait", []))
    for alpha in (0.0, 0.3, 1.0):
        at.sidebar.slider(key="alpha").set_value(alpha).run()
        assert not at.exception
        now = live_blocks(at)["tau.counts"]
        stop = GRID.index(alpha)
        assert now["at"] == stop
        for before, after in zip(first["rows"], now["rows"], strict=True):
            assert before["cells"] == after["cells"] and before["order"] == after["order"]
        line = live_note(at, "tau.counts_line")
        assert line.startswith(f"Per run at alpha {alpha:g}: the lowest 5 % by CUS")


def test_a_failure_case_names_the_rule_that_aligned_a_passive(read_db):
    """This round's TAU aligns a passive with the gold fact (AlignedTriple.rule): the demo's
    T=0 answer to demo-09 says "movable metal type was adopted by other printing companies";
    the aligned pairs' *via* says "passive" beside "sentence", and the counts name roles
    swapped in full (one row of six cut it to "swap…")."""
    at = _app("failure_analysis")
    at.slider(key="tau_percent").set_value(30).run()
    case = at.selectbox(key="tau_case")
    (key,) = [k for k in case.options if " · demo-09 · " in k and " T=0 · " in k]
    case.select(key).run()
    assert not at.exception
    aligned = next(t.value for t in at.table if "via" in t.value.columns)
    rows = aligned[aligned["answer"].str.contains("adopt by", regex=False)]
    assert list(rows["via"]) == ["sentence · passive"], aligned
    labels = [m.label for m in at.metric]
    assert labels == [
        "aligned", "relation", "entity", "roles swapped", "extra", "missing"
    ]  # fmt: skip


def test_a_failure_case_shows_its_answer_text(read_db):
    """Issue 31: the Failure analysis page never showed the answer it explains."""
    from dashboard.escape import md

    at = _app("failure_analysis")
    at.slider(key="tau_percent").set_value(20).run()
    case = at.selectbox(key="tau_case")
    for index in range(len(case.options)):
        case.select_index(index).run()
        assert not at.exception
        run, item = (int(x) for x in at.selectbox(key="tau_case").value.split(":"))
        con = duckdb.connect(str(read_db), read_only=True)
        try:
            (text,) = con.execute(
                "SELECT answer FROM answers WHERE run_id = ? AND item_id = ?", [run, item]
            ).fetchone()
        finally:
            con.close()
        shown = next(m.value for m in at.markdown if m.value.startswith("**Answer** "))
        text = (text or "").strip()
        if not text:
            assert "(empty)" in shown
        elif len(text) <= 400:
            assert shown == f"**Answer** {md(text)}"
        else:  # the start beside the counts, the whole of it one click away
            assert shown.startswith(f"**Answer** {md(text[:100])}") and shown.endswith("…")
            assert any(e.label.startswith("The whole answer (") for e in at.expander)
        if text and len(text) > 400:
            break


def test_a_failure_case_draws_its_residual_triples_as_marked_edges(read_db):
    at = _app("failure_analysis")
    at.slider(key="tau_percent").set_value(20).run()
    counts = {}
    for i in range(len(at.selectbox(key="tau_case").options)):
        at.selectbox(key="tau_case").select_index(i).run()
        counts = {m.label: int(m.value) for m in at.metric}
        if counts["extra"] and counts["missing"]:
            break
    extra, missing = counts["extra"], counts["missing"]
    assert extra and missing, counts  # some demo case has both
    (frame,) = at.get("iframe")  # the explorer's linked document, not three separate pictures
    doc = _linked_data(frame.proto.srcdoc)
    marked = {p["key"]: [e for e in p["edges"] if e["marked"]] for p in doc["panels"]}
    # every extra answer triple and every missing gold triple is a red edge (an extracted
    # triple may normalise to a lemma triple TAU counted once, so ">=")
    assert len(marked["answer"]) >= extra and len(marked["gold"]) >= missing
    assert not marked["context"]  # ranked by CUS: the reference is the gold KG


def test_a_share_jump_shows_the_explained_cases_and_its_progress(db, monkeypatch):
    """Issue 33: a share jump waited for every new answer to be explained (59 s at 100,000
    answers); now the page draws what is explained and a progress bar, then fills in."""
    from dashboard.data import tau_cases

    at = _app("failure_analysis")
    prefetch_done()  # the 20 % the page explains ahead after drawing
    release = hold_tau(monkeypatch)
    monkeypatch.setattr(tau_cases, "LIVE_TAU", 0)
    at.slider(key="tau_percent").set_value(40).run()
    assert not at.exception
    (bar,) = at.get("progress")
    assert "Explaining the lowest 40 % of each run: " in bar.proto.text
    caption = next(c.value for c in at.caption if "explained so far" in c.value)
    done = int(re.match(r"(\d+) of 24 answers explained so far", caption).group(1))
    assert 0 < done < 24
    assert len(at.selectbox(key="tau_case").options) == done  # what is explained, at once
    release.set()
    prefetch_done()
    at.run()
    assert not at.exception and not at.get("progress")
    assert len(at.selectbox(key="tau_case").options) == 24
    assert any(c.value.startswith("24 answers: the lowest 40 %") for c in at.caption)


def test_a_failure_case_stays_chosen_when_alpha_moves_its_score(read_db):
    at = _app("failure_analysis")
    at.slider(key="tau_percent").set_value(20).run()
    at.selectbox(key="tau_case").select_index(5).run()
    value = at.selectbox(key="tau_case").value
    label = at.selectbox(key="tau_case").options[5]
    at.sidebar.slider(key="alpha").set_value(0.6).run()  # the same cases, other scores
    assert not at.exception
    assert at.selectbox(key="tau_case").value == value
    assert label not in at.selectbox(key="tau_case").options  # its label did change


def test_run_comparison_lists_the_ends_of_thousands_of_questions(db, monkeypatch):
    """Issue 33: the table sent every shared question (1.2 MB at 5,000) on every rerun."""
    from dashboard import compare

    monkeypatch.setattr(compare, "TABLE_MAX", 10)
    at = _app("compare")
    table = app_frame_with(at, "d_cus", "explorer_a")
    assert len(table) == 10
    caption = next(c.value for c in at.caption if "biggest regressions and" in c.value)
    assert caption.startswith("The 5 biggest regressions and 5 biggest improvements of 30 ")
    d = table["d_cus"].tolist()
    assert d == sorted(d)  # the regressions' end, then the improvements' end
    assert any(b.label == "Every shared question (CSV)" for b in at.get("download_button"))


def test_run_comparison_opens_on_the_demo_temperatures_biggest_regression_first(read_db):
    at = _app("compare")
    assert at.selectbox(key="compare_a").value == "1"  # T=0
    assert at.selectbox(key="compare_b").value == "2"  # T=0.7
    assert app_metric(at, "Shared questions") == "30"
    table = app_frame_with(at, "d_cus", "d_gold_sim", "d_ctx_sim", "explorer_a", "explorer_b")
    assert table["d_cus"].tolist() == sorted(table["d_cus"])
    assert (table["d_cus"] - (table["cus_b"] - table["cus_a"])).abs().max() < 1e-9
    first = table.iloc[0]
    assert first["explorer_a"] == f"/Sample_explorer?run=1&item={first['item_id']}"
    assert first["explorer_b"] == f"/Sample_explorer?run=2&item={first['item_id']}"
    worse, better = int(app_metric(at, "Worse in B")), int(app_metric(at, "Better in B"))
    assert worse == int((table["d_cus"] < 0).sum()) and better == int((table["d_cus"] > 0).sum())
    links = [m.value for m in at.markdown if "](" in m.value]
    assert any(f"(/Sample_explorer?run=1&item={first['item_id']})" in v for v in links)
    assert any(f"(/Sample_explorer?run=2&item={first['item_id']})" in v for v in links)
    before = app_metric(at, "Mean CUS · B")
    at.sidebar.slider(key="alpha").set_value(1.0).run()
    assert not at.exception and app_metric(at, "Mean CUS · B") != before
    at.selectbox(key="compare_a").set_value("2").run()
    assert at.selectbox(key="compare_b").value == "1"
    assert not at.exception


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


def test_a_missing_folder_is_a_clear_error(db, tmp_path, monkeypatch):
    monkeypatch.setenv("S3KG_IMPORT_ROOT", str(tmp_path))
    at = _app("overview")
    at.sidebar.text_input(key="release_folder").set_value(str(tmp_path / "nope")).run()
    at.sidebar.button(key="release_import").click().run()
    assert any("is not a folder" in e.value for e in at.sidebar.error)


PAGES["bench"] = REPO / "pages" / "4_Benchmarks.py"


def test_benchmarks_page_says_how_to_fill_it_when_empty(db):
    _drop_bench_rows(db)  # the demo's precomputed results
    at = _app("bench")
    assert any("s3kg bench pairs" in i.value for i in at.info)


def test_benchmarks_page_shows_tables_curves_and_wrong_pairs(db, minilm):
    from test_evaluation_pairs import separable_rows

    from s3kg_core.evaluation.pair_sets import PairSet
    from s3kg_core.evaluation.pairs import run_pair_benchmark, store_bench_result
    from s3kg_core.store.store import Store

    _drop_bench_rows(db)  # the demo's precomputed results
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
    table = app_frame_with(at, "method", "F1", "AUROC", "alpha")
    assert set(table["method"]) == {"s3kg", "s3kg@kgx", "rouge1"}
    assert any("best by F1 on the same pairs" in c.value for c in at.caption)
    wrong = app_frame_with(at, "id", "label", "score", "predicted", "error")
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


# --- Annotate (issues 16, 30): saved at once, keys, queues, adjudication, agreement -------------


def _annotations(db) -> list[tuple]:
    """``(annotator, run_id, item_id, verdict)`` of the decisions in effect, in the order made."""
    from s3kg_core.annotation.log import current_verdicts
    from s3kg_core.store.store import Store

    with Store(db, read_only=True).connect() as con:
        frame = current_verdicts(con)
    return list(zip(frame.annotator, frame.run_id, frame.item_id, frame.verdict, strict=True))


def _button(at: AppTest, key: str):
    return next(b for b in at.button if b.key == key)


def _key(at: AppTest, action: str, *, settle: bool = True) -> AppTest:
    """Press the button of ``action`` (what its key does), rerun, and (``settle``) wait out
    queued saves.

    The page waits about a second for a save before it moves on with the save pending (issue
    44); on a loaded machine a save can take longer, so the test reruns until no "Saving ..."
    line is left (at most 60 s), then checks the database.
    """
    _button(at, f"annotate_key_{action}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    deadline = time.monotonic() + (60 if settle else 0)
    while any(i.value.startswith("Saving ") for i in at.info) and time.monotonic() < deadline:
        time.sleep(0.2)
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _focused(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Pair "))


def _annotate(name: str = "", **query: str) -> AppTest:
    at = AppTest.from_file(str(PAGES["annotate"]), default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if name:
        at.text_input(key="annotator").set_value(name).run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def test_annotate_opens_before_a_large_run_is_explained(db, monkeypatch):
    """Issue 33: the picker waited for TAU of every answer of the run (7 s at 5,000); now the
    lowest ANNOTATE_LIVE at once, the others labelled as being explained."""
    from dashboard.data import tau_cases

    prefetch_done()
    tau_cases.explained_store(_view(db), "gold").clear()
    monkeypatch.setattr(tau_cases, "ANNOTATE_LIVE", 3)
    release = hold_tau(monkeypatch)
    try:
        at = AppTest.from_file(str(PAGES["annotate"]), default_timeout=180)
        release.set()  # the first three explained while the page draws ...
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    finally:
        release.set()
    options = at.selectbox(key="annotate_item").options
    assert len(options) == 30
    explained = [o for o in options[:3] if "being explained" not in o]
    assert len(explained) == 3  # the lowest CUS first
    caption = [c.value for c in at.caption if "still being explained" in c.value]
    pending = sum("being explained" in o for o in options)
    assert not pending or caption  # ... the rest said to follow while they do
    prefetch_done()
    at.run()
    assert not any("being explained" in o for o in at.selectbox(key="annotate_item").options)


def test_each_decision_is_saved_at_once_and_the_next_pair_focused(db):
    at = _annotate("ann")
    assert not any(b.key == "save" for b in at.button)  # no Save button to forget
    assert _focused(at).startswith("**Pair 1 of ")
    assert _annotations(db) == []  # nothing is saved that nobody decided
    _key(at, "confirm")
    item = int(at.query_params["item"][0] if isinstance(at.query_params["item"], list)
               else at.query_params["item"])  # fmt: skip
    assert _annotations(db) == [("ann", 1, item, "confirm")]
    assert _focused(at).startswith("**Pair 2 of ")
    _key(at, "reject")
    _key(at, "skip")
    assert [v for *_, v in _annotations(db)] == ["confirm", "reject", "skip"]
    _key(at, "undo")  # the skip is taken back, and its pair focused again
    assert [v for *_, v in _annotations(db)] == ["confirm", "reject"]
    assert _focused(at).startswith("**Pair 3 of ") and "undecided" in _focused(at)
    assert any("Undid skip on pair 3" in c.value for c in at.caption)
    _key(at, "previous")
    assert _focused(at).startswith("**Pair 2 of ") and "**reject**" in _focused(at)
    _key(at, "next")
    assert _focused(at).startswith("**Pair 3 of ")
    hints = next(c.value for c in at.caption if c.value.startswith("Keys: "))
    assert "Y confirm" in hints and "N reject" in hints and "I next item" in hints
    # a fresh session finds the decisions as they were
    again = _annotate("ann", run="1", item=str(item))
    table = app_frame_with(again, "TAU says", "Your verdict")
    assert table["Your verdict"].tolist()[:3] == ["confirm", "reject", ""]
    assert _focused(again).startswith("**Pair 3 of ")  # opens on the first undecided pair


def test_a_second_annotator_who_touches_nothing_saves_nothing(db):
    # Regression (issue 16): every proposed pair started as "confirm" and was saved for anyone
    at = _annotate("ann")
    _key(at, "confirm")
    saved = _annotations(db)
    at.text_input(key="annotator").set_value("bob").run()  # same session, another person
    assert "your verdict: **undecided**" in _focused(at)
    assert app_frame_with(at, "Your verdict")["Your verdict"].tolist()[0] == ""
    fresh = _annotate("bob")
    _key(fresh, "next")
    _key(fresh, "next_item")
    assert _annotations(db) == saved


def test_a_name_in_the_url_must_be_confirmed_before_it_saves(db):
    at = _annotate(run="1", item="5", annotator="bob")
    assert at.text_input(key="annotator").value == ""
    assert any("This link names the annotator **bob**" in w.value for w in at.warning)
    assert (
        _button(at, "annotate_key_confirm").disabled and _button(at, "annotate_key_undo").disabled
    )
    _button(at, "annotate_use_url_name").click().run()
    assert at.text_input(key="annotator").value == "bob" and not at.warning
    _key(at, "confirm")
    assert _annotations(db) == [("bob", 1, 5, "confirm")]


def test_annotates_picker_names_each_answer_by_its_question_id(read_db):
    """Regression (issue 43, item 8): the picker listed "item 13" while the page said
    "demo-13", so typing the id the page shows found nothing."""
    at = _annotate("ann")
    picker = at.selectbox(key="annotate_item")
    with duckdb.connect(str(read_db), read_only=True) as con:
        ids = dict(con.execute("SELECT item_id, ext_id FROM items").fetchall())
    for option in picker.options:
        item = int(option.split(" · ")[0].removeprefix("item "))
        assert option.startswith(f"item {item} · {ids[item]} · "), option
    shown = next(m.value for m in at.markdown if m.value.startswith("**Question** · "))
    chosen = picker.format_func(picker.value)
    assert shown.split(" · ")[1].replace("\\", "") in chosen  # the id the page shows


def test_annotate_opens_on_an_answer_with_units_and_steps_to_the_next(read_db):
    at = _annotate("ann")
    first = at.selectbox(key="annotate_item").value
    assert "nothing to judge" not in at.selectbox(key="annotate_item").format_func(first)
    seen = [first]
    for _ in range(3):
        _key(at, "next_item")
        seen.append(at.selectbox(key="annotate_item").value)
        assert _focused(at).startswith("**Pair 1 of ")
    assert len(set(seen)) == 4
    assert at.query_params["item"] in (seen[-1], [seen[-1]])
    (frame,) = at.get("iframe")  # the explorer's linked document: gold, answer and context
    doc = _linked_data(frame.proto.srcdoc)
    assert [p["key"] for p in doc["panels"]] == ["gold", "answer", "context"]
    at.toggle(key="annotate_whole_kgs").set_value(True).run()
    assert not at.exception and len(at.get("iframe")) == 1


def _linked_data(srcdoc: str) -> dict:
    """The ``S3KG_DATA`` JSON of a linked graphs document."""
    start = srcdoc.index("const S3KG_DATA = ") + len("const S3KG_DATA = ")
    return json.JSONDecoder().raw_decode(srcdoc[start:])[0]


def test_the_pairs_and_cosines_are_tau_s_own(read_db, minilm):
    # what the page lists is TAU's stored explanation of the answer, pair for pair
    from dashboard.data.tau_cases import tau_run

    at = _annotate(run="1", item="4")
    table = app_frame_with(at, "TAU says", "Cosine")
    result = tau_run(_view(read_db), 1)[4]
    aligned = table[table["TAU says"] == "aligned"]
    assert len(aligned) == len(result["aligned"]) >= 1
    assert [float(c) for c in aligned["Cosine"]] == [
        round(a["similarity"], 3) for a in result["aligned"]
    ]
    categories = ("aligned", "relation_mismatch", "entity_mismatch", "extra", "missing")
    assert len(table) == sum(len(result[k]) for k in categories)


def test_the_raw_labels_stand_beside_the_lemmas(read_db):
    at = _annotate(run="1", item="4")
    n = int(_focused(at).split(" of ")[1].split("**")[0])
    cells = []
    for _ in range(n):
        cells += [m.value for m in at.markdown if m.value.startswith(("**Gold", "**Answer"))]
        _key(at, "next")
    differing = [c for c in cells if ":gray[compared as: " in c]
    assert differing  # e.g. "received" beside "receive"
    for cell in differing:
        raw, lemma = cell.split("  \n")[1], cell.split("compared as: ")[1][:-1]
        assert raw.lower() != lemma


def test_a_queue_opens_on_the_next_undone_answer_and_counts_done_ones(db, minilm):
    from s3kg_core.annotation.tasks import create_task
    from s3kg_core.store.store import Store

    report = create_task(Store(db), ["ann", "bob"], 2, run_ids=[1], sample=3, seed=1,
                         encoder=minilm)  # fmt: skip
    at = _annotate("ann")
    assert at.selectbox(key="annotate_task").value == str(report.task_id)
    assert any("your queue\\: 0 of 3 done" in m.value for m in at.markdown)
    queue = at.selectbox(key="annotate_queue_item")
    first = queue.value
    assert first == queue.options[0].split(" · ")[0] or queue.index == 0
    n = int(_focused(at).split(" of ")[1].split("**")[0])
    for _ in range(n):
        _key(at, "skip")  # skip counts: the unit was seen
    _key(at, "next_item")
    assert any("your queue\\: 1 of 3 done" in m.value for m in at.markdown)
    assert at.selectbox(key="annotate_queue_item").value != first
    again = _annotate("ann")  # a new session opens on the next undone answer
    assert again.selectbox(key="annotate_queue_item").value != first


def _precision_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if c.value.startswith("**TAU's precision so far**"))


def test_a_queue_is_dealt_across_tau_s_categories_and_the_page_shows_each_precision(db, minilm):
    """Issue 58.7: ten extra/missing pairs first left TAU's alignment precision "n/a"."""
    from s3kg_core.annotation.quality import category_precision
    from s3kg_core.annotation.tasks import create_task, queue
    from s3kg_core.store.store import Store

    store = Store(db)
    report = create_task(store, ["ann", "bob"], 2, run_ids=[1], sample=8, seed=2, encoder=minilm)
    task = report.task_id
    with store.connect() as con:
        mine, bobs = queue(con, task, "ann"), queue(con, task, "bob")
    assert mine == bobs  # the same answers in the same order: their decisions overlap
    present = {c for q in mine for c in q.categories}
    assert "aligned" in present and "aligned" in mine[0].categories  # opens on an aligned pair
    assert {c for q in mine[: len(present)] for c in q.categories} == present
    at = _annotate("ann")
    picker = at.selectbox(key="annotate_queue_item")
    assert [o.split(" · ")[:2] for o in picker.options] == [
        [f"{q.position + 1}. run {q.run_id}", f"item {q.item_id}"] for q in mine
    ]  # the page lists the queue in its order, each answer with its categories
    assert all(
        ", ".join(c.replace("_", " ") for c in q.categories) in option
        for q, option in zip(mine, picker.options, strict=True)
    )
    assert picker.value == f"{mine[0].run_id}:{mine[0].item_id}"
    before = _precision_caption(at)
    assert f"(task {task};" in before and "aligned: none judged yet" in before
    n = int(_focused(at).split(" of ")[1].split("**")[0])
    for _ in range(n):
        _key(at, "confirm")
    found = category_precision(Store(db, read_only=True), task_id=task)
    after = _precision_caption(at)
    judged = [name for name, e in found.items() if e.n]
    assert "aligned" in judged
    for name in judged:
        e = found[name]
        label = name.replace("_", " ")
        assert f"{label} **{e.value:.3f}** ({e.low:.3f} to {e.high:.3f}, n = {e.n})" in after
    # the Agreement view's table: the same figures, every category named
    at.segmented_control(key="annotate_view").set_value("agreement").run()
    assert not at.exception
    table = app_frame_with(at, "TAU category", "Precision", "95% interval, n")
    assert len(table) == len(found)
    row = table[table["TAU category"] == "aligned"].iloc[0]
    e = found["aligned"]
    assert row["Precision"] == f"{e.value:.3f}"
    assert row["95% interval, n"] == f"95% CI {e.low:.3f} to {e.high:.3f}, n = {e.n}"
    assert "nothing judged yet" in set(table["95% interval, n"]) or all(x.n for x in found.values())


def test_two_annotators_disagree_and_the_adjudicator_decides(db):
    from s3kg_core.annotation.log import final_labels
    from s3kg_core.store.store import Store

    for name, action in (("ann", "confirm"), ("bob", "reject")):
        at = _annotate(name, run="1", item="4")
        _key(at, action)
    at = _annotate("cy", view="adjudicate")
    assert any("1 pairs the annotators disagree on, 0 adjudicated" in c.value for c in at.caption)
    assert any("ann: **confirm**" in m.value and "bob: **reject**" in m.value for m in at.markdown)
    _button(at, "annotate_adjudicate_0_reject").click().run()
    assert not at.exception
    assert any("1 adjudicated" in c.value for c in at.caption)
    with Store(db, read_only=True).connect() as con:
        labels = final_labels(con)
    assert labels[["label", "source"]].values.tolist() == [["reject", "adjudicated"]]
    # the agreement view measures TAU against it, and says recall is untested
    at.segmented_control(key="annotate_view").set_value("agreement").run()
    assert not at.exception
    assert app_metric(at, "TAU precision") == "0.000"
    assert any("Recall is untested" in w.value for w in at.warning)
    table = app_frame_with(at, "Coefficient", "95% interval")
    assert {"Krippendorff's alpha", "Cohen's kappa"} <= set(table["Coefficient"])
    assert "aligned" in set(table["TAU category"])
    (download,) = at.get("download_button")
    assert download.proto.label == "Download the decisions"


def test_an_added_pair_is_saved_at_once_and_can_be_removed(db):
    at = _annotate("ann", run="1", item="4")
    at.selectbox(key="add_gold").select_index(0).run()
    at.selectbox(key="add_answer").select_index(0).run()
    _button(at, "add_pair").click().run()
    assert not at.exception
    assert [v for *_, v in _annotations(db)] == ["add"]  # the proposals stay undecided
    assert any(t.value.startswith("+ ") for t in at.text)
    _button(at, "annotate_remove_0").click().run()
    assert not at.exception and _annotations(db) == []


# Regression (issue 28.11): a name with NUL or U+202E was saved ("\u202eecila" shows as alice).
def test_annotate_refuses_a_name_with_a_bidi_override_and_saves_nothing(db):
    at = _annotate("\u202eecila")
    assert any("U\\+202E" in e.value for e in at.error)  # Markdown-escaped "U+202E"
    assert _button(at, "annotate_key_confirm").disabled
    assert _annotations(db) == []


def test_annotate_escapes_model_text_in_markdown(db):
    from dashboard.escape import md

    question, name = "**bold** [x](http://e.com) :red[r] $x$", "<b>ann</b>*"
    con = duckdb.connect(str(db))
    try:
        con.execute("UPDATE items SET question = ?", [question])
    finally:
        con.close()
    at = _annotate(name, annotator="x")
    shown = next(m.value for m in at.markdown if m.value.startswith("**Question**"))
    assert shown.endswith(md(question)) and "\\*\\*bold\\*\\*" in shown
    at2 = _annotate(annotator=name)
    warning = next(w.value for w in at2.warning if "This link names" in w.value)
    assert md(name) in warning and "<b>" not in warning


# --- Benchmarks and Factuality on the demo (issue 16: empty pages) ---------------------------


def test_benchmarks_page_labels_the_demos_precomputed_results(read_db):
    at = _app("bench")
    note = next(i.value for i in at.info if "Precomputed project results" in i.value)
    assert "9 public labelled pair sets" in note and "data/demo/bench_results.json" in note
    assert "Figures only" in note
    assert any("Computed with `s3kg bench pairs --dataset all" in c.value for c in at.caption)
    table = app_frame_with(at, "method", "F1", "AUROC", "alpha", "source")
    assert {"s3kg", "s3kg@kgx", "rouge1"} <= set(table["method"])
    assert set(table["source"]) == {"project (precomputed)"}
    auroc = app_frame_with(at, "mean")
    assert len(auroc.columns) == 10  # nine pair sets and their mean
    assert any("ROC curves need per-pair scores" in c.value for c in at.caption)
    assert any("precomputed results are figures only" in c.value for c in at.caption)
    at.selectbox(key="bench_dataset").select_index(3).run()
    assert not at.exception


def test_factuality_page_says_the_demo_statements_are_unrelated(db):
    at = _app("factuality")
    assert [w.value for w in at.warning] == [factuality_module().DEMO_NOTE]
    assert "unrelated to the demo's questions" in at.warning[0].value
    assert factuality_module().demo_note("my-own-evaluation") is None


def factuality_module():
    from dashboard import factuality

    return factuality


def _drop_bench_rows(db) -> None:
    con = duckdb.connect(str(db))
    try:
        con.execute("DELETE FROM bench_results")
    finally:
        con.close()


# -- a database another process holds (issue 28, item 6) ------------------------------------------


@pytest.fixture
def short_lock_wait(monkeypatch):
    """The dashboard's wait for a locked file cut from 15 s to 1 s (the behaviour is the same)."""
    import dashboard.data.database

    monkeypatch.setattr(dashboard.data.database, "LOCK_TIMEOUT", 1.0)


def test_a_decision_while_another_process_holds_the_file_says_so_and_a_retry_saves(
    db, short_lock_wait
):
    """Regression: the page was replaced by a DatabaseLockedError traceback and the verdicts
    were lost; now one line says why, the pair stays focused, and the key again saves it."""
    from store_helpers import start_lock_holder

    at = _annotate("ann")
    holder = start_lock_holder(db, hold=6.0)
    try:
        _key(at, "confirm")  # waits 1 s for the file, then says why
        _settled(at)
        (error,) = at.error
        assert error.value.startswith("Not saved: database ") and "is locked" in error.value
        assert "\n" not in error.value and "Press the key again" in error.value
        assert _focused(at).startswith("**Pair 1 of ")  # still on the pair
    finally:
        holder.communicate(timeout=60)
    _key(at, "confirm")
    assert not at.error and _focused(at).startswith("**Pair 2 of ")
    assert [(a, v) for a, _, _, v in _annotations(db)] == [("ann", "confirm")]


def _settled(at: AppTest, timeout: float = 60.0) -> AppTest:
    """Wait until the session's queued decisions are saved (or failed), then run again."""
    from dashboard.save_queue import SaveQueue

    queue = at.session_state["annotate.saves"]
    assert isinstance(queue, SaveQueue) and queue.wait(timeout)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_keys_pressed_while_a_save_waits_for_the_file_judge_their_own_pairs_in_order(db):
    """Regression (issue 44, item 1): while another process held the write lock, Reject, Confirm
    and Skip on pairs 1, 2, 3 were stored as reject, skip, confirm with no word, and nothing
    showed a save was pending. Each key is bound to the pair shown when it was pressed, the
    saves wait their turn, and the page says what it is saving meanwhile."""
    from store_helpers import start_lock_holder

    from s3kg_core.escape import md

    at = _annotate("ann")
    holder = start_lock_holder(db, hold=6.0)
    try:
        started = time.perf_counter()
        for n, action in enumerate(("reject", "confirm", "skip"), 1):
            assert _focused(at).startswith(f"**Pair {n} of ")
            _key(at, action, settle=False)  # the page answers at once, the save still waiting
        assert time.perf_counter() - started < 5.0  # no key waited for the file
        assert _focused(at).startswith("**Pair 4 of ")
        (saving,) = [i.value for i in at.info if i.value.startswith("Saving ")]
        assert saving.startswith(md("Saving reject for pair 1 … (database busy: waiting "))
        assert saving.endswith(md(" then confirm for pair 2, skip for pair 3, in this order"))
        assert len(at.session_state["annotate.saves"].pending()) == 3  # none saved yet
        _key(at, "undo", settle=False)  # an undo now would take back an older one: refused
        assert [w.value for w in at.warning] == [
            md(
                "Undo refused: your last decisions are still being saved. Press U again once "
                "they are."
            )
        ]
    finally:
        holder.communicate(timeout=60)
    _settled(at)
    assert not at.error and not [i for i in at.info if i.value.startswith("Saving ")]
    assert [v for *_, v in _annotations(db)] == ["reject", "confirm", "skip"]  # in order ...
    again = _annotate("ann", run="1", item=str(_item(at)))
    table = app_frame_with(again, "Your verdict")  # ... each on its own pair
    assert table["Your verdict"].tolist()[:4] == ["reject", "confirm", "skip", ""]


def test_two_keys_on_one_drawing_of_the_pair_save_one_and_say_so(db):
    """Two keys that reach the page in one run (pressed before it showed the next pair) were
    both saved, the second on a pair the annotator never saw; now it is refused aloud."""
    from s3kg_core.escape import md

    at = _annotate("ann")
    _button(at, "annotate_key_confirm").click()
    _button(at, "annotate_key_reject").click()  # both presses reach one run of the page
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [v for *_, v in _annotations(db)] == ["confirm"]
    (refused,) = [w.value for w in at.warning]
    assert refused == md(
        "Not saved: reject reached the page before it showed the next pair (two keys at once "
        "on pair 1). Press it again for the pair shown now."
    )
    assert _focused(at).startswith("**Pair 2 of ")
    _key(at, "reject")  # pressed again: on the pair shown now
    assert [v for *_, v in _annotations(db)] == ["confirm", "reject"] and not at.warning


def _item(at: AppTest) -> int:
    item = at.query_params["item"]
    return int(item[0] if isinstance(item, list) else item)


def test_the_overview_on_a_file_another_process_holds_is_one_line_and_a_retry(db, short_lock_wait):
    """Regression: a cold load while another process held the file showed a traceback."""
    from store_helpers import start_lock_holder

    holder = start_lock_holder(db, hold=6.0)
    try:
        at = AppTest.from_file(str(PAGES["overview"]), default_timeout=180)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        (error,) = at.error
        assert error.value.startswith("database ") and "is locked by another process" in error.value
        assert "\n" not in error.value
        retry = _button(at, "error_retry")
    finally:
        holder.communicate(timeout=60)
    retry.click().run()
    assert not at.exception and not at.error
    assert app_metric(at, "Answers scored") == "60"


# -- partial runs (issue 28, item 7) --------------------------------------------------------------


def test_every_page_that_shows_a_partial_runs_numbers_marks_it(db):
    """Regression: while `s3kg score` ran (or after it was stopped) the pages showed a run with
    some of its answers scored as if it were complete; the CLI's `cus` says it is partial."""
    con = duckdb.connect(str(db))
    try:  # run 1 as a stopped scoring run leaves it: 5 of its 30 answers not yet scored
        con.execute("DELETE FROM scores WHERE run_id = 1 AND item_id IN (SELECT item_id "
                    "FROM scores WHERE run_id = 1 ORDER BY item_id LIMIT 5)")  # fmt: skip
        con.execute("DELETE FROM tau_results WHERE run_id = 1")
    finally:
        con.close()
    mark = "run 1\\): 25 of 30 answers scored"  # as escaped Markdown
    for page in ("overview", "compare", "sample", "failure_analysis"):
        at = _app(page)
        notes = [w.value for w in at.warning if "Partial run" in w.value]
        assert len(notes) == 1 and mark in notes[0], (page, [w.value for w in at.warning])
        assert "run 2" not in notes[0]  # the complete run is not named
    at = _app("overview")
    (board,) = _boards(at)
    assert sorted(board["scoring"]) == ["complete", "partial: 25 of 30 scored"]


def test_complete_runs_carry_no_partial_mark(read_db):
    at = _app("overview")
    assert not [w for w in at.warning if "Partial run" in w.value]
    (board,) = _boards(at)
    assert len(board) == 2 and "scoring" not in board  # the column shows only a partial run


# -- the sidebar's import reads only the import folder (issue 28, item 9) ------------------------


def test_the_sidebar_import_refuses_folders_outside_the_import_root(db, tmp_path, monkeypatch):
    """Regression: a visitor typing any folder of the server saw the columns of its CSVs
    (`id, email, password_hash`) and could import release-format files from it."""
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "users_table.csv").write_text("id,email,password_hash\n1,a@b,x\n")
    root = tmp_path / "root"
    (root / "qa").mkdir(parents=True)
    (root / "qa" / "mesaqa_model.csv").symlink_to(secret / "users_table.csv")
    (root / "away").symlink_to(secret)
    monkeypatch.setenv("S3KG_IMPORT_ROOT", str(root))
    at = _app("overview")
    for folder in (secret, root / "away", root / ".." / "secret", root / "qa"):
        at.sidebar.text_input(key="release_folder").set_value(str(folder)).run()
        at.sidebar.button(key="release_import").click().run()
        assert not at.exception
        (error,) = at.sidebar.error
        assert error.value.startswith("Only folders inside the import folder"), error.value
        assert "S3KG\\_IMPORT\\_ROOT" in error.value or "S3KG_IMPORT_ROOT" in error.value
        assert "password" not in error.value and "email" not in error.value
        assert "users" not in error.value
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM runs").fetchall() == [(2,)]  # nothing imported
    finally:
        con.close()


# -- the leaderboard: per dataset, intervals, URL state (issue 31) -------------------------------


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory, minilm):
    """Datasets ``alpha-set`` and ``beta-set``, two runs each; ``beta-set``'s runs share one
    display name (``m``, two model folders), scored with MiniLM in ``hybrid`` mode (its seeded
    runs swap places at some alpha)."""
    from store_helpers import build_store

    from s3kg_core.scoring.s3kg import S3KGConfig
    from s3kg_core.stages.score import score_store

    path = tmp_path_factory.mktemp("two-datasets") / "s3kg.duckdb"
    build_store(path, dataset="alpha-set", n_items=4, seed=1)
    store = build_store(path, dataset="beta-set", models=("org1/m", "org2/m"), n_items=4, seed=2)
    score_store(store, encoder=minilm, config=S3KGConfig(mode="hybrid"))
    return path


@pytest.fixture
def two_db(two_datasets, tmp_path, monkeypatch):
    import shutil

    from dashboard.data.database import clear_caches

    path = tmp_path / "s3kg.duckdb"
    shutil.copy(two_datasets, path)
    monkeypatch.setenv("S3KG_DB", str(path))
    clear_caches()
    return path


def _boards(at: AppTest) -> list:
    """The Overview's leaderboards (live tables, one per dataset) at the server's alpha, with
    each interval's bounds as numbers."""
    boards = []
    for key in live_blocks(at):
        if key.startswith("leaderboard."):
            board = live_table(at, key)
            boards.append(board.assign(low=[lo for lo, _ in board["interval"]],
                                       high=[hi for _, hi in board["interval"]]))  # fmt: skip
    return boards


def test_the_leaderboard_ranks_runs_within_their_dataset_only(two_db, downloads):
    at = _app("overview")
    boards = _boards(at)
    assert len(boards) == 2  # one table per dataset, never one ranking of both
    for board in boards:
        assert board["rank"].tolist() == sorted(board["rank"]) and board["rank"].iloc[0] == 1
        assert (board["low"] <= board["mean"]).all() and (board["mean"] <= board["high"]).all()
    # the two runs named "m" are two rows with their own model folders, never merged
    csv = _overview_csv(downloads)
    beta = csv[csv["name"] == "m"]
    assert sorted(beta["model"]) == ["org1/m", "org2/m"] and len(set(beta.index)) == 2
    shown = next(b for b in boards if set(b["run_id"]) == set(beta.index))
    assert len(set(shown["run"])) == 2  # told apart on the screen too
    assert at.query_params["alpha"] == "0.5" and "dataset" not in at.query_params
    at.selectbox(key="overview.dataset").set_value("beta-set").run()
    assert [len(b) for b in _boards(at)] == [2]
    assert at.query_params["dataset"] == "beta-set"


def test_a_link_with_dataset_and_alpha_reopens_that_view(two_db):
    at = AppTest.from_file(str(PAGES["overview"]), default_timeout=180)
    at.query_params["dataset"] = "alpha-set"
    at.query_params["alpha"] = "0.9"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.sidebar.slider(key="alpha").value == 0.9
    (board,) = _boards(at)
    assert sorted(r.split(" · ")[0] for r in board["run"]) == ["model-a", "model-b"]
    assert any("alpha:0.9" in c.value for c in at.caption)
    # a bad alpha in a link is ignored, not an error
    bad = AppTest.from_file(str(PAGES["overview"]), default_timeout=180)
    bad.query_params["alpha"] = "7"
    bad.run()
    assert not bad.exception and bad.sidebar.slider(key="alpha").value == 0.5


def test_moving_alpha_names_the_runs_that_swapped_places(two_db):
    from leaderboard_helpers import rank_runs

    from s3kg_core.analysis.leaderboard import swaps
    from s3kg_core.stages.scored import latest_signature, scored_frame
    from s3kg_core.store.store import Store

    store = Store(two_db, read_only=True)
    frame = scored_frame(store, latest_signature(store))
    moved = [a for a in np.round(np.linspace(0, 1, 21), 2) if swaps(rank_runs(frame, a))]
    assert moved, "the seeded fixture has runs that swap places at some alpha"
    at = _app("overview")
    at.sidebar.slider(key="alpha").set_value(float(moved[0])).run()
    note = live_blocks(at)["live.note"]  # the note at every stop; the server's at its own
    assert "moved above" in note["texts"][note["at"]]
    assert note["texts"][note["at"]].startswith(f"At alpha {moved[0]:g} against 0.5")
    changes = pd.concat(_boards(at))["change"].tolist()
    assert any(c.startswith("▲") for c in changes) and any(c.startswith("▼") for c in changes)


# -- the Run details page and the comparison's links (issue 31) ----------------------------------


def test_the_run_page_shows_its_name_model_settings_cost_and_statuses(read_db):
    at = AppTest.from_file(str(PAGES["run"]), default_timeout=180)
    at.query_params["run"] = "2"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    with duckdb.connect(str(read_db), read_only=True) as con:
        median, prompt, kgs = con.execute(
            "SELECT median(latency_s), sum(prompt_tokens), "
            "(SELECT count(*) FROM kgs WHERE run_id = 2) FROM answers WHERE run_id = 2"
        ).fetchone()
    assert app_metric(at, "Latency (median)") == f"{median:.2f} s"
    assert app_metric(at, "Answers") == "30"
    cost = app_frame_with(at, "cost", "value", "over").set_index("cost")["value"]
    assert cost["prompt tokens (sum)"] == f"{int(prompt):,}"
    fields = app_frame_with(at, "field", "value").set_index("field")["value"]
    assert fields["display name"] == "SmolLM2-135M-Instruct" and fields["temperature"] == "0.7"
    assert fields["endpoint"].startswith("transformers serve") and fields["max tokens"] == "160"
    assert app_frame_with(at, "source", "status", "kgs")["kgs"].sum() == kgs
    assert at.query_params["run"] == "2" and at.query_params["alpha"] == "0.5"
    # issue 58: each signature the page prints ends with the alpha of its numbers
    for alpha in ("0.5", "0.8"):
        if alpha != "0.5":
            at.sidebar.slider(key="alpha").set_value(float(alpha)).run()
        fields = app_frame_with(at, "field", "value").set_index("field")["value"]
        printed = [fields["score signature"], *app_frame_with(at, "signature")["signature"]]
        assert printed and all(
            "|version:" in s and s.endswith(f"|alpha:{alpha}") for s in printed
        ), printed
    # an unknown run in a link is said, and the page shows the first run
    other = AppTest.from_file(str(PAGES["run"]), default_timeout=180)
    other.query_params["run"] = "99"
    other.run()
    assert not other.exception and any("run 99" in w.value for w in other.warning)


def test_a_comparison_link_reopens_its_pair_and_question(read_db):
    at = AppTest.from_file(str(PAGES["compare"]), default_timeout=180)
    at.query_params.update({"a": "2", "b": "1", "item": "7", "alpha": "0.8"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="compare_a").value == "2"
    assert at.selectbox(key="compare_b").value == "1"
    assert at.selectbox(key="compare_item").value == "7"
    assert at.sidebar.slider(key="alpha").value == 0.8
    assert dict(at.query_params) == {"a": "2", "b": "1", "item": "7", "alpha": "0.8"}
    verdicts = [v.value for v in (*at.error, *at.success)]
    assert any("B − A = " in v and "95% interval" in v for v in verdicts)


def _gate_lines(output: str) -> list[tuple[str, str, str]]:
    """``(mark, name, measured)`` of each gate line ``s3kg check`` prints."""
    found = re.findall(r"^  (PASS|FAIL) (\w+): (.*); fails when ", output, flags=re.M)
    return [(mark, name, measured) for mark, name, measured in found]


def test_run_comparison_shows_the_gates_and_verdict_of_s3kg_check(read_db):
    """Regression (issue 43, item 4): the page said "no clear difference" while
    ``s3kg check --run 2 --baseline 1`` failed on ``new_unscorable`` (demo-02's answer KG is
    empty), a gate the page never showed, and its interval came from 1,999 resamples against
    the check's 9,999. The page now runs the check's own function: every gate, its result and
    figure as the command prints them, and the command's verdict."""
    from click.testing import CliRunner

    from s3kg_core.cli import cli
    from s3kg_core.escape import md

    at = _app("compare")
    alpha = at.sidebar.slider(key="alpha").value
    run = CliRunner().invoke(
        cli, ["check", "--db", str(read_db), "--run", "2", "--baseline", "1", "--alpha", str(alpha)]
    )
    assert run.exit_code == 1, run.output
    lines = _gate_lines(run.output)
    assert any(
        (mark, name) == ("FAIL", "new_unscorable") and measured.startswith("1 of 30 ")
        for mark, name, measured in lines
    )
    table = next(m.value for m in at.markdown if m.value.startswith("| Gate | Result |"))
    rows = table.splitlines()[2:]
    assert len(rows) == len(lines) >= 4
    for (mark, name, measured), row in zip(lines, rows, strict=True):
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert cells[0] == f"`{name}`"
        assert mark in cells[1] and ("FAIL" in cells[1]) == (mark == "FAIL")
        assert cells[2].startswith(md(measured))
    assert "demo\\-02\\: answer\\_kg\\_empty" in table
    verdict = " ".join(e.value for e in at.error)
    said = re.search(r": (FAILED: \d+ of \d+ gates)$", run.output.splitlines()[0]).group(1)
    assert f"s3kg check {said}" in verdict and "`new_unscorable`" in verdict
    low, high = re.search(r"cus_drop: \S+ \(95% interval (\S+) to (\S+);", run.output).groups()
    shown = re.search(r"95% interval (\S+) … (\S+) \(", verdict)
    assert shown is not None, verdict  # the same interval, to the page's 3 decimals
    assert float(shown.group(1)) == pytest.approx(float(low), abs=6e-4)
    assert float(shown.group(2)) == pytest.approx(float(high), abs=6e-4)
    assert "9,999 resamples" in verdict and not at.success
    command = f"s3kg check --db {read_db} --run 2 --baseline 1 --alpha {alpha:g}"
    assert any(f"`{command}`" in c.value for c in at.caption)


# -- one verdict and one interval for the demo's runs on every surface (issue 58) -----------------


@pytest.fixture
def downloads(monkeypatch):
    """Every file a page hands to a download button as it draws (the bytes, in order)."""
    from streamlit.runtime.media_file_manager import MediaFileManager

    made: list = []
    add = MediaFileManager.add

    def recorded(self, data, *args, **kwargs):
        made.append(data)
        return add(self, data, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add", recorded)
    return made


def _overview_csv(downloads: list) -> pd.DataFrame:
    import io

    (csv,) = [d for d in downloads if isinstance(d, bytes) and d.startswith(b"dataset,rank,")]
    return pd.read_csv(io.BytesIO(csv)).set_index("run_id")


def test_the_demos_two_runs_get_one_verdict_on_all_five_surfaces_issue_58(
    read_db, tmp_path, downloads
):
    """Regression (issue 58, item 1): the Overview said T=0.7 was "tied with #1" (the two
    runs' intervals overlapped) while the Run comparison and ``s3kg check`` said it was clearly
    lower (the paired bootstrap over the 30 questions both answered). Every surface now says
    the same of T=0.7 (run 2) against T=0 (run 1), in one text naming the test: the Overview
    (its table, its CSV and the note under it), the Run comparison, ``s3kg check``,
    ``s3kg report`` and ``s3kg compare``; and the Run page repeats the Overview's."""
    import html

    from click.testing import CliRunner

    from dashboard.escape import md
    from s3kg_core.analysis.compare import compare_runs
    from s3kg_core.cli import cli
    from s3kg_core.store.store import Store

    want = compare_runs(Store(read_db, read_only=True), 2, 1).verdict()
    text = want.text()
    assert text == "clearly lower (paired bootstrap over 30 shared questions)"
    # 1. the Overview: the run's row, the CSV download and the note naming the test
    at = _app("overview")
    (board,) = _boards(at)
    row = board.set_index("run_id").loc[2]
    assert f"{row['verdict']} ({row['verdict_title']})" == text  # the test: its tooltip
    assert board.set_index("run_id").loc[1, "verdict"] == ""  # #1 itself
    csv = _overview_csv(downloads).loc[2]
    assert f"{csv['verdict']} ({csv['test']})" == text
    assert any(want.test() in m.value and "vs #1" in m.value for m in at.markdown)
    # 2. the Run comparison (A = T=0, B = T=0.7: the page's default pair)
    page = _app("compare")
    assert (page.selectbox(key="compare_a").value, page.selectbox(key="compare_b").value) == (
        "1", "2",
    )  # fmt: skip
    assert any(f"B against A: {text}." in e.value for e in (*page.error, *page.success))
    # 3. s3kg check, 4. s3kg report, 5. s3kg compare
    runner = CliRunner()
    pair = ["--db", str(read_db), "--run", "2", "--baseline", "1"]
    check = runner.invoke(cli, ["check", *pair])
    assert check.exit_code == 1 and f"  mean CUS against the baseline: {text}\n" in check.output
    out = tmp_path / "report.html"
    report = runner.invoke(cli, ["report", *pair, "--out", str(out)])
    assert report.exit_code == 0, report.output
    assert f"<strong>{html.escape(text)}</strong>" in out.read_text(encoding="utf-8")
    compare = runner.invoke(cli, ["compare", *pair])
    assert compare.exit_code == 0, compare.output
    assert f"  mean CUS against the baseline: {text}\n" in compare.output
    assert json.loads(runner.invoke(cli, ["compare", *pair, "--json"]).output)["verdict"] == text
    # the Run page says what the Overview says
    run_page = AppTest.from_file(str(PAGES["run"]), default_timeout=180)
    run_page.query_params["run"] = "2"
    run_page.run()
    assert any(md(text) in c.value for c in run_page.caption)
    # ... and links to the two side by side, as the Overview does (the browser test clicks it)
    assert any("/Run_comparison?a=1&b=2&alpha=0.5)" in m.value for m in run_page.markdown)


def test_a_run_has_one_interval_on_all_four_surfaces_issue_58(read_db, tmp_path, downloads):
    """Regression (issue 58, item 2): ``s3kg report`` showed T=0's interval as 0.593-0.670 and
    the Overview as 0.594-0.674 (9,999 resamples against 1,999). The Overview's table, its CSV
    download, ``s3kg cus --json`` and ``s3kg report`` now give each demo run one interval."""
    from click.testing import CliRunner

    from s3kg_core.cli import cli
    from s3kg_core.report.build import build_report
    from s3kg_core.store.store import Store

    at = _app("overview")
    (board,) = _boards(at)
    shown = board.set_index("run_id")[["low", "high"]]
    csv = _overview_csv(downloads)[["low", "high"]]
    out = tmp_path / "cus.json"
    cus = CliRunner().invoke(cli, ["cus", "--db", str(read_db), "--json", str(out)])
    assert cus.exit_code == 0, cus.output
    records = {r["run_id"]: (r["cus_low"], r["cus_high"]) for r in json.loads(out.read_text())}
    store = Store(read_db, read_only=True)
    for run in (1, 2):
        overview = tuple(shown.loc[run])
        assert overview[0] < overview[1]
        assert tuple(csv.loc[run]) == pytest.approx(overview, rel=0, abs=1e-15)
        assert records[run] == overview
        scores = build_report(store, run, worst=0).scores["cus"]
        assert (scores.low, scores.high) == overview
        page = tmp_path / f"report{run}.html"
        made = CliRunner().invoke(
            cli, ["report", "--db", str(read_db), "--run", str(run), "--worst", "0",
                  "--out", str(page)],
        )  # fmt: skip
        assert made.exit_code == 0, made.output
        assert f"[{overview[0]:.3f}, {overview[1]:.3f}]" in page.read_text(encoding="utf-8")


def test_run_comparison_diffs_one_question_triple_by_triple(read_db):
    at = AppTest.from_file(str(PAGES["compare"]), default_timeout=300)
    at.query_params.update({"a": "1", "b": "2", "item": "7"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    answers = app_frame_with(at, "in", "head", "relation", "tail")
    gold = app_frame_with(at, "gold triple", "in A", "in B", "changed")
    assert set(answers["in"]) <= {"both", "only A", "only B"} and len(answers) > 0
    assert gold["changed"].tolist() == sorted(gold["changed"], reverse=True)  # changed first
    assert (gold["changed"] == (gold["in A"] != gold["in B"])).all()
    line = next(m.value for m in at.markdown if m.value.startswith("**Triple by triple**"))
    counts = answers["in"].value_counts()
    assert f"{counts.get('both', 0)} answer triples in both" in line
    assert f"{int(gold['changed'].sum())} of {len(gold)} gold triples changed" in line
    assert any(i.value.startswith("Over 30 shared questions, B lost") for i in at.info)


def test_run_comparison_counts_lost_triples_of_many_questions_only_when_asked(db, monkeypatch):
    """Regression (issue 33): two runs of 5,000 answers took 20 s to open, every answer of both
    explained to count the gold triples B lost; past LIVE_CHANGES_MAX it waits for a toggle."""
    from dashboard import compare

    monkeypatch.setattr(compare, "LIVE_CHANGES_MAX", 10)  # the demo pair shares 30 questions
    at = AppTest.from_file(str(PAGES["compare"]), default_timeout=300)
    at.query_params.update({"a": "1", "b": "2", "item": "7"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not any("B lost" in i.value for i in at.info)
    at.toggle(key="compare_count_changes").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(i.value.startswith("Over 30 shared questions, B lost") for i in at.info)


def test_search_finds_answers_by_words_and_status_and_keeps_them_in_the_url(read_db):
    at = AppTest.from_file(str(PAGES["search"]), default_timeout=180)
    at.query_params["q"] = "PENICILLIN"
    at.query_params["in"] = "all"  # the four texts (issue 43: the answer alone by default)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    hits = app_frame_with(at, "ext_id", "question", "explorer")
    with duckdb.connect(str(read_db), read_only=True) as con:
        (want,) = con.execute(
            "SELECT count(*) FROM answers a JOIN items i USING (item_id) WHERE "
            "lower(i.question || ' ' || coalesce(a.answer, '') || ' ' || i.gold_answer || ' ' "
            "|| i.context) LIKE '%penicillin%'"
        ).fetchone()
    assert len(hits) == want > 0
    assert all(u.startswith("/Sample_explorer?run=") for u in hits["explorer"])
    at.text_input(key="search.q").set_value("").run()
    at.selectbox(key="search.scope").set_value("answer").run()
    at.selectbox(key="search.kg").set_value("empty").run()
    empty = app_frame_with(at, "ext_id", "answer_kg_status")
    assert set(empty["answer_kg_status"]) == {"empty"} and len(empty) >= 1
    assert dict(at.query_params) == {"kg": "empty"}
    # 60 answers, 50 a page: Next shows the last 10
    at.selectbox(key="search.kg").set_value("any").run()
    assert len(app_frame_with(at, "ext_id", "explorer")) == 50
    at.button(key="search.next").click().run()
    assert len(app_frame_with(at, "ext_id", "explorer")) == 10
    assert at.query_params["page"] == "2"


def test_search_counts_a_score_range_at_every_stop_of_alpha(read_db):
    """Issue 60: with a CUS range set, the Search page holds how many answers the range keeps
    at every stop of the alpha slider (the browser shows the slider's stop while it moves);
    released at a stop, the server's search finds exactly that many."""
    from dashboard.live_alpha import GRID

    at = AppTest.from_file(str(PAGES["search"]), default_timeout=180)
    at.query_params["range"] = "0.4-0.6"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    block = live_blocks(at)["search.in_range"]
    assert block["style"] == "caption" and len(block["texts"]) == len(GRID)
    counts = [int(t.rsplit(": ", 1)[1].split()[0].replace(",", "")) for t in block["texts"]]
    assert len(set(counts)) > 1, counts  # alpha moves answers in and out of the range
    for alpha in (0.0, 0.3, 0.8, 1.0):
        at.sidebar.slider(key="alpha").set_value(alpha).run()
        assert not at.exception
        line = live_note(at, "search.in_range")
        assert line.startswith(f"CUS between 0.4 and 0.6 at alpha {alpha:g}: ")
        total = len(app_frame_with(at, "ext_id", "explorer"))
        head = next(m.value for m in at.markdown if " match" in m.value)
        want = counts[GRID.index(alpha)]
        assert head.startswith(f"**{want:,} answer"), (head, want)
        assert total == min(want, 50)
    # no range: nothing to count, no line
    at.slider(key="search.range").set_value((0.0, 1.0)).run()
    assert "search.in_range" not in live_blocks(at)


def _search_html(at: AppTest) -> str:
    """The body of the Search page's snippet table (``st.html``), or ``""``."""
    bodies = [e.proto.body for e in at.get("html")]
    return next((b for b in bodies if "the words in their text" in b), "")


def test_search_looks_in_the_answers_by_default_and_marks_where_the_words_are(read_db):
    """Regression (issue 43): Search matched the question and the context as well as the
    answer, with no "answers only", no highlight and nothing saying which text matched."""
    with duckdb.connect(str(read_db), read_only=True) as con:
        (in_answers,) = con.execute(
            "SELECT count(*) FROM answers WHERE answer ILIKE '%penicillin%'"
        ).fetchone()
        (anywhere,) = con.execute(
            "SELECT count(*) FROM answers a JOIN items i USING (item_id) WHERE "
            "lower(i.question || ' ' || coalesce(a.answer, '') || ' ' || i.gold_answer || ' ' "
            "|| i.context) LIKE '%penicillin%'"
        ).fetchone()
    assert 0 < in_answers < anywhere  # the demo has both kinds: the test can tell them apart
    at = AppTest.from_file(str(PAGES["search"]), default_timeout=180)
    at.query_params["q"] = "penicillin"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="search.scope").value == "answer"
    hits = app_frame_with(at, "ext_id", "matched", "explorer")
    assert len(hits) == in_answers
    assert all("answer" in m.split(", ") for m in hits["matched"])
    assert any("(words in the answer)" in m.value for m in at.markdown)
    body = _search_html(at)
    assert body.count("<tr>") == in_answers + 1  # a row per answer, under the header
    assert re.search(r"<mark [^>]*>penicillin</mark>", body, re.IGNORECASE), body[:500]
    assert "<i>answer</i>" in body and "<script" not in body
    # answers, questions and contexts: every answer whose texts hold the word, each saying where
    at.selectbox(key="search.scope").set_value("all").run()
    hits = app_frame_with(at, "ext_id", "matched", "explorer")
    assert len(hits) == anywhere and at.query_params["in"] == "all"
    assert any(m and "answer" not in m.split(", ") for m in hits["matched"])
    fields = set(re.findall(r"<i>([a-z ]+)</i>", _search_html(at)))
    assert "answer" in fields and fields - {"answer"}, fields
    # no words: no snippets
    at.text_input(key="search.q").set_value("").run()
    assert _search_html(at) == ""


def test_run_comparison_reads_no_components_of_every_run(db, monkeypatch):
    """Regression (issue 33): the page read every answer's score components of every run into
    pandas and reblended them all at alpha on each rerun (and paged its picker in pandas); it
    reads the pairs, the chosen pair's scores and one page of questions from DuckDB."""
    from dashboard.data import reads

    def refuse(*args, **kwargs):
        raise AssertionError("the Run comparison loaded every answer's components")

    monkeypatch.setattr(reads, "run_components", refuse)
    monkeypatch.setattr(reads, "item_questions", refuse)
    at = _app("compare")
    assert app_metric(at, "Shared questions") == "30"
    table = app_frame_with(at, "item_id", "ext_id", "d_cus", "cus_a", "cus_b")
    picker = at.selectbox(key="compare_item")
    assert picker.value == str(table["item_id"].iloc[0])  # the biggest regression first
    assert picker.options == [
        f"ΔCUS {r.d_cus:+.3f} · {r.ext_id} · {r.question}" for r in table.itertuples()
    ]
    chosen = table.iloc[7]
    at.text_input(key="compare_search").set_value(str(chosen["ext_id"]).upper()).run()
    assert not at.exception, [e.value for e in at.exception]
    options = at.selectbox(key="compare_item").options
    assert 1 <= len(options) < 30 and all(str(chosen["ext_id"]) in o for o in options)
    at.selectbox(key="compare_item").set_value(str(chosen["item_id"])).run()
    at.sidebar.slider(key="alpha").set_value(0.8).run()  # other scores, the same question
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key="compare_item").value == str(chosen["item_id"])
    assert at.query_params["item"] == str(chosen["item_id"])
    assert app_metric(at, "Mean CUS · B") != f"{table['cus_b'].mean():.3f}"
    at.text_input(key="compare_search").set_value("no-such-words").run()
    assert any("No shared question matches 'no-such-words'" in i.value for i in at.info)


def test_run_comparison_downloads_the_report_s3kg_report_writes(db, tmp_path, monkeypatch):
    from click.testing import CliRunner
    from streamlit.runtime.media_file_manager import MediaFileManager

    from s3kg_core.cli import cli

    made = []  # the button's deferred callable, as Streamlit registers it
    register = MediaFileManager.add_deferred

    def recorded(self, data, *args, **kwargs):
        made.append(data)
        return register(self, data, *args, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", recorded)
    at = _app("compare")
    button = at.get("download_button")
    assert [b.label for b in button] == [
        "Download the report (HTML)",
        "Every shared question (CSV)",
    ]
    assert all(b.proto.deferred_file_id for b in button)  # built on click, not on every rerun
    report, questions = made[-2:]
    import io

    assert len(pd.read_csv(io.BytesIO(questions()))) == 30  # every shared question
    page = report()
    out = tmp_path / "report.html"
    alpha = at.sidebar.slider(key="alpha").value
    result = CliRunner().invoke(
        cli,
        ["report", "--db", str(db), "--run", "2", "--baseline", "1", "--alpha", str(alpha),
         "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert page == out.read_text(encoding="utf-8")
    assert "SmolLM2-135M-Instruct (run 2) against SmolLM2-135M-Instruct (run 1)" in page


@pytest.mark.parametrize("page", sorted(PAGES))
def test_no_page_holds_a_bare_string_streamlit_would_draw(page):
    """Regression: Streamlit's magic writes a page's bare string statements on the page (a
    docstring under a constant appeared above the Failure analysis title)."""
    import ast

    tree = ast.parse(PAGES[page].read_text(encoding="utf-8"))
    strays = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and node is not tree.body[0]  # the module's own docstring is not drawn
        and not any(
            isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node in parent.body[:1]
            for parent in ast.walk(tree)
        )
    ]
    assert not strays, f"{PAGES[page].name}: bare strings at lines {strays}"


@pytest.mark.parametrize(
    ("page", "params"),
    [
        ("compare", {"a": "1", "b": "2", "item": "99999999999999999999"}),
        ("compare", {"a": "99999999999999999999", "b": "2"}),
        ("search", {"page": "99999999999999999999"}),
        ("run", {"run": "99999999999999999999"}),
        ("annotate", {"run": "99999999999999999999", "item": "1"}),
        ("sample", {"run": "99999999999999999999", "item": "99999999999999999999"}),
    ],
    ids=["compare-item", "compare-run", "search-page", "run", "annotate", "sample"],
)
def test_an_out_of_range_number_in_a_link_is_a_bad_value_not_a_crash(read_db, page, params):
    """Regression (issue 44, item 5): DuckDB's ConversionException (INT64) on the page."""
    at = AppTest.from_file(str(PAGES[page]), default_timeout=180)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [e.value for e in at.error if "Conversion" in e.value]


def test_a_save_error_on_annotate_is_escaped_once_and_reads_as_typed(db, monkeypatch):
    """Regression (issue 44, item 10): the lock and disk-full lines showed Markdown escapes
    (``\\/tmp\\/...\\(PID ...\\)``): the message was escaped twice."""
    import dashboard.data.writes
    from s3kg_core.errors import DatabaseError
    from s3kg_core.escape import md

    raw = (
        "cannot write database /tmp/a_b/x.duckdb: the disk is full (No space left on device); "
        "what was saved before is kept: free space on its disk, then rerun."
    )

    def disk_full(path, decision):
        raise DatabaseError(raw)

    at = _annotate("ann")
    monkeypatch.setattr(dashboard.data.writes, "record_decision", disk_full)
    _key(at, "confirm")
    (error,) = at.error
    assert error.value == f"Not saved: {md(raw.rstrip('.'))}. Press the key again to retry."
    assert "\\\\" not in error.value  # no escaped backslash: each character shows as typed
    assert "\\/tmp\\/a\\_b\\/x\\.duckdb" in error.value  # escaped once: still safe Markdown
