"""The Annotate page's rules: units to judge, the focused pair, keys, the name, the case in the URL.

Pure functions (no Streamlit), so the page stays thin and the rules are tested directly. What
is judged are TAU's *units* of an answer (:class:`~s3kg_core.annotation.tasks.Unit`): its
aligned pairs, relation and entity mismatches, extra and missing triples, taken from a task
(fixed when the task was made) or from TAU's stored explanation of the answer
(:func:`units_from_tau`), never worked out again here. A unit starts undecided unless the
annotator's own decision on it is in effect in the verdict log; every decision is saved the
moment it is made (the page calls :func:`dashboard.data.writes.record_decision`).

Examples
--------
>>> tau = {"aligned": [{"gold": ["paper", "publish in", "nature"],
...                     "answer": ["paper", "appear in", "nature"], "similarity": 0.81}],
...        "extra": [["paper", "be", "long"]]}
>>> units = units_from_tau(1, 7, tau, [], [])
>>> [(u.category, u.similarity) for u in units]
[('aligned', 0.81), ('extra', None)]
>>> unit_verdicts(units, {})
[None, None]
>>> next_focus([None, None], 0)
1
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from dashboard.url_state import parse_id
from s3kg_core.annotation.log import Triple3
from s3kg_core.annotation.quality import Estimate
from s3kg_core.annotation.tasks import Unit, units_of
from s3kg_core.kg import Triple
from s3kg_core.scoring.tau import TauResult

__all__ = [
    "ACTIONS",
    "CATEGORY_LABELS",
    "DECISIONS",
    "NAME_COOKIE",
    "Action",
    "NameChoice",
    "UnitKey",
    "case_from_query",
    "choose_name",
    "extracted_text",
    "first_with_units",
    "item_label",
    "key_hints",
    "next_focus",
    "next_in_order",
    "note_case",
    "precision_line",
    "queue_label",
    "show",
    "unit_rows",
    "unit_verdicts",
    "units_from_tau",
    "verdict_map",
]

DECISIONS = ("confirm", "reject", "skip")
"""What an annotator decides on a unit TAU proposed (``add`` is for a pair it missed)."""

CATEGORY_LABELS = {
    "aligned": "aligned",
    "relation_mismatch": "relation mismatch",
    "entity_mismatch": "entity mismatch",
    "roles_swapped": "roles swapped",
    "extra": "extra (answer only)",
    "missing": "missing (gold only)",
}
"""TAU's categories as the page names them."""


@dataclass(frozen=True)
class Action:
    """One thing the annotator does on the focused pair, its key and its button label."""

    name: str
    key: str
    label: str


ACTIONS = (
    Action("confirm", "Y", "Confirm"),
    Action("reject", "N", "Reject"),
    Action("skip", "S", "Skip"),
    Action("undo", "U", "Undo"),
    Action("previous", "K", "Previous pair"),
    Action("next", "J", "Next pair"),
    Action("next_item", "I", "Next item"),
)
"""The page's actions in the order of its buttons: one key each (Streamlit reserves C and R)."""

UnitKey = tuple[Triple3 | None, Triple3 | None]


def key_hints() -> str:
    """The keys as one line for the page.

    Examples
    --------
    >>> key_hints()
    'Keys: Y confirm · N reject · S skip · U undo · K previous pair · J next pair · I next item'
    """
    return "Keys: " + " · ".join(f"{a.key} {a.label.lower()}" for a in ACTIONS)


def show(triple: Sequence[str] | None) -> str:
    """A triple as one line: ``head | relation | tail`` (``-`` for none).

    Examples
    --------
    >>> show(["Curie", "won", "prize"]), show(None)
    ('Curie | won | prize', '-')
    """
    return "-" if triple is None else " | ".join(triple)


def units_from_tau(
    run_id: int,
    item_id: int,
    result: Mapping[str, Any],
    gold: Sequence[Triple],
    answer: Sequence[Triple],
) -> list[Unit]:
    """TAU's stored explanation of one answer (:meth:`TauResult.to_dict`) as units to judge.

    ``gold`` and ``answer`` are the extracted KGs, for the triples as extracted.
    """
    return units_of(run_id, item_id, TauResult.from_dict(result), gold, answer)


def verdict_map(current: pd.DataFrame) -> dict[UnitKey, str]:
    """``(gold, answer) -> verdict`` of decisions in effect (rows of ``current_verdicts``).

    Examples
    --------
    >>> frame = pd.DataFrame({"gold_triple": [("a", "r", "b")], "answer_triple": [None],
    ...                       "verdict": ["skip"]})
    >>> verdict_map(frame)
    {(('a', 'r', 'b'), None): 'skip'}
    """
    if current.empty:
        return {}

    def key(t: Any) -> Triple3 | None:
        return None if t is None else tuple(str(x) for x in t)

    return {
        (key(g), key(a)): str(v)
        for g, a, v in zip(
            current["gold_triple"], current["answer_triple"], current["verdict"], strict=True
        )
    }


