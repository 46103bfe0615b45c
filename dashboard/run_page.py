"""The Run details page's tables: a run's identity and settings, and what its answers cost.

Pure functions on :class:`dashboard.data.reads.RunSummary` (its numbers are aggregated in DuckDB).
Every value becomes text for ``st.dataframe`` (no Markdown: nothing to escape). The figures at
the top are a live block (:func:`figures`, :mod:`dashboard.live_alpha`): they follow the alpha
slider in the browser.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from dashboard.live_alpha import GRID, cell, metrics
from s3kg_core.analysis.leaderboard import rank_change_text
from s3kg_core.scoring.signature import Signature

__all__ = [
    "IDENTITY_FIELDS",
    "figures",
    "identity",
    "scored_table",
    "status_table",
    "usage_metrics",
    "usage_table",
]

IDENTITY_FIELDS = (
    ("name", "display name"),
    ("model", "model"),
    ("dataset", "dataset"),
    ("temperature", "temperature"),
    ("extractor", "KG extractor"),
    ("endpoint", "endpoint"),
    ("prompt_version", "prompt version"),
    ("max_tokens", "max tokens"),
    ("seed", "seed"),
    ("source", "made by"),
    ("created_at", "created"),
)
"""The fields of a run shown first, in order, with their labels (then its other settings)."""


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _seconds(usage: Mapping[str, Any], key: str) -> str:
    value = usage.get(key)
    return "—" if value is None else f"{float(value):.2f} s"


def _count(usage: Mapping[str, Any], key: str) -> str:
    value = usage.get(key)
    return "—" if value is None else f"{int(value):,}"


def identity(info: Mapping[str, Any], signature: str | None, alpha: float) -> pd.DataFrame:
    """A run's identity and every setting it was made with: columns ``field, value``.

    The fields of :data:`IDENTITY_FIELDS` first (from the run or its settings; ``—`` where
    the run has none), then the other settings by name, then the score signature shown,
    blended at ``alpha`` (:meth:`Signature.blended <s3kg_core.scoring.signature.Signature.blended>`:
    the page's numbers are at the sidebar's alpha).

    Examples
    --------
    >>> info = {"name": "m", "model": "org/m", "dataset": "d", "temperature": 0.7,
    ...         "extractor": "offline", "source": "collect", "created_at": None,
    ...         "settings": {"endpoint": "http://127.0.0.1:8000/v1", "max_tokens": 64,
    ...                      "max_input_chars": 12000}}
    >>> t = identity(info, "mode:hybrid|tau:0.65|version:4", 0.5)
    >>> t.set_index("field")["value"][["display name", "endpoint", "max tokens", "seed"]].tolist()
    ['m', 'http://127.0.0.1:8000/v1', '64', '—']
    >>> t.values.tolist()[-2:]
    [['max_input_chars', '12000'], ['score signature', 'mode:hybrid|tau:0.65|version:4|alpha:0.5']]
    """
    settings = dict(info.get("settings") or {})
    rows = []
    for key, label in IDENTITY_FIELDS:
        value = info.get(key) if key in info else settings.get(key)
        rows.append((label, _text(value)))
    shown = {k for k, _ in IDENTITY_FIELDS}
    rows += [(key, _text(settings[key])) for key in sorted(settings) if key not in shown]
    printed = Signature.blended(signature, alpha) if signature else "not scored"
    rows.append(("score signature", printed))
    return pd.DataFrame(rows, columns=["field", "value"])


def scored_table(scored: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """A run's answers scored per signature, each signature as printed at ``alpha``.

    ``scored`` is :attr:`RunSummary.scored <dashboard.data.reads.RunSummary.scored>`; the
    stored signatures hold components only, and the page's numbers are blended at ``alpha``.

    Examples
    --------
    >>> scored = pd.DataFrame({"signature": ["mode:ot|version:4"], "scored": [30], "not_ok": [0]})
    >>> scored_table(scored, 0.3).values.tolist()
    [['mode:ot|version:4|alpha:0.3', 30, 0]]
    """
    signatures = [Signature.blended(str(s), alpha) for s in scored["signature"]]
    return scored.assign(signature=signatures)


def usage_metrics(usage: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """What the answers cost as ``(label, value, help)`` metrics; ``—`` where not recorded.

    Examples
    --------
    >>> m = usage_metrics({"answers": 2, "with_latency": 1, "latency_mean": 1.5,
    ...     "latency_median": 1.5, "latency_p95": 1.5, "latency_max": 1.5,
    ...     "prompt_tokens": 10, "completion_tokens": 4, "with_tokens": 1})
    >>> [(label, value) for label, value, _ in m]
    [('Latency (median)', '1.50 s'), ('Latency (p95)', '1.50 s'), ('Prompt tokens', '10'), ('Answer tokens', '4')]
    """  # noqa: E501
    timed = f"over {usage.get('with_latency') or 0} of {usage.get('answers') or 0} answers"
    counted = f"over {usage.get('with_tokens') or 0} of {usage.get('answers') or 0} answers"
    return [
        (
            "Latency (median)",
            _seconds(usage, "latency_median"),
            f"Seconds the endpoint took, {timed}.",
        ),
        ("Latency (p95)", _seconds(usage, "latency_p95"), f"95th percentile, {timed}."),
        (
            "Prompt tokens",
            _count(usage, "prompt_tokens"),
            f"Sum as the endpoint reported it, {counted}.",
        ),
        ("Answer tokens", _count(usage, "completion_tokens"), f"Sum, {counted}."),
    ]


def status_table(counts: Mapping[str, int], what: str) -> pd.DataFrame:
    """Counts by status as a two-column table (``what``, ``answers``), largest first.

    Examples
    --------
    >>> status_table({"ok": 28, "error": 2}, "answer status").values.tolist()
    [['ok', 28], ['error', 2]]
    """
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return pd.DataFrame(ordered, columns=[what, "answers"])


def usage_table(usage: Mapping[str, Any]) -> pd.DataFrame:
    """What the answers cost as rows ``cost, value, over`` (latencies, token sums).

    Examples
    --------
    >>> t = usage_table({"answers": 2, "with_latency": 1, "latency_mean": 1.5,
    ...     "latency_median": 1.5, "latency_p95": 1.5, "latency_max": 2.0,
    ...     "prompt_tokens": None, "completion_tokens": None, "with_tokens": 0})
    >>> t.values.tolist()[-2:]
    [['prompt tokens (sum)', '—', '0 of 2 answers'], ['answer tokens (sum)', '—', '0 of 2 answers']]
    """
    answers = usage.get("answers") or 0
    timed = f"{usage.get('with_latency') or 0} of {answers} answers"
    counted = f"{usage.get('with_tokens') or 0} of {answers} answers"

    rows = [
        ("latency (mean)", _seconds(usage, "latency_mean"), timed),
        ("latency (median)", _seconds(usage, "latency_median"), timed),
        ("latency (95th percentile)", _seconds(usage, "latency_p95"), timed),
        ("latency (max)", _seconds(usage, "latency_max"), timed),
        ("prompt tokens (sum)", _count(usage, "prompt_tokens"), counted),
        ("answer tokens (sum)", _count(usage, "completion_tokens"), counted),
    ]
    return pd.DataFrame(rows, columns=["cost", "value", "over"])


def figures(
    run_id: int,
    frames: Sequence[pd.DataFrame],
    at: int,
    *,
    answers: tuple[str, str],
    usage: tuple[str, str, str],
    verdict: str | None,
) -> dict[str, Any]:
    """The page's four figures at every stop of the slider: answers, mean CUS, rank, usage.

    ``frames`` are the leaderboard at each stop (:func:`dashboard.live_board.stops`, ranked by
    CUS), ``at`` the server's stop; ``answers`` the answers figure and its help, ``usage`` the
    first of :func:`usage_metrics`, ``verdict`` the run against its dataset's #1 at the
    server's alpha (``None`` for the #1). Help texts are plain text (a tooltip, never Markdown);
    the interval and the verdict are the server's, at its stop only.

    Examples
    --------
    >>> board = pd.DataFrame({"run_id": [1, 2], "dataset": ["d", "d"], "cus": [0.6, 0.4],
    ...     "rank": [1, 2], "reference_rank": [1, 2], "low": [0.5, 0.3], "high": [0.7, 0.5]})
    >>> block = figures(2, [board] * len(GRID), 5, answers=("30", ""),
    ...                 usage=("Tokens", "1,000", ""), verdict="clearly lower (paired)")
    >>> [i["label"] for i in block["items"]]
    ['Answers', 'Mean CUS', 'Rank in dataset', 'Tokens']
    >>> block["items"][2]["cell"]["t"][5], block["items"][1]["help"][5]
    ('2 of 2', 'At alpha 0.5; 95% bootstrap interval 0.300 to 0.500.')
    """
    rows = [f.set_index("run_id") for f in frames]
    mine = [r.loc[run_id] for r in rows]
    dataset = str(mine[at]["dataset"])
    in_dataset = int((rows[at]["dataset"] == dataset).sum())
    reference = int(mine[at]["reference_rank"])
    cus_help, rank_help = [], []
    for k, stop in enumerate(GRID):
        change = rank_change_text(reference - int(mine[k]["rank"]))
        if k == at:
            lo, hi = float(mine[k]["low"]), float(mine[k]["high"])
            cus_help.append(f"At alpha {stop:g}; 95% bootstrap interval {lo:.3f} to {hi:.3f}.")
            versus = f"; against #1: {verdict}" if verdict else ""
        else:  # the interval and the verdict are the server's: they come on release
            cus_help.append(f"At alpha {stop:g}; its interval follows when you release the slider.")
            versus = ""
        rank_help.append(f"Within {dataset} by mean CUS{versus}; since alpha 0.5: {change}.")
    return metrics(
        [
            {"label": "Answers", "cell": {"t": answers[0]}, "help": answers[1]},
            {
                "label": "Mean CUS",
                "cell": cell([float(m["cus"]) for m in mine], decimals=3),
                "help": cus_help,
            },
            {
                "label": "Rank in dataset",
                "cell": {"t": [f"{int(m['rank'])} of {in_dataset}" for m in mine]},
                "help": rank_help,
            },
            {"label": usage[0], "cell": {"t": usage[1]}, "help": usage[2]},
        ]
    )
