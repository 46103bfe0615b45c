"""GraphEval results for the Hallucinations page: cached loaders and pure rendering helpers.

The loaders read the ``grapheval_results`` rows that ``s3kg grapheval detect`` (and the demo
build) wrote, through :mod:`dashboard.data`'s short read-only connections under its process lock,
cached by the database stamp. The helpers are pure: :func:`highlight_html` marks the words of an
answer that carry a flagged triple, :func:`triple_table` lists every triple with its probability
and a reason, :func:`flagged_node_colours` colours the flagged triples' entities for
:func:`dashboard.graphs.kg_html`.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.data import _LOCK, _read
from dashboard.graphs import HIGHLIGHT_COLOUR
from s3kg_core.errors import GraphRenderError
from s3kg_core.grapheval.detect import THRESHOLD, Detection
from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_label
from s3kg_core.text import STOP_WORDS, sentence_spans

__all__ = [
    "MARK_COLOUR",
    "AnswerCheck",
    "Span",
    "answer_table",
    "check_counts",
    "correct_command",
    "correction_fixes",
    "describe_detail",
    "flag_spans",
    "flagged_node_colours",
    "flagged_pairs",
    "grapheval_overview",
    "grapheval_results",
    "highlight_html",
    "triple_table",
    "verdict_text",
]

MARK_COLOUR = "#ffd2cc"
"""Background of a highlighted span of the answer (light red, dark text stays readable)."""

_HEX = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")


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


@dataclass(frozen=True)
class Span:
    """A stretch ``answer[start:end]`` that carries one or more flagged triples.

    Attributes
    ----------
    start, end
        Character offsets into the answer.
    notes
        One line per flagged triple found there (the triple and its probability).
    """

    start: int
    end: int
    notes: tuple[str, ...]


@st.cache_data(show_spinner=False, max_entries=8)
def grapheval_overview(path: Path, stamp: int) -> pd.DataFrame:
    """One row per run x checker x extractor with stored GraphEval results.

    Columns: ``run_id, checker, extractor, answers, inconsistent, unjudged, triples,
    flagged_triples, with_raw, corrected, signature`` (distinct signatures joined by ``" ; "``).
    """
    with _read(path) as con:
        return con.execute(
            "SELECT run_id, checker, extractor, count(*) AS answers, "
            "count(*) FILTER (WHERE inconsistent) AS inconsistent, "
            "count(*) FILTER (WHERE inconsistent IS NULL) AS unjudged, "
            "coalesce(sum(n_triples), 0) AS triples, "
            "coalesce(sum(n_flagged), 0) AS flagged_triples, "
            "count(raw_probability) AS with_raw, count(corrected_answer) AS corrected, "
            "string_agg(DISTINCT signature, ' ; ' ORDER BY signature) AS signature "
            "FROM grapheval_results GROUP BY run_id, checker, extractor "
            "ORDER BY run_id, checker, extractor"
        ).df()


@st.cache_data(show_spinner=False, max_entries=16)
def grapheval_results(
    path: Path, stamp: int, run_id: int, checker: str, extractor: str
) -> list[AnswerCheck]:
    """The stored results of one run, checker and extractor, in item order."""
    from s3kg_core.grapheval.results import load_results
    from s3kg_core.store.store import Store

    with _LOCK, Store(path, read_only=True, lock_timeout=15).connect() as con:
        rows = load_results(con, run_id, checker)
    return [
        AnswerCheck(
            item_id=int(r["item_id"]),
            answer=str(r["answer"] or ""),
            context=str(r["context"] or ""),
            detection=r["detection"],
            raw_probability=(None if r["raw_probability"] is None else float(r["raw_probability"])),
            corrected_answer=r["corrected_answer"],
            correction=r["correction"],
            signature=str(r["signature"]),
        )
        for r in rows
        if r["extractor"] == extractor
    ]


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


def _triple_text(t: Triple) -> str:
    return f"({t.head} | {t.relation} | {t.tail})"


def _probability_text(p: float | None) -> str:
    return "not judged" if p is None else f"P(unsupported) {p:.2f}"


def _phrase_pattern(label: str) -> re.Pattern[str] | None:
    """A label as a whole phrase: any spacing or punctuation between words, ``'s`` allowed."""
    words = _WORD.findall(label)
    if not words:
        return None
    body = r"(?:['\u2019]s)?\W+".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)


def _content_words(label: str) -> list[str]:
    return [
        w
        for w in _WORD.findall(label)
        if w.lower() not in STOP_WORDS and (len(w) > 2 or w.isdigit())
    ]


def _word_pattern(word: str) -> re.Pattern[str]:
    """A whole word, a short suffix allowed for longer words (open ~ opened, cell ~ cells)."""
    suffix = r"\w{0,3}" if word.isalpha() and len(word) >= 4 else ""
    return re.compile(rf"(?<!\w){re.escape(word)}{suffix}(?!\w)", re.IGNORECASE)


