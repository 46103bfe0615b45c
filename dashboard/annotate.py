"""The Annotate page's helpers: pair tables, raw labels, progress, the case in the URL.

Pure functions on TAU results and annotation frames (no Streamlit calls but the session and
query-parameter helpers at the end), so the page stays thin and the rules are tested directly.
A verdict is never invented: a proposed pair starts undecided (``None``), and only pairs the
annotator decided are saved.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from s3kg_core.kg import Triple
from s3kg_core.normalize import normalize_triples

__all__ = [
    "PAIR_COLUMNS",
    "Progress",
    "added_pairs",
    "decisions",
    "first_with_pairs",
    "from_query",
    "item_labels",
    "next_with_pairs",
    "pair_key",
    "pair_rows",
    "progress",
    "raw_labels",
    "saved_verdicts",
    "show",
    "triple_key",
]

PAIR_COLUMNS = ("verdict", "gold as extracted", "answer as extracted", "cosine", "gold", "answer")
"""The visible columns of :func:`pair_rows`, verdict first (``_gold`` and ``_answer`` hold
the keys; ``gold`` and ``answer`` are the normalised triples TAU compared)."""


def triple_key(triple: Sequence[str]) -> str:
    """A triple as stored in the annotations table (JSON text of ``[head, relation, tail]``).

    Examples
    --------
    >>> triple_key(["aspirin", "reduce", "fever"])
    '["aspirin", "reduce", "fever"]'
    """
    return json.dumps(list(triple))


def pair_key(gold: str | None, answer: str | None) -> tuple[Any, Any]:
    """A stored pair's identity whatever its JSON spacing: ``(gold, answer)`` as tuples.

    Examples
    --------
    >>> pair_key('["a","r","b"]', '["a", "r", "b"]')
    (('a', 'r', 'b'), ('a', 'r', 'b'))
    """

    def one(text: str | None) -> Any:
        return None if text is None else tuple(json.loads(text))

    return one(gold), one(answer)


def show(triple: Sequence[str]) -> str:
    """A triple as one line: ``head | relation | tail``.

    Examples
    --------
    >>> show(["Curie", "won", "prize"])
    'Curie | won | prize'
    """
    return " | ".join(triple)


def raw_labels(triples: Iterable[Triple]) -> dict[tuple[str, ...], list[str]]:
    """Normalised triple (as TAU compares it) -> the extracted triples it came from.

    Examples
    --------
    >>> raw_labels([Triple("The paper", "published_in", "Nature")])
    {('the paper', 'publish in', 'nature'): ['The paper | published_in | Nature']}
    """
    out: dict[tuple[str, ...], list[str]] = {}
    for t in triples:
        for norm in normalize_triples([t]):
            out.setdefault(tuple(norm.to_list()), []).append(show(t.to_list()))
    return out


def saved_verdicts(mine: pd.DataFrame) -> dict[tuple[Any, Any], str]:
    """An annotator's stored verdicts on one answer: ``pair_key -> verdict`` (latest wins)."""
    return {
        pair_key(r.gold_triple, r.answer_triple): str(r.verdict)
        for r in mine.sort_values("annotation_id").itertuples()
    }


def pair_rows(
    result: Mapping[str, Any],
    saved: Mapping[tuple[Any, Any], str],
    raw_gold: Mapping[tuple[str, ...], list[str]],
    raw_answer: Mapping[tuple[str, ...], list[str]],
) -> pd.DataFrame:
    """TAU's proposed pairs of one answer, each with the annotator's saved verdict or ``None``.

    Examples
    --------
    >>> result = {"aligned": [{"gold": ["a", "r", "b"], "answer": ["a", "r", "c"],
    ...                        "similarity": 0.81}]}
    >>> pair_rows(result, {}, {}, {})["verdict"].tolist()
    [None]
    """
    rows = []
    for a in result.get("aligned", []):
        gold, answer = list(a["gold"]), list(a["answer"])
        key = (tuple(gold), tuple(answer))
        rows.append(
            {
                "verdict": saved.get(key) if saved.get(key) in ("confirm", "reject") else None,
                "gold as extracted": " ; ".join(raw_gold.get(tuple(gold), [])) or show(gold),
                "answer as extracted": " ; ".join(raw_answer.get(tuple(answer), []))
                or show(answer),
                "cosine": round(float(a["similarity"]), 3),
                "gold": show(gold),
                "answer": show(answer),
                "_gold": triple_key(gold),
                "_answer": triple_key(answer),
            }
        )
    table = pd.DataFrame(rows, columns=[*PAIR_COLUMNS, "_gold", "_answer"])
    table["verdict"] = pd.Series([r["verdict"] for r in rows], index=table.index, dtype=object)
    return table  # verdict: "confirm", "reject" or None (never NaN: an empty cell)


def decisions(edited: pd.DataFrame) -> list[tuple[str, str, str]]:
    """``(gold_json, answer_json, verdict)`` of the rows the annotator decided, in order.

    Examples
    --------
    >>> edited = pd.DataFrame({"_gold": ["g1", "g2"], "_answer": ["a1", "a2"],
    ...                        "verdict": [None, "reject"]})
    >>> decisions(edited)
    [('g2', 'a2', 'reject')]
    """
    out = []
    for r in edited.to_dict("records"):
        verdict = r.get("verdict")
        if isinstance(verdict, str) and verdict in ("confirm", "reject"):
            out.append((str(r["_gold"]), str(r["_answer"]), verdict))
    return out


