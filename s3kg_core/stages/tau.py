"""The TAU stage: the lowest-scoring share of each run's answers, explained triple by triple.

TAU aligns two triples whose sentence cosine reaches its threshold (0.76 by default). The
threshold can instead be the one fitted to human labels (``s3kg tau calibrate``, stored in the
database): ``threshold="calibrated"``. Every stored result carries a TAU signature that says
which threshold was used and where it came from (:func:`tau_signature`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import pandas as pd

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple
from ..limits import MAX_LABEL_CHARS, MAX_TRIPLES
from ..scoring.signature import TauSignature
from ..scoring.tau import (
    LOWEST_FRACTION,
    TRIPLE_THRESHOLD,
    TauResult,
    TripletAnalyzer,
    lowest_fraction,
)
from ..store import annotation_queries, queries
from ..store.store import Store
from ..store.tau_queries import TAU_TARGETS
from .scored import encoder_for, resolve_signature, scored_frame

__all__ = [
    "TARGETS",
    "TauReport",
    "lowest_cases",
    "resolve_threshold",
    "tau_signature",
    "tau_store",
]


TARGETS = TAU_TARGETS


def tau_signature(
    encoder: str, triple_threshold: float, component_threshold: float, source: str
) -> str:
    """The TAU signature: encoder, both thresholds, and where the triple threshold came from.

    ``source`` is ``default``, ``given`` or ``calibrated#<id>`` (a stored calibration). The
    string of :class:`~s3kg_core.scoring.signature.TauSignature`.

    Examples
    --------
    >>> tau_signature("minilm@0.1.0", 0.81, 0.76, "calibrated#2")
    'tau|enc:minilm@0.1.0|triple:0.81|component:0.76|threshold:calibrated#2'
    """
    return TauSignature(encoder, triple_threshold, component_threshold, source).format()


def resolve_threshold(
    store: Store, threshold: float | str | None, encoder: str
) -> tuple[float, str]:
    """The triple threshold to use and its source (see :func:`tau_signature`).

    ``None``: the default (0.76); a number in [0, 1]: that number; ``"calibrated"``: the
    newest calibration stored for ``encoder`` (the encoder's full name).

    Raises
    ------
    ConfigError
        If ``threshold`` is neither, or no calibration is stored for ``encoder``.
    """
    if threshold is None:
        return TRIPLE_THRESHOLD, "default"
    if threshold == "calibrated":
        with store.connect() as con:
            found = annotation_queries.latest_calibration(con, encoder)
        if found is None:
            raise ConfigError(
                f"no TAU threshold is calibrated for encoder {encoder} in {store.path}: run "
                f"`s3kg tau calibrate --db {store.path}` once annotators have labelled pairs"
            )
        return float(found["threshold"]), f"calibrated#{found['calibration_id']}"
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise ConfigError(
            f"threshold must be a number in [0, 1] or 'calibrated'; got {threshold!r}"
        )
    return value, "given"


@dataclass
class TauReport:
    """What a TAU pass did."""

    signature: str
    target: str
    fraction: float
    analysed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    oversized: int = 0
    tau_signature: str = ""

    def summary(self) -> str:
        """One line for the command line."""
        counts = ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))
        return f"{self.analysed} answers analysed: {counts or 'nothing found'}" + self.note()

    def note(self) -> str:
        """``"; N answers not analysed: a KG over the size limits"`` when there are such."""
        if not self.oversized:
            return ""
        return (
            f"; {self.oversized} answer{'s' * (self.oversized != 1)} not analysed: a KG over the "
            f"size limits (more than {MAX_TRIPLES:,} triples or a label over "
            f"{MAX_LABEL_CHARS:,} characters)"
        )


def lowest_cases(frame: pd.DataFrame, target: str, fraction: float) -> pd.DataFrame:
    """The rows of the lowest ``fraction`` of each run by ``target`` (what TAU explains).

    Examples
    --------
    >>> f = pd.DataFrame({"run_id": [1, 1, 1, 2], "item_id": [1, 2, 3, 4],
    ...                   "cus": [0.9, 0.1, 0.5, 0.7]})
    >>> lowest_cases(f, "cus", 0.3)["item_id"].tolist()
    [2, 4]
    """
    if target not in TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    parts = []
    for _, group in frame.groupby("run_id", sort=True):
        rows = group.reset_index(drop=True)
        parts.append(rows.iloc[lowest_fraction(rows[target].tolist(), fraction)])
    return pd.concat(parts, ignore_index=True) if parts else frame.iloc[0:0]


def tau_store(
    store: Store,
    *,
    fraction: float = LOWEST_FRACTION,
    target: str = "cus",
    signature: str | None = None,
    alpha: float | None = None,
    encoder: str | Encoder | None = None,
    threshold: float | str | None = None,
    block: int = 1000,
) -> TauReport:
    """Run TAU on the lowest-scoring ``fraction`` of each run's answers and store the results.

    ``target`` picks the score that ranks answers (``cus``, ``gold_sim``, ``ctx_sim``); the
    answer KG is explained against the gold KG, or against the context KG for ``ctx_sim``.
    The encoder defaults to the one named in the signature. ``threshold`` is TAU's triple
    threshold (see :func:`resolve_threshold`); each stored result records it with its TAU
    signature (``result["signature"]``), as the report does. An answer whose gold (or
    context) or answer KG is past the limits of :mod:`s3kg_core.limits` is stored with its
    status (``oversized_gold``, ``oversized_answer``) and no triples, and counted in
    :attr:`TauReport.oversized`.

    The answers are analysed ``block`` at a time, each block with only its own KGs and stored
    vectors in memory (the vectors it computes are stored as it ends), so memory does not grow
    with the database.

    Raises
    ------
    ConfigError
        If ``target`` is unknown, nothing is scored, ``signature`` names no stored scores
        (the message lists the stored ones), or ``threshold`` cannot be resolved.
    """
    if target not in TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    if block < 1:
        raise ConfigError(f"block must be >= 1; got {block}")
    signature = resolve_signature(store, signature)
    if signature is None:
        raise ConfigError("nothing is scored yet: run `s3kg score` first")
    if encoder is None:
        encoder = encoder_for(store, signature)
    enc = load_encoder(encoder) if isinstance(encoder, str) else encoder
    triple_threshold, source = resolve_threshold(store, threshold, enc.name)
    frame = scored_frame(store, signature, alpha)
    lowest = lowest_cases(frame, target, fraction)
    picks = [
        (int(r), int(i), float(v))
        for r, i, v in zip(lowest["run_id"], lowest["item_id"], lowest[target], strict=True)
    ]
    report = TauReport(signature=signature, target=target, fraction=fraction)
    if not picks:
        return report
    # the analyser's settings and signature; each block gets its own, over its own cache
    analyzer = TripletAnalyzer(enc, triple_threshold=triple_threshold)
    report.tau_signature = TauSignature(
        enc.name, analyzer.triple_threshold, analyzer.component_threshold, source
    ).format()
    reference = "context" if target == "ctx_sim" else "gold"
    results = []
    for lo in range(0, len(picks), block):
        results += _analyse_block(
            store, enc, triple_threshold, reference, [(r, i) for r, i, _ in picks[lo : lo + block]]
        )
    stored_alpha = {
        (int(r), int(i)): float(a)
        for r, i, a in zip(frame["run_id"], frame["item_id"], frame["alpha"], strict=True)
    }
    rows = []
    for (run, item, score), res in zip(picks, results, strict=True):
        used_alpha = alpha if alpha is not None else stored_alpha[(run, item)]
        counts = res.counts()
        report.oversized += res.status != "ok"
        for key, value in counts.items():
            report.counts[key] = report.counts.get(key, 0) + value
        rows.append(
            [
                run,
                item,
                signature,
                target,
                fraction,
                used_alpha,
                score,
                counts["aligned"],
                counts["relation_mismatch"],
                counts["entity_mismatch"],
                counts["roles_swapped"],
                counts["extra"],
                counts["missing"],
                json.dumps({**res.to_dict(), "signature": report.tau_signature}),
            ]
        )
    with store.transaction() as con:
        queries.replace_tau_results(con, signature, target, rows)
    report.analysed = len(rows)
    return report


def _analyse_block(
    store: Store,
    enc: Encoder,
    triple_threshold: float,
    reference: str,
    answers: list[tuple[int, int]],
) -> list[TauResult]:
    """TAU of these answers against their ``reference`` KG; new vectors stored as it ends."""
    cache = EmbeddingCache(enc)
    analyzer = TripletAnalyzer(enc, cache=cache, triple_threshold=triple_threshold)
    with store.connect() as con:
        kgs = store.load_kgs_of(con, answers)

        def triples(run: int, item: int, source: str) -> tuple[Triple, ...]:
            rec = kgs.get((run, item, source))
            return rec.triples if rec is not None else ()

        pairs = [(triples(r, i, reference), triples(r, i, "answer")) for r, i in answers]
        cache.update(queries.embeddings_of(con, enc.name, analyzer.strings_needed(pairs)))
    flushed = len(cache)
    results = analyzer.analyse_many(pairs)
    with store.transaction() as con:
        store.put_embeddings(con, enc.name, cache.items(since=flushed))
    return results
