"""Run a pair benchmark: S3KG and baselines against the labels of one pair set.

:func:`run_pair_benchmark` scores a :class:`~s3kg_core.evaluation.pair_sets.PairSet` with S3KG (one
:class:`~s3kg_core.scoring.s3kg.KGScorer` pass giving both components), sweeps alpha over the stored
components, and reports max-F1 (with its threshold), AUROC and bootstrap 95% intervals for S3KG
at its best alpha and for each requested baseline (:mod:`s3kg_core.evaluation.baselines`).
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
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np
import numpy.typing as npt

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..progress import StageProgress
from ..scoring.result import DEFAULT_MODE, MODES, Mode, blend, check_mode
from .metrics import (
    DEFAULT_ALPHAS,
    AlphaPoint,
    ConfidenceInterval,
    auroc,
    best_alpha,
    bootstrap_ci,
    max_f1,
    sweep,
)
from .pair_sets import PairSet
from .splits import PAIR_SPLIT, checked_dev_mask

if TYPE_CHECKING:
    from ..store.store import Store

__all__ = [
    "PROTOCOLS",
    "S3KG_VARIANTS",
    "TRIPLE_SOURCES",
    "AlphaChoice",
    "BenchResult",
    "MethodResult",
    "available_methods",
    "choose_alpha",
    "default_methods",
    "load_bench_results",
    "run_pair_benchmark",
    "store_bench_result",
    "with_extracted_triples",
    "with_offline_triples",
]

TRIPLE_SOURCES = ("released", "offline", "llm")
"""Where a benchmark's triples come from: the released file, the offline extractor, an LLM."""


Protocol = Literal["same", "dev-test"]
PROTOCOLS: tuple[Protocol, ...] = ("dev-test", "same")
"""``dev-test``: S3KG's alpha chosen on the declared dev pairs (:mod:`.split`), every figure
computed on the test pairs. ``same``: alpha chosen on, and figures computed on, all pairs (as in
the paper's table; optimistic by the choice)."""

