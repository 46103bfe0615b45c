"""The target LLM's hidden states for each statement, the judge's input features.

Each statement is fed as the labelling prompt (:mod:`.prompts`, chat template applied, ending
where the model's answer starts) through ``AutoModelForCausalLM(output_hidden_states=True)``
via :class:`.models.PromptRunner`. Layer 0 is the embedding output, layer ``i`` the output of
block ``i`` (transformers' ``hidden_states`` tuple; SmolLM2-135M has layers 0..30). Pooling:

* ``last``: the hidden state of the last real token (the one that predicts the answer),
  found from the attention mask, so left and right padding give the same vector;
* ``mean``: the mean over the real tokens after the shared prompt prefix (the statement and
  the end of the prompt; the prefix, the same for every statement, is cached and left out).

Storage (:func:`hidden_table`, :func:`write_hidden`, :func:`read_hidden`): Parquet, one row per
statement, a ``statement_id`` column and one ``list<float32>`` column per pooling and layer,
named ``last_L<i>`` / ``mean_L<i>``. A path may be one file or a folder of Parquet files (what
the Ray job writes); reading one layer reads only that column.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import FactualityError, InputFormatError
from ..progress import Progress

__all__ = [
    "POOLINGS",
    "HiddenStateExtractor",
    "column_name",
    "hidden_layers",
    "hidden_table",
    "read_hidden",
    "write_hidden",
]

POOLINGS = ("last", "mean")
"""Pooling methods over a statement's tokens."""

_COLUMN = re.compile(r"^(last|mean)_L(\d+)$")


def column_name(pooling: str, layer: int) -> str:
    """The Parquet column of one pooling and layer.

    Examples
    --------
    >>> column_name("last", 12)
    'last_L12'
    """
    return f"{pooling}_L{layer}"


class HiddenStateExtractor:
    """Reads hidden states of statements from a local causal LM, in padded batches.

    Parameters
    ----------
    model
        ``"smollm2"`` or a local model folder.
    layers
        Which layers to keep (``None``: all, 0..num_hidden_layers).
    pooling
        Any of :data:`POOLINGS`.
    batch_size
        Statements per forward pass.
    input_format, padding_side, max_length
        See :class:`.models.PromptRunner`.

    Examples
    --------
    >>> ex = HiddenStateExtractor("smollm2", layers=[12])  # doctest: +SKIP
    >>> ex.extract(["Apple controls Beats."])["last"].shape  # doctest: +SKIP
    (1, 1, 576)
    """

    def __init__(
        self,
        model: str | Path = "smollm2",
        *,
        layers: Sequence[int] | None = None,
        pooling: Sequence[str] = ("last",),
        batch_size: int = 16,
        input_format: str = "prompt",
        padding_side: str = "right",
        max_length: int = 256,
    ) -> None:
        from .models import PromptRunner

        if batch_size < 1:
            raise FactualityError(f"batch_size must be >= 1; got {batch_size}")
        bad = [p for p in pooling if p not in POOLINGS]
        if bad or not pooling:
            raise FactualityError(f"pooling must be among {', '.join(POOLINGS)}; got {pooling!r}")
        self.runner = PromptRunner(
            model, input_format=input_format, padding_side=padding_side, max_length=max_length
        )
        n = self.runner.n_layers
        chosen = list(range(n)) if layers is None else [int(x) for x in layers]
        out_of_range = [x for x in chosen if not 0 <= x < n]
        if out_of_range or not chosen:
            raise FactualityError(
                f"layers must be in 0..{n - 1} for this model; got {out_of_range or chosen}"
            )
        self.layers = chosen
        self.pooling = tuple(dict.fromkeys(pooling))
        self.batch_size = batch_size

    @property
    def hidden_size(self) -> int:
        """The width of one layer's vector."""
        return self.runner.hidden_size

    def extract(
        self,
        statements: Sequence[str],
        progress: Progress | None = None,
    ) -> dict[str, np.ndarray]:
        """Pooled hidden states, one float32 array (n, len(layers), hidden) per pooling."""
        n = len(statements)
        out = {
            p: np.zeros((n, len(self.layers), self.hidden_size), dtype=np.float32)
            for p in self.pooling
        }
        for start in range(0, n, self.batch_size):
            chunk = list(statements[start : start + self.batch_size])
            result = self.runner.run(chunk)
            rows = np.arange(len(chunk))
            mask = result.mask.unsqueeze(-1).float()
            for j, layer in enumerate(self.layers):
                states = result.hidden_states[layer]
                if "last" in out:
                    out["last"][start + rows, j] = states[rows, result.last].numpy()
                if "mean" in out:
                    mean = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
                    out["mean"][start + rows, j] = mean.numpy()
            if progress is not None:
                progress(start + len(chunk), n)
        return out


