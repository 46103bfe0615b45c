"""The Annotate page's rules: proposed pairs, raw labels, decisions, progress, the case in the URL.

Pure functions on TAU results and annotation frames (no Streamlit), so the page stays thin and
the rules are tested directly. A verdict is never invented: a proposed pair starts undecided
(``None``) unless this annotator saved a verdict on it, and only pairs the annotator decided are
saved (:func:`changes`).

Examples
--------
>>> result = {"aligned": [{"gold": ["paper", "publish in", "nature"],
...                        "answer": ["paper", "appear in", "nature"], "similarity": 0.81}]}
>>> pairs = proposed_pairs(result, {}, {}, {})
>>> [p.saved for p in pairs]
[None]
>>> changes(pairs, [None], [])
Changes(save=[], withdraw=[])
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
    "DECISIONS",
    "Changes",
    "Progress",
    "ProposedPair",
    "added_pairs",
    "case_from_query",
    "changes",
    "first_with_pairs",
    "item_label",
    "next_with_pairs",
    "note_case",
    "pair_key",
    "progress",
    "proposed_pairs",
    "raw_labels",
    "saved_verdicts",
    "show",
    "triple_key",
]

DECISIONS = ("confirm", "reject")
"""The verdicts an annotator gives a pair TAU proposed (``add`` is for a pair it missed)."""

PairKey = tuple[tuple[str, ...] | None, tuple[str, ...] | None]


def triple_key(triple: Sequence[str]) -> str:
    """A triple as stored in the annotations table (JSON text of ``[head, relation, tail]``).

    Examples
    --------
    >>> triple_key(["aspirin", "reduce", "fever"])
    '["aspirin", "reduce", "fever"]'
    """
    return json.dumps(list(triple))


def pair_key(gold: str | None, answer: str | None) -> PairKey:
    """A stored pair's identity whatever its JSON spacing: ``(gold, answer)`` as tuples.

    Examples
    --------
    >>> pair_key('["a","r","b"]', '["a", "r", "b"]')
    (('a', 'r', 'b'), ('a', 'r', 'b'))
    """

    def one(text: str | None) -> tuple[str, ...] | None:
        return None if text is None else tuple(str(x) for x in json.loads(text))

    return one(gold), one(answer)


def show(triple: Sequence[str]) -> str:
    """A triple as one line: ``head | relation | tail``.

    Examples
    --------
    >>> show(["Curie", "won", "prize"])
    'Curie | won | prize'
    """
    return " | ".join(triple)


def raw_labels(triples: Iterable[Triple]) -> dict[tuple[str, ...], list[Triple]]:
    """Normalised triple (as TAU compares it) -> the extracted triples it came from.

    Examples
    --------
    >>> raw_labels([Triple("The paper", "published_in", "Nature")])
    {('the paper', 'publish in', 'nature'): [Triple(head='The paper', relation='published_in', tail='Nature')]}
    """  # noqa: E501
    out: dict[tuple[str, ...], list[Triple]] = {}
    for t in triples:
        for norm in normalize_triples([t]):
            out.setdefault(tuple(norm.to_list()), []).append(t)
    return out


@dataclass(frozen=True)
class ProposedPair:
    """One pair TAU proposed to an annotator.

    The normalised triples TAU compared, their cosine, the extracted triples they came from,
    and this annotator's saved verdict (``None``: undecided).
    """

    gold: tuple[str, ...]
    answer: tuple[str, ...]
    cosine: float
    gold_raw: tuple[Triple, ...]
    answer_raw: tuple[Triple, ...]
    saved: str | None

    @property
    def key(self) -> tuple[str, str]:
        """``(gold_json, answer_json)`` as stored."""
        return triple_key(self.gold), triple_key(self.answer)

    def raw_text(self, side: str) -> str:
        """The extracted triple(s) of ``side`` (``gold`` or ``answer``) as one line."""
        raw = self.gold_raw if side == "gold" else self.answer_raw
        lemmas = self.gold if side == "gold" else self.answer
        return " ; ".join(show(t.to_list()) for t in raw) or show(lemmas)


def saved_verdicts(mine: pd.DataFrame) -> dict[PairKey, str]:
    """An annotator's stored verdicts on one answer: ``pair_key -> verdict`` (latest wins)."""
    if mine.empty:
        return {}
    return {
        pair_key(r.gold_triple, r.answer_triple): str(r.verdict)
        for r in mine.sort_values("annotation_id").itertuples()
    }


