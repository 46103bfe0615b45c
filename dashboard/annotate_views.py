"""The Annotate page's blocks: name, decision panel, added pairs, adjudication, agreement, export.

Every decision is written the moment it is made (:func:`dashboard.data.writes.record_decision`):
there is no Save button, so leaving an item, the page or the session loses nothing. The decision
panel is one ``st.fragment``: a key press reruns only it (the graphs below are not sent again), so
the next pair is focused quickly. A key press is bound to the pair shown when it was pressed (the
button's arguments name it) and queued (:mod:`dashboard.save_queue`): a save that waits for a
database another process holds never blocks the page, the decisions are saved in the order made,
each on its own pair, and the panel says what is still being saved. Every user- or model-provided
string shown as Markdown goes through :func:`dashboard.escape.md`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pandas as pd
import streamlit as st

from dashboard import annotate, annotate_data, widgets
from dashboard.data import writes
from dashboard.data.database import db_stamp
from dashboard.escape import md
from dashboard.save_queue import SaveQueue, pending_line
from s3kg_core.annotation.log import Decision
from s3kg_core.annotation.names import normalize_annotator
from s3kg_core.annotation.quality import AnnotationReport, Estimate
from s3kg_core.annotation.tasks import Unit, extracted_forms
from s3kg_core.errors import AnnotatorNameError, S3KGError

__all__ = [
    "Case",
    "adjudication",
    "agreement",
    "decision_panel",
    "download",
    "forget_verdicts",
    "name_bar",
]

_STATE = st.session_state
_FOCUSED = "background-color: rgba(255, 193, 7, 0.28); font-weight: 600"
_SAVES = "annotate.saves"
POLL_S = 0.5
"""Seconds between two looks at the pending saves while there are some."""
SETTLE_S = 1.0
"""Seconds a key press waits for its save before the page goes on and shows it as pending."""


def _saves(path: Path) -> SaveQueue:
    """The session's save queue (one per database file)."""
    queue = _STATE.get(_SAVES)
    if not isinstance(queue, SaveQueue) or queue.target != path:
        queue = SaveQueue(lambda decision: writes.record_decision(path, decision), target=path)
        _STATE[_SAVES] = queue
    return queue


def _same_pair(case: Case, unit: Unit, decision: Decision) -> bool:
    return (decision.annotator, decision.run_id, decision.item_id, decision.task_id) == (
        case.annotator,
        case.run_id,
        case.item_id,
        case.task_id,
    ) and (decision.gold, decision.answer) == (unit.gold, unit.answer)


def _remember_name() -> None:
    typed = str(_STATE.get("annotator", "")).strip()
    _STATE.pop("annotate.name_error", None)
    if not typed:
        _STATE["annotate.name"] = ""
        return
    try:
        _STATE["annotate.name"] = normalize_annotator(typed)
    except AnnotatorNameError as exc:  # one spelling per person; controls and bidi refused
        _STATE["annotate.name"] = ""
        _STATE["annotate.name_error"] = str(exc)


def _use_offered(name: str) -> None:
    _STATE["annotator"] = name
    _remember_name()


def _remembered_name() -> str:
    """The name this browser confirmed before, ``""`` when none or not a valid name.

    Read from the :data:`~dashboard.annotate.NAME_COOKIE` cookie the browser sent.
    """
    try:
        cookies = st.context.cookies
    except (AttributeError, RuntimeError):  # no browser behind this run
        return ""
    value = cookies.get(annotate.NAME_COOKIE) if isinstance(cookies, Mapping) else None
    if not isinstance(value, str):  # none, or no real request (streamlit.testing)
        return ""
    raw = unquote(value)
    try:
        return normalize_annotator(raw) if raw.strip() else ""
    except AnnotatorNameError:
        return ""