def unit_verdicts(units: Sequence[Unit], verdicts: Mapping[UnitKey, str]) -> list[str | None]:
    """The annotator's verdict in effect on each unit (``None``: undecided)."""
    out: list[str | None] = []
    for u in units:
        v = verdicts.get((u.gold, u.answer))
        out.append(v if v in DECISIONS else None)
    return out


def next_focus(verdicts: Sequence[str | None], focus: int) -> int:
    """The pair to focus after ``focus``: the next undecided one (wrapping), else the next.

    Examples
    --------
    >>> next_focus(["confirm", None, "skip", None], 1)
    3
    >>> next_focus([None, "confirm", "confirm"], 2)
    0
    >>> next_focus(["confirm", "confirm"], 0)
    1
    >>> next_focus(["confirm", "confirm"], 1)
    1
    """
    n = len(verdicts)
    if n == 0:
        return 0
    for step in range(1, n + 1):
        i = (focus + step) % n
        if verdicts[i] is None:
            return i
    return min(focus + 1, n - 1)


def unit_rows(units: Sequence[Unit], verdicts: Sequence[str | None], focus: int) -> pd.DataFrame:
    """The units as the page's table: the focused one marked, triples as extracted.

    Examples
    --------
    >>> u = Unit(1, 2, 0, "extra", None, ("a", "r", "b"), (), (("A", "r", "B"),), None)
    >>> unit_rows([u], ["reject"], 0).iloc[0].to_dict()
    {'': '▶', '#': 1, 'TAU says': 'extra (answer only)', 'Gold triple': '-', 'Answer triple': 'A | r | B', 'Cosine': None, 'Your verdict': 'reject'}
    """  # noqa: E501
    rows = []
    for n, (u, v) in enumerate(zip(units, verdicts, strict=True)):
        rows.append(
            {
                "": "▶" if n == focus else "",
                "#": n + 1,
                "TAU says": CATEGORY_LABELS.get(u.category, u.category),
                "Gold triple": extracted_text(u.gold_extracted, u.gold),
                "Answer triple": extracted_text(u.answer_extracted, u.answer),
                "Cosine": None if u.similarity is None else round(float(u.similarity), 3),
                "Your verdict": v or "",
            }
        )
    columns = ["", "#", "TAU says", "Gold triple", "Answer triple", "Cosine", "Your verdict"]
    return pd.DataFrame(rows, columns=columns)


def extracted_text(extracted: Sequence[Sequence[str]], compared: Sequence[str] | None) -> str:
    """The triple(s) as extracted on one line, or the compared one when none is known.

    Examples
    --------
    >>> extracted_text([("Curie", "won", "Nobel")], ("curie", "win", "nobel"))
    'Curie | won | Nobel'
    >>> extracted_text([], ("curie", "win", "nobel"))
    'curie | win | nobel'
    """
    return " ; ".join(show(t) for t in extracted) or show(compared)


def first_with_units(order: Sequence[int], counts: Mapping[int, int]) -> int | None:
    """The first answer in ``order`` with something to judge (``None``: none has).

    Examples
    --------
    >>> first_with_units([3, 5], {3: 0, 5: 2})
    5
    """
    return next((i for i in order if counts.get(i, 0)), None)


def next_in_order(order: Sequence[Any], current: Any, counts: Mapping[Any, int]) -> Any | None:
    """The next answer after ``current`` with something to judge, wrapping round.

    Examples
    --------
    >>> next_in_order([1, 2, 3], 1, {1: 1, 2: 0, 3: 4}), next_in_order([1, 2, 3], 3, {1: 1})
    (3, 1)
    """
    order = list(order)
    start = order.index(current) + 1 if current in order else 0
    ring = [*order[start:], *order[:start]]
    return next((i for i in ring if counts.get(i, 0)), None)


def item_label(item: int, n_units: int | None, cus: float, question: str, ext_id: str = "") -> str:
    """A select-box label of one answer: item, question id, units to judge, CUS, question.

    ``n_units`` is ``None`` while TAU has not explained the answer yet. ``ext_id`` is the
    question's id as the page shows it (``demo-05``): typing it in the picker finds it.

    Examples
    --------
    >>> item_label(5, 2, 0.41234, "Who wrote it?", "demo-05")
    'item 5 · demo-05 · 2 to judge · CUS 0.412 · Who wrote it?'
    >>> item_label(6, 0, 0.0, "Why?")
    'item 6 · nothing to judge · CUS 0.000 · Why?'
    >>> item_label(7, None, 0.5, "How?")
    'item 7 · being explained · CUS 0.500 · How?'
    """
    units = (
        "being explained"
        if n_units is None
        else "nothing to judge"
        if n_units == 0
        else f"{n_units} to judge"
    )
    named = f" · {ext_id}" if ext_id else ""
    return f"item {int(item)}{named} · {units} · CUS {cus:.3f} · {question}"


