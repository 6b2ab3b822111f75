"""Helpers of the cluster tests (synthetic_groups, faulty_engines) import by module name, and
Ray ships them to its workers by value (they are test code, not part of the package)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import faulty_engines
import pytest
import ray
import ray.cloudpickle
import synthetic_groups

ray.cloudpickle.register_pickle_by_value(synthetic_groups)
ray.cloudpickle.register_pickle_by_value(faulty_engines)


@pytest.fixture(scope="module")
def own_local_ray():
    """A Ray of the module's own (address="local"), even if another runs on the machine."""
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        _node_ip_address="127.0.0.1",
    )
    yield
    ray.shutdown()
