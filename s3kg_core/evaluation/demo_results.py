"""The project's precomputed benchmark results that the demo database carries.

``data/demo/bench_results.json`` holds the figures ``s3kg bench pairs`` computed on the public
labelled pair sets (the S3KG authors' released benchmarks): F1, AUROC, their bootstrap
intervals, alpha, threshold, the alpha sweeps and each method's signature, one row per
dataset x method; never a pair, text, label or per-pair score of those sets.
``scripts/make_demo_bench.py`` writes it from a ``s3kg bench pairs --db`` file;
:func:`store_demo_bench` stores its rows in a database, each marked in its ``detail`` as
precomputed by the project (``detail["precomputed"]``: note, command, version, date), so the
dashboard's Benchmarks page can say so. A later ``s3kg bench pairs --db`` run of the same
dataset, encoder, mode, triples and method replaces the row (and drops the mark).

Examples
--------
>>> import os, tempfile
>>> from s3kg_core.store.store import Store
>>> store = Store(os.path.join(tempfile.mkdtemp(), "b.duckdb"))
>>> store_demo_bench(store) > 0
True
>>> is_precomputed({"precomputed": {"command": "s3kg bench pairs"}}), is_precomputed({})
(True, False)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputFormatError
from ..resources import package_path

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = [
    "BENCH_FILE",
    "BENCH_FORMAT",
    "PROVENANCE_KEYS",
    "is_precomputed",
    "read_bench_file",
    "store_demo_bench",
]

BENCH_FILE = package_path("s3kg_core", "demo_data", "bench_results.json")
"""The project's precomputed benchmark results, in the demo folder."""
BENCH_FORMAT = "s3kg-demo-bench-v1"
"""The ``format`` field of :data:`BENCH_FILE`."""
PROVENANCE_KEYS = ("note", "command", "generated_by", "s3kg_version", "created", "signature")
"""The file's fields copied into every stored row's ``detail["precomputed"]``."""


def read_bench_file(path: str | Path = BENCH_FILE) -> dict[str, Any]:
    """Read a demo benchmark file: ``{"format", "note", "command", ..., "rows": [...]}``.

    Each row holds the :data:`~s3kg_core.store.schema.BENCH_COLUMNS` of one stored benchmark
    result (``detail`` as a dict).

    Raises
    ------
    InputFormatError
        If the file cannot be read, is not JSON, not this format, or a row lacks a column.

    Examples
    --------
    >>> content = read_bench_file()
    >>> content["format"], len(content["rows"]) > 0
    ('s3kg-demo-bench-v1', True)
    """
    from ..store.schema import BENCH_COLUMNS

    path = Path(path)
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputFormatError(f"{path}: cannot read benchmark results ({exc})") from exc
    if not isinstance(content, dict) or content.get("format") != BENCH_FORMAT:
        raise InputFormatError(f"{path}: expected a JSON object with format {BENCH_FORMAT!r}")
    rows = content.get("rows")
    if not isinstance(rows, list):
        raise InputFormatError(f"{path}: expected a list of rows under 'rows'")
    for n, row in enumerate(rows, 1):
        if not isinstance(row, dict):
            raise InputFormatError(f"{path}: row {n} is not an object")
        missing = [c for c in BENCH_COLUMNS if c not in row]
        if missing:
            raise InputFormatError(f"{path}: row {n} lacks {missing}")
        if not isinstance(row["detail"], dict):
            raise InputFormatError(f"{path}: row {n}: detail must be an object")
    return content


def store_demo_bench(store: Store, path: str | Path = BENCH_FILE) -> int:
    """Store the precomputed benchmark rows of ``path`` in ``store``; return how many.

    A missing file stores nothing (returns 0). Every row's ``detail`` gets ``precomputed``:
    the file's :data:`PROVENANCE_KEYS`.

    Raises
    ------
    InputFormatError
        If the file exists but is malformed (:func:`read_bench_file`).
    """
    from ..store.schema import BENCH_COLUMNS

    path = Path(path)
    if not path.exists():
        return 0
    content = read_bench_file(path)
    provenance = {k: content[k] for k in PROVENANCE_KEYS if k in content}
    rows = []
    for row in content["rows"]:
        values = {**row, "detail": json.dumps({**row["detail"], "precomputed": provenance})}
        rows.append(tuple(values[c] for c in BENCH_COLUMNS))
    with store.transaction() as con:
        return store.put_bench_results(con, rows)


def is_precomputed(detail: Mapping[str, Any]) -> bool:
    """Whether a stored benchmark row's ``detail`` marks it as the project's precomputed one."""
    return isinstance(detail.get("precomputed"), Mapping)