def proposed_pairs(
    result: Mapping[str, Any],
    saved: Mapping[PairKey, str],
    raw_gold: Mapping[tuple[str, ...], Sequence[Triple]],
    raw_answer: Mapping[tuple[str, ...], Sequence[Triple]],
) -> list[ProposedPair]:
    """TAU's proposed pairs of one answer, each with this annotator's saved verdict or ``None``.

    An ``add`` saved on the same pair is no verdict on the proposal: it stays ``None``.

    Examples
    --------
    >>> result = {"aligned": [{"gold": ["a", "r", "b"], "answer": ["a", "r", "c"],
    ...                        "similarity": 0.81}]}
    >>> [p.saved for p in proposed_pairs(result, {(("a", "r", "b"), ("a", "r", "c")): "reject"},
    ...                                  {}, {})]
    ['reject']
    """
    out = []
    for a in result.get("aligned", []):
        gold, answer = tuple(a["gold"]), tuple(a["answer"])
        verdict = saved.get((gold, answer))
        out.append(
            ProposedPair(
                gold=gold,
                answer=answer,
                cosine=float(a.get("similarity", float("nan"))),
                gold_raw=tuple(raw_gold.get(gold, ())),
                answer_raw=tuple(raw_answer.get(answer, ())),
                saved=verdict if verdict in DECISIONS else None,
            )
        )
    return out


@dataclass(frozen=True)
class Changes:
    """What Save writes for one answer.

    ``save``: decided verdicts that differ from the saved ones, and pending added pairs
    (``(gold_json, answer_json, verdict)``); ``withdraw``: the pairs whose saved verdict was
    cleared (``(gold_json, answer_json)``).
    """

    save: list[tuple[str, str, str]]
    withdraw: list[tuple[str, str]]

    def __len__(self) -> int:
        return len(self.save) + len(self.withdraw)


def changes(
    pairs: Sequence[ProposedPair],
    chosen: Sequence[str | None],
    pending_adds: Sequence[tuple[str, str]],
) -> Changes:
    """The writes Save makes for ``pairs`` given the annotator's current choices.

    ``chosen[i]`` is the verdict shown for ``pairs[i]`` (``None``: undecided); pending added
    pairs are saved as ``add``. An undecided pair is never saved.

    Examples
    --------
    >>> t = (("g",), ("a",))
    >>> p = [ProposedPair(*t, 0.8, (), (), None), ProposedPair(*t, 0.8, (), (), "reject")]
    >>> changes(p, ["confirm", None], [])
    Changes(save=[('["g"]', '["a"]', 'confirm')], withdraw=[('["g"]', '["a"]')])
    """
    save: list[tuple[str, str, str]] = []
    withdraw: list[tuple[str, str]] = []
    for pair, verdict in zip(pairs, chosen, strict=True):
        if verdict in DECISIONS and verdict != pair.saved:
            save.append((*pair.key, str(verdict)))
        elif verdict not in DECISIONS and pair.saved is not None:
            withdraw.append(pair.key)
    save += [(g, a, "add") for g, a in pending_adds]
    return Changes(save, withdraw)


def added_pairs(mine: pd.DataFrame) -> list[tuple[str, str]]:
    """The pairs an annotator added to one answer (stored ``add`` verdicts), as JSON keys."""
    if mine.empty:
        return []
    rows = mine[mine["verdict"] == "add"].sort_values("annotation_id")
    return list(dict.fromkeys(zip(rows["gold_triple"], rows["answer_triple"], strict=True)))


