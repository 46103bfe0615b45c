"""s3kg_core.stages.ray_cluster: the one place a Ray session is started, joined and shut down."""

from __future__ import annotations

import sys

import pytest

from s3kg_core.errors import ConfigError, FactualityError
from s3kg_core.stages.ray_cluster import ray_cluster


def test_without_ray_the_error_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'ray==2\.\*'"), ray_cluster(num_cpus=1):
        pass
    hint = "pip install 'ray[data]'"
    with (
        pytest.raises(FactualityError, match=r"ray\[data\]"),
        ray_cluster(num_cpus=1, error=FactualityError, install_hint=hint),
    ):
        pass


def test_a_local_session_is_started_and_shut_down_and_a_running_one_is_left_running():
    ray = pytest.importorskip("ray")
    assert not ray.is_initialized()
    with ray_cluster(num_cpus=2) as started:
        assert started.is_initialized() and started.cluster_resources()["CPU"] == 2.0
        with ray_cluster(num_cpus=5) as joined:  # the running session, as it is
            assert joined.cluster_resources()["CPU"] == 2.0
        assert ray.is_initialized()  # the inner block did not shut it down
    assert not ray.is_initialized()
