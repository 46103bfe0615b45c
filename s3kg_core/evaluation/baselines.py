"""Baseline similarity scores for labelled pair sets, under one interface.

Each baseline is a function ``(pair_set, **opts) -> np.ndarray`` returning one float64 score per
pair, higher meaning more similar, registered in :data:`BASELINES`:

``rouge1``, ``rouge2``, ``rougeL``
    ROUGE F-measure (``rouge-score``, Porter stemmer), ``text_1`` as reference.
``bleu``
    Sentence BLEU (``sacrebleu``, 13a tokeniser, exponential smoothing, effective order) / 100,
    ``text_2`` as hypothesis, ``text_1`` as the one reference.
``bertscore``
    BERTScore F1 (``bert-score``) with the packaged all-MiniLM-L6-v2 weights read from their local
    folder (its last, 6th layer), no idf, no baseline rescaling.
``minilm_cosine``, ``mpnet_cosine``
    Cosine of the sentence embeddings of ``text_1`` and ``text_2`` with the packaged encoders,
    clipped to [0, 1] like S_SBERT (docs/scores.md, S3KG step 6).
``wl_kernel``
    The authors' pure WL-kernel baseline on the released KGs: kgx mode without triple selection or
    soft alignment (``S3KGConfig(mode="kgx", align=False)``), score = ``s_wl``.
``s3kg_kgx``
    S3KG in kgx mode at alpha 0.5; :func:`s3kg_components` gives the two components for alpha
    sweeps.

Every score lies in [0, 1] and is never NaN: a pair with an empty (or blank) text scores 0 on the
text baselines, a pair with an empty KG scores 0 on the KG baselines. Models (ROUGE and BLEU
scorers, the BERTScore model, encoders) load once per process.

BERTScore offline: ``bert_score.BERTScorer`` hands ``model_type`` to
``transformers.AutoModel.from_pretrained``, which accepts a local directory, so the packaged
sentence-transformers folder (it holds the transformers ``config.json`` and weights at its root) is
passed as ``model_type`` with ``num_layers`` read from its ``config.json`` (bert-score only knows
the layer count of hub names). ``HF_HUB_OFFLINE`` is set before loading, so nothing is fetched.
"""

from __future__ import annotations

import importlib
import json
import os
from collections.abc import Callable, Sequence
from functools import lru_cache
from importlib import metadata
from typing import Any

import numpy as np
import numpy.typing as npt

from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder, resolve_encoder
from ..errors import ConfigError
from ..scoring.result import DEFAULT_ALPHA, Mode, blend
from ..scoring.s3kg import KGScorer, S3KGConfig
from ..scoring.signature import BaselineSignature
from .pair_sets import PairSet

__all__ = [
    "BASELINES",
    "Baseline",
    "baseline_signature",
    "bertscore",
    "bleu",
    "minilm_cosine",
    "mpnet_cosine",
    "rouge1",
    "rouge2",
    "rougeL",
    "run_baselines",
    "s3kg_components",
    "s3kg_kgx",
    "wl_kernel",
]

Scores = npt.NDArray[np.float64]
Baseline = Callable[..., Scores]
"""A baseline: ``(pair_set, **opts) -> scores``, one float64 per pair."""

_S3KG_ALPHA = DEFAULT_ALPHA  # the s3kg_kgx baseline: kgx mode at the paper's alpha
_ENCODER_AWARE = frozenset({"wl_kernel", "s3kg_kgx"})
"""Baselines that take the ``encoder`` option of :func:`run_baselines`."""


# -- helpers -------------------------------------------------------------------------------------


def _live(pair_set: PairSet) -> list[int]:
    """Indices of the pairs whose two texts are both non-blank."""
    return [
        i
        for i, (a, b) in enumerate(zip(pair_set.text_1, pair_set.text_2, strict=True))
        if a.strip() and b.strip()
    ]


def _finish(values: npt.ArrayLike) -> Scores:
    """Float64 scores with NaN turned to 0 and everything clipped into [0, 1]."""
    out = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=0.0, posinf=1.0, neginf=0.0)
    return np.clip(out, 0.0, 1.0)


def _per_pair(pair_set: PairSet, score: Callable[[str, str], float]) -> Scores:
    """Apply ``score(reference, candidate)`` to every live pair; blank pairs score 0."""
    out = np.zeros(len(pair_set), dtype=np.float64)
    for i in _live(pair_set):
        out[i] = score(pair_set.text_1[i], pair_set.text_2[i])
    return _finish(out)


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


# -- ROUGE and BLEU ------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _rouge_scorer() -> Any:
    # rouge-score and bert-score ship no type information: imported as plain modules (Any)
    rouge_scorer = importlib.import_module("rouge_score.rouge_scorer")
    return rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


def _rouge(pair_set: PairSet, key: str) -> Scores:
    scorer = _rouge_scorer()
    return _per_pair(pair_set, lambda ref, hyp: float(scorer.score(ref, hyp)[key].fmeasure))


