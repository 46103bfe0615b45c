"""Start or join a Ray cluster: the one place the project calls ``ray.init``.

Used by scoring on Ray (:mod:`s3kg_core.stages.ray_scoring`) and by the factuality jobs
(:mod:`s3kg_core.factuality.ray_jobs`). A session that is already running is used as
it is and left running; one started here is shut down when the block ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import ConfigError, S3KGError

__all__ = ["ray_cluster"]


@contextmanager
def ray_cluster(
    address: str = "local",
    *,
    num_cpus: int,
    error: type[S3KGError] = ConfigError,
    install_hint: str = "pip install 'ray==2.*'",
) -> Iterator[Any]:
    """The ``ray`` module with a session: started here (and shut down after) unless one runs.

    Parameters
    ----------
    address
        ``"local"`` starts a local cluster with ``num_cpus`` logical CPUs; anything else is
        passed to ``ray.init(address=...)``.
    num_cpus
        Logical CPUs of a local cluster.
    error, install_hint
        The exception raised when ray is missing or the cluster cannot be started or reached,
        and the install command its message gives.

    Examples
    --------
    >>> with ray_cluster(num_cpus=2) as ray:  # doctest: +SKIP
    ...     ray.cluster_resources()["CPU"]
    2.0
    """
    try:
        import ray
    except ImportError as exc:
        raise error(f"this needs the ray package: {install_hint}") from exc
    started_here = False
    if not ray.is_initialized():
        try:
            if address == "local":
                ray.init(
                    num_cpus=num_cpus,
                    include_dashboard=False,
                    log_to_driver=False,
                    configure_logging=False,
                )
            else:
                ray.init(address=address, log_to_driver=False)
        except Exception as exc:  # ray raises many kinds; say which cluster
            raise error(f"cannot start or reach the Ray cluster {address!r}: {exc}") from exc
        started_here = True
    try:
        yield ray
    finally:
        if started_here:
            ray.shutdown()
