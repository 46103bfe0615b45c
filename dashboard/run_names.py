"""One label per run, the same on every picker and table: its name and what tells it apart.

A run's display name (``runs.name``: ``--name``, the Run page's rename, or the model's short
name) is its label when no other run shares it. Runs that share a name (the demo's two
``SmolLM2-135M-Instruct`` runs) get the settings that differ among them appended, in this order:
temperature (``T=0.7``), extractor, dataset; and the run id where even those are the same.
A picker then shows "SmolLM2-135M-Instruct · T=0.7", short enough not to be cut at 1280 px,
and the run id stays in the URL (``?run=2``), never in the label's place.

Labels are plain text: a picker and a table cell show them as they are (no Markdown); escape
them at any other sink (:mod:`dashboard.escape`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pandas as pd

__all__ = ["SEPARATOR", "run_label_map"]

SEPARATOR = " · "

_SETTINGS: tuple[tuple[str, Callable[[object], str]], ...] = (
    ("temperature", lambda v: f"T={float(v):g}"),  # type: ignore[arg-type]
    ("extractor", str),
    ("dataset", str),
)


def run_label_map(runs: pd.DataFrame) -> dict[int, str]:
    """Run id -> label: the display name, plus the settings that tell same-named runs apart.

    Parameters
    ----------
    runs
        One row per run with ``run_id`` and ``model`` (the display name, as
        :func:`dashboard.data.reads.load_runs` gives it); ``temperature``, ``extractor`` and
        ``dataset`` are used where present.

    Returns
    -------
    dict[int, str]
        A distinct label for every run id, in the order of ``runs``.

    Examples
    --------
    >>> runs = pd.DataFrame({"run_id": [1, 2, 3], "model": ["SmolLM2", "SmolLM2", "mine"],
    ...     "temperature": [0.0, 0.7, 0.0], "extractor": ["spacy"] * 3, "dataset": ["d"] * 3})
    >>> run_label_map(runs)
    {1: 'SmolLM2 · T=0', 2: 'SmolLM2 · T=0.7', 3: 'mine'}
    >>> run_label_map(runs.assign(temperature=0.0, model="m"))
    {1: 'm · run 1', 2: 'm · run 2', 3: 'm · run 3'}
    """
    names = runs["model"].astype(str).tolist()
    ids = [int(r) for r in runs["run_id"]]
    labels = dict(zip(ids, names, strict=True))
    groups: dict[str, list[int]] = {}
    for run, name in zip(ids, names, strict=True):
        groups.setdefault(name, []).append(run)
    rows = runs.assign(run_id=ids).set_index("run_id")
    for name, members in groups.items():
        if len(members) < 2:
            continue
        parts: dict[int, list[str]] = {run: [name] for run in members}
        for column, text in _SETTINGS:
            if column not in rows:
                continue
            values: list[Hashable] = [rows.at[run, column] for run in members]
            if len(set(values)) > 1:
                for run, value in zip(members, values, strict=True):
                    parts[run].append(text(value))
        for run in members:
            labels[run] = SEPARATOR.join(parts[run])
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {
        run: f"{label}{SEPARATOR}run {run}" if counts[label] > 1 else label
        for run, label in labels.items()
    }
