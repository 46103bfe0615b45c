"""A :class:`~s3kg_core.report.build.RunReport` as one self-contained, offline HTML file.

The page's frame, style and script are package data (``report.html``, ``report.css`` and
``report.js`` of ``s3kg_core/templates/``, read with :mod:`importlib.resources`); the charts
are static SVG (:mod:`.svg`). Nothing is fetched: no font, no script, no image from
any host, and the page's Content-Security-Policy forbids it. Every string that comes from a
user, a file or a model (run names, settings, questions, answers, triple labels) goes through
:func:`html.escape` exactly once, and is only ever placed in element text or a quoted
attribute: no link, script or style is built from one.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from string import Template

from ..analysis.compare import SCORES, RunComparison
from ..kg import Triple
from ..scoring.tau import TAU_CATEGORIES
from ..statuses import describe_status, role_status
from .build import RunReport, ScoreSummary, TauSummary
from .cases import ReportCase, TripleRow, answer_rows, entity_badges, gold_diff
from .svg import histogram_svg, interval_svg

__all__ = ["render_report"]

_TITLES = {"gold_sim": "GoldSim", "ctx_sim": "CtxSim", "cus": "CUS"}
_TAU_TITLES = {
    "aligned": "aligned",
    "relation_mismatch": "relation mismatch",
    "entity_mismatch": "entity mismatch",
    "roles_swapped": "roles swapped",
    "extra": "extra (possible hallucination)",
    "missing": "missing",
}
_e = html.escape


def _template(name: str) -> str:
    return resources.files("s3kg_core.templates").joinpath(name).read_text(encoding="utf-8")


def _num(value: float | None, fmt: str = ".3f") -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return format(value, fmt)


def _interval(s: ScoreSummary) -> str:
    if not (math.isfinite(s.low) and math.isfinite(s.high)):
        return f"{_num(s.mean)} (n={s.n})"
    return f"{_num(s.mean)} [{_num(s.low)}, {_num(s.high)}]"


def _table(
    head: Sequence[str],
    rows: Iterable[Iterable[str]],
    num: frozenset[int] | set[int] = frozenset(),
    cls: str = "",
) -> str:
    """An HTML table: ``head`` and ``rows`` hold HTML already escaped."""
    cols = "".join(f"<th{' class=num' if i in num else ''}>{h}</th>" for i, h in enumerate(head))
    body = "".join(
        "<tr>"
        + "".join(f"<td{' class=num' if i in num else ''}>{c}</td>" for i, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    attr = f' class="{cls}"' if cls else ""
    thead = f"<thead><tr>{cols}</tr></thead>" if any(head) else ""
    return f"<table{attr}>{thead}<tbody>{body}</tbody></table>"


def _setting(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _e(text)


def _settings_section(report: RunReport) -> str:
    rows = [("run", _e(report.run.label()))]
    if report.baseline is not None:
        rows.append(("baseline", _e(report.baseline.label())))
    rows += [(_e(str(k)), _setting(v)) for k, v in report.settings.items()]
    rows += [
        ("signature", f"<code>{_e(report.full_signature)}</code>"),
        (
            "empty KGs",
            "left out of the means" if report.empty == "drop" else "scored 0 (counted)",
        ),
    ]
    return (
        "<section id=settings><h2>Run and settings</h2>"
        + _table(["", ""], rows, cls="kv")
        + "</section>"
    )


def _scores_table(report: RunReport) -> str:
    level = f"{next(iter(report.scores.values())).confidence:.0%}"
    head = ["score", f"run {report.run.run_id}: mean [{level} interval]", "n"]
    if report.baseline is not None:
        head += [f"baseline (run {report.baseline.run_id})", "n"]
    rows = []
    for s in SCORES:
        mine = report.scores[s]
        row = [_TITLES[s], _interval(mine), str(mine.n)]
        if report.baseline is not None and s in report.baseline_scores:
            theirs = report.baseline_scores[s]
            row += [_interval(theirs), str(theirs.n)]
        rows.append(row)
    return (
        "<h3>Scores</h3>"
        + _table(head, rows, {1, 2, 3, 4})
        + '<p class="note">Means over each run\'s scored answers, with the interval of the '
        "mean the Overview and <code>s3kg cus</code> show for the run (a seeded bootstrap; its "
        "normal approximation for a large run).</p>"
    )


def _changes_table(comparison: RunComparison) -> str:
    level = f"{comparison.differences['cus'].confidence:.0%}"
    rows = [
        [
            _TITLES[s],
            str(d.n),
            _num(d.baseline_mean),
            _num(d.new_mean),
            _num(d.difference, "+.3f"),
            f"[{_num(d.low, '+.3f')}, {_num(d.high, '+.3f')}]",
        ]
        for s, d in comparison.differences.items()
    ]
    return (
        "<h3>Change from the baseline</h3>"
        + _table(
            ["score", "n", "baseline", "new", "change", f"{level} interval"], rows, {1, 2, 3, 4, 5}
        )
        + '<p class="note">Paired on the questions both runs have a score for (paired '
        "bootstrap, as <code>s3kg check</code>).</p>"
        + "<p>Mean CUS, the new run against the baseline: <strong>"
        + _e(comparison.verdict().text())
        + "</strong></p>"
    )


def _summary_section(report: RunReport) -> str:
    check = report.check
    comparison = check.comparison if check is not None else None
    left = ""
    if check is not None:
        status = "pass" if check.passed else "fail"
        left += f'<div class="verdict {status}">s3kg check: {_e(check.verdict())}</div>'
    left += _scores_table(report)
    if comparison is not None:
        left += _changes_table(comparison)
        chart = interval_svg(
            [(_TITLES[s], d.difference, d.low, d.high) for s, d in comparison.differences.items()],
            zero=True,
            title="Change, new minus baseline, with its paired-bootstrap interval",
        )
        chart = "<h3>Change, new minus baseline (paired interval)</h3>" + chart
    else:
        chart = "<h3>Means with their intervals</h3>" + interval_svg(
            [(_TITLES[s], v.mean, v.low, v.high) for s, v in report.scores.items()],
            low=0.0,
            high=1.0,
            title="Mean scores with their intervals",
        )
    series = {f"run {report.run.run_id}": report.distributions.get("new", [])}
    if report.baseline is not None:
        series[f"baseline (run {report.baseline.run_id})"] = report.distributions.get(
            "baseline", []
        )
    hist = histogram_svg(series, title="CUS of every scored answer")
    return (
        "<section id=summary><div class=grid><div>"
        + left
        + "</div><div>"
        + chart
        + "<h3>CUS of every scored answer</h3>"
        + hist
        + "</div></div></section>"
    )


def _gates_section(report: RunReport) -> str:
    check = report.check
    if check is None or check.comparison is None:
        return ""
    comparison = check.comparison
    gates = []
    for gate in check.gates:
        mark = "PASS" if gate.passed else "FAIL"
        cls = "fail" if not gate.passed else ("inconclusive" if gate.inconclusive else "pass")
        gates.append(
            [
                f'<span class="{cls}">{mark}</span>',
                f"<code>{_e(gate.name)}</code>",
                _e(gate.measured),
                _e(gate.rule),
                _e(gate.detail),
            ]
        )
    facts = _table(["", ""], [[_e(k), _e(v)] for k, v in check.facts], cls="kv")
    lost = ""
    if not comparison.unscorable.empty:
        lost = "<h3>Became unscorable</h3>" + _table(
            ["item", "question", "baseline", "new"],
            [
                [_e(r.ext_id), _e(r.question), _e(r.baseline or "scorable"), _e(r.new or "")]
                for r in comparison.unscorable.itertuples()
            ],
        )
    return (
        "<section id=gates><h2>The check's gates</h2>"
        + _table(["", "gate", "measured", "fails when", "detail"], gates, cls="gates")
        + lost
        + "<details><summary>What was compared</summary>"
        + facts
        + "</details></section>"
    )


def _tau_section(report: RunReport) -> str:
    runs: list[tuple[str, TauSummary]] = [(f"run {report.run.run_id}", report.tau)]
    if report.baseline is not None and report.baseline_tau is not None:
        runs.append((f"baseline (run {report.baseline.run_id})", report.baseline_tau))
    if all(t.cases == 0 for _, t in runs):
        body = (
            '<p class="note">No TAU results are stored for these runs under this signature: '
            "run <code>s3kg tau</code> first.</p>"
        )
    else:
        head = ["category"] + [f"{name} ({t.cases} cases)" for name, t in runs]
        rows = []
        for c in TAU_CATEGORIES:
            cells = [_TAU_TITLES[c]]
            for _, t in runs:
                total = sum(t.counts.values()) or 1
                cells.append(f"{t.counts.get(c, 0)} ({t.counts.get(c, 0) / total:.0%})")
            rows.append(cells)
        body = _table(head, rows, set(range(1, len(runs) + 1))) + (
            '<p class="note">Triples of the lowest-scoring answers TAU analysed (stored by '
            "<code>s3kg tau</code>): gold triples aligned, mismatched, stated with head and tail "
            "swapped (roles swapped) or missing, answer triples extra.</p>"
        )
    return "<section id=tau><h2>TAU categories</h2>" + body + "</section>"


def _label(label: str, badges: Mapping[str, str]) -> str:
    badge = badges.get(label)
    if badge is None:
        return _e(label)
    colour = int(badge[1:]) % 8
    return (
        f'<span class="ent" data-e="{_e(badge)}"><span class="b b{colour}">{_e(badge)}</span>'
        f"{_e(label)}</span>"
    )


def _triple(t: Triple | None, badges: Mapping[str, str]) -> str:
    if t is None:
        return '<span class="part">no match</span>'
    return (
        f"{_label(t.head, badges)} <span class=part>—</span> {_e(t.relation)} "
        f"<span class=part>→</span> {_label(t.tail, badges)}"
    )


def _aligned(parts: tuple[bool, bool, bool], cosine: float | None) -> str:
    if cosine is None:
        return ""
    marks = "".join(
        f'<span class="{"ok" if ok else "no"}" title="{name}">{"✓" if ok else "✗"}</span>'
        for ok, name in zip(parts, ("head", "relation", "tail"), strict=True)
    )
    return f"{_num(cosine, '.2f')} {marks}"


def _answer_table(rows: list[TripleRow], badges: dict[str, dict[str, str]]) -> str:
    if not rows:
        return '<p class="note">The answer KG has no triple.</p>'
    return _table(
        ["#", "answer triple", "gold match", "cos · at tau", "context match", "cos · at tau"],
        [
            [
                str(i + 1),
                _triple(r.answer, badges["answer"]),
                _triple(r.gold, badges["gold"]),
                _aligned(r.gold_aligned, r.gold_cosine),
                _triple(r.context, badges["context"]),
                _aligned(r.context_aligned, r.context_cosine),
            ]
            for i, r in enumerate(rows)
        ],
        {0},
    )


def _case(k: int, case: ReportCase) -> str:
    badges = entity_badges(case)
    new = case.new
    scores = " · ".join(f"{_TITLES[s]} {_num(new.scores[s])}" for s in SCORES)
    if case.baseline is not None:
        scores = (
            f"CUS {_num(case.baseline.scores['cus'])} → {_num(new.scores['cus'])} "
            f"(change {_num(case.change, '+.3f')}) · GoldSim "
            f"{_num(case.baseline.scores['gold_sim'])} → {_num(new.scores['gold_sim'])} · "
            f"CtxSim {_num(case.baseline.scores['ctx_sim'])} → {_num(new.scores['ctx_sim'])}"
        )
    texts = [
        ("Gold answer", case.gold_answer),
        (f"Answer (run {new.run_id})", new.answer),
    ]
    if case.baseline is not None:
        texts.append((f"Baseline answer (run {case.baseline.run_id})", case.baseline.answer))
    blocks = "".join(f"<h4>{_e(t)}</h4><div class=text>{_e(v)}</div>" for t, v in texts)
    diff = gold_diff(case.baseline.gold if case.baseline is not None else None, new.gold)
    diff_head = ["gold triple"]
    if case.baseline is not None:
        diff_head.append(f"run {case.baseline.run_id} (baseline)")
    diff_head += [f"run {new.run_id}", "change"]
    diff_rows = []
    for r in diff:
        cells = [_triple(r.gold, badges["gold"])]
        if case.baseline is not None:
            cells.append(_match_cell(r.baseline, r.baseline_aligned))
        cells += [
            _match_cell(r.new, r.new_aligned),
            f'<span class="chg-{r.change}">{r.change}</span>',
        ]
        diff_rows.append(cells)
    gold_status = role_status(new.gold.status, "gold")
    status = gold_status if gold_status != "ok" else role_status(new.context.status, "context")
    why = (
        ""
        if status == "ok"
        else f'<p class="note">Not compared: {_e(describe_status(status))} ({_e(status)}).</p>'
    )
    baseline_table = ""
    if case.baseline is not None:
        baseline_badges = dict(badges, answer=badges["baseline"])
        baseline_table = (
            f"<details><summary>The baseline's answer triples (run {case.baseline.run_id})"
            "</summary>"
            + _answer_table(answer_rows(case.baseline.gold, case.baseline.context), baseline_badges)
            + "</details>"
        )
    return (
        f'<div class="case" id="case-{k}"><h3>{k}. {_e(case.ext_id)}: {_e(case.question)}</h3>'
        f'<p class="scores">{scores}</p>{why}'
        f"<h4>Answer triples (run {new.run_id}) and what S3KG matched them to</h4>"
        + _answer_table(answer_rows(new.gold, new.context), badges)
        + baseline_table
        + "<h4>Gold triples: which answer matched them</h4>"
        + _table(diff_head, diff_rows)
        + "<details><summary>Texts</summary>"
        + blocks
        + f"<h4>Context</h4><div class=text>{_e(case.context)}</div></details></div>"
    )


def _match_cell(cosine: float | None, aligned: bool) -> str:
    if cosine is None:
        return '<span class="part">not picked</span>'
    return f"{_num(cosine, '.2f')} " + (
        '<span class="ok">aligned</span>' if aligned else '<span class="no">not aligned</span>'
    )


def _cases_section(report: RunReport) -> str:
    if report.baseline is not None:
        title = f"The biggest regressions ({len(report.cases)})"
        note = (
            "The shared questions whose CUS dropped most from the baseline, each with the "
            "triples S3KG matched (from the scorer's own explanation) and which gold triples "
            "each run's answer matched."
        )
    else:
        title = f"The worst answers ({len(report.cases)})"
        note = (
            "The run's lowest CUS, each with the triples S3KG matched (from the scorer's own "
            "explanation)."
        )
    note += " Hover an entity: its badge marks the labels aligned with it in every table."
    cases = "".join(_case(k, c) for k, c in enumerate(report.cases, start=1))
    return f'<section id=cases><h2>{title}</h2><p class="note">{note}</p>{cases}</section>'


def render_report(report: RunReport) -> str:
    """The report as one HTML document (a string): inline style and script, nothing fetched.

    Examples
    --------
    >>> from s3kg_core.report.build import RunReport, ScoreSummary, TauSummary
    >>> from s3kg_core.analysis.compare import RunInfo
    >>> run = RunInfo(1, "<script>alert(1)</script>", "demo", 0.0, "offline")
    >>> s = {k: ScoreSummary(k, 2, 0.5, 0.4, 0.6, 0.95) for k in ("gold_sim", "ctx_sim", "cus")}
    >>> page = render_report(RunReport(run, {}, "sig", 0.5, "zero", s, {"new": [0.4, 0.6]},
    ...                                TauSummary(0, {}), ()))
    >>> "<script>alert" in page, "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    (False, True)
    """
    title = f"S3KG report: {report.run.name} (run {report.run.run_id})"
    subtitle = (
        f"dataset {report.run.dataset} · temperature {report.run.temperature:g} · extractor "
        f"{report.run.extractor}"
    )
    if report.baseline is not None:
        title += f" against {report.baseline.name} (run {report.baseline.run_id})"
    body = (
        _summary_section(report)
        + _gates_section(report)
        + "<div class=grid>"
        + _tau_section(report)
        + _settings_section(report)
        + "</div>"
        + _cases_section(report)
    )
    return Template(_template("report.html")).substitute(
        title=_e(title),
        subtitle=_e(subtitle),
        version=_e(report.version),
        created=_e(report.created),
        css=_template("report.css"),
        js=_template("report.js"),
        body=body,
    )
