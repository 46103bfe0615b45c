"""The Factuality page and its helpers (``dashboard/factuality.py``).

Pure helpers are tested on hand-made summaries and on the committed demo evaluations (the real
SmolLM2 run of ``bench/experiments/bench_factuality.py``); the page is driven with
streamlit.testing on a small DuckDB file holding only factuality evaluations (no demo build
needed: the file exists).
"""

from __future__ import annotations

import copy
import doctest
import json
import math
from pathlib import Path

import pandas as pd
import pytest
from dashboard_helpers import app_metric
from markdown_it import MarkdownIt
from store_helpers import REPO
from streamlit.testing.v1 import AppTest

import dashboard.factuality as factuality_module
from dashboard.factuality import (
    LEVELS,
    METRICS,
    SOURCES,
    accuracies,
    breakdown_figure,
    breakdown_frame,
    evaluation_choices,
    label_counts_text,
    markdown_literal,
    plot_text,
    scores_figure,
    scores_frame,
    small_groups,
    sweep_figure,
    sweep_frame,
)
from s3kg_core.errors import ConfigError, FactualityError
from s3kg_core.factuality.results import (
    FactualityEval,
    load_evaluations,
    read_evaluations,
    save_evaluation,
)
from s3kg_core.store.store import Store

PAGE = REPO / "pages" / "6_Factuality.py"
DEMO = REPO / "data" / "demo" / "factuality_eval.json"
XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def demo_evals() -> list[FactualityEval]:
    return read_evaluations(DEMO)


# -- the committed demo evaluations ------------------------------------------------------------


def test_demo_file_is_small_and_holds_the_two_smollm2_runs(demo_evals):
    assert DEMO.stat().st_size < 100_000
    assert [e.name for e in demo_evals] == ["smollm2-findkg-calibrated", "smollm2-findkg-raw"]
    for e in demo_evals:
        assert e.model == "smollm2-135m-instruct"
        assert e.n_test == e.summary["n_test"] == 80
        assert e.layer == e.summary["layer"]
        assert set(e.breakdown) == {"judge_relation", "judge_degree", "llm_relation", "llm_degree"}
        assert len(e.summary["layer_sweep"]) == 31  # SmolLM2-135M: embeddings + 30 layers
        assert "breakdown" not in e.summary  # stored apart, as `s3kg factuality evaluate --db`
    calibrated = demo_evals[0].summary
    assert calibrated["judge_accuracy"] == pytest.approx(0.65)
    assert calibrated["majority_accuracy"] == pytest.approx(0.5)
    assert calibrated["logreg_accuracy"] == pytest.approx(0.675)


def test_demo_evaluations_save_and_load_back(tmp_path, demo_evals):
    db = tmp_path / "f.duckdb"
    for e in demo_evals:
        save_evaluation(db, e)
    loaded = {e.name: e for e in load_evaluations(db)}
    for e in demo_evals:
        back = loaded[e.name]
        assert (back.model, back.layer, back.n_test) == (e.model, e.layer, e.n_test)
        assert back.summary == e.summary and back.breakdown == e.breakdown


def test_read_evaluations_takes_one_object_or_a_list_and_names_bad_files(tmp_path):
    one = FactualityEval("a", "m", 1, 2, {"n_test": 2}, {})
    path = tmp_path / "one.json"
    path.write_text(json.dumps(one.to_dict()))
    assert read_evaluations(path) == [one]
    with pytest.raises(FactualityError, match="no evaluation file"):
        read_evaluations(tmp_path / "missing.json")
    path.write_text("{not json")
    with pytest.raises(FactualityError, match="not JSON"):
        read_evaluations(path)
    path.write_text(json.dumps([{"name": "x"}]))
    with pytest.raises(FactualityError, match="needs name, model"):
        read_evaluations(path)


# -- pure helpers -------------------------------------------------------------------------------