def _keep_in_browser(name: str) -> None:
    """Write ``name`` into the browser-session cookie (removed for ``""``), once per change.

    A session cookie: it lasts until the browser closes, so a reload of the page (a new
    Streamlit session) knows who confirmed it; another browser, or a shared link, does not.
    """
    if _STATE.get("annotate.cookie") == name:
        return
    _STATE["annotate.cookie"] = name
    value = json.dumps(quote(name, safe="")).replace("<", "\\u003c")
    expiry = "" if name else "; max-age=0"
    st.html(
        f"<script>document.cookie = '{annotate.NAME_COOKIE}=' + {value} + "
        f"'; path=/; SameSite=Strict{expiry}';</script>",
        unsafe_allow_javascript=True,
    )


def name_bar(slot: Any, params: Any) -> str:
    """The name field in ``slot``; the confirmed name (``""``: none yet).

    A name in the URL is offered, not used: a button asks "continue as ...?" first. A
    confirmed name is kept across the pages (the session) and across reloads (a cookie of
    the browser session); the caption under the field says how to switch.
    """
    choice = annotate.choose_name(params, _STATE, _remembered_name())
    if choice.name and not _STATE.get("annotate.name"):
        _STATE["annotate.name"] = choice.name  # confirmed in this browser before: a reload
    _STATE["annotator"] = choice.name  # the widget is new each time the page is opened
    slot.text_input(
        "Your name",
        key="annotator",
        on_change=_remember_name,
        placeholder="needed to save",
        help="Saved with every decision. A name in a shared link must be confirmed first. "
        "After typing it, press Tab or click the page: the one-key shortcuts work when no "
        "text box holds the cursor. The name is kept on every page and across reloads until "
        "the browser closes; to switch, type another name here (or clear it).",
    )
    confirmed = str(_STATE.get("annotate.name", "") or "")
    _keep_in_browser(confirmed)
    error = _STATE.get("annotate.name_error")
    if error:
        st.error(md(error))
    if choice.needs_confirming:
        cols = st.columns([6, 1.6], vertical_alignment="center")
        cols[0].warning(
            f"This link names the annotator **{md(choice.offered)}**. Decisions are saved "
            "only under a name you confirm or type."
        )
        cols[1].button(
            f"I am {md(choice.offered)}",
            key="annotate_use_url_name",
            on_click=_use_offered,
            args=(choice.offered,),
            type="primary",
            width="stretch",
        )
    elif confirmed:
        st.caption(
            f"Working as **{md(confirmed)}**: kept on every page and across reloads until the "
            "browser closes. To switch, type another name in *Your name* (clear it to stop)."
        )
    return confirmed


@dataclass(frozen=True)
class Case:
    """What the decision panel works on: one answer's units, who decides, where to go next.

    ``categories``: the TAU categories there are to judge beyond this answer's (a queue's).
    """

    path: Path
    annotator: str
    run_id: int
    item_id: int
    units: tuple[Unit, ...]
    task_id: int | None
    next_item: Callable[[], tuple[int, int] | None]
    go_to: Callable[[int, int], None]
    categories: tuple[str, ...] = ()

    @property
    def focus_key(self) -> str:
        """The session key of the focused pair of this answer and annotator."""
        return f"annotate.focus.{self.annotator}.{self.run_id}.{self.item_id}"

    @property
    def verdicts_key(self) -> str:
        """The session key of the kept verdicts (see :func:`forget_verdicts`)."""
        return f"annotate.verdicts.{self.annotator}.{self.run_id}.{self.item_id}"