def hidden_table(
    statement_ids: Sequence[str], features: dict[str, np.ndarray], layers: Sequence[int]
) -> pa.Table:
    """The Parquet layout of extracted features (see the module docstring).

    Examples
    --------
    >>> t = hidden_table(["a"], {"last": np.ones((1, 2, 3), np.float32)}, [0, 5])
    >>> t.column_names
    ['statement_id', 'last_L0', 'last_L5']
    """
    columns: dict[str, pa.Array] = {"statement_id": pa.array(list(statement_ids), pa.string())}
    for pooling, array in features.items():
        if array.shape[:2] != (len(statement_ids), len(layers)):
            raise FactualityError(
                f"{pooling} features have shape {array.shape}; expected "
                f"({len(statement_ids)}, {len(layers)}, hidden)"
            )
        width = array.shape[2]
        for j, layer in enumerate(layers):
            flat = pa.array(np.ascontiguousarray(array[:, j, :], dtype=np.float32).ravel())
            offsets = pa.array(
                np.arange(0, (len(statement_ids) + 1) * width, width, dtype=np.int32)
            )
            columns[column_name(pooling, layer)] = pa.ListArray.from_arrays(offsets, flat)
    return pa.table(columns)


def write_hidden(table: pa.Table, path: str | Path) -> Path:
    """Write a hidden-state table as one Parquet file (atomically)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    tmp.replace(path)
    return path


def _schema(path: Path) -> pa.Schema:
    if not path.exists():
        raise InputFormatError(
            f"hidden states {path} not found (extract them with `s3kg factuality hidden`)"
        )
    try:
        return pq.read_schema(path) if path.is_file() else pq.ParquetDataset(path).schema
    except (OSError, pa.ArrowException) as exc:
        raise InputFormatError(f"cannot read {path} as Parquet: {exc}") from exc


def hidden_layers(path: str | Path, pooling: str = "last") -> list[int]:
    """The layers stored in a hidden-state file or folder for ``pooling``, ascending."""
    found = []
    for name in _schema(Path(path)).names:
        match = _COLUMN.match(name)
        if match and match.group(1) == pooling:
            found.append(int(match.group(2)))
    return sorted(found)


def read_hidden(
    path: str | Path, layer: int, pooling: str = "last"
) -> tuple[list[str], np.ndarray]:
    """The statement ids and the (n, hidden) float32 features of one layer.

    Raises
    ------
    InputFormatError
        If the file is missing or unreadable, or lacks that layer and pooling (the message
        lists what it has).

    Examples
    --------
    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "h.parquet")
    >>> _ = write_hidden(hidden_table(["a", "b"], {"last": np.ones((2, 1, 3), np.float32)}, [4]), p)
    >>> ids, x = read_hidden(p, 4)
    >>> ids, x.shape, x.dtype
    (['a', 'b'], (2, 3), dtype('float32'))
    """
    path = Path(path)
    name = column_name(pooling, layer)
    schema = _schema(path)
    if name not in schema.names or "statement_id" not in schema.names:
        layers = hidden_layers(path, pooling)
        raise InputFormatError(
            f"{path} has no {pooling}-pooled layer {layer} (it has {pooling} layers "
            f"{layers or 'none'})"
        )
    table = pq.read_table(path, columns=["statement_id", name])
    column = table.column(name).combine_chunks()
    values = column.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    n = len(table)
    features = values.reshape(n, -1) if n else np.zeros((0, 0), dtype=np.float32)
    return [str(x) for x in table.column("statement_id").to_pylist()], features
