"""Resuming a killed benchmark run: the finished sets, kept beside the output JSON.

``s3kg bench pairs --json OUT.json`` writes ``OUT.json`` only when every set is scored. Each
set it finishes first goes to ``OUT.json.partial.jsonl``, one JSON line per set::

    {"dataset": NAME, "pairs": N, "options": {...}, "result": {...}}

A rerun with the same options takes those sets from the file instead of scoring them again;
the file goes once ``OUT.json`` is written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["PARTIAL_SUFFIX", "PartialResults"]

PARTIAL_SUFFIX = ".partial.jsonl"
"""Appended to the output JSON's file name to name its file of finished sets."""


class PartialResults:
    """The finished sets of an unfinished benchmark run (``OUT.json.partial.jsonl``).

    One line per finished set: its name, its pair count, the run's options and its result
    JSON. A set is taken from the file only when the file's options equal this run's
    options (compared as they read back from JSON) and its pair count is the same; any other
    line is ignored, as is a line cut short by a kill.

    Parameters
    ----------
    json_path
        The run's output JSON; the file of finished sets is ``json_path`` with
        :data:`PARTIAL_SUFFIX` appended to its name.
    options
        Everything that changes a set's result (encoder, mode, methods, seed, ...), JSON-able.

    Attributes
    ----------
    path
        The file of finished sets (it may not exist yet).
    options
        ``options`` as they read back from JSON.

    Examples
    --------
    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "all.json"
    >>> done = PartialResults(out, {"seed": 0})
    >>> done.path.name
    'all.json.partial.jsonl'
    >>> done.add("toy_a", 8, {"n": 8})
    >>> PartialResults(out, {"seed": 0}).get("toy_a", 8)
    {'n': 8}
    >>> PartialResults(out, {"seed": 1}).get("toy_a", 8) is None  # other options
    True
    >>> done.remove()
    >>> done.path.exists()
    False
    """

    def __init__(self, json_path: str | Path, options: Mapping[str, Any]) -> None:
        json_path = Path(json_path)
        self.path = json_path.with_name(json_path.name + PARTIAL_SUFFIX)
        self.options: dict[str, Any] = json.loads(json.dumps(dict(options)))  # as it reads back
        self._done: dict[tuple[str, int], dict[str, Any]] = {}
        if not self.path.exists():
            return
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                if row["options"] == self.options:
                    self._done[(str(row["dataset"]), int(row["pairs"]))] = dict(row["result"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut by the kill

    def get(self, name: str, pairs: int) -> dict[str, Any] | None:
        """The stored result of set ``name`` of ``pairs`` pairs, or ``None`` if not finished.

        Examples
        --------
        >>> import tempfile
        >>> PartialResults(Path(tempfile.mkdtemp()) / "o.json", {}).get("toy_a", 8) is None
        True
        """
        return self._done.get((name, pairs))

    def add(self, name: str, pairs: int, result: Mapping[str, Any]) -> None:
        """Append a finished set's result to the file (flushed and synced to disk).

        Examples
        --------
        >>> import tempfile
        >>> done = PartialResults(Path(tempfile.mkdtemp()) / "o.json", {"seed": 0})
        >>> done.add("toy_a", 8, {"n": 8})
        >>> json.loads(done.path.read_text())["dataset"], done.get("toy_a", 8)
        ('toy_a', {'n': 8})
        """
        row = {"dataset": name, "pairs": pairs, "options": self.options, "result": dict(result)}
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._done[(name, pairs)] = json.loads(json.dumps(row["result"]))

    def remove(self) -> None:
        """Delete the file (the run's output is written); nothing happens if it is absent.

        Examples
        --------
        >>> import tempfile
        >>> PartialResults(Path(tempfile.mkdtemp()) / "o.json", {}).remove()
        """
        self.path.unlink(missing_ok=True)