def _verdicts(case: Case) -> list[str | None]:
    """The annotator's verdicts on the case's units: read once per page run, then kept here.

    A decision made in the panel updates the kept copy as it is saved (the read after it
    would cost a second open of the file per key press); the page drops the copy on every
    full run (:func:`forget_verdicts`), so another session's decisions show there.
    """
    if not case.annotator:
        return [None] * len(case.units)
    kept = _STATE.get(case.verdicts_key)
    if kept is not None and len(kept) == len(case.units):
        return list(kept)
    mine = annotate_data.decisions(
        case.path, db_stamp(case.path), case.annotator, case.run_id, case.item_id
    )
    verdicts = annotate.unit_verdicts(case.units, annotate.verdict_map(mine))
    for pending in _saves(case.path).pending():  # saved soon: shown as made
        for index, unit in enumerate(case.units):
            if _same_pair(case, unit, pending.decision):
                verdicts[index] = pending.decision.verdict
    _STATE[case.verdicts_key] = list(verdicts)
    return verdicts


def forget_verdicts() -> None:
    """Drop the kept verdicts of the decision panel (the page calls it on each full run)."""
    for key in [k for k in _STATE if str(k).startswith("annotate.verdicts.")]:
        del _STATE[key]


def _act(case: Case, action: str, shown: int | None = None, drawn: int | None = None) -> None:
    """A button or key: decide, undo, or move; the outcome is left in the session state.

    ``shown`` is the index of the pair the panel showed when the button was drawn (the panel's
    ``drawn``-th drawing): a decision is on that pair, whatever happened since (never "the pair
    focused now"). A second decision on one drawing (two keys that reached the page before it
    showed the next pair) is refused, and the page says so.
    """
    _STATE.pop("annotate.error", None)
    _STATE.pop("annotate.note", None)
    _STATE.pop("annotate.refused", None)
    n = len(case.units)
    verdicts = _verdicts(case)
    focus = min(int(_STATE.get(case.focus_key, 0)), max(n - 1, 0))
    if shown is not None and 0 <= shown < n:
        focus = shown
    decides = action in annotate.DECISIONS and n and case.annotator
    if decides and drawn is not None and _STATE.get("annotate.decided_on") == drawn:
        _STATE["annotate.refused"] = (
            f"Not saved: {action} reached the page before it showed the next pair (two keys "
            f"at once on pair {focus + 1}). Press it again for the pair shown now."
        )
        return
    _STATE["annotate.decided_on"] = drawn
    try:
        if decides:
            u = case.units[focus]
            queue = _saves(case.path)
            idle = not queue.pending()
            queue.put(
                focus + 1,
                Decision(
                    case.annotator,
                    case.run_id,
                    case.item_id,
                    u.gold,
                    u.answer,
                    action,
                    category=u.category,
                    gold_extracted=u.gold_extracted,
                    answer_extracted=u.answer_extracted,
                    task_id=case.task_id,
                ),
            )
            verdicts[focus] = action
            _STATE[case.verdicts_key] = verdicts
            _STATE[case.focus_key] = annotate.next_focus(verdicts, focus)
            if idle:  # a quick save is done when the page shows; a queue goes on waiting
                queue.wait(SETTLE_S)
        elif action == "undo" and case.annotator and _saves(case.path).pending():
            _STATE["annotate.refused"] = (
                "Undo refused: your last decisions are still being saved. Press U again once "
                "they are."
            )
        elif action == "undo" and case.annotator:
            undone = writes.undo_decision(case.path, case.annotator)
            _STATE.pop(case.verdicts_key, None)  # read again: the undo may restore anything
            if undone is None:
                _STATE["annotate.note"] = "Nothing to undo: you have no decision left."
                return
            last = undone.undone
            was = "withdrawal" if last.verdict == "withdraw" else last.verdict
            now = undone.verdict or "undecided"
            where = (last.run_id, last.item_id) == (case.run_id, case.item_id)
            keys = [(u.gold, u.answer) for u in case.units]
            if where and (last.gold, last.answer) in keys:
                index = keys.index((last.gold, last.answer))
                _STATE[case.focus_key] = index
                _STATE["annotate.note"] = f"Undid {was} on pair {index + 1}: now {now}."
            else:
                _STATE["annotate.note"] = (
                    f"Undid {was} on run {last.run_id}, item {last.item_id}: now {now}."
                )
        elif action == "previous" and n:
            _STATE[case.focus_key] = (focus - 1) % n
        elif action == "next" and n:
            _STATE[case.focus_key] = (focus + 1) % n
        elif action == "next_item":
            _STATE["annotate.goto"] = case.next_item()
            if _STATE["annotate.goto"] is None:
                _STATE["annotate.note"] = "No other answer is left to judge."
    except S3KGError as exc:  # locked, read-only, full: nothing saved, and the page says so
        _STATE["annotate.error"] = " ".join(str(exc).split())  # escaped once, where shown


