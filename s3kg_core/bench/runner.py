"""Run a pair benchmark: S3KG and baselines against the labels of one pair set.

:func:`run_pair_benchmark` scores a :class:`~s3kg_core.bench.datasets.PairSet` with S3KG (one
:class:`~s3kg_core.s3kg.KGScorer` pass giving both components), sweeps alpha over the stored
components, and reports max-F1 (with its threshold), AUROC and bootstrap 95% intervals for S3KG
at its best alpha and for each requested baseline (:mod:`s3kg_core.bench.baselines`).
:func:`store_bench_result` writes the result to the DuckDB store for the dashboard.

Notes
-----
S3KG's alpha is chosen on the same pairs it is reported on (as in the paper's table), so its
figures are optimistic by the choice of one of eleven alphas; baselines have no such parameter.
The intervals resample pairs at that fixed alpha and threshold choice.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..embeddings import Encoder
from ..errors import ConfigError
from ..types import MODES, Mode, blend
from .datasets import PairSet
from .metrics import (
    AlphaPoint,
    ConfidenceInterval,
    alpha_sweep,
    auroc,
    best_alpha,
    bootstrap_ci,
    max_f1,
)

if TYPE_CHECKING:
    from ..store import Store

__all__ = [
    "TRIPLE_SOURCES",
    "BenchResult",
    "MethodResult",
    "available_methods",
    "load_bench_results",
    "run_pair_benchmark",
    "store_bench_result",
    "with_offline_triples",
]

TRIPLE_SOURCES = ("released", "offline", "llm")
"""Where a benchmark's triples come from: the released file, the offline extractor, an LLM."""

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class MethodResult:
    """Agreement of one method's scores with the labels.

    Attributes
    ----------
    name
        ``"s3kg"`` or a baseline name such as ``"rouge1"``.
    f1, threshold
        Max-F1 over thresholds and the score threshold reaching it.
    auroc
        Area under the ROC curve.
    f1_ci, auroc_ci
        Percentile bootstrap intervals (``(low, high)``).
    alpha
        The blend weight used (S3KG only; ``None`` for baselines).
    signature
        The score signature (settings and versions behind the scores; may be empty).
    """

    name: str
    f1: float
    auroc: float
    threshold: float
    f1_ci: ConfidenceInterval
    auroc_ci: ConfidenceInterval
    alpha: float | None = None
    signature: str = ""
    scores: tuple[float, ...] = field(default=(), repr=False, compare=False)
    """Every pair's score (stored for ROC curves and drill-downs, not part of the JSON)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``f1``, ``auroc``, [``alpha``], ``threshold``, ``f1_ci``, ``auroc_ci``."""
        out: dict[str, Any] = {"f1": self.f1, "auroc": self.auroc}
        if self.alpha is not None:
            out["alpha"] = self.alpha
        out["threshold"] = self.threshold
        out["f1_ci"] = [self.f1_ci.low, self.f1_ci.high]
        out["auroc_ci"] = [self.auroc_ci.low, self.auroc_ci.high]
        if self.signature:
            out["signature"] = self.signature
        return out

    @classmethod
    def from_dict(cls, name: str, data: dict[str, Any]) -> MethodResult:
        """Inverse of :meth:`to_dict`."""
        return cls(
            name=name,
            f1=float(data["f1"]),
            auroc=float(data["auroc"]),
            threshold=float(data["threshold"]),
            f1_ci=ConfidenceInterval(*(float(v) for v in data["f1_ci"])),
            auroc_ci=ConfidenceInterval(*(float(v) for v in data["auroc_ci"])),
            alpha=None if data.get("alpha") is None else float(data["alpha"]),
            signature=str(data.get("signature", "")),
        )


