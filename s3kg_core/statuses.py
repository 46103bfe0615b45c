"""Statuses of a stored answer's scores, named by the KG they are about.

The pair scorer (:class:`~s3kg_core.scoring.s3kg.KGScorer`, ``s3kg pairs``) compares a KG 1
with a KG 2 and says why a pair scored 0 in those terms (``empty_kg_1``, ``unparseable_kg_2``,
``oversized_kg_1``, ``empty_kgs``): in a pairs file the KGs *are* the columns ``kg_1`` and
``kg_2``. An answer's scores compare the answer KG (always KG 1) with the gold KG (GoldSim) and
with the context KG (CtxSim), and there the same words misled: ``empty_kg_1`` in the
``gold_status`` column read as "the gold KG is empty" where it meant the answer's. So CUS
results and the database name the KG: ``answer_kg_empty``, ``gold_kg_empty``,
``context_kg_empty``, ``answer_and_gold_kgs_empty``, ``answer_kg_unparseable``,
``context_kg_oversized``, ... (schema migration 8 renamed the values stored before).

Examples
--------
>>> role_status("empty_kg_1", "gold"), role_status("empty_kg_2", "context")
('answer_kg_empty', 'context_kg_empty')
>>> role_status("gold_kg_empty", "gold")  # a new name is kept as it is
'gold_kg_empty'
>>> describe_status("context_kg_empty")
'the context KG is empty'
"""

from __future__ import annotations

from typing import Literal

from .errors import ConfigError

__all__ = [
    "LEGACY_STATUSES",
    "REFERENCES",
    "Reference",
    "describe_status",
    "role_status",
    "short_status",
]

Reference = Literal["gold", "context"]
"""The KG an answer's KG is compared with: ``gold`` (GoldSim) or ``context`` (CtxSim)."""

REFERENCES: tuple[Reference, ...] = ("gold", "context")

_PROBLEMS = ("empty", "unparseable", "oversized")


def _legacy(reference: Reference) -> dict[str, str]:
    names = {"empty_kgs": f"answer_and_{reference}_kgs_empty"}
    for problem in _PROBLEMS:
        names[f"{problem}_kg_1"] = f"answer_kg_{problem}"
        names[f"{problem}_kg_2"] = f"{reference}_kg_{problem}"
    return names


LEGACY_STATUSES: dict[Reference, dict[str, str]] = {ref: _legacy(ref) for ref in REFERENCES}
"""For each reference KG, the pair statuses stored before schema 8 -> their names now."""

_DESCRIPTIONS = {
    "ok": "scored",
    "kgs_empty": "both KGs are empty",
    "kg_empty": "KG is empty",
    "kg_unparseable": "KG could not be parsed",
    "kg_oversized": "KG is too large to compare",
}


def role_status(status: str, reference: Reference) -> str:
    """The stored name of a pair ``status`` of the answer KG (KG 1) against ``reference`` (KG 2).

    Old names (``empty_kg_1``...) are translated, anything else (``ok``, a name already in the
    new words, a status this module does not know) is returned unchanged: files and databases
    written before the rename read the same as new ones.

    Parameters
    ----------
    status
        A pair status (``"ok"``, ``"empty_kg_1"``, ...) or a stored one.
    reference
        ``"gold"`` for a GoldSim status, ``"context"`` for a CtxSim status.

    Raises
    ------
    ConfigError
        If ``reference`` is neither ``"gold"`` nor ``"context"``.

    Examples
    --------
    >>> role_status("empty_kgs", "context")
    'answer_and_context_kgs_empty'
    >>> role_status("oversized_kg_2", "gold"), role_status("ok", "gold")
    ('gold_kg_oversized', 'ok')
    """
    if reference not in LEGACY_STATUSES:
        raise ConfigError(f"reference must be one of {REFERENCES}; got {reference!r}")
    return LEGACY_STATUSES[reference].get(status, status)


def describe_status(status: str) -> str:
    """One line that says what a stored status means (for tooltips and reports).

    Examples
    --------
    >>> describe_status("answer_and_gold_kgs_empty")
    'the answer and gold KGs are both empty'
    >>> describe_status("ok"), describe_status("not_scored")
    ('scored', 'not_scored')
    """
    if status == "ok":
        return _DESCRIPTIONS["ok"]
    for ref in REFERENCES:
        if status == f"answer_and_{ref}_kgs_empty":
            return f"the answer and {ref} KGs are both empty"
    for kg in ("answer", *REFERENCES):
        for problem in _PROBLEMS:
            if status == f"{kg}_kg_{problem}":
                return f"the {kg} {_DESCRIPTIONS[f'kg_{problem}']}"
    return status


def short_status(status: str) -> str:
    """A few words for a status, short enough to sit under a metric ("" when scored).

    Examples
    --------
    >>> short_status("gold_kg_empty"), short_status("ok")
    ('gold KG empty', '')
    >>> short_status("answer_and_context_kgs_empty")
    'both KGs empty'
    """
    if status == "ok":
        return ""
    if status.endswith("_kgs_empty"):
        return "both KGs empty"
    for kg in ("answer", *REFERENCES):
        for problem in _PROBLEMS:
            if status == f"{kg}_kg_{problem}":
                return f"{kg} KG {problem}"
    return "not scored"