S3KG_VARIANTS = tuple(f"s3kg@{m}" for m in MODES)
"""Method names of S3KG in each mode, whatever the benchmark's primary mode."""


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
    """Every reported pair's score (stored for ROC curves and drill-downs, not in the JSON)."""
    sweep: tuple[AlphaPoint, ...] = field(default=(), repr=False, compare=False)
    """S3KG variants: the alpha sweep on the reported pairs (for the curves)."""
    dev_sweep: tuple[AlphaPoint, ...] = field(default=(), repr=False, compare=False)
    """S3KG variants under the dev-test protocol: the sweep on the dev pairs alpha came from."""

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
        if self.sweep:
            out["alpha_sweep"] = [p.to_dict() for p in self.sweep]
        if self.dev_sweep:
            out["alpha_sweep_dev"] = [p.to_dict() for p in self.dev_sweep]
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
            sweep=tuple(AlphaPoint.from_dict(p) for p in data.get("alpha_sweep", ())),
            dev_sweep=tuple(AlphaPoint.from_dict(p) for p in data.get("alpha_sweep_dev", ())),
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
    protocol: Protocol = "same"
    n_dev: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict: dataset, n, methods, encoder, mode, triples, protocol, sweeps.

        ``n`` counts the pairs the figures are computed on (the test pairs under ``dev-test``).
        """
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "n": self.n,
            "methods": {name: m.to_dict() for name, m in self.methods.items()},
            "encoder": self.encoder,
            "mode": self.mode,
            "triples": self.triples,
            "protocol": self.protocol,
            "alpha_sweep": [p.to_dict() for p in self.alpha_sweep],
        }
        if self.protocol == "dev-test":
            out["n_dev"] = self.n_dev
            out["split"] = PAIR_SPLIT
        return out

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
            protocol=data.get("protocol", "same"),
            n_dev=int(data.get("n_dev", 0)),
        )


def _baselines_module() -> Any | None:
    try:
        from . import baselines  # type: ignore[attr-defined, unused-ignore]
    except ImportError:
        return None
    return baselines


def available_methods() -> list[str]:
    """``"s3kg"``, the S3KG variants ``"s3kg@<mode>"``, then every baseline of :mod:`.baselines`.

    ``"s3kg"`` is S3KG in the benchmark's ``mode``; ``"s3kg@paper"``, ``"s3kg@kgx"`` and
    ``"s3kg@hybrid"`` are S3KG in that mode whatever ``mode`` is, so one run compares them.

    Examples
    --------
    >>> available_methods()[:4]
    ['s3kg', 's3kg@paper', 's3kg@kgx', 's3kg@hybrid']
    """
    module = _baselines_module()
    names = list(getattr(module, "BASELINES", {})) if module is not None else []
    return ["s3kg", *S3KG_VARIANTS, *[n for n in names if n != "s3kg"]]


def default_methods() -> list[str]:
    """What a benchmark runs when no methods are named: all but ``s3kg_kgx``.

    The ``s3kg_kgx`` baseline (kgx mode at the fixed alpha 0.5) is ``s3kg@kgx`` without the alpha
    choice; name it explicitly to get it.
    """
    return [m for m in available_methods() if m != "s3kg_kgx"]


@dataclass(frozen=True)
class AlphaChoice:
    """Alpha as a protocol chose it, and the scores it gives on the reported pairs.

    Attributes
    ----------
    alpha
        The chosen alpha.
    scores
        The scores at ``alpha`` of the reported pairs (the test pairs under ``dev-test``).
    sweep
        The sweep on the reported pairs (for the curves; under ``same`` alpha came from it).
    dev_sweep
        Under ``dev-test``: the sweep on the dev pairs alpha came from; else empty.
    """

    alpha: float
    scores: npt.NDArray[np.float64] = field(repr=False)
    sweep: tuple[AlphaPoint, ...]
    dev_sweep: tuple[AlphaPoint, ...] = ()

    @property
    def dev_auroc(self) -> float:
        """The dev AUROC at the chosen alpha (NaN under ``same``)."""
        return next((p.auroc for p in self.dev_sweep if p.alpha == self.alpha), float("nan"))


def choose_alpha(
    scores_at: Callable[[float], npt.NDArray[np.float64]],
    labels: npt.ArrayLike,
    dev: npt.NDArray[np.bool_] | None,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
) -> AlphaChoice:
    """Choose alpha by a protocol: on the dev pairs when ``dev`` is a mask, else on all pairs.

    ``dev-test`` (``dev`` given): the alpha with the best AUROC on the dev pairs (ties: F1,
    then the first alpha), reported on the test pairs. ``same`` (``dev`` is ``None``): the
    alpha with the best F1 on all pairs (ties: AUROC, then the first), reported on them.
    ``scores_at(alpha)`` gives every pair's score at ``alpha`` (S3KG's blend, or any family of
    scores with one parameter).

    Raises
    ------
    InputFormatError
        If a side has a single class or the scores are not finite.

    Examples
    --------
    >>> y = np.array([1, 0, 1, 0, 1, 0])
    >>> dev = np.array([True, True, False, False, False, False])
    >>> c = choose_alpha(lambda a: np.array([a, 1 - a, 0.9, 0.2, 0.8, 0.3]), y, dev, [0.0, 1.0])
    >>> c.alpha, c.scores.tolist(), c.dev_auroc
    (1.0, [0.9, 0.2, 0.8, 0.3], 1.0)
    """
    y = np.asarray(labels)
    if dev is None:
        sweep_all = tuple(sweep(scores_at, y, alphas))
        chosen = best_alpha(sweep_all)
        scores_all = np.asarray(scores_at(chosen.alpha), dtype=np.float64)
        return AlphaChoice(chosen.alpha, scores_all, sweep_all)
    dev_idx, test_idx = np.flatnonzero(dev), np.flatnonzero(~dev)
    test_sweep = tuple(sweep(lambda a: np.asarray(scores_at(a))[test_idx], y[test_idx], alphas))
    dev_sweep = tuple(sweep(lambda a: np.asarray(scores_at(a))[dev_idx], y[dev_idx], alphas))
    chosen = best_alpha(dev_sweep, by="auroc")
    scores = np.asarray(scores_at(chosen.alpha), dtype=np.float64)[test_idx]
    return AlphaChoice(chosen.alpha, scores, test_sweep, dev_sweep)


def _blender(
    s_wl: npt.NDArray[np.float64], s_sbert: npt.NDArray[np.float64], mode: Mode
) -> Callable[[float], npt.NDArray[np.float64]]:
    """S3KG's blend of stored components as a function of alpha."""

    def at(alpha: float) -> npt.NDArray[np.float64]:
        return np.asarray(blend(s_wl, s_sbert, alpha, mode), dtype=np.float64)

    return at


def _variant_mode(method: str, mode: Mode) -> Mode:
    return mode if method == "s3kg" else cast(Mode, method.removeprefix("s3kg@"))


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


