"""Views of the direction suite (``s3kg bench direction``): facts reworded against facts changed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import bold, f, md_table, view

__all__: list[str] = []  # the views register themselves in ``VIEWS``

DEFAULT_MODE = "ot"
"""The mode whose rows are bold (the scorer's default)."""

FAMILY_COLUMNS = {
    "passive": "passive",
    "inverse": "inverse",
    "synonym": "synonym",
    "symmetric": "symmetric swap",
    "swap": "swap",
    "passive_old_order": "passive, old order",
    "entity_replaced": "wrong entity",
}
"""The families in the table's order, keeping ones first, and their column names."""

SIDES = ("dev", "test")
"""The sides shown (the evidence also holds ``all``)."""

WRITTEN_DOMAINS = ("science", "history", "medicine", "business", "family", "geography", "sport")
"""The domains of the written facts, in the table's order (the drawn facts' are their sets)."""


def _runs(ev: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(mode, side, entry)`` for each mode's dev and test figures, in the file's mode order."""
    return [
        (mode, side, sides[side])
        for mode, sides in ev.get("modes", {}).items()
        for side in SIDES
        if side in sides
    ]


@view("direction", "direction")
def _direction(ev: Mapping[str, Any]) -> str:
    header = [
        "mode",
        "facts",
        "comparisons",
        "accuracy",
        "meaning kept: mean",
        *list(FAMILY_COLUMNS.values())[:4],
        "meaning changed: mean",
        *list(FAMILY_COLUMNS.values())[4:],
    ]
    rows = []
    for mode, side, run in _runs(ev):
        means = run["family_means"]
        rows.append(
            [
                bold(f"{mode}, {side}", mode == DEFAULT_MODE),
                str(run["facts"]),
                str(run["comparisons"]),
                bold(f(run["accuracy"]), mode == DEFAULT_MODE),
                f(run["preserving_mean"]),
                *(f(means[k]) for k in list(FAMILY_COLUMNS)[:4]),
                f(run["changing_mean"]),
                *(f(means[k]) for k in list(FAMILY_COLUMNS)[4:]),
            ]
        )
    return md_table(header, rows)


@view("direction_domains", "direction")
def _direction_domains(ev: Mapping[str, Any]) -> str:
    runs = _runs(ev)
    written = [d for d in WRITTEN_DOMAINS if any(d in run["by_domain"] for _, _, run in runs)]
    header = ["mode", *written, "written facts", "drawn facts"]
    rows = []
    for mode, side, run in runs:
        by_domain, by_source = run["by_domain"], run["by_source"]
        rows.append(
            [
                bold(f"{mode}, {side}", mode == DEFAULT_MODE),
                *(f(by_domain[d]["accuracy"]) if d in by_domain else "" for d in written),
                *(
                    f(by_source[s]["accuracy"]) if s in by_source else ""
                    for s in ("written", "drawn")
                ),
            ]
        )
    return md_table(header, rows)