def test_the_module_doctests_pass():
    result = doctest.testmod(factuality_module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 10 and result.failed == 0


@pytest.mark.parametrize(
    "text",
    [XSS, "a_b *c* `d` [l](javascript:x) :red[x] $x$ # h", "R&D &lt; <b>bold</b> \\ | ~~s~~"],
)
def test_markdown_literal_renders_as_the_text_typed(text):
    rendered = MarkdownIt("commonmark").enable("strikethrough").render(markdown_literal(text))
    assert rendered == f"<p>{_escape(text)}</p>\n"


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def test_plot_text_escapes_the_tags_plotly_would_read():
    assert plot_text(XSS) == "&lt;img src=x onerror=alert(1)&gt;"
    assert plot_text("a&b") == "a&amp;b"


def test_accuracies_and_label_counts(demo_evals):
    summary = demo_evals[0].summary
    assert accuracies(summary) == {
        "judge": 0.65,
        "majority class": 0.5,
        "logistic regression": 0.675,
    }
    assert math.isnan(accuracies({"judge_accuracy": None})["judge"])  # NaN stored as null
    assert label_counts_text(summary) == (
        "The LLM's own labels of the test statements: TRUE 36 · FALSE 40 · IDK 4; "
        "majority class FALSE."
    )
    assert label_counts_text({}).endswith("TRUE 0 · FALSE 0 · IDK 0.")


def test_scores_frame_reads_both_sources_at_both_levels(demo_evals):
    summary = demo_evals[0].summary
    frame = scores_frame(summary)
    assert len(frame) == 2 * 3 * 2
    facts = frame[frame.level == LEVELS["facts"]].set_index(["metric", "source"])["value"]
    for metric in METRICS:
        assert facts[(metric, SOURCES["llm"])] == pytest.approx(summary[f"llm_{metric}"])
        assert facts[(metric, SOURCES["judge"])] == pytest.approx(summary[metric])
    statements = frame[frame.level == LEVELS["statements"]].set_index(["metric", "source"])
    assert statements.loc[("correctness", SOURCES["llm"]), "value"] == pytest.approx(0.575)
    # Without the detailed scores: fact level from the headline keys, statement level NaN.
    bare = scores_frame({"correctness": 0.2, "llm_correctness": 0.4})
    assert bare[bare.level == LEVELS["facts"]].value.tolist()[:2] == [0.4, 0.2]
    assert bare[bare.level == LEVELS["statements"]].value.isna().all()


def test_sweep_frame_marks_the_chosen_layer(demo_evals):
    summary = demo_evals[0].summary
    sweep = sweep_frame(summary)
    assert sweep.layer.tolist() == list(range(31))
    assert sweep[sweep.chosen].layer.tolist() == [29]
    assert sweep_frame({"layer": 3}).empty
    assert sweep_frame(summary, layer=5)[lambda f: f.chosen].layer.tolist() == [5]
    fig = sweep_figure(sweep)
    assert fig.layout.shapes[0].x0 == 29
    assert fig.data[-1].name == "chosen layer 29"
    assert fig.data[-1].y[0] == pytest.approx(sweep.val_accuracy[29])


def test_breakdown_frame_keeps_the_stored_order_and_n(demo_evals):
    breakdown = demo_evals[0].breakdown
    by_relation = breakdown_frame(breakdown, "relation")
    assert len(by_relation) == 10 * 3 * 2
    keys = by_relation.drop_duplicates("key").sort_values("order").key.tolist()
    assert keys == [g["key"] for g in breakdown["llm_relation"]]
    row = by_relation[
        (by_relation.key == "Relate_To")
        & (by_relation.metric == "correctness")
        & (by_relation.source == SOURCES["judge"])
    ]
    assert row.n_facts.item() == 16 and row.value.item() == pytest.approx(0.0625)
    by_degree = breakdown_frame(breakdown, "degree")
    assert by_degree.drop_duplicates("key").key.str.startswith("q").all()
    assert small_groups(by_degree) == []  # 4 buckets of 10 facts
    assert small_groups(by_relation) == [
        g["key"] for g in breakdown["llm_relation"] if g["n_facts"] < 5
    ]
    assert breakdown_frame({}, "degree").empty
    with pytest.raises(ConfigError, match="relation"):
        breakdown_frame(breakdown, "entity")  # type: ignore[arg-type]


def test_breakdown_figure_labels_bars_with_n_and_escapes_keys():
    breakdown = {
        source: [
            {"key": XSS, "n_facts": 2, "correctness": 0.5, "truthfulness": 1, "informativeness": 1},
            {"key": "Has", "n_facts": 7, "correctness": None},
        ]
        for source in ("llm_relation", "judge_relation")
    }
    fig = breakdown_figure(breakdown_frame(breakdown, "relation"), "correctness", "t <i>")
    assert [t.name for t in fig.data] == [SOURCES["llm"], SOURCES["judge"]]
    llm = fig.data[0]
    assert list(llm.x) == [plot_text(XSS), "Has"]
    assert list(llm.text) == ["n=2", "n=7"]
    assert "2 test facts" in llm.hovertext[0] and "n/a" in llm.hovertext[1]
    assert XSS not in fig.to_json()
    assert fig.layout.title.text == "t &lt;i&gt;"


def test_scores_figure_shows_both_sources():
    fig = scores_figure(scores_frame({"correctness": 0.1, "llm_correctness": 0.3}), LEVELS["facts"])
    assert list(fig.data[0].x) == list(METRICS)
    assert fig.data[0].y[0] == pytest.approx(0.3) and fig.data[1].y[0] == pytest.approx(0.1)


def test_evaluation_choices_are_unique_and_map_to_names():
    frame = pd.DataFrame(
        {
            "name": ["b", XSS],
            "model": ["m", "m"],
            "layer": [1, 2],
            "n_test": [10, 20],
            "run_at": [pd.Timestamp("2025-01-02 03:04"), None],
        }
    )
    choices = evaluation_choices(frame)
    assert list(choices.values()) == ["b", XSS]
    assert next(iter(choices)) == "b · m · layer 1 · 10 test statements · 2025-01-02 03:04"


# -- the page -----------------------------------------------------------------------------------


@pytest.fixture
def fact_db(tmp_path, monkeypatch) -> Path:
    """An empty (but existing, migrated) database the page reads through ``$S3KG_DB``."""
    path = tmp_path / "s3kg.duckdb"
    with Store(path).connect():
        pass
    monkeypatch.setenv("S3KG_DB", str(path))
    from dashboard.data.database import clear_caches

    clear_caches()
    return path


def _app() -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _charts(at: AppTest) -> dict[str, dict]:
    """The page's plotly charts by key (proto ``id`` ends with the user key)."""
    out = {}
    for el in at.get("plotly_chart"):
        key = next(
            k
            for k in ("fact_scores", "fact_sweep", "fact_by_relation", "fact_by_degree")
            if el.proto.id.endswith(k)
        )
        out[key] = json.loads(el.proto.spec)
    return out


def test_page_empty_state_names_the_commands(fact_db):
    at = _app()
    assert len(at.info) == 1
    text = at.info[0].value
    for step in ("build", "label", "hidden", "train", "evaluate"):
        assert f"s3kg factuality {step}" in text
    assert f"--db {fact_db}" in text
    assert not at.get("plotly_chart") and not at.selectbox


def test_page_shows_one_evaluation_with_metrics_and_charts(fact_db, demo_evals):
    save_evaluation(fact_db, demo_evals[0])
    at = _app()
    assert at.selectbox(key="fact_eval").options[0].startswith("smollm2-findkg-calibrated · ")
    assert app_metric(at, "Judge accuracy") == "0.650"
    assert app_metric(at, "Majority class") == "0.500"
    assert app_metric(at, "Logistic regression") == "0.675"
    assert app_metric(at, "Test statements") == "80"
    assert app_metric(at, "Layer") == "29"
    assert app_metric(at, "Model") == markdown_literal("smollm2-135m-instruct")
    assert app_metric(at, "Correctness · LLM's own labels") == "0.275"
    assert app_metric(at, "Correctness · judge's estimate") == "0.075"
    assert any("TRUE 36 · FALSE 40 · IDK 4" in c.value for c in at.caption)
    charts = _charts(at)
    assert set(charts) == {"fact_scores", "fact_sweep", "fact_by_relation", "fact_by_degree"}
    assert [s["x0"] for s in charts["fact_sweep"]["layout"]["shapes"]] == [29]
    assert any("layer 29, the best by validation accuracy" in c.value for c in at.caption)
    relation = charts["fact_by_relation"]["data"][0]
    assert relation["x"][0] == "Relate_To" and relation["text"][0] == "n=16"
    tiny = [c.value for c in at.caption if "Fewer than 5 test facts" in c.value]
    assert len(tiny) == 1  # relations with one or two facts; the degree buckets hold 10 each
    # The metric selector redraws the breakdowns.
    at.selectbox(key="fact_metric").select("informativeness").run()
    assert not at.exception
    judge = _charts(at)["fact_by_relation"]["data"][1]
    assert judge["y"][0] == pytest.approx(
        demo_evals[0].breakdown["judge_relation"][0]["informativeness"]
    )
    # The level radio switches to the statement-level rates.
    at.radio(key="fact_level").set_value(LEVELS["statements"]).run()
    llm = _charts(at)["fact_scores"]["data"][0]
    assert llm["y"][0] == pytest.approx(
        demo_evals[0].summary["scores_llm"]["statement_correctness"]
    )


def test_page_switches_between_two_evaluations(fact_db, demo_evals):
    for e in demo_evals:
        save_evaluation(fact_db, e)
    at = _app()
    box = at.selectbox(key="fact_eval")
    assert len(box.options) == 2
    raw = next(o for o in box.options if o.startswith("smollm2-findkg-raw"))
    box.select(raw).run()
    assert not at.exception
    assert app_metric(at, "Layer") == "23"
    assert app_metric(at, "Judge accuracy") == "0.825"
    assert app_metric(at, "Majority class") == "0.838"
    assert [s["x0"] for s in _charts(at)["fact_sweep"]["layout"]["shapes"]] == [23]
    assert any("TRUE 0 · FALSE 67 · IDK 13" in c.value for c in at.caption)


def test_page_shows_html_in_names_as_text(fact_db, demo_evals):
    hostile = copy.deepcopy(demo_evals[0])
    breakdown = copy.deepcopy(hostile.breakdown)
    for source in ("llm_relation", "judge_relation"):
        breakdown[source][-1]["key"] = XSS  # a one-fact relation: named in the caption too
    summary = {k: v for k, v in hostile.summary.items() if k != "layer_sweep"}
    evil = FactualityEval(XSS, f"**{XSS}**", 3, 80, summary, breakdown)
    save_evaluation(fact_db, evil)
    at = _app()
    assert at.selectbox(key="fact_eval").options[0].startswith(f"{XSS} · **{XSS}** · layer 3")
    assert app_metric(at, "Model") == markdown_literal(f"**{XSS}**")
    assert any(XSS in t.value for t in at.text)  # st.text: plain text
    assert any(markdown_literal(XSS) in c.value for c in at.caption)
    for el in [*at.markdown, *at.caption, *at.info]:
        assert XSS not in el.value, el.value  # never raw in anything rendered as Markdown
        assert not el.proto.allow_html
    charts = _charts(at)
    assert "fact_sweep" not in charts  # no sweep stored: no chart
    spec = json.dumps(charts)
    assert XSS not in spec and plot_text(XSS) in spec


def test_the_demos_evaluations_carry_the_note_that_they_are_unrelated(tmp_path):
    from dashboard.factuality import DEMO_NOTE, demo_note

    for name in ("smollm2-findkg-calibrated", "smollm2-findkg-raw"):  # the demo's two
        assert demo_note(name) == DEMO_NOTE
    assert "unrelated to the demo's questions" in DEMO_NOTE
    assert demo_note("my-own-evaluation") is None
    own = tmp_path / "evals.json"
    own.write_text(json.dumps({"name": "mine"}), encoding="utf-8")
    assert demo_note("mine", own) == DEMO_NOTE and demo_note("smollm2-findkg-raw", own) is None
    assert demo_note("mine", tmp_path / "missing.json") is None