def added_pairs(mine: pd.DataFrame) -> list[tuple[str, str]]:
    """The pairs an annotator added to one answer (stored ``add`` verdicts), as JSON keys."""
    rows = mine[mine["verdict"] == "add"].sort_values("annotation_id")
    return list(dict.fromkeys(zip(rows["gold_triple"], rows["answer_triple"], strict=True)))


def item_labels(order: Sequence[int], tau: Mapping[int, Mapping[str, Any]]) -> dict[str, int]:
    """Selectbox labels of a run's answers (in ``order``) with their number of TAU pairs.

    The label never carries a score (it would change with alpha and drop the choice).

    Examples
    --------
    >>> item_labels([3, 5], {3: {"aligned": []}, 5: {"aligned": [{}, {}]}})
    {'item 3 · no pairs': 3, 'item 5 · 2 pairs': 5}
    """
    out = {}
    for item in order:
        n = len(tau.get(item, {}).get("aligned", []))
        pairs = "no pairs" if n == 0 else f"{n} pair" + ("s" if n > 1 else "")
        out[f"item {item} · {pairs}"] = int(item)
    return out


def first_with_pairs(order: Sequence[int], tau: Mapping[int, Mapping[str, Any]]) -> int | None:
    """The first answer in ``order`` that TAU proposed a pair for (``None``: none has one).

    Examples
    --------
    >>> first_with_pairs([3, 5], {3: {"aligned": []}, 5: {"aligned": [{}]}})
    5
    """
    return next((i for i in order if tau.get(i, {}).get("aligned")), None)


def next_with_pairs(
    order: Sequence[int], tau: Mapping[int, Mapping[str, Any]], current: int
) -> int | None:
    """The next answer after ``current`` in ``order`` with pairs, wrapping round.

    Examples
    --------
    >>> tau = {1: {"aligned": [{}]}, 2: {"aligned": []}, 3: {"aligned": [{}]}}
    >>> next_with_pairs([1, 2, 3], tau, 1), next_with_pairs([1, 2, 3], tau, 3)
    (3, 1)
    """
    if current not in order:
        return first_with_pairs(order, tau)
    start = list(order).index(current)
    ring = [*order[start + 1 :], *order[: start + 1]]
    return first_with_pairs(ring, tau)


@dataclass(frozen=True)
class Progress:
    """How much of the proposed pairs one annotator has decided (saved verdicts)."""

    item_decided: int
    item_pairs: int
    run_decided: int
    run_pairs: int
    run_items_done: int
    run_items_with_pairs: int

    def line(self, annotator: str) -> str:
        """One sentence for the page."""
        return (
            f"{annotator or 'You'}: decided {self.item_decided} of {self.item_pairs} proposed "
            f"pairs of this answer; {self.run_decided} of {self.run_pairs} in this run "
            f"({self.run_items_done} of {self.run_items_with_pairs} answers with pairs done)."
        )


def progress(
    tau: Mapping[int, Mapping[str, Any]], mine_in_run: pd.DataFrame, item_id: int
) -> Progress:
    """One annotator's saved decisions on TAU's proposed pairs: this answer and the whole run.

    ``mine_in_run`` holds the annotator's annotations of the run.

    Examples
    --------
    >>> tau = {1: {"aligned": [{"gold": ["g"], "answer": ["a"]}]}, 2: {"aligned": []}}
    >>> mine = pd.DataFrame({"annotation_id": [1], "item_id": [1], "gold_triple": ['["g"]'],
    ...                      "answer_triple": ['["a"]'], "verdict": ["reject"]})
    >>> p = progress(tau, mine, 1)
    >>> (p.item_decided, p.item_pairs, p.run_items_done, p.run_items_with_pairs)
    (1, 1, 1, 1)
    """
    judged: dict[int, set[tuple[Any, Any]]] = {}
    for r in mine_in_run.itertuples():
        if r.verdict in ("confirm", "reject"):
            judged.setdefault(int(r.item_id), set()).add(pair_key(r.gold_triple, r.answer_triple))
    item_decided = item_pairs = run_decided = run_pairs = done = with_pairs = 0
    for item, result in tau.items():
        proposed = {(tuple(a["gold"]), tuple(a["answer"])) for a in result.get("aligned", [])}
        if not proposed:
            continue
        n = len(proposed & judged.get(int(item), set()))
        with_pairs += 1
        run_pairs += len(proposed)
        run_decided += n
        done += n == len(proposed)
        if int(item) == int(item_id):
            item_decided, item_pairs = n, len(proposed)
    return Progress(item_decided, item_pairs, run_decided, run_pairs, done, with_pairs)


def from_query(params: Mapping[str, str], state: MutableMapping[str, Any]) -> None:
    """Take ``?annotator=``, ``?run=`` and ``?item=`` into session state, once per session.

    ``state["annotate.run_id"]`` and ``state["annotate.item_id"]`` hold the case to open;
    ``state["annotate.name"]`` the annotator's name (kept across pages and reloads).
    """
    if state.get("annotate.query_read"):
        return
    state["annotate.query_read"] = True
    name = str(params.get("annotator", "")).strip()
    if name and not state.get("annotate.name"):
        state["annotate.name"] = name
    for key in ("run", "item"):
        value = str(params.get(key, "")).strip()
        if value.isdigit():
            state[f"annotate.{key}_id"] = int(value)