def _failed_saves(case: Case) -> None:
    """Say which queued decisions were not saved (and focus the first of them, if here)."""
    failures = _saves(case.path).take_failures()
    if not failures:
        return
    parts = []
    for f in failures:
        what = f.failed.describe(case.run_id, case.item_id)
        part = f.error.rstrip(".")
        if f.dropped:
            later = ", ".join(p.describe(case.run_id, case.item_id) for p in f.dropped)
            part += f" ({what}; nor {later}, queued after it)"
        elif (f.failed.decision.run_id, f.failed.decision.item_id) != (case.run_id, case.item_id):
            part += f" ({what})"
        parts.append(part)
    _STATE["annotate.error"] = "; ".join(parts)
    forget_verdicts()  # read again: what was shown as made was not saved
    first = failures[0].failed
    for index, unit in enumerate(case.units):
        if _same_pair(case, unit, first.decision):
            _STATE[case.focus_key] = index


def _pending_saves(case: Case) -> None:
    """While decisions are being saved, a line that says which, looked at every :data:`POLL_S`.

    When the last is saved (or one failed) the page runs again and shows the outcome: the
    first decision not saved is focused again, and the error says which were not saved.
    """
    queue = _saves(case.path)
    if not queue.pending():
        return

    @st.fragment(run_every=POLL_S)
    def saving() -> None:
        line = pending_line(queue, case.run_id, case.item_id)
        if line is None:  # the panel shows the outcome (its reads are cached per file stamp)
            st.rerun(scope="app")
        st.info(md(line), icon=":material/hourglass_top:")

    saving()


def _triple_cell(title: str, extracted: Sequence[Sequence[str]], compared: Any) -> str:
    if compared is None:
        return f"**{title}**  \n:gray[none: TAU found no counterpart]"
    text = annotate.extracted_text(extracted, compared)
    lemma = annotate.show(compared)
    same = text.lower() == lemma
    return f"**{title}**  \n{md(text)}" + ("" if same else f"  \n:gray[compared as: {md(lemma)}]")


def _precision_so_far(case: Case) -> None:
    """Each TAU category's precision so far with its interval: one line under the panel.

    In the fragment, so a key press shows the figure it changed (the Agreement view's
    ``confirmed`` figures, scoped by the task as it is).
    """
    scope = f"task {case.task_id}" if case.task_id is not None else "all annotations"
    found = annotate_data.precision(case.path, db_stamp(case.path), case.task_id)
    held = [*case.categories, *(u.category for u in case.units)]
    st.caption(
        f"**TAU's precision so far** ({scope}; the share of judged units the final labels "
        "confirm, 95% Wilson interval): " + annotate.precision_line(found, held)
    )


