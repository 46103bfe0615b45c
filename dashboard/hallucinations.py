"""GraphEval results for the Hallucinations page: the stored result of an answer, pure helpers.

:func:`dashboard.data.evaluations.grapheval_overview` and
:func:`dashboard.data.evaluations.grapheval_results` load the ``grapheval_results`` rows that ``s3kg
grapheval detect`` (and the demo build) wrote, as :class:`AnswerCheck` objects. The helpers here are
pure: :func:`highlight_html` marks the words of an answer that carry a flagged triple,
:func:`triple_table` lists every triple with its probability and a reason, :func:`answer_panel`
draws the answer KG with the flagged triples red (for :func:`dashboard.graphs.linked_graphs_html`),
its nodes keyed as the scorer keys them.

Notes
-----
Answers, contexts and triples are untrusted text (model output, imported files). Every piece of
text that :func:`highlight_html` and :func:`correction_fixes` put into HTML is
``html.escape``-d (quotes included, so a title attribute cannot be closed early), and the page
shows the HTML with ``st.html`` (sanitised by Streamlit, never parsed as Markdown).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from dashboard.escape import md
from dashboard.explorer import window
from dashboard.graphs import (
    HIGHLIGHT_COLOUR,
    UNMATCHED_COLOUR,
    GraphPanel,
    PanelEdge,
    PanelNode,
)
from s3kg_core.errors import GraphRenderError
from s3kg_core.grapheval.detect import THRESHOLD, Detection
from s3kg_core.grapheval.spans import flag_spans, triple_text
from s3kg_core.kg import Triple
from s3kg_core.scoring.s3kg import S3KGConfig

__all__ = [
    "MARK_COLOUR",
    "PANEL_NODES",
    "AnswerCheck",
    "answer_panel",
    "answer_table",
    "check_counts",
    "correct_command",
    "correction_fixes",
    "describe_detail",
    "flagged_pairs",
    "highlight_html",
    "triple_table",
    "triple_table_shown",
    "verdict_text",
]

MARK_COLOUR = "#ffd2cc"
"""Background of a highlighted span of the answer (light red, dark text stays readable)."""

_HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")

PANEL_NODES = 60
"""The most nodes the answer KG picture draws (it has the page's whole width)."""


@dataclass(frozen=True)
class AnswerCheck:
    """One answer's stored GraphEval result.

    Attributes
    ----------
    item_id
        The question.
    answer, context
        The checked answer and the context it was checked against.
    detection
        Every triple's probability of being unsupported, the flagged ones, the verdict.
    raw_probability
        Raw mode's probability that the whole answer is unsupported (``None``: not run).
    corrected_answer
        The answer after ``s3kg grapheval correct`` (``None``: not corrected).
    correction
        The stored correction report (method, fixes, ROUGE, believed corrected) or ``None``.
    signature
        The checker's signature.
    """

    item_id: int
    answer: str
    context: str
    detection: Detection
    raw_probability: float | None
    corrected_answer: str | None
    correction: Mapping[str, Any] | None
    signature: str


def check_counts(checks: Sequence[AnswerCheck]) -> dict[str, int]:
    """Answers checked, inconsistent, without a verdict, triples, flagged triples, corrected.

    Examples
    --------
    >>> d = Detection((Triple("a", "r", "b"), Triple("c", "r", "d")), (0.9, 0.1), (0,), True)
    >>> check_counts([AnswerCheck(1, "a r b", "ctx", d, None, None, None, "sig")])
    {'answers': 1, 'inconsistent': 1, 'unjudged': 0, 'triples': 2, 'flagged_triples': 1, \
'corrected': 0}
    """
    return {
        "answers": len(checks),
        "inconsistent": sum(1 for c in checks if c.detection.inconsistent),
        "unjudged": sum(1 for c in checks if c.detection.inconsistent is None),
        "triples": sum(len(c.detection.triples) for c in checks),
        "flagged_triples": sum(len(c.detection.flagged) for c in checks),
        "corrected": sum(1 for c in checks if c.corrected_answer is not None),
    }


def answer_table(checks: Sequence[AnswerCheck]) -> pd.DataFrame:
    """One row per answer: item, verdict, triples, flagged, max probability, raw, corrected.

    Examples
    --------
    >>> d = Detection((Triple("a", "r", "b"),), (0.75,), (0,), True)
    >>> answer_table([AnswerCheck(3, "x", "y", d, 0.4, None, None, "s")]).iloc[0].to_dict()
    {'item_id': 3, 'verdict': 'inconsistent', 'triples': 1, 'flagged': 1, 'max_p': 0.75, \
'raw_p': 0.4, 'corrected': False}
    """
    rows = []
    for c in checks:
        probs = [p for p in c.detection.probabilities if p is not None]
        rows.append(
            {
                "item_id": c.item_id,
                "verdict": _verdict(c.detection),
                "triples": len(c.detection.triples),
                "flagged": len(c.detection.flagged),
                "max_p": max(probs) if probs else None,
                "raw_p": c.raw_probability,
                "corrected": c.corrected_answer is not None,
            }
        )
    columns = ["item_id", "verdict", "triples", "flagged", "max_p", "raw_p", "corrected"]
    return pd.DataFrame(rows, columns=columns)


def _verdict(d: Detection) -> str:
    if d.inconsistent is None:
        return "no verdict"
    return "inconsistent" if d.inconsistent else "consistent"


def highlight_html(
    answer: str,
    flagged: Sequence[tuple[Triple | Sequence[str], float | None]],
    *,
    colour: str = MARK_COLOUR,
    empty_message: str = "(empty answer)",
) -> str:
    """The answer as an HTML fragment with the spans of flagged triples in ``<mark>``.

    Parameters
    ----------
    answer
        The answer text (untrusted: every character is escaped).
    flagged
        ``(triple, probability)`` pairs of the flagged triples (see
        :func:`s3kg_core.grapheval.spans.flag_spans`).
    colour
        Background of a marked span, a hex colour.
    empty_message
        Shown (escaped, in grey) when the answer is blank.

    Returns
    -------
    str
        A ``<div>`` that keeps the answer's line breaks. Each marked span has a ``title`` (the
        hover text) naming the flagged triples it carries and their probabilities. All text,
        titles included, is ``html.escape``-d with quotes, so no answer or label becomes markup.

    Raises
    ------
    GraphRenderError
        If ``colour`` is not a hex colour.

    Examples
    --------
    >>> print(highlight_html("Tom & Jerry met in 1899.", [(("Tom", "met in", "1899"), 0.8)]))
    ... # doctest: +NORMALIZE_WHITESPACE
    <div class="s3kg-answer" style="white-space:pre-wrap;line-height:1.6"><mark
    style="background:#ffd2cc;padding:0 2px;border-radius:3px"
    title="(Tom | met in | 1899): P(unsupported) 0.80">Tom</mark> &amp; Jerry met in <mark
    style="background:#ffd2cc;padding:0 2px;border-radius:3px"
    title="(Tom | met in | 1899): P(unsupported) 0.80">1899</mark>.</div>
    """
    if not isinstance(colour, str) or not _HEX.fullmatch(colour):
        raise GraphRenderError(f"colour must be a hex colour like '#ffd2cc'; got {colour!r:.40}")
    opening = '<div class="s3kg-answer" style="white-space:pre-wrap;line-height:1.6">'
    if not answer.strip():
        return f'{opening}<span style="color:#888">{html.escape(empty_message)}</span></div>'
    parts = [opening]
    at = 0
    for span in flag_spans(answer, flagged):
        parts.append(html.escape(answer[at : span.start]))
        title = html.escape("\n".join(span.notes), quote=True)
        parts.append(
            f'<mark style="background:{colour};padding:0 2px;border-radius:3px" '
            f'title="{title}">{html.escape(answer[span.start : span.end])}</mark>'
        )
        at = span.end
    parts.append(html.escape(answer[at:]))
    parts.append("</div>")
    return "".join(parts)


def describe_detail(detail: Mapping[str, Any] | None) -> str:
    """A short reading of a checker's per-triple detail (support features, LLM or NLI verdict).

    Examples
    --------
    >>> describe_detail({"best_cos": 0.41, "num_absent_context": 1.0, "negation_mismatch": 0.0})
    'number not in the context; best context match cos 0.41'
    >>> describe_detail({"supported": False, "confidence": 0.9})
    'LLM: not supported (confidence 0.90)'
    >>> describe_detail({"entailment": 0.12})
    'NLI entailment 0.12'
    >>> describe_detail(None)
    ''
    """
    if not detail:
        return ""
    if "supported" in detail:
        said = "supported" if detail.get("supported") else "not supported"
        conf = detail.get("confidence")
        return f"LLM: {said}" + (
            f" (confidence {float(conf):.2f})" if isinstance(conf, int | float) else ""
        )
    if "entailment" in detail and isinstance(detail["entailment"], int | float):
        return f"NLI entailment {float(detail['entailment']):.2f}"
    notes = []
    flags = (
        ("num_absent_context", "number not in the context"),
        ("num_absent_window", "number not in the best-matching sentences"),
        ("negation_mismatch", "negation differs from the context"),
    )
    for key, text in flags:
        if _number(detail.get(key)) >= 0.5:
            notes.append(text)
            if key == "num_absent_context":
                break  # implies the window one
    entity = _number(detail.get("entity_absent"))
    if entity > 0:
        notes.append(f"{entity:.0%} of its names not in the context")
    tokens = _number(detail.get("token_absent_context"))
    if tokens >= 0.5:
        notes.append(f"{tokens:.0%} of its words not in the context")
    if "best_cos" in detail:
        notes.append(f"best context match cos {_number(detail.get('best_cos')):.2f}")
    if notes:
        return "; ".join(notes)
    return ", ".join(f"{k}={v}" for k, v in sorted(detail.items()))


def _number(value: object) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def triple_table(detection: Detection) -> pd.DataFrame:
    """Every triple of an answer with its probability, whether it is flagged, and why.

    Columns: ``#, head, relation, tail, probability, flagged, reason``. ``reason`` is the
    checker's reason for a triple it could not judge, else a reading of its detail
    (:func:`describe_detail`).

    Examples
    --------
    >>> d = Detection((Triple("a", "r", "b"), Triple("c", "r", "d")), (0.9, None), (0,), True,
    ...               reasons={"1": "no verdict"})
    >>> table = triple_table(d)
    >>> table[["#", "flagged", "reason"]].values.tolist()
    [[0, True, ''], [1, False, 'no verdict']]
    >>> table["probability"].tolist()  # not judged: NaN
    [0.9, nan]
    """
    flagged = set(detection.flagged)
    rows = []
    for i, t in enumerate(detection.triples):
        p = detection.probabilities[i] if i < len(detection.probabilities) else None
        detail = detection.details[i] if i < len(detection.details) else None
        reason = detection.reasons.get(str(i)) or describe_detail(detail)
        rows.append([i, t.head, t.relation, t.tail, p, i in flagged, reason])
    return pd.DataFrame(
        rows, columns=["#", "head", "relation", "tail", "probability", "flagged", "reason"]
    )


def triple_table_shown(detection: Detection) -> pd.DataFrame:
    r""":func:`triple_table` as the page shows it: every cell Markdown-escaped text, wrapped.

    ``st.table`` wraps long cells (a ``st.dataframe`` cut the reason at 1280 px, issue 43.7) and
    renders Markdown, so the model's and checker's strings are escaped; the probability is
    written with 3 decimals (``-`` when not judged) and a flagged triple says ``yes``.

    Examples
    --------
    >>> d = Detection((Triple("a*", "r", "b"), Triple("c", "r", "d")), (0.9, None), (0,), True,
    ...               reasons={"1": "no verdict"})
    >>> triple_table_shown(d).reset_index().values.tolist()
    [['0', 'a\\*', 'r', 'b', '0.900', 'yes', ''], ['1', 'c', 'r', 'd', '-', '', 'no verdict']]
    """
    table = triple_table(detection)
    shown = pd.DataFrame(
        {
            "#": table["#"].map(str),
            "head": table["head"].map(md),
            "relation": table["relation"].map(md),
            "tail": table["tail"].map(md),
            "P(unsupported)": table["probability"].map(
                lambda p: "-" if p is None or pd.isna(p) else f"{float(p):.3f}"
            ),
            "flagged": table["flagged"].map(lambda f: "yes" if f else ""),
            "reason": table["reason"].map(md),
        }
    )
    return shown.set_index("#").rename_axis(None)  # a named index draws a second header row


def flagged_pairs(detection: Detection) -> list[tuple[Triple, float | None]]:
    """``(triple, probability)`` of each flagged triple, for :func:`highlight_html`."""
    return [(detection.triples[i], detection.probabilities[i]) for i in detection.flagged]


def answer_panel(
    detection: Detection,
    config: S3KGConfig | None = None,
    *,
    max_nodes: int = PANEL_NODES,
) -> GraphPanel:
    """The answer KG as one picture of the linked document, the flagged triples in red.

    Flagged triples are marked (red) edges, their entities red nodes; every other node is grey.
    Nodes are keyed as the scorer of ``config`` keys entity labels
    (:meth:`~s3kg_core.scoring.s3kg.S3KGConfig.key`; default: the default configuration), so
    one entity written two ways is one node, as in the Sample explorer. A KG of more than
    ``max_nodes`` nodes shows its flagged triples' nodes (then the others', in order) plus as
    many hops as stay within ``max_nodes``, and says so in its note.

    Examples
    --------
    >>> d = Detection((Triple("Towers", "opened in", "1899"), Triple("Paris", "has", "tower")),
    ...               (0.9, 0.1), (0,), True)
    >>> panel = answer_panel(d)
    >>> [(n.label, n.colour == HIGHLIGHT_COLOUR) for n in panel.nodes]
    [('Towers', True), ('1899', True), ('Paris', False)]
    >>> [(e.label, e.marked) for e in panel.edges], panel.subtitle
    ([('opened in', True), ('has', False)], '2 triples · 1 flagged')
    """
    key = (config or S3KGConfig()).key
    flagged = set(detection.flagged)
    labels: dict[str, str] = {}
    hot: set[str] = set()
    keyed = []
    for i, t in enumerate(detection.triples):
        k = key(t)
        ends = (k.head or t.head.lower(), k.tail or t.tail.lower())
        for node, label in zip(ends, (t.head, t.tail), strict=True):
            labels.setdefault(node, label)
            if i in flagged:
                hot.add(node)
        keyed.append((ends[0], t.relation, ends[1], t.head, t.tail))
    shown, note = set(labels), ""
    if len(labels) > max_nodes:
        order = [*sorted(flagged), *(i for i in range(len(keyed)) if i not in flagged)]
        seeds = [p for i in order for p in (keyed[i][0], keyed[i][2])]
        edges = [(h, tl) for h, _, tl, _, _ in keyed]
        shown, hops, cut = window(edges, seeds, max_nodes)
        how = "the flagged triples' nodes" + (", then the others'" if cut else "")
        how += f" + {hops} hop{'s' * (hops > 1)}" if hops else ""
        note = f"showing {len(shown)} of {len(labels)} nodes: {how}"
    nodes = tuple(
        PanelNode(
            node,
            label if label.strip() else "(empty)",
            HIGHLIGHT_COLOUR if node in hot else UNMATCHED_COLOUR,
            (),
            f"{label}\nin a flagged triple" if node in hot else label,
        )
        for node, label in labels.items()
        if node in shown
    )
    edges_drawn = tuple(
        PanelEdge(h, tl, rel, i, marked=i in flagged)
        for i, (h, rel, tl, _, _) in enumerate(keyed)
        if h in shown and tl in shown
    )
    n = len(detection.triples)
    return GraphPanel(
        "answer",
        "Answer KG",
        f"{n} triple{'s' * (n != 1)} · {len(flagged)} flagged",
        nodes,
        edges_drawn,
        tuple(keyed),
        note=note,
        empty=detection.reason or "no triples",
    )


def correction_fixes(correction: Mapping[str, Any] | None) -> pd.DataFrame:
    """The triple fixes of a stored correction: flagged triple, corrected triple, applied, error.

    Examples
    --------
    >>> correction_fixes({"fixes": [{"triple": ["a", "r", "b"], "corrected": ["a", "r", "c"],
    ...                              "applied": True, "error": None}]}).values.tolist()
    [['(a | r | b)', '(a | r | c)', True, '']]
    """
    rows = []
    for fix in (correction or {}).get("fixes") or []:
        corrected = fix.get("corrected")
        rows.append(
            [
                triple_text(Triple.from_any(fix["triple"])),
                triple_text(Triple.from_any(corrected)) if corrected else "",
                bool(fix.get("applied")),
                str(fix.get("error") or ""),
            ]
        )
    return pd.DataFrame(rows, columns=["flagged triple", "corrected triple", "applied", "error"])


def correct_command(db: Path | str, run_id: int, checker: str) -> str:
    """The ``s3kg grapheval correct`` command line for a stored checker name.

    Stored names carry what the checker was built from (``llm:MODEL``, ``nli:FOLDER``); the
    command needs the ``--checker`` choice and, for these two, the option that rebuilds it.

    Examples
    --------
    >>> correct_command("s3kg.duckdb", 2, "support")
    's3kg grapheval correct --db s3kg.duckdb --run 2 --checker support --base-url URL --model MODEL'
    >>> correct_command("s3kg.duckdb", 2, "llm:gpt-4o-mini")
    's3kg grapheval correct --db s3kg.duckdb --run 2 --checker llm --base-url URL --model MODEL'
    """
    kind, _, source = checker.partition(":")
    options = f"--checker {kind}"
    if kind == "nli":
        options += f" --nli-model DIR/{source}" if source else " --nli-model DIR"
    return (
        f"s3kg grapheval correct --db {db} --run {int(run_id)} {options} "
        "--base-url URL --model MODEL"
    )


def verdict_text(check: AnswerCheck, escape: Callable[[str], str] = str) -> str:
    """One line: the verdict, how many triples were flagged, and raw mode's probability.

    ``escape`` is applied to the detection's reason (text from a checker): pass
    :func:`dashboard.escape.md` where the line is shown as Markdown.
    """
    d = check.detection
    if d.inconsistent is None:
        line = f"No verdict: {escape(d.reason or 'nothing could be judged')}"
    elif not d.triples:
        line = f"Consistent by default: {escape(d.reason or 'no triples')}"
    elif d.inconsistent:
        line = (
            f"Inconsistent: {len(d.flagged)} of {len(d.triples)} triples have "
            f"P(unsupported) > {THRESHOLD:g}"
        )
    else:
        line = (
            f"Consistent: none of its {len(d.triples)} triples has P(unsupported) > {THRESHOLD:g}"
        )
    if d.status == "partial":
        line += f" ({len(d.reasons)} not judged)"
    return line