def with_extracted_triples(pair_set: PairSet, extractor: Any) -> PairSet:
    """The same pairs with both KGs re-extracted from the texts by ``extractor``.

    ``extractor`` is anything with ``extract_texts(texts) -> list[TextKG]`` (the offline
    extractor, or :class:`~s3kg_core.extract.llm.LLMExtractor` with its single-text prompt). A
    text the extractor fails on gets an empty KG with status ``"unparseable"``.
    """
    kgs = [extractor.extract_texts(list(texts)) for texts in (pair_set.text_1, pair_set.text_2)]
    return dataclasses.replace(
        pair_set,
        kg_1=tuple(k.triples for k in kgs[0]),
        kg_2=tuple(k.triples for k in kgs[1]),
        status_1=tuple(_text_kg_status(k.status, len(k.triples)) for k in kgs[0]),
        status_2=tuple(_text_kg_status(k.status, len(k.triples)) for k in kgs[1]),
        dropped=0,
    )


def with_offline_triples(pair_set: PairSet) -> PairSet:
    """The same pairs with both KGs re-extracted by the offline (spaCy) extractor."""
    from ..extract.offline import OfflineExtractor

    return with_extracted_triples(pair_set, OfflineExtractor())


def run_pair_benchmark(
    pair_set: PairSet,
    *,
    encoder: str | Encoder = "minilm",
    mode: Mode = DEFAULT_MODE,
    methods: Sequence[str] | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    triples: str = "released",
    protocol: Protocol = "dev-test",
    extractor: Any | None = None,
    progress: StageProgress | None = None,
) -> BenchResult:
    """Measure how well S3KG and the baselines agree with the labels of ``pair_set``.

    Each S3KG mode asked for is scored once (both components of every pair, one embedding cache
    shared by the modes); alpha is swept over 0.0, 0.1, ..., 1.0 from those components. Under
    the ``dev-test`` protocol the alpha with the best AUROC on the declared dev pairs (ties: F1,
    then the smallest alpha) is reported on the test pairs; under ``same`` the alpha with the
    best F1 on all pairs (ties: AUROC) is reported on the same pairs. Every method gets max-F1
    with its threshold, AUROC and bootstrap intervals on the reported pairs. A pair with an
    empty KG scores 0 for S3KG.

    Parameters
    ----------
    pair_set
        The labelled pairs (both classes must occur, on both sides of the split for
        ``dev-test``).
    encoder
        ``"minilm"``, ``"mpnet"``, a model directory, or a loaded :class:`Encoder`.
    mode
        The mode of the ``"s3kg"`` method: ``"paper"``, ``"kgx"``, ``"hybrid"`` or ``"text"``
        (which uses the pair's texts too).
    methods
        Names among :func:`available_methods`; default :func:`default_methods`.
    bootstrap
        Resamples per interval (at least 1).
    seed
        Seed of the bootstrap.
    triples
        ``"released"`` (the KGs in ``pair_set``), ``"offline"`` (re-extracted by
        :func:`with_offline_triples`) or ``"llm"`` (re-extracted by ``extractor``).
    extractor
        For ``triples="llm"``: an :class:`~s3kg_core.extract.llm.LLMExtractor` (anything with
        ``extract_texts``).
    protocol
        ``"dev-test"`` (default) or ``"same"``; see :data:`PROTOCOLS`.
    progress
        ``progress(stage, done, total)`` while S3KG scores (see :meth:`KGScorer.score_pairs`).

    Returns
    -------
    BenchResult

    Raises
    ------
    ConfigError
        On an unknown mode, method, protocol or triple source, or ``bootstrap < 1``.
    InputFormatError
        If the set is empty or has a single class (on a side of the split).

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [
    ...     {"id": str(i), "paragraph_1": "", "paragraph_2": "", "label": str(y),
    ...      "kg_1": '[["a", "likes", "b"]]',
    ...      "kg_2": '[["a", "likes", "b"]]' if y else '[["c", "hates", "d"]]'}
    ...     for i, y in enumerate([1, 0, 1, 0])])
    >>> r = run_pair_benchmark(ps, methods=["s3kg"], bootstrap=20, protocol="same")
    >>> r.methods["s3kg"].f1, r.methods["s3kg"].auroc
    (1.0, 1.0)
    """
    from ..scoring.s3kg import KGScorer

    check_mode(mode)
    if triples not in TRIPLE_SOURCES:
        raise ConfigError(f"triples must be one of {', '.join(TRIPLE_SOURCES)}; got {triples!r}")
    if protocol not in PROTOCOLS:
        raise ConfigError(f"protocol must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    if triples == "llm" and extractor is None:
        raise ConfigError(
            "triples 'llm' needs an LLM extractor: give an endpoint (--base-url and --model, "
            "or OPENAI_BASE_URL and S3KG_MODEL)"
        )
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 1:
        raise ConfigError(f"bootstrap must be an integer >= 1; got {bootstrap!r}")
    known = available_methods()
    wanted = list(dict.fromkeys(methods)) if methods is not None else default_methods()
    if not wanted:
        raise ConfigError(f"no methods given; choose among {', '.join(known)}")
    unknown = [m for m in wanted if m not in known]
    if unknown:
        hint = "" if len(known) > 1 + len(S3KG_VARIANTS) else " (baselines are not available)"
        raise ConfigError(
            f"unknown method(s) {', '.join(unknown)}; choose among {', '.join(known)}{hint}"
        )
    # single-class and empty sets fail here, before any model is loaded
    max_f1(np.zeros(len(pair_set)), pair_set.labels)
    # both classes on both sides of the split, or a clear error (ids and labels do not change
    # when the triples are re-extracted below)
    dev = checked_dev_mask(pair_set) if protocol == "dev-test" else None
    if triples == "offline":
        pair_set = with_offline_triples(pair_set)
    elif triples == "llm":
        pair_set = with_extracted_triples(pair_set, extractor)
    labels = pair_set.labels
    if dev is not None:
        dev_idx, test_idx = np.flatnonzero(dev), np.flatnonzero(~dev)
    else:
        dev_idx, test_idx = np.arange(0), np.arange(len(pair_set))
    y_test = labels[test_idx]
    encoder_name = encoder if isinstance(encoder, str) else encoder.name

    results: dict[str, MethodResult] = {}
    variants = [m for m in wanted if m == "s3kg" or m in S3KG_VARIANTS]
    modes = list(dict.fromkeys(_variant_mode(m, mode) for m in variants))
    components: dict[str, tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], str]] = {}
    if modes:
        loaded = load_encoder(encoder) if isinstance(encoder, str) else encoder
        cache = EmbeddingCache(loaded)
        kg_pairs = list(zip(pair_set.kg_1, pair_set.kg_2, strict=True))
        for m in modes:
            scorer = KGScorer(loaded, mode=m, cache=cache)
            text_pairs = list(zip(pair_set.text_1, pair_set.text_2, strict=True))
            scored = scorer.score_pairs(
                kg_pairs, texts=text_pairs if scorer.needs_texts else None, progress=progress
            )
            components[m] = (
                np.array([r.s_wl for r in scored], dtype=np.float64),
                np.array([r.s_sbert for r in scored], dtype=np.float64),
                scorer.signature,
            )
    for name in variants:
        m = _variant_mode(name, mode)
        s_wl, s_sbert, signature = components[m]
        choice = choose_alpha(_blender(s_wl, s_sbert, m), labels, dev)
        measured = _measure(
            name, choice.scores, y_test, bootstrap, seed, alpha=choice.alpha, signature=signature
        )
        results[name] = dataclasses.replace(
            measured, sweep=choice.sweep, dev_sweep=choice.dev_sweep
        )
    baselines = [m for m in wanted if m not in results]
    if baselines:
        module = _baselines_module()
        if module is None:  # pragma: no cover - available_methods() already said so
            raise ConfigError("the baselines module is not available; use --methods s3kg")
        enc_arg = encoder if isinstance(encoder, str) else str(getattr(encoder, "model_dir", ""))
        scores = module.run_baselines(pair_set, names=baselines, encoder=enc_arg or "minilm")
        sign = getattr(module, "baseline_signature", None)
        for name in baselines:
            values = np.asarray(scores[name], dtype=np.float64)[test_idx]
            signature = str(sign(name, enc_arg or "minilm")) if sign is not None else ""
            results[name] = _measure(name, values, y_test, bootstrap, seed, signature=signature)
    primary = results.get("s3kg") or results.get(f"s3kg@{mode}")
    return BenchResult(
        dataset=pair_set.name,
        n=len(test_idx),
        encoder=encoder_name,
        mode=mode,
        triples=triples,
        methods={m: results[m] for m in wanted},
        alpha_sweep=primary.sweep if primary is not None else (),
        ids=tuple(str(pair_set.ids[i]) for i in test_idx),
        labels=tuple(int(x) for x in y_test),
        protocol=protocol,
        n_dev=len(dev_idx),
    )


# -- storage --------------------------------------------------------------------------------------


def store_bench_result(store: Store, result: BenchResult) -> int:
    """Write one row per method to the store's ``bench_results`` table; return rows written.

    A row with the same ``(dataset, encoder, mode, triples, method)`` is replaced.
    """
    rows = []
    for name, m in result.methods.items():
        detail: dict[str, Any] = {"signature": m.signature} if m.signature else {}
        detail["protocol"] = result.protocol
        if result.protocol == "dev-test":
            detail.update(n_dev=result.n_dev, split=PAIR_SPLIT)
        sweep = m.sweep or (result.alpha_sweep if name == "s3kg" else ())
        if sweep:
            detail["alpha_sweep"] = [p.to_dict() for p in sweep]
        if m.dev_sweep:
            detail["alpha_sweep_dev"] = [p.to_dict() for p in m.dev_sweep]
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