@st.fragment
def decision_panel(case: Case) -> None:
    """The focused pair, its buttons and keys, and every unit of the answer with its verdict.

    A fragment: a key press reruns only this block. ``Next item`` reruns the page.
    """
    goto = _STATE.pop("annotate.goto", None)
    if goto is not None:
        case.go_to(*goto)
        st.rerun(scope="app")
    n = len(case.units)
    _failed_saves(case)
    verdicts = _verdicts(case)
    if case.focus_key not in _STATE:  # opens on the first pair not decided yet
        _STATE[case.focus_key] = annotate.next_focus(verdicts, -1)
    focus = min(int(_STATE[case.focus_key]), max(n - 1, 0))
    drawn = _STATE["annotate.drawn"] = int(_STATE.get("annotate.drawn", 0)) + 1
    with st.container(border=True, key="annotate_focused"):
        if n:
            u = case.units[focus]
            cosine = "" if u.similarity is None else f" · cosine {u.similarity:.3f}"
            verdict = verdicts[focus] or "undecided"
            st.markdown(
                f"**Pair {focus + 1} of {n}** · TAU says **{annotate.CATEGORY_LABELS[u.category]}**"
                f"{cosine} · your verdict: **{verdict}**"
            )
            sides = st.columns(2)
            sides[0].markdown(_triple_cell("Gold triple", u.gold_extracted, u.gold))
            sides[1].markdown(_triple_cell("Answer triple", u.answer_extracted, u.answer))
        else:
            st.info("TAU found nothing to judge in this answer (an empty KG): press I for next.")
        with st.container(horizontal=True, gap="small", key="annotate_keys"):
            for a in annotate.ACTIONS:
                needs_name = a.name in (*annotate.DECISIONS, "undo")
                st.button(
                    a.label,
                    key=f"annotate_key_{a.name}",
                    shortcut=a.key,
                    on_click=_act,
                    args=(case, a.name, focus, drawn),
                    disabled=(needs_name and not case.annotator) or (a.name in
                              (*annotate.DECISIONS, "previous", "next") and not n),
                    type="primary" if a.name == "confirm" else "secondary",
                )  # fmt: skip
        error, note = _STATE.get("annotate.error"), _STATE.get("annotate.note")
        refused = _STATE.get("annotate.refused")
        if error:
            st.error(f"Not saved: {md(error.rstrip('.'))}. Press the key again to retry.")
        elif refused:
            st.warning(md(refused))
        elif note:
            st.caption(md(note))
        else:
            st.caption(
                annotate.key_hints()
                + (
                    " (saved at once)"
                    if case.annotator and not _saves(case.path).pending()
                    else " (saved in the order pressed)"
                    if case.annotator
                    else ". Type your name above to decide: nothing is saved without it."
                )
            )
        _pending_saves(case)
    _precision_so_far(case)
    if n:
        frame = annotate.unit_rows(case.units, verdicts, focus)
        styled = frame.style.apply(
            lambda row: [_FOCUSED if row.iloc[0] else ""] * len(row), axis=1
        ).format({"Cosine": lambda v: "" if v is None or v != v else f"{v:.3f}"})
        decided = sum(v is not None for v in verdicts)
        st.caption(f"All {n} things TAU said of this answer; {decided} decided by you.")
        st.dataframe(
            styled,
            hide_index=True,
            width="stretch",
            height=min(36 * (n + 1) + 3, 330),
            key=f"annotate_units_{case.run_id}_{case.item_id}",
            column_config={
                "": st.column_config.TextColumn("", width=24),
                "#": st.column_config.NumberColumn("#", width=36),
                "TAU says": st.column_config.TextColumn("TAU says", width=130),
                "Gold triple": st.column_config.TextColumn("Gold triple", width=220),
                "Answer triple": st.column_config.TextColumn("Answer triple", width=220),
                "Cosine": st.column_config.TextColumn("Cosine", width=64),
                "Your verdict": st.column_config.TextColumn("Your verdict", width=96),
            },
        )


