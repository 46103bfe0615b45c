"""Hidden-state extraction and judging as Ray Data batch jobs, writing Parquet.

Each job is ``from_pandas`` / ``read_parquet`` -> ``map_batches`` with a callable class (so
every worker loads the model or the judge once, in its constructor; a fixed pool of
``workers`` actors, one CPU and one torch thread each) -> ``write_parquet``.
``address="local"`` starts a local Ray cluster for the job (and stops it after); any other
address is passed to ``ray.init(address=...)`` (a running cluster, e.g.
``ray://head:10001`` or ``auto``). A Ray session already started by the caller is used as is.

The output folder holds Parquet files in the layouts of :mod:`.hidden` (hidden states) and
:data:`JUDGMENT_COLUMNS` (judgments); rows are matched by ``statement_id``, not by order.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ..errors import FactualityError
from ..stages.ray_cluster import ray_cluster
from .hidden import column_name, hidden_table

__all__ = [
    "JUDGMENT_COLUMNS",
    "HiddenStateMapper",
    "JudgeMapper",
    "RayJobReport",
    "extract_hidden_ray",
    "judge_ray",
    "ray_session",
]

JUDGMENT_COLUMNS = ("statement_id", "judge_label", "p_true", "p_false", "p_idk")
"""Columns of a judging job's output."""


@contextmanager
def ray_session(address: str = "local", workers: int = 1) -> Iterator[Any]:
    """A Ray session for one job: started here (and stopped after) unless one is running.

    A local cluster gets ``workers + 1`` logical CPUs: one per worker, one for Ray Data's
    read and write tasks.

    Raises
    ------
    FactualityError
        If ray is not installed or the cluster cannot be started or reached.

    Examples
    --------
    >>> with ray_session(workers=1) as ray:  # doctest: +SKIP
    ...     ray.cluster_resources()["CPU"]
    2.0
    """
    with ray_cluster(
        address,
        num_cpus=workers + 1,
        error=FactualityError,
        install_hint="pip install 'ray[data]==2.*'",
    ) as ray:
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False
        yield ray


class HiddenStateMapper:
    """A Ray Data worker: loads the model once, turns statement batches into feature rows."""

    def __init__(
        self,
        model: str,
        layers: Sequence[int] | None,
        pooling: Sequence[str],
        batch_size: int,
        input_format: str,
        threads: int = 1,
    ) -> None:
        import torch

        # One CPU per worker: torch's default of one thread per core makes workers fight.
        torch.set_num_threads(threads)
        from .hidden import HiddenStateExtractor

        self.extractor = HiddenStateExtractor(
            model,
            layers=layers,
            pooling=pooling,
            batch_size=batch_size,
            input_format=input_format,
        )

    def __call__(self, batch: pd.DataFrame) -> pa.Table:
        """Feature rows (the layout of :func:`.hidden.hidden_table`) for one batch."""
        texts = [str(s) for s in batch["statement"]]
        features = self.extractor.extract(texts)
        return hidden_table(
            [str(s) for s in batch["statement_id"]], features, self.extractor.layers
        )


class JudgeMapper:
    """A Ray Data worker: loads a saved judge once, judges batches of feature rows."""

    def __init__(self, judge_dir: str, threads: int = 1) -> None:
        import torch

        torch.set_num_threads(threads)
        from .judge import Judge

        self.judge = Judge.load(judge_dir)
        config = self.judge.config
        self.column = column_name(config.pooling, int(config.layer or 0))

    def __call__(self, batch: pd.DataFrame) -> pd.DataFrame:
        """Judgments (:data:`JUDGMENT_COLUMNS`) for one batch."""
        import numpy as np

        from .labels import LABELS

        x = np.stack([np.asarray(v, dtype=np.float32) for v in batch[self.column]])
        probs = self.judge.predict_proba(x)
        return pd.DataFrame(
            {
                "statement_id": batch["statement_id"].astype(str).to_numpy(),
                "judge_label": [LABELS[i] for i in probs.argmax(axis=1)],
                "p_true": probs[:, 0],
                "p_false": probs[:, 1],
                "p_idk": probs[:, 2],
            }
        )


@dataclass(frozen=True)
class RayJobReport:
    """What a Ray job did: rows, wall time of the job (Ray start-up excluded), workers."""

    rows: int
    seconds: float
    workers: int
    out: str

    @property
    def rows_per_second(self) -> float:
        """Throughput of the whole job."""
        return self.rows / self.seconds if self.seconds > 0 else float("nan")

    @property
    def rows_per_second_per_worker(self) -> float:
        """Throughput divided by the number of workers."""
        return self.rows_per_second / self.workers

    def summary(self) -> str:
        """One line for the CLI.

        Examples
        --------
        >>> RayJobReport(100, 10.0, 2, "out").summary()
        '100 rows in 10.0s with 2 workers (10.0/s, 5.00/s per worker) -> out'
        """
        return (
            f"{self.rows} rows in {self.seconds:.1f}s with {self.workers} workers "
            f"({self.rows_per_second:.1f}/s, {self.rows_per_second_per_worker:.2f}/s per "
            f"worker) -> {self.out}"
        )


