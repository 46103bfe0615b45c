"""One hostile name through every page of the dashboard (issue 17, D8).

The database names its dataset, model, extractor, GraphEval checker, factuality evaluation,
benchmark set, annotator, questions and triple labels with one string that is Markdown, HTML
and a Streamlit directive at once, pointing at a host that is not the dashboard's. Every page
must show it as text:

* with ``streamlit.testing``, every Markdown sink of every page (text, captions, alerts,
  metric labels and values, help tooltips, widget labels, expander and tab labels, page links)
  is parsed as CommonMark and holds no image, link, HTML or emphasis made from the name, and
  every plotly figure holds the name only with its tags escaped;
* in a real browser (``streamlit run app.py``), no ``<img>``, ``<a>``, bold or red element
  made from the name is in any page's DOM, no JavaScript dialog opens, and no request goes to
  any host but the dashboard's own server.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from dashboard.navigation import PAGES
from s3kg_core.annotation.log import Decision, save_decision
from s3kg_core.grapheval.checkers.base import Checker, Verdict
from s3kg_core.kg import Triple
from s3kg_core.store.records import AnswerRecord, ItemRecord, KGRecord
from s3kg_core.store.store import Store

EVIL = "127.0.0.1:9"  # a host:port that is not the dashboard's server
HOSTILE = (
    f'x` ![e](http://{EVIL}/e.png) `y <b>B0LD</b> <a href="http://{EVIL}/a">L1NK</a> '
    f'<img src="http://{EVIL}/i.png" onerror="alert(1)"> [l](http://{EVIL}/l) **S7RONG** '
    ":red[R3D] $x^2$ www.example.com"
)
N_ITEMS = 4


class _HostileChecker(Checker):
    """A scripted checker with the hostile name: "treats" is unsupported, the rest supported."""

    name = HOSTILE

    def _check(self, jobs, raw):  # type: ignore[no-untyped-def]
        return [
            [Verdict(0.9 if "treats" in c.text else 0.1, reason=HOSTILE) for c in claims]
            for claims, _ in jobs
        ]


@dataclass(frozen=True)
class HostileDB:
    path: Path
    runs: tuple[int, int]
    item: int


def _kgs(run: int, item: int, i: int, temperature: float) -> list[KGRecord]:
    gold = (
        Triple(HOSTILE, "treats", "fever"),
        Triple("aspirin", "reduces", HOSTILE),
        Triple("doctor", "examines", "patient"),
    )
    context = (Triple("patient", "takes", "aspirin"), Triple(HOSTILE, "causes", "headache"))
    answer = [Triple(HOSTILE, "treats", "fever")] if i % 2 == 0 else []
    answer += [Triple("stomach", HOSTILE, "doctor"), Triple("ibuprofen", "irritates", "stomach")]
    if temperature > 0 and i == 0:
        answer = [Triple("stomach", "irritates", "doctor")]  # T=0.7 is worse on the first item
    return [
        KGRecord(run, item, "gold", gold),
        KGRecord(run, item, "context", context),
        KGRecord(run, item, "answer", tuple(answer)),
    ]


@pytest.fixture(scope="module")
def hostile_db(
    tmp_path_factory: pytest.TempPathFactory, minilm: Any, one_torch_thread: None
) -> HostileDB:
    """Two runs (T=0 and T=0.7) of a hostile model on a hostile dataset, scored with MiniLM."""
    from test_evaluation_pairs import separable_rows

    from s3kg_core.demo import DEMO_DIR
    from s3kg_core.evaluation.pair_sets import PairSet
    from s3kg_core.evaluation.pairs import run_pair_benchmark, store_bench_result
    from s3kg_core.factuality.results import read_evaluations, save_evaluation
    from s3kg_core.grapheval.results import detect_store
    from s3kg_core.stages.score import score_store
    from s3kg_core.stages.tau import tau_store

    path = tmp_path_factory.mktemp("hostile") / "hostile.duckdb"
    store = Store(path)
    with store.transaction() as con:
        ds = store.ensure_dataset(con, HOSTILE, source=HOSTILE)
        ids = store.upsert_items(
            con,
            ds,
            [
                ItemRecord(f"{HOSTILE} {i}", f"{HOSTILE} {i}?", f"{HOSTILE} context.", HOSTILE)
                for i in range(N_ITEMS)
            ],
        )
        runs = []
        for temperature in (0.0, 0.7):
            run = store.ensure_run(con, ds, HOSTILE, temperature, HOSTILE)
            runs.append(run)
            store.put_answers(
                con, run, [AnswerRecord(ids[f"{HOSTILE} {i}"], HOSTILE) for i in range(N_ITEMS)]
            )
            store.put_kgs(
                con,
                [
                    kg
                    for i in range(N_ITEMS)
                    for kg in _kgs(run, ids[f"{HOSTILE} {i}"], i, temperature)
                ],
            )
    score_store(store, encoder=minilm)
    tau_store(store, fraction=0.5, encoder=minilm)
    first_item = ids[f"{HOSTILE} 0"]
    for annotator, verdict in ((HOSTILE, "confirm"), ("ann", "reject")):
        triple = (HOSTILE, "treats", "fever")
        save_decision(
            store,
            Decision(annotator, runs[0], first_item, triple, triple, verdict, category="aligned"),
        )
    detect_store(store, runs[0], _HostileChecker())
    for evaluation in read_evaluations(DEMO_DIR / "factuality_eval.json"):
        save_evaluation(
            store,
            dataclasses.replace(evaluation, name=f"{HOSTILE} {evaluation.name}", model=HOSTILE),
        )
    pairs = PairSet.from_rows(HOSTILE, separable_rows())
    result = run_pair_benchmark(
        pairs, encoder=minilm, mode="paper", methods=["s3kg", "rouge1"], bootstrap=20,
        protocol="same",
    )  # fmt: skip
    store_bench_result(store, result)
    return HostileDB(path, (runs[0], runs[1]), first_item)


# -- what a Markdown or plotly sink may hold -------------------------------------------------

_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable(["strikethrough", "table"])
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
# The name's payloads as they would look once rendered as markup.
_RENDERED = (
    re.compile(rf"(?:src|href)=\"[^\"]*{re.escape(EVIL)}"),
    re.compile(r"<img\b"),
    re.compile(r"<(?:b|strong)>(?:B0LD|S7RONG)<"),
    re.compile(r"<a\b[^>]*>L1NK<"),
)


# GFM autolink literals, which Streamlit's Markdown finds in the parsed text (markdown-it
# without linkify does not): a URL or e-mail address left in any text outside code.
_AUTOLINK_LITERAL = re.compile(r"(?i)(?:https?|mailto|xmpp)://|www\.|[\w.+-]@[\w-]+\.")
_CODE_ELEMENT = re.compile(r"<code>.*?</code>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def markdown_problems(source: str) -> list[str]:
    """What of the hostile name a Markdown source would render as markup (empty: nothing)."""
    html = _MARKDOWN.render(source)
    problems = [f"{p.pattern} in {html!r}" for p in _RENDERED if p.search(html)]
    text = unescape(_TAG.sub("", _CODE_ELEMENT.sub("", html)))
    if _AUTOLINK_LITERAL.search(text):
        problems.append(f"autolink literal in {text!r}")
    outside_code = _CODE_SPAN.sub("", source)
    for directive in (":red[R3D]", "$x^2$"):  # Streamlit's own syntax, unknown to markdown-it
        if directive in outside_code:
            problems.append(f"{directive} unescaped in {source!r}")
    return problems


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def plotly_problems(spec: str) -> list[str]:
    """Every string of a plotly figure that holds a tag of the hostile name unescaped."""
    return [
        s
        for s in _strings(json.loads(spec))
        if re.search(r"<(?:b|a|img)\b", s) and any(m in s for m in ("B0LD", "L1NK", EVIL))
    ]


# Markdown-rendered fields by the element's proto type; st.table's cells are Markdown too.
_MARKDOWN_FIELDS = {
    "Markdown": ("body", "help"),
    "Heading": ("body", "help"),
    "Alert": ("body",),
    "Metric": ("label", "body", "help"),
    "Toast": ("body",),
    "PageLink": ("label", "help"),
    "Expandable": ("label",),
    "Radio": ("label", "help", "options"),
}
# HTML the page hands over as HTML (st.html, the graph iframes): checked as it is.
_HTML_FIELDS = {"Html": "body", "IFrame": "srcdoc"}
_PLAIN = {"Text", "Code", "Dataframe", "Block", "Column", "NoneType"}


def _texts(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def sink_problems(at: AppTest) -> tuple[list[str], int]:
    """What renders the name as markup, of every Markdown, HTML and plotly sink of a run.

    Also returns how many sinks hold the name at all (so a page that never shows it, or a walk
    that misses the sinks, is noticed).
    """
    problems: list[str] = []
    seen = 0

    def check(where: str, text: str) -> None:
        nonlocal seen
        seen += "B0LD" in text
        problems.extend(f"{where}: {p}" for p in markdown_problems(text))

    def visit(node: Any) -> None:
        nonlocal seen
        proto = getattr(node, "proto", None)
        kind = type(proto).__name__
        if kind == "PlotlyChart":
            seen += "B0LD" in proto.spec
            problems.extend(f"plotly: {s!r}" for s in plotly_problems(proto.spec))
        elif kind == "Table":
            for text in node.value.astype(str).to_numpy().ravel():
                check("table cell", text)
        elif kind in _HTML_FIELDS:
            html = getattr(proto, _HTML_FIELDS[kind])
            seen += "B0LD" in html
            problems.extend(f"{kind}: {p.pattern}" for p in _RENDERED[:1] + _RENDERED[2:]
                            if p.search(html))  # fmt: skip
        elif kind == "BidiComponent":  # a live block (dashboard/live_alpha.py): set as text
            seen += "B0LD" in proto.json
            problems.extend(
                f"{proto.component_name}: {api}"
                for api in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write")
                if api in proto.js_content
            )
        elif kind == "Block":
            for sub in ("expandable", "tab"):
                if proto.HasField(sub):
                    check(f"{sub}.label", getattr(proto, sub).label)
        elif kind not in _PLAIN:
            for field in _MARKDOWN_FIELDS.get(kind, ("label", "help")):
                if hasattr(proto, field):
                    for text in _texts(getattr(proto, field)):
                        check(f"{kind}.{field}", text)
        for child in getattr(node, "children", {}).values():
            visit(child)

    visit(at._tree)
    return problems, seen


def _clean(at: AppTest, *, shown: bool = True) -> None:
    problems, seen = sink_problems(at)
    assert problems == []
    if shown:
        assert seen > 0, "no Markdown, HTML or plotly sink of the page holds the name"


def test_the_sink_checks_catch_the_raw_name():
    assert markdown_problems(HOSTILE)  # as it is, the name would render an image and more
    assert markdown_problems(f"Saved 2 verdicts by {HOSTILE}.")
    from dashboard.escape import code, md, plotly_text

    assert markdown_problems(md(HOSTILE)) == []
    # backslashes do not stop GFM's autolink literals (found after parsing): md() must
    assert markdown_problems(r"see http\:\/\/127\.0\.0\.1\:9\/x or www\.example\.com")
    assert markdown_problems(f"Checker {code(HOSTILE)} on {code(HOSTILE)}") == []
    assert plotly_problems(json.dumps({"name": HOSTILE}))
    assert plotly_problems(json.dumps({"name": plotly_text(HOSTILE)})) == []


# -- every page with streamlit.testing -------------------------------------------------------


@pytest.fixture
def hostile_env(hostile_db: HostileDB, monkeypatch: pytest.MonkeyPatch) -> HostileDB:
    monkeypatch.setenv("S3KG_DB", str(hostile_db.path))
    from dashboard.data.database import clear_caches

    clear_caches()
    return hostile_db


@pytest.mark.parametrize("spec", PAGES, ids=[p.key for p in PAGES])
def test_every_page_shows_the_hostile_name_as_text(hostile_env: HostileDB, spec: Any) -> None:
    at = AppTest.from_file(str(spec.path), default_timeout=180)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    # every page has its data (no "nothing to show" note); Run comparison's summary of the
    # question's triple-level diff is an info box of its own
    notes = [i.value for i in at.info if i.icon != ":material/compare_arrows:"]
    assert not notes, notes
    # Annotate shows the name in tables and plain text until a verdict is saved; Benchmarks
    # in its tables, select box and figures only (the set's name is in no figure); Search
    # in its run filter's options until a search is typed.
    _clean(at, shown=spec.key not in ("annotate", "bench", "search"))
    if spec.key == "annotate":  # the annotator's name, typed, saving at once
        at.text_input(key="annotator").set_value(HOSTILE).run()
        next(b for b in at.button if b.key == "annotate_key_confirm").click().run()
        assert not at.exception, [e.value for e in at.exception]
        _clean(at, shown=False)
        # the adjudication view shows each annotator's verdict beside their name
        at.segmented_control(key="annotate_view").set_value("adjudicate").run()
        assert not at.exception, [e.value for e in at.exception]
        _clean(at)
        at.segmented_control(key="annotate_view").set_value("agreement").run()
        assert not at.exception, [e.value for e in at.exception]
        _clean(at, shown=False)
        # a link naming the hostile annotator offers the name as text
        linked = AppTest.from_file(str(spec.path), default_timeout=180)
        linked.query_params["annotator"] = HOSTILE
        linked.run()
        assert not linked.exception and linked.warning
        _clean(linked)
    if spec.key == "overview":  # the import error shows the typed folder as text
        at.sidebar.text_input(key="release_folder").set_value(HOSTILE).run()
        at.sidebar.button(key="release_import").click().run()
        assert at.sidebar.error
        _clean(at)
        for chart in ("By temperature", "Distributions"):  # every chart's labels, one at a time
            at.session_state["overview_chart"] = chart
            at.run()
            _clean(at)
        at.radio(key="dist_metric").set_value("ctx_sim").run()
        _clean(at)


# -- every page in a real browser ------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_server(hostile_db: HostileDB, tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    from dashboard_helpers import CHROMIUM, streamlit_server

    if not CHROMIUM.exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    log = tmp_path_factory.mktemp("streamlit") / "streamlit.log"
    with streamlit_server(hostile_db.path, log) as srv:
        yield srv


_DOM_PROBLEMS = """([evil, marks]) => {
  const out = [];
  const docs = [document, ...Array.from(document.querySelectorAll('iframe'))
    .map(f => { try { return f.contentDocument; } catch (e) { return null; } })
    .filter(d => d)];
  for (const doc of docs) {
    for (const el of doc.querySelectorAll('*')) {
      for (const attr of el.getAttributeNames()) {
        const value = el.getAttribute(attr) || '';
        if (['src', 'href', 'xlink:href', 'srcset', 'style', 'action'].includes(attr)
            && value.includes(evil)) {
          const where = el.closest('[data-testid]')?.getAttribute('data-testid');
          out.push(`${el.tagName} ${attr}=${value} in ${where}`);
        }
        if (attr.startsWith('on') && value.includes('alert')) out.push(`${el.tagName} ${attr}`);
      }
      const own = Array.from(el.childNodes).filter(n => n.nodeType === 3)
        .map(n => n.textContent).join('').trim();
      if (marks.includes(own)) {
        const style = doc.defaultView.getComputedStyle(el);
        const bold = parseInt(style.fontWeight, 10) >= 600
          || /bold/.test(el.getAttribute('style') || '');
        if (['B', 'STRONG', 'A'].includes(el.tagName) || el.closest('a') || bold
            || style.color === 'rgb(255, 43, 43)') out.push(`${el.tagName} made of ${own}`);
      }
    }
    if (doc.querySelector('.katex')) out.push('LaTeX rendered');
  }
  return out;
}"""


def test_no_page_renders_the_hostile_name_or_calls_another_host(
    hostile_server: Any, hostile_db: HostileDB
) -> None:
    from dashboard_helpers import EXCEPTION, chromium, wait_idle
    from test_dashboard_browser import artefacts, first_screen

    server = hostile_server
    requests: list[str] = []
    dialogs: list[str] = []
    with chromium(viewport=(1440, 900)) as page:
        page.context.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        # The fresh server's very first visit is a case's URL: it must run under app.py's
        # navigation (Streamlit would run the file on its own, as an old pages folder).
        run, item = hostile_db.runs[0], hostile_db.item
        page.goto(f"{server.url}/Sample_explorer?run={run}&item={item}", timeout=180_000)
        page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=180_000)
        wait_idle(page, timeout_ms=180_000)
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text().splitlines()
        assert [line for line in nav if line.strip()][:2] == ["Overview", "Run comparison"], nav
        # the case shown is the linked one (the explorer adds its tau to the URL)
        assert f"/Sample_explorer?run={run}&item={item}&threshold=" in page.url, page.url
        for spec in PAGES:
            page.goto(f"{server.url}/{spec.url_path}", timeout=180_000)
            page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=180_000)
            wait_idle(page, timeout_ms=180_000)
            page.wait_for_timeout(500)  # a fired onerror would have opened its dialog by now
            where = spec.key
            assert page.locator(EXCEPTION).count() == 0, f"{where}: Streamlit exception"
            problems = page.evaluate(_DOM_PROBLEMS, [EVIL, ["B0LD", "S7RONG", "L1NK", "R3D"]])
            assert problems == [], f"{where}: {problems}"
            assert "B0LD" in page.content(), f"{where}: the name is not shown at all"
            first_screen(page, artefacts() / f"hostile_{where}.png")
    assert dialogs == []
    local = re.compile(rf"^(?:{re.escape(server.url)}/|about:|data:|blob:)")
    foreign = sorted({u for u in requests if not local.match(u)})
    assert foreign == [], f"requests to other hosts: {foreign}"
    assert any(u.startswith(server.url) for u in requests)