def queue_label(position: int, run_id: int, item_id: int, decided: int, units: int,
                question: str, ext_id: str = "",
                categories: Sequence[str] = ()) -> str:  # fmt: skip
    """A select-box label of one answer of a queue.

    ``ext_id`` is the question's id, ``categories`` TAU's categories of the answer's units.

    Examples
    --------
    >>> queue_label(0, 1, 14, 2, 5, "Who?", "demo-14", ("aligned", "entity_mismatch"))
    '1. run 1 · item 14 · demo-14 · aligned, entity mismatch · 2 of 5 decided · Who?'
    >>> queue_label(1, 1, 15, 5, 5, "Why?")
    '2. run 1 · item 15 · done · Why?'
    """
    state = "done" if decided >= units else f"{decided} of {units} decided"
    named = f" · {ext_id}" if ext_id else ""
    held = f" · {', '.join(c.replace('_', ' ') for c in categories)}" if categories else ""
    return f"{position + 1}. run {run_id} · item {item_id}{named}{held} · {state} · {question}"


def precision_line(estimates: Mapping[str, Estimate], held: Collection[str]) -> str:
    """Each category's precision so far with its interval, for one line of the page.

    ``estimates`` are :func:`s3kg_core.annotation.quality.category_precision`'s (in TAU's
    order); the line names those of ``held`` (the categories there are to judge) and any
    other that somebody judged, a category nobody judged yet saying so. Markdown.

    Examples
    --------
    >>> nan = float("nan")
    >>> e = {"aligned": Estimate(1.0, 0.20655, 1.0, 1, "wilson"),
    ...      "roles_swapped": Estimate(nan, nan, nan, 0, "wilson"),
    ...      "extra": Estimate(nan, nan, nan, 0, "wilson")}
    >>> precision_line(e, {"extra"})
    'aligned **1.000** (0.207 to 1.000, n = 1) · extra: none judged yet'
    """
    parts = []
    for name, e in estimates.items():
        label = name.replace("_", " ")
        if e.n:
            parts.append(f"{label} **{e.value:.3f}** ({e.low:.3f} to {e.high:.3f}, n = {e.n})")
        elif name in held:
            parts.append(f"{label}: none judged yet")
    return " · ".join(parts)


@dataclass(frozen=True)
class NameChoice:
    """Who saves: the confirmed name (``""``: nobody yet) and a name the URL offers."""

    name: str
    offered: str

    @property
    def needs_confirming(self) -> bool:
        """The URL names someone and nobody confirmed a name in this session or browser."""
        return bool(self.offered) and not self.name


NAME_COOKIE = "s3kg_annotator"
"""The browser-session cookie that keeps a confirmed annotator name across reloads."""


def choose_name(
    params: Mapping[str, Any], state: MutableMapping[Any, Any], remembered: str = ""
) -> NameChoice:
    """The name decisions are saved under, and the one a shared link offers.

    A name typed on the page (or confirmed) is kept in ``state["annotate.name"]`` (it lasts
    while the tab is open, across the pages); ``remembered`` is the name this browser
    confirmed before (the :data:`NAME_COOKIE` cookie, kept until the browser closes), used
    when the session has none: a reload, a new tab. A name in the URL (``?annotator=``) is
    only *offered*: someone else's link must not save under their name, so the page asks
    before it uses it.

    Examples
    --------
    >>> state = {}
    >>> choose_name({"annotator": "bob"}, state)
    NameChoice(name='', offered='bob')
    >>> state["annotate.name"] = "bob"
    >>> choose_name({"annotator": "bob"}, state).needs_confirming
    False
    >>> choose_name({"annotator": "bob"}, {}, remembered="bob")  # a reload
    NameChoice(name='bob', offered='')
    """
    name = str(state.get("annotate.name", "") or "") or remembered.strip()
    offered = str(params.get("annotator", "") or "").strip()
    return NameChoice(name, "" if offered == name else offered)


def case_from_query(
    params: Mapping[str, Any], state: MutableMapping[Any, Any]
) -> tuple[int | None, int | None]:
    """The case ``?run=&item=`` names, when it is new to this session, else ``(None, None)``.

    A case link (from Failure analysis, a bookmark, a reload) opens its case; the page writes
    its own case back into the URL, which then names nothing new. ``state`` remembers the
    last case seen in the URL (``state["annotate.url_case"]``).

    Examples
    --------
    >>> state = {}
    >>> case_from_query({"run": "2", "item": "14"}, state)
    (2, 14)
    >>> case_from_query({"run": "2", "item": "14"}, state)
    (None, None)
    >>> case_from_query({"run": "x"}, {})
    (None, None)
    >>> case_from_query({"run": "3", "item": str(2**127)}, {})  # past the column's range
    (None, None)
    """
    try:  # whole numbers in the range of the id columns, else no case (never given to DuckDB)
        run, item = (int(parse_id(str(params.get(k, "")).strip())) for k in ("run", "item"))
    except ValueError:
        return None, None
    case = (run, item)
    if state.get("annotate.url_case") == case:
        return None, None
    state["annotate.url_case"] = case
    return case


def note_case(state: MutableMapping[Any, Any], run_id: int, item_id: int) -> None:
    """Remember the case the page wrote into the URL (so :func:`case_from_query` skips it)."""
    state["annotate.url_case"] = (int(run_id), int(item_id))