def rouge1(pair_set: PairSet) -> Scores:
    """ROUGE-1 F-measure of ``text_2`` against ``text_1`` (Porter stemmer).

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [{"id": "a", "paragraph_1": "The cat sat.", "kg_1": "[]",
    ...     "paragraph_2": "The cat sat.", "kg_2": "[]", "label": "1"}])
    >>> rouge1(ps).tolist()
    [1.0]
    """
    return _rouge(pair_set, "rouge1")


def rouge2(pair_set: PairSet) -> Scores:
    """ROUGE-2 F-measure of ``text_2`` against ``text_1`` (Porter stemmer)."""
    return _rouge(pair_set, "rouge2")


def rougeL(pair_set: PairSet) -> Scores:
    """ROUGE-L F-measure of ``text_2`` against ``text_1`` (Porter stemmer)."""
    return _rouge(pair_set, "rougeL")


@lru_cache(maxsize=1)
def _bleu_metric() -> Any:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(effective_order=True)


def bleu(pair_set: PairSet) -> Scores:
    """Sentence BLEU / 100 of ``text_2`` (hypothesis) against ``text_1`` (reference).

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [{"id": "a", "paragraph_1": "The cat sat.", "kg_1": "[]",
    ...     "paragraph_2": "", "kg_2": "[]", "label": "0"}])
    >>> bleu(ps).tolist()
    [0.0]
    """
    metric = _bleu_metric()
    return _per_pair(pair_set, lambda ref, hyp: metric.sentence_score(hyp, [ref]).score / 100.0)


# -- BERTScore -----------------------------------------------------------------------------------


def _num_layers(model_dir: os.PathLike[str] | str) -> int:
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as fh:
        config = json.load(fh)
    layers = config.get("num_hidden_layers", config.get("num_layers"))
    if not isinstance(layers, int):
        raise ConfigError(f"{model_dir}/config.json gives no num_hidden_layers; cannot use it")
    return layers


