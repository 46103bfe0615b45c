"""What every bench script shares: the data folder, the load average, tables, evidence.

The scripts run from the repository root as modules (``python -m bench.speed.bench_scoring``),
so this checkout's ``s3kg_core``, ``bench`` and ``docsgen`` are the ones imported; none of
them edits ``sys.path``. The data folder is the library's
(:func:`s3kg_core.config.default_data_dir`: ``$S3KG_DATA_DIR``, else ``../shared/data``);
evidence is written through :mod:`docsgen.evidence`, the one home of its format.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from docsgen.base import md_table
from docsgen.evidence import (
    git_commit,
    machine,
    read_evidence,
    update_evidence,
    write_evidence,
)
from s3kg_core.config import default_data_dir

__all__ = [
    "REPO",
    "add_data_dir",
    "bench_environment",
    "default_data_dir",
    "git_commit",
    "load_average",
    "machine",
    "md_table",
    "print_load",
    "read_evidence",
    "text_table",
    "update_evidence",
    "write_evidence",
    "write_figures",
]

REPO = Path(__file__).resolve().parents[1]
"""The repository root (the folder the scripts run from)."""


def add_data_dir(parser: argparse.ArgumentParser, what: str = "the shared datasets") -> None:
    """Add ``--data-dir`` (default: ``$S3KG_DATA_DIR``, else ``../shared/data``) to ``parser``.

    The default is the library's :func:`~s3kg_core.config.default_data_dir`, taken when the
    parser is built (never at import); nothing is read, so a script's ``--help`` touches no data.
    """
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=default_data_dir(),
        help=f"folder holding {what} (default: $S3KG_DATA_DIR, else ../shared/data)",
    )


def load_average() -> str:
    """The 1, 5 and 15 minute load averages as one line, e.g. ``'0.52 0.40 0.33'``."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def print_load(when: str = "") -> str:
    """Print the load average (``load average before: 0.52 0.40 0.33``) and return it.

    Wall-clock figures are only comparable on an otherwise idle machine: every script prints
    this line before (and, when it runs long, after) what it times.
    """
    load = load_average()
    print(f"load average{' ' + when if when else ''}: {load}", flush=True)
    return load


def bench_environment(load_before: str) -> dict[str, Any]:
    """What a dashboard benchmark ran on: Python, Streamlit, CPUs, the load before and now."""
    import streamlit

    return {
        "python": platform.python_version(),
        "streamlit": streamlit.__version__,
        "cpus": os.cpu_count(),
        "load_before": load_before,
        "load_after": load_average(),
    }


def write_figures(path: Path | None, figures: dict[str, Any]) -> None:
    """Also write a benchmark's figures as plain JSON to ``path`` (nothing when ``None``)."""
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")


def text_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Collection[int] = (),
) -> str:
    """A plain-text table: columns two spaces apart, a dashed rule under the header.

    Columns are left-aligned, those whose index is in ``right`` right-aligned.

    Examples
    --------
    >>> print(text_table(["set", "pairs/s"], [["paws", "27.7"], ["all", "133.7"]], right={1}))
    set   pairs/s
    ----  -------
    paws     27.7
    all     133.7
    """
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths)] + [line(r) for r in cells])