def _label_spans(text: str, label: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Where a label occurs in ``text[lo:hi]``: the whole phrase if it does, else its words."""
    phrase = _phrase_pattern(label)
    if phrase is None:
        return []
    found = [m.span() for m in phrase.finditer(text, lo, hi)]
    if found:
        return found
    return [
        m.span() for w in _content_words(label) for m in _word_pattern(w).finditer(text, lo, hi)
    ]


def _triple_spans(answer: str, t: Triple) -> list[tuple[int, int]]:
    """Head and tail in the sentences that share the most words with the triple.

    When neither head nor tail is found there, the relation's words are marked instead.
    """
    words = [_word_pattern(w) for part in t.to_list() for w in _content_words(part)]
    ranges = sentence_spans(answer)
    scores = [sum(1 for p in words if p.search(answer, lo, hi)) for lo, hi in ranges]
    best = max(scores, default=0)
    if best == 0:
        return []
    spans: list[tuple[int, int]] = []
    for (lo, hi), score in zip(ranges, scores, strict=True):
        if score != best:
            continue
        found = [s for label in (t.head, t.tail) for s in _label_spans(answer, label, lo, hi)]
        spans.extend(found or _label_spans(answer, t.relation, lo, hi))
    return spans


def flag_spans(
    answer: str, flagged: Sequence[tuple[Triple | Sequence[str], float | None]]
) -> list[Span]:
    """The stretches of ``answer`` that carry a flagged triple: its head and tail words.

    Parameters
    ----------
    answer
        The answer text.
    flagged
        ``(triple, probability)`` pairs, the probability that the triple is unsupported.

    Returns
    -------
    list of Span
        Sorted, non-overlapping spans; overlapping or touching matches are merged and keep the
        notes of every triple they carry. Each triple is placed in the answer's sentence(s)
        sharing the most of its words (case-insensitive, short suffixes allowed); there its
        head and tail are marked, each as a whole phrase (any spacing or punctuation between
        words, ``'s`` allowed) or else word by word, or the relation's words when neither is
        found. A triple none of whose words is in the answer has no span.

    Examples
    --------
    >>> text = "The old tower is in Rome. The tower opened in 1899."
    >>> spans = flag_spans(text, [(Triple("Tower", "opened in", "1899"), 0.93)])
    >>> [(text[s.start:s.end], s.notes) for s in spans]  # the second sentence only
    [('tower', ('(Tower | opened in | 1899): P(unsupported) 0.93',)), \
('1899', ('(Tower | opened in | 1899): P(unsupported) 0.93',))]
    >>> text = "St Mary's Hospital, London."
    >>> spans = flag_spans(text, [(("St Mary Hospital", "in", "London"), 0.6)])
    >>> [text[s.start:s.end] for s in spans]
    ["St Mary's Hospital", 'London']
    """
    marks: list[tuple[int, int, str]] = []
    for item, probability in flagged:
        t = Triple.from_any(item)
        note = f"{_triple_text(t)}: {_probability_text(probability)}"
        marks.extend((s, e, note) for s, e in _triple_spans(answer, t) if e > s)
    marks.sort()
    spans: list[Span] = []
    for start, end, note in marks:
        last = spans[-1] if spans else None
        if last is not None and start <= last.end:
            notes = last.notes if note in last.notes else (*last.notes, note)
            spans[-1] = Span(last.start, max(last.end, end), notes)
        else:
            spans.append(Span(start, end, (note,)))
    return spans


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
        ``(triple, probability)`` pairs of the flagged triples (see :func:`flag_spans`).
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


def flagged_pairs(detection: Detection) -> list[tuple[Triple, float | None]]:
    """``(triple, probability)`` of each flagged triple, for :func:`highlight_html`."""
    return [(detection.triples[i], detection.probabilities[i]) for i in detection.flagged]


def flagged_node_colours(detection: Detection, *, lemmatize: bool = True) -> dict[str, str]:
    """Entity colours for :func:`dashboard.graphs.kg_html`: the flagged triples' entities red.

    Keys are normalised the way ``kg_html`` keys its nodes.

    Examples
    --------
    >>> d = Detection((Triple("Towers", "opened in", "1899"), Triple("a", "r", "b")),
    ...               (0.9, 0.1), (0,), True)
    >>> flagged_node_colours(d)
    {'tower': '#d62728', '1899': '#d62728'}
    """
    colours: dict[str, str] = {}
    for t in (detection.triples[i] for i in detection.flagged):
        for label in (t.head, t.tail):
            key = normalize_label(label, lemmatize=lemmatize, role="entity")
            if key:
                colours[key] = HIGHLIGHT_COLOUR
    return colours


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
                _triple_text(Triple.from_any(fix["triple"])),
                _triple_text(Triple.from_any(corrected)) if corrected else "",
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


def verdict_text(check: AnswerCheck) -> str:
    """One line: the verdict, how many triples were flagged, and raw mode's probability."""
    d = check.detection
    if d.inconsistent is None:
        line = f"No verdict: {d.reason or 'nothing could be judged'}"
    elif not d.triples:
        line = f"Consistent by default: {d.reason or 'no triples'}"
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