@lru_cache(maxsize=2)
def _bert_scorer(model: str, device: str | None) -> Any:
    _, model_dir = resolve_encoder(model)
    if not (model_dir / "config.json").exists():
        raise ConfigError(
            f"BERTScore needs a transformers model folder with config.json; {model_dir} has none"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    bert_score = importlib.import_module("bert_score")
    return bert_score.BERTScorer(
        model_type=str(model_dir),
        num_layers=_num_layers(model_dir),
        lang="en",
        idf=False,
        rescale_with_baseline=False,
        device=device,
    )


def bertscore(
    pair_set: PairSet, *, model: str = "minilm", batch_size: int = 64, device: str | None = None
) -> Scores:
    """BERTScore F1 of ``text_2`` (candidate) against ``text_1`` (reference).

    Parameters
    ----------
    pair_set
        The pairs to score.
    model
        A packaged encoder name or a local model folder with a transformers ``config.json``; its
        last layer is used.
    batch_size
        Sentences per forward pass.
    device
        ``"cpu"``, ``"cuda"``...; ``None`` lets bert-score choose.
    """
    out = np.zeros(len(pair_set), dtype=np.float64)
    live = _live(pair_set)
    if live:
        scorer = _bert_scorer(model, device)
        _, _, f1 = scorer.score(
            [pair_set.text_2[i] for i in live],
            [pair_set.text_1[i] for i in live],
            batch_size=batch_size,
        )
        out[live] = f1.detach().cpu().numpy().astype(np.float64)
    return _finish(out)


# -- sentence-embedding cosine -------------------------------------------------------------------


def _cosine(pair_set: PairSet, encoder: str) -> Scores:
    out = np.zeros(len(pair_set), dtype=np.float64)
    live = _live(pair_set)
    if live:
        cache = EmbeddingCache(load_encoder(encoder))
        a = [pair_set.text_1[i] for i in live]
        b = [pair_set.text_2[i] for i in live]
        cache.add(a + b)
        va = cache.vectors(a).astype(np.float64)
        vb = cache.vectors(b).astype(np.float64)
        norms = np.linalg.norm(va, axis=1) * np.linalg.norm(vb, axis=1)
        dots = np.einsum("ij,ij->i", va, vb)
        out[live] = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return _finish(out)


def minilm_cosine(pair_set: PairSet) -> Scores:
    """Cosine of the all-MiniLM-L6-v2 embeddings of the two texts, clipped to [0, 1]."""
    return _cosine(pair_set, "minilm")


def mpnet_cosine(pair_set: PairSet) -> Scores:
    """Cosine of the all-mpnet-base-v2 embeddings of the two texts, clipped to [0, 1]."""
    return _cosine(pair_set, "mpnet")


# -- KG baselines --------------------------------------------------------------------------------


def _kg_results(pair_set: PairSet, mode: Mode, encoder: str, align: bool) -> tuple[Scores, Scores]:
    scorer = KGScorer(encoder, S3KGConfig(mode=mode, alpha=_S3KG_ALPHA, align=align))
    results = scorer.score_pairs(zip(pair_set.kg_1, pair_set.kg_2, strict=True))
    s_wl = _finish([r.s_wl for r in results])
    s_sbert = _finish([r.s_sbert for r in results])
    return s_wl, s_sbert


def s3kg_components(
    pair_set: PairSet, mode: Mode = "kgx", encoder: str = "minilm"
) -> tuple[Scores, Scores]:
    """S3KG's two components per pair, ``(s_wl, s_sbert)``, with alignment on.

    Blend them at any alpha with :func:`s3kg_core.scoring.result.blend` (mind the mode: in ``kgx``
    mode
    alpha weights the WL side). Pairs with an empty KG give ``(0, 0)``.
    """
    return _kg_results(pair_set, mode, encoder, align=True)


def wl_kernel(pair_set: PairSet, *, encoder: str = "minilm") -> Scores:
    """The pure WL-kernel baseline (kgx mode, no triple selection, no alignment): ``s_wl``.

    The encoder does not affect the score (only S_SBERT uses it); it is loaded all the same.
    """
    return _kg_results(pair_set, "kgx", encoder, align=False)[0]


def s3kg_kgx(pair_set: PairSet, *, encoder: str = "minilm", alpha: float = _S3KG_ALPHA) -> Scores:
    """S3KG in kgx mode: ``alpha * s_wl + (1 - alpha) * s_sbert`` (0.5 by default)."""
    s_wl, s_sbert = s3kg_components(pair_set, "kgx", encoder)
    return _finish(blend(s_wl, s_sbert, alpha, mode="kgx"))


# -- registry ------------------------------------------------------------------------------------

BASELINES: dict[str, Baseline] = {
    "rouge1": rouge1,
    "rouge2": rouge2,
    "rougeL": rougeL,
    "bleu": bleu,
    "bertscore": bertscore,
    "minilm_cosine": minilm_cosine,
    "mpnet_cosine": mpnet_cosine,
    "wl_kernel": wl_kernel,
    "s3kg_kgx": s3kg_kgx,
}
"""Every baseline by name, in report order."""


def _check_names(names: Sequence[str]) -> None:
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ConfigError(
            f"unknown baseline(s) {', '.join(map(repr, unknown))}; "
            f"use any of {', '.join(BASELINES)}"
        )


def baseline_signature(name: str, encoder: str = "minilm") -> str:
    """A string naming a baseline's settings and library versions, to store with its scores.

    Examples
    --------
    >>> baseline_signature("rouge1").split("|")[:2]
    ['rouge1', 'F']
    """
    _check_names([name])
    if name.startswith("rouge"):
        settings: tuple[str | tuple[str, object], ...] = (
            "F",
            ("stem", "porter"),
            ("ref", "text_1"),
            ("rouge-score", _version("rouge-score")),
        )
    elif name == "bleu":
        settings = (
            ("tok", "13a"),
            ("smooth", "exp"),
            ("effective_order", "yes"),
            ("ref", "text_1"),
            ("sacrebleu", _version("sacrebleu")),
        )
    elif name == "bertscore":
        settings = (
            "F1",
            ("model", resolve_encoder("minilm")[0]),
            ("layer", 6),
            ("idf", "no"),
            ("rescale", "no"),
            ("bert-score", _version("bert-score")),
        )
    elif name.endswith("_cosine"):
        settings = (("enc", load_encoder(name.removesuffix("_cosine")).name), ("clip", 0))
    else:
        cfg = S3KGConfig(mode="kgx", alpha=_S3KG_ALPHA, align=name != "wl_kernel")
        settings = (cfg.signature(load_encoder(encoder).name),)
    return BaselineSignature(name, settings).format()


def run_baselines(
    pair_set: PairSet, names: Sequence[str] | None = None, encoder: str = "minilm"
) -> dict[str, Scores]:
    """Run baselines on a pair set: ``{name: scores}`` in the order asked.

    Parameters
    ----------
    pair_set
        The pairs to score.
    names
        Baselines to run (keys of :data:`BASELINES`); ``None`` runs all of them.
    encoder
        Encoder of the KG baselines (``wl_kernel``, ``s3kg_kgx``).

    Raises
    ------
    ConfigError
        If a name is not a known baseline (the message lists the known ones).

    Examples
    --------
    >>> ps = PairSet.from_rows("toy", [{"id": "a", "paragraph_1": "A b c.", "kg_1": "[]",
    ...     "paragraph_2": "A b c.", "kg_2": "[]", "label": "1"}])
    >>> {k: v.tolist() for k, v in run_baselines(ps, ["rouge2", "bleu"]).items()}
    {'rouge2': [1.0], 'bleu': [1.0]}
    """
    chosen = list(BASELINES) if names is None else list(names)
    _check_names(chosen)
    out: dict[str, Scores] = {}
    for name in chosen:
        fn = BASELINES[name]
        out[name] = fn(pair_set, encoder=encoder) if name in _ENCODER_AWARE else fn(pair_set)
    return out