def _n_pairs(tau: Mapping[int, Mapping[str, Any]], item: int) -> int:
    return len(tau.get(item, {}).get("aligned", []))


def item_label(item: int, n_pairs: int, cus: float, question: str) -> str:
    """A select-box label of one answer: item, TAU pairs, CUS and the question.

    Examples
    --------
    >>> item_label(5, 2, 0.41234, "Who wrote it?")
    'item 5 · 2 pairs · CUS 0.412 · Who wrote it?'
    >>> item_label(6, 0, 0.0, "Why?")
    'item 6 · no pairs · CUS 0.000 · Why?'
    """
    pairs = "no pairs" if n_pairs == 0 else f"{n_pairs} pair" + ("s" if n_pairs > 1 else "")
    return f"item {int(item)} · {pairs} · CUS {cus:.3f} · {question}"


def first_with_pairs(order: Sequence[int], tau: Mapping[int, Mapping[str, Any]]) -> int | None:
    """The first answer in ``order`` that TAU proposed a pair for (``None``: none has one).

    Examples
    --------
    >>> first_with_pairs([3, 5], {3: {"aligned": []}, 5: {"aligned": [{}]}})
    5
    """
    return next((i for i in order if _n_pairs(tau, i)), None)


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
    order = list(order)
    if current not in order:
        return first_with_pairs(order, tau)
    start = order.index(current)
    return first_with_pairs([*order[start + 1 :], *order[: start + 1]], tau)


@dataclass(frozen=True)
class Progress:
    """How many of TAU's proposed pairs one annotator has decided (saved verdicts)."""

    item_decided: int
    item_pairs: int
    run_decided: int
    run_pairs: int
    run_items_done: int
    run_items_with_pairs: int

    def line(self, annotator: str) -> str:
        """One sentence for the page.

        Examples
        --------
        >>> Progress(1, 3, 4, 20, 1, 9).line("ann")
        'Decided 1 of 3 by you (ann) on this answer; 4 of 20 proposed pairs of this run, 1 of 9 answers with pairs done.'
        """  # noqa: E501
        return (
            f"Decided {self.item_decided} of {self.item_pairs} by you ({annotator}) on this "
            f"answer; {self.run_decided} of {self.run_pairs} proposed pairs of this run, "
            f"{self.run_items_done} of {self.run_items_with_pairs} answers with pairs done."
        )


def progress(
    tau: Mapping[int, Mapping[str, Any]], mine_in_run: pd.DataFrame, item_id: int
) -> Progress:
    """One annotator's saved decisions on TAU's proposed pairs: this answer and the whole run.

    ``mine_in_run`` holds the annotator's annotations of the run; ``add`` rows are no
    decision on a proposal.

    Examples
    --------
    >>> tau = {1: {"aligned": [{"gold": ["g"], "answer": ["a"]}]}, 2: {"aligned": []}}
    >>> mine = pd.DataFrame({"annotation_id": [1], "item_id": [1], "gold_triple": ['["g"]'],
    ...                      "answer_triple": ['["a"]'], "verdict": ["reject"]})
    >>> p = progress(tau, mine, 1)
    >>> (p.item_decided, p.item_pairs, p.run_items_done, p.run_items_with_pairs)
    (1, 1, 1, 1)
    """
    judged: dict[int, set[PairKey]] = {}
    for r in mine_in_run.itertuples():
        if r.verdict in DECISIONS:
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


def case_from_query(
    params: Mapping[str, Any], state: MutableMapping[str, Any]
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
    """
    run, item = (str(params.get(k, "")).strip() for k in ("run", "item"))
    if not (run.isdigit() and item.isdigit()):
        return None, None
    case = (int(run), int(item))
    if state.get("annotate.url_case") == case:
        return None, None
    state["annotate.url_case"] = case
    return case


def note_case(state: MutableMapping[str, Any], run_id: int, item_id: int) -> None:
    """Remember the case the page wrote into the URL (so :func:`case_from_query` skips it)."""
    state["annotate.url_case"] = (int(run_id), int(item_id))