def _label_buttons(path: Path, who: str, row: Any, n: int, task_id: int | None, slot: Any) -> None:
    labels = ("add", "reject") if row.category is None else ("confirm", "reject")
    for label in labels:

        def record(label: str = label) -> None:
            try:
                writes.record_decision(
                    path,
                    Decision(
                        who,
                        int(row.run_id),
                        int(row.item_id),
                        row.gold_triple,
                        row.answer_triple,
                        label,
                        category=row.category,
                        gold_extracted=row.gold_extracted or (),
                        answer_extracted=row.answer_extracted or (),
                        task_id=task_id,
                        role="adjudicator",
                    ),
                )
            except S3KGError as exc:
                _STATE["annotate.adjudication_error"] = " ".join(str(exc).split())

        slot.button(
            label.capitalize(),
            key=f"annotate_adjudicate_{n}_{label}",
            on_click=record,
            disabled=not who,
            type="primary" if row.label == label else "secondary",
            width="stretch",
        )


PAGE_SIZE = 20
"""Disagreements shown at a time in the adjudication view."""

__all__ += ["PAGE_SIZE"]


def adjudication(path: Path, who: str, task_id: int | None) -> None:
    """The pairs annotators disagree on, side by side; the adjudicator records the final label."""
    rows = annotate_data.disagreements(path, db_stamp(path), task_id)
    error = _STATE.pop("annotate.adjudication_error", None)
    if error:
        st.error(f"Not saved: {md(error.rstrip('.'))}. Press the label again.")
    if rows.empty:
        st.info(
            "The annotators agree on every pair they labelled"
            + (" in this task." if task_id is not None else ".")
            + " Pairs they disagree on are listed here for an adjudicator."
        )
        return
    done = int(rows["label"].notna().sum())
    st.caption(
        f"{len(rows)} pairs the annotators disagree on, {done} adjudicated. Your label "
        + (f"(as adjudicator {md(who)}) " if who else "")
        + "is the pair's final label: TAU is measured against it. The chosen label is "
        "the filled button."
    )
    if not who:
        st.warning("Type your name above to record final labels.")
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    start = 0
    if pages > 1:
        page = st.number_input("Page", 1, pages, 1, key="annotate_adjudication_page")
        start = (int(page) - 1) * PAGE_SIZE
    widths = [3.6, 3.6, 2.4, 1.6]
    head = st.columns(widths)
    for col, title in zip(head, ("Gold triple", "Answer triple", "Verdicts", "Final label"),
                          strict=True):  # fmt: skip
        col.markdown(f"**{title}**")
    for n, row in enumerate(rows.iloc[start : start + PAGE_SIZE].itertuples(), start=start):
        with st.container(border=True):
            category = annotate.CATEGORY_LABELS.get(row.category, "added by an annotator")
            cols = st.columns(widths, vertical_alignment="center")
            cols[0].markdown(
                f":gray[run {row.run_id} · item {row.item_id} · TAU: {md(category)}]  \n"
                + md(annotate.extracted_text(row.gold_extracted or (), row.gold_triple))
            )
            cols[1].markdown(
                md(annotate.extracted_text(row.answer_extracted or (), row.answer_triple))
            )
            cols[2].markdown(
                "  \n".join(f"{md(name)}: **{v}**" for name, v in row.verdicts.items())
            )
            with cols[3]:
                _label_buttons(path, who, row, n, task_id, st)


MIN_INTERVAL_UNITS = 3
"""Fewer units than this give no interval: a bootstrap of one or two units resamples the
same few labels and prints "0.000 to 0.000", which reads as certainty."""


def _interval(value: float, low: float, high: float, units: int) -> str:
    """``"0.412 to 0.733"``, ``"too few units"`` under :data:`MIN_INTERVAL_UNITS`, or ``""``."""
    if math.isnan(value):
        return ""
    if units < MIN_INTERVAL_UNITS:
        return "too few units"
    return "" if math.isnan(low) else f"{low:.3f} to {high:.3f}"


def _figure(e: Estimate) -> tuple[str, str]:
    if e.value != e.value:
        return "n/a", "not defined yet"
    # a Wilson interval is honest from one unit on; a bootstrap's needs MIN_INTERVAL_UNITS
    units = e.n if e.method == "bootstrap" else max(e.n, MIN_INTERVAL_UNITS)
    interval = _interval(e.value, e.low, e.high, units)
    if interval and interval[0].isdigit():
        interval = f"95% CI {interval}"
    return f"{e.value:.3f}", ", ".join(p for p in (interval, f"n = {e.n}") if p)


