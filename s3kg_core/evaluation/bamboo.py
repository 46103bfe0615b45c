"""BAMBOO: how well a KG score of two meaning graphs (AMR) agrees with human similarity.

BAMBOO (Opitz, Daza, Frank, "Weisfeiler-Leman in the Bamboo", TACL 9, 2021) pairs AMR graphs of
three sentence-pair sets, STS (STSb), SICK and PARA (MSRP), in four tasks: ``main`` (the graphs
of the pair), ``reify`` (some relations reified into nodes), ``syno`` (some concepts replaced by
synonyms) and ``role_confusion`` (two roles swapped). The shared data folder holds it as
``bamboo/<dataset>/<task>/{src,tgt}.<split>.amr`` with ``<dataset>/<split>.y`` and
``<dataset>/orig.<split>.txt``; :func:`load_bamboo` reads a split, converting every graph with
:func:`s3kg_core.amr.amr_to_triples`, and :func:`run_bamboo` scores it with one
:class:`~s3kg_core.scoring.s3kg.KGScorer`.

The protocol is the benchmark's own (``evaluation-suite/evaluate4tasks.py`` of
``flipz357/bamboo-amr-benchmark``):

- ``main``, ``reify``, ``syno``: Pearson's r x100 between the scores and the human scores of
  the dataset (``<dataset>/<split>.y``, the same file for the three tasks). The pairs are the
  data rows of ``orig.<split>.txt``: SICK and PARA have a header row, so the first graph of
  their files (and the first ``.y`` value) is a placeholder and is skipped, and every file ends
  with one more placeholder graph (``Empty line``), which is no pair either. So the pairs are
  graphs ``h .. h + N - 1``, with N the data rows of ``orig.<split>.txt`` and h = 1 for SICK and
  PARA, 0 for STS. (The ``.y`` values are the ``orig`` scores min-max scaled to [0, 1], as the
  benchmark scales them; Pearson's r does not see the scaling.)
- ``role_confusion``: every graph pair, read as consecutive pairs of pairs. Pair ``2k`` has
  two roles swapped in one of its graphs, pair ``2k + 1`` is the original pair; the other
  graph is the same in both. The swapped graph is the source or the target, about half the
  time each (dev: the two sources are identical in 34 of 53 STS, 13 of 25 SICK and 161 of 338
  PARA cases, so there the target is the swapped one). The original pair must score
  **strictly** higher (a tie counts as wrong). The ``.y`` values are not used. The figure is
  the accuracy over the pairs of pairs, x100.
- The 12 figures (STS, SICK, PARA for main, reify, syno, role_confusion, in that order) are
  averaged arithmetically. A figure whose files are missing (``para/reify/*.train.amr`` here)
  is reported as not available, and the mean is then that of the others (the result says how
  many).

KG 1 (the reference, which drives S3KG's matching) is the ``src`` graph, KG 2 the ``tgt`` graph.
A mode that uses the texts (``text``) gets the ``# ::snt`` sentences, so its figures are not
those of a graph-only metric.

References
----------
.. [1] J. Opitz, A. Daza, A. Frank, "Weisfeiler-Leman in the Bamboo: Novel AMR Graph Metrics and
   a Benchmark for AMR Graph Similarity", TACL 9 (2021) 1425-1441.
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..amr import AMRGraph, read_penman_pairs
from ..config import default_data_dir
from ..encoders.base import Encoder
from ..errors import ConfigError, InputFormatError
from ..kg import Triple
from ..limits import open_input
from ..progress import StageProgress
from ..scoring.s3kg import KGScorer, S3KGConfig
from ..scoring.signature import Signature

__all__ = [
    "BAMBOO_SUBDIR",
    "COMPONENTS",
    "DATASETS",
    "FIGURES",
    "HEADER_ROWS",
    "SPLITS",
    "TASKS",
    "BambooFigure",
    "BambooResult",
    "BambooSplit",
    "BambooTask",
    "bamboo_mean",
    "load_bamboo",
    "pearson_x100",
    "role_confusion_accuracy_x100",
    "run_bamboo",
    "task_figure",
]

BAMBOO_SUBDIR = Path("bamboo")
"""Where BAMBOO lies under the data folder."""

DATASETS = ("sts", "sick", "para")
TASKS = ("main", "reify", "syno", "role_confusion")
SPLITS = ("train", "dev", "test")
FIGURES: tuple[tuple[str, str], ...] = tuple((d, t) for t in TASKS for d in DATASETS)
"""The 12 figures, in the benchmark's order: STS, SICK, PARA of main, then reify, syno, role."""

