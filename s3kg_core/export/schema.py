"""The columns of ``s3kg export``: names, meanings and types, and reading an export back.

An export has one row per stored answer. Its columns come in groups: the ``base`` columns are
always there, followed by every extra column of the imported file (the user's own, under its
own name); ``--include`` adds ``metadata`` (the run's name, model and settings, what collect
stored of each answer), ``triples`` (the three KGs) and ``tau`` (TAU's explanation). Every
column has one pandas dtype, the same whichever format the file is in (:data:`EXPORT_COLUMNS`);
nested values (KGs, TAU's pairs, settings) are JSON text in every format, and the imported
file's extra columns are text. :func:`read_export` reads any
of the three formats back with those dtypes, so ``ext_id`` stays a string (``"0001"``) and
token counts stay integers with missing values.

CSV cannot tell an empty text from a missing one: both read back as missing.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError

__all__ = [
    "DEFAULT_INCLUDES",
    "EXPORT_COLUMNS",
    "EXPORT_FORMATS",
    "INCLUDES",
    "ExportColumn",
    "columns_help",
    "conform",
    "dumps",
    "extra_column_names",
    "json_records",
    "parse_include",
    "read_export",
    "tau_gold_categories",
]

EXPORT_FORMATS = ("csv", "parquet", "json")
"""The formats ``s3kg export`` writes (and :func:`read_export` reads)."""

INCLUDES = ("metadata", "triples", "tau")
"""The optional column groups, in the order they are written."""

DEFAULT_INCLUDES: dict[str, tuple[str, ...]] = {
    "csv": (),
    "parquet": INCLUDES,
    "json": INCLUDES,
}
"""The groups each format carries when ``--include`` is not given: all of them in Parquet and
JSON; none in CSV, which stays a flat table for spreadsheets (``run_model`` and ``model_id`` can
be a local model's path: shared CSVs name the run by its display name only, unless asked)."""


@dataclass(frozen=True)
class ExportColumn:
    """One column of the export: its group, pandas dtype and meaning."""

    name: str
    group: str
    dtype: str
    meaning: str


_TRIPLES = "JSON [[head, relation, tail], ...]; [] when empty, missing without a KG"

_COLUMNS = (
    # base: the 29 columns of every export
    ("dataset", "base", "str", "the dataset's name"),
    ("model", "base", "str", "the run's display name, as run_name"),
    ("temperature", "base", "float64", "the run's sampling temperature"),
    ("extractor", "base", "str", "the KG extractor of the run"),
    ("run_id", "base", "int64", "the run's id in the database"),
    ("item_id", "base", "int64", "the question's id in the database"),
    ("mode", "base", "str", "the S3KG mode of the scores: hybrid, paper, kgx or text"),
    ("alpha", "base", "float64", "the blend weight of the scores"),
    ("gold_s_wl", "base", "float64", "S_WL of the answer KG against the gold KG"),
    ("gold_s_sbert", "base", "float64", "S_SBERT of the answer KG against the gold KG"),
    ("gold_status", "base", "str", "ok, or why GoldSim is 0: answer_kg_empty, gold_kg_empty, ..."),
    ("ctx_s_wl", "base", "float64", "S_WL of the answer KG against the context KG"),
    ("ctx_s_sbert", "base", "float64", "S_SBERT of the answer KG against the context KG"),
    ("ctx_status", "base", "str", "ok, or why CtxSim is 0: answer_kg_empty, context_kg_empty, ..."),
    ("gold_sim", "base", "float64", "GoldSim at alpha"),
    ("ctx_sim", "base", "float64", "CtxSim at alpha"),
    ("cus", "base", "float64", "CUS: the harmonic mean of GoldSim and CtxSim"),
    ("ext_id", "base", "str", "the question's id in the imported file, always text"),
    ("question", "base", "str", "the question"),
    ("context", "base", "str", "the context"),
    ("gold_answer", "base", "str", "the gold answer"),
    ("answer", "base", "str", "the model's answer"),
    ("answer_status", "base", "str", "how collection went: ok, empty, refused, error"),
    ("answer_error", "base", "str", "the collection error, if any"),
    ("gold_kg_status", "base", "str", "the gold KG's extraction status, missing without a KG"),
    ("answer_kg_status", "base", "str", "the answer KG's extraction status"),
    ("context_kg_status", "base", "str", "the context KG's extraction status"),
    ("unscored_reason", "base", "str", "why the answer has no score, missing when it has one"),
    ("signature", "base", "str", "the signature of the scores, ending in the alpha of the row"),
    # metadata
    ("run_name", "metadata", "str", "the run's display name: --name, else the model's"),
    ("run_model", "metadata", "str", "the model the run was made with, a name or a path"),
    ("run_source", "metadata", "str", "what made the run: collect, table/FILE, ..."),
    ("run_settings", "metadata", "str", "the run's settings as JSON text"),
    ("seed", "metadata", "Int64", "the sampling seed of the answer"),
    ("latency_s", "metadata", "float64", "seconds the endpoint took to answer"),
    ("prompt_tokens", "metadata", "Int64", "prompt tokens the endpoint reported"),
    ("completion_tokens", "metadata", "Int64", "completion tokens the endpoint reported"),
    ("model_id", "metadata", "str", "the model id the endpoint said answered"),
    ("finish_reason", "metadata", "str", "why generation stopped; length: cut at --max-tokens"),
    ("truncated", "metadata", "boolean", "whether the context was cut to fit the prompt"),
    # triples
    ("gold_triples", "triples", "str", f"the gold KG: {_TRIPLES}"),
    ("answer_triples", "triples", "str", f"the answer KG: {_TRIPLES}"),
    ("context_triples", "triples", "str", f"the context KG: {_TRIPLES}"),
    # tau
    ("tau_target", "tau", "str", "the score TAU ranked by: cus, else gold_sim, else ctx_sim"),
    ("tau_aligned", "tau", "Int64", "TAU: gold triples the answer covers"),
    ("tau_relation_mismatch", "tau", "Int64", "TAU: pairs whose relation differs"),
    ("tau_entity_mismatch", "tau", "Int64", "TAU: pairs whose entity differs"),
    ("tau_roles_swapped", "tau", "Int64", "TAU: pairs whose head and tail are swapped"),
    ("tau_extra", "tau", "Int64", "TAU: answer triples with no counterpart"),
    ("tau_missing", "tau", "Int64", "TAU: gold triples the answer does not cover"),
    (
        "tau_gold",
        "tau",
        "str",
        'TAU\'s category per reference triple, JSON [{"gold": [h, r, t], "category": '
        'aligned, relation_mismatch, entity_mismatch, roles_swapped or missing, "answer": '
        '[h, r, t] or null, "similarity": cosine or null}, ...], labels normalised as TAU '
        "compared them",
    ),
    ("tau_extra_triples", "tau", "str", "TAU's extra answer triples, JSON [[h, r, t], ...]"),
)

EXPORT_COLUMNS: dict[str, ExportColumn] = {
    name: ExportColumn(name, group, dtype, meaning) for name, group, dtype, meaning in _COLUMNS
}
"""Every fixed column of the export, in the order written, by name. The imported file's extra
columns follow the ``base`` group's, as text (dtype ``str``)."""

_EXTRA_DTYPE = "str"
_TAU_CATEGORIES = ("aligned", "relation_mismatch", "entity_mismatch", "roles_swapped")


def parse_include(spec: str | None, fmt: str) -> tuple[str, ...]:
    """The groups of a ``--include`` value (``None``: the format's default), in write order.

    ``all`` names every group, ``none`` none.

    Raises
    ------
    ConfigError
        If ``fmt`` or a group is unknown.

    Examples
    --------
    >>> parse_include("tau, triples", "csv"), parse_include(None, "csv")
    (('triples', 'tau'), ())
    >>> parse_include("none", "json"), parse_include("all", "csv")
    ((), ('metadata', 'triples', 'tau'))
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"format must be {', '.join(EXPORT_FORMATS)}; got {fmt!r}")
    if spec is None:
        return DEFAULT_INCLUDES[fmt]
    words = {w.strip() for w in spec.split(",") if w.strip()}
    if words == {"all"}:
        return INCLUDES
    if words in ({"none"}, set()):
        return ()
    unknown = sorted(words - set(INCLUDES))
    if unknown:
        raise ConfigError(
            f"--include takes {', '.join(INCLUDES)} (comma-separated), all or none; got "
            f"{', '.join(unknown)}"
        )
    return tuple(g for g in INCLUDES if g in words)


def extra_column_names(names: Iterable[str], taken: Iterable[str]) -> dict[str, str]:
    """The export's column name of each extra column: its own, ``input_<name>`` on a clash.

    Examples
    --------
    >>> extra_column_names(["answer_kind", "cus", "input_cus"], ["cus", "model"])
    {'answer_kind': 'answer_kind', 'cus': 'input_input_cus', 'input_cus': 'input_cus'}
    """
    names = list(names)
    clashes = set(taken)
    used = clashes | set(names)
    out: dict[str, str] = {}
    for name in names:
        renamed = name
        if name in clashes:
            renamed = f"input_{name}"
            while renamed in used:
                renamed = f"input_{renamed}"
            used.add(renamed)
        out[name] = renamed
    return out


def tau_gold_categories(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """TAU's category of each reference triple, from a stored result (``TauResult.to_dict``).

    Aligned pairs first, then relation and entity mismatches, roles swapped, then missing
    triples. A result stored before roles swapped was a category of its own has them as
    entity mismatches: pass it through ``TauResult.from_dict(...).to_dict()`` first.

    Examples
    --------
    >>> tau_gold_categories({"aligned": [{"gold": ["a", "r", "b"], "answer": ["a", "r", "b"],
    ...                                   "similarity": 1.0}], "missing": [["c", "r", "d"]]})
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'gold': ['a', 'r', 'b'], 'category': 'aligned', 'answer': ['a', 'r', 'b'],
      'similarity': 1.0},
     {'gold': ['c', 'r', 'd'], 'category': 'missing', 'answer': None, 'similarity': None}]
    """
    out = [
        {
            "gold": list(pair["gold"]),
            "category": category,
            "answer": list(pair["answer"]),
            "similarity": float(pair["similarity"]),
        }
        for category in _TAU_CATEGORIES
        for pair in result.get(category, ())
    ]
    out += [
        {"gold": list(t), "category": "missing", "answer": None, "similarity": None}
        for t in result.get("missing", ())
    ]
    return out


def _dtype(column: str) -> str:
    known = EXPORT_COLUMNS.get(column)
    return known.dtype if known is not None else _EXTRA_DTYPE


def conform(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every column in its export dtype (extra columns as text).

    Examples
    --------
    >>> f = conform(pd.DataFrame({"ext_id": [1], "prompt_tokens": [None], "kind": ["x"]}))
    >>> [str(t) for t in f.dtypes], f["ext_id"].tolist()
    (['str', 'Int64', 'str'], ['1'])
    """
    out = frame.copy()
    for column in out.columns:
        dtype = _dtype(column)
        if dtype == "str":  # keep missing values missing (astype(str) on object would not)
            values = out[column].astype(object)
            out[column] = pd.Series(
                [None if _missing(v) else str(v) for v in values], index=out.index, dtype="str"
            )
        else:
            out[column] = out[column].astype(dtype)
    return out


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value) or value is pd.NA