_METHODS = {"krippendorff_alpha": "Krippendorff's alpha", "cohen_kappa": "Cohen's kappa"}


def agreement_table(report: AnnotationReport) -> pd.DataFrame:
    """The report's coefficients as a table: category, method, who, value, interval, units."""
    rows = []
    for r in report.agreement:
        defined = not math.isnan(r.value)
        rows.append(
            {
                "TAU category": annotate.CATEGORY_LABELS.get(r.category, r.category),
                "Coefficient": _METHODS.get(r.method, r.method),
                "Annotators": " vs ".join(r.annotators) if r.method == "cohen_kappa" else "all",
                "Value": f"{r.value:.3f}" if defined else "n/a",
                "95% interval": _interval(r.value, r.low, r.high, r.units),
                "Units": r.units,
                "Note": r.reason,
            }
        )
    columns = ["TAU category", "Coefficient", "Annotators", "Value", "95% interval", "Units"]
    columns.append("Note")
    return pd.DataFrame(rows, columns=columns)


__all__ += ["MIN_INTERVAL_UNITS", "agreement_table"]


def agreement(path: Path, task_id: int | None) -> None:
    """Kappa and alpha with intervals, overall and per TAU category; TAU's P/R/F1; the notes."""
    report = annotate_data.report(path, db_stamp(path), task_id)
    q = report.quality
    scope = f"task {task_id}" if task_id is not None else "all annotations"
    st.caption(
        f"TAU's aligned pairs against the final labels ({scope}: adjudicated, else the "
        f"annotators' majority): {q.true_positive} confirmed, {q.false_positive} rejected, "
        f"{q.false_negative} added by hand. Intervals (95%): Wilson's for precision and recall, "
        "a bootstrap of 1,000 resamples for F1 and agreement."
    )
    cols = st.columns(3)
    for col, label, e in zip(
        cols, ("TAU precision", "TAU recall", "TAU F1"), (q.precision, q.recall, q.f1), strict=True
    ):
        value, delta = _figure(e)
        col.metric(label, value, delta, delta_color="off", delta_arrow="off")
    for note in q.notes():
        st.warning(md(note[0].upper() + note[1:]) + ".")
    shares = [
        {
            "TAU category": annotate.CATEGORY_LABELS[name],
            "Precision": _figure(e)[0] if e.n else "n/a",
            "95% interval, n": _figure(e)[1] if e.n else "nothing judged yet",
        }
        for name, e in q.confirmed.items()
    ]
    st.markdown(
        "**TAU's precision by category** (the share of its judged units the final labels "
        "confirm; 95% Wilson intervals)"
    )
    st.dataframe(pd.DataFrame(shares), hide_index=True, key="annotate_confirmed_table")
    st.markdown("**Agreement between annotators** (chance-corrected, nominal)")
    table = agreement_table(report)
    if table.empty:
        st.caption("No unit was labelled by two annotators yet: agreement is not defined.")
    else:
        st.dataframe(
            table,
            hide_index=True,
            width="stretch",
            # every column fits at 1280 px (issue 43: "Note" ran off the right edge)
            column_config={
                "TAU category": st.column_config.TextColumn(width=118),
                "Coefficient": st.column_config.TextColumn(width=136),
                "Annotators": st.column_config.TextColumn(width=110),
                "Value": st.column_config.TextColumn(width=56),
                "95% interval": st.column_config.TextColumn(width=104),
                "Units": st.column_config.NumberColumn(width=52),
                "Note": st.column_config.TextColumn(width=200),
            },
            key="annotate_agreement_table",
        )