@dataclass(frozen=True)
class BenchResult:
    """Every method's agreement with the labels of one pair set, and S3KG's alpha sweep."""

    dataset: str
    n: int
    encoder: str
    mode: Mode
    triples: str
    methods: dict[str, MethodResult] = field(default_factory=dict)
    alpha_sweep: tuple[AlphaPoint, ...] = ()
    ids: tuple[str, ...] = field(default=(), repr=False, compare=False)
    labels: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: dataset, n, methods, encoder, mode, triples, alpha_sweep."""
        return {
            "dataset": self.dataset,
            "n": self.n,
            "methods": {name: m.to_dict() for name, m in self.methods.items()},
            "encoder": self.encoder,
            "mode": self.mode,
            "triples": self.triples,
            "alpha_sweep": [p.to_dict() for p in self.alpha_sweep],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BenchResult:
        """Inverse of :meth:`to_json`."""
        return cls(
            dataset=str(data["dataset"]),
            n=int(data["n"]),
            encoder=str(data["encoder"]),
            mode=data["mode"],
            triples=str(data["triples"]),
            methods={k: MethodResult.from_dict(k, v) for k, v in data["methods"].items()},
            alpha_sweep=tuple(AlphaPoint.from_dict(p) for p in data.get("alpha_sweep", ())),
        )


def _baselines_module() -> Any | None:
    try:
        from . import baselines  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return None
    return baselines


def available_methods() -> list[str]:
    """``"s3kg"`` followed by every baseline name :mod:`.baselines` offers (if installed).

    Examples
    --------
    >>> available_methods()[0]
    's3kg'
    """
    module = _baselines_module()
    names = list(getattr(module, "BASELINES", {})) if module is not None else []
    return ["s3kg", *[n for n in names if n != "s3kg"]]


def _measure(
    name: str,
    scores: npt.NDArray[np.float64],
    labels: npt.NDArray[np.int64],
    bootstrap: int,
    seed: int,
    alpha: float | None = None,
    signature: str = "",
) -> MethodResult:
    best = max_f1(scores, labels)
    return MethodResult(
        name=name,
        f1=best.f1,
        auroc=auroc(scores, labels),
        threshold=best.threshold,
        f1_ci=bootstrap_ci(max_f1, scores, labels, n=bootstrap, seed=seed),
        auroc_ci=bootstrap_ci(auroc, scores, labels, n=bootstrap, seed=seed),
        alpha=alpha,
        signature=signature,
        scores=tuple(float(x) for x in scores),
    )


def _text_kg_status(status: str, n_triples: int) -> str:
    if status == "ok":
        return "ok" if n_triples else "empty"
    return "empty" if status == "empty" else "unparseable"


def with_offline_triples(pair_set: PairSet) -> PairSet:
    """The same pairs with both KGs re-extracted from the texts by the offline extractor.

    A text the extractor fails on gets an empty KG with status ``"unparseable"``.
    """
    from ..extract.offline import OfflineExtractor

    extractor = OfflineExtractor()
    kgs = [extractor.extract_texts(list(texts)) for texts in (pair_set.text_1, pair_set.text_2)]
    return dataclasses.replace(
        pair_set,
        kg_1=tuple(k.triples for k in kgs[0]),
        kg_2=tuple(k.triples for k in kgs[1]),
        status_1=tuple(_text_kg_status(k.status, len(k.triples)) for k in kgs[0]),
        status_2=tuple(_text_kg_status(k.status, len(k.triples)) for k in kgs[1]),
        dropped=0,
    )


def run_pair_benchmark(
    pair_set: PairSet,
    *,
    encoder: str | Encoder = "minilm",
    mode: Mode = "paper",
    methods: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    triples: str = "released",
    progress: Progress | None = None,
) -> BenchResult:
    """Measure how well S3KG and the baselines agree with the labels of ``pair_set``.

    S3KG is scored once (both components of every pair), alpha is swept over 0.0, 0.1, ..., 1.0
    from those components, and the alpha with the best F1 (ties: best AUROC, then the smallest
    alpha) is reported with its threshold, AUROC and bootstrap intervals. Each baseline gets the
    same F1, threshold, AUROC and intervals. A pair with an empty KG scores 0 for S3KG.

    Parameters
    ----------
    pair_set
        The labelled pairs (both classes must occur).
    encoder
        ``"minilm"``, ``"mpnet"``, a model directory, or a loaded :class:`Encoder`.
    mode
        S3KG mode, ``"paper"`` or ``"kgx"``.
    methods
        Names among :func:`available_methods`; default all of them.
    bootstrap
        Resamples per interval (at least 1).
    seed
        Seed of the bootstrap.
    triples
        ``"released"`` (the KGs in ``pair_set``) or ``"offline"`` (re-extracted by
        :func:`with_offline_triples`); ``"llm"`` is not implemented yet.
    progress
        ``progress(stage, done, total)`` while S3KG scores (see :meth:`KGScorer.score_pairs`).

    Returns
    -------
    BenchResult

    Raises
    ------
    ConfigError
        On an unknown mode, method or triple source, or ``bootstrap < 1``.
    InputFormatError
        If the set is empty or has a single class.

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [
    ...     {"id": str(i), "paragraph_1": "", "paragraph_2": "", "label": str(y),
    ...      "kg_1": '[["a", "likes", "b"]]',
    ...      "kg_2": '[["a", "likes", "b"]]' if y else '[["c", "hates", "d"]]'}
    ...     for i, y in enumerate([1, 0, 1, 0])])
    >>> r = run_pair_benchmark(ps, methods=["s3kg"], bootstrap=20)
    >>> r.methods["s3kg"].f1, r.methods["s3kg"].auroc
    (1.0, 1.0)
    """
    from ..s3kg import KGScorer

    if mode not in MODES:
        raise ConfigError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if triples not in TRIPLE_SOURCES:
        raise ConfigError(f"triples must be one of {', '.join(TRIPLE_SOURCES)}; got {triples!r}")
    if triples == "llm":
        raise ConfigError(
            "--triples llm is not implemented yet in this version; use released or offline"
        )
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 1:
        raise ConfigError(f"bootstrap must be an integer >= 1; got {bootstrap!r}")
    known = available_methods()
    wanted = list(dict.fromkeys(methods)) if methods is not None else known
    if not wanted:
        raise ConfigError(f"no methods given; choose among {', '.join(known)}")
    unknown = [m for m in wanted if m not in known]
    if unknown:
        hint = "" if len(known) > 1 else " (the baselines module is not available)"
        raise ConfigError(
            f"unknown method(s) {', '.join(unknown)}; choose among {', '.join(known)}{hint}"
        )
    # single-class and empty sets fail here, before any model is loaded
    max_f1(np.zeros(len(pair_set)), pair_set.labels)
    if triples == "offline":
        pair_set = with_offline_triples(pair_set)
    labels = pair_set.labels
    encoder_name = encoder if isinstance(encoder, str) else encoder.name

    results: dict[str, MethodResult] = {}
    sweep: tuple[AlphaPoint, ...] = ()
    if "s3kg" in wanted:
        scorer = KGScorer(encoder, mode=mode)
        scored = scorer.score_pairs(
            list(zip(pair_set.kg_1, pair_set.kg_2, strict=True)), progress=progress
        )
        s_wl = np.array([r.s_wl for r in scored], dtype=np.float64)
        s_sbert = np.array([r.s_sbert for r in scored], dtype=np.float64)
        sweep = tuple(alpha_sweep(s_wl, s_sbert, labels, mode))
        best = best_alpha(sweep)
        blended = np.asarray(blend(s_wl, s_sbert, best.alpha, mode), dtype=np.float64)
        results["s3kg"] = _measure(
            "s3kg", blended, labels, bootstrap, seed, alpha=best.alpha, signature=scorer.signature
        )
    baselines = [m for m in wanted if m != "s3kg"]
    if baselines:
        module = _baselines_module()
        if module is None:  # pragma: no cover - available_methods() already said so
            raise ConfigError("the baselines module is not available; use --methods s3kg")
        enc_arg = encoder if isinstance(encoder, str) else str(getattr(encoder, "model_dir", ""))
        scores = module.run_baselines(pair_set, names=baselines, encoder=enc_arg or "minilm")
        sign = getattr(module, "baseline_signature", None)
        for name in baselines:
            values = np.asarray(scores[name], dtype=np.float64)
            signature = str(sign(name, enc_arg or "minilm")) if sign is not None else ""
            results[name] = _measure(name, values, labels, bootstrap, seed, signature=signature)
    return BenchResult(
        dataset=pair_set.name,
        n=len(pair_set),
        encoder=encoder_name,
        mode=mode,
        triples=triples,
        methods={m: results[m] for m in wanted},
        alpha_sweep=sweep,
        ids=tuple(str(i) for i in pair_set.ids),
        labels=tuple(int(x) for x in labels),
    )


# -- storage --------------------------------------------------------------------------------------


def store_bench_result(store: Store, result: BenchResult) -> int:
    """Write one row per method to the store's ``bench_results`` table; return rows written.

    A row with the same ``(dataset, encoder, mode, triples, method)`` is replaced.
    """
    sweep = [p.to_dict() for p in result.alpha_sweep]
    rows = []
    for name, m in result.methods.items():
        detail: dict[str, Any] = {"signature": m.signature} if m.signature else {}
        if name == "s3kg":
            detail["alpha_sweep"] = sweep
        if m.scores:  # per-pair scores: ROC curves and the pairs a method gets wrong
            detail.update(ids=list(result.ids), labels=list(result.labels), scores=list(m.scores))
        rows.append(
            (
                result.dataset,
                result.n,
                result.encoder,
                result.mode,
                result.triples,
                name,
                m.f1,
                m.auroc,
                m.alpha,
                m.threshold,
                m.f1_ci.low,
                m.f1_ci.high,
                m.auroc_ci.low,
                m.auroc_ci.high,
                json.dumps(detail),
            )
        )
    with store.transaction() as con:
        return store.put_bench_results(con, rows)


def load_bench_results(store: Store, dataset: str | None = None) -> list[dict[str, Any]]:
    """Stored benchmark rows (every column, ``detail`` parsed), optionally of one dataset."""
    with store.connect() as con:
        rows = store.get_bench_results(con, dataset)
    for row in rows:
        row["detail"] = json.loads(row["detail"]) if row.get("detail") else {}
    return rows
