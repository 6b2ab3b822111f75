"""Helpers of the cluster tests (synthetic_groups, faulty_engines) import by module name, and
Ray ships them to its workers by value (they are test code, not part of the package)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import faulty_engines
import ray
import ray.cloudpickle
import synthetic_groups

ray.cloudpickle.register_pickle_by_value(synthetic_groups)
ray.cloudpickle.register_pickle_by_value(faulty_engines)