def _fresh(out: Path) -> None:
    if out.exists():
        if out.is_file() or any(p.suffix != ".parquet" for p in out.iterdir() if p.is_file()):
            raise FactualityError(
                f"{out} exists and is not a folder of Parquet files; choose another --out"
            )
        shutil.rmtree(out)


def extract_hidden_ray(
    statements: pd.DataFrame,
    out: str | Path,
    *,
    model: str | Path = "smollm2",
    layers: Sequence[int] | None = None,
    pooling: Sequence[str] = ("last",),
    workers: int = 1,
    address: str = "local",
    batch_size: int = 16,
    input_format: str = "prompt",
) -> RayJobReport:
    """Hidden states of every statement with ``workers`` Ray Data workers, into ``out``/.

    The statements are cut into ``4 * workers`` blocks or more (so every worker gets work);
    each worker runs :class:`HiddenStateMapper`. An existing ``out`` folder of Parquet files
    is replaced.

    Raises
    ------
    FactualityError
        If ``workers`` < 1, the table lacks ``statement_id``/``statement``, or Ray fails.

    Examples
    --------
    >>> extract_hidden_ray(statements, "bench/out/hidden", workers=2)  # doctest: +SKIP
    """
    if workers < 1:
        raise FactualityError(f"workers must be >= 1; got {workers}")
    missing = [c for c in ("statement_id", "statement") if c not in statements.columns]
    if missing:
        raise FactualityError(f"the statements table lacks {', '.join(missing)}")
    out = Path(out)
    _fresh(out)
    model_dir = str(model)
    if str(model).lower() == "smollm2":
        from .models import resolve_model_dir

        model_dir = str(resolve_model_dir(model))  # convert once, before the workers start
    frame = statements[["statement_id", "statement"]].reset_index(drop=True)
    n_blocks = max(1, min(len(frame), max(4 * workers, -(-len(frame) // (batch_size * 4)))))
    chunks = [frame.iloc[i::n_blocks] for i in range(n_blocks)]
    chunks = [c for c in chunks if len(c)]
    with ray_session(address, workers) as ray:
        started = time.perf_counter()
        ds = ray.data.from_pandas(chunks)
        ds = ds.map_batches(
            HiddenStateMapper,
            fn_constructor_kwargs={
                "model": model_dir,
                "layers": list(layers) if layers is not None else None,
                "pooling": list(pooling),
                "batch_size": batch_size,
                "input_format": input_format,
            },
            batch_size=batch_size,
            batch_format="pandas",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
        )
        ds.write_parquet(str(out))
        seconds = time.perf_counter() - started
    return RayJobReport(rows=len(frame), seconds=seconds, workers=workers, out=str(out))


def judge_ray(
    hidden: str | Path,
    judge_dir: str | Path,
    out: str | Path,
    *,
    workers: int = 1,
    address: str = "local",
    batch_size: int = 256,
) -> RayJobReport:
    """Judge every row of a hidden-state file or folder with ``workers`` Ray Data workers.

    Reads only the judge's layer column; writes :data:`JUDGMENT_COLUMNS` into ``out``/.

    Raises
    ------
    FactualityError
        If the inputs are missing or Ray fails.

    Examples
    --------
    >>> judge_ray("bench/out/hidden", "bench/out/judge", "bench/out/judged")  # doctest: +SKIP
    """
    from .judge import Judge

    if workers < 1:
        raise FactualityError(f"workers must be >= 1; got {workers}")
    hidden = Path(hidden)
    if not hidden.exists():
        raise FactualityError(f"hidden states {hidden} not found")
    config = Judge.load(judge_dir).config
    column = column_name(config.pooling, int(config.layer or 0))
    out = Path(out)
    _fresh(out)
    with ray_session(address, workers) as ray:
        started = time.perf_counter()
        ds = ray.data.read_parquet(str(hidden)).select_columns(["statement_id", column])
        rows = ds.count()
        ds = ds.map_batches(
            JudgeMapper,
            fn_constructor_kwargs={"judge_dir": str(Path(judge_dir).resolve())},
            batch_size=batch_size,
            batch_format="pandas",
            compute=ray.data.ActorPoolStrategy(size=workers),
            num_cpus=1,
        )
        ds.write_parquet(str(out))
        seconds = time.perf_counter() - started
    return RayJobReport(rows=int(rows), seconds=seconds, workers=workers, out=str(out))
