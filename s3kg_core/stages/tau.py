"""The TAU stage: the lowest-scoring share of each run's answers, explained triple by triple."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pandas as pd

from ..encoders.base import Encoder
from ..encoders.cache import EmbeddingCache
from ..encoders.registry import load_encoder
from ..errors import ConfigError
from ..kg import Triple
from ..limits import MAX_LABEL_CHARS, MAX_TRIPLES
from ..scoring.tau import TripletAnalyzer, lowest_fraction
from ..store import queries
from ..store.store import Store
from .results import encoder_for, resolve_signature, scored_frame

__all__ = ["TARGETS", "TauReport", "lowest_cases", "tau_store"]


TARGETS = ("cus", "gold_sim", "ctx_sim")


@dataclass
class TauReport:
    """What a TAU pass did."""

    signature: str
    target: str
    fraction: float
    analysed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    oversized: int = 0

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
    fraction: float = 0.05,
    target: str = "cus",
    signature: str | None = None,
    alpha: float | None = None,
    encoder: str | Encoder | None = None,
) -> TauReport:
    """Run TAU on the lowest-scoring ``fraction`` of each run's answers and store the results.

    ``target`` picks the score that ranks answers (``cus``, ``gold_sim``, ``ctx_sim``); the
    answer KG is explained against the gold KG, or against the context KG for ``ctx_sim``.
    The encoder defaults to the one named in the signature. An answer whose gold (or
    context) or answer KG is past the limits of :mod:`s3kg_core.limits` is stored with its
    status (``oversized_gold``, ``oversized_answer``) and no triples, and counted in
    :attr:`TauReport.oversized`.

    Raises
    ------
    ConfigError
        If ``target`` is unknown, nothing is scored, or ``signature`` names no stored scores
        (the message lists the stored ones).
    """
    if target not in TARGETS:
        raise ConfigError(f"target must be one of {', '.join(TARGETS)}; got {target!r}")
    signature = resolve_signature(store, signature)
    if signature is None:
        raise ConfigError("nothing is scored yet: run `s3kg score` first")
    if encoder is None:
        encoder = encoder_for(store, signature)
    enc = load_encoder(encoder) if isinstance(encoder, str) else encoder
    frame = scored_frame(store, signature, alpha)
    lowest = lowest_cases(frame, target, fraction)
    picks = [
        (int(r), int(i), float(v))
        for r, i, v in zip(lowest["run_id"], lowest["item_id"], lowest[target], strict=True)
    ]
    report = TauReport(signature=signature, target=target, fraction=fraction)
    if not picks:
        return report
    with store.connect() as con:
        kgs = store.load_kgs(con, sorted({r for r, _, _ in picks}))
        cache = EmbeddingCache(enc)
        cache.update(store.load_embeddings(con, enc.name))
    analyzer = TripletAnalyzer(enc, cache=cache)
    reference = "context" if target == "ctx_sim" else "gold"

    def triples(run: int, item: int, source: str) -> tuple[Triple, ...]:
        rec = kgs.get((run, item, source))
        return rec.triples if rec is not None else ()

    flushed = len(cache)
    results = analyzer.analyse_many(
        [(triples(r, i, reference), triples(r, i, "answer")) for r, i, _ in picks]
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
                counts["extra"],
                counts["missing"],
                json.dumps(res.to_dict()),
            ]
        )
    with store.transaction() as con:
        queries.replace_tau_results(con, signature, target, rows)
        store.put_embeddings(con, enc.name, cache.items(since=flushed))
    report.analysed = len(rows)
    return report
