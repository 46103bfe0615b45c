"""Scoring on Ray.

A pool of actors, each loading the encoder once, scores batches of answers; the driver receives
each batch's score records and new embeddings in order and writes them itself, so the database
sees the same writes as a single-process run. The session comes from
:func:`~s3kg_core.stages.ray_cluster.ray_cluster`: ``address="local"`` starts a local cluster;
anything
else is passed to ``ray.init(address=...)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..scoring.s3kg import S3KGConfig
from .ray_cluster import ray_cluster

__all__ = ["score_on_ray"]


class _Worker:
    """A Ray actor: one encoder, one cache, many batches."""

    def __init__(
        self,
        encoder: str,
        config: dict[str, Any],
        embeddings: Any,
        score_batch: Callable[[Any, Sequence[Any]], Any],
    ) -> None:
        os.environ["S3KG_ENCODE_PROCESSES"] = "1"  # Ray already gives each worker its CPU
        import torch

        # One CPU per actor: torch's default of one thread per core makes actors fight over
        # the same cores, and two workers were measured no faster than one.
        torch.set_num_threads(1)
        from ..encoders.cache import EmbeddingCache
        from ..encoders.registry import load_encoder
        from ..scoring.s3kg import KGScorer

        enc = load_encoder(encoder, processes=1, threads=1)  # onnx / openvino: one thread too
        cache = EmbeddingCache(enc)
        cache.update(embeddings)
        self.scorer = KGScorer(enc, S3KGConfig(**config), cache=cache)
        self.score_batch = score_batch

    def score(self, batch: Sequence[Any]) -> Any:
        return self.score_batch(self.scorer, batch)


def score_on_ray(
    batches: Sequence[Sequence[Any]],
    *,
    score_batch: Callable[[Any, Sequence[Any]], Any],
    encoder: str,
    config: S3KGConfig,
    embeddings: list[tuple[str, Any]],
    address: str = "local",
    workers: int | None = None,
) -> Iterator[Any]:
    """Score ``batches`` of :class:`~s3kg_core.stages.score.ScoreJob` on Ray, in order.

    Each actor loads the encoder once and calls ``score_batch(scorer, batch)`` (the score
    stage's :func:`~s3kg_core.stages.score.score_batch`, passed in so this module does not
    import the stage that imports it).

    Raises
    ------
    ConfigError
        If ray is not installed or the cluster cannot be reached.
    """
    with ray_cluster(address, num_cpus=workers or os.cpu_count() or 1) as ray:
        resources = ray.cluster_resources()
        n = workers or max(1, int(resources.get("CPU", 1)))
        actor: Any = ray.remote(num_cpus=1)(_Worker)
        shared = ray.put(embeddings)
        pool = [actor.remote(encoder, config.__dict__, shared, score_batch) for _ in range(n)]
        pending = [pool[i % n].score.remote(batch) for i, batch in enumerate(batches)]
        for ref in pending:
            yield ray.get(ref)
