"""Factuality evaluations in the DuckDB store (table ``factuality_evals``, schema v4).

One row per named evaluation: when it ran, the target model, the judge's layer, the test size,
the headline summary (the JSON of ``s3kg factuality evaluate``) and the breakdowns. Saving a
name that exists replaces it.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import FactualityError
from ..store.factuality_queries import factuality_eval_rows, replace_factuality_eval
from ..store.store import Store

__all__ = [
    "FactualityEval",
    "json_safe",
    "load_evaluations",
    "read_evaluations",
    "save_evaluation",
]


@dataclass(frozen=True)
class FactualityEval:
    """One stored evaluation.

    Examples
    --------
    >>> e = FactualityEval("run1", "smollm2", 12, 80, {"judge_accuracy": 0.9}, {})
    >>> FactualityEval.from_dict(e.to_dict()) == e
    True
    """

    name: str
    model: str
    layer: int
    n_test: int
    summary: dict[str, Any]
    breakdown: dict[str, Any]
    run_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``run_at`` as ISO text)."""
        return {
            "name": self.name,
            "model": self.model,
            "layer": self.layer,
            "n_test": self.n_test,
            "summary": self.summary,
            "breakdown": self.breakdown,
            "run_at": self.run_at.isoformat() if self.run_at else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FactualityEval:
        """Read back :meth:`to_dict`."""
        run_at = data.get("run_at")
        return cls(
            name=str(data["name"]),
            model=str(data["model"]),
            layer=int(data["layer"]),
            n_test=int(data["n_test"]),
            summary=dict(data["summary"]),
            breakdown=dict(data.get("breakdown") or {}),
            run_at=datetime.fromisoformat(run_at) if run_at else None,
        )


def json_safe(value: Any) -> Any:
    """``value`` with every NaN or infinite float replaced by ``None`` (valid JSON then).

    Examples
    --------
    >>> json_safe({"a": float("nan"), "b": [1.0, float("inf")]})
    {'a': None, 'b': [1.0, None]}
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def _json(value: Any) -> str:
    return json.dumps(json_safe(value), allow_nan=False)


def save_evaluation(store: Store | str | Path, evaluation: FactualityEval) -> None:
    """Insert or replace ``evaluation`` (by name) in one transaction.

    Raises
    ------
    FactualityError
        If the name is empty.

    Examples
    --------
    >>> import os, tempfile
    >>> db = os.path.join(tempfile.mkdtemp(), "f.duckdb")
    >>> save_evaluation(db, FactualityEval("run1", "smollm2", 12, 80, {"n_test": 80}, {}))
    >>> [e.name for e in load_evaluations(db)]
    ['run1']
    """
    if not evaluation.name:
        raise FactualityError("an evaluation needs a name")
    db = store if isinstance(store, Store) else Store(store)
    with db.transaction() as con:
        replace_factuality_eval(
            con,
            evaluation.name,
            evaluation.model,
            evaluation.layer,
            evaluation.n_test,
            _json(evaluation.summary),
            _json(evaluation.breakdown),
        )


def load_evaluations(store: Store | str | Path) -> list[FactualityEval]:
    """Every stored evaluation, newest first."""
    db = store if isinstance(store, Store) else Store(store, read_only=True)
    with db.connect() as con:
        rows = factuality_eval_rows(con)
    return [
        FactualityEval(
            name=str(r[0]),
            model=str(r[1]),
            layer=int(r[2]),
            n_test=int(r[3]),
            summary=json.loads(r[4]) if isinstance(r[4], str) else dict(r[4]),
            breakdown=json.loads(r[5]) if isinstance(r[5], str) and r[5] else {},
            run_at=r[6],
        )
        for r in rows
    ]


def read_evaluations(path: str | Path) -> list[FactualityEval]:
    """The evaluations of a JSON file: one :meth:`FactualityEval.to_dict` object or a list of them.

    The demo database's evaluations come from ``data/demo/factuality_eval.json`` this way
    (``run_at`` there says when the run happened; :func:`save_evaluation` stamps the insert).

    Raises
    ------
    FactualityError
        If the file is missing, not JSON, or an entry lacks a field.

    Examples
    --------
    >>> import json, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "e.json")
    >>> e = FactualityEval("run1", "smollm2", 12, 80, {"judge_accuracy": 0.9}, {})
    >>> with open(path, "w") as f:
    ...     _ = f.write(json.dumps([e.to_dict()]))
    >>> read_evaluations(path) == [e]
    True
    """
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise FactualityError(f"no evaluation file {file}") from exc
    except json.JSONDecodeError as exc:
        raise FactualityError(f"{file} is not JSON ({exc})") from exc
    entries = data if isinstance(data, list) else [data]
    try:
        return [FactualityEval.from_dict(entry) for entry in entries]
    except (KeyError, TypeError, ValueError) as exc:
        raise FactualityError(
            f"{file}: every evaluation needs name, model, layer, n_test and summary ({exc!r})"
        ) from exc