def read_export(path: str | Path, fmt: str | None = None) -> pd.DataFrame:
    r"""Read an export back with its dtypes (:data:`EXPORT_COLUMNS`), whatever its format.

    ``fmt`` defaults to the file's suffix. CSV is read with only empty cells missing (a
    question "NA" stays "NA"), JSON with exact floats.

    Raises
    ------
    ConfigError
        If the format is not csv, parquet or json.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "r.csv"
    >>> _ = path.write_text("ext_id,prompt_tokens,answer\n0001,,NA\n")
    >>> read_export(path).to_dict("records")
    [{'ext_id': '0001', 'prompt_tokens': None, 'answer': 'NA'}]
    """
    path = Path(path)
    fmt = fmt or path.suffix.lower().lstrip(".")
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"format must be {', '.join(EXPORT_FORMATS)}; got {fmt!r}")
    if fmt == "csv":
        frame = pd.read_csv(
            path,
            dtype={str(c): _dtype(str(c)) for c in pd.read_csv(path, nrows=0).columns},
            keep_default_na=False,
            na_values=[""],
        )
    elif fmt == "parquet":
        frame = pd.read_parquet(path)
    else:
        frame = pd.read_json(path, orient="records", dtype=False, precise_float=True)
    return conform(frame)


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of ``frame`` as JSON-ready dicts: missing values ``None``, numbers exact."""
    columns = list(frame.columns)
    out = []
    for row in frame.astype(object).itertuples(index=False, name=None):
        out.append(
            {c: (None if _missing(v) else _plain(v)) for c, v in zip(columns, row, strict=True)}
        )
    return out


def _plain(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    return value


def columns_help(groups: Sequence[str] = ("base", *INCLUDES)) -> str:
    r"""The export's columns, group by group, one a line, for ``--help``.

    Each group is a paragraph that starts with ``\b``: click keeps its lines as written.
    """
    paragraphs = []
    for group in groups:
        lines = ["\b", f"{group}:"]
        for c in EXPORT_COLUMNS.values():
            if c.group == group:
                lines += textwrap.wrap(
                    f"{c.name} [{c.dtype}]: {c.meaning}",
                    width=76,
                    initial_indent="  ",
                    subsequent_indent="      ",
                )
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def dumps(value: Any) -> str:
    """``value`` as compact JSON text, non-ASCII kept (the encoding of nested columns)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