HEADER_ROWS = {"sts": 0, "sick": 1, "para": 1}
"""Header rows of ``orig.<split>.txt``: as many placeholder graphs open the AMR files."""

COMPONENTS = ("s3kg", "s_wl", "s_sbert")
"""The scores each figure is computed for: the blend at the scorer's alpha, and each side."""

_LABELS = {"sts": "STS", "sick": "SICK", "para": "PARA"}
_COMPONENT_LABELS = {"s3kg": "S3KG", "s_wl": "S_WL", "s_sbert": "S_SBERT"}


# -- the protocol ---------------------------------------------------------------------------------


def pearson_x100(scores: npt.ArrayLike, human: npt.ArrayLike) -> float | None:
    """Pearson's r between a metric's scores and the human scores, x100.

    Returns
    -------
    float or None
        ``None`` when r is undefined (fewer than two pairs, or constant scores on either side).

    Raises
    ------
    InputFormatError
        If the two have different lengths or a score is not finite.

    Examples
    --------
    >>> pearson_x100([0.1, 0.2, 0.3, 0.4], [1.0, 2.0, 3.0, 4.0])
    100.0
    >>> round(pearson_x100([1, 2, 3, 4], [1, 3, 2, 4]), 6)
    80.0
    >>> pearson_x100([0.5, 0.5, 0.5], [1, 2, 3]) is None
    True
    """
    from scipy.stats import pearsonr

    x = np.asarray(scores, dtype=np.float64)
    y = np.asarray(human, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise InputFormatError(f"{x.size} scores for {y.size} human scores: one per pair needed")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputFormatError("scores and human scores must be finite numbers")
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(pearsonr(x, y)[0]) * 100.0


def role_confusion_accuracy_x100(scores: npt.ArrayLike) -> float:
    """The share of pairs of pairs in which the original scores strictly higher, x100.

    ``scores`` are in file order: pair ``2k`` holds the graph with two roles swapped (its
    source or its target), pair ``2k + 1`` the original; a tie counts as wrong.

    Raises
    ------
    InputFormatError
        If there is no pair of pairs, their count is odd, or a score is not finite.

    Examples
    --------
    >>> role_confusion_accuracy_x100([0.4, 0.9, 0.7, 0.6])  # right, then wrong
    50.0
    >>> role_confusion_accuracy_x100([0.5, 0.5])  # a tie is wrong
    0.0
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or s.size % 2:
        raise InputFormatError(
            f"role confusion needs pairs of pairs (an even, non-zero count); got {s.size} scores"
        )
    if not np.isfinite(s).all():
        raise InputFormatError("scores must be finite numbers")
    return float(np.mean(s[1::2] > s[0::2])) * 100.0


def task_figure(task: str, scores: npt.ArrayLike, human: npt.ArrayLike = ()) -> float | None:
    """The figure of one task: Pearson x100 (main, reify, syno) or role accuracy x100.

    Examples
    --------
    >>> round(task_figure("main", [0.2, 0.4, 0.6], [0.0, 0.5, 1.0]), 6)
    100.0
    >>> task_figure("role_confusion", [0.1, 0.2])
    100.0
    """
    if task == "role_confusion":
        return role_confusion_accuracy_x100(scores)
    if task in TASKS:
        return pearson_x100(scores, human)
    raise ConfigError(f"task must be one of {', '.join(TASKS)}; got {task!r}")


def bamboo_mean(figures: Sequence[float | None]) -> float | None:
    """The arithmetic mean of the available figures (``None`` when none is).

    Examples
    --------
    >>> bamboo_mean([60.0, 70.0, None])
    65.0
    >>> bamboo_mean([None]) is None
    True
    """
    values = [f for f in figures if f is not None and math.isfinite(f)]
    return float(np.mean(values)) if values else None


# -- the data -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BambooTask:
    """The graph pairs of one dataset and task of a BAMBOO split, as KGs.

    Attributes
    ----------
    dataset, task, split
        E.g. ``"sick"``, ``"reify"``, ``"dev"``.
    ids
        The ``# ::id`` of each source graph (else its index in the file).
    kg_1, kg_2
        The source and target graphs' triples (:func:`s3kg_core.amr.amr_to_triples`).
    text_1, text_2
        Their ``# ::snt`` sentences (``None`` where a graph has none).
    human
        The human scores of the pairs (main, reify, syno); empty for role_confusion.
    missing
        Why the task is not available (a file is missing), else ``""``.
    """

    dataset: str
    task: str
    split: str
    ids: tuple[str, ...] = ()
    kg_1: tuple[tuple[Triple, ...], ...] = field(default=(), repr=False)
    kg_2: tuple[tuple[Triple, ...], ...] = field(default=(), repr=False)
    text_1: tuple[str | None, ...] = field(default=(), repr=False)
    text_2: tuple[str | None, ...] = field(default=(), repr=False)
    human: tuple[float, ...] = field(default=(), repr=False)
    missing: str = ""

    @property
    def name(self) -> str:
        """``"<dataset>/<task>"``."""
        return f"{self.dataset}/{self.task}"

    @property
    def available(self) -> bool:
        """Whether the task's files were there."""
        return not self.missing

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class BambooSplit:
    """The 12 tasks of one BAMBOO split (:data:`FIGURES` order), some perhaps not available."""

    split: str
    root: str
    tasks: tuple[BambooTask, ...]

    def task(self, dataset: str, task: str) -> BambooTask:
        """The task of ``dataset`` and ``task``.

        Raises
        ------
        ConfigError
            If there is no such task.
        """
        for t in self.tasks:
            if t.dataset == dataset and t.task == task:
                return t
        raise ConfigError(f"no task {dataset}/{task}; datasets {DATASETS}, tasks {TASKS}")

    @property
    def pairs(self) -> int:
        """Graph pairs over the available tasks."""
        return sum(len(t) for t in self.tasks)


def _lines(path: Path) -> Iterator[str]:
    """The lines of a BAMBOO file, a line at a time, past the input cap refused before reading."""
    with open_input(path, "a BAMBOO file", "use BAMBOO's own files") as fh:
        for line in io.TextIOWrapper(fh, encoding="utf-8", errors="replace"):
            yield line.rstrip("\n")


def _read_scores(path: Path) -> list[float]:
    values: list[float] = []
    where = f"{path.parent.name}/{path.name}"
    for number, line in enumerate(_lines(path), start=1):
        if not line.strip():
            continue
        try:
            value = float(line)
        except ValueError as exc:
            raise InputFormatError(
                f"{where}, line {number}: not a number: {line.strip()[:40]!r}"
            ) from exc
        if not math.isfinite(value):  # read now, not met by Pearson's r after the scoring
            raise InputFormatError(
                f"{where}, line {number}: not a finite number: {line.strip()[:40]!r}"
            )
        values.append(value)
    return values


def _data_rows(path: Path, header: int) -> int:
    return max(0, sum(1 for line in _lines(path) if line.strip()) - header)


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:  # pragma: no cover - every path here is below root
        return str(path)


def _task(
    root: Path, dataset: str, task: str, split: str, rows: tuple[int, list[float]] | str
) -> BambooTask:
    files = [root / dataset / task / f"{side}.{split}.amr" for side in ("src", "tgt")]
    absent = [_relative(p, root) for p in files if not p.is_file()]
    if absent:
        return BambooTask(dataset, task, split, missing=f"{', '.join(absent)} missing")
    if task != "role_confusion" and isinstance(rows, str):
        return BambooTask(dataset, task, split, missing=rows)
    pairs: Sequence[tuple[AMRGraph, AMRGraph]] = read_penman_pairs(*files)
    human: list[float] = []
    if task == "role_confusion":
        if len(pairs) % 2:
            raise InputFormatError(
                f"{_relative(files[0], root)}: {len(pairs)} graphs; role confusion needs pairs "
                "of pairs (an even count)"
            )
    elif not isinstance(rows, str):
        n, scores = rows
        start = HEADER_ROWS[dataset]
        if len(pairs) < start + n:
            raise InputFormatError(
                f"{_relative(files[0], root)}: {len(pairs)} graphs, fewer than the {start} "
                f"placeholder(s) and {n} rows of {dataset}/orig.{split}.txt"
            )
        if len(scores) < start + n:
            raise InputFormatError(
                f"{dataset}/{split}.y: {len(scores)} values, fewer than the {start} "
                f"placeholder(s) and {n} rows of {dataset}/orig.{split}.txt"
            )
        pairs = pairs[start : start + n]
        human = scores[start : start + n]
    return BambooTask(
        dataset,
        task,
        split,
        ids=tuple(a.id for a, _ in pairs),
        kg_1=tuple(tuple(a.triples()) for a, _ in pairs),
        kg_2=tuple(tuple(b.triples()) for _, b in pairs),
        text_1=tuple(a.sentence for a, _ in pairs),
        text_2=tuple(b.sentence for _, b in pairs),
        human=tuple(human),
    )


def load_bamboo(split: str = "dev", data_dir: str | Path | None = None) -> BambooSplit:
    """Read one BAMBOO split: the 12 tasks' graph pairs as KGs, with the human scores.

    Parameters
    ----------
    split
        ``"train"``, ``"dev"`` or ``"test"`` (the shared data folder holds train and dev).
    data_dir
        The shared data folder holding ``bamboo/``; default
        :func:`~s3kg_core.config.default_data_dir`.

    Returns
    -------
    BambooSplit
        A task whose files are missing is kept with its reason (:attr:`BambooTask.missing`):
        the AMR files of the task, or for main, reify and syno ``<dataset>/<split>.y`` or
        ``<dataset>/orig.<split>.txt``.

    Raises
    ------
    ConfigError
        On an unknown split.
    InputFormatError
        If there is no ``bamboo/`` folder, a malformed graph
        (:class:`~s3kg_core.errors.PenmanFormatError`, naming file and block), parallel files of
        different lengths, a human score that is not a finite number (text, NaN or inf: file
        and line named), or fewer graphs or human scores than ``orig.<split>.txt`` has rows.

    Examples
    --------
    >>> import tempfile
    >>> load_bamboo("dev", data_dir=tempfile.mkdtemp())
    Traceback (most recent call last):
    ...
    s3kg_core.errors.InputFormatError: no BAMBOO data at .../bamboo (folders sts, sick, para): ...
    """
    if split not in SPLITS:
        raise ConfigError(f"split must be one of {', '.join(SPLITS)}; got {split!r}")
    root = (Path(data_dir) if data_dir is not None else default_data_dir()) / BAMBOO_SUBDIR
    if not root.is_dir():
        raise InputFormatError(
            f"no BAMBOO data at {root} (folders {', '.join(DATASETS)}): pass data_dir "
            "(--data-dir) or set S3KG_DATA_DIR"
        )
    rows: dict[str, tuple[int, list[float]] | str] = {}
    for dataset in DATASETS:
        orig = root / dataset / f"orig.{split}.txt"
        scores = root / dataset / f"{split}.y"
        absent = [_relative(p, root) for p in (orig, scores) if not p.is_file()]
        if absent:
            rows[dataset] = f"{', '.join(absent)} missing"
        else:
            rows[dataset] = (_data_rows(orig, HEADER_ROWS[dataset]), _read_scores(scores))
    tasks = tuple(_task(root, d, t, split, rows[d]) for d, t in FIGURES)
    return BambooSplit(split=split, root=str(root), tasks=tasks)


# -- the runner -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BambooFigure:
    """One of the 12 figures of one score component.

    Attributes
    ----------
    dataset, task
        Which figure.
    value
        Pearson x100 (main, reify, syno) or accuracy x100 (role_confusion); ``None`` when not
        available (see ``note``).
    n
        Graph pairs scored (for role_confusion, twice the pairs of pairs).
    note
        Why ``value`` is ``None``, else ``""``.
    """

    dataset: str
    task: str
    value: float | None
    n: int = 0
    note: str = ""


@dataclass(frozen=True)
class BambooResult:
    """The 12 figures of a BAMBOO split for the blended score and for each side.

    Attributes
    ----------
    split, encoder, mode, alpha, signature
        What was scored, and how (``signature`` ends in ``|alpha:A``).
    figures
        For each of :data:`COMPONENTS` (``s3kg``, ``s_wl``, ``s_sbert``), its 12 figures in
        :data:`FIGURES` order.
    pairs, seconds
        Graph pairs scored and the seconds the scoring took (encoding included, reading the
        graphs not: that is ``load_seconds``).
    scores
        Per task (``"sts/main"``) and component, every pair's score (not in :meth:`to_dict`).

    Examples
    --------
    >>> r = BambooResult("dev", "minilm", "hybrid", 0.5, "sig", {
    ...     c: tuple(BambooFigure(d, t, 50.0, 2) for d, t in FIGURES) for c in COMPONENTS},
    ...     pairs=24, seconds=2.0)
    >>> r.mean(), r.pairs_per_second, r.available
    (50.0, 12.0, 12)
    >>> BambooResult.from_dict(r.to_dict()) == r
    True
    """

    split: str
    encoder: str
    mode: str
    alpha: float
    signature: str
    figures: Mapping[str, tuple[BambooFigure, ...]]
    pairs: int = 0
    seconds: float = 0.0
    load_seconds: float = 0.0
    scores: Mapping[str, Mapping[str, tuple[float, ...]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def pairs_per_second(self) -> float:
        """Graph pairs scored per second."""
        return self.pairs / self.seconds if self.seconds > 0 else 0.0

    @property
    def available(self) -> int:
        """How many of the 12 figures the blended score has."""
        return sum(1 for f in self.figures["s3kg"] if f.value is not None)

    def mean(self, component: str = "s3kg") -> float | None:
        """The mean of a component's available figures (:func:`bamboo_mean`)."""
        return bamboo_mean([f.value for f in self.figures[component]])

    def figure(self, dataset: str, task: str, component: str = "s3kg") -> BambooFigure:
        """One figure of one component.

        Raises
        ------
        ConfigError
            If there is no such figure.
        """
        for f in self.figures.get(component, ()):
            if f.dataset == dataset and f.task == task:
                return f
        raise ConfigError(f"no figure {dataset}/{task} of {component!r}")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: settings, ``figures[component][dataset][task]``, means, timings.

        A figure that is not available is ``null``; ``notes[component]["<dataset>/<task>"]``
        says why.
        """
        first = self.figures["s3kg"]
        return {
            "benchmark": "bamboo",
            "split": self.split,
            "encoder": self.encoder,
            "mode": self.mode,
            "alpha": self.alpha,
            "signature": self.signature,
            "protocol": "Pearson x100 (main, reify, syno), role accuracy x100, mean of 12",
            "figures": {
                c: {d: {f.task: f.value for f in figs if f.dataset == d} for d in DATASETS}
                for c, figs in self.figures.items()
            },
            "mean": {c: self.mean(c) for c in self.figures},
            "available": self.available,
            "n": {d: {f.task: f.n for f in first if f.dataset == d} for d in DATASETS},
            "notes": {
                c: {f"{f.dataset}/{f.task}": f.note for f in figs if f.note}
                for c, figs in self.figures.items()
            },
            "pairs": self.pairs,
            "seconds": self.seconds,
            "load_seconds": self.load_seconds,
            "pairs_per_second": self.pairs_per_second,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BambooResult:
        """Inverse of :meth:`to_dict` (per-pair scores are not kept there)."""
        notes: Mapping[str, Mapping[str, str]] = data.get("notes", {})
        figures = {
            c: tuple(
                BambooFigure(
                    d,
                    t,
                    None if values[d][t] is None else float(values[d][t]),
                    int(data["n"][d][t]),
                    str(notes.get(c, {}).get(f"{d}/{t}", "")),
                )
                for d, t in FIGURES
            )
            for c, values in data["figures"].items()
        }
        return cls(
            split=str(data["split"]),
            encoder=str(data["encoder"]),
            mode=str(data["mode"]),
            alpha=float(data["alpha"]),
            signature=str(data["signature"]),
            figures=figures,
            pairs=int(data["pairs"]),
            seconds=float(data["seconds"]),
            load_seconds=float(data.get("load_seconds", 0.0)),
        )

    def table(self) -> str:
        """The figures as a text table: a row per component, a column per figure, the mean."""
        groups = ("main", "reify", "syno", "role confusion")
        head = " " * 9 + "".join(f"{g:^18}" for g in groups)
        cols = " " * 9 + "".join(f"{_LABELS[d]:>6}" for d, _ in FIGURES) + f"{'mean':>7}"
        lines = [
            f"BAMBOO {self.split}: Pearson x100 (main, reify, syno), accuracy x100 (role "
            f"confusion); encoder {self.encoder}, mode {self.mode}, alpha {self.alpha:g}",
            head.rstrip(),
            cols,
        ]
        for c, figs in self.figures.items():
            cells = "".join(f"{'n/a' if f.value is None else f'{f.value:.1f}':>6}" for f in figs)
            mean = self.mean(c)
            shown = "n/a" if mean is None else f"{mean:.2f}"
            lines.append(f"{_COMPONENT_LABELS.get(c, c):<9}{cells}{shown:>7}")
        if self.available < len(FIGURES):
            lines.append(f"mean of the {self.available} of {len(FIGURES)} figures available")
        for f in self.figures["s3kg"]:
            if f.note:
                lines.append(f"{f.dataset}/{f.task}: {f.note}")
        lines.append(
            f"{self.pairs:,} graph pairs scored in {self.seconds:.1f} s "
            f"({self.pairs_per_second:.1f} pairs/s; reading the graphs {self.load_seconds:.1f} s)"
        )
        lines.append(f"signature {self.signature}")
        return "\n".join(lines)


def _component_scores(results: Sequence[Any]) -> dict[str, npt.NDArray[np.float64]]:
    return {
        "s3kg": np.array([r.score for r in results], dtype=np.float64),
        "s_wl": np.array([r.s_wl for r in results], dtype=np.float64),
        "s_sbert": np.array([r.s_sbert for r in results], dtype=np.float64),
    }


def run_bamboo(
    scorer: KGScorer | None = None,
    *,
    encoder: str | Encoder | None = None,
    config: S3KGConfig | None = None,
    split: str = "dev",
    data_dir: str | Path | None = None,
    data: BambooSplit | None = None,
    progress: StageProgress | None = None,
) -> BambooResult:
    """Score a BAMBOO split and compute its 12 figures for S3KG, S_WL and S_SBERT.

    Every task is one :meth:`~s3kg_core.scoring.s3kg.KGScorer.score_pairs` call of the same
    scorer, so each distinct string is encoded once for the whole split. Any mode works; a
    scorer that needs the texts (:attr:`~s3kg_core.scoring.s3kg.KGScorer.needs_texts`) gets the
    graphs' ``# ::snt`` sentences.

    Parameters
    ----------
    scorer
        The scorer to use (its config's mode and alpha); or leave it out and give ``encoder``
        and ``config``.
    encoder, config
        Without ``scorer``: the encoder (default ``"minilm"``) and the :class:`S3KGConfig`
        (default: the project's defaults) of a new scorer.
    split, data_dir
        Which split to read (:func:`load_bamboo`); not used when ``data`` is given.
    data
        A split already read by :func:`load_bamboo`.
    progress
        ``progress(stage, done, total)`` while scoring (see ``score_pairs``).

    Returns
    -------
    BambooResult
        S3KG is the blended score at the config's alpha (:attr:`ScoreResult.score
        <s3kg_core.scoring.result.ScoreResult.score>`).

    Raises
    ------
    ConfigError
        If both a scorer and an encoder or config are given, or on an unknown split.
    InputFormatError
        As :func:`load_bamboo`.
    """
    if scorer is not None and (encoder is not None or config is not None):
        raise ConfigError("give a scorer, or an encoder and a config, not both")
    started = time.perf_counter()
    if data is None:
        data = load_bamboo(split, data_dir)
    load_seconds = time.perf_counter() - started
    if scorer is None:
        scorer = KGScorer(encoder if encoder is not None else "minilm", config)
    alpha = float(scorer.config.alpha)
    figures: dict[str, list[BambooFigure]] = {c: [] for c in COMPONENTS}
    scores: dict[str, dict[str, tuple[float, ...]]] = {}
    pairs = 0
    seconds = 0.0
    for task in data.tasks:
        if not task.available:
            for c in COMPONENTS:
                figures[c].append(BambooFigure(task.dataset, task.task, None, 0, task.missing))
            continue
        began = time.perf_counter()
        texts = list(zip(task.text_1, task.text_2, strict=True)) if scorer.needs_texts else None
        results = scorer.score_pairs(
            list(zip(task.kg_1, task.kg_2, strict=True)), texts=texts, progress=progress
        )
        seconds += time.perf_counter() - began
        pairs += len(results)
        by_component = _component_scores(results)
        scores[task.name] = {c: tuple(float(x) for x in v) for c, v in by_component.items()}
        for c, values in by_component.items():
            value = task_figure(task.task, values, task.human)
            note = "" if value is not None else "constant scores: Pearson's r is undefined"
            figures[c].append(BambooFigure(task.dataset, task.task, value, len(results), note))
    return BambooResult(
        split=data.split,
        encoder=scorer.encoder.name,
        mode=scorer.config.mode,
        alpha=alpha,
        signature=Signature.blended(scorer.signature, alpha),
        figures={c: tuple(v) for c, v in figures.items()},
        pairs=pairs,
        seconds=seconds,
        load_seconds=load_seconds,
        scores=scores,
    )