def download(path: Path) -> None:
    """A download of every decision (the verdict log: who, what, when, what it replaced)."""
    cols = st.columns([1.2, 2.4, 4.4], vertical_alignment="bottom")
    fmt = cols[0].selectbox("Format", ["csv", "jsonl", "parquet"], key="annotate_export_format")
    widgets.file_download(
        cols[1],
        "Download the decisions",
        annotate_data.export(path, db_stamp(path), fmt),
        file_name=f"s3kg-decisions.{fmt}",
        mime={"csv": "text/csv", "jsonl": "application/jsonl"}.get(fmt, "application/octet-stream"),
        key="annotate_download",
        on_click="ignore",
        icon=":material/download:",
        width="stretch",
    )
    cols[2].caption(
        "One row per decision, withdrawal and undo: run, item, both triples as extracted and "
        "as compared, verdict, annotator, time, task, adjudicated label "
        "(`s3kg annotations import` reads it back)."
    )


def _record(path: Path, decision: Decision) -> None:
    try:
        writes.record_decision(path, decision)
    except S3KGError as exc:
        _STATE["annotate.add_error"] = " ".join(str(exc).split())


def added_pairs(
    path: Path,
    who: str,
    run_id: int,
    item_id: int,
    gold_kg: Any,
    answer_kg: Any,
    task_id: int | None,
) -> None:
    """Add a pair TAU missed (saved at once as ``add``) and take one back."""
    gold = extracted_forms(gold_kg.triples if gold_kg else ())
    answer = extracted_forms(answer_kg.triples if answer_kg else ())
    mine = (
        annotate_data.decisions(path, db_stamp(path), who, run_id, item_id)
        if who
        else pd.DataFrame(columns=["verdict", "gold_triple", "answer_triple"])
    )
    adds = mine[mine["verdict"] == "add"]
    error = _STATE.pop("annotate.add_error", None)
    with st.expander(f"Add an alignment TAU missed ({len(adds)} added)", expanded=bool(error)):
        if error:
            st.error(f"Not saved: {md(error.rstrip('.'))}. Press **Add pair** again.")

        def option(forms: dict[Any, Any]) -> dict[str, Any]:
            return {
                f"{annotate.extracted_text(v, k)}  →  {annotate.show(k)}": k
                for k, v in forms.items()
            }

        gold_options, answer_options = option(gold), option(answer)
        cols = st.columns([4, 4, 1.3], vertical_alignment="bottom")
        g = cols[0].selectbox("Gold triple", list(gold_options), key="add_gold", index=None)
        a = cols[1].selectbox("Answer triple", list(answer_options), key="add_answer", index=None)

        def add() -> None:
            pick_g, pick_a = _STATE.get("add_gold"), _STATE.get("add_answer")
            if pick_g in gold_options and pick_a in answer_options:
                gt, at = gold_options[pick_g], answer_options[pick_a]
                _record(
                    path,
                    Decision(
                        who,
                        run_id,
                        item_id,
                        gt,
                        at,
                        "add",
                        gold_extracted=gold.get(gt, ()),
                        answer_extracted=answer.get(at, ()),
                        task_id=task_id,
                    ),
                )
            _STATE["add_gold"] = _STATE["add_answer"] = None

        cols[2].button(
            "Add pair",
            key="add_pair",
            on_click=add,
            disabled=g is None or a is None or not who,
            width="stretch",
        )
        for n, row in enumerate(adds.itertuples()):
            line = st.columns([8, 1.3], vertical_alignment="center")
            line[0].text(
                f"+ {annotate.show(row.gold_triple)}  <->  {annotate.show(row.answer_triple)}"
            )
            line[1].button(
                "Remove",
                key=f"annotate_remove_{n}",
                on_click=_record,
                args=(
                    path,
                    Decision(who, run_id, item_id, row.gold_triple, row.answer_triple, "withdraw"),
                ),
                width="stretch",
            )


__all__ += ["added_pairs"]
